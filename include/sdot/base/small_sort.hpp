#pragma once
// Sorting a few distinct keys inside a kernel (a row's entries) by their ranks: each key's
// place is the number of keys below it, counted without a branch on the keys. An insertion sort
// of random keys mispredicts the exit of its inner loop about once per key; at 5 to 11 keys the
// ranks take about half its time.

#include <Kokkos_Core.hpp>

#include <cstdint>

namespace sdot::detail {

/// Keys that callers sort by rank_among(), at most (an insertion sort beyond).
inline constexpr int small_sort_max = 16;

/// The place of keys[i] among the n distinct keys[0, n) in increasing order.
KOKKOS_INLINE_FUNCTION int rank_among(std::uint64_t const* keys, int n, int i) {
  int rank = 0;
  for (int q = 0; q < n; ++q)
    rank += keys[q] < keys[i];
  return rank;
}

/// A key that sorts by `column` (≥ 0, as a row's column indices are), then by `position`
/// (distinct positions: distinct keys).
KOKKOS_INLINE_FUNCTION std::uint64_t column_key(int column, int position) {
  return std::uint64_t(static_cast<std::uint32_t>(column)) << 32 |
         static_cast<std::uint32_t>(position);
}

} // namespace sdot::detail
