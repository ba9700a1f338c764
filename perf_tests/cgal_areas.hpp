#pragma once
// CGAL's power cells, for the benchmarks' comparison (cgal_areas.cpp).
#include <array>
#include <vector>

namespace sdot_bench {

/// Areas of the power cells of seeds x with weights w clipped by the unit square, by input
/// index, from CGAL's Regular_triangulation_2 (hidden points get 0). For each vertex of the
/// regular triangulation, its cell is the polygon of the weighted circumcentres of its faces
/// (computed once per face), clipped by the square; a vertex on the convex hull (unbounded
/// cell) clips the square by the bisectors of its neighbours instead. Declared without Kokkos:
/// its file is compiled by the host compiler alone, also in GPU builds.
std::vector<double> cgal_areas(std::vector<std::array<double, 2>> const& x,
                               std::vector<double> const& w);

} // namespace sdot_bench
