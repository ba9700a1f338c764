#pragma once
/// @file
/// Internals: segments (the rows of each local rank), even splits, View helpers.

#include <loom/error.hpp>
#include <sdot/base/kokkos_compat.hpp>

#include <Kokkos_Core.hpp>

#include <cstdint>
#include <string>
#include <type_traits>
#include <vector>

namespace loom::detail {

/// Segment holding `i`: the largest s with first(s) <= i, for `first` non-decreasing with
/// `count + 1` entries (empty segments are skipped).
template <class View>
KOKKOS_INLINE_FUNCTION int segment_of(View const& first, int count, std::int64_t i) {
  int lo = 0, hi = count;
  while (hi - lo > 1) {
    int const mid = (lo + hi) / 2;
    if (first(mid) <= i)
      lo = mid;
    else
      hi = mid;
  }
  return lo;
}

/// First index of part `p` when `n` items are split into `parts` (the first n % parts parts
/// get one more).
inline std::int64_t even_split_first(std::int64_t n, std::int64_t parts, std::int64_t p) {
  std::int64_t const q = n / parts, r = n % parts;
  return p * q + (p < r ? p : r);
}

/// Number of run-time extents of a View data type (T*[2] -> 1, T** -> 2).
template <class T>
struct dynamic_rank : std::integral_constant<int, 0> {};
template <class T>
struct dynamic_rank<T*> : std::integral_constant<int, 1 + dynamic_rank<T>::value> {};
template <class DataType>
constexpr int dynamic_rank_v = dynamic_rank<std::remove_all_extents_t<DataType>>::value;

/// Allocates a rank-1 or rank-2 View of `rows` rows of `cols` columns (cols ignored for
/// rank 1 and for a compile-time second extent).
template <class View, class... Prop>
View make_rows_view(std::string const& label, std::int64_t rows, std::int64_t cols,
                    Prop const&... prop) {
  static_assert(View::rank == 1 || View::rank == 2, "loom: rank-1 or rank-2 Views of rows");
  if constexpr (View::rank == 1 || dynamic_rank_v<typename View::traits::data_type> == 1) {
    (void)cols;
    return View(Kokkos::view_alloc(prop..., label), rows);
  } else {
    return View(Kokkos::view_alloc(prop..., label), rows, cols);
  }
}

/// Columns of a View of rows (1 for rank 1).
template <class View>
std::int64_t cols_of(View const& v) {
  if constexpr (View::rank == 1)
    return 1;
  else
    return static_cast<std::int64_t>(v.extent(1));
}

/// Element (i, c) of a View of rows, rank 1 or 2.
template <class View>
KOKKOS_INLINE_FUNCTION typename View::reference_type row_at(View const& v, std::int64_t i,
                                                            std::int64_t c) {
  if constexpr (View::rank == 1) {
    (void)c;
    return v(i);
  } else {
    return v(i, c);
  }
}

/// Checks that `offsets` describe `count` local segments covering `n` rows; returns an empty
/// string when they do, else what is wrong.
inline std::string check_offsets(std::vector<std::int64_t> const& offsets, int count,
                                 std::int64_t n) {
  if (static_cast<int>(offsets.size()) != count + 1)
    return "offsets has " + std::to_string(offsets.size()) +
           " entries instead of local_count()+1 = " + std::to_string(count + 1);
  if (offsets.front() != 0 || offsets.back() != n)
    return "offsets must go from 0 to the number of rows (" + std::to_string(n) + ")";
  for (int l = 0; l < count; ++l)
    if (offsets[l + 1] < offsets[l])
      return "offsets must not decrease";
  return {};
}

/// Copies a host std::vector into a new View of the memory space of `space`.
template <class T, class ExecSpace>
Kokkos::View<T*, typename ExecSpace::memory_space>
to_device(ExecSpace const& space, std::vector<T> const& values, std::string const& label) {
  Kokkos::View<T*, typename ExecSpace::memory_space> out(
      Kokkos::view_alloc(space, Kokkos::WithoutInitializing, label), values.size());
  Kokkos::View<T const*, Kokkos::HostSpace, Kokkos::MemoryTraits<Kokkos::Unmanaged>> host(
      values.data(), values.size());
  Kokkos::deep_copy(space, out, host);
  space.fence(); // `values` may go away once we return
  return out;
}

} // namespace loom::detail
