// The spatial index (detail::build_seed_tree) and its stable radix sort, checked on the host
// against std::stable_sort and against the index's own invariants: every seed once, in the
// grid cell its position gives, the cells' ranges consistent, blocks of one or many finest
// blocks.
#include "clouds.hpp"

#include <sdot/base/radix_sort.hpp>
#include <sdot/geometry/cell_kernel.hpp>
#include <sdot/geometry/seed_tree.hpp>

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <numeric>
#include <random>
#include <utility>
#include <vector>

namespace {

using Space = Kokkos::DefaultExecutionSpace;
using Memory = Space::memory_space;
using sdot_test::Cloud;

/// Sorts `keys` (below 2^key_bits) with stable_sort_permutation and checks the permutation
/// and the sorted keys against std::stable_sort of the indices.
template <class Key>
void expect_stable_sort(std::vector<Key> const& keys, int key_bits) {
  int const n = static_cast<int>(keys.size());
  Kokkos::View<Key*, Memory> device("test::keys", n);
  auto host = Kokkos::create_mirror_view(device);
  for (int i = 0; i < n; ++i)
    host(i) = keys[i];
  Kokkos::deep_copy(device, host);
  Kokkos::View<Key const*, Memory> sorted;
  auto const perm = Kokkos::create_mirror_view_and_copy(
      Kokkos::HostSpace(),
      sdot::detail::stable_sort_permutation(Space(), Kokkos::View<Key const*, Memory>(device),
                                            key_bits, &sorted));
  auto const sorted_host = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), sorted);

  std::vector<int> expected(n);
  std::iota(expected.begin(), expected.end(), 0);
  std::stable_sort(expected.begin(), expected.end(),
                   [&](int a, int b) { return keys[a] < keys[b]; });
  ASSERT_EQ(static_cast<int>(perm.extent(0)), n);
  ASSERT_EQ(static_cast<int>(sorted_host.extent(0)), n);
  for (int k = 0; k < n; ++k) {
    ASSERT_EQ(perm(k), expected[k]) << "position " << k;
    ASSERT_EQ(sorted_host(k), keys[expected[k]]) << "position " << k;
  }
}

template <class Key>
std::vector<Key> random_keys(int n, int key_bits, unsigned seed) {
  std::mt19937_64 rng(seed);
  std::vector<Key> keys(n);
  for (auto& k : keys)
    k = static_cast<Key>(rng() & ((std::uint64_t(1) << key_bits) - 1));
  return keys;
}

} // namespace

TEST(RadixSort, StableOnManyEqualKeys) {
  // 3-bit keys: every key repeated about 2 500 times, their order must be the indices'.
  expect_stable_sort(random_keys<std::uint32_t>(20000, 3, 1), 3);
  // 20-bit keys (the grid cells of a block of a million seeds): two passes.
  expect_stable_sort(random_keys<std::uint32_t>(50000, 20, 2), 20);
  // 32-bit keys: three passes, the top digit included.
  expect_stable_sort(random_keys<std::uint32_t>(30000, 32, 3), 32);
  // 40-bit keys in 64 bits (the multigrid's).
  expect_stable_sort(random_keys<std::uint64_t>(30000, 40, 4), 40);
}

TEST(RadixSort, EmptyAndSingleKey) {
  expect_stable_sort(std::vector<std::uint32_t>{}, 10);
  expect_stable_sort(std::vector<std::uint32_t>{7}, 10);
  expect_stable_sort(std::vector<std::uint32_t>{5, 5, 1, 5}, 3);
}

