// The diagram of seeds spread over MPI processes (and boxes within them) equals the one-box
// diagram computed by one process. Without MPI, the same with one process and its boxes.
#include "brute_force.hpp"
#include "clouds.hpp"
#include "reference_cases.hpp"
#include "test_setup.hpp"
#include "transport_weights.hpp"

#include <loom/loom.hpp>
#include <sdot/jacobian.hpp>
#include <sdot/sdot.hpp>

#include <gtest/gtest.h>
#ifdef LOOM_ENABLE_MPI
#include <mpi.h>
#endif

#include <algorithm>
#include <cmath>
#include <limits>
#include <numeric>

using namespace sdot_test;

namespace {

/// Rows [first, first + count) of a cloud.
Cloud block(Cloud const& c, std::size_t first, std::size_t count) {
  Cloud b;
  b.x.assign(c.x.begin() + first, c.x.begin() + first + count);
  b.w.assign(c.w.begin() + first, c.w.begin() + first + count);
  return b;
}

/// Splits n seeds over the processes: `uneven` gives process p a share proportional to
/// p (process 0 gets none), else an even split.
std::vector<std::size_t> split(std::size_t n, int processes, bool uneven) {
  std::vector<std::size_t> first(processes + 1, 0);
  std::size_t weight_total = 0;
  for (int p = 0; p < processes; ++p)
    weight_total += uneven ? p : 1;
  for (int p = 0; p < processes; ++p) {
    std::size_t share = weight_total ? n * (uneven ? p : 1) / weight_total : 0;
    first[p + 1] = first[p] + share;
  }
  first[processes] = n;
  return first;
}

void expect_spread_equals_one_box(Cloud const& c, int boxes_per_process, bool uneven) {
  auto ranks = loom::WorldRanks(boxes_per_process);
  int const rank = ranks.process_rank(), size = ranks.process_count();
  auto first = split(c.x.size(), size, uneven);
  Cloud mine = block(c, first[rank], first[rank + 1] - first[rank]);
  sdot::PowerDiagram pd(loom::spread(positions_view(mine), ranks),
                        loom::spread(weights_view(mine), ranks), unit_square());
  auto m = pd.measures();
  EXPECT_NEAR(m.sum(), 1.0, 1e-12);
  auto whole = loom::gather_to_host(m);
  ASSERT_EQ(whole.extent(0), c.x.size());
  sdot::PowerDiagram<> one(positions_view(c), weights_view(c), unit_square());
  auto reference = to_vector(one.measures());
  for (std::size_t i = 0; i < reference.size(); ++i)
    EXPECT_NEAR(whole(i), reference[i], 1e-12)
        << "seed " << i << ", " << size << " processes × " << boxes_per_process << " boxes";
  EXPECT_EQ(pd.statistics().ranks, size * boxes_per_process);
  // This process's block, in its input order.
  auto local = to_vector(m.value());
  for (std::size_t i = 0; i < local.size(); ++i)
    EXPECT_EQ(local[i], whole(first[rank] + i));
  // The execution space instance first: the same bits.
  sdot::PowerDiagram on_space(Kokkos::DefaultExecutionSpace{},
                              loom::spread(positions_view(mine), ranks),
                              loom::spread(weights_view(mine), ranks), unit_square());
  static_assert(decltype(on_space)::is_spread);
  auto again = to_vector(on_space.measures().value());
  ASSERT_EQ(again.size(), local.size());
  for (std::size_t i = 0; i < local.size(); ++i)
    EXPECT_EQ(again[i], local[i]) << "seed " << first[rank] + i;
}

} // namespace

TEST(SpreadMpi, UniformEvenBlocks) {
  expect_spread_equals_one_box(uniform_cloud(3000, 1.0 / 3000, 41), 1, false);
}

TEST(SpreadMpi, UnevenBlocksAndAnEmptyProcess) {
  expect_spread_equals_one_box(clustered_cloud(2000, 42), 1, true);
}

TEST(SpreadMpi, SeveralBoxesPerProcess) {
  expect_spread_equals_one_box(uniform_cloud(2000, 2.0 / 2000, 43), 3, true);
}

TEST(SpreadMpi, LatticeAndHugeWeight) {
  auto c = lattice_cloud(30);
  c.w[465] = 0.05;
  expect_spread_equals_one_box(c, 2, false);
}

