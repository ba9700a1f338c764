// The power diagram on one device against the brute-force reference.
#include "brute_force.hpp"
#include "clouds.hpp"
#include "reference_cases.hpp"
#include "test_setup.hpp"

#include <sdot/geometry/box_cells.hpp>
#include <sdot/geometry/coarse_to_fine.hpp>
#include <sdot/picture.hpp>
#include <sdot/sdot.hpp>

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <functional>
#include <iterator>
#include <limits>
#include <numeric>
#include <random>
#include <string>

#include <unistd.h>

using namespace sdot_test;

namespace {

std::vector<sdot::HalfSpace> triangle() {
  // (0,0), (1,0), (0.3,0.9)
  return {{{0, -1}, 0}, {{0.9, 0.7}, 0.9}, {{-0.9, 0.3}, 0}};
}

std::vector<sdot::HalfSpace> hexagon() {
  std::vector<sdot::HalfSpace> h;
  double const pi = std::acos(-1.0);
  for (int k = 0; k < 6; ++k) {
    double a = k * pi / 3;
    h.push_back({{std::cos(a), std::sin(a)}, 0.95});
  }
  return h;
}

double domain_area(std::vector<sdot::HalfSpace> const& hs) {
  return static_cast<double>(area(domain(hs)));
}

struct Result {
  std::vector<double> measures;
  std::vector<std::array<double, 2>> centroids;
  sdot::PowerDiagramStatistics statistics;
};

Result compute(Cloud const& c, std::vector<sdot::HalfSpace> const& hs,
               sdot::PowerDiagramOptions options = {}) {
  sdot::PowerDiagram<> pd(positions_view(c), weights_view(c), hs, options);
  Result r;
  r.measures = to_vector(pd.measures());
  auto cent = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), pd.centroids());
  for (std::size_t i = 0; i < cent.extent(0); ++i)
    r.centroids.push_back({cent(i, 0), cent(i, 1)});
  r.statistics = pd.statistics();
  return r;
}

void expect_matches_reference(Cloud const& c, std::vector<sdot::HalfSpace> const& hs,
                              sdot::PowerDiagramOptions options = {}) {
  auto const ref = brute_force(c.x, c.w, hs);
  auto const got = compute(c, hs, options);
  double const a = domain_area(hs);
  ASSERT_EQ(got.measures.size(), c.x.size());
  double sum = 0;
  for (std::size_t i = 0; i < c.x.size(); ++i) {
    EXPECT_NEAR(got.measures[i], ref.measures[i], 1e-12 * a) << "seed " << i;
    if (ref.measures[i] > 1e-9 * a) {
      double tol = 1e-12 * a / ref.measures[i] + 1e-12;
      EXPECT_NEAR(got.centroids[i][0], ref.centroids[i][0], tol) << "seed " << i;
      EXPECT_NEAR(got.centroids[i][1], ref.centroids[i][1], tol) << "seed " << i;
    }
    sum += got.measures[i];
  }
  EXPECT_NEAR(sum, a, 1e-12 * a);
}

} // namespace

TEST(PowerDiagram, UniformZeroWeights) {
  expect_matches_reference(uniform_cloud(300, 0, 1), unit_square());
}

TEST(PowerDiagram, UniformSmallWeights) {
  expect_matches_reference(uniform_cloud(300, 1.0 / 300, 2), unit_square());
}

TEST(PowerDiagram, UniformLargeWeightsManyEmptyCells) {
  auto c = uniform_cloud(300, 10.0 / 300, 3);
  auto ref = brute_force(c.x, c.w, unit_square());
  int empty = 0;
  for (double m : ref.measures)
    empty += m == 0;
  EXPECT_GT(empty, 10); // the case is what it says
  expect_matches_reference(c, unit_square());
}

TEST(PowerDiagram, Clusters) {
  expect_matches_reference(clustered_cloud(400, 4), unit_square());
}

TEST(PowerDiagram, LatticeCoCircular) {
  auto c = lattice_cloud(12);
  expect_matches_reference(c, unit_square());
  auto got = compute(c, unit_square());
  for (double m : got.measures)
    EXPECT_NEAR(m, 1.0 / 144, 1e-15);
}

TEST(PowerDiagram, SeedsOutsideTheDomain) {
  auto c = uniform_cloud(200, 0.01, 5, -0.5, 1.5);
  expect_matches_reference(c, unit_square());
}

TEST(PowerDiagram, NegativeWeights) {
  auto c = uniform_cloud(200, 0, 6);
  std::mt19937 rng(6);
  std::uniform_real_distribution<double> u(-0.02, 0.0);
  for (auto& w : c.w)
    w = u(rng);
  expect_matches_reference(c, unit_square());
}

TEST(PowerDiagram, HugeWeightsAndOffsetCoordinates) {
  // Weights far larger than the domain, and a domain far from the origin.
  auto c = uniform_cloud(150, 0, 7, 1000, 1001);
  std::mt19937 rng(7);
  std::uniform_real_distribution<double> u(1e6, 1e6 + 0.01);
  for (auto& w : c.w)
    w = u(rng);
  expect_matches_reference(c, sdot::box_half_spaces({1000, 1000}, {1001, 1001}));
}

TEST(PowerDiagram, TriangleDomain) {
  expect_matches_reference(uniform_cloud(200, 0.002, 8), triangle());
}

TEST(PowerDiagram, HexagonDomain) {
  expect_matches_reference(uniform_cloud(200, 0.002, 9, -1, 1), hexagon());
}

TEST(PowerDiagram, NoSeed) {
  auto got = compute(Cloud{}, unit_square());
  EXPECT_TRUE(got.measures.empty());
}

TEST(PowerDiagram, OneSeed) {
  Cloud c{{{0.3, 0.4}}, {0.5}};
  auto got = compute(c, unit_square());
  ASSERT_EQ(got.measures.size(), 1u);
  EXPECT_NEAR(got.measures[0], 1.0, 1e-15);
  EXPECT_NEAR(got.centroids[0][0], 0.5, 1e-15);
}

TEST(PowerDiagram, TwoSeeds) {
  Cloud c{{{0.25, 0.5}, {0.75, 0.5}}, {0, 0}};
  auto got = compute(c, unit_square());
  EXPECT_NEAR(got.measures[0], 0.5, 1e-15);
  EXPECT_NEAR(got.measures[1], 0.5, 1e-15);
  // A weight difference moves the bisector: x = 0.5 + (w0 − w1) / (2·0.5).
  c.w = {0.1, 0};
  got = compute(c, unit_square());
  EXPECT_NEAR(got.measures[0], 0.6, 1e-14);
  EXPECT_NEAR(got.measures[1], 0.4, 1e-14);
}

TEST(PowerDiagram, DuplicatesLowerIndexKeepsTheCell) {
  auto c = uniform_cloud(100, 0.001, 10);
  c.x.push_back(c.x[17]);
  c.w.push_back(c.w[17]);
  c.x.insert(c.x.begin() + 3, c.x[50]);
  c.w.insert(c.w.begin() + 3, c.w[50]);
  // seed 51 duplicates seed 3; seed 101 duplicates seed 18
  auto got = compute(c, unit_square());
  EXPECT_GT(got.measures[3], 0);
  EXPECT_EQ(got.measures[51], 0);
  EXPECT_GT(got.measures[18], 0);
  EXPECT_EQ(got.measures[101], 0);
  expect_matches_reference(c, unit_square());
}

TEST(PowerDiagram, BlocksOfCoincidentSeeds) {
  // More coincident seeds than a block of the index holds: blocks with a zero-size grid.
  auto c = uniform_cloud(300, 0.001, 14);
  for (int k = 0; k < 4000; ++k) {
    c.x.push_back({0.25, 0.75});
    c.w.push_back(0.0005);
  }
  auto got = compute(c, unit_square());
  EXPECT_GT(got.measures[300], 0);
  for (std::size_t i = 301; i < c.x.size(); ++i)
    ASSERT_EQ(got.measures[i], 0) << "seed " << i;
  expect_matches_reference(c, unit_square());
}

TEST(PowerDiagram, CellsBeyondTheVertexCapacityAreRebuilt) {
  // One huge weight: its cell is the domain minus small cells, with many vertices.
  auto c = uniform_cloud(400, 0, 11);
  c.x[0] = {0.5, 0.5};
  c.w[0] = 0.18;
  sdot::PowerDiagramOptions options;
  options.vertex_capacity = 8;
  auto got = compute(c, unit_square(), options);
  EXPECT_GT(got.statistics.overflowed_cells, 0);
  EXPECT_GE(got.statistics.vertex_reruns, 2);
  expect_matches_reference(c, unit_square(), options);
}

TEST(PowerDiagram, SumOfMeasuresOnALargerCloud) {
  for (int leaf : {2, 8, 32}) {
    auto c = uniform_cloud(20000, 1.0 / 20000, 12);
    sdot::PowerDiagramOptions options;
    options.leaf_size = leaf;
    auto got = compute(c, unit_square(), options);
    double sum = std::accumulate(got.measures.begin(), got.measures.end(), 0.0);
    EXPECT_NEAR(sum, 1.0, 1e-12) << "leaf size " << leaf;
  }
}