namespace {

/// The index of `cloud`: leaves of 8 seeds, finest blocks of about `block_size` seeds.
sdot::detail::SeedTree<Memory> build_tree(Cloud const& cloud, int block_size) {
  return sdot::detail::build_seed_tree<Space, Memory>(
      Space(), sdot::ConstPoints<Memory>(sdot_test::positions_view(cloud)),
      Kokkos::View<double const*, Memory>(sdot_test::weights_view(cloud)), 8, block_size);
}

/// Checks the invariants of the index of `cloud` with finest blocks of about `block_size`
/// seeds, and returns its numbers of blocks and of finest blocks.
std::pair<int, int> expect_consistent_tree(Cloud const& cloud, int block_size) {
  int const n = static_cast<int>(cloud.x.size());
  auto const tree = build_tree(cloud, block_size);
  auto const seeds = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), tree.seeds);
  auto const index = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), tree.index);
  auto const blocks = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), tree.blocks);
  auto const finest_block =
      Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), tree.finest_block);
  auto const cell_begin = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), tree.cell_begin);
  int const nb_blocks = static_cast<int>(blocks.extent(0));
  int const finest = tree.finest_block_level;

  // Every input seed once, with its position and weight.
  std::vector<int> seen(n, 0);
  for (int s = 0; s < n; ++s) {
    int const i = index(s);
    EXPECT_TRUE(i >= 0 && i < n) << "slot " << s;
    if (i < 0 || i >= n)
      return {-1, -1};
    ++seen[i];
    EXPECT_EQ(seeds(s).x, cloud.x[i][0]);
    EXPECT_EQ(seeds(s).y, cloud.x[i][1]);
    EXPECT_EQ(seeds(s).w, cloud.w[i]);
  }
  EXPECT_EQ(std::count(seen.begin(), seen.end(), 1), n);

  // The blocks cut the tree: along the curve, each a node at most max_block_merge levels above
  // the finest, holding exactly the finest blocks that name it.
  int next_part = 0;
  for (int b = 0; b < nb_blocks; ++b) {
    int const node = blocks(b).node, level = sdot::detail::node_level(node);
    EXPECT_LE(level, finest);
    EXPECT_GE(level, finest - sdot::detail::max_block_merge);
    int const first = sdot::detail::first_descendant(node, finest);
    EXPECT_EQ(first, next_part) << "block " << b;
    next_part = first + (1 << (finest - level));
    for (int q = first; q < next_part && q < (1 << finest); ++q)
      EXPECT_EQ(finest_block(q), b) << "finest block " << q;
  }
  EXPECT_EQ(next_part, 1 << finest);

  // The cells' ranges: non-decreasing, from 0 to n.
  int const nb_cells = static_cast<int>(cell_begin.extent(0)) - 1;
  EXPECT_EQ(cell_begin(0), 0);
  EXPECT_EQ(cell_begin(nb_cells), n);
  for (int c = 0; c < nb_cells; ++c)
    EXPECT_LE(cell_begin(c), cell_begin(c + 1)) << "cell " << c;

  // Each seed in its block's node (node_of_slot agrees with node_begin), and in the grid cell
  // of its block that its position gives.
  for (int s = 0; s < n; ++s) {
    int const b = tree.block_of_slot(s);
    int const node = blocks(b).node, level = sdot::detail::node_level(node);
    EXPECT_LE(tree.node_begin(node, level), s);
    EXPECT_LT(s, tree.node_begin(node + 1, level));
    EXPECT_EQ(tree.node_of_slot(s, level), node);
    auto const& g = blocks(b);
    int const c = g.cell(g.column(seeds(s).x), g.row(seeds(s).y));
    EXPECT_TRUE(cell_begin(c) <= s && s < cell_begin(c + 1)) << "slot " << s << ", cell " << c;
  }
  return {nb_blocks, 1 << finest};
}

} // namespace

TEST(SeedTree, UniformSeedsInOneLargeBlockOrMany) {
  auto const uniform = sdot_test::uniform_cloud(20000, 1.0 / 20000, 41);
  // Finest blocks of 64 seeds (512 of them): all merged into one.
  EXPECT_EQ(expect_consistent_tree(uniform, 64).first, 1);
  // Finest blocks of 2 seeds (16384): at most 4096 merged, so at least 4 blocks.
  auto const many = expect_consistent_tree(uniform, 2);
  EXPECT_GE(many.first, many.second >> sdot::detail::max_block_merge);
  EXPECT_GE(many.first, 4);
}

TEST(SeedTree, ClusteredSeedsDuplicatesAndTinyClouds) {
  // Clusters: blocks of several sizes.
  auto const clustered = expect_consistent_tree(sdot_test::clustered_cloud(20000, 42), 256);
  EXPECT_GT(clustered.first, 1);
  EXPECT_LT(clustered.first, clustered.second);
  // Duplicates: 50 positions, 40 seeds at each.
  Cloud duplicates;
  auto const base = sdot_test::uniform_cloud(50, 0, 43);
  for (int k = 0; k < 40; ++k)
    for (auto const& x : base.x) {
      duplicates.x.push_back(x);
      duplicates.w.push_back(0);
    }
  expect_consistent_tree(duplicates, 64);
  for (int n : {0, 1, 2, 3})
    expect_consistent_tree(sdot_test::uniform_cloud(n, 0.1, 44 + n), 64);
}