TEST(SpreadMpi, CloudsThatFillPartOfTheDomain) {
  for (std::string kind : {"corner", "band", "line", "clusters"})
    for (int boxes_per_process : {1, 3}) {
      SCOPED_TRACE(kind + ", " + std::to_string(boxes_per_process) + " boxes per process");
      expect_spread_equals_one_box(partial_cloud(kind, 1500, 45), boxes_per_process, false);
    }
}

TEST(SpreadMpi, ClusteredCloud) {
  for (int boxes_per_process : {1, 3}) {
    SCOPED_TRACE(std::to_string(boxes_per_process) + " boxes per process");
    expect_spread_equals_one_box(clustered_cloud(1500, 46), boxes_per_process, false);
  }
}

TEST(SpreadMpi, WholeCloudSpreadByLoom) {
  // Every process holds the whole cloud; loom::spread_host keeps each process's even block in
  // loom's row layout (LayoutRight), which the diagram takes in its own layout.
  Cloud const c = clustered_cloud(400, 11);
  auto ranks = loom::WorldRanks(2);
  auto positions = positions_view<Kokkos::HostSpace>(c);
  auto weights = weights_view<Kokkos::HostSpace>(c);
  sdot::PowerDiagram pd(loom::spread_host(positions, ranks), loom::spread_host(weights, ranks),
                        unit_square());
  auto whole = loom::gather_to_host(pd.measures());
  ASSERT_EQ(whole.extent(0), c.x.size());
  auto const reference = brute_force(c.x, c.w, unit_square()).measures;
  for (std::size_t i = 0; i < reference.size(); ++i)
    EXPECT_NEAR(whole(i), reference[i], 1e-12) << "seed " << i;
}

TEST(SpreadMpi, BadSeedOnOneProcessIsReportedEverywhere) {
  auto ranks = loom::WorldRanks();
  int const rank = ranks.process_rank(), size = ranks.process_count();
  auto c = uniform_cloud(100, 0, 44);
  auto first = split(c.x.size(), size, false);
  Cloud mine = block(c, first[rank], first[rank + 1] - first[rank]);
  if (rank == size - 1)
    mine.w.back() = std::nan("");
  try {
    sdot::PowerDiagram pd(loom::spread(positions_view(mine), ranks),
                          loom::spread(weights_view(mine), ranks), unit_square());
    ADD_FAILURE() << "no exception";
  } catch (std::invalid_argument const& e) {
    EXPECT_NE(std::string(e.what()).find("seed 99"), std::string::npos) << e.what();
  }
}

TEST(SpreadMpi, CellsTooLargeForTheirPolygonsAreCutAgainWithTheSameBits) {
  // A huge weight: the cells with more vertices than the first polygons hold are cut again
  // alone, on the process that found them; every process's outputs have the bits of a
  // computation whose polygons hold every cell at once.
  auto c = uniform_cloud(1500, 0, 26);
  c.x[0] = {0.5, 0.5};
  c.w[0] = 0.2;
  for (int boxes_per_process : {1, 3}) {
    SCOPED_TRACE(std::to_string(boxes_per_process) + " boxes per process");
    auto ranks = loom::WorldRanks(boxes_per_process);
    int const rank = ranks.process_rank();
    auto const first = split(c.x.size(), ranks.process_count(), false);
    Cloud const mine = block(c, first[rank], first[rank + 1] - first[rank]);
    // msg_capacity sizes the travelling cells' polygons, vertex_capacity those of one box.
    auto local_outputs = [&](int capacity, int& reruns) {
      sdot::PowerDiagramOptions options;
      options.keep_polygons = true;
      options.msg_capacity = capacity;
      options.vertex_capacity = 2 * capacity;
      sdot::PowerDiagram pd(loom::spread(positions_view(mine), ranks),
                            loom::spread(weights_view(mine), ranks), unit_square(), options);
      std::vector<double> bits = to_vector(pd.measures().value());
      auto const polygons = pd.cell_polygons();
      auto const offsets =
          Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), polygons.offsets);
      auto const vertices =
          Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), polygons.vertices);
      auto const labels =
          Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), polygons.edge_sources);
      bits.insert(bits.end(), offsets.data(), offsets.data() + offsets.extent(0));
      for (std::size_t k = 0; k < vertices.extent(0); ++k)
        bits.insert(bits.end(), {vertices(k, 0), vertices(k, 1), double(labels(k))});
      reruns = pd.statistics().reruns + pd.statistics().vertex_reruns;
      return bits;
    };
    int tight_reruns = 0, roomy_reruns = 0;
    auto const tight = local_outputs(16, tight_reruns);
    auto const roomy = local_outputs(256, roomy_reruns);
    EXPECT_GT(tight_reruns, 0);
    if (ranks.size() > 1) // one box past 64 vertices builds every cell in a pass of its own
      EXPECT_EQ(roomy_reruns, 0);
    ASSERT_EQ(tight, roomy);
  }
}

