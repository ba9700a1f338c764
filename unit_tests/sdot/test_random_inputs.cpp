// Randomized adversarial inputs (a seeded fuzzer, the same cases on every run): each case
// draws a domain, a cloud and weights from generators of the hard cases, computes the diagram
// at 1, 2, 3, 8 and 64 boxes, and at 1 and 3 boxes from coarser diagrams (coarse_to_fine);
// recomputes it with warm_start after its weights move; and, spread over the MPI processes
// (1 to 4, run under mpiexec; without MPI one process), computes it with 1 and 2 boxes per
// process; each against the brute force (long double), every measure and centroid finite.
// Built and run under ASan/UBSan by the sanitize preset. A failing case prints its number:
// SDOT_RANDOM_CASE=k runs that one alone (with SDOT_RANDOM_DUMP=1, printing it);
// SDOT_RANDOM_CASES=n runs the first n (default 400, 200 recomputed, 100 spread; 80 000 pass
// the first two).
#include "brute_force.hpp"
#include "clouds.hpp"
#include "random_cases.hpp"

#include <loom/loom.hpp>
#include <sdot/sdot.hpp>

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <limits>
#include <random>
#include <sstream>
#include <string>
#include <vector>

using namespace sdot_test;

namespace {

/// The case's weights moved by up to half its squared spacing (a recomputation's new weights).
std::vector<double> moved_weights(Case const& c, unsigned number) {
  std::mt19937_64 rng(7919u * number + 5);
  std::uniform_real_distribution<double> u(-0.5, 0.5);
  std::size_t const n = c.cloud.x.size();
  double const spacing2 = c.size * c.size / double(std::max<std::size_t>(n, 1));
  std::vector<double> w = c.cloud.w;
  for (auto& v : w)
    v += spacing2 * u(rng);
  return w;
}

/// The brute force's measures of case `c` with `weights`, and the tolerance of a comparison.
struct CaseReference {
  std::vector<double> measures;
  double area, tolerance;
};

CaseReference case_reference(Case const& c, std::vector<double> const& weights) {
  CaseReference out;
  out.area = sdot::domain_polygon(c.domain).area;
  out.measures = reference_measures(c, weights);
  out.tolerance = case_tolerance(c);
  if (std::getenv("SDOT_RANDOM_DUMP")) {
    std::printf("domain:\n");
    for (auto const& h : c.domain)
      std::printf("  %.17g %.17g %.17g\n", h.normal[0], h.normal[1], h.offset);
    for (std::size_t i = 0; i < weights.size(); ++i)
      std::printf("seed %zu: %.17g %.17g w %.17g ref %.17g\n", i, c.cloud.x[i][0], c.cloud.x[i][1],
                  weights[i], out.measures[i]);
  }
  return out;
}

/// Every measure finite, non-negative and within the tolerance of the reference, and their sum
/// the domain's area.
void expect_measures(std::vector<double> const& measures, CaseReference const& reference) {
  ASSERT_EQ(measures.size(), reference.measures.size());
  double sum = 0;
  for (std::size_t i = 0; i < measures.size(); ++i) {
    ASSERT_TRUE(std::isfinite(measures[i])) << "seed " << i;
    ASSERT_GE(measures[i], 0) << "seed " << i;
    ASSERT_NEAR(measures[i], reference.measures[i], reference.tolerance) << "seed " << i;
    sum += measures[i];
  }
  if (!measures.empty())
    ASSERT_NEAR(sum, reference.area, reference.tolerance);
}

/// Case `number` against the brute force: its diagram at 1, 2, 3, 8 and 64 boxes, and at 1 and
/// 3 boxes from coarser diagrams; with `recompute`, the diagram of moved weights
/// (moved_weights()) recomputed with `warm_start` from the case's at 1, 3 and 8 boxes.
void check_case(unsigned number, bool recompute = false) {
  Case const c = random_case(number);
  SCOPED_TRACE("case " + std::to_string(number) + ": " + c.description);
  std::size_t const n = c.cloud.x.size();
  std::vector<double> const weights = recompute ? moved_weights(c, number) : c.cloud.w;
  CaseReference const reference = case_reference(c, weights);
  // nb_boxes, then 1 and 3 boxes whose first cells come from coarser diagrams of 8 seeds and
  // more (coarse_to_fine; with several boxes, every rank's envelope then judges which ranks
  // may cut a cell).
  struct Run {
    int boxes;
    bool coarse;
  };
  std::vector<Run> const runs =
      recompute ? std::vector<Run>{{1, false}, {3, false}, {8, false}}
                : std::vector<Run>{{1, false},  {2, false}, {3, false}, {8, false},
                                   {64, false}, {1, true},  {3, true}};
  for (Run const run : runs) {
    SCOPED_TRACE("nb_boxes " + std::to_string(run.boxes) + (run.coarse ? ", coarse to fine" : "") +
                 (recompute ? ", recomputed" : ""));
    sdot::PowerDiagramOptions options;
    options.nb_boxes = run.boxes;
    options.warm_start = recompute;
    if (run.coarse) {
      options.coarse_to_fine = sdot::CoarseToFine::always;
      options.coarsest_level_seeds = 8;
    }
    sdot::PowerDiagram<> pd(positions_view(c.cloud), weights_view(c.cloud), c.domain, options);
    std::vector<double> measures;
    // An exception fails the case (with its number and run), not the whole test.
    try {
      if (recompute) {
        pd.measures();
        Cloud next = c.cloud;
        next.w = weights;
        pd.set_weights(weights_view(next));
      }
      measures = to_vector(pd.measures());
    } catch (std::exception const& e) {
      FAIL() << e.what();
    }
    auto const centroids = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), pd.centroids());
    for (std::size_t i = 0; i < n; ++i)
      ASSERT_TRUE(std::isfinite(centroids(i, 0)) && std::isfinite(centroids(i, 1))) << "seed " << i;
    expect_measures(measures, reference);
  }
}