namespace {

/// The pruning test of a tree node or a quad (box_may_cut_vertices) against its seeds: at
/// random points v and random seeds i (position and weight), whenever it says that no seed of
/// the node may cut a polygon with the vertex v, every seed of the node must have a power at
/// v above i's. Counts the nodes it rules out, so that a test can also ask for tight bounds.
struct BoundCheck {
  long tried = 0, ruled_out = 0;
};

template <class Seeds>
void expect_sound_bound(sdot::detail::TreeNode const& node, Seeds const& seeds_of_node,
                        std::mt19937_64& rng, BoundCheck& check) {
  using sdot::detail::Polygon;
  if (node.empty() || seeds_of_node.empty())
    return;
  double const w = node.xmax - node.xmin + node.ymax - node.ymin + 1e-3;
  std::uniform_real_distribution<double> near_x(node.xmin - 2 * w, node.xmax + 2 * w);
  std::uniform_real_distribution<double> near_y(node.ymin - 2 * w, node.ymax + 2 * w);
  std::uniform_real_distribution<double> unit(0, 1);
  for (int trial = 0; trial < 20; ++trial) {
    // A seed i and a vertex v: v near the node or near c + g (where the node's cells are).
    double const sx = near_x(rng), sy = near_y(rng);
    double vx = near_x(rng), vy = near_y(rng);
    if (trial % 2) {
      vx = node.centre_x() + node.gx + (unit(rng) - 0.5) * w;
      vy = node.centre_y() + node.gy + (unit(rng) - 0.5) * w;
    }
    // i's weight: its power at v within the spread of the node's powers there.
    double least = 1e300, most = -1e300;
    for (auto const& p : seeds_of_node) {
      double const pw = (vx - p.x) * (vx - p.x) + (vy - p.y) * (vy - p.y) - p.w;
      least = std::min(least, pw);
      most = std::max(most, pw);
    }
    double const power_i = least - (most - least + 1e-6) * (unit(rng) - 0.5);
    double const wi = (vx - sx) * (vx - sx) + (vy - sy) * (vy - sy) - power_i;
    double x[1] = {vx - sx}, y[1] = {vy - sy};
    int label[1] = {0};
    Polygon cell;
    cell.buffers[0] = cell.buffers[1] = {x, y, label};
    cell.capacity = 1;
    cell.push(x[0], y[0], 0);
    sdot::detail::CellSeed const seed{sx, sy, wi, -1, -1};
    ++check.tried;
    if (sdot::detail::box_may_cut_vertices(cell, seed, node))
      continue;
    ++check.ruled_out;
    for (auto const& p : seeds_of_node) {
      double const pw = (vx - p.x) * (vx - p.x) + (vy - p.y) * (vy - p.y) - p.w;
      ASSERT_GT(pw, power_i) << "a seed at (" << p.x << ", " << p.y << ") of weight " << p.w
                             << " cuts at (" << vx << ", " << vy << ") though ruled out";
    }
  }
}

/// Calls f(quad, seeds, level) for every quad of every block of `tree`, with the seeds it
/// covers (host copies).
template <class F>
void for_each_quad_with_seeds(sdot::detail::SeedTree<Memory> const& tree, F const& f) {
  auto const seeds = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), tree.seeds);
  auto const blocks = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), tree.blocks);
  auto const cell_begin = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), tree.cell_begin);
  auto const quads = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), tree.quads);
  auto const quad_first = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), tree.quad_first);
  int const nb_blocks = static_cast<int>(blocks.extent(0));
  for (int b = 0; b < nb_blocks; ++b) {
    auto const& g = blocks(b);
    for (int l = 0; l < g.quad_levels; ++l)
      for (int qj = 0; qj < g.quad_rows(l); ++qj)
        for (int qi = 0; qi < g.quad_columns(l); ++qi) {
          int const span = 2 << l;
          std::vector<sdot::detail::Seed> mine;
          for (int j = qj * span; j < std::min((qj + 1) * span, g.ny); ++j)
            for (int s = cell_begin(g.cell(qi * span, j));
                 s < cell_begin(g.cell(std::min((qi + 1) * span, g.nx), j)); ++s)
              mine.push_back(seeds(s));
          f(quads(quad_first(l * nb_blocks + b) + qj * g.quad_columns(l) + qi), mine, l);
        }
    EXPECT_EQ(g.quad_columns(g.quad_levels - 1), 1);
    EXPECT_EQ(g.quad_rows(g.quad_levels - 1), 1);
  }
}