namespace {

/// The blocks of the index of a cloud: how many, how many finest blocks (about 256 seeds
/// each), and how many of its blocks are finest ones.
struct BlockCounts {
  int blocks, finest, finest_kept;
  bool operator==(BlockCounts const& o) const {
    return blocks == o.blocks && finest == o.finest && finest_kept == o.finest_kept;
  }
};

BlockCounts block_counts(Cloud const& c) {
  using Space = Kokkos::DefaultExecutionSpace;
  auto const tree = sdot::detail::build_seed_tree<Space, Space::memory_space>(
      Space(), sdot::ConstPoints<>(positions_view(c)), Kokkos::View<double const*>(weights_view(c)),
      8);
  auto const blocks = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), tree.blocks);
  BlockCounts counts{static_cast<int>(blocks.extent(0)), 1 << tree.finest_block_level, 0};
  for (int b = 0; b < counts.blocks; ++b)
    counts.finest_kept += sdot::detail::node_level(blocks(b).node) == tree.finest_block_level;
  return counts;
}

} // namespace

TEST(PowerDiagram, LargerBlocksOnlyWhereTheSeedsAreEven) {
  // Uniform positions: one block of all the finest ones, whatever the weights.
  auto const uniform = uniform_cloud(20000, 1.0 / 20000, 31);
  auto const counts = block_counts(uniform);
  EXPECT_EQ(counts.blocks, 1);
  EXPECT_GT(counts.finest, 1);
  EXPECT_EQ(block_counts(with_spread_weights(uniform)), counts);
  // Clusters: the finest blocks in the clusters, larger ones only in the even background.
  auto const clusters = block_counts(clustered_cloud(20000, 32));
  EXPECT_GT(clusters.blocks, 1);
  EXPECT_GT(clusters.finest_kept, 0);
  EXPECT_LT(clusters.blocks, clusters.finest);
}

TEST(PowerDiagram, LargerBlocksMatchTheReference) {
  // 3000 seeds: the finest blocks hold about 190, the one picked all of them, so the near
  // cells of a seed reach past the finest blocks' borders; weights of small range, and spread
  // with a trend (bounded per row span of the one large grid).
  auto const c = uniform_cloud(3000, 1.0 / 3000, 34);
  EXPECT_EQ(block_counts(c).blocks, 1);
  EXPECT_EQ(block_counts(c).finest, 16);
  for (auto const& weighted : {c, with_spread_weights(c)})
    expect_matches_reference(weighted, unit_square());
}

TEST(PowerDiagram, BlocksOfSeveralSizesMatchTheReference) {
  // Two Gaussian clusters and a uniform background: finest blocks in the clusters, larger
  // ones around them, each with its own grid; cells across the borders of blocks of
  // different sizes.
  Cloud c = uniform_cloud(1500, 0, 37);
  std::mt19937_64 rng(38);
  std::normal_distribution<double> g(0, 0.03);
  for (int i = 0; i < 1500; ++i) {
    double const cx = i % 2 ? 0.3 : 0.7, cy = i % 2 ? 0.35 : 0.6;
    c.x.push_back(
        {std::fmin(1, std::fmax(0, cx + g(rng))), std::fmin(1, std::fmax(0, cy + g(rng)))});
    c.w.push_back(0);
  }
  auto const counts = block_counts(c);
  ASSERT_GT(counts.finest_kept, 0);
  ASSERT_LT(counts.finest_kept, counts.blocks);
  for (auto const& weighted : {c, with_spread_weights(c)})
    expect_matches_reference(weighted, unit_square());
}

TEST(PowerDiagram, CellsAroundHolesMatchTheReference) {
  // Uniform seeds with holes of 1 to 4 grid steps: the cells around a hole reach past the near
  // grid cells of their seed (whose walk may stop early, in the order of the seed's part of its
  // grid cell), while cells beyond them can still cut; with zero and with spread weights.
  auto const full = uniform_cloud(3000, 1.0 / 3000, 35);
  double const h = 1 / std::sqrt(3000.0);
  std::mt19937_64 rng(36);
  std::uniform_real_distribution<double> u(0.1, 0.9), radius(1 * h, 4 * h);
  std::vector<std::array<double, 3>> holes(40);
  for (auto& hole : holes)
    hole = {u(rng), u(rng), radius(rng)};
  Cloud c;
  for (std::size_t i = 0; i < full.x.size(); ++i) {
    bool inside = false;
    for (auto const& hole : holes)
      inside |= std::hypot(full.x[i][0] - hole[0], full.x[i][1] - hole[1]) < hole[2];
    if (!inside) {
      c.x.push_back(full.x[i]);
      c.w.push_back(0);
    }
  }
  ASSERT_GT(c.x.size(), 2000u);
  ASSERT_LT(c.x.size(), 2800u);
  expect_matches_reference(c, unit_square());
  expect_matches_reference(with_spread_weights(c), unit_square());
}

TEST(PowerDiagram, CellsFarFromTheirSeedsMatchTheReference) {
  // Weights that trend as optimal transport's (with_displacing_weights): cells far from their
  // seeds, a cluster spread over the domain, many empty cells; blocks of several sizes.
  for (double beta : {3.0, 9.0, 40.0}) {
    auto const c =
        with_displacing_weights(clustered_cloud(3000, 61), {0.7, 0.75}, beta, {-0.1, 0.05}, 62);
    SCOPED_TRACE("beta " + std::to_string(beta));
    expect_matches_reference(c, unit_square());
  }
  // A seed whose cell holds most of the domain, among displaced cells.
  auto c = displaced_cells_cloud(2000, 63);
  c.w[5] += 0.5;
  expect_matches_reference(c, unit_square());
}

TEST(PowerDiagram, CellsFarFromTheirSeedsAtNewWeights) {
  // set_weights from zero weights to displacing ones and back: the index's bounds follow.
  auto const c = displaced_cells_cloud(2000, 64);
  Cloud zero = c;
  for (auto& w : zero.w)
    w = 0;
  sdot::PowerDiagram<> pd(positions_view(c), weights_view(zero), unit_square());
  pd.measures();
  pd.set_weights(weights_view(c));
  auto const ref = brute_force(c.x, c.w, unit_square());
  auto const got = to_vector(pd.measures());
  for (std::size_t i = 0; i < c.x.size(); ++i)
    EXPECT_NEAR(got[i], ref.measures[i], 1e-12) << "seed " << i;
}

TEST(PowerDiagram, Deterministic) {
  auto c = clustered_cloud(5000, 13);
  auto a = compute(c, unit_square());
  auto b = compute(c, unit_square());
  for (std::size_t i = 0; i < a.measures.size(); ++i)
    ASSERT_EQ(a.measures[i], b.measures[i]) << "seed " << i;
}

namespace {

/// Options that build every cell from coarser diagrams, down to `coarsest` seeds.
sdot::PowerDiagramOptions coarse_to_fine(int coarsest) {
  sdot::PowerDiagramOptions options;
  options.coarse_to_fine = sdot::CoarseToFine::always;
  options.coarsest_level_seeds = coarsest;
  return options;
}

} // namespace

TEST(PowerDiagram, CoarseToFineMatchesTheReferenceOnTheHardCases) {
  // Uniform, weighted, many empty cells, clusters, cells far from their seeds, a lattice, seeds
  // outside, negative weights, a triangle and a hexagon, 0, 1 and 2 seeds, duplicates: from one
  // level (the coarsest searched) to five.
  for (auto const& rc : reference_cases()) {
    if (rc.cloud.x.empty()) // no cell to build
      continue;
    for (int coarsest : {4096, 64, 2}) {
      SCOPED_TRACE(rc.name + ", coarsest " + std::to_string(coarsest));
      expect_matches_reference(rc.cloud, rc.domain, coarse_to_fine(coarsest));
    }
  }
}

TEST(PowerDiagram, CoarseToFineMatchesTheReferenceFarFromTheSeeds) {
  // Weights that trend as optimal transport's: cells many spacings from their seeds, a cluster
  // spread over the domain, many empty cells; weights spanning 1e3 times the squared spacing;
  // a seed whose cell holds most of the domain; huge weights.
  for (double beta : {3.0, 9.0, 40.0}) {
    auto const c =
        with_displacing_weights(clustered_cloud(3000, 61), {0.7, 0.75}, beta, {-0.1, 0.05}, 62);
    SCOPED_TRACE("beta " + std::to_string(beta));
    expect_matches_reference(c, unit_square(), coarse_to_fine(64));
  }
  auto spread = uniform_cloud(2000, 1000.0 / 2000, 65);
  expect_matches_reference(spread, unit_square(), coarse_to_fine(32));
  auto big = displaced_cells_cloud(2000, 63);
  big.w[5] += 0.5;
  expect_matches_reference(big, unit_square(), coarse_to_fine(32));
  auto huge = clustered_cloud(1500, 66);
  for (std::size_t i = 0; i < huge.w.size(); ++i)
    huge.w[i] = 1e6 + 0.01 * std::sin(37.0 * i);
  expect_matches_reference(huge, hexagon(), coarse_to_fine(16));
}

TEST(PowerDiagram, CoarseToFineGuessesNearlyEveryCell) {
  // The guess from the coarser diagrams, not the search behind it, builds the cells: at
  // weights that move the cells far from their seeds as at zero weights, nearly every cell is
  // certified from its candidates, over several levels.
  auto const far = displaced_cells_cloud(4000, 67);
  auto zero = far;
  for (auto& w : zero.w)
    w = 0;
  for (Cloud const* c : {&far, static_cast<Cloud const*>(&zero)}) {
    auto const got = compute(*c, unit_square(), coarse_to_fine(64));
    EXPECT_GE(got.statistics.coarse_levels, 3);
    // Empty cells that the candidates do not empty go to the search.
    auto const non_empty =
        std::count_if(got.measures.begin(), got.measures.end(), [](double m) { return m > 0; });
    EXPECT_GT(non_empty, 500);
    EXPECT_GT(got.statistics.warm_cells, 0.98 * non_empty);
  }
  // The search alone: no level, no cell from candidates.
  sdot::PowerDiagramOptions never;
  never.coarse_to_fine = sdot::CoarseToFine::never;
  auto const searched = compute(far, unit_square(), never);
  EXPECT_EQ(searched.statistics.coarse_levels, 0);
  EXPECT_EQ(searched.statistics.warm_cells, 0);
}