TEST(SpreadMpi, NewWeightsGiveWhatANewDiagramGives) {
  // set_weights() on spread input (one box: the index and, with warm_start, the neighbours are
  // kept; several ranks: the boxes and their indexes, and with warm_start each box's
  // neighbours for its first round): the measures and kept polygons of a new
  // diagram, bit for bit (warm_start: to round-off); a bad weight on one process is refused on
  // every process, naming its global index, and changes nothing.
  auto const c = clustered_cloud(1500, 47);
  auto d = c;
  for (std::size_t i = 0; i < d.w.size(); ++i)
    d.w[i] = (i % 7) * 3e-4 - 1e-3 * std::sin(double(i)); // some negative
  for (int boxes_per_process : {1, 3})
    for (bool warm : {false, true}) {
      SCOPED_TRACE(std::to_string(boxes_per_process) + " boxes per process, warm_start " +
                   std::to_string(warm));
      auto ranks = loom::WorldRanks(boxes_per_process);
      int const rank = ranks.process_rank(), size = ranks.process_count();
      auto first = split(c.x.size(), size, true);
      std::size_t const count = first[rank + 1] - first[rank];
      Cloud const mine = block(c, first[rank], count), mine_d = block(d, first[rank], count);
      sdot::PowerDiagramOptions options;
      options.keep_polygons = true;
      options.warm_start = warm;
      sdot::PowerDiagram reused(loom::spread(positions_view(mine), ranks),
                                loom::spread(weights_view(mine), ranks), unit_square(), options);
      reused.measures();
      reused.set_weights(loom::spread(weights_view(mine_d), ranks));
      sdot::PowerDiagram fresh(loom::spread(positions_view(mine), ranks),
                               loom::spread(weights_view(mine_d), ranks), unit_square(), options);
      auto const a = to_vector(reused.measures().value());
      auto const b = to_vector(fresh.measures().value());
      ASSERT_EQ(a.size(), count);
      EXPECT_TRUE(reused.statistics().index_kept);
      EXPECT_FALSE(fresh.statistics().index_kept);
      if (warm) // one box or several ranks: cells from their earlier neighbours
        EXPECT_GT(reused.statistics().warm_cells, 0);
      for (std::size_t i = 0; i < a.size(); ++i)
        if (warm)
          ASSERT_NEAR(a[i], b[i], 1e-14) << "seed " << first[rank] + i;
        else
          ASSERT_EQ(a[i], b[i]) << "seed " << first[rank] + i;
      if (!warm) {
        EXPECT_EQ(to_vector(reused.cell_polygons().edge_sources),
                  to_vector(fresh.cell_polygons().edge_sources));
        auto const va = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(),
                                                            reused.cell_polygons().vertices);
        auto const vb = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(),
                                                            fresh.cell_polygons().vertices);
        ASSERT_EQ(va.extent(0), vb.extent(0));
        for (std::size_t k = 0; k < va.extent(0); ++k)
          ASSERT_TRUE(va(k, 0) == vb(k, 0) && va(k, 1) == vb(k, 1)) << "vertex " << k;
      }
      Cloud bad = mine_d;
      bool const holds_bad = first[rank] <= 1234 && 1234 < first[rank + 1];
      if (holds_bad)
        bad.w[1234 - first[rank]] = std::nan("");
      try {
        reused.set_weights(loom::spread(weights_view(bad), ranks));
        ADD_FAILURE() << "no exception";
      } catch (std::invalid_argument const& e) {
        EXPECT_NE(std::string(e.what()).find("seed 1234"), std::string::npos) << e.what();
      }
      auto const again = to_vector(reused.measures().value());
      for (std::size_t i = 0; i < a.size(); ++i)
        ASSERT_EQ(again[i], a[i]) << "seed " << first[rank] + i;
    }
}

