// The distributed pieces under 1 to 4 MPI processes (one process without MPI): the conjugate
// gradient with its halo exchange on a known SPD matrix, and the Jacobian and the solver on
// cells spread over the processes (ReplicatedCells stands for the distributed diagram), against
// one process; and the solver on the distributed diagram itself (SpreadCells), against the
// brute-force measures.
#include "transport_helpers.hpp"
#include <test_setup.hpp>

#include <brute_force.hpp>

#include <sdot/transport/conjugate_gradient.hpp>

#include <gtest/gtest.h>
#ifdef LOOM_ENABLE_MPI
#include <mpi.h>
#endif

#include <cmath>
#include <map>

using namespace sdot_test;

namespace {

template <class T>
std::vector<T> gather_blocks(loom::Ranks const& ranks, std::vector<T> const& mine) {
  auto counts = ranks.allgather(std::vector<std::int64_t>{std::int64_t(mine.size())});
  std::int64_t total = 0;
  for (auto c : counts)
    total += c;
  std::vector<T> all(total);
  ranks.allgatherv_bytes(mine.data(), all.data(), counts, sizeof(T));
  return all;
}

// Rows [begin, end) of the k × k grid Laplacian with Dirichlet boundary, shifted by `shift`,
// in global columns (host CRS), with its diagonal. With `varying`, each edge's coupling is
// drawn in [0.2, 1.2) from its two ends (the same from both), as at transport weights.
struct HostRows {
  std::vector<int> row_map{0}, columns;
  std::vector<double> values, diagonal;
};
HostRows laplacian_rows(int k, int begin, int end, double shift, bool varying = false) {
  auto coupling = [&](int a, int b) {
    if (!varying)
      return 1.0;
    double const h = std::sin(std::min(a, b) * 12.9898 + std::max(a, b) * 78.233) * 43758.5453;
    return 0.2 + (h - std::floor(h));
  };
  HostRows rows;
  for (int g = begin; g < end; ++g) {
    int const i = g % k, j = g / k;
    double diagonal = shift + 4; // the missing neighbours (Dirichlet) count 1 each
    auto add = [&](int c, double v) {
      rows.columns.push_back(c);
      rows.values.push_back(v);
    };
    auto neighbour = [&](int c) {
      double const a = coupling(g, c);
      diagonal += a - 1;
      add(c, -a);
    };
    if (j > 0)
      neighbour(g - k);
    if (i > 0)
      neighbour(g - 1);
    std::size_t const at = rows.columns.size();
    add(g, 0);
    if (i + 1 < k)
      neighbour(g + 1);
    if (j + 1 < k)
      neighbour(g + k);
    rows.values[at] = diagonal;
    rows.diagonal.push_back(diagonal);
    rows.row_map.push_back(static_cast<int>(rows.columns.size()));
  }
  return rows;
}

/// Rows [begin, end) of the shifted k × k grid Laplacian on this process: the matrix in
/// extended columns with its halo, its diagonal, and the grid points' Z order.
struct LaplacianBlock {
  using Space = Kokkos::DefaultExecutionSpace;
  loom::RowBlocks blocks;
  loom::Halo<Space> halo;
  sdot::SparseMatrix<Space> matrix;
  Kokkos::View<double*> diagonal;
  Kokkos::View<int*> order;

  LaplacianBlock(loom::Ranks const& ranks, int k, int begin, int end, bool varying = false) {
    Space space;
    double const shift = 1e-3;
    auto rows = laplacian_rows(k, begin, end, shift, varying);
    blocks = loom::RowBlocks(ranks, end - begin);
    auto global_columns = view_of(rows.columns, "test::columns");
    Kokkos::View<int*> extended("test::extended", rows.columns.size());
    halo = loom::Halo<Space>(space, ranks, blocks, global_columns, extended);
    matrix = sdot::SparseMatrix<Space>("test::laplacian", end - begin, end - begin + halo.size(),
                                       static_cast<int>(rows.columns.size()),
                                       view_of(rows.values, "test::values"),
                                       view_of(rows.row_map, "test::row_map"), extended);
    diagonal = view_of(rows.diagonal);
    sdot::Points<> positions("test::positions", end - begin);
    auto h = Kokkos::create_mirror_view(positions);
    for (int g = begin; g < end; ++g) {
      h(g - begin, 0) = g % k;
      h(g - begin, 1) = g / k;
    }
    Kokkos::deep_copy(positions, h);
    order = sdot::detail::morton_order(space, sdot::ConstPoints<>(positions));
  }