TEST(PowerDiagram, CoarseToFineFindsEmptyCellsEmpty) {
  // Where most cells are empty, the seeds whose cells are empty are located too (their walks
  // start where the seeds about them along the index are), and every cell is built without the
  // search: emptied by the owners of its coarser vertex (HiddenOnDomainOnlyWhereTheCellIsEmpty)
  // or by its candidates. Weights spanning 1e3 times the squared spacing, and a checkerboard
  // lattice whose lighter seeds lose their cells (four cells meeting at each vertex): their
  // cells a point (c = 1), empty by a hair (c = 1 + 1e-9), and empty (c = 1.5, 2), those at the
  // corners not.
  auto const spread = uniform_cloud(2000, 1000.0 / 2000, 71);
  expect_matches_reference(spread, unit_square(), coarse_to_fine(64));
  auto const got = compute(spread, unit_square(), coarse_to_fine(64));
  auto const empty =
      std::count_if(got.measures.begin(), got.measures.end(), [](double m) { return m == 0; });
  EXPECT_GT(empty, 1000);
  EXPECT_GE(got.statistics.coarse_levels, 3);
  EXPECT_GT(got.statistics.warm_cells, 0.98 * 2000); // the empty ones too
  int const k = 40;
  double const h = 1.0 / k;
  for (double c : {1.0, 1 + 1e-9, 1.5, 2.0}) {
    auto board = lattice_cloud(k);
    for (int j = 0; j < k; ++j)
      for (int i = 0; i < k; ++i)
        if ((i + j) % 2 == 1)
          board.w[std::size_t(j * k + i)] = -c * h * h;
    SCOPED_TRACE("c " + std::to_string(c));
    expect_matches_reference(board, unit_square(), coarse_to_fine(64));
    if (c == 2.0)
      EXPECT_GT(compute(board, unit_square(), coarse_to_fine(64)).statistics.warm_cells,
                0.9 * k * k);
  }
}

TEST(PowerDiagram, HiddenOnDomainOnlyWhereTheCellIsEmpty) {
  // The test behind the empty cells of coarse_to_fine, against the cell of `me` among the
  // seeds (the unit square clipped by their bisectors, in long double): whenever it says
  // hidden, that cell is empty, with any multipliers; with the barycentric weights of x_me in
  // the seeds' triangle it says hidden wherever the lifted point of `me` lies above their plane
  // by more than rounding; and with the weights normal to a side, it finds seeds hidden on the
  // square only.
  std::mt19937_64 rng(73);
  std::uniform_real_distribution<double> position(-0.3, 1.3), offset(-0.4, 0.4),
      weight(-0.05, 0.05), unit(0, 1);
  Kokkos::View<double* [2], Kokkos::HostSpace> square("test::square", 4);
  double const corners[4][2] = {{0, 0}, {1, 0}, {1, 1}, {0, 1}};
  for (int v = 0; v < 4; ++v)
    for (int d = 0; d < 2; ++d)
      square(v, d) = corners[v][d];
  auto const cell_area = [](sdot::detail::Seed const* by, int count, sdot::detail::Seed me) {
    std::vector<Vertex> cell = {{0, 0}, {1, 0}, {1, 1}, {0, 1}};
    for (int i = 0; i < count; ++i) {
      // pow_me ≤ pow_i: 2 (x_i − x_me) · p ≤ |x_i|² − w_i − |x_me|² + w_me
      Real const ax = 2 * (Real(by[i].x) - me.x), ay = 2 * (Real(by[i].y) - me.y);
      Real const b = Real(by[i].x) * by[i].x + Real(by[i].y) * by[i].y - by[i].w -
                     (Real(me.x) * me.x + Real(me.y) * me.y - me.w);
      cell = clip(cell, ax, ay, b);
    }
    return cell.size() < 3 ? Real(0) : area(cell);
  };
  int hidden_inside = 0, hidden_on_side = 0, above_plane = 0;
  for (int trial = 0; trial < 20000; ++trial) {
    // Seeds about `me`, lighter than them by up to 0.2 (the square of 0.45).
    sdot::detail::Seed by[3], me{position(rng), position(rng), weight(rng) - 0.2 * unit(rng)};
    for (auto& seed : by)
      seed = {me.x + offset(rng), me.y + offset(rng), weight(rng)};
    // Barycentric weights (twice the signed areas), made ≥ 0 where x_me is inside.
    double mu[3];
    for (int i = 0; i < 3; ++i) {
      auto const& a = by[(i + 1) % 3];
      auto const& b = by[(i + 2) % 3];
      mu[i] = (a.x - me.x) * (b.y - me.y) - (a.y - me.y) * (b.x - me.x);
    }
    double const sign = mu[0] + mu[1] + mu[2] >= 0 ? 1.0 : -1.0;
    for (double& m : mu)
      m *= sign;
    bool const inside = mu[0] >= 0 && mu[1] >= 0 && mu[2] >= 0;
    bool const hidden = sdot::detail::hidden_on_domain(by, mu, 3, me, square);
    if (hidden)
      EXPECT_EQ(cell_area(by, 3, me), 0) << "trial " << trial;
    hidden_inside += hidden;
    EXPECT_TRUE(!hidden || inside) << "trial " << trial;
    if (inside) {
      // Above the plane through the lifted seeds at x_me, by the same weights, in long double.
      Real plane = 0, total = 0;
      for (int i = 0; i < 3; ++i) {
        plane += mu[i] * (Real(by[i].x) * by[i].x + Real(by[i].y) * by[i].y - by[i].w);
        total += mu[i];
      }
      Real const lifted = Real(me.x) * me.x + Real(me.y) * me.y - me.w;
      Real const excess = lifted - plane / total;
      above_plane += excess > 1e-6;
      if (excess > 1e-6 && total > 1e-6)
        EXPECT_TRUE(hidden) << "trial " << trial;
    }
    // Two seeds, weights normal to the side y = 0 (Σ μ_i y_i along −y or +y), or random ones.
    double side[3] = {by[1].x - me.x, -(by[0].x - me.x), 0};
    double const side_sign = side[0] + side[1] >= 0 ? 1.0 : -1.0;
    side[0] *= side_sign;
    side[1] *= side_sign;
    if (sdot::detail::hidden_on_domain(by, side, 2, me, square)) {
      EXPECT_EQ(cell_area(by, 2, me), 0) << "trial " << trial;
      ++hidden_on_side;
    }
    double any[3] = {unit(rng), unit(rng), unit(rng)};
    if (sdot::detail::hidden_on_domain(by, any, 3, me, square))
      EXPECT_EQ(cell_area(by, 3, me), 0) << "trial " << trial;
  }
  EXPECT_GT(above_plane, 500);
  EXPECT_GT(hidden_inside, 500);
  EXPECT_GT(hidden_on_side, 50);
}

TEST(PowerDiagram, CoarseToFineWhereMostCellsLieFarFromTheirSeeds) {
  // automatic: from coarser diagrams at weights that move most cells away from their seeds,
  // by the search at zero weights and at weights that move few.
  auto const far = displaced_cells_cloud(4000, 68);
  auto zero = far;
  for (auto& w : zero.w)
    w = 0;
  sdot::PowerDiagramOptions automatic;
  automatic.coarsest_level_seeds = 256;
  EXPECT_GT(compute(far, unit_square(), automatic).statistics.coarse_levels, 0);
  EXPECT_EQ(compute(zero, unit_square(), automatic).statistics.coarse_levels, 0);
  EXPECT_EQ(compute(uniform_cloud(4000, 1.0 / 4000, 69), unit_square(), automatic)
                .statistics.coarse_levels,
            0);
}

TEST(PowerDiagram, CoarseToFineIsDeterministicAndAbandons) {
  auto const c = displaced_cells_cloud(3000, 69);
  auto const a = compute(c, unit_square(), coarse_to_fine(64));
  auto const b = compute(c, unit_square(), coarse_to_fine(64));
  for (std::size_t i = 0; i < a.measures.size(); ++i)
    ASSERT_EQ(a.measures[i], b.measures[i]) << "seed " << i;
  // With same_bits, the same bits as the search.
  auto options = coarse_to_fine(64);
  options.same_bits = true;
  auto const canonical = compute(c, unit_square(), options);
  options.coarse_to_fine = sdot::CoarseToFine::never;
  auto const searched = compute(c, unit_square(), options);
  for (std::size_t i = 0; i < c.x.size(); ++i) {
    ASSERT_EQ(canonical.measures[i], searched.measures[i]) << "seed " << i;
    ASSERT_EQ(canonical.centroids[i], searched.centroids[i]) << "seed " << i;
  }
  // abandon_below: given up when a cell is below, complete otherwise.
  double smallest = INFINITY;
  for (double m : a.measures)
    smallest = m > 0 ? std::min(smallest, m) : smallest;
  options = coarse_to_fine(64);
  options.abandon_below = 0.5 * smallest;
  EXPECT_TRUE(compute(c, unit_square(), options).statistics.abandoned); // empty cells
  auto no_empty = uniform_cloud(3000, 0, 70);
  auto const full = compute(no_empty, unit_square(), coarse_to_fine(64));
  smallest = *std::min_element(full.measures.begin(), full.measures.end());
  options.abandon_below = 0.5 * smallest;
  auto const kept = compute(no_empty, unit_square(), options);
  EXPECT_FALSE(kept.statistics.abandoned);
  EXPECT_EQ(kept.measures, full.measures);
  options.abandon_below = 2 * smallest;
  EXPECT_TRUE(compute(no_empty, unit_square(), options).statistics.abandoned);
}

