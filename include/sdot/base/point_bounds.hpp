#pragma once
// The bounding box of points [n, 2].

#include <sdot/base/kokkos_compat.hpp>

#include <Kokkos_Core.hpp>

#include <string>

namespace sdot::detail {

struct PointBounds {
  double xmin, ymin, xmax, ymax; ///< min > max when there is no point
};

/// The bounding box of `points` ([n, 2], accessible from `space`): one min-max reduction per
/// axis.
template <class ExecutionSpace, class Points>
PointBounds point_bounds(ExecutionSpace const& space, std::string const& label,
                         Points const& points) {
  Kokkos::MinMaxScalar<double> bounds[2];
  int const n = static_cast<int>(points.extent(0));
  for (int axis = 0; axis < 2; ++axis)
    Kokkos::parallel_reduce(
        label, Kokkos::RangePolicy<ExecutionSpace>(space, 0, n),
        KOKKOS_LAMBDA(int i, Kokkos::MinMaxScalar<double>& r) {
          r.min_val = sdot::compat::min(r.min_val, points(i, axis));
          r.max_val = sdot::compat::max(r.max_val, points(i, axis));
        },
        Kokkos::MinMax<double>(bounds[axis]));
  return {bounds[0].min_val, bounds[1].min_val, bounds[0].max_val, bounds[1].max_val};
}

} // namespace sdot::detail