  /// The multigrid of these rows (coupled or block Jacobi over the processes).
  sdot::detail::AggregationMultigrid<Space>
  multigrid(loom::Ranks const& ranks, bool couple_processes, int matched_levels = -1) const {
    sdot::AggregationOptions options;
    options.coarsest_size = 20;
    options.couple_processes = couple_processes;
    options.matched_levels = matched_levels;
    sdot::detail::MultigridProcesses<Space> const processes{ranks, blocks, &halo};
    return sdot::detail::AggregationMultigrid<Space>(Space{}, matrix, diagonal, order, false,
                                                     options, nullptr, &processes);
  }
};

enum class Preconditioner { jacobi, block_jacobi, coupled };

std::vector<double> solve_laplacian(loom::Ranks const& ranks, int k, int begin, int end,
                                    std::vector<double> const& b_all, int* iterations,
                                    Preconditioner preconditioner = Preconditioner::jacobi) {
  using Space = Kokkos::DefaultExecutionSpace;
  Space space;
  LaplacianBlock const block(ranks, k, begin, end);
  if (ranks.process_count() > 1)
    EXPECT_GT(block.halo.size(), 0);
  else
    EXPECT_EQ(block.halo.size(), 0);
  std::vector<double> b(b_all.begin() + begin, b_all.begin() + end);
  Kokkos::View<double*> x("test::x", end - begin);
  sdot::detail::ConjugateGradientResult result;
  if (preconditioner != Preconditioner::jacobi) {
    auto const multigrid = block.multigrid(ranks, preconditioner == Preconditioner::coupled);
    result =
        sdot::detail::conjugate_gradient(space, ranks, block.matrix, block.halo, block.diagonal,
                                         view_of(b), x, 1e-12, 5000, &multigrid);
  } else {
    result = sdot::detail::conjugate_gradient(space, ranks, block.matrix, block.halo,
                                              block.diagonal, view_of(b), x, 1e-12, 5000);
  }
  EXPECT_TRUE(result.converged);
  *iterations = result.iterations;
  return to_vector(x);
}

/// A known solution of the k × k Laplacian system and its right-hand side b = A x (computed
/// on the host from every row).
struct LaplacianProblem {
  std::vector<double> x, b;
};

LaplacianProblem laplacian_problem(int k) {
  int const n = k * k;
  LaplacianProblem p{std::vector<double>(n), std::vector<double>(n, 0.0)};
  for (int g = 0; g < n; ++g)
    p.x[g] = std::sin(0.1 * g) + 0.01 * (g % 7);
  auto all = laplacian_rows(k, 0, n, 1e-3);
  for (int g = 0; g < n; ++g)
    for (int e = all.row_map[g]; e < all.row_map[g + 1]; ++e)
      p.b[g] += all.values[e] * p.x[all.columns[e]];
  return p;
}

} // namespace

TEST(TransportMpi, ConjugateGradientWithHalo) {
  auto const ranks = loom::WorldRanks();
  int const k = 40, n = k * k;
  auto const [x_true, b] = laplacian_problem(k);
  auto const block = block_of(n, ranks);
  int iterations = 0, serial_iterations = 0;
  auto const x =
      gather_blocks(ranks, solve_laplacian(ranks, k, block.first, block.second, b, &iterations));
  auto const serial = solve_laplacian(loom::Ranks{}, k, 0, n, b, &serial_iterations);
  ASSERT_EQ(x.size(), std::size_t(n));
  double scale = 0;
  for (double v : x_true)
    scale = std::fmax(scale, std::fabs(v));
  for (int g = 0; g < n; ++g) {
    EXPECT_NEAR(x[g], x_true[g], 1e-8 * scale) << "row " << g;
    EXPECT_NEAR(x[g], serial[g], 1e-10 * scale) << "row " << g;
  }
  EXPECT_NEAR(iterations, serial_iterations, 1);
}