/// Checks the bounds of every tree node and quad of the index of `cloud`.
BoundCheck expect_sound_bounds(Cloud const& cloud, int block_size) {
  auto const tree = build_tree(cloud, block_size);
  auto const seeds = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), tree.seeds);
  auto const nodes = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), tree.nodes);
  auto const blocks = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), tree.blocks);
  std::mt19937_64 rng(7);
  BoundCheck check;
  using sdot::detail::Seed;
  for (int node = 1; node < (2 << tree.depth); ++node) {
    int const level = sdot::detail::node_level(node);
    std::vector<Seed> mine(seeds.data() + tree.node_begin(node, level),
                           seeds.data() + tree.node_begin(node + 1, level));
    expect_sound_bound(nodes(node), mine, rng, check);
    if (nodes(node).block >= 0)
      EXPECT_EQ(blocks(nodes(node).block).node, node);
  }
  for_each_quad_with_seeds(
      tree, [&](sdot::detail::TreeNode const& quad, std::vector<Seed> const& mine, int) {
        if (mine.empty())
          EXPECT_TRUE(quad.empty());
        expect_sound_bound(quad, mine, rng, check);
      });
  return check;
}

} // namespace

TEST(SeedTree, PruningBoundsNeverRuleOutACut) {
  for (auto const& cloud :
       {sdot_test::uniform_cloud(3000, 0, 51), sdot_test::uniform_cloud(3000, 1.0 / 3000, 52),
        sdot_test::with_spread_weights(sdot_test::uniform_cloud(3000, 0, 53)),
        sdot_test::displaced_cells_cloud(3000, 54),
        sdot_test::with_displacing_weights(sdot_test::clustered_cloud(3000, 55), {0.7, 0.75}, 40,
                                           {0.3, 0.2}, 56),
        sdot_test::uniform_cloud(3000, 1e3, 57, -1e3, 1e3)}) {
    for (int block_size : {16, 256}) {
      auto const check = expect_sound_bounds(cloud, block_size);
      // The test is not empty: a good share of the trials are ruled out.
      EXPECT_GT(check.ruled_out, check.tried / 10);
    }
  }
  // Duplicates and tiny clouds.
  Cloud duplicates;
  auto const base = sdot_test::uniform_cloud(50, 0.01, 58);
  for (int k = 0; k < 20; ++k)
    for (std::size_t i = 0; i < base.x.size(); ++i) {
      duplicates.x.push_back(base.x[i]);
      duplicates.w.push_back(base.w[i]);
    }
  expect_sound_bounds(duplicates, 64);
  for (int n : {1, 2, 3})
    expect_sound_bounds(sdot_test::uniform_cloud(n, 0.1, 59 + n), 64);
}

namespace {

/// Visits host seeds as the index's kernels visit a node's (for_each_seed), from host and device
/// code alike (a host lambda passed to the kernels' functions would be host code only).
struct SeedArray {
  sdot::detail::Seed const* seeds;
  std::size_t count;
  template <class F>
  KOKKOS_INLINE_FUNCTION void operator()(F const& f) const {
    for (std::size_t k = 0; k < count; ++k)
      f(seeds[k]);
  }
};

} // namespace

TEST(SeedTree, WeightedSumsShiftToAParentFrame) {
  using sdot::detail::TreeNode;
  using sdot::detail::WeightedSums;
  std::mt19937_64 rng(61);
  std::uniform_real_distribution<double> unit(0, 1);
  TreeNode const parent{0.25, 0.4, 0.45, 0.52, 0};
  // A part well inside the parent, one at its corner, and a point (a frame of unit 0).
  for (TreeNode const part : {TreeNode{0.3, 0.45, 0.32, 0.46, 0}, TreeNode{0.25, 0.4, 0.35, 0.5, 0},
                              TreeNode{0.4, 0.51, 0.4, 0.51, 0}}) {
    std::vector<sdot::detail::Seed> seeds(200);
    for (auto& s : seeds)
      s = {part.xmin + unit(rng) * (part.xmax - part.xmin),
           part.ymin + unit(rng) * (part.ymax - part.ymin), 10 * (unit(rng) - 0.5)};
    SeedArray const for_each_seed{seeds.data(), seeds.size()};
    auto const direct = sdot::detail::sums_from_seeds<WeightedSums>(parent, for_each_seed);
    WeightedSums shifted;
    sdot::detail::add_shifted_sums(
        shifted, parent, sdot::detail::sums_from_seeds<WeightedSums>(part, for_each_seed), part);
    // In the parent's frame every |x|, |y| ≤ 1 and |w| ≤ 5: each sum is at most 5 n.
    double const tolerance = 1e-13 * 5 * seeds.size();
    for (int k = 0; k < WeightedSums::terms; ++k)
      EXPECT_NEAR(shifted.wm[k], direct.wm[k], tolerance) << "weighted sum " << k;
  }
}