TEST(PowerDiagram, CoarseToFineThenWarmStart) {
  // A first computation from coarser diagrams, then warm starts from its neighbours.
  auto const c = clustered_cloud(2500, 71);
  sdot::PowerDiagramOptions options = coarse_to_fine(64);
  options.warm_start = true;
  auto d = with_displacing_weights(c, {0.3, 0.35}, 9.0, {0.05, -0.02}, 72);
  sdot::PowerDiagram<> pd(positions_view(d), weights_view(d), unit_square(), options);
  pd.measures();
  EXPECT_GT(pd.statistics().coarse_levels, 0);
  for (double beta : {9.0, 9.01, 3.0}) {
    d = with_displacing_weights(c, {0.3, 0.35}, beta, {0.05, -0.02}, 72);
    pd.set_weights(weights_view(d));
    auto const got = to_vector(pd.measures());
    auto const ref = brute_force(d.x, d.w, unit_square());
    for (std::size_t i = 0; i < d.x.size(); ++i)
      ASSERT_NEAR(got[i], ref.measures[i], 1e-12) << "beta " << beta << ", seed " << i;
    EXPECT_EQ(pd.statistics().coarse_levels, 0); // the earlier neighbours instead
  }
}

TEST(PowerDiagram, OneBoxCellsFollowTheirOptions) {
  // build_one_box_cells, which builds one box's diagram and each box's first-round cells of
  // several ranks: by the search, from the earlier neighbours, from coarser diagrams, or (without
  // search_uncertified) nothing where nothing was certified; the neighbour graph kept only from
  // a complete computation; the index's weight bounds asked for before any search.
  using Space = Kokkos::DefaultExecutionSpace;
  using Memory = Space::memory_space;
  Space const space;
  auto const c = clustered_cloud(1000, 74);
  auto const far = with_spread_weights(c); // cells away from their seeds, few empty
  Cloud nearby = far;
  for (double& w : nearby.w)
    w *= 1.01;
  int const n = static_cast<int>(c.x.size());
  auto tree = sdot::detail::build_seed_tree<Space, Memory>(
      space, sdot::ConstPoints<>(positions_view(far)),
      Kokkos::View<double const*>(weights_view(far)), 8);
  Kokkos::View<double* [2], sdot::points_layout<Memory>, Memory> domain("domain", 4);
  Kokkos::View<int*, Memory> domain_labels("domain_labels", 4);
  auto domain_host = Kokkos::create_mirror_view(domain);
  auto labels_host = Kokkos::create_mirror_view(domain_labels);
  double const corners[4][2] = {{0, 0}, {1, 0}, {1, 1}, {0, 1}};
  for (int v = 0; v < 4; ++v) {
    domain_host(v, 0) = corners[v][0];
    domain_host(v, 1) = corners[v][1];
    labels_host(v) = sdot::detail::boundary_label(v);
  }
  Kokkos::deep_copy(domain, domain_host);
  Kokkos::deep_copy(domain_labels, labels_host);
  auto const slot_of = sdot::detail::slot_of_index(space, tree);
  bool stale = false; // the index's weight bounds are those of earlier weights
  int asked = 0;      // calls for the bounds
  std::function<void()> const weight_bounds = [&] {
    ++asked;
    if (stale)
      sdot::detail::compute_weight_bounds(space, tree);
    stale = false;
  };
  std::vector<double> measures;
  auto run = [&](sdot::detail::BoxCellsOptions const& options,
                 sdot::detail::NeighbourGraph<Memory>& graph, double abandon_below) {
    auto const out = sdot::detail::allocate_cell_outputs(space, n, "test::");
    sdot::detail::SlotPolygons<Memory> kept;
    sdot::detail::AbandonBelow<Memory> abandon;
    if (abandon_below > 0) {
      abandon.raised = Kokkos::View<int, Memory>("test::abandon");
      abandon.below = abandon_below;
    }
    auto const report = sdot::detail::build_one_box_cells(
        space, tree, sdot::ConstPoints<Memory>(domain),
        Kokkos::View<int const*, Memory>(domain_labels), options, out, kept, graph,
        Kokkos::View<int const*, Memory>(slot_of), abandon, weight_bounds);
    measures = to_vector(out.measures);
    if (!report.built)
      EXPECT_EQ(kept.capacity, 0);
    return report;
  };
  auto expect_reference = [&](Cloud const& at) {
    auto const ref = brute_force(at.x, at.w, unit_square());
    for (int i = 0; i < n; ++i)
      ASSERT_NEAR(measures[i], ref.measures[i], 1e-12) << "seed " << i;
  };
  sdot::detail::BoxCellsOptions options;
  options.leaf_size = 8;
  options.domain_area = 1;
  options.domain_length = std::sqrt(2.0);
  options.coarse.never = true;
  options.warm_start = true;
  sdot::detail::NeighbourGraph<Memory> graph;
  // Nothing certified and no search asked for: nothing built, no graph.
  options.search_uncertified = false;
  auto report = run(options, graph, 0);
  EXPECT_FALSE(report.built);
  EXPECT_TRUE(graph.empty());
  // The search, keeping the polygons and the graph.
  options.search_uncertified = true;
  report = run(options, graph, 0);
  EXPECT_TRUE(report.built);
  EXPECT_EQ(report.warm_cells, 0);
  EXPECT_GT(asked, 0);
  EXPECT_FALSE(graph.empty());
  expect_reference(far);
  // New weights without their bounds: from the earlier neighbours, certified.
  sdot::detail::set_seed_weights(space, tree,
                                 Kokkos::View<double const*, Memory>(weights_view(nearby)));
  stale = true;
  auto const earlier = graph.offsets;
  report = run(options, graph, 0);
  EXPECT_TRUE(report.built);
  EXPECT_GT(report.warm_cells, n / 2);
  EXPECT_EQ(report.coarse_levels, 0);
  EXPECT_NE(graph.offsets.data(), earlier.data()); // this computation's graph
  expect_reference(nearby);
  // Given up (every cell is below the threshold): the graph of the last complete one kept.
  auto const complete = graph.offsets;
  report = run(options, graph, 1.0);
  EXPECT_TRUE(report.cells.abandoned);
  EXPECT_EQ(graph.offsets.data(), complete.data());
  // From coarser diagrams, without the search: built where certified, with coarser levels,
  // and no graph without warm_start.
  sdot::detail::NeighbourGraph<Memory> none;
  options.warm_start = false;
  options.search_uncertified = false;
  options.coarse = sdot::detail::CoarseToFineChoice{true, false, 64};
  report = run(options, none, 0);
  EXPECT_GT(report.coarse_levels, 0);
  EXPECT_TRUE(report.built);
  EXPECT_GT(report.warm_cells, n / 2);
  EXPECT_TRUE(none.empty());
  expect_reference(nearby);
}

TEST(PowerDiagram, CoarseToFineOptionsAreChecked) {
  auto const c = uniform_cloud(50, 0, 73);
  auto options = coarse_to_fine(0);
  try {
    sdot::PowerDiagram<>(positions_view(c), weights_view(c), unit_square(), options);
    ADD_FAILURE() << "no exception";
  } catch (std::invalid_argument const& e) {
    EXPECT_NE(std::string(e.what()).find("coarsest_level_seeds = 0"), std::string::npos)
        << e.what();
  }
}

TEST(PowerDiagram, AbandonBelowGivesUpOnlyWhenACellIsBelow) {
  // Weights U[0, 10/N]: many empty cells, so any positive threshold is met by some cell.
  auto c = uniform_cloud(3000, 10.0 / 3000, 21);
  auto const full = compute(c, unit_square());
  double const smallest = *std::min_element(full.measures.begin(), full.measures.end());
  for (bool keep : {false, true}) {
    sdot::PowerDiagramOptions options;
    options.keep_polygons = keep;
    // At the smallest measure: no cell is below, nothing is given up, the same bits.
    options.abandon_below = smallest;
    sdot::PowerDiagram<> kept(positions_view(c), weights_view(c), unit_square(), options);
    auto const m = to_vector(kept.measures());
    EXPECT_FALSE(kept.statistics().abandoned) << "keep_polygons " << keep;
    for (std::size_t i = 0; i < m.size(); ++i)
      ASSERT_EQ(m[i], full.measures[i]) << "seed " << i << ", keep_polygons " << keep;
    EXPECT_NO_THROW(kept.cell_polygons());
    // Above it: given up, and the polygons are refused.
    options.abandon_below = 1e-6;
    sdot::PowerDiagram<> given_up(positions_view(c), weights_view(c), unit_square(), options);
    given_up.measures();
    EXPECT_TRUE(given_up.statistics().abandoned) << "keep_polygons " << keep;
    EXPECT_THROW(given_up.cell_polygons(), std::logic_error);
  }
}