TEST(TransportMpi, AggregationConjugateGradientWithHalo) {
  // The multigrid whose levels couple the processes (the default) and the block Jacobi over
  // them: the solution, the same bits when run again, and fewer iterations than Jacobi. The
  // coupled levels keep about the iterations of one process; the block Jacobi, which loses the
  // couplings across the blocks, needs more from 2 processes on.
  auto const ranks = loom::WorldRanks();
  int const k = 40, n = k * k;
  auto const [x_true, b] = laplacian_problem(k);
  auto const block = block_of(n, ranks);
  double scale = 0;
  for (double v : x_true)
    scale = std::fmax(scale, std::fabs(v));
  int jacobi_iterations = 0, one_process_iterations = 0;
  solve_laplacian(ranks, k, block.first, block.second, b, &jacobi_iterations);
  solve_laplacian(loom::Ranks{}, k, 0, n, b, &one_process_iterations, Preconditioner::coupled);
  std::map<Preconditioner, int> iterations;
  for (auto preconditioner : {Preconditioner::coupled, Preconditioner::block_jacobi}) {
    int again_iterations = 0;
    auto const x =
        gather_blocks(ranks, solve_laplacian(ranks, k, block.first, block.second, b,
                                             &iterations[preconditioner], preconditioner));
    auto const again = gather_blocks(ranks, solve_laplacian(ranks, k, block.first, block.second, b,
                                                            &again_iterations, preconditioner));
    ASSERT_EQ(x.size(), std::size_t(n));
    for (int g = 0; g < n; ++g) {
      EXPECT_NEAR(x[g], x_true[g], 1e-8 * scale) << "row " << g;
      EXPECT_EQ(x[g], again[g]) << "row " << g; // deterministic
    }
    EXPECT_EQ(iterations[preconditioner], again_iterations);
    EXPECT_LT(iterations[preconditioner], jacobi_iterations);
  }
  EXPECT_LE(iterations[Preconditioner::coupled], one_process_iterations + 2);
  if (ranks.process_count() > 1)
    EXPECT_GT(iterations[Preconditioner::block_jacobi], iterations[Preconditioner::coupled] + 2);
}

TEST(TransportMpi, CoupledMultigridIsSymmetricPositiveDefinite) {
  // z = M⁻¹ r of the multigrid whose levels couple the processes, on vectors spread over them:
  // u · M⁻¹ v = v · M⁻¹ u and u · M⁻¹ u > 0 over all the rows (a halo row read from the wrong
  // place, or a coarse column numbered wrongly, breaks the symmetry), with Z-order and with
  // matched aggregates; a block Jacobi over the processes likewise.
  auto const ranks = loom::WorldRanks();
  int const k = 37, n = k * k; // blocks that do not fall on grid rows
  auto const range = block_of(n, ranks);
  int const rows = range.second - range.first;
  LaplacianBlock const block(ranks, k, range.first, range.second, true);
  std::vector<double> u_all(n), v_all(n);
  for (int g = 0; g < n; ++g) {
    u_all[g] = std::sin(1.3 * g) + 0.2 * std::cos(0.05 * g);
    v_all[g] = std::cos(0.7 * g + 1) - 0.1 * (g % 5);
  }
  auto const u =
      view_of(std::vector<double>(u_all.begin() + range.first, u_all.begin() + range.second));
  auto const v =
      view_of(std::vector<double>(v_all.begin() + range.first, v_all.begin() + range.second));
  for (bool coupled : {true, false})
    for (int matched_levels : {0, 3}) {
      auto const multigrid = block.multigrid(ranks, coupled, matched_levels);
      Kokkos::View<double*> mu("test::mu", rows), mv("test::mv", rows);
      multigrid.apply(Kokkos::DefaultExecutionSpace{}, u, mu);
      multigrid.apply(Kokkos::DefaultExecutionSpace{}, v, mv);
      auto const hu = to_vector(u), hv = to_vector(v), hmu = to_vector(mu), hmv = to_vector(mv);
      double uv = 0, vu = 0, uu = 0, size = 0;
      for (int i = 0; i < rows; ++i) {
        uv += hu[i] * hmv[i];
        vu += hv[i] * hmu[i];
        uu += hu[i] * hmu[i];
        size += std::fabs(hu[i] * hmv[i]);
      }
      uv = ranks.process_sum(uv);
      vu = ranks.process_sum(vu);
      uu = ranks.process_sum(uu);
      size = ranks.process_sum(size);
      EXPECT_NEAR(uv, vu, 1e-12 * size) << "coupled " << coupled << ", matched " << matched_levels;
      EXPECT_GT(uu, 0) << "coupled " << coupled << ", matched " << matched_levels;
    }
}