TEST(SpreadMpi, AbandonBelowGivesUpOnEveryProcessAlike) {
  // Travelling cells (1 and 3 boxes per process, and 8 and 64 boxes of whole input): at the
  // smallest measure nothing is given up and the bits are those without the option; above it
  // every process gives up, and refuses the polygons.
  auto const c = uniform_cloud(1200, 0, 48); // Voronoi: no empty cell
  auto const reference = brute_force(c.x, c.w, unit_square()).measures;
  double smallest = 1;
  for (auto m : reference)
    smallest = std::fmin(smallest, static_cast<double>(m));
  ASSERT_GT(smallest, 0);
  for (bool keep : {false, true})
    for (int boxes_per_process : {1, 3}) {
      SCOPED_TRACE(std::to_string(boxes_per_process) + " boxes per process, keep_polygons " +
                   std::to_string(keep));
      auto ranks = loom::WorldRanks(boxes_per_process);
      int const rank = ranks.process_rank(), size = ranks.process_count();
      auto first = split(c.x.size(), size, true);
      Cloud const mine = block(c, first[rank], first[rank + 1] - first[rank]);
      sdot::PowerDiagramOptions options;
      options.keep_polygons = keep;
      sdot::PowerDiagram plain(loom::spread(positions_view(mine), ranks),
                               loom::spread(weights_view(mine), ranks), unit_square(), options);
      auto const expected = to_vector(plain.measures().value());
      options.abandon_below = smallest * (1 - 1e-9);
      sdot::PowerDiagram kept(loom::spread(positions_view(mine), ranks),
                              loom::spread(weights_view(mine), ranks), unit_square(), options);
      EXPECT_EQ(to_vector(kept.measures().value()), expected);
      EXPECT_FALSE(kept.statistics().abandoned);
      EXPECT_NO_THROW(kept.cell_polygons());
      kept.set_abandon_below(1.5 / double(c.x.size())); // above a third of the cells, at least
      kept.measures();
      EXPECT_TRUE(kept.statistics().abandoned);
      EXPECT_THROW(kept.cell_polygons(), std::logic_error);
      kept.set_abandon_below(-std::numeric_limits<double>::infinity());
      EXPECT_EQ(to_vector(kept.measures().value()), expected);
      EXPECT_FALSE(kept.statistics().abandoned);
    }
  if (loom::WorldRanks().process_count() > 1)
    return; // whole input: the same on every process, tested with one
  for (int boxes : {8, 64}) {
    sdot::PowerDiagramOptions options;
    options.nb_boxes = boxes;
    options.abandon_below = 1.5 / double(c.x.size());
    sdot::PowerDiagram<> given_up(positions_view(c), weights_view(c), unit_square(), options);
    given_up.measures();
    EXPECT_TRUE(given_up.statistics().abandoned) << boxes << " boxes";
    given_up.set_abandon_below(smallest * (1 - 1e-9));
    auto const m = to_vector(given_up.measures());
    EXPECT_FALSE(given_up.statistics().abandoned) << boxes << " boxes";
    for (std::size_t i = 0; i < m.size(); ++i)
      ASSERT_NEAR(m[i], static_cast<double>(reference[i]), 1e-12) << "seed " << i;
  }
}

