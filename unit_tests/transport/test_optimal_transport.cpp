// The transport solver on one process: converged weights are checked against the brute-force
// measures of the unit tests (an independent O(N²) computation in long double).
#include "transport_helpers.hpp"
#include <test_setup.hpp>

#include <brute_force.hpp>

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <map>
#include <numeric>
#include <string>

using namespace sdot_test;

namespace {

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

TEST(OptimalTransport, ClusteredSeedsWithAndWithoutTheLinearModelKeepingCells) {
  // linear_model_keeps_cells (the default) changes the directions, not the solution.
  auto c = clustered_cloud(1000, 23);
  for (auto& w : c.w)
    w = 0;
  auto const t = uniform_targets(c.x.size());
  for (bool const keep : {true, false}) {
    SCOPED_TRACE(keep ? "kept" : "norm only");
    sdot::OptimalTransportOptions options;
    options.linear_model_keeps_cells = keep;
    auto const s = solve(c, t, unit_square(), {}, options);
    expect_transport(c, t, unit_square(), s, 1e-10);
  }
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

TEST(OptimalTransport, ForcingTermsAfterAFullStepStayTight) {
  // The forcing term η_k of each step (NewtonProgress::cg_tol) lies in [cg_tol, max_cg_tol],
  // and in [cg_tol, full_step_max_cg_tol] once the step before took α = 1; with
  // full_step_max_cg_tol = max_cg_tol the same trajectory starts looser after full steps (the
  // bound binds).
  auto const c = clustered_cloud(2000, 37);
  auto const t = uniform_targets(c.x.size());
  for (double full_step : {0.003, 0.01}) {
    sdot::OptimalTransportOptions options;
    options.full_step_max_cg_tol = full_step;
    std::vector<sdot::NewtonProgress> seen;
    options.progress = [&](sdot::NewtonProgress const& p) { seen.push_back(p); };
    auto const s = solve(c, t, unit_square(), {}, options);
    expect_transport(c, t, unit_square(), s, 1e-10);
    double loosest_after_full_step = 0;
    for (std::size_t k = 1; k < seen.size(); ++k) {
      EXPECT_GE(seen[k].cg_tol, options.cg_tol) << "step " << k;
      EXPECT_LE(seen[k].cg_tol, options.max_cg_tol) << "step " << k;
      if (k >= 2 && seen[k - 1].step == 1) {
        EXPECT_LE(seen[k].cg_tol, std::fmax(options.cg_tol, full_step)) << "step " << k;
        loosest_after_full_step = std::fmax(loosest_after_full_step, seen[k].cg_tol);
      }
    }
    if (full_step > 0.005)
      EXPECT_GT(loosest_after_full_step, 0.003);
  }
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

TEST(OptimalTransport, NewPositionsSolveFromTheLastWeights) {
  // Time steps of a clustered cloud: each solve after set_positions() from the last weights
  // gives the targets (brute force) and the weights of a new solver.
  auto c = clustered_cloud(800, 29);
  for (auto& w : c.w)
    w = 0;
  auto const t = uniform_targets(c.x.size());
  sdot::OptimalTransport<> ot(positions_view(c), view_of(t), unit_square());
  auto result = ot.solve();
  double const spacing = 1 / std::sqrt(800.0);
  for (int step = 1; step <= 3; ++step) {
    SCOPED_TRACE("step " + std::to_string(step));
    c = moved_along_field(c, 0.1 * spacing, step);
    ot.set_positions(positions_view(c));
    result = ot.solve(result.weights);
    Solved const moved{to_vector(result.weights), to_vector(result.measures), result.statistics};
    expect_transport(c, t, unit_square(), moved, 1e-10);
    EXPECT_GT(result.statistics.history.size(), 0u);
    Solved const fresh = solve(c, t, unit_square());
    double scale = 0;
    for (double w : fresh.weights)
      scale = std::fmax(scale, std::fabs(w));
    // Weights are defined up to a constant: compare them less their means.
    double shift = 0;
    for (std::size_t i = 0; i < c.x.size(); ++i)
      shift += (moved.weights[i] - fresh.weights[i]) / c.x.size();
    for (std::size_t i = 0; i < c.x.size(); ++i)
      EXPECT_NEAR(moved.weights[i] - shift, fresh.weights[i], 1e-6 * scale) << "seed " << i;
  }
  // Another number of positions is refused.
  Cloud fewer = c;
  fewer.x.pop_back();
  EXPECT_THROW(ot.set_positions(positions_view(fewer)), std::invalid_argument);
}

TEST(OptimalTransport, SameResultForAnyNumberOfBoxes) {
  auto const c = clustered_cloud(600, 26);
  auto const t = uniform_targets(c.x.size());
  auto const one = solve(c, t, unit_square());
  // Weights are defined up to a constant; steps have zero mean, so both start and stay at 0.
  double scale = 0;
  for (double w : one.weights)
    scale = std::fmax(scale, std::fabs(w));
  for (int nb_boxes : {3, 8, 64}) {
    sdot::PowerDiagramOptions boxes;
    boxes.nb_boxes = nb_boxes;
    Solved const got = solve(c, t, unit_square(), boxes);
    for (std::size_t i = 0; i < c.x.size(); ++i)
      EXPECT_NEAR(got.weights[i], one.weights[i], 1e-10 * scale)
          << nb_boxes << " boxes, seed " << i;
  }
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

TEST(OptimalTransport, NamesTheOptionOutOfItsRange) {
  auto const c = uniform_cloud(50, 0, 29);
  auto expect_error = [&](auto change, std::vector<std::string> const& words) {
    sdot::OptimalTransportOptions options;
    change(options);
    sdot::OptimalTransport<> ot(positions_view(c), view_of(uniform_targets(c.x.size())),
                                unit_square(), {}, options);
    try {
      ot.solve();
      ADD_FAILURE() << "no error for " << words[0];
    } catch (std::invalid_argument const& e) {
      for (auto const& w : words)
        EXPECT_NE(std::string(e.what()).find(w), std::string::npos)
            << "'" << w << "' missing from: " << e.what();
    }
  };
  using O = sdot::OptimalTransportOptions;
  expect_error([](O& o) { o.tol = 0; }, {"options.tol is 0", "positive"});
  expect_error([](O& o) { o.tol = std::nan(""); }, {"options.tol is nan"});
  expect_error([](O& o) { o.min_mass_fraction = 1; }, {"options.min_mass_fraction is 1"});
  expect_error([](O& o) { o.cg_tol = 2; }, {"options.cg_tol is 2", "(0, 1)"});
  expect_error([](O& o) { o.max_cg_tol = 1e-4; }, {"options.max_cg_tol is 0.0001", "[cg_tol"});
  expect_error([](O& o) { o.full_step_max_cg_tol = 0; },
               {"options.full_step_max_cg_tol is 0", "(0, 1)"});
  expect_error([](O& o) { o.max_newton = -1; }, {"options.max_newton is -1"});
  expect_error([](O& o) { o.max_halvings = -3; }, {"options.max_halvings is -3"});
  expect_error([](O& o) { o.max_cg = 0; }, {"options.max_cg is 0"});
  expect_error([](O& o) { o.aggregation.matched_levels = -2; },
               {"options.aggregation.matched_levels is -2", "≥ −1"});
  expect_error([](O& o) { o.aggregation.aggregate_size = 1; },
               {"options.aggregation.aggregate_size is 1", "≥ 2"});
  expect_error([](O& o) { o.aggregation.coarsest_size = 0; },
               {"options.aggregation.coarsest_size is 0"});
  expect_error([](O& o) { o.aggregation.sweeps = 0; }, {"options.aggregation.sweeps is 0"});
  expect_error([](O& o) { o.aggregation.omega = 1.5; }, {"options.aggregation.omega is 1.5"});
  expect_error([](O& o) { o.aggregation.coarse_scale = 2; },
               {"options.aggregation.coarse_scale is 2"});
  expect_error([](O& o) { o.aggregation.cycle = 0; }, {"options.aggregation.cycle is 0"});
  // Good options solve.
  sdot::OptimalTransport<> ot(positions_view(c), view_of(uniform_targets(c.x.size())),
                              unit_square());
  EXPECT_LE(ot.solve().statistics.max_error, 1e-10);
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

namespace {

// A seed in the middle of a ring of `ring` seeds: its cell has `ring` vertices, more than the
// first pass's 16 when vertex_capacity = 16 (a rebuilt cell).
Cloud ring_cloud(int ring) {
  Cloud c;
  c.x.push_back({0.5, 0.5});
  for (int k = 0; k < ring; ++k) {
    double const a = 2 * M_PI * k / ring;
    c.x.push_back({0.5 + 0.3 * std::cos(a), 0.5 + 0.3 * std::sin(a)});
  }
  for (int k = 0; k < 40; ++k)
    c.x.push_back({0.02 + 0.96 * ((k * 37) % 41) / 41.0, k < 20 ? 0.05 : 0.95});
  c.w.assign(c.x.size(), 0.0);
  return c;
}

void expect_same_polygons(
    sdot::CellPolygons<Kokkos::DefaultExecutionSpace::memory_space> const& a,
    sdot::CellPolygons<Kokkos::DefaultExecutionSpace::memory_space> const& b) {
  auto const ao = to_vector(a.offsets), bo = to_vector(b.offsets);
  ASSERT_EQ(ao, bo);
  auto const as = to_vector(a.edge_sources), bs = to_vector(b.edge_sources);
  ASSERT_EQ(as, bs);
  auto av = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), a.vertices);
  auto bv = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), b.vertices);
  ASSERT_EQ(av.extent(0), bv.extent(0));
  for (std::size_t k = 0; k < av.extent(0); ++k) {
    EXPECT_EQ(av(k, 0), bv(k, 0)) << "vertex " << k;
    EXPECT_EQ(av(k, 1), bv(k, 1)) << "vertex " << k;
  }
}

} // namespace

TEST(OptimalTransport, KeptPolygonsAreThoseOfASecondBuild) {
  auto clustered = clustered_cloud(800, 41);
  for (std::size_t i = 0; i < clustered.w.size(); ++i)
    clustered.w[i] = 1e-3 * std::sin(7.0 * i);
  for (auto const& c : {clustered, ring_cloud(40), ring_cloud(24)})
    for (int capacity : {16, 32})
      for (int boxes : {1, 4}) {
        sdot::PowerDiagramOptions plain;
        plain.vertex_capacity = capacity;
        plain.nb_boxes = boxes;
        auto kept = plain;
        kept.keep_polygons = true;
        sdot::PowerDiagram<> a(positions_view(c), weights_view(c), unit_square(), plain);
        sdot::PowerDiagram<> b(positions_view(c), weights_view(c), unit_square(), kept);
        EXPECT_EQ(to_vector(a.measures()), to_vector(b.measures()));
        if (boxes == 1 && capacity == 16 && c.x.size() < 100)
          EXPECT_GT(b.statistics().overflowed_cells, 0);
        expect_same_polygons(a.cell_polygons(), b.cell_polygons());
        expect_same_polygons(a.cell_polygons(), b.cell_polygons()); // kept: a second call too
      }
}

TEST(OptimalTransport, KeptPolygonsGiveTheResultOfRebuiltOnes) {
  // OneProcessCells keeps the polygons of the last evaluation; ReplicatedCells (one process)
  // builds them again for the Jacobian.
  auto const c = clustered_cloud(500, 42);
  auto const t = uniform_targets(c.x.size());
  auto const targets = view_of(t);
  sdot::OneProcessCells<> kept(Kokkos::DefaultExecutionSpace{}, positions_view(c), unit_square());
  ReplicatedCells rebuilt(loom::Ranks{}, c, unit_square());
  auto const a = sdot::solve_optimal_transport(kept, targets, {});
  auto const b = sdot::solve_optimal_transport(rebuilt, targets, {});
  EXPECT_EQ(a.statistics.newton_iterations, b.statistics.newton_iterations);
  EXPECT_EQ(a.statistics.cg_iterations, b.statistics.cg_iterations);
  auto const wa = to_vector(a.weights), wb = to_vector(b.weights);
  double scale = 0;
  for (double w : wa)
    scale = std::fmax(scale, std::fabs(w));
  for (std::size_t i = 0; i < wa.size(); ++i)
    EXPECT_NEAR(wa[i], wb[i], 1e-10 * scale) << "seed " << i;
}

TEST(OptimalTransport, PreconditionersGiveTheSameWeights) {
  auto const c = clustered_cloud(700, 43);
  auto const t = uniform_targets(c.x.size());
  sdot::OptimalTransportOptions jacobi;
  jacobi.preconditioner = sdot::CgPreconditioner::jacobi;
  sdot::OptimalTransportOptions aggregation;
  aggregation.aggregation.coarsest_size = 32; // several levels at this size
  auto const a = solve(c, t, unit_square(), {}, jacobi);
  auto const b = solve(c, t, unit_square(), {}, aggregation);
  auto const b2 = solve(c, t, unit_square(), {}, aggregation);
  expect_transport(c, t, unit_square(), b, 1e-10);
  EXPECT_LT(b.statistics.cg_iterations, a.statistics.cg_iterations);
  double scale = 0;
  for (double w : a.weights)
    scale = std::fmax(scale, std::fabs(w));
  for (std::size_t i = 0; i < c.x.size(); ++i) {
    EXPECT_NEAR(a.weights[i], b.weights[i], 1e-8 * scale) << "seed " << i;
    EXPECT_EQ(b.weights[i], b2.weights[i]) << "seed " << i; // deterministic
  }
  EXPECT_EQ(b.statistics.cg_iterations, b2.statistics.cg_iterations);
}

/// v less its mean.
std::vector<double> without_mean(std::vector<double> v) {
  double mean = 0;
  for (double x : v)
    mean += x / double(v.size());
  for (double& x : v)
    x -= mean;
  return v;
}

/// J x = b on the zero-mean subspace (J singular) by Gaussian elimination with x_0 pinned (rows
/// and columns 1..n-1, partial pivoting), then the mean removed.
template <class Jacobian>
std::vector<double> zero_mean_direct_solve(Jacobian const& jacobian, std::vector<double> const& b) {
  int const n = static_cast<int>(b.size());
  auto const entries = host_entries(jacobian.global);
  int const m = n - 1;
  std::vector<double> a(m * m, 0.0), rhs(b.begin() + 1, b.end());
  for (auto const& [ij, v] : entries)
    if (ij.first > 0 && ij.second > 0)
      a[(ij.first - 1) * m + ij.second - 1] += v;
  for (int k = 0; k < m; ++k) {
    int p = k;
    for (int i = k + 1; i < m; ++i)
      if (std::fabs(a[i * m + k]) > std::fabs(a[p * m + k]))
        p = i;
    for (int j = 0; j < m; ++j)
      std::swap(a[k * m + j], a[p * m + j]);
    std::swap(rhs[k], rhs[p]);
    for (int i = k + 1; i < m; ++i) {
      double const f = a[i * m + k] / a[k * m + k];
      for (int j = k; j < m; ++j)
        a[i * m + j] -= f * a[k * m + j];
      rhs[i] -= f * rhs[k];
    }
  }
  std::vector<double> direct(n, 0.0);
  for (int i = m - 1; i >= 0; --i) {
    double s = rhs[i];
    for (int j = i + 1; j < m; ++j)
      s -= a[i * m + j] * direct[j + 1];
    direct[i + 1] = s / a[i * m + i];
  }
  return without_mean(direct);
}

/// A zero-mean right-hand side for the systems below.
std::vector<double> zero_mean_rhs(int n) {
  std::vector<double> b(n);
  double mean = 0;
  for (int i = 0; i < n; ++i)
    mean += b[i] = std::sin(0.7 * i) + 0.3;
  for (double& v : b)
    v -= mean / n;
  return b;
}

double largest_magnitude(std::vector<double> const& v) {
  double scale = 0;
  for (double x : v)
    scale = std::fmax(scale, std::fabs(x));
  return scale;
}

/// The system of the solver tests for cloud c: the Jacobian of its diagram, a zero-mean
/// right-hand side, the direct solution of zero mean and its largest magnitude.
struct ZeroMeanSystem {
  sdot::MeasureJacobian<Kokkos::DefaultExecutionSpace> jacobian;
  std::vector<double> b, direct;
  double scale = 0;
};

ZeroMeanSystem zero_mean_system(Cloud const& c) {
  sdot::PowerDiagram<> pd(positions_view(c), weights_view(c), unit_square());
  ZeroMeanSystem system{sdot::measure_jacobian(pd, positions_view(c)),
                        zero_mean_rhs(static_cast<int>(c.x.size())),
                        {},
                        0};
  system.direct = zero_mean_direct_solve(system.jacobian, system.b);
  system.scale = largest_magnitude(system.direct);
  return system;
}

/// The conjugate gradient on `system` from x (its guess with `scale_guess`), preconditioned
/// by `preconditioner` (Jacobi when null), with `residual_bounds` when given.
template <class Preconditioner = sdot::detail::JacobiPreconditioner>
sdot::detail::ConjugateGradientResult
solve_system(ZeroMeanSystem const& system, Kokkos::View<double*> x, double tolerance,
             int max_iterations, Preconditioner const* preconditioner = nullptr,
             bool scale_guess = false,
             Kokkos::View<double const*> const* residual_bounds = nullptr) {
  auto const& j = system.jacobian;
  return sdot::detail::conjugate_gradient(Kokkos::DefaultExecutionSpace(), loom::Ranks{},
                                          j.extended, j.halo, j.diagonal, view_of(system.b), x,
                                          tolerance, max_iterations, preconditioner, scale_guess,
                                          residual_bounds);
}

/// n uniform seeds (random seed `seed`) at weights that move the cells off their seeds.
Cloud cloud_with_cells_off_their_seeds(int n, unsigned seed) {
  auto c = uniform_cloud(n, 0, seed);
  for (std::size_t i = 0; i < c.x.size(); ++i)
    c.w[i] = 3e-3 * (std::sin(9 * c.x[i][0]) + std::cos(7 * c.x[i][1]));
  return c;
}

/// The multilevel preconditioner of the tests (coarsest level of at most 16 seeds) for the
/// Jacobian of cloud c, applied as the solver applies it (constants projected out).
template <class Jacobian>
sdot::detail::AggregationMultigrid<Kokkos::DefaultExecutionSpace>
test_multigrid(Kokkos::DefaultExecutionSpace const& space, Jacobian const& jacobian,
               Cloud const& c) {
  auto const order = sdot::detail::morton_order(space, sdot::ConstPoints<>(positions_view(c)));
  sdot::AggregationOptions options;
  options.coarsest_size = 16;
  sdot::detail::AggregationMultigrid<Kokkos::DefaultExecutionSpace> multigrid(
      space, jacobian.extended, jacobian.diagonal, order, true, options);
  multigrid.project_constants = true;
  return multigrid;
}

TEST(OptimalTransport, AggregationConjugateGradientMatchesADirectSolve) {
  using Space = Kokkos::DefaultExecutionSpace;
  auto const c = uniform_cloud(300, 0, 44); // a Voronoi diagram: J's kernel = the constants
  int const n = static_cast<int>(c.x.size());
  auto const system = zero_mean_system(c);

  Space space;
  auto const multigrid = test_multigrid(space, system.jacobian, c);
  EXPECT_GE(multigrid.levels(), 3);
  Kokkos::View<double*> x("test::x", n);
  auto const result = solve_system(system, x, 1e-12, 1000, &multigrid);
  EXPECT_TRUE(result.converged);
  auto const xs = without_mean(to_vector(x));
  for (int i = 0; i < n; ++i)
    EXPECT_NEAR(xs[i], system.direct[i], 1e-8 * system.scale) << "row " << i;
  Kokkos::View<double*> y("test::y", n);
  auto const jacobi = solve_system(system, y, 1e-12, 5000);
  EXPECT_LT(result.iterations, jacobi.iterations);
}

TEST(OptimalTransport, ConjugateGradientFromAGuess) {
  // The solve started from the best multiple of a guess g: the solution times 2.5 converges at
  // once; the solution plus a small error, in fewer iterations than from zero; g = 0 starts
  // from zero (the same bits). Jacobi and the multilevel preconditioner, at transport weights.
  using Space = Kokkos::DefaultExecutionSpace;
  auto const c = cloud_with_cells_off_their_seeds(300, 45);
  int const n = static_cast<int>(c.x.size());
  auto const system = zero_mean_system(c);

  Space space;
  auto const multigrid = test_multigrid(space, system.jacobian, c);
  for (bool const use_multigrid : {false, true}) {
    SCOPED_TRACE(use_multigrid ? "multilevel" : "Jacobi");
    auto solve = [&](std::vector<double> const& guess, double tolerance,
                     sdot::detail::ConjugateGradientResult& result) {
      Kokkos::View<double*> x("test::x", n);
      Kokkos::deep_copy(x, view_of(guess));
      result =
          use_multigrid
              ? solve_system(system, x, tolerance, 5000, &multigrid, true)
              : solve_system(system, x, tolerance, 5000,
                             static_cast<sdot::detail::JacobiPreconditioner const*>(nullptr), true);
      EXPECT_TRUE(result.converged);
      return without_mean(to_vector(x));
    };
    sdot::detail::ConjugateGradientResult at_once, from_zero, from_near, zero_guess;
    std::vector<double> solution_times_2_5(n), near_solution(n);
    for (int i = 0; i < n; ++i) {
      solution_times_2_5[i] = 2.5 * system.direct[i];
      near_solution[i] = system.direct[i] + 1e-4 * system.scale * std::sin(1.3 * i);
    }
    auto const x_at_once = solve(solution_times_2_5, 1e-8, at_once);
    EXPECT_EQ(at_once.iterations, 0);
    for (int i = 0; i < n; ++i)
      EXPECT_NEAR(x_at_once[i], system.direct[i], 1e-8 * system.scale) << "row " << i;

    auto const x_near = solve(near_solution, 1e-10, from_near);
    Kokkos::View<double*> plain("test::plain", n);
    from_zero = use_multigrid ? solve_system(system, plain, 1e-10, 5000, &multigrid)
                              : solve_system(system, plain, 1e-10, 5000);
    EXPECT_LT(from_near.iterations, from_zero.iterations);
    for (int i = 0; i < n; ++i)
      EXPECT_NEAR(x_near[i], system.direct[i], 1e-7 * system.scale) << "row " << i;

    auto const x_zero_guess = solve(std::vector<double>(n, 0.0), 1e-10, zero_guess);
    EXPECT_EQ(zero_guess.iterations, from_zero.iterations);
    auto plain_values = to_vector(plain);
    double plain_mean = 0;
    for (double v : plain_values)
      plain_mean += v / n;
    for (int i = 0; i < n; ++i)
      EXPECT_EQ(x_zero_guess[i], plain_values[i] - plain_mean) << "row " << i;
  }
}

TEST(OptimalTransport, ConjugateGradientGoesOnUntilEveryResidualIsWithinItsBound) {
  // The solver's linear_model_keeps_cells: past the norm test, the CG goes on until
  // r_i <= bound_i on every row. Checked on the true residual b - J x (host), for bounds that
  // the plain solve leaves broken on some rows, and bounds that already hold (nothing changes,
  // bit for bit). Jacobi and the multilevel preconditioner, at transport-like weights.
  using Space = Kokkos::DefaultExecutionSpace;
  auto const c = cloud_with_cells_off_their_seeds(300, 46);
  int const n = static_cast<int>(c.x.size());
  auto const system = zero_mean_system(c);
  auto const entries = host_entries(system.jacobian.global);
  auto residual = [&](std::vector<double> const& x) {
    std::vector<double> r = system.b;
    for (auto const& [ij, v] : entries)
      r[ij.first] -= v * x[ij.second];
    return r;
  };

  Space space;
  auto const multigrid = test_multigrid(space, system.jacobian, c);
  for (bool const use_multigrid : {false, true}) {
    SCOPED_TRACE(use_multigrid ? "multilevel" : "Jacobi");
    auto solve = [&](Kokkos::View<double const*> const* bounds,
                     sdot::detail::ConjugateGradientResult& result) {
      Kokkos::View<double*> x("test::x", n);
      result = use_multigrid
                   ? solve_system(system, x, 0.05, 5000, &multigrid, false, bounds)
                   : solve_system(system, x, 0.05, 5000,
                                  static_cast<sdot::detail::JacobiPreconditioner const*>(nullptr),
                                  false, bounds);
      EXPECT_TRUE(result.converged);
      return to_vector(x);
    };
    sdot::detail::ConjugateGradientResult plain, bounded, loose;
    auto const x_plain = solve(nullptr, plain);
    auto const r_plain = residual(x_plain);
    double const largest = *std::max_element(r_plain.begin(), r_plain.end());
    ASSERT_GT(largest, 0);

    // A fifth of the plain solve's largest residual: broken on some rows.
    std::vector<double> tight(n, 0.2 * largest);
    int broken = 0;
    for (double r : r_plain)
      broken += r > tight[0];
    EXPECT_GT(broken, 0);
    Kokkos::View<double const*> const tight_view = view_of(tight);
    auto const x_bounded = solve(&tight_view, bounded);
    EXPECT_GT(bounded.iterations, plain.iterations);
    EXPECT_LE(bounded.relative_residual, 0.05);
    auto const r_bounded = residual(x_bounded);
    for (int i = 0; i < n; ++i) // the recursive residual against the true one: rounding
      EXPECT_LE(r_bounded[i], tight[i] + 1e-9 * largest) << "row " << i;

    // Bounds that already hold: the same iterations and bits as without.
    Kokkos::View<double const*> const loose_view = view_of(std::vector<double>(n, 2 * largest));
    auto const x_loose = solve(&loose_view, loose);
    EXPECT_EQ(loose.iterations, plain.iterations);
    for (int i = 0; i < n; ++i)
      EXPECT_EQ(x_loose[i], x_plain[i]) << "row " << i;
  }
}

namespace {

/// The multilevel cycle as docs/transport.md and aggregation_multigrid.hpp describe it, on the
/// host, written independently of the library's kernels: levels from aggregates of the
/// Z-ordered rows (matched along the strongest couplings on the first levels, consecutive
/// below; Galerkin products summed in a std::map in the members' order), each level's matrix
/// rounded to single precision for the cycle, the coarsest level solved densely in double
/// (with s 1 1ᵀ for the singular Laplacian). With `aggregates_of`, the aggregates of that
/// reference (kept from another matrix of the same rows).
class ReferenceMultigrid {
public:
  ReferenceMultigrid(SparseEntries const& fine, std::vector<double> const& diagonal,
                     std::vector<int> const& order, sdot::AggregationOptions const& options,
                     ReferenceMultigrid const* aggregates_of = nullptr)
      : options_(options) {
    int const n = static_cast<int>(order.size());
    std::vector<int> position(n);
    for (int p = 0; p < n; ++p)
      position[order[p]] = p;
    Level level;
    level.size = n;
    level.rows.resize(n);
    level.inverse_diagonal.resize(n);
    for (auto const& [at, value] : fine)
      if (at.second < n)
        level.rows[position[at.first]].push_back({position[at.second], value});
    for (int p = 0; p < n; ++p) {
      double const d = diagonal[order[p]];
      level.inverse_diagonal[p] = d > 0 ? 1 / d : 1.0;
    }
    levels_.push_back(level);
    bool matching = options_.matched_levels > 0;
    for (std::size_t l = 0; aggregates_of ? l + 1 < aggregates_of->levels_.size()
                                          : levels_.back().size > options_.coarsest_size;
         ++l) {
      Level& f = levels_.back();
      if (aggregates_of) {
        f.members = aggregates_of->levels_[l].members;
      } else {
        matching = matching && static_cast<int>(l) < options_.matched_levels;
        if (matching) {
          std::vector<std::vector<int>> nodes(f.size);
          for (int i = 0; i < f.size; ++i)
            nodes[i] = {i};
          f.members = paired(f, paired(f, nodes));
          matching = 2 * f.members.size() <= std::size_t(f.size) * 4 / 5;
        }
        if (!matching) {
          int const size = options_.aggregate_size;
          f.members.assign((f.size + size - 1) / size, {});
          for (int i = 0; i < f.size; ++i)
            f.members[i / size].push_back(i);
        }
      }
      std::vector<int> aggregate(f.size);
      for (std::size_t a = 0; a < f.members.size(); ++a)
        for (int i : f.members[a])
          aggregate[i] = static_cast<int>(a);
      Level c;
      c.size = static_cast<int>(f.members.size());
      std::vector<std::map<int, double>> sums(c.size);
      for (int a = 0; a < c.size; ++a)
        for (int i : f.members[a])
          for (auto const& [column, value] : f.rows[i])
            sums[a][aggregate[column]] += value;
      c.rows.resize(c.size);
      c.inverse_diagonal.resize(c.size);
      for (int r = 0; r < c.size; ++r) {
        double d = 0;
        for (auto const& [column, value] : sums[r]) {
          c.rows[r].push_back({column, value});
          if (column == r)
            d = value;
        }
        c.inverse_diagonal[r] = d > 0 ? 1 / d : 1.0;
      }
      levels_.push_back(c);
    }
  }