TEST(TransportMpi, KeptAggregatesWithAProcessWithoutRows) {
  // Process 0 holds no row (from 2 processes on): the multigrid built twice with the same
  // kept aggregates (as the Newton steps of a solve build it), on a grid too small for a
  // coupled coarse level (the whole matrix gathered at once) and on one with them; every
  // process takes the same path (a mismatch hangs), and the CG solves the system each time.
  auto const ranks = loom::WorldRanks();
  int const P = ranks.process_count(), p = ranks.process_rank();
  for (int k : {10, 40}) {
    int const n = k * k;
    auto const [x_true, b_all] = laplacian_problem(k);
    int const first = P == 1 ? 0 : p == 0 ? 0 : (p - 1) * n / (P - 1);
    int const last = P == 1 ? n : p == 0 ? 0 : p * n / (P - 1);
    LaplacianBlock const block(ranks, k, first, last);
    sdot::AggregationOptions options;
    options.coarsest_size = 20;
    sdot::detail::MultigridProcesses<LaplacianBlock::Space> const processes{ranks, block.blocks,
                                                                            &block.halo};
    sdot::detail::MultigridAggregates<LaplacianBlock::Space::memory_space> aggregates;
    for (int step = 0; step < 2; ++step) {
      sdot::detail::AggregationMultigrid<LaplacianBlock::Space> multigrid(
          LaplacianBlock::Space{}, block.matrix, block.diagonal, block.order, false, options,
          &aggregates, &processes);
      EXPECT_FALSE(aggregates.empty());
      std::vector<double> b(b_all.begin() + first, b_all.begin() + last);
      Kokkos::View<double*> x("test::x", last - first);
      auto const result =
          sdot::detail::conjugate_gradient(LaplacianBlock::Space{}, ranks, block.matrix, block.halo,
                                           block.diagonal, view_of(b), x, 1e-10, 500, &multigrid);
      EXPECT_TRUE(result.converged) << "k " << k << ", step " << step;
      auto const got = to_vector(x);
      for (int i = 0; i < last - first; ++i)
        ASSERT_NEAR(got[i], x_true[first + i], 1e-6) << "k " << k << ", row " << first + i;
    }
  }
}

TEST(TransportMpi, MatchedLevelsByDefaultUnlessBlockJacobi) {
  // The default matched_levels (−1): matched aggregates on the first level where the levels
  // hold the whole matrix (one process, or coupled processes), groups along the curve under a
  // block Jacobi over several processes.
  auto const ranks = loom::WorldRanks();
  int const k = 30, n = k * k;
  auto const range = block_of(n, ranks);
  LaplacianBlock const block(ranks, k, range.first, range.second, true);
  for (bool coupled : {true, false}) {
    sdot::AggregationOptions options;
    options.coarsest_size = 20;
    options.couple_processes = coupled;
    sdot::detail::MultigridProcesses<LaplacianBlock::Space> const processes{ranks, block.blocks,
                                                                            &block.halo};
    sdot::detail::MultigridAggregates<LaplacianBlock::Space::memory_space> aggregates;
    sdot::detail::AggregationMultigrid<LaplacianBlock::Space> multigrid(
        LaplacianBlock::Space{}, block.matrix, block.diagonal, block.order, false, options,
        &aggregates, &processes);
    ASSERT_FALSE(aggregates.levels.empty());
    bool const block_jacobi = !coupled && ranks.process_count() > 1;
    EXPECT_EQ(aggregates.levels.front().consecutive, block_jacobi) << coupled;
    // The same number of levels on every process (their exchanges match).
    auto const levels = ranks.allgather(std::vector<int>{multigrid.levels()});
    for (int l : levels)
      EXPECT_EQ(l, multigrid.levels());
  }
}