TEST(SpreadMpi, AbandonBelowInOneBoxGivesUpEverywhere) {
  // Warm recomputations at new weights (set_weights(), warm_start). The weights shifted by a
  // constant: the same diagram, whose boxes certify every first-round cell without a search,
  // while the rounds read the boxes' bounds at the new weights. Then one seed's cell emptied:
  // the box that holds it gives up during its first-round cells, and with it every process,
  // before the rounds; the next computations, at the same weights without the option and at
  // the first weights, are exact.
  auto const c = uniform_cloud(1200, 0, 48); // Voronoi: no empty cell
  auto shifted = c, d = c;
  for (auto& w : shifted.w)
    w += 0.5;
  d.w[37] = -1; // its cell is empty at these weights
  auto const reference = brute_force(c.x, c.w, unit_square()).measures;
  auto const emptied = brute_force(d.x, d.w, unit_square()).measures;
  ASSERT_EQ(emptied[37], 0);
  double smallest = 1;
  for (auto m : reference)
    smallest = std::fmin(smallest, static_cast<double>(m));
  auto const expect_near = [](std::vector<double> const& got, auto const& want, std::size_t first) {
    for (std::size_t i = 0; i < got.size(); ++i)
      ASSERT_NEAR(got[i], static_cast<double>(want[first + i]), 1e-12) << "seed " << first + i;
  };
  for (int boxes_per_process : {1, 3}) {
    SCOPED_TRACE(std::to_string(boxes_per_process) + " boxes per process");
    auto ranks = loom::WorldRanks(boxes_per_process);
    int const rank = ranks.process_rank(), size = ranks.process_count();
    auto first = split(c.x.size(), size, true);
    std::size_t const count = first[rank + 1] - first[rank];
    Cloud const mine = block(c, first[rank], count), mine_d = block(d, first[rank], count),
                mine_shifted = block(shifted, first[rank], count);
    sdot::PowerDiagramOptions options;
    options.warm_start = true;
    options.abandon_below = smallest * (1 - 1e-9);
    sdot::PowerDiagram diagram(loom::spread(positions_view(mine), ranks),
                               loom::spread(weights_view(mine), ranks), unit_square(), options);
    expect_near(to_vector(diagram.measures().value()), reference, first[rank]);
    EXPECT_FALSE(diagram.statistics().abandoned);
    diagram.set_weights(loom::spread(weights_view(mine_shifted), ranks));
    expect_near(to_vector(diagram.measures().value()), reference, first[rank]);
    EXPECT_FALSE(diagram.statistics().abandoned);
    diagram.set_weights(loom::spread(weights_view(mine_d), ranks));
    diagram.measures();
    EXPECT_TRUE(diagram.statistics().abandoned);
    diagram.set_abandon_below(-std::numeric_limits<double>::infinity());
    expect_near(to_vector(diagram.measures().value()), emptied, first[rank]);
    EXPECT_FALSE(diagram.statistics().abandoned);
    diagram.set_abandon_below(smallest * (1 - 1e-9));
    diagram.set_weights(loom::spread(weights_view(mine), ranks));
    expect_near(to_vector(diagram.measures().value()), reference, first[rank]);
    EXPECT_FALSE(diagram.statistics().abandoned);
  }
  if (loom::WorldRanks().process_count() > 1)
    return; // whole input: the same on every process, tested with one
  for (int boxes : {2, 8, 64}) {
    SCOPED_TRACE(std::to_string(boxes) + " boxes");
    sdot::PowerDiagramOptions options;
    options.nb_boxes = boxes;
    options.warm_start = true;
    options.abandon_below = smallest * (1 - 1e-9);
    sdot::PowerDiagram<> diagram(positions_view(c), weights_view(c), unit_square(), options);
    expect_near(to_vector(diagram.measures()), reference, 0);
    diagram.set_weights(weights_view(shifted));
    expect_near(to_vector(diagram.measures()), reference, 0);
    diagram.set_weights(weights_view(d));
    diagram.measures();
    EXPECT_TRUE(diagram.statistics().abandoned);
    diagram.set_abandon_below(-std::numeric_limits<double>::infinity());
    expect_near(to_vector(diagram.measures()), emptied, 0);
    diagram.set_weights(weights_view(c));
    expect_near(to_vector(diagram.measures()), reference, 0);
  }
}

TEST(SpreadMpi, CoarseToFineOnEveryProcess) {
  // Each box's first-round cells from coarser diagrams of its own seeds (a per-process choice:
  // no collective), cells far from their seeds and many empty: against brute force, at 1 and
  // 2 boxes per process.
  auto const c =
      with_displacing_weights(clustered_cloud(2400, 61), {0.7, 0.75}, 9.0, {-0.1, 0.05}, 62);
  auto const ref = brute_force(c.x, c.w, unit_square());
  for (int boxes_per_process : {1, 2}) {
    auto ranks = loom::WorldRanks(boxes_per_process);
    int const rank = ranks.process_rank(), size = ranks.process_count();
    auto first = split(c.x.size(), size, /*uneven=*/true);
    Cloud mine = block(c, first[rank], first[rank + 1] - first[rank]);
    sdot::PowerDiagramOptions options;
    options.coarse_to_fine = sdot::CoarseToFine::always;
    options.coarsest_level_seeds = 32;
    sdot::PowerDiagram pd(loom::spread(positions_view(mine), ranks),
                          loom::spread(weights_view(mine), ranks), unit_square(), options);
    auto whole = loom::gather_to_host(pd.measures());
    ASSERT_EQ(whole.extent(0), ref.measures.size());
    for (std::size_t i = 0; i < ref.measures.size(); ++i)
      EXPECT_NEAR(whole(i), ref.measures[i], 1e-12)
          << "seed " << i << ", " << size << " processes x " << boxes_per_process;
    if (size * boxes_per_process > 1) // the same statistics on every process
      EXPECT_GE(pd.statistics().coarse_levels, 1);
  }
}