  int levels() const { return static_cast<int>(levels_.size()); }

  std::vector<double> apply(std::vector<double> const& r, std::vector<int> const& order) const {
    std::vector<double> b(r.size()), z(r.size());
    for (std::size_t p = 0; p < r.size(); ++p)
      b[p] = r[order[p]];
    auto const x = cycle(0, b);
    for (std::size_t p = 0; p < r.size(); ++p)
      z[order[p]] = x[p];
    return z;
  }

private:
  struct Level {
    int size = 0;
    std::vector<std::vector<std::pair<int, double>>> rows;
    std::vector<double> inverse_diagonal;
    std::vector<std::vector<int>> members; ///< of each aggregate, towards the next level
  };

  /// Groups of `level`'s nodes paired along their strongest couplings (a group's coupling to
  /// another: the strongest −a_ij between their nodes): each group's 4 strongest others (ties
  /// to the lower group) that reach a quarter of its strongest; 2 rounds in which each unpaired
  /// group proposes to its first unpaired one, mutual proposals pairing. A pair is numbered by
  /// its lower group; its nodes are the lower group's, then the other's.
  static std::vector<std::vector<int>> paired(Level const& level,
                                              std::vector<std::vector<int>> const& groups) {
    int const m = static_cast<int>(groups.size());
    std::vector<int> group_of(level.size);
    for (int g = 0; g < m; ++g)
      for (int i : groups[g])
        group_of[i] = g;
    std::vector<std::vector<int>> candidates(m);
    for (int g = 0; g < m; ++g) {
      std::map<int, double> strongest;
      for (int i : groups[g])
        for (auto const& [column, value] : level.rows[i]) {
          int const h = group_of[column];
          if (h != g && -value > 0)
            strongest[h] = std::max(strongest[h], -value);
        }
      std::vector<std::pair<double, int>> sorted; // (−strength, group): strongest, lower first
      for (auto const& [h, v] : strongest)
        sorted.push_back({-v, h});
      std::sort(sorted.begin(), sorted.end());
      for (std::size_t k = 0; k < sorted.size() && k < 4; ++k)
        if (-sorted[k].first >= 0.25 * -sorted[0].first)
          candidates[g].push_back(sorted[k].second);
    }
    std::vector<int> partner(m, -1), proposal(m);
    for (int round = 0; round < 2; ++round) {
      for (int g = 0; g < m; ++g) {
        proposal[g] = -1;
        if (partner[g] < 0)
          for (int h : candidates[g])
            if (partner[h] < 0) {
              proposal[g] = h;
              break;
            }
      }
      for (int g = 0; g < m; ++g)
        if (proposal[g] >= 0 && proposal[proposal[g]] == g)
          partner[g] = proposal[g];
    }
    std::vector<std::vector<int>> pairs;
    for (int g = 0; g < m; ++g)
      if (partner[g] < 0 || partner[g] > g) {
        pairs.push_back(groups[g]);
        if (partner[g] > g)
          pairs.back().insert(pairs.back().end(), groups[partner[g]].begin(),
                              groups[partner[g]].end());
      }
    return pairs;
  }