TEST(SeedTree, TrendFitRecoversAQuadraticTrend) {
  // Weights that follow w = a − 2 g·e − μ_x e_x² − μ_y e_y² exactly (e about the box's centre):
  // the fit gives back g and κ = 1 + μ, and smin = −a up to the ridge; seeds on a line, too few,
  // or all at one point give no trend (g = 0, κ = 1).
  using sdot::detail::Seed;
  using sdot::detail::TreeNode;
  std::mt19937_64 rng(65);
  std::uniform_real_distribution<double> unit(0, 1);
  double const a = 0.3, gx = 0.02, gy = -0.015, mu_x = 2.5, mu_y = 0.75;
  auto const trend = [&](double ex, double ey) {
    return a - 2 * (gx * ex + gy * ey) - mu_x * ex * ex - mu_y * ey * ey;
  };
  std::vector<Seed> seeds(60);
  sdot::detail::NodeStats stats;
  for (auto& s : seeds) {
    s = {0.2 + 0.1 * unit(rng), 0.5 + 0.06 * unit(rng), 0};
    stats.add(s);
  }
  TreeNode node = stats.node();
  for (auto& s : seeds)
    s.w = trend(s.x - node.centre_x(), s.y - node.centre_y());
  for (auto const& s : seeds)
    node.wmax = std::max(node.wmax, s.w);
  sdot::detail::bound_from_seeds(node, SeedArray{seeds.data(), seeds.size()});
  EXPECT_NEAR(node.gx, gx, 1e-9);
  EXPECT_NEAR(node.gy, gy, 1e-9);
  EXPECT_NEAR(node.kappa_x, 1 + mu_x, 1e-7);
  EXPECT_NEAR(node.kappa_y, 1 + mu_y, 1e-7);
  EXPECT_NEAR(node.smin, -a, 1e-8); // the ridge, and smin lowered for rounding

  // No trend to fit: two seeds; seeds on one horizontal line (no curvature along y to fit,
  // the ridge keeps the system solvable and the fit finite); one point.
  for (int count : {2, 3}) {
    std::vector<Seed> few(seeds.begin(), seeds.begin() + count);
    if (count == 3)
      for (auto& s : few)
        s.y = 0.5;
    sdot::detail::NodeStats few_stats;
    for (auto const& s : few)
      few_stats.add(s);
    TreeNode box = few_stats.node();
    auto const sums = sdot::detail::sums_from_seeds<sdot::detail::TrendSums>(
        box, SeedArray{few.data(), few.size()});
    auto const solver = sdot::detail::trend_solver(box, sums);
    sdot::detail::fit_trend(box, solver, sums.wm);
    EXPECT_TRUE(std::isfinite(box.gx) && std::isfinite(box.gy)) << count << " seeds";
    EXPECT_TRUE(box.kappa_x >= 1.0 / 16 && box.kappa_x <= 1e4) << count << " seeds";
    if (count == 2) {
      EXPECT_EQ(box.gx, 0);
      EXPECT_EQ(box.kappa_x, 1);
    }
  }
  std::vector<Seed> point(5, Seed{0.4, 0.4, 0.1});
  TreeNode box{0.4, 0.4, 0.4, 0.4, 0.1};
  auto const sums = sdot::detail::sums_from_seeds<sdot::detail::TrendSums>(
      box, SeedArray{point.data(), point.size()});
  sdot::detail::fit_trend(box, sdot::detail::trend_solver(box, sums), sums.wm);
  EXPECT_EQ(box.gx, 0);
  EXPECT_EQ(box.gy, 0);
  EXPECT_EQ(box.kappa_x, 1);
  EXPECT_EQ(box.kappa_y, 1);
}

