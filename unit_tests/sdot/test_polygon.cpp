// Clipping a cell polygon (detail::Polygon): the convex fast path and the general
// Sutherland–Hodgman pass it falls back to, checked on polygons whose result is known.
#include "sdot/host_polygon.hpp"

#include <sdot/geometry/polygon.hpp>

#include <gtest/gtest.h>

#include <array>
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

} // namespace
