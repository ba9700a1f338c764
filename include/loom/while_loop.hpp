#pragma once
/// @file
/// loom::while_loop: a loop that goes on while any rank wants another round.

#include <loom/ranks.hpp>
#include <sdot/base/kokkos_compat.hpp>

#include <Kokkos_Core.hpp>

#include <cstdint>
#include <type_traits>
#include <utility>

namespace loom {

namespace detail {
inline bool wants_more(bool b) {
  return b;
}
/// A View of wishes (one per local rank, or any number): true if any is non-zero.
template <class View, class = std::enable_if_t<Kokkos::is_view<View>::value>>
bool wants_more(View const& v) {
  static_assert(View::rank == 1, "loom::while_loop: cond gives a bool or a rank-1 View");
  auto host = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), v);
  for (std::size_t i = 0; i < host.extent(0); ++i)
    if (host(i))
      return true;
  return false;
}
} // namespace detail

/// Runs `carry = body(carry)` while any rank wants another round: `cond(carry)` gives this
/// process's wish (a bool) or its local ranks' wishes (a rank-1 View, one per local rank),
/// and the wishes are OR-ed over all processes (one small collective per round) so every
/// process runs the same number of rounds. `body` runs on every process each round (for all
/// of its local ranks, including those that wanted no more: they must do nothing harmful).
/// Collective. Returns the final carry.
template <class Cond, class Body, class Carry>
Carry while_loop(Ranks const& ranks, Cond&& cond, Body&& body, Carry carry) {
  sdot::compat::ScopedRegion region("loom::while_loop");
  while (ranks.any(detail::wants_more(cond(std::as_const(carry)))))
    carry = body(std::move(carry));
  return carry;
}

} // namespace loom