TEST(SpreadMpi, CellsFarFromTheirSeedsStayHome) {
  // A clustered cloud at the weights of its transport towards uniform masses (cells far from
  // their seeds). With each box's first-round cells built before round 0 (coarser diagrams),
  // every rank's envelope is known on every process: at most a fourth of the cells travel that
  // travel without (each box searched in round 0), the same count on every process, for the
  // same measures to round-off.
  Cloud const c = at_transport_weights(clustered_cloud(1500, 88));
  for (int boxes_per_process : {1, 2}) {
    auto ranks = loom::WorldRanks(boxes_per_process);
    int const rank = ranks.process_rank(), size = ranks.process_count();
    if (size * boxes_per_process == 1)
      continue;
    SCOPED_TRACE(std::to_string(size) + " processes x " + std::to_string(boxes_per_process));
    auto first = split(c.x.size(), size, /*uneven=*/true);
    Cloud mine = block(c, first[rank], first[rank + 1] - first[rank]);
    auto const diagram = [&](sdot::CoarseToFine coarse, long& travelled) {
      sdot::PowerDiagramOptions options;
      options.coarse_to_fine = coarse;
      sdot::PowerDiagram pd(loom::spread(positions_view(mine), ranks),
                            loom::spread(weights_view(mine), ranks), unit_square(), options);
      auto const m = to_vector(pd.measures().value());
      travelled = pd.statistics().travelled_cells;
      return m;
    };
    long without = 0, with = 0;
    auto const searched = diagram(sdot::CoarseToFine::never, without);
    auto const m = diagram(sdot::CoarseToFine::always, with);
    EXPECT_LT(4 * with, without) << without << " then " << with;
    auto const everywhere = ranks.allgather(std::vector<long>{with});
    for (long w : everywhere)
      EXPECT_EQ(w, with);
    ASSERT_EQ(m.size(), searched.size());
    for (std::size_t i = 0; i < m.size(); ++i)
      ASSERT_NEAR(m[i], searched[i], 1e-13) << "seed " << first[rank] + i;
  }
}

TEST(SpreadMpi, EveryReferenceCase) {
  for (int boxes_per_process : {1, 2}) {
    auto ranks = loom::WorldRanks(boxes_per_process);
    int const rank = ranks.process_rank(), size = ranks.process_count();
    for (auto const& rc : reference_cases()) {
      auto const ref = brute_force(rc.cloud.x, rc.cloud.w, rc.domain);
      double const area = static_cast<double>(sdot_test::area(domain(rc.domain)));
      auto first = split(rc.cloud.x.size(), size, /*uneven=*/true);
      Cloud mine = block(rc.cloud, first[rank], first[rank + 1] - first[rank]);
      sdot::PowerDiagram pd(loom::spread(positions_view(mine), ranks),
                            loom::spread(weights_view(mine), ranks), rc.domain);
      auto whole = loom::gather_to_host(pd.measures());
      ASSERT_EQ(whole.extent(0), ref.measures.size());
      for (std::size_t i = 0; i < ref.measures.size(); ++i)
        EXPECT_NEAR(whole(i), ref.measures[i], 1e-12 * area)
            << rc.name << ", seed " << i << ", " << size << " processes x " << boxes_per_process;
    }
  }
}

namespace {

/// With options.same_bits, the diagram spread over the processes (and boxes) has the bits of
/// the one-box diagram: measures, centroids and this process's rows of the Jacobian.
// `kept_vertices_per_seed`: the room of the distributed diagram's kept vertices (1: rounds are
// cut again with more).
void expect_same_bits_as_one_box(Cloud const& c, int boxes_per_process, bool uneven,
                                 int kept_vertices_per_seed = 10) {
  sdot::PowerDiagramOptions options;
  options.same_bits = true;
  sdot::PowerDiagram<> one(positions_view(c), weights_view(c), unit_square(), options);
  auto const reference = to_vector(one.measures());
  auto const reference_centroids =
      Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), one.centroids());
  auto const reference_jacobian = sdot::measure_jacobian(one, positions_view(c));

  auto ranks = loom::WorldRanks(boxes_per_process);
  int const rank = ranks.process_rank(), size = ranks.process_count();
  auto first = split(c.x.size(), size, uneven);
  std::size_t const count = first[rank + 1] - first[rank];
  Cloud mine = block(c, first[rank], count);
  auto const positions = positions_view(mine);
  options.kept_vertices_per_seed = kept_vertices_per_seed;
  sdot::PowerDiagram pd(loom::spread(positions, ranks), loom::spread(weights_view(mine), ranks),
                        unit_square(), options);
  auto const whole = loom::gather_to_host(pd.measures());
  auto const centroids = loom::gather_to_host(pd.centroids());
  ASSERT_EQ(whole.extent(0), c.x.size());
  for (std::size_t i = 0; i < c.x.size(); ++i) {
    ASSERT_EQ(whole(i), reference[i]) << "measure of seed " << i;
    ASSERT_EQ(centroids(i, 0), reference_centroids(i, 0)) << "centroid of seed " << i;
    ASSERT_EQ(centroids(i, 1), reference_centroids(i, 1)) << "centroid of seed " << i;
  }
  // This process's rows of the Jacobian, against the same rows of the one-box Jacobian.
  auto const jacobian = sdot::measure_jacobian(pd.execution_space_instance(), ranks,
                                               sdot::ConstPoints<>(positions), pd.cell_polygons());
  auto host = [](auto const& v) {
    return Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), v);
  };
  auto const rows = host(jacobian.global.graph.row_map);
  auto const columns = host(jacobian.global.graph.entries);
  auto const values = host(jacobian.global.values);
  auto const reference_rows = host(reference_jacobian.global.graph.row_map);
  auto const reference_columns = host(reference_jacobian.global.graph.entries);
  auto const reference_values = host(reference_jacobian.global.values);
  for (std::size_t i = 0; i < count; ++i) {
    std::size_t const g = first[rank] + i;
    ASSERT_EQ(rows(i + 1) - rows(i), reference_rows(g + 1) - reference_rows(g)) << "row " << g;
    for (int k = 0; k < int(rows(i + 1) - rows(i)); ++k) {
      ASSERT_EQ(columns(rows(i) + k), reference_columns(reference_rows(g) + k)) << "row " << g;
      ASSERT_EQ(values(rows(i) + k), reference_values(reference_rows(g) + k)) << "row " << g;
    }
  }
}

} // namespace

