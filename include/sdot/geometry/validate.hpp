#pragma once
// Checks run on the device: the input before anything is computed, the cells after; errors
// name the first offending index and its value.

#include <sdot/base/kokkos_compat.hpp>
#include <sdot/base/scan.hpp>
#include <sdot/half_spaces.hpp>

#include <cmath>
#include <sstream>
#include <stdexcept>
#include <string>

namespace sdot::detail {

/// Index of the first i < n with a non-finite points(i, ·) or values(i), or n: seeds
/// (positions and weights) before the cells are built, cells (centroids and measures) after.
/// With spread input the boxes per process come from the ranks: PowerDiagramOptions::nb_boxes
/// must be 1 or that count. Throws std::invalid_argument from `who` otherwise.
inline void check_spread_boxes(char const* who, int nb_boxes, int boxes_per_process) {
  if (nb_boxes != 1 && nb_boxes != boxes_per_process)
    throw std::invalid_argument(std::string(who) +
                                ": with spread input the ranks come from the spread (" +
                                std::to_string(boxes_per_process) +
                                " per process); choose boxes per process with "
                                "loom::MpiRanks(comm, K), not nb_boxes = " +
                                std::to_string(nb_boxes));
}

template <class ExecutionSpace, class Points, class Values>
int first_non_finite(ExecutionSpace const& space, Points points, Values values) {
  return first_failing(
      space, "sdot::validate::non_finite", static_cast<int>(points.extent(0)),
      KOKKOS_LAMBDA(int i) {
        return sdot::compat::isfinite(points(i, 0)) && sdot::compat::isfinite(points(i, 1)) &&
               sdot::compat::isfinite(values(i));
      });
}

/// Index of the first seed i < n that is not finite, lies farther than coordinate_limit
/// from (cx, cy) on an axis, or has a weight beyond its square in magnitude; n when none.
template <class ExecutionSpace, class Points, class Values>
int first_seed_out_of_range(ExecutionSpace const& space, Points points, Values values, double cx,
                            double cy) {
  double const limit = coordinate_limit, weight_limit = limit * limit;
  return first_failing(
      space, "sdot::validate::seed_range", static_cast<int>(points.extent(0)),
      KOKKOS_LAMBDA(int i) { // written so that NaN fails too
        return sdot::compat::fabs(points(i, 0) - cx) <= limit &&
               sdot::compat::fabs(points(i, 1) - cy) <= limit &&
               sdot::compat::fabs(values(i)) <= weight_limit;
      });
}

/// Throws std::invalid_argument if the sizes differ, or a seed is not finite or lies beyond
/// what double precision can compute about the domain's centre (cx, cy) (see
/// coordinate_limit). `first_index` is the global index of the first local seed (for the
/// message).
template <class ExecutionSpace, class Positions, class Weights>
void validate_seeds(ExecutionSpace const& space, Positions positions, Weights weights,
                    DomainPolygon const& domain, long first_index = 0) {
  double const cx = (domain.lo[0] + domain.hi[0]) / 2, cy = (domain.lo[1] + domain.hi[1]) / 2;
  if (positions.extent(0) != weights.extent(0)) {
    std::ostringstream msg;
    msg << "sdot::PowerDiagram: " << positions.extent(0) << " positions but " << weights.extent(0)
        << " weights: one weight per seed is needed";
    throw std::invalid_argument(msg.str());
  }
  int const bad = first_seed_out_of_range(space, positions, weights, cx, cy);
  if (bad < static_cast<int>(positions.extent(0))) {
    double values[3];
    auto p = Kokkos::subview(positions, bad, Kokkos::ALL);
    auto w = Kokkos::subview(weights, bad);
    auto p_host = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), p);
    auto w_host = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), w);
    values[0] = p_host(0);
    values[1] = p_host(1);
    values[2] = w_host();
    std::ostringstream msg;
    msg << "sdot::PowerDiagram: seed " << first_index + bad;
    if (std::isfinite(values[0]) && std::isfinite(values[1]) && std::isfinite(values[2]))
      msg << " is beyond what double precision can compute: position (" << values[0] << ", "
          << values[1] << "), weight " << values[2] << "; a seed must lie within "
          << coordinate_limit << " (sdot::coordinate_limit) of the domain's centre (" << cx << ", "
          << cy << ") on each axis, and its weight within " << coordinate_limit
          << " squared in magnitude";
    else
      msg << " is not finite: position (" << values[0] << ", " << values[1] << "), weight "
          << values[2];
    throw std::invalid_argument(msg.str());
  }
}

/// What check_cells() finds: the sum of the measures and the first i with a non-finite
/// measures(i) or centroids(i, ·) (n when none), with that measure.
struct CellsCheck {
  double sum = 0;
  int first_non_finite = 0;
  double value = 0;
};

/// The sum of the measures.
template <class ExecutionSpace, class Measures>
double measures_sum(ExecutionSpace const& space, Measures const& measures) {
  return sum(
      space, "sdot::validate::measures_sum", static_cast<int>(measures.extent(0)),
      KOKKOS_LAMBDA(int i) { return measures(i); });
}

/// Sums the measures and looks for a non-finite measure or centroid.
template <class ExecutionSpace, class Measures, class Centroids>
CellsCheck check_cells(ExecutionSpace const& space, Measures measures, Centroids centroids) {
  int const n = static_cast<int>(measures.extent(0));
  CellsCheck check;
  check.sum = measures_sum(space, measures);
  check.first_non_finite = first_non_finite(space, centroids, measures);
  if (check.first_non_finite < n) {
    auto const m = Kokkos::subview(measures, check.first_non_finite);
    check.value = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), m)();
  }
  return check;
}

} // namespace sdot::detail
