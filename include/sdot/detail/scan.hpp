#pragma once
// Counts to offsets.

#include <Kokkos_Core.hpp>

namespace sdot::detail {

/// offsets(i) = counts(0) + … + counts(i−1) for i ≤ n (offsets has n + 1 entries); returns the
/// total. `counts` may be the first n entries of `offsets` itself (each count is read before
/// its offset is written).
template <class ExecutionSpace, class Counts, class Offsets>
int exclusive_scan(ExecutionSpace const& space, char const* label, Counts const& counts,
                   Offsets const& offsets) {
  int const n = static_cast<int>(counts.extent(0));
  int total = 0;
  Kokkos::parallel_scan(
      label, Kokkos::RangePolicy<ExecutionSpace>(space, 0, n + 1),
      KOKKOS_LAMBDA(int i, int& partial, bool final) {
        int const count = i < n ? counts(i) : 0;
        if (final)
          offsets(i) = partial;
        partial += count;
      },
      total);
  return total;
}

} // namespace sdot::detail