TEST(SpreadMpi, SameBitsAsOneBox) {
  for (int boxes_per_process : {1, 2}) {
    SCOPED_TRACE(std::to_string(boxes_per_process) + " boxes per process");
    expect_same_bits_as_one_box(uniform_cloud(2000, 1.0 / 2000, 61), boxes_per_process, false);
    expect_same_bits_as_one_box(lattice_cloud(30), boxes_per_process, true);
    expect_same_bits_as_one_box(displaced_cells_cloud(1500, 62), boxes_per_process, true);
    expect_same_bits_as_one_box(partial_cloud("clusters", 1500, 63), boxes_per_process, false);
    expect_same_bits_as_one_box(partial_cloud("band", 1500, 64), boxes_per_process, true, 1);
  }
}

namespace {

/// This process's values of `v` from every process, in process order.
template <class T>
std::vector<T> gather_all(loom::Ranks const& ranks, std::vector<T> const& v) {
  auto const counts = ranks.allgather(std::vector<std::int64_t>{std::int64_t(v.size())});
  std::vector<T> padded;
  std::int64_t most = 0;
  for (auto c : counts)
    most = std::max(most, c);
  padded = v;
  padded.resize(most);
  auto const all = ranks.allgather(padded);
  std::vector<T> out;
  for (int p = 0; p < ranks.process_count(); ++p)
    out.insert(out.end(), all.begin() + p * most, all.begin() + p * most + counts[p]);
  return out;
}

void expect_spatial_blocks(Cloud const& c, int boxes_per_process, bool uneven) {
  auto ranks = loom::WorldRanks(boxes_per_process);
  int const rank = ranks.process_rank(), size = ranks.process_count();
  auto first = split(c.x.size(), size, uneven);
  std::size_t const count = first[rank + 1] - first[rank];
  Cloud mine = block(c, first[rank], count);
  Kokkos::DefaultExecutionSpace space;
  sdot::SpatialBlocks<> blocks(space, ranks, sdot::ConstPoints<>(positions_view(mine)));
  ASSERT_EQ(blocks.input_count(), static_cast<int>(count));
  int const m = blocks.spatial_count();
  auto const gids = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), blocks.spatial_gids());
  auto const x = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(),
                                                     blocks.to_spatial(positions_view(mine)));
  auto const w = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(),
                                                     blocks.to_spatial(weights_view(mine)));
  ASSERT_EQ(static_cast<int>(x.extent(0)), m);
  // The positions the plan kept at construction are those that to_spatial() moves.
  auto const kept =
      Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), blocks.spatial_positions());
  ASSERT_EQ(static_cast<int>(kept.extent(0)), m);
  for (int k = 0; k < m; ++k) {
    ASSERT_EQ(kept(k, 0), x(k, 0)) << "spatial seed " << k;
    ASSERT_EQ(kept(k, 1), x(k, 1)) << "spatial seed " << k;
  }
  // Each seed's values arrive with it, exactly.
  std::vector<std::int64_t> mine_gids(m);
  double lo[2] = {1e300, 1e300}, hi[2] = {-1e300, -1e300};
  for (int k = 0; k < m; ++k) {
    mine_gids[k] = gids(k);
    ASSERT_EQ(x(k, 0), c.x[gids(k)][0]) << "spatial seed " << k;
    ASSERT_EQ(x(k, 1), c.x[gids(k)][1]) << "spatial seed " << k;
    ASSERT_EQ(w(k), c.w[gids(k)]) << "spatial seed " << k;
    for (int d = 0; d < 2; ++d) {
      lo[d] = std::min(lo[d], x(k, d));
      hi[d] = std::max(hi[d], x(k, d));
    }
  }
  // Within a block, the seeds follow a space-filling curve: consecutive seeds are near each
  // other. The path through them is then shorter than 4 √(m · area of their bounding box),
  // against about m / 2 √(area) in random order.
  if (m >= 64 && hi[0] > lo[0] && hi[1] > lo[1]) {
    double path = 0;
    for (int k = 1; k < m; ++k)
      path += std::hypot(x(k, 0) - x(k - 1, 0), x(k, 1) - x(k - 1, 1));
    EXPECT_LT(path, 4 * std::sqrt(m * (hi[0] - lo[0]) * (hi[1] - lo[1])))
        << m << " seeds in [" << lo[0] << ", " << hi[0] << "] × [" << lo[1] << ", " << hi[1] << "]";
  }
  // Every seed in exactly one spatial block; the blocks balanced to a seed.
  auto all = gather_all(ranks, mine_gids);
  std::sort(all.begin(), all.end());
  ASSERT_EQ(all.size(), c.x.size());
  for (std::size_t i = 0; i < all.size(); ++i)
    ASSERT_EQ(all[i], static_cast<std::int64_t>(i));
  auto const counts = ranks.allgather(std::vector<int>{m});
  auto const [fewest, most] = std::minmax_element(counts.begin(), counts.end());
  EXPECT_LE(*most - *fewest, 1) << "spatial blocks of " << *fewest << " to " << *most << " seeds";
  // Spatial: the blocks' bounding boxes do not overlap (their areas add up to at most the
  // cloud's); input blocks of a uniform cloud each span the whole square.
  double const area = m ? (hi[0] - lo[0]) * (hi[1] - lo[1]) : 0;
  auto const areas = ranks.allgather(std::vector<double>{area});
  EXPECT_LE(std::accumulate(areas.begin(), areas.end(), 0.0), 1.0 + 1e-12);
  // And back, bit for bit.
  auto const back = Kokkos::create_mirror_view_and_copy(
      Kokkos::HostSpace(), blocks.to_input(blocks.to_spatial(weights_view(mine))));
  auto const back_x = Kokkos::create_mirror_view_and_copy(
      Kokkos::HostSpace(), blocks.to_input(blocks.to_spatial(positions_view(mine))));
  ASSERT_EQ(back.extent(0), count);
  for (std::size_t i = 0; i < count; ++i) {
    ASSERT_EQ(back(i), mine.w[i]) << "seed " << first[rank] + i;
    ASSERT_EQ(back_x(i, 0), mine.x[i][0]) << "seed " << first[rank] + i;
    ASSERT_EQ(back_x(i, 1), mine.x[i][1]) << "seed " << first[rank] + i;
  }
  // A wrong size on one process is refused on every process alike.
  Kokkos::View<double*> wrong("wrong", rank == size - 1 ? count + 1 : count);
  try {
    blocks.to_spatial(wrong);
    ADD_FAILURE() << "no error";
  } catch (loom::Error const& e) {
    EXPECT_TRUE(e.collective());
    EXPECT_NE(std::string(e.what()).find(std::to_string(first[size] - first[size - 1] + 1) +
                                         " rows given"),
              std::string::npos)
        << e.what();
  }
}

} // namespace

TEST(SpreadMpi, SpatialBlocksMoveRowsBothWays) {
  for (int boxes_per_process : {1, 3}) {
    SCOPED_TRACE(std::to_string(boxes_per_process) + " boxes per process");
    expect_spatial_blocks(uniform_cloud(1000, 1e-3, 65), boxes_per_process, false);
    expect_spatial_blocks(uniform_cloud(999, 1e-3, 66), boxes_per_process, true);
    expect_spatial_blocks(partial_cloud("corner", 700, 67), boxes_per_process, true);
    expect_spatial_blocks(uniform_cloud(2, 0, 68), boxes_per_process, false);
  }
}