/// Case `number` spread over the MPI processes (without MPI: one process), each holding a block
/// of its seeds (process p a share proportional to p + `shift`, so that with shift 0 the first
/// holds none), with 1 and 2 boxes per process, and 2 boxes per process from coarser diagrams,
/// against the brute force. Every process checks the gathered measures: they fail alike.
void check_case_spread(unsigned number) {
  Case const c = random_case(number);
  SCOPED_TRACE("case " + std::to_string(number) + ": " + c.description);
  CaseReference const reference = case_reference(c, c.cloud.w);
  struct Run {
    int boxes_per_process;
    bool coarse;
    int shift;
  };
  for (Run const run : {Run{1, false, 0}, Run{2, false, 1}, Run{2, true, 1}}) {
    auto const ranks = loom::WorldRanks(run.boxes_per_process);
    int const rank = ranks.process_rank(), size = ranks.process_count();
    SCOPED_TRACE(std::to_string(size) + " processes × " + std::to_string(run.boxes_per_process) +
                 " boxes" + (run.coarse ? ", coarse to fine" : ""));
    Cloud const mine = process_block(c.cloud, rank, size, run.shift);
    sdot::PowerDiagramOptions options;
    if (run.coarse) {
      options.coarse_to_fine = sdot::CoarseToFine::always;
      options.coarsest_level_seeds = 8;
    }
    sdot::PowerDiagram pd(loom::spread(positions_view(mine), ranks),
                          loom::spread(weights_view(mine), ranks), c.domain, options);
    std::vector<double> measures;
    try {
      auto const whole = loom::gather_to_host(pd.measures());
      measures.assign(whole.data(), whole.data() + whole.extent(0));
    } catch (std::exception const& e) {
      FAIL() << e.what();
    }
    expect_measures(measures, reference);
  }
}

} // namespace

TEST(RandomInputs, AgreeWithTheBruteForce) {
  if (several_processes())
    GTEST_SKIP() << "boxes in one process: run without mpiexec or with one process";
  for_each_case(400, [](unsigned number) { check_case(number); });
}

// The same cases spread over the MPI processes (1 to 4, and without MPI).
TEST(RandomInputs, SpreadOverProcessesAgreeWithTheBruteForce) {
  for_each_case(100, [](unsigned number) { check_case_spread(number); });
}

// The same cases' diagrams recomputed from earlier neighbours (warm_start) after their weights
// moved.
TEST(RandomInputs, RecomputationsAgreeWithTheBruteForce) {
  if (several_processes())
    GTEST_SKIP() << "boxes in one process: run without mpiexec or with one process";
  for_each_case(200, [](unsigned number) { check_case(number, true); });
}

// Seeds a few units in the last place of their coordinates apart, at 1e9 times the domain's size
// from the origin: the trend bound's half-sizes about a rounded centre (case 6257: a box of the
// 3-box tree ruled out a seed on its edge), and the envelopes' grid places, rounded as the
// absolute coordinates are (case 8570: 3 boxes from coarser diagrams), each missed a cut.
TEST(RandomInputs, SeedsAtTheResolutionOfDoubleFarFromTheOrigin) {
  if (several_processes())
    GTEST_SKIP() << "boxes in one process: run without mpiexec or with one process";
  for (unsigned const number : {6257u, 8570u})
    check_case(number);
}
