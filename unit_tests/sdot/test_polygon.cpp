// Clipping a cell polygon (detail::Polygon): the convex fast path and the general
// Sutherland–Hodgman pass it falls back to, checked on polygons whose result is known; and the
// passes that give the cells too large for their polygon larger ones (cut_again_until_fit).
#include "sdot/host_polygon.hpp"

#include <sdot/geometry/polygon.hpp>
#include <sdot/geometry/polygon_storage.hpp>

#include <gtest/gtest.h>

#include <array>
#include <string>
#include <vector>

namespace {

using sdot::detail::ClipResult;
using sdot::detail::Polygon;

using sdot_test::HostPolygon;

std::vector<std::array<double, 2>> unit_square() {
  return {{0, 0}, {1, 0}, {1, 1}, {0, 1}};
}

TEST(Polygon, ConvexCutKeepsLabelsAndAddsTheNewEdge) {
  HostPolygon p(16, unit_square());
  // x ≤ 0.25: vertices 1 and 2 are cut off, edge labels -4 (left) and -1 (bottom) stay.
  ASSERT_EQ(p.polygon.clip(1, 0, 0.25, 7), ClipResult::clipped);
  EXPECT_EQ(p.polygon.size, 4);
  EXPECT_DOUBLE_EQ(p.area(), 0.25);
  EXPECT_EQ(p.edges_labelled(7), 1);
  for (int k = 0; k < p.polygon.size; ++k)
    if (p.polygon.label(k) == 7) // the new edge runs along x = 0.25
      EXPECT_DOUBLE_EQ(p.polygon.x(k), 0.25);
  EXPECT_DOUBLE_EQ(p.polygon.max_radius2, 1 + 0.0625);
  EXPECT_DOUBLE_EQ(p.polygon.xmax, 0.25);
}

TEST(Polygon, RunWrappingAroundTheFirstVertex) {
  HostPolygon p(16, unit_square());
  // y ≥ 0.5 kept (−y ≤ −0.5): vertices 0 and 1 (the end and start of the cycle) go.
  ASSERT_EQ(p.polygon.clip(0, -1, -0.5, 3), ClipResult::clipped);
  EXPECT_EQ(p.polygon.size, 4);
  EXPECT_DOUBLE_EQ(p.area(), 0.5);
  EXPECT_DOUBLE_EQ(p.polygon.ymin, 0.5);
}

TEST(Polygon, VertexOnTheLineIsKeptWithoutADuplicate) {
  HostPolygon p(16, unit_square());
  // The diagonal x + y ≤ 1 passes through vertices 1 and 3: a triangle.
  ASSERT_EQ(p.polygon.clip(1, 1, 1, 5), ClipResult::clipped);
  EXPECT_EQ(p.polygon.size, 3);
  EXPECT_DOUBLE_EQ(p.area(), 0.5);
  EXPECT_EQ(p.edges_labelled(5), 1);
}

TEST(Polygon, UnchangedEmptiedAndOverflow) {
  HostPolygon p(16, unit_square());
  EXPECT_EQ(p.polygon.clip(1, 0, 2, 1), ClipResult::unchanged);
  EXPECT_EQ(p.polygon.size, 4);
  HostPolygon tight(4, unit_square());
  // Cutting one corner makes 5 vertices: more than the capacity, the polygon stays as it was.
  EXPECT_EQ(tight.polygon.clip(1, 1, 1.5, 1), ClipResult::overflow);
  EXPECT_EQ(tight.polygon.size, 4);
  EXPECT_DOUBLE_EQ(tight.area(), 1);
  EXPECT_EQ(p.polygon.clip(1, 0, -1, 1), ClipResult::emptied);
  EXPECT_EQ(p.polygon.size, 0);
}

TEST(Polygon, SeveralRunsOutsideTakeTheGeneralPass) {
  // A non-convex "U" (as rounding can make a nearly flat cell): the line y ≤ 1.5 cuts the
  // tips of both arms, two separate runs of vertices.
  HostPolygon p(16, {{0, 0}, {3, 0}, {3, 2}, {2, 2}, {2, 1}, {1, 1}, {1, 2}, {0, 2}});
  ASSERT_EQ(p.polygon.clip(0, 1, 1.5, 9), ClipResult::clipped);
  EXPECT_EQ(p.polygon.size, 8);
  EXPECT_DOUBLE_EQ(p.area(), 4);
  EXPECT_DOUBLE_EQ(p.polygon.ymax, 1.5);
  EXPECT_DOUBLE_EQ(p.polygon.max_radius2, 11.25);
  EXPECT_EQ(p.edges_labelled(9), 2);
}

// A cell step whose item k needs need(k) vertices: it counts its runs and notes the capacity
// of the polygon that held the cell.
struct NeedsVertices {
  Kokkos::View<int const*> need;
  Kokkos::View<int*> overflowed, runs, capacity_used;
  KOKKOS_FUNCTION void operator()(Polygon& cell, int k) const {
    Kokkos::atomic_add(&runs(k), 1);
    overflowed(k) = cell.capacity < need(k);
    if (!overflowed(k))
      capacity_used(k) = cell.capacity;
  }
};

TEST(Polygon, CellsThatDoNotFitAloneAreCutAgainWithTwiceTheCapacity) {
  std::vector<int> const need{3, 20, 40, 100, 16, 300};
  int const n = static_cast<int>(need.size());
  Kokkos::View<int*> need_view("need", n), overflowed("overflowed", n), runs("runs", n),
      used("capacity_used", n);
  auto h = Kokkos::create_mirror_view(need_view);
  for (int k = 0; k < n; ++k)
    h(k) = need[k];
  Kokkos::deep_copy(need_view, h);
  auto const report = sdot::detail::for_each_cell_until_fit(
      Kokkos::DefaultExecutionSpace(), "test::needs_vertices",
      NeedsVertices{need_view, overflowed, runs, used}, overflowed, n, 16);
  EXPECT_EQ(report.overflowed_cells, 4); // 20, 40, 100 and 300 need more than 16
  EXPECT_EQ(report.passes, 5);           // at 32, 64, 128, 256 and 512 vertices
  EXPECT_EQ(report.final_capacity, 512);
  auto const r = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), runs);
  auto const u = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), used);
  auto const o = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), overflowed);
  std::vector<int> const expected_runs{1, 2, 3, 4, 1, 6},
      expected_capacity{16, 32, 64, 128, 16, 512};
  for (int k = 0; k < n; ++k) {
    SCOPED_TRACE("item " + std::to_string(k));
    EXPECT_EQ(r(k), expected_runs[k]); // only the cells that did not fit run again
    EXPECT_EQ(u(k), expected_capacity[k]);
    EXPECT_EQ(o(k), 0);
  }
  // Every cell fits at once: no pass again.
  Kokkos::deep_copy(runs, 0);
  auto const roomy = sdot::detail::for_each_cell_until_fit(
      Kokkos::DefaultExecutionSpace(), "test::needs_vertices",
      NeedsVertices{need_view, overflowed, runs, used}, overflowed, n, 300);
  EXPECT_EQ(roomy.overflowed_cells, 0);
  EXPECT_EQ(roomy.passes, 0);
  EXPECT_EQ(roomy.final_capacity, 0);
}

} // namespace