  /// b − A x with A's entries in single precision.
  static std::vector<double> residual(Level const& a, std::vector<double> const& b,
                                      std::vector<double> const& x) {
    std::vector<double> t(b);
    for (int i = 0; i < a.size; ++i)
      for (auto const& [column, value] : a.rows[i])
        t[i] -= static_cast<double>(static_cast<float>(value)) * x[column];
    return t;
  }

  std::vector<double> cycle(int l, std::vector<double> const& b) const {
    return visit(l, b, std::vector<double>(levels_[l].size, 0.0), false);
  }

  /// A visit of level l from x: the sweeps (none when it `continues` a visit just made, whose
  /// last sweeps stand for them), the coarse correction (the next level visited `cycle`
  /// times, each visit after the first continuing from the one before it), the sweeps.
  std::vector<double> visit(int l, std::vector<double> const& b, std::vector<double> x,
                            bool continues) const {
    Level const& a = levels_[l];
    if (l + 1 == static_cast<int>(levels_.size()))
      return coarsest_solve(a, b);
    double const omega = options_.omega;
    auto sweep = [&] {
      auto const t = residual(a, b, x);
      for (int i = 0; i < a.size; ++i)
        x[i] += omega * a.inverse_diagonal[i] * t[i];
    };
    for (int s = 0; s < options_.sweeps && !continues; ++s)
      sweep();
    Level const& next = levels_[l + 1];
    std::vector<double> coarse_b(next.size, 0.0);
    auto const t = residual(a, b, x);
    for (int c = 0; c < next.size; ++c)
      for (int i : a.members[c])
        coarse_b[c] += t[i];
    auto coarse_x = cycle(l + 1, coarse_b);
    bool const last = l + 2 == static_cast<int>(levels_.size());
    for (int k = 1; k < options_.cycle && !last; ++k)
      coarse_x = visit(l + 1, coarse_b, coarse_x, true);
    for (int c = 0; c < next.size; ++c)
      for (int i : a.members[c])
        x[i] += options_.coarse_scale * coarse_x[c];
    for (int s = 0; s < options_.sweeps; ++s)
      sweep();
    return x;
  }