TEST(PowerDiagram, NewWeightsGiveWhatANewDiagramGives) {
  // set_weights() keeps the spatial index (one box) or rebuilds the boxes (several): the
  // measures and kept polygons must be those of a new diagram, bit for bit.
  // Also on larger blocks (uniform seeds), from even weights to spread ones and back.
  auto const clusters = clustered_cloud(4000, 22);
  auto spread_clusters = clusters;
  for (std::size_t i = 0; i < spread_clusters.w.size(); ++i)
    spread_clusters.w[i] = (i % 7) * 3e-4 - 1e-3 * std::sin(double(i)); // some negative
  auto const even = uniform_cloud(5000, 0, 23);
  auto const spread = with_spread_weights(even);
  ASSERT_LT(block_counts(even).blocks, block_counts(even).finest);
  for (auto const& [c, d] :
       {std::pair{clusters, spread_clusters}, std::pair{even, spread}, std::pair{spread, even}})
    for (int boxes : {1, 3}) {
      sdot::PowerDiagramOptions options;
      options.nb_boxes = boxes;
      options.keep_polygons = true;
      sdot::PowerDiagram<> reused(positions_view(c), weights_view(c), unit_square(), options);
      reused.measures();
      reused.set_weights(weights_view(d));
      sdot::PowerDiagram<> fresh(positions_view(c), weights_view(d), unit_square(), options);
      auto const a = to_vector(reused.measures()), b = to_vector(fresh.measures());
      for (std::size_t i = 0; i < a.size(); ++i)
        ASSERT_EQ(a[i], b[i]) << "seed " << i << ", " << boxes << " boxes";
      auto const pa = reused.cell_polygons(), pb = fresh.cell_polygons();
      EXPECT_EQ(to_vector(pa.edge_sources), to_vector(pb.edge_sources)) << boxes << " boxes";
      // And a bad weight is refused, naming it, without changing the diagram.
      auto bad = d;
      bad.w[17] = std::nan("");
      EXPECT_THROW(
          {
            try {
              reused.set_weights(weights_view(bad));
            } catch (std::invalid_argument const& e) {
              EXPECT_NE(std::string(e.what()).find("17"), std::string::npos) << e.what();
              throw;
            }
          },
          std::invalid_argument);
      auto const again = to_vector(reused.measures());
      for (std::size_t i = 0; i < a.size(); ++i)
        ASSERT_EQ(again[i], a[i]) << "seed " << i << ", " << boxes << " boxes";
    }
}

namespace {

struct WarmStep {
  sdot::PowerDiagramStatistics statistics;
  int non_empty = 0; ///< cells of positive measure
};

/// A diagram with warm_start through the weights `steps` (same positions as `c`): each
/// computation against brute force. Returns what each computation did.
std::vector<WarmStep>
expect_warm_sequence_matches_reference(Cloud const& c,
                                       std::vector<std::vector<double>> const& steps,
                                       std::vector<sdot::HalfSpace> const& hs) {
  sdot::PowerDiagramOptions options;
  options.warm_start = true;
  Cloud d = c;
  d.w = steps.front();
  sdot::PowerDiagram<> pd(positions_view(d), weights_view(d), hs, options);
  double const a = domain_area(hs);
  std::vector<WarmStep> stats;
  for (std::size_t k = 0; k < steps.size(); ++k) {
    d.w = steps[k];
    if (k > 0)
      pd.set_weights(weights_view(d));
    auto const got = to_vector(pd.measures());
    auto const ref = brute_force(d.x, d.w, hs);
    WarmStep step{pd.statistics(), 0};
    for (std::size_t i = 0; i < d.x.size(); ++i) {
      EXPECT_NEAR(got[i], ref.measures[i], 1e-12 * a) << "step " << k << ", seed " << i;
      step.non_empty += got[i] > 0;
    }
    // The polygons come with the measures: one vertex count per cell.
    auto const polygons = pd.cell_polygons();
    EXPECT_EQ(polygons.offsets.extent(0), d.x.size() + 1) << "step " << k;
    stats.push_back(step);
  }
  return stats;
}

std::vector<double> displacing_weights(Cloud const& c, double beta, unsigned seed) {
  return with_displacing_weights(c, {0.3, 0.35}, beta, {0.05, -0.02}, seed).w;
}

} // namespace

TEST(PowerDiagram, WarmStartMatchesTheReferenceAlongASequence) {
  // From zero weights to weights that move the cells ever farther (most cells empty at the
  // largest), small changes, then back to zero: each step against brute force.
  auto const c = clustered_cloud(1500, 71);
  std::vector<std::vector<double>> steps{std::vector<double>(c.x.size(), 0.0)};
  for (double beta : {0.3, 0.6, 0.6005, 1.0, 1.0005, 9.0, 0.0})
    steps.push_back(displacing_weights(c, beta, 72));
  auto const stats = expect_warm_sequence_matches_reference(c, steps, unit_square());
  EXPECT_EQ(stats[0].statistics.warm_cells, 0); // nothing to start from
  // Small changes: nearly every non-empty cell from its earlier neighbours (the path is
  // exercised).
  for (int k : {3, 5})
    EXPECT_GT(stats[k].statistics.warm_cells, 0.9 * stats[k].non_empty) << "step " << k;
}

TEST(PowerDiagram, WarmStartCertifiesOrSearchesEveryCell) {
  // Changes that the earlier neighbours do not cover: a seed whose cell takes most of the
  // domain, then gives it back; the certification must send the cells around it to the search.
  auto const c = uniform_cloud(1200, 0, 73);
  std::vector<double> zero(c.x.size(), 0.0), big = zero;
  big[5] = 0.3;
  auto const stats =
      expect_warm_sequence_matches_reference(c, {zero, big, zero, zero}, unit_square());
  EXPECT_LT(stats[1].statistics.warm_cells, 1200);
  EXPECT_GT(stats[1].statistics.warm_rounds + stats[2].statistics.warm_rounds, 0);
  EXPECT_LT(stats[2].statistics.warm_cells, 1200);
  EXPECT_EQ(stats[3].statistics.warm_cells, 1200); // the same weights: every cell certified
}

TEST(PowerDiagram, WarmStartFollowsEdgeFlips) {
  // A lattice whose seeds are moved off it a little (short edges where four cells nearly
  // meet), then small weights that turn some of those edges over: the cells at the ends of an
  // edge that collapses take the seed across it, so every cell is certified at once (an edge
  // flip missed would send the cells around it to be widened: a certification round).
  auto c = lattice_cloud(24);
  std::mt19937_64 rng(75);
  std::uniform_real_distribution<double> u(-1, 1), uw(0, 1);
  double const h = 1.0 / 24;
  for (auto& x : c.x) {
    x[0] += 0.05 * h * u(rng);
    x[1] += 0.05 * h * u(rng);
  }
  std::vector<double> zero(c.x.size(), 0.0), small(c.x.size());
  for (auto& w : small)
    w = 0.02 * h * h * uw(rng);
  auto const stats = expect_warm_sequence_matches_reference(c, {zero, small, zero}, unit_square());
  for (int k : {1, 2}) {
    EXPECT_EQ(stats[k].statistics.warm_cells, int(c.x.size())) << "step " << k;
    EXPECT_EQ(stats[k].statistics.warm_rounds, 0) << "step " << k;
  }
}

TEST(PowerDiagram, NewPositionsGiveWhatANewDiagramGives) {
  // Time steps of seeds whose cells lie far from them (weights that trend as optimal
  // transport's), with and without warm_start, one box and several: each against brute force.
  // Small steps keep most neighbours (certified); a shuffle of the positions keeps none.
  auto const c =
      with_displacing_weights(clustered_cloud(1500, 91), {0.3, 0.35}, 1.0, {0.05, -0.02}, 93);
  double const spacing = 1 / std::sqrt(1500.0);
  Cloud shuffled = c;
  std::mt19937 rng(92);
  std::shuffle(shuffled.x.begin(), shuffled.x.end(), rng);
  std::vector<Cloud> steps{moved_along_field(c, 0.05 * spacing, 1),
                           moved_along_field(c, 0.2 * spacing, 1), shuffled, c};
  for (int boxes : {1, 3}) {
    for (bool warm : {true, false}) {
      SCOPED_TRACE(std::to_string(boxes) + " boxes, warm_start " + std::to_string(warm));
      sdot::PowerDiagramOptions options;
      options.warm_start = warm;
      options.nb_boxes = boxes;
      options.coarse_to_fine = sdot::CoarseToFine::never; // warm_cells: the warm start's alone
      sdot::PowerDiagram<> pd(positions_view(c), weights_view(c), unit_square(), options);
      pd.measures();
      for (std::size_t k = 0; k < steps.size(); ++k) {
        pd.set_positions(positions_view(steps[k]), weights_view(steps[k]));
        auto const got = to_vector(pd.measures());
        auto const ref = brute_force(steps[k].x, steps[k].w, unit_square());
        for (std::size_t i = 0; i < got.size(); ++i)
          ASSERT_NEAR(got[i], ref.measures[i], 1e-12) << "step " << k << ", seed " << i;
        int const warm_cells = pd.statistics().warm_cells;
        int const non_empty =
            static_cast<int>(std::count_if(got.begin(), got.end(), [](double m) { return m > 0; }));
        if (warm && boxes == 1 && k == 0) // most cells from their neighbours
          EXPECT_GT(warm_cells, 0.8 * non_empty) << "step " << k << ": " << non_empty << " cells";
        if (!warm)
          EXPECT_EQ(warm_cells, 0);
      }
      // A wrong number of positions changes nothing.
      Cloud fewer = c;
      fewer.x.pop_back();
      fewer.w.pop_back();
      EXPECT_THROW(pd.set_positions(positions_view(fewer), weights_view(fewer)),
                   std::invalid_argument);
      auto const ref = brute_force(c.x, c.w, unit_square());
      auto const got = to_vector(pd.measures());
      for (std::size_t i = 0; i < got.size(); ++i)
        ASSERT_NEAR(got[i], ref.measures[i], 1e-12) << "seed " << i;
    }
  }
}