TEST(TransportMpi, JacobianEqualsOneProcess) {
  auto const ranks = loom::WorldRanks();
  for (auto const& c :
       {uniform_cloud(700, 1e-3, 31), clustered_cloud(700, 32), lattice_cloud(20)}) {
    ReplicatedCells cells(ranks, c, unit_square());
    cells.set_weights(weights_view(
        Cloud{{},
              std::vector<double>(c.w.begin() + cells.begin(),
                                  c.w.begin() + cells.begin() + cells.positions().extent(0))}));
    using Space = Kokkos::DefaultExecutionSpace;
    auto jacobian = sdot::measure_jacobian(Space{}, ranks, sdot::ConstPoints<>(cells.positions()),
                                           cells.cell_polygons());
    EXPECT_EQ(jacobian.global.numCols(), static_cast<int>(c.x.size()));
    if (ranks.process_count() > 1)
      EXPECT_GT(jacobian.halo.size(), 0);
    struct Entry {
      int i, j;
      double v;
    };
    std::vector<Entry> mine;
    for (auto const& e : host_entries(jacobian.global, cells.begin()))
      mine.push_back({e.first.first, e.first.second, e.second});
    auto const got = gather_blocks(ranks, mine);

    auto positions = positions_view(c);
    sdot::PowerDiagram<> pd(positions, weights_view(c), unit_square());
    auto const one =
        host_entries(sdot::measure_jacobian(pd, sdot::ConstPoints<>(positions)).global);
    ASSERT_EQ(got.size(), one.size());
    for (auto const& e : got) {
      auto it = one.find({e.i, e.j});
      ASSERT_NE(it, one.end()) << "entry (" << e.i << ", " << e.j << ")";
      EXPECT_EQ(e.v, it->second) << "entry (" << e.i << ", " << e.j << ")";
    }
  }
}

TEST(TransportMpi, SolverEqualsOneProcess) {
  auto const ranks = loom::WorldRanks();
  auto c = clustered_cloud(800, 33);
  for (auto& w : c.w)
    w = 0;
  int const n = static_cast<int>(c.x.size());
  std::vector<double> t(n);
  for (int i = 0; i < n; ++i)
    t[i] = 1 + 0.5 * std::cos(3 * c.x[i][0]);
  double sum = 0;
  for (double v : t)
    sum += v;
  for (auto& v : t)
    v /= sum;

  ReplicatedCells cells(ranks, c, unit_square());
  int const begin = cells.begin(), end = begin + static_cast<int>(cells.positions().extent(0));
  auto const targets = view_of(std::vector<double>(t.begin() + begin, t.begin() + end));
  auto result = sdot::solve_optimal_transport(cells, Kokkos::View<double const*>(targets),
                                              Kokkos::View<double const*>());
  auto const weights = gather_blocks(ranks, to_vector(result.weights));
  auto const measures = gather_blocks(ranks, to_vector(result.measures));

  sdot::OptimalTransport<> ot(positions_view(c), view_of(t), unit_square());
  auto const one = ot.solve();
  auto const w1 = to_vector(one.weights);
  double scale = 0;
  for (double w : w1)
    scale = std::fmax(scale, std::fabs(w));
  ASSERT_EQ(weights.size(), w1.size());
  for (int i = 0; i < n; ++i) {
    EXPECT_NEAR(weights[i], w1[i], 1e-10 * scale) << "seed " << i;
    EXPECT_NEAR(measures[i], t[i], 1e-10) << "seed " << i;
  }
  EXPECT_EQ(result.statistics.newton_iterations, one.statistics.newton_iterations);
}

TEST(TransportMpi, SpreadCellsGiveTheTargets) {
  // The distributed diagram itself (SpreadCells, what sdot-ot runs), a clustered cloud, a
  // process without seeds at 3 and 4 processes; the weights found give the targets by the
  // brute-force reference.
  auto const ranks = loom::WorldRanks();
  auto const c = clustered_cloud(800, 41);
  int const n = static_cast<int>(c.x.size());
  int const P = ranks.process_count(), p = ranks.process_rank();
  auto cut = [&](int q) { return q == 0 || (P > 2 && q == 1) ? 0 : int(std::int64_t(n) * q / P); };
  int const begin = cut(p), end = p + 1 == P ? n : cut(p + 1);
  Cloud mine;
  mine.x.assign(c.x.begin() + begin, c.x.begin() + end);
  mine.w.assign(end - begin, 0.0);
  std::vector<double> const t(n, 1.0 / n);
  sdot::SpreadCells<> cells(ranks, positions_view(mine), unit_square());
  auto const targets = view_of(std::vector<double>(t.begin() + begin, t.begin() + end));
  auto const result = sdot::solve_optimal_transport(cells, Kokkos::View<double const*>(targets),
                                                    Kokkos::View<double const*>());
  EXPECT_GE(result.statistics.newton_iterations, 1);
  auto const weights = gather_blocks(ranks, to_vector(result.weights));
  ASSERT_EQ(static_cast<int>(weights.size()), n);
  auto const reference = brute_force(c.x, weights, unit_square());
  for (int i = 0; i < n; ++i)
    ASSERT_NEAR(static_cast<double>(reference.measures[i]), t[i], 1e-10) << "seed " << i;
}

