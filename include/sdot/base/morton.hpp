#pragma once
// The Z-order (Morton) curve: points ordered along it, so that points near each other in the
// plane are mostly near each other in the order (the multigrid's aggregates, the spatial
// blocks' rows).

#include <sdot/base/kokkos_compat.hpp>
#include <sdot/base/point_bounds.hpp>
#include <sdot/base/radix_sort.hpp>
#include <sdot/base/views.hpp>

#include <Kokkos_Core.hpp>

#include <cstdint>

namespace sdot::detail {

/// 40-bit Morton code of a point given as two 20-bit integers.
KOKKOS_INLINE_FUNCTION std::uint64_t morton_spread(std::uint64_t v) {
  v &= 0xfffffull;
  v = (v | (v << 16)) & 0x0000ffff0000ffffull;
  v = (v | (v << 8)) & 0x00ff00ff00ff00ffull;
  v = (v | (v << 4)) & 0x0f0f0f0f0f0f0f0full;
  v = (v | (v << 2)) & 0x3333333333333333ull;
  v = (v | (v << 1)) & 0x5555555555555555ull;
  return v;
}

/// The points in Z order (stable: ties in input order).
template <class ExecutionSpace, class Points>
Kokkos::View<int*, typename ExecutionSpace::memory_space> morton_order(ExecutionSpace const& space,
                                                                       Points const& points) {
  using MemorySpace = typename ExecutionSpace::memory_space;
  using Policy = Kokkos::RangePolicy<ExecutionSpace>;
  int const n = static_cast<int>(points.extent(0));
  PointBounds const bounds = point_bounds(space, "sdot::morton::bounds", points);
  double const x0 = bounds.xmin, y0 = bounds.ymin;
  double const extent = n > 0 ? sdot::compat::fmax(bounds.xmax - x0, bounds.ymax - y0) : 0.0;
  double const scale = extent > 0 ? double((1 << 20) - 1) / extent : 0.0;
  auto keys = uninitialized_view<std::uint64_t*>(space, "sdot::morton::keys", n);
  Kokkos::parallel_for(
      "sdot::morton::keys", Policy(space, 0, n), KOKKOS_LAMBDA(int i) {
        auto const qx = static_cast<std::uint64_t>((points(i, 0) - x0) * scale);
        auto const qy = static_cast<std::uint64_t>((points(i, 1) - y0) * scale);
        keys(i) = morton_spread(qx) | (morton_spread(qy) << 1);
      });
  return stable_sort_permutation(space, Kokkos::View<std::uint64_t const*, MemorySpace>(keys), 40);
}

} // namespace sdot::detail