  /// (A + s 1 1ᵀ) x = b, s the mean diagonal over the size, by Gaussian elimination.
  static std::vector<double> coarsest_solve(Level const& a, std::vector<double> const& b) {
    int const m = a.size;
    double shift = 0;
    for (int i = 0; i < m; ++i)
      shift += 1 / a.inverse_diagonal[i];
    shift /= double(m) * m;
    std::vector<double> dense(std::size_t(m) * m, shift), x(b);
    for (int i = 0; i < m; ++i)
      for (auto const& [column, value] : a.rows[i])
        dense[std::size_t(i) * m + column] += value;
    for (int k = 0; k < m; ++k)
      for (int i = k + 1; i < m; ++i) {
        double const f = dense[std::size_t(i) * m + k] / dense[std::size_t(k) * m + k];
        for (int j = k; j < m; ++j)
          dense[std::size_t(i) * m + j] -= f * dense[std::size_t(k) * m + j];
        x[i] -= f * x[k];
      }
    for (int i = m - 1; i >= 0; --i) {
      for (int j = i + 1; j < m; ++j)
        x[i] -= dense[std::size_t(i) * m + j] * x[j];
      x[i] /= dense[std::size_t(i) * m + i];
    }
    return x;
  }

  sdot::AggregationOptions options_;
  std::vector<Level> levels_;
};

// A cell of most of the domain, a disk, among small ones around it (none empty): a row of
// ~150 entries in the Jacobian.
Cloud cell_of_most_of_the_domain() {
  Cloud hub{{{0.5, 0.5}}, {0.2}};
  for (auto const& x : uniform_cloud(3000, 0, 47).x)
    if (std::hypot(x[0] - 0.5, x[1] - 0.5) > 0.47) {
      hub.x.push_back(x);
      hub.w.push_back(0);
    }
  return hub;
}

} // namespace

TEST(OptimalTransport, SlicedLaplacianProduct) {
  // The conjugate gradient's product with the multigrid's single-precision copy of the
  // Jacobian (one process): the constants exactly in its kernel, and each row within the
  // entries' rounding of the product in double precision, relative to the differences it
  // sums; on a diagram whose cells move off their seeds and on one with a cell of most of
  // the domain (a row of ~150 entries).
  using Space = Kokkos::DefaultExecutionSpace;
  Cloud moved = clustered_cloud(900, 48);
  for (std::size_t i = 0; i < moved.x.size(); ++i)
    moved.w[i] = 0.02 * moved.x[i][0] * moved.x[i][1];
  Cloud hub = cell_of_most_of_the_domain();
  Space space;
  for (Cloud const* cloud : {&moved, &hub}) {
    Cloud const& c = *cloud;
    SCOPED_TRACE(cloud == &moved ? "moved cells" : "a cell of most of the domain");
    int const n = static_cast<int>(c.x.size());
    sdot::PowerDiagram<> pd(positions_view(c), weights_view(c), unit_square());
    auto const jacobian = sdot::measure_jacobian(pd, positions_view(c));
    sdot::detail::AggregationMultigrid<Space> multigrid(space, jacobian.extended, jacobian.diagonal,
                                                        {}, true);
    sdot::detail::SlicedLaplacian<Space::memory_space> const laplacian{multigrid.finest_level()};
    Kokkos::View<double*> y("y", n);
    sdot::detail::multiply(space, laplacian, view_of(std::vector<double>(n, 2.5)), y);
    for (double v : to_vector(y))
      ASSERT_EQ(v, 0.0);
    std::vector<double> xs(n);
    for (int i = 0; i < n; ++i)
      xs[i] = std::sin(1.3 * i) + 0.1 * i / n;
    sdot::detail::multiply(space, laplacian, view_of(xs), y);
    auto const got = to_vector(y);
    std::vector<double> expected(n, 0.0), scale(n, 0.0);
    for (auto const& [at, value] : host_entries(jacobian.extended)) {
      expected[at.first] += value * xs[at.second];
      scale[at.first] += std::fabs(value * (xs[at.second] - xs[at.first]));
    }
    for (int i = 0; i < n; ++i)
      ASSERT_NEAR(got[i], expected[i], 1e-7 * scale[i] + 1e-12 * std::fabs(expected[i]))
          << "row " << i;
  }
}

TEST(OptimalTransport, AggregationCycleMatchesAReferenceCycle) {
  // The preconditioner applied to a vector, against the cycle written out on the host, for
  // the default cycle and others (aggregates that tile the slices of 8 rows or not, more sweeps,
  // V- and triple cycles), on a diagram at weights that move the cells off their seeds, and on
  // one with a cell of most of the domain.
  using Space = Kokkos::DefaultExecutionSpace;
  auto smooth = uniform_cloud(700, 0, 46);
  for (std::size_t i = 0; i < smooth.x.size(); ++i)
    smooth.w[i] = 2e-3 * (std::sin(8 * smooth.x[i][0]) + std::cos(6 * smooth.x[i][1]));
  // Its row of ~150 entries gives coarse rows of more distinct columns than the Galerkin rows'
  // table takes.
  Cloud hub = cell_of_most_of_the_domain();
  for (Cloud const* cloud : {&smooth, &hub}) {
    Cloud const& c = *cloud;
    SCOPED_TRACE(cloud == &smooth ? "smooth weights" : "a cell of most of the domain");
    int const n = static_cast<int>(c.x.size());
    sdot::PowerDiagram<> pd(positions_view(c), weights_view(c), unit_square());
    auto const jacobian = sdot::measure_jacobian(pd, positions_view(c));
    Space space;
    auto const order_view =
        sdot::detail::morton_order(space, sdot::ConstPoints<>(positions_view(c)));
    auto const order = to_vector(order_view);
    auto const diagonal = to_vector(jacobian.diagonal);
    auto const entries = host_entries(jacobian.extended);
    std::vector<double> r(n);
    for (int i = 0; i < n; ++i)
      r[i] = std::sin(1.7 * i) + 0.2 * std::cos(0.3 * i);
    std::vector<int> identity(n);
    std::iota(identity.begin(), identity.end(), 0);
    struct Case {
      int matched_levels, aggregate_size, sweeps, cycle;
      bool ordered; // along the Z-order curve, or in the rows' order (no `order` given)
    };
    for (Case const k : {Case{3, 4, 1, 2, true}, Case{1, 4, 1, 2, true}, Case{9, 4, 2, 1, true},
                         Case{3, 4, 1, 2, false}, Case{0, 4, 1, 2, true}, Case{0, 2, 1, 2, true},
                         Case{0, 8, 2, 2, true}, Case{0, 3, 1, 2, true}, Case{0, 4, 2, 1, true},
                         Case{0, 5, 3, 3, true}, Case{0, 4, 1, 2, false}}) {
      SCOPED_TRACE(std::to_string(k.matched_levels) + " matched levels, aggregates of " +
                   std::to_string(k.aggregate_size) + ", " + std::to_string(k.sweeps) +
                   " sweeps, cycle " + std::to_string(k.cycle) +
                   (k.ordered ? ", Z order" : ", rows' order"));
      sdot::AggregationOptions options;
      options.coarsest_size = 20;
      options.matched_levels = k.matched_levels;
      options.aggregate_size = k.aggregate_size;
      options.sweeps = k.sweeps;
      options.cycle = k.cycle;
      sdot::detail::AggregationMultigrid<Space> multigrid(
          space, jacobian.extended, jacobian.diagonal,
          k.ordered ? order_view : decltype(order_view)(), true, options);
      ASSERT_GE(multigrid.levels(), 3);
      Kokkos::View<double*> z("test::z", n);
      multigrid.apply(space, view_of(r), z);
      auto const got = to_vector(z);
      auto const& levels_order = k.ordered ? order : identity;
      ReferenceMultigrid const reference(entries, diagonal, levels_order, options);
      EXPECT_EQ(multigrid.levels(), reference.levels());
      auto const expected = reference.apply(r, levels_order);
      double const scale = largest_magnitude(expected); // they agree to ~1e-14 of it
      for (int i = 0; i < n; ++i)
        ASSERT_NEAR(got[i], expected[i], 1e-12 * scale) << "row " << i;
    }
  }
}

TEST(OptimalTransport, MatchedLevelsByDefaultWhereTheLevelsHoldTheWholeMatrix) {
  // The default −1: 3 matched levels where the levels hold the whole matrix (one process, or
  // coupled processes), none for a block Jacobi's blocks; a value ≥ 0 as given (the block
  // Jacobi under MPI: test_transport_mpi.cpp).
  sdot::AggregationOptions options;
  EXPECT_EQ(options.matched_levels, -1);
  EXPECT_EQ(sdot::matched_levels_used(options, true), 3);
  EXPECT_EQ(sdot::matched_levels_used(options, false), 0);
  options.matched_levels = 2;
  EXPECT_EQ(sdot::matched_levels_used(options, true), 2);
  EXPECT_EQ(sdot::matched_levels_used(options, false), 2);
  // The preconditioner of one process's whole Laplacian matches its first level by default.
  using Space = Kokkos::DefaultExecutionSpace;
  auto const c = uniform_cloud(400, 0, 49);
  sdot::PowerDiagram<> pd(positions_view(c), weights_view(c), unit_square());
  auto const jacobian = sdot::measure_jacobian(pd, positions_view(c));
  Space space;
  auto const order = sdot::detail::morton_order(space, sdot::ConstPoints<>(positions_view(c)));
  sdot::AggregationOptions defaults;
  defaults.coarsest_size = 20;
  sdot::detail::MultigridAggregates<Space::memory_space> aggregates;
  sdot::detail::AggregationMultigrid<Space> multigrid(space, jacobian.extended, jacobian.diagonal,
                                                      order, true, defaults, &aggregates);
  ASSERT_FALSE(aggregates.levels.empty());
  EXPECT_FALSE(aggregates.levels.front().consecutive);
}

TEST(OptimalTransport, AggregationCycleKeepsTheAggregatesOfAnEarlierMatrix) {
  // The aggregates computed for one Jacobian (MultigridAggregates) and used for the Jacobian of
  // the same seeds at other weights, as the Newton steps of a solve use the first step's:
  // the same levels, and the cycle of the second matrix on those aggregates, against the
  // reference built the same way; a preconditioner of the first matrix built again from its
  // own aggregates gives the same bits as the first.
  using Space = Kokkos::DefaultExecutionSpace;
  auto c = uniform_cloud(700, 0, 47);
  int const n = static_cast<int>(c.x.size());
  Space space;
  auto const order_view = sdot::detail::morton_order(space, sdot::ConstPoints<>(positions_view(c)));
  auto const order = to_vector(order_view);
  sdot::PowerDiagram<> first(positions_view(c), weights_view(c), unit_square());
  auto const j1 = sdot::measure_jacobian(first, positions_view(c));
  for (int i = 0; i < n; ++i)
    c.w[i] = 3e-3 * (std::sin(9 * c.x[i][0]) + std::cos(5 * c.x[i][1]));
  sdot::PowerDiagram<> second(positions_view(c), weights_view(c), unit_square());
  auto const j2 = sdot::measure_jacobian(second, positions_view(c));
  std::vector<double> r(n);
  for (int i = 0; i < n; ++i)
    r[i] = std::cos(1.3 * i) - 0.4 * std::sin(0.7 * i);
  sdot::AggregationOptions options;
  options.coarsest_size = 20;
  options.matched_levels = 3;
  sdot::detail::MultigridAggregates<Space::memory_space> aggregates;
  auto const apply = [&](auto const& jacobian) {
    sdot::detail::AggregationMultigrid<Space> multigrid(space, jacobian.extended, jacobian.diagonal,
                                                        order_view, true, options, &aggregates);
    Kokkos::View<double*> z("test::z", n);
    multigrid.apply(space, view_of(r), z);
    return std::make_pair(multigrid.levels(), to_vector(z));
  };
  auto const [levels1, z1] = apply(j1); // computes the aggregates
  ASSERT_FALSE(aggregates.empty());
  EXPECT_EQ(static_cast<int>(aggregates.levels.size()) + 1, levels1);
  EXPECT_FALSE(aggregates.levels.front().consecutive); // matched
  auto const [again, z1_again] = apply(j1);
  EXPECT_EQ(again, levels1);
  EXPECT_EQ(z1_again, z1);
  auto const [levels2, z2] = apply(j2);
  ReferenceMultigrid const reference1(host_entries(j1.extended), to_vector(j1.diagonal), order,
                                      options);
  ReferenceMultigrid const reference2(host_entries(j2.extended), to_vector(j2.diagonal), order,
                                      options, &reference1);
  EXPECT_EQ(levels2, reference2.levels());
  auto const expected = reference2.apply(r, order);
  double const scale = largest_magnitude(expected);
  for (int i = 0; i < n; ++i)
    ASSERT_NEAR(z2[i], expected[i], 1e-12 * scale) << "row " << i;
  // Another count of rows: refused by name.
  auto const small = uniform_cloud(300, 0, 48);
  sdot::PowerDiagram<> other(positions_view(small), weights_view(small), unit_square());
  auto const j3 = sdot::measure_jacobian(other, positions_view(small));
  auto const order3 = sdot::detail::morton_order(space, sdot::ConstPoints<>(positions_view(small)));
  EXPECT_THROW(sdot::detail::AggregationMultigrid<Space>(space, j3.extended, j3.diagonal, order3,
                                                         true, options, &aggregates),
               std::invalid_argument);
}
