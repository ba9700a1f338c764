// The Jacobian of the measures on one process: against centred finite differences of the
// measures, and its invariants (symmetric, rows adding up to zero, the same for any nb_boxes).
#include "transport_helpers.hpp"
#include <test_setup.hpp>

#include <gtest/gtest.h>

#include <cmath>

using namespace sdot_test;

namespace {

SparseEntries jacobian_of(Cloud const& c, std::vector<sdot::HalfSpace> const& hs,
                          sdot::PowerDiagramOptions options = {}) {
  auto positions = positions_view(c);
  sdot::PowerDiagram<> pd(positions, weights_view(c), hs, options);
  auto jacobian = sdot::measure_jacobian(pd, sdot::ConstPoints<>(positions));
  EXPECT_EQ(jacobian.global.numRows(), static_cast<int>(c.x.size()));
  EXPECT_EQ(jacobian.global.numCols(), static_cast<int>(c.x.size()));
  return host_entries(jacobian.global);
}

// The clustered cloud with weights small enough for every cell to be non-empty.
Cloud clustered(int n, unsigned seed) {
  Cloud c = clustered_cloud(n, seed);
  for (auto& w : c.w)
    w *= 1e-3;
  return c;
}

double max_abs(SparseEntries const& j) {
  double m = 0;
  for (auto const& e : j)
    m = std::fmax(m, std::fabs(e.second));
  return m;
}

// Column j of the Jacobian by centred differences: (m(w + h e_j) − m(w − h e_j)) / 2h.
void expect_matches_finite_differences(Cloud const& c, std::vector<sdot::HalfSpace> const& hs) {
  int const n = static_cast<int>(c.x.size());
  auto const jacobian = jacobian_of(c, hs);
  double const scale = max_abs(jacobian);
  ASSERT_GT(scale, 0);
  double const h = 1e-7 / n;
  for (int j = 0; j < n; ++j) {
    auto plus = c.w, minus = c.w;
    plus[j] += h;
    minus[j] -= h;
    auto const mp = measures_at(c, plus, hs), mm = measures_at(c, minus, hs);
    for (int i = 0; i < n; ++i) {
      double const fd = (mp[i] - mm[i]) / (2 * h);
      auto it = jacobian.find({i, j});
      double const got = it == jacobian.end() ? 0.0 : it->second;
      ASSERT_NEAR(got, fd, 1e-6 * scale) << "entry (" << i << ", " << j << ") of " << n;
    }
  }
}

void expect_invariants(SparseEntries const& jacobian, int n) {
  double const scale = max_abs(jacobian);
  std::vector<double> row_sums(n, 0.0);
  for (auto const& e : jacobian) {
    int const i = e.first.first, j = e.first.second;
    row_sums[i] += e.second;
    if (i != j) {
      EXPECT_LE(e.second, 0) << "entry (" << i << ", " << j << ")";
      auto t = jacobian.find({j, i});
      ASSERT_NE(t, jacobian.end()) << "entry (" << i << ", " << j << ") has no transpose";
      EXPECT_NEAR(e.second, t->second, 1e-12 * scale) << "entry (" << i << ", " << j << ")";
    } else {
      EXPECT_GT(e.second, 0) << "diagonal " << i;
    }
  }
  for (int i = 0; i < n; ++i) {
    EXPECT_TRUE(jacobian.count({i, i})) << "no diagonal in row " << i;
    EXPECT_NEAR(row_sums[i], 0, 1e-14 * scale) << "row " << i;
  }
}

} // namespace

TEST(MeasureJacobian, FiniteDifferencesUniform) {
  expect_matches_finite_differences(uniform_cloud(150, 1e-3, 7), unit_square());
}

TEST(MeasureJacobian, FiniteDifferencesClustered) {
  expect_matches_finite_differences(clustered(150, 8), unit_square());
}

TEST(MeasureJacobian, FiniteDifferencesLattice) {
  expect_matches_finite_differences(lattice_cloud(10), unit_square());
}

TEST(MeasureJacobian, FiniteDifferencesTriangleDomain) {
  // (0,0), (1,0), (0.3,0.9): seeds inside it only.
  std::vector<sdot::HalfSpace> triangle = {{{0, -1}, 0}, {{0.9, 0.7}, 0.9}, {{-0.9, 0.3}, 0}};
  Cloud c;
  for (auto const& p : uniform_cloud(400, 0, 9).x)
    if (p[1] > 0 && 0.9 * p[0] + 0.7 * p[1] < 0.9 && -0.9 * p[0] + 0.3 * p[1] < 0) {
      c.x.push_back(p);
      c.w.push_back(1e-3 * p[0]);
    }
  ASSERT_GT(c.x.size(), 50u);
  expect_matches_finite_differences(c, triangle);
}

TEST(MeasureJacobian, Invariants) {
  // Weights small enough that no cell is empty.
  int k = 0;
  for (auto const& c : {uniform_cloud(500, 1e-4, 3), clustered(500, 4), lattice_cloud(16)}) {
    SCOPED_TRACE("cloud " + std::to_string(k++));
    expect_invariants(jacobian_of(c, unit_square()), static_cast<int>(c.x.size()));
  }
}

TEST(MeasureJacobian, SameForAnyNumberOfBoxes) {
  auto const c = clustered_cloud(800, 5);
  auto const one = jacobian_of(c, unit_square());
  for (int boxes : {3, 8, 64}) {
    sdot::PowerDiagramOptions options;
    options.nb_boxes = boxes;
    SparseEntries const got = jacobian_of(c, unit_square(), options);
    // Cells are cut in another order with several boxes: equal to round-off, and an entry
    // of a zero-length edge may appear on one side only, with a value ~0.
    double largest = 0;
    for (auto const& e : one)
      largest = std::fmax(largest, std::fabs(e.second));
    for (auto const& e : one) {
      auto it = got.find(e.first);
      double const value = it == got.end() ? 0.0 : it->second;
      EXPECT_NEAR(value, e.second, 1e-12 * largest)
          << boxes << " boxes, entry (" << e.first.first << ", " << e.first.second << ")";
    }
    for (auto const& e : got)
      if (!one.count(e.first))
        EXPECT_NEAR(e.second, 0.0, 1e-12 * largest) << boxes << " boxes, extra entry";
  }
}

TEST(MeasureJacobian, CoincidentSeedsAddNothing) {
  // Seed 3 repeats seed 1 (same weight): seed 1 keeps the cell, 3's is empty. The bisector a
  // neighbour shares with both may be attributed to either (the measures are not
  // differentiable there); what must hold: finite entries, an empty row for the empty cell,
  // rows adding up to zero.
  Cloud c = uniform_cloud(40, 0, 11);
  c.x[3] = c.x[1];
  auto const jacobian = jacobian_of(c, unit_square());
  std::vector<double> row_sums(c.x.size(), 0.0);
  for (auto const& e : jacobian) {
    if (e.first.first == 3)
      EXPECT_EQ(e.second, 0) << "entry (3, " << e.first.second << ")";
    EXPECT_TRUE(std::isfinite(e.second));
    row_sums[e.first.first] += e.second;
  }
  EXPECT_EQ(jacobian.count({1, 3}), 0u);
  EXPECT_EQ(jacobian.count({3, 1}), 0u);
  for (double s : row_sums)
    EXPECT_NEAR(s, 0, 1e-14 * max_abs(jacobian));
}
