// The transport solver on one process: converged weights are checked against the brute-force
// measures of the unit tests (an independent O(N²) computation in long double).
#include "transport_helpers.hpp"

#include <brute_force.hpp>

#include <gtest/gtest.h>

#include <cmath>
#include <numeric>
#include <string>

using namespace sdot_test;

namespace {

std::vector<sdot::HalfSpace> unit_square() {
  return sdot::box_half_spaces({0, 0}, {1, 1});
}

struct Solved {
  std::vector<double> weights, measures;
  sdot::OptimalTransportStatistics statistics;
};

Solved solve(Cloud const& c, std::vector<double> const& targets,
             std::vector<sdot::HalfSpace> const& hs, sdot::PowerDiagramOptions diagram = {},
             sdot::OptimalTransportOptions options = {}) {
  sdot::OptimalTransport<> ot(positions_view(c), view_of(targets), hs, diagram, options);
  auto result = ot.solve();
  return {to_vector(result.weights), to_vector(result.measures), result.statistics};
}

// The weights found give the targets, by the brute-force reference.
void expect_transport(Cloud const& c, std::vector<double> const& targets,
                      std::vector<sdot::HalfSpace> const& hs, Solved const& s, double tol) {
  double const area = sdot::domain_polygon(hs).area;
  auto const reference = brute_force(c.x, s.weights, hs);
  ASSERT_EQ(s.weights.size(), c.x.size());
  for (std::size_t i = 0; i < c.x.size(); ++i) {
    ASSERT_NEAR(static_cast<double>(reference.measures[i]), targets[i], tol * area) << "cell " << i;
    ASSERT_NEAR(s.measures[i], targets[i], tol * area) << "cell " << i;
  }
  EXPECT_LE(s.statistics.max_error, tol * area);
}

std::vector<double> uniform_targets(std::size_t n, double area = 1) {
  return std::vector<double>(n, area / n);
}

} // namespace

TEST(OptimalTransport, UniformSeedsFromZeroWeights) {
  auto const c = uniform_cloud(1000, 0, 21);
  auto const t = uniform_targets(c.x.size());
  auto const s = solve(c, t, unit_square());
  expect_transport(c, t, unit_square(), s, 1e-10);
  EXPECT_GE(s.statistics.newton_iterations, 1);
  EXPECT_LE(s.statistics.newton_iterations, 15);
}

TEST(OptimalTransport, ClusteredSeedsMustGrowALot) {
  // 80 % of the seeds in three clusters of radius ~0.02: their Voronoi cells are tiny, and
  // every cell must reach 1/N.
  auto c = clustered_cloud(1000, 22);
  for (auto& w : c.w)
    w = 0;
  auto const t = uniform_targets(c.x.size());
  auto const start = measures_at(c, c.w, unit_square());
  EXPECT_LT(*std::min_element(start.begin(), start.end()), 0.01 * t[0]);
  auto const s = solve(c, t, unit_square());
  expect_transport(c, t, unit_square(), s, 1e-10);
  EXPECT_LE(s.statistics.newton_iterations, 40);
}

TEST(OptimalTransport, LatticeWithNonUniformTargets) {
  auto const c = lattice_cloud(20);
  std::vector<double> t;
  for (auto const& x : c.x)
    t.push_back(1 + 0.5 * std::sin(6 * x[0]) * std::cos(4 * x[1]));
  double const sum = std::accumulate(t.begin(), t.end(), 0.0);
  for (auto& v : t)
    v /= sum;
  auto const s = solve(c, t, unit_square());
  expect_transport(c, t, unit_square(), s, 1e-10);
}

TEST(OptimalTransport, NonUniformTargetsInAHexagon) {
  std::vector<sdot::HalfSpace> hexagon;
  double const pi = std::acos(-1.0);
  for (int k = 0; k < 6; ++k)
    hexagon.push_back({{std::cos(k * pi / 3), std::sin(k * pi / 3)}, 0.45});
  double const area = sdot::domain_polygon(hexagon).area;
  Cloud c = uniform_cloud(600, 0, 23, -0.3, 0.3);
  std::vector<double> t;
  for (auto const& x : c.x)
    t.push_back(std::exp(-4 * (x[0] * x[0] + x[1] * x[1])) + 0.2 * (x[0] > 0));
  double const sum = std::accumulate(t.begin(), t.end(), 0.0);
  for (auto& v : t)
    v *= area / sum;
  auto const s = solve(c, t, hexagon);
  expect_transport(c, t, hexagon, s, 1e-10);
}