TEST(PowerDiagram, WarmStartBoundsTheNewWeightsBeforeItsFirstSearch) {
  // Recomputations that certify every cell leave the index's weight bounds to the first
  // search: after two of them (and an abandoned one), a seed's cell grows over about 5
  // spacings and the cells around it must be searched with bounds of its new weight; then back.
  auto const c = uniform_cloud(1200, 0, 83);
  std::vector<double> zero(c.x.size(), 0.0), tiny = zero, big = zero;
  for (std::size_t i = 0; i < tiny.size(); ++i)
    tiny[i] = 1e-9 * std::sin(double(i));
  big[5] = 0.02;
  auto const stats =
      expect_warm_sequence_matches_reference(c, {zero, zero, tiny, big, zero}, unit_square());
  for (int k : {1, 2}) {
    EXPECT_EQ(stats[k].statistics.warm_cells, 1200) << "step " << k; // no search
    EXPECT_EQ(stats[k].statistics.warm_rounds, 0) << "step " << k;
  }
  // Searched around the seed, the rest certified (with bounds of the earlier weights, the
  // searched cells would be wrong, the certification would fail and every cell be built again).
  EXPECT_LT(stats[3].statistics.warm_cells, 1200);
  EXPECT_GT(stats[3].statistics.warm_cells, 0) << stats[3].statistics.warm_rounds;
  // An abandoned recomputation in between.
  sdot::PowerDiagramOptions options;
  options.warm_start = true;
  sdot::PowerDiagram<> pd(positions_view(c), weights_view(c), unit_square(), options);
  pd.measures();
  Cloud d = c;
  d.w = tiny;
  pd.set_weights(weights_view(d));
  pd.set_abandon_below(1.0);
  pd.measures();
  EXPECT_TRUE(pd.statistics().abandoned);
  d.w = big;
  pd.set_weights(weights_view(d));
  pd.set_abandon_below(-std::numeric_limits<double>::infinity());
  auto const got = to_vector(pd.measures());
  auto const ref = brute_force(d.x, d.w, unit_square());
  for (std::size_t i = 0; i < got.size(); ++i)
    ASSERT_NEAR(got[i], ref.measures[i], 1e-12) << "seed " << i;
}

TEST(PowerDiagram, WarmStartOnTheHardCases) {
  // Lattice (four co-circular seeds at every vertex), duplicates, seeds outside the domain,
  // huge and negative weights, other domains: each from its weights to perturbed ones.
  std::mt19937 rng(74);
  std::uniform_real_distribution<double> u(-1, 1);
  auto perturbed = [&](std::vector<double> w, double scale) {
    for (auto& x : w)
      x += scale * u(rng);
    return w;
  };
  auto lattice = lattice_cloud(12);
  expect_warm_sequence_matches_reference(
      lattice, {lattice.w, lattice.w, perturbed(lattice.w, 1e-4)}, unit_square());
  auto duplicates = uniform_cloud(300, 0.001, 75);
  for (int k = 0; k < 20; ++k) {
    duplicates.x.push_back(duplicates.x[3 * k]);
    duplicates.w.push_back(duplicates.w[3 * k]);
  }
  auto moved = duplicates.w;
  moved[3] += 1e-4; // the duplicate of seed 3 now has the smaller weight
  expect_warm_sequence_matches_reference(duplicates, {duplicates.w, moved, duplicates.w},
                                         unit_square());
  auto outside = uniform_cloud(300, 0.01, 76, -0.5, 1.5);
  expect_warm_sequence_matches_reference(outside, {outside.w, perturbed(outside.w, 3e-3)},
                                         unit_square());
  auto huge = uniform_cloud(200, 0, 77);
  for (auto& w : huge.w)
    w = 1e6 + 0.01 * u(rng);
  expect_warm_sequence_matches_reference(huge, {huge.w, perturbed(huge.w, 1e-3)}, unit_square());
  auto negative = uniform_cloud(300, 0, 78, -1, 1);
  for (auto& w : negative.w)
    w = -0.02 * (u(rng) + 1);
  expect_warm_sequence_matches_reference(negative, {negative.w, perturbed(negative.w, 1e-3)},
                                         hexagon());
  auto few = uniform_cloud(2, 0, 79);
  expect_warm_sequence_matches_reference(few, {few.w, {0.1, 0}, {0, 0.5}}, triangle());
  Cloud one{{{0.3, 0.4}}, {0.5}};
  expect_warm_sequence_matches_reference(one, {{0.5}, {-3.0}}, unit_square());
}

namespace {

/// A cloud for the tests of the neighbour graph, and whether its cells meet three at a vertex.
struct GraphCase {
  Cloud cloud;
  bool three_at_a_vertex;
};

/// The neighbour graph of `pd`'s cells (edge sources by input index, in edge order; the tree
/// slots of the seed index below are the input indices), and whether each cell has an edge on
/// the domain's boundary.
sdot::detail::NeighbourGraph<Kokkos::HostSpace> neighbour_graph_of(sdot::PowerDiagram<>& pd,
                                                                   std::vector<bool>& on_boundary) {
  auto const polygons = pd.cell_polygons();
  auto const offsets = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), polygons.offsets);
  auto const sources =
      Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), polygons.edge_sources);
  int const n = static_cast<int>(offsets.extent(0)) - 1;
  sdot::detail::NeighbourGraph<Kokkos::HostSpace> graph;
  graph.offsets = Kokkos::View<int*, Kokkos::HostSpace>("offsets", n + 1);
  std::vector<int> slots;
  on_boundary.assign(n, false);
  for (int i = 0; i < n; ++i) {
    for (int k = offsets(i); k < offsets(i + 1); ++k)
      if (sources(k) >= 0)
        slots.push_back(sources(k));
      else
        on_boundary[i] = true;
    graph.offsets(i + 1) = static_cast<int>(slots.size());
  }
  graph.slots = Kokkos::View<int*, Kokkos::HostSpace>("slots", slots.size());
  std::copy(slots.begin(), slots.end(), graph.slots.data());
  return graph;
}

/// Polygon buffers of 64 vertices.
struct PolygonBuffersForTests {
  std::vector<double> x = std::vector<double>(128), y = std::vector<double>(128);
  std::vector<int> labels = std::vector<int>(128);
  sdot::detail::Polygon polygon() {
    sdot::detail::Polygon cell;
    cell.buffers[0] = {x.data(), y.data(), labels.data()};
    cell.buffers[1] = {x.data() + 64, y.data() + 64, labels.data() + 64};
    cell.capacity = 64;
    return cell;
  }
};

} // namespace

namespace {

/// A visitor of for_each_second_neighbour (callable where the walk is): records the seeds it
/// is given, up to `capacity`, counts them, and stops the walk at the first with `stop`.
struct VisitedSeeds {
  int* seeds;
  int* count;
  int capacity;
  bool stop = false;
  KOKKOS_INLINE_FUNCTION bool operator()(int t) const {
    if (*count < capacity)
      seeds[*count] = t;
    ++*count;
    return stop;
  }
};

} // namespace

TEST(PowerDiagram, WarmStartWidensThroughEachSecondNeighbourOnce) {
  // The neighbour graph of a diagram (its polygons' edge sources, by input index) and, for each
  // seed, the seeds for_each_second_neighbour visits (what a widened warm cell clips by),
  // against the seeds two edges away in the graph. Every visit is in the graph's ring. Where
  // cells meet three at a vertex (random seeds, at zero and at displacing weights), a seed
  // whose neighbours have no edge on the boundary misses none of its ring, and repeats (a seed
  // twice, or a neighbour) are rare: a seed enclosed by three others is the exception. Where
  // four cells meet at every vertex (a lattice), seeds can be missed: what checks the cells
  // then finds them.
  for (GraphCase const& test :
       {GraphCase{uniform_cloud(3000, 0, 2), true}, GraphCase{displaced_cells_cloud(3000, 5), true},
        GraphCase{lattice_cloud(30), false}}) {
    Cloud const& c = test.cloud;
    sdot::PowerDiagramOptions options;
    options.keep_polygons = true;
    sdot::PowerDiagram<> pd(positions_view(c), weights_view(c), unit_square(), options);
    int const n = static_cast<int>(c.x.size());
    std::vector<bool> on_boundary;
    auto const graph = neighbour_graph_of(pd, on_boundary);
    auto const neighbours = [&](int i) {
      return std::vector<int>(graph.slots.data() + graph.offsets(i),
                              graph.slots.data() + graph.offsets(i + 1));
    };
    int inner = 0;
    long visits = 0, repeats = 0, missed = 0, ring_size = 0;
    for (int s = 0; s < n; ++s) {
      std::vector<int> visited(1024);
      int count = 0;
      EXPECT_FALSE(sdot::detail::for_each_second_neighbour(
          graph, s, VisitedSeeds{visited.data(), &count, static_cast<int>(visited.size())}));
      ASSERT_LE(count, static_cast<int>(visited.size()));
      visited.resize(count);
      visits += static_cast<long>(visited.size());
      auto const first = neighbours(s);
      std::vector<int> around{s}; // s and the seeds one and two edges away
      bool inside = !on_boundary[s];
      for (int j : first) {
        inside = inside && !on_boundary[j];
        auto const more = neighbours(j);
        around.insert(around.end(), more.begin(), more.end());
      }
      std::sort(around.begin(), around.end());
      around.erase(std::unique(around.begin(), around.end()), around.end());
      for (int t : visited)
        EXPECT_TRUE(t != s && std::binary_search(around.begin(), around.end(), t))
            << "seed " << s << " visits " << t;
      std::vector<int> ring; // two edges away
      for (int t : around)
        if (t != s && std::find(first.begin(), first.end(), t) == first.end())
          ring.push_back(t);
      std::sort(visited.begin(), visited.end());
      std::vector<int> in_ring, missing;
      std::set_intersection(visited.begin(), visited.end(), ring.begin(), ring.end(),
                            std::back_inserter(in_ring));
      in_ring.erase(std::unique(in_ring.begin(), in_ring.end()), in_ring.end());
      repeats += static_cast<long>(visited.size() - in_ring.size());
      if (!inside)
        continue;
      ++inner;
      ring_size += static_cast<long>(ring.size());
      std::set_difference(ring.begin(), ring.end(), in_ring.begin(), in_ring.end(),
                          std::back_inserter(missing));
      missed += static_cast<long>(missing.size());
      if (test.three_at_a_vertex)
        EXPECT_TRUE(missing.empty()) << "seed " << s << " misses " << missing.size();
    }
    EXPECT_GT(inner, n / 5);
    EXPECT_GT(ring_size, 0);
    if (test.three_at_a_vertex)
      EXPECT_LT(repeats, visits / 20) << visits << " visits";
    // A visit that returns true stops the walk.
    for (int s = 0; s < n; ++s) {
      int calls = 0;
      bool const stopped =
          sdot::detail::for_each_second_neighbour(graph, s, VisitedSeeds{nullptr, &calls, 0, true});
      EXPECT_EQ(calls, stopped ? 1 : 0);
    }
  }
}