TEST(SeedTree, NewWeightsGiveTheBoundsOfANewIndex) {
  // An index given new weights keeps the solvers of the quads it fitted before and computes
  // those of the quads that get a trend only now (set_seed_weights, then the bounds): its nodes
  // and quads are those of an index built with the new weights, bit for bit. From zero weights
  // (no quad fitted), to transport-like weights, to other ones.
  auto const moved = sdot_test::with_displacing_weights(sdot_test::clustered_cloud(4000, 63),
                                                        {0.7, 0.75}, 40, {0.3, 0.2}, 64);
  sdot_test::Cloud flat = moved, other = moved;
  for (std::size_t i = 0; i < moved.w.size(); ++i) {
    flat.w[i] = 0;
    other.w[i] = 0.5 * moved.w[i] - 3e-3 * moved.x[i][0] * moved.x[i][0];
  }
  auto tree = build_tree(flat, 256);
  for (sdot_test::Cloud const* next : std::vector<sdot_test::Cloud const*>{&moved, &other}) {
    sdot::detail::reweight_seed_tree(
        Space(), tree, Kokkos::View<double const*, Memory>(sdot_test::weights_view(*next)));
    auto const fresh = build_tree(*next, 256);
    auto const quads = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), tree.quads);
    auto const fresh_quads = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), fresh.quads);
    ASSERT_EQ(quads.extent(0), fresh_quads.extent(0));
    int with_trend = 0;
    for (std::size_t q = 0; q < quads.extent(0); ++q) {
      auto const &a = quads(q), &b = fresh_quads(q);
      EXPECT_TRUE(a.gx == b.gx && a.gy == b.gy && a.kappa_x == b.kappa_x &&
                  a.kappa_y == b.kappa_y && a.smin == b.smin && a.wmax == b.wmax &&
                  a.trend == b.trend)
          << "quad " << q;
      with_trend += a.trend;
    }
    EXPECT_GT(with_trend, 10);
    auto const nodes = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), tree.nodes);
    auto const fresh_nodes = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), fresh.nodes);
    for (std::size_t k = 1; k < nodes.extent(0); ++k)
      EXPECT_TRUE(nodes(k).smin == fresh_nodes(k).smin && nodes(k).gx == fresh_nodes(k).gx &&
                  nodes(k).kappa_y == fresh_nodes(k).kappa_y)
          << "node " << k;
  }
}

TEST(SeedTree, QuadTrendsFromTheQuadsBelowMatchFitsToTheirSeeds) {
  // Each quad's trend, fitted to sums drawn from the quads below, against the same fit to the
  // quad's own seeds; at transport-like weights, where most quads have a trend. The two round
  // differently, and the least squares of a small curved quad amplify that to ~1e-7 relative
  // (the bound stays exact: smin is taken over the seeds with whatever fit): a wrong shift
  // would miss by far more.
  double const tolerance = 1e-5;
  for (auto const& cloud : {sdot_test::displaced_cells_cloud(4000, 62),
                            sdot_test::with_displacing_weights(sdot_test::clustered_cloud(4000, 63),
                                                               {0.7, 0.75}, 40, {0.3, 0.2}, 64)}) {
    int with_trend_above_finest = 0;
    for_each_quad_with_seeds(
        build_tree(cloud, 256), [&](sdot::detail::TreeNode const& quad,
                                    std::vector<sdot::detail::Seed> const& mine, int level) {
          if (mine.empty())
            return;
          sdot::detail::TreeNode expected{quad.xmin, quad.ymin, quad.xmax, quad.ymax, quad.wmax};
          sdot::detail::bound_from_seeds(expected, SeedArray{mine.data(), mine.size()});
          double const size = quad.half_width() + quad.half_height();
          EXPECT_NEAR(quad.gx, expected.gx, tolerance * (std::fabs(expected.gx) + size));
          EXPECT_NEAR(quad.gy, expected.gy, tolerance * (std::fabs(expected.gy) + size));
          EXPECT_NEAR(quad.kappa_x, expected.kappa_x, tolerance * expected.kappa_x);
          EXPECT_NEAR(quad.kappa_y, expected.kappa_y, tolerance * expected.kappa_y);
          if (expected.smin > -std::numeric_limits<double>::infinity())
            EXPECT_NEAR(quad.smin, expected.smin,
                        tolerance * (std::fabs(expected.smin) + std::fabs(quad.wmax)));
          else
            EXPECT_EQ(quad.smin, expected.smin);
          with_trend_above_finest += level > 0 && (quad.gx != 0 || quad.kappa_x != 1);
        });
    EXPECT_GT(with_trend_above_finest, 10);
  }
}