TEST(OptimalTransport, ToleranceAndProgress) {
  auto const c = uniform_cloud(400, 0, 24);
  auto const t = uniform_targets(c.x.size());
  sdot::OptimalTransportOptions options;
  options.tol = 1e-6;
  std::vector<sdot::NewtonProgress> seen;
  options.progress = [&](sdot::NewtonProgress const& p) { seen.push_back(p); };
  auto const s = solve(c, t, unit_square(), {}, options);
  expect_transport(c, t, unit_square(), s, 1e-6);
  ASSERT_EQ(static_cast<int>(seen.size()), s.statistics.newton_iterations + 1);
  int cg = 0;
  for (std::size_t k = 0; k < seen.size(); ++k) {
    EXPECT_EQ(seen[k].newton_iteration, static_cast<int>(k));
    cg += seen[k].cg_iterations;
    if (k > 0) {
      EXPECT_GT(seen[k].step, 0);
      EXPECT_GT(seen[k].cg_iterations, 0);
    }
  }
  EXPECT_EQ(cg, s.statistics.cg_iterations);
  EXPECT_GT(seen.front().max_error, 1e-6);
  EXPECT_LE(seen.back().max_error, 1e-6);
}

TEST(OptimalTransport, InitialWeightsAtTheSolutionNeedNoStep) {
  auto const c = uniform_cloud(300, 0, 25);
  auto const t = uniform_targets(c.x.size());
  auto const first = solve(c, t, unit_square());
  sdot::OptimalTransport<> ot(positions_view(c), view_of(t), unit_square());
  auto const again = ot.solve(view_of(first.weights));
  EXPECT_EQ(again.statistics.newton_iterations, 0);
  EXPECT_EQ(again.statistics.diagram_evaluations, 1);
}

TEST(OptimalTransport, SameResultForAnyNumberOfBoxes) {
  auto const c = clustered_cloud(600, 26);
  auto const t = uniform_targets(c.x.size());
  auto const one = solve(c, t, unit_square());
  sdot::PowerDiagramOptions boxes;
  boxes.nb_boxes = 8;
  Solved const eight = solve(c, t, unit_square(), boxes);
  // Weights are defined up to a constant; steps have zero mean, so both start and stay at 0.
  double scale = 0;
  for (double w : one.weights)
    scale = std::fmax(scale, std::fabs(w));
  for (std::size_t i = 0; i < c.x.size(); ++i)
    EXPECT_NEAR(eight.weights[i], one.weights[i], 1e-10 * scale) << "seed " << i;
}

TEST(OptimalTransport, RefusesBadTargets) {
  auto const c = uniform_cloud(50, 0, 27);
  auto const hs = unit_square();
  auto expect_error = [&](std::vector<double> const& t, std::vector<std::string> const& words) {
    try {
      sdot::OptimalTransport<> ot(positions_view(c), view_of(t), hs);
      ADD_FAILURE() << "no error";
    } catch (std::invalid_argument const& e) {
      for (auto const& w : words)
        EXPECT_NE(std::string(e.what()).find(w), std::string::npos)
            << "'" << w << "' missing from: " << e.what();
    }
  };
  auto t = uniform_targets(c.x.size());
  auto bad = t;
  bad[17] = 0;
  expect_error(bad, {"target mass 17", "is 0", "positive"});
  bad = t;
  bad[3] = -0.02;
  bad[20] = 0.06;
  expect_error(bad, {"target mass 3", "-0.02"});
  bad = t;
  bad[5] = std::nan("");
  expect_error(bad, {"target mass 5", "nan"});
  bad = t;
  bad[0] += 0.01;
  expect_error(bad, {"add up to 1.01", "area is 1"});
  bad = t;
  bad.pop_back();
  expect_error(bad, {"50 positions", "49 target masses"});
}

TEST(OptimalTransport, RefusesAnEmptyStartingCell) {
  Cloud c = uniform_cloud(30, 0, 28);
  c.x[12] = c.x[4]; // coincident seeds: cell 12 is empty at zero weights
  sdot::OptimalTransport<> ot(positions_view(c), view_of(uniform_targets(c.x.size())),
                              unit_square());
  try {
    ot.solve();
    ADD_FAILURE() << "no error";
  } catch (std::invalid_argument const& e) {
    EXPECT_NE(std::string(e.what()).find("cell 12 is empty"), std::string::npos) << e.what();
  }
}