TEST(PowerDiagram, WarmStartBuildsCellsFromTheirNeighbourCycle) {
  // cell_from_neighbour_cycle against the domain clipped by the same seeds one by one (the
  // clips of the warm start): whenever it builds a cell, the same edges in the same cyclic
  // order and the same vertices within rounding. From each seed's own neighbours it builds
  // nearly every non-empty cell off the boundary where cells meet three at a vertex, and none
  // on the boundary; from the neighbours at weights moved by up to half the squared spacing
  // (some of which no longer bound the cell) it declines some cells. Uniform and clustered
  // seeds, cells far from their seeds, and a lattice (four cells at every vertex, edges of no
  // length).
  for (GraphCase const& test :
       {GraphCase{uniform_cloud(2000, 0, 91), true},
        GraphCase{displaced_cells_cloud(2000, 92), true},
        GraphCase{clustered_cloud(2000, 93), true}, GraphCase{lattice_cloud(30), false}}) {
    Cloud const& c = test.cloud;
    int const n = static_cast<int>(c.x.size());
    sdot::PowerDiagramOptions options;
    options.keep_polygons = true;
    sdot::PowerDiagram<> pd(positions_view(c), weights_view(c), unit_square(), options);
    std::vector<bool> on_boundary;
    auto const graph = neighbour_graph_of(pd, on_boundary);
    Cloud moved = c;
    std::mt19937_64 rng(95);
    std::uniform_real_distribution<double> nudge(-0.5 / n, 0.5 / n);
    for (auto& w : moved.w)
      w += nudge(rng);
    sdot::detail::SeedTree<Kokkos::HostSpace> tree; // tree slot = input index
    tree.size = n;
    tree.seeds = Kokkos::View<sdot::detail::Seed*, Kokkos::HostSpace>("seeds", n);
    tree.index = Kokkos::View<int*, Kokkos::HostSpace>("index", n);
    Kokkos::View<double* [2], Kokkos::HostSpace> domain("domain", 4);
    Kokkos::View<int*, Kokkos::HostSpace> domain_labels("domain_labels", 4);
    double const corners[4][2] = {{0, 0}, {1, 0}, {1, 1}, {0, 1}};
    for (int v = 0; v < 4; ++v) {
      domain(v, 0) = corners[v][0];
      domain(v, 1) = corners[v][1];
      domain_labels(v) = sdot::detail::boundary_label(v);
    }
    sdot::ConstPoints<Kokkos::HostSpace> const domain_vertices(domain);
    for (Cloud const* at : {&c, static_cast<Cloud const*>(&moved)}) {
      SCOPED_TRACE(at == &c ? "own weights" : "moved weights");
      for (int i = 0; i < n; ++i) {
        tree.seeds(i) = sdot::detail::Seed{at->x[i][0], at->x[i][1], at->w[i]};
        tree.index(i) = i;
      }
      int built = 0, interior = 0; // interior: non-empty cells off the boundary
      for (int i = 0; i < n; ++i) {
        sdot::detail::CellSeed const seed{at->x[i][0], at->x[i][1], at->w[i], i, i};
        PolygonBuffersForTests direct_buffers, clipped_buffers;
        auto direct = direct_buffers.polygon();
        bool const accepted =
            sdot::detail::cell_from_neighbour_cycle(direct, seed, tree, graph, i, domain_vertices);
        interior += !on_boundary[i] && graph.offsets(i + 1) - graph.offsets(i) >= 3;
        if (!accepted)
          continue;
        ++built;
        EXPECT_FALSE(on_boundary[i] && at == &c) << "seed " << i;
        auto clipped = clipped_buffers.polygon();
        sdot::detail::start_from_domain(clipped, seed.x, seed.y, domain_vertices,
                                        Kokkos::View<int const*, Kokkos::HostSpace>(domain_labels));
        sdot::detail::ClipResult result = sdot::detail::ClipResult::unchanged;
        for (int k = graph.offsets(i); k < graph.offsets(i + 1); ++k) {
          int const j = graph.slots(k);
          sdot::detail::Seed const other = tree.seeds(j);
          double const dx = other.x - seed.x, dy = other.y - seed.y;
          sdot::detail::clip_by_other(clipped, seed, j, dx * dx + dy * dy, other, result);
        }
        ASSERT_EQ(direct.size, clipped.size) << "seed " << i;
        int shift = 0; // where the clipped polygon starts in the direct one
        while (shift < direct.size && direct.label(shift) != clipped.label(0))
          ++shift;
        ASSERT_LT(shift, direct.size) << "seed " << i;
        for (int k = 0; k < direct.size; ++k) {
          int const d = (k + shift) % direct.size;
          EXPECT_EQ(direct.label(d), clipped.label(k)) << "seed " << i << " edge " << k;
          EXPECT_NEAR(direct.x(d), clipped.x(k), 1e-12) << "seed " << i << " vertex " << k;
          EXPECT_NEAR(direct.y(d), clipped.y(k), 1e-12) << "seed " << i << " vertex " << k;
        }
      }
      if (test.three_at_a_vertex && at == &c)
        EXPECT_GT(built, 0.95 * interior);
      if (test.three_at_a_vertex && at == &moved) {
        EXPECT_GT(built, 0);
        EXPECT_LT(built, interior);
      }
    }
  }
}

TEST(PowerDiagram, WarmStartIsDeterministicAndAbandons) {
  auto const c = clustered_cloud(2000, 80);
  auto const w1 = displacing_weights(c, 3, 81), w2 = displacing_weights(c, 3.1, 81);
  auto run = [&](double abandon_below) {
    sdot::PowerDiagramOptions options;
    options.warm_start = true;
    sdot::PowerDiagram<> pd(positions_view(c), weights_view(c), unit_square(), options);
    pd.measures();
    Cloud d = c;
    d.w = w1;
    pd.set_weights(weights_view(d));
    pd.measures();
    d.w = w2;
    pd.set_weights(weights_view(d));
    pd.set_abandon_below(abandon_below);
    auto m = to_vector(pd.measures());
    return std::pair{m, pd.statistics()};
  };
  auto const [a, sa] = run(-std::numeric_limits<double>::infinity());
  auto const [b, sb] = run(-std::numeric_limits<double>::infinity());
  ASSERT_GT(sa.warm_cells, 0);
  for (std::size_t i = 0; i < a.size(); ++i)
    ASSERT_EQ(a[i], b[i]) << "seed " << i;
  // abandon_below at the smallest measure: nothing given up, the same bits; above: given up.
  double const smallest = *std::min_element(a.begin(), a.end());
  auto const [kept, sk] = run(smallest);
  EXPECT_FALSE(sk.abandoned);
  for (std::size_t i = 0; i < a.size(); ++i)
    ASSERT_EQ(kept[i], a[i]) << "seed " << i;
  auto const given_up = run(std::nextafter(smallest, 1.0) * 1.5);
  EXPECT_TRUE(given_up.second.abandoned);
}

TEST(PowerDiagram, CellPolygons) {
  auto c = uniform_cloud(200, 0.003, 14);
  sdot::PowerDiagram<> pd(positions_view(c), weights_view(c), unit_square());
  auto polygons = pd.cell_polygons();
  auto offsets = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), polygons.offsets);
  auto vertices = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), polygons.vertices);
  auto sources = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), polygons.edge_sources);
  auto measures = to_vector(pd.measures());
  for (int i = 0; i < 200; ++i) {
    double a = 0;
    int b = offsets(i), e = offsets(i + 1);
    for (int k = b; k < e; ++k) {
      int l = k + 1 == e ? b : k + 1;
      a += vertices(k, 0) * vertices(l, 1) - vertices(l, 0) * vertices(k, 1);
      int s = sources(k);
      EXPECT_TRUE((s >= 0 && s < 200 && s != i) || (s < 0 && s >= -4)) << "cell " << i;
      if (s >= 0) { // the edge lies on the bisector of i and s
        double mx = vertices(k, 0), my = vertices(k, 1);
        double pi =
            (mx - c.x[i][0]) * (mx - c.x[i][0]) + (my - c.x[i][1]) * (my - c.x[i][1]) - c.w[i];
        double ps =
            (mx - c.x[s][0]) * (mx - c.x[s][0]) + (my - c.x[s][1]) * (my - c.x[s][1]) - c.w[s];
        EXPECT_NEAR(pi, ps, 1e-12);
      }
    }
    EXPECT_NEAR(a / 2, measures[i], 1e-15);
  }
}