// A clustered cloud whose rows are shuffled (the input blocks hold seeds all over the domain),
// non-uniform targets, and this process's block of rows: none on process 0, nor on process 1
// from 3 processes on.
struct ShuffledProblem {
  Cloud all, mine;
  std::vector<double> targets, my_targets;
  int begin = 0, end = 0;
};
ShuffledProblem shuffled_problem(loom::Ranks const& ranks, int n, unsigned seed) {
  ShuffledProblem s;
  s.all = clustered_cloud(n, seed);
  std::vector<int> order(n);
  for (int i = 0; i < n; ++i)
    order[i] = static_cast<int>((std::int64_t(i) * 7919) % n); // n prime to 7919
  Cloud shuffled = s.all;
  for (int i = 0; i < n; ++i)
    shuffled.x[i] = s.all.x[order[i]];
  s.all = shuffled;
  s.targets.resize(n);
  double sum = 0;
  for (int i = 0; i < n; ++i)
    sum += s.targets[i] = 1 + 0.5 * std::cos(3 * s.all.x[i][0]);
  for (auto& t : s.targets)
    t /= sum;
  int const P = ranks.process_count(), p = ranks.process_rank();
  auto cut = [&](int q) { return q == 0 || (P > 2 && q == 1) ? 0 : int(std::int64_t(n) * q / P); };
  s.begin = cut(p);
  s.end = p + 1 == P ? n : cut(p + 1);
  s.mine.x.assign(s.all.x.begin() + s.begin, s.all.x.begin() + s.end);
  s.mine.w.assign(s.end - s.begin, 0.0);
  s.my_targets.assign(s.targets.begin() + s.begin, s.targets.begin() + s.end);
  return s;
}

TEST(TransportMpi, SpreadOptimalTransportOnShuffledRows) {
  // sdot::OptimalTransport with spread input (what sdot-ot and Python run): rows in no spatial
  // order, processes without seeds, 1 and 3 boxes per process. The weights, back in the
  // caller's rows, give the targets by the brute-force reference; a solve from them takes no
  // step.
  for (int boxes : {1, 3}) {
    auto const ranks = loom::WorldRanks(boxes);
    int const n = 701;
    auto const s = shuffled_problem(ranks, n, 43);
    sdot::OptimalTransport ot(loom::spread(positions_view(s.mine), ranks),
                              loom::spread(view_of(s.my_targets), ranks), unit_square());
    static_assert(std::is_same<decltype(ot), sdot::OptimalTransport<Kokkos::DefaultExecutionSpace,
                                                                    sdot::SpreadInput>>::value);
    auto const result = ot.solve();
    ASSERT_EQ(static_cast<int>(result.weights.extent(0)), s.end - s.begin);
    EXPECT_GE(result.statistics.newton_iterations, 1);
    auto const weights = gather_blocks(ranks, to_vector(result.weights));
    auto const measures = gather_blocks(ranks, to_vector(result.measures));
    ASSERT_EQ(static_cast<int>(weights.size()), n);
    auto const reference = brute_force(s.all.x, weights, unit_square());
    for (int i = 0; i < n; ++i) {
      ASSERT_NEAR(static_cast<double>(reference.measures[i]), s.targets[i], 1e-10)
          << "seed " << i << ", " << boxes << " boxes per process";
      ASSERT_NEAR(measures[i], s.targets[i], 1e-10) << "seed " << i;
    }
    auto const again = ot.solve(loom::spread(result.weights, ranks));
    EXPECT_EQ(again.statistics.newton_iterations, 0);
    EXPECT_EQ(to_vector(again.weights), to_vector(result.weights));
  }
}

