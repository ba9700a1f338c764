#pragma once
/// @file
/// loom::scatter_add: target[idx[i]] += vals[i], as a kernel.

#include <loom/error.hpp>
#include <sdot/base/kokkos_compat.hpp>

#include <Kokkos_Core.hpp>

#include <cstdint>
#include <string>

namespace loom {

namespace detail {
template <class Target, class Idx, class Vals>
struct ScatterAdd {
  Target target;
  Idx idx;
  Vals vals;
  KOKKOS_FUNCTION void operator()(std::int64_t i, std::int64_t& outside) const {
    auto const k = idx(i);
    if (k < 0)
      return;
    if (static_cast<std::int64_t>(k) >= static_cast<std::int64_t>(target.extent(0))) {
      ++outside;
      return;
    }
    Kokkos::atomic_add(&target(k), vals(i));
  }
};
} // namespace detail

/// Adds `vals(i)` to `target(idx(i))` for every i (Kokkos::atomic_add); negative indices are
/// skipped. A local operation (no communication). The result is deterministic for integer
/// types; for floating-point types the order of the additions to one target varies, so the
/// result is deterministic only when each target receives at most one value.
/// Throws a (non-collective) loom::Error when the extents differ or an index is past the end
/// of `target` (the other indices are still added).
template <class ExecSpace, class Target, class Idx, class Vals>
void scatter_add(ExecSpace const& space, Target const& target, Idx const& idx, Vals const& vals) {
  static_assert(Target::rank == 1 && Idx::rank == 1 && Vals::rank == 1,
                "loom::scatter_add: rank-1 Views");
  static_assert(std::is_integral<typename Idx::non_const_value_type>::value,
                "loom::scatter_add: integer indices");
  static_assert(Kokkos::SpaceAccessibility<ExecSpace, typename Target::memory_space>::accessible &&
                    Kokkos::SpaceAccessibility<ExecSpace, typename Idx::memory_space>::accessible &&
                    Kokkos::SpaceAccessibility<ExecSpace, typename Vals::memory_space>::accessible,
                "loom::scatter_add: Views must be accessible from the execution space");
  sdot::compat::ScopedRegion region("loom::scatter_add");
  if (idx.extent(0) != vals.extent(0))
    throw Error("loom::scatter_add: idx and vals have different extents");
  std::int64_t outside = 0;
  Kokkos::parallel_reduce("loom::scatter_add",
                          Kokkos::RangePolicy<ExecSpace>(space, 0, idx.extent(0)),
                          detail::ScatterAdd<Target, Idx, Vals>{target, idx, vals}, outside);
  if (outside)
    throw Error("loom::scatter_add: " + std::to_string(outside) + " indices past the end");
}

/// loom::scatter_add on the execution space of `target`.
template <class Target, class Idx, class Vals>
void scatter_add(Target const& target, Idx const& idx, Vals const& vals) {
  scatter_add(typename Target::execution_space(), target, idx, vals);
}

} // namespace loom