TEST(PowerDiagram, PictureOfTheCells) {
  auto c = uniform_cloud(200, 0.003, 15);
  sdot::PowerDiagram<> pd(positions_view(c), weights_view(c), unit_square());
  std::string const path = (std::filesystem::temp_directory_path() /
                            ("sdot-picture-" + std::to_string(getpid()) + ".svg"))
                               .string();
  sdot::write_svg(path, pd.cell_polygons(), positions_view(c), pd.domain(), pd.measures());
  std::ifstream in(path);
  std::string const svg((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  std::size_t polygons = 0;
  for (auto at = svg.find("<polygon "); at != std::string::npos; at = svg.find("<polygon ", at + 1))
    ++polygons;
  auto const measures = to_vector(pd.measures());
  EXPECT_EQ(polygons,
            static_cast<std::size_t>(200 - std::count(measures.begin(), measures.end(), 0.0)));
  std::filesystem::remove(path);
  sdot::PictureOptions few;
  few.max_cells = 199; // more cells are refused, nothing is written
  EXPECT_THROW(
      sdot::write_svg(path, pd.cell_polygons(), positions_view(c), pd.domain(), pd.measures(), few),
      std::invalid_argument);
  EXPECT_FALSE(std::filesystem::exists(path));
  EXPECT_EQ(sdot::PictureOptions{}.max_cells, 10000);
}

TEST(PowerDiagram, CellsFarFromTheirSeedsAreExactToTheirSeedsRounding) {
  // 40 seeds on a circle of radius S about the unit square's centre: every cell is a wedge
  // through the square, S away from its seed. Next to the seed's coordinates the square's
  // vertices round at ~1e-16 S, which bounds what any seed-relative computation can do; a
  // cell's area summed from seed-relative products would lose ~1e-16 S² instead (5e-11 at
  // S = 1e3, and the sum check refused S = 1e5). Against the long-double brute force.
  for (double scale : {10.0, 1e3, 1e5})
    for (double spread : {0.0, 1.0})
      for (int boxes : {1, 8}) {
        auto far = uniform_cloud(40, 0, 21);
        int const n = static_cast<int>(far.x.size());
        for (int i = 0; i < n; ++i) {
          double const angle = 6.283185307179586 * (i + 0.3 * far.x[i][0]) / n;
          far.x[i] = {0.5 + scale * std::cos(angle), 0.5 + scale * std::sin(angle)};
          far.w[i] = spread * scale * 1e-3 * double(i % 7); // moves the bisectors by ~1e-2
        }
        sdot::PowerDiagramOptions options;
        options.nb_boxes = boxes;
        sdot::PowerDiagram<> pd(positions_view(far), weights_view(far), unit_square(), options);
        auto const measures = to_vector(pd.measures());
        auto const ref = brute_force(far.x, far.w, unit_square());
        double const tolerance = 1e-15 * scale;
        int non_empty = 0;
        for (int i = 0; i < n; ++i) {
          EXPECT_NEAR(measures[i], ref.measures[i], tolerance)
              << "seed " << i << ", scale " << scale << ", spread " << spread << ", " << boxes
              << " boxes";
          non_empty += ref.measures[i] > 0;
        }
        EXPECT_GE(non_empty, n / 2) << "scale " << scale; // the cells do meet in the square
      }
}

TEST(PowerDiagram, SeedsBeyondDoublePrecisionAreReportedNotComputedWrong) {
  // Seeds far from the unit square. Beyond sdot::coordinate_limit (1e100 from the domain's
  // centre) the cells' moments overflow: refused before anything is computed, naming the
  // limit and the first such seed. Within it the cells are computed, or refused after
  // computing when the square vanishes next to the seeds' coordinates: never wrong measures.
  // 1 and 8 boxes.
  for (double scale : {1e10, 1e50, 1e90, 1e100, 1e150, 1e200, 1e300})
    for (int boxes : {1, 8}) {
      auto far = uniform_cloud(100, 0, 16);
      for (auto& x : far.x) {
        x[0] = scale * (1 + x[0]);
        x[1] = scale * (1 + x[1]);
      }
      sdot::PowerDiagramOptions options;
      options.nb_boxes = boxes;
      if (scale >= sdot::coordinate_limit) {
        try {
          sdot::PowerDiagram<> pd(positions_view(far), weights_view(far), unit_square(), options);
          ADD_FAILURE() << "scale " << scale << ": seeds beyond the limit were accepted";
        } catch (std::invalid_argument const& e) {
          std::string const what = e.what();
          EXPECT_NE(what.find("seed 0 is beyond what double precision can compute"),
                    std::string::npos)
              << what;
          EXPECT_NE(what.find("1e+100 (sdot::coordinate_limit)"), std::string::npos) << what;
        }
        continue;
      }
      sdot::PowerDiagram<> pd(positions_view(far), weights_view(far), unit_square(), options);
      try {
        auto const m = to_vector(pd.measures());
        double sum = 0;
        for (double v : m)
          sum += v;
        EXPECT_NEAR(sum, 1, 1e-9) << "scale " << scale << ", " << boxes << " boxes";
      } catch (std::runtime_error const& e) {
        EXPECT_NE(std::string(e.what()).find("double precision"), std::string::npos) << e.what();
      }
    }
  // A weight beyond the limit's square, and one seed beyond the limit among near ones (its
  // index named).
  auto near = uniform_cloud(100, 0, 17);
  auto heavy = near;
  heavy.w[7] = 1e201;
  EXPECT_THROW(sdot::PowerDiagram<>(positions_view(heavy), weights_view(heavy), unit_square()),
               std::invalid_argument);
  auto one_far = near;
  one_far.x[42] = {0.5, -2e100};
  try {
    sdot::PowerDiagram<> pd(positions_view(one_far), weights_view(one_far), unit_square());
    ADD_FAILURE() << "a seed beyond the limit was accepted";
  } catch (std::invalid_argument const& e) {
    EXPECT_NE(std::string(e.what()).find("seed 42 is beyond"), std::string::npos) << e.what();
  }
  // Near seeds still compute, and their measures add up to the domain's area.
  sdot::PowerDiagram<> pd(positions_view(near), weights_view(near), unit_square());
  EXPECT_NO_THROW(pd.measures());
}

TEST(PowerDiagram, TinyAndHugeDomainsScaleTheirCells) {
  // The same cloud in boxes of side 1e-130, 1e-80, 1e80 and 1e95 (within
  // sdot::smallest_domain_width and sdot::coordinate_limit), with the origin at a corner and
  // 1e3 sides away: the measures scale with the area, to round-off (fourth powers of lengths
  // in the kernel's tests would underflow below 1e-77).
  auto const c = uniform_cloud(300, 1e-3, 18);
  sdot::PowerDiagram<> unit(positions_view(c), weights_view(c), unit_square());
  auto const reference = to_vector(unit.measures());
  for (double side : {1e-130, 1e-80, 1e80, 1e95})
    for (double offset : {0.0, 1e3 * side}) {
      auto scaled = c;
      for (auto& x : scaled.x)
        x = {offset + side * x[0], offset + side * x[1]};
      for (auto& w : scaled.w)
        w *= side * side;
      sdot::PowerDiagram<> pd(
          positions_view(scaled), weights_view(scaled),
          sdot::box_half_spaces({offset, offset}, {offset + side, offset + side}));
      auto const m = to_vector(pd.measures());
      for (std::size_t i = 0; i < m.size(); ++i)
        ASSERT_NEAR(m[i] / (side * side), reference[i], 1e-9) << "side " << side << ", seed " << i;
    }
  // Domains wider than 2 x coordinate_limit or narrower than smallest_domain_width are
  // refused, naming the limits.
  for (double width : {3e100, 1e-150})
    try {
      sdot::domain_polygon(sdot::box_half_spaces({0, 0}, {width, 1}));
      ADD_FAILURE() << "a domain of width " << width << " was accepted";
    } catch (std::invalid_argument const& e) {
      EXPECT_NE(std::string(e.what()).find("sdot::coordinate_limit"), std::string::npos)
          << e.what();
      EXPECT_NE(std::string(e.what()).find("sdot::smallest_domain_width"), std::string::npos)
          << e.what();
    }
}

TEST(PowerDiagram, InvalidInputIsRefusedWithTheIndex) {
  auto c = uniform_cloud(50, 0, 15);
  auto expect_message = [](auto&& make, std::string const& part) {
    try {
      make();
      ADD_FAILURE() << "no exception, expected one mentioning '" << part << "'";
    } catch (std::invalid_argument const& e) {
      EXPECT_NE(std::string(e.what()).find(part), std::string::npos) << e.what();
    }
  };
  auto bad = c;
  bad.x[17][1] = std::nan("");
  expect_message(
      [&] { sdot::PowerDiagram<>(positions_view(bad), weights_view(bad), unit_square()); },
      "seed 17");
  bad = c;
  bad.w[33] = INFINITY;
  expect_message(
      [&] { sdot::PowerDiagram<>(positions_view(bad), weights_view(bad), unit_square()); },
      "seed 33");
  bad = c;
  bad.w.pop_back();
  expect_message([&] { sdot::PowerDiagram<>(positions_view(c), weights_view(bad), unit_square()); },
                 "50 positions but 49 weights");
  expect_message(
      [&] {
        sdot::PowerDiagram<>(positions_view(c), weights_view(c),
                             {{{1, 0}, 0}, {{-1, 0}, -1}, {{0, 1}, 1}, {{0, -1}, 0}});
      },
      "empty");
  expect_message(
      [&] {
        sdot::PowerDiagram<>(positions_view(c), weights_view(c), {{{1, 0}, 1}, {{0, 1}, 1}});
      },
      "unbounded");
  expect_message(
      [&] {
        sdot::PowerDiagram<>(positions_view(c), weights_view(c), {{{0, 0}, 1}, {{0, 1}, 1}});
      },
      "half-space 0");
  expect_message([] { sdot::box_half_spaces({0, 0}, {0, 1}); }, "axis 0");
}