TEST(TransportMpi, SpreadOptimalTransportNamesTheCallersRows) {
  // Errors name the rows as the caller numbers them, on every process alike: a bad target,
  // and an empty cell (two coincident seeds).
  auto const ranks = loom::WorldRanks();
  int const n = 401;
  {
    auto s = shuffled_problem(ranks, n, 44);
    if (s.begin <= 77 && 77 < s.end)
      s.my_targets[77 - s.begin] = -1;
    try {
      sdot::OptimalTransport ot(loom::spread(positions_view(s.mine), ranks),
                                loom::spread(view_of(s.my_targets), ranks), unit_square());
      ADD_FAILURE() << "no error";
    } catch (std::invalid_argument const& e) {
      EXPECT_NE(std::string(e.what()).find("target mass 77 is -1"), std::string::npos) << e.what();
    }
  }
  auto s = shuffled_problem(ranks, n, 45);
  try {
    sdot::PowerDiagramOptions five_boxes;
    five_boxes.nb_boxes = 5;
    sdot::OptimalTransport ot(loom::spread(positions_view(s.mine), ranks),
                              loom::spread(view_of(s.my_targets), ranks), unit_square(),
                              five_boxes);
    ADD_FAILURE() << "no error";
  } catch (std::invalid_argument const& e) {
    EXPECT_NE(std::string(e.what()).find("not nb_boxes = 5"), std::string::npos) << e.what();
  }
  int const a = 37, b = 311;
  auto const copy = s.all.x[b];
  s.all.x[a] = copy;
  if (s.begin <= a && a < s.end)
    s.mine.x[a - s.begin] = copy;
  sdot::OptimalTransport ot(loom::spread(positions_view(s.mine), ranks),
                            loom::spread(view_of(s.my_targets), ranks), unit_square());
  try {
    ot.solve();
    ADD_FAILURE() << "no error";
  } catch (sdot::EmptyCellError const& e) {
    EXPECT_TRUE(e.seed() == a || e.seed() == b) << e.seed();
    EXPECT_NE(std::string(e.what()).find("cell " + std::to_string(e.seed()) + " is empty"),
              std::string::npos)
        << e.what();
  }
}

TEST(TransportMpi, BadTargetsRefusedOnEveryProcess) {
  auto const ranks = loom::WorldRanks();
  auto const c = uniform_cloud(100, 0, 34);
  ReplicatedCells cells(ranks, c, unit_square());
  int const begin = cells.begin(), size = static_cast<int>(cells.positions().extent(0));
  std::vector<double> t(size, 0.01);
  if (begin <= 77 && 77 < begin + size)
    t[77 - begin] = -1;
  try {
    sdot::solve_optimal_transport(cells, Kokkos::View<double const*>(view_of(t)),
                                  Kokkos::View<double const*>());
    ADD_FAILURE() << "no error";
  } catch (std::invalid_argument const& e) {
    EXPECT_NE(std::string(e.what()).find("target mass 77 is -1"), std::string::npos) << e.what();
  }
}

TEST(TransportMpi, WrongInitialWeightsRefusedOnEveryProcess) {
  auto const ranks = loom::WorldRanks();
  auto const c = uniform_cloud(100, 0, 35);
  ReplicatedCells cells(ranks, c, unit_square());
  int const size = static_cast<int>(cells.positions().extent(0));
  std::vector<double> t(size, 0.01);
  // The last process gives one weight too many; the others are right.
  int const last = ranks.process_count() - 1;
  std::vector<double> w(size + (ranks.process_rank() == last ? 1 : 0), 0.0);
  try {
    sdot::solve_optimal_transport(cells, Kokkos::View<double const*>(view_of(t)),
                                  Kokkos::View<double const*>(view_of(w)));
    ADD_FAILURE() << "no error";
  } catch (std::invalid_argument const& e) {
    std::string const want = "initial weights";
    EXPECT_NE(std::string(e.what()).find(want), std::string::npos) << e.what();
    if (ranks.process_count() > 1)
      EXPECT_NE(std::string(e.what()).find("on process " + std::to_string(last)), std::string::npos)
          << e.what();
  }
}
