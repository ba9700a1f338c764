// The diagram computed by K boxes emulated in one process equals the one-box diagram.
#include "brute_force.hpp"
#include "clouds.hpp"
#include "host_polygon.hpp"
#include "reference_cases.hpp"
#include "test_setup.hpp"
#include "transport_weights.hpp"

#include <sdot/jacobian.hpp>
#include <sdot/sdot.hpp>

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <map>
#include <numeric>
#include <random>
#include <string>
#include <tuple>

using namespace sdot_test;

namespace {

std::vector<double> measures_with(Cloud const& c, std::vector<sdot::HalfSpace> const& hs,
                                  sdot::PowerDiagramOptions options,
                                  sdot::PowerDiagramStatistics* statistics = nullptr) {
  sdot::PowerDiagram<> pd(positions_view(c), weights_view(c), hs, options);
  auto m = to_vector(pd.measures());
  if (statistics)
    *statistics = pd.statistics();
  return m;
}

void expect_same_as_one_box(Cloud const& c, std::vector<int> const& boxes,
                            std::vector<sdot::HalfSpace> const& hs = unit_square(),
                            sdot::PowerDiagramOptions options = {}) {
  auto const reference = measures_with(c, hs, {});
  double const area = static_cast<double>(sdot_test::area(domain(hs)));
  for (int k : boxes) {
    options.nb_boxes = k;
    sdot::PowerDiagramStatistics st;
    auto m = measures_with(c, hs, options, &st);
    ASSERT_EQ(m.size(), reference.size());
    double sum = 0;
    for (std::size_t i = 0; i < m.size(); ++i) {
      EXPECT_NEAR(m[i], reference[i], 1e-12 * area) << "seed " << i << " with " << k << " boxes";
      sum += m[i];
    }
    if (!c.x.empty())
      EXPECT_NEAR(sum, area, 1e-12 * area) << k << " boxes";
    EXPECT_EQ(st.ranks, k);
  }
}

/// Each polygon of `polygons` (cell_polygons()) has the area `measures` gives its cell.
template <class Polygons>
void expect_polygon_areas_are_the_measures(Polygons const& polygons,
                                           std::vector<double> const& measures) {
  auto const offsets = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), polygons.offsets);
  auto const vertices = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), polygons.vertices);
  ASSERT_EQ(offsets.extent(0), measures.size() + 1);
  for (std::size_t i = 0; i < measures.size(); ++i) {
    double area = 0;
    for (int k = offsets(i); k < offsets(i + 1); ++k) {
      int const l = k + 1 == offsets(i + 1) ? offsets(i) : k + 1;
      area += vertices(k, 0) * vertices(l, 1) - vertices(l, 0) * vertices(k, 1);
    }
    EXPECT_NEAR(area / 2, measures[i], 1e-14) << "cell " << i;
  }
}

} // namespace

TEST(Boxes, UniformCloud) {
  expect_same_as_one_box(uniform_cloud(2000, 1.0 / 2000, 21), {1, 2, 3, 8, 64, 257});
}

TEST(Boxes, BoxesWithLargerBlocks) {
  // 12 000 uniform seeds: one box and each of 2 or 3 boxes (4 000 to 6 000 even seeds) are
  // large enough for blocks larger than the finest, whose border cells walk the block's
  // subtree; weights with a trend (bounded per row span).
  expect_same_as_one_box(with_spread_weights(uniform_cloud(12000, 0, 23)), {2, 3, 8});
}

TEST(Boxes, MatchesBruteForce) {
  auto c = uniform_cloud(300, 2.0 / 300, 22);
  auto ref = brute_force(c.x, c.w, unit_square());
  sdot::PowerDiagramOptions options;
  options.nb_boxes = 7;
  auto m = measures_with(c, unit_square(), options);
  for (std::size_t i = 0; i < m.size(); ++i)
    EXPECT_NEAR(m[i], ref.measures[i], 1e-12) << "seed " << i;
}

TEST(Boxes, Lattice) {
  expect_same_as_one_box(lattice_cloud(20), {2, 3, 8, 64});
}

TEST(Boxes, ClusteredInOneCorner) {
  // Most boxes tiny near the corner; cells of the few far seeds travel far.
  auto c = uniform_cloud(1500, 0, 23, 0, 0.05);
  for (int i = 0; i < 10; ++i)
    c.x[i] = {0.2 + 0.08 * i, 0.9 - 0.07 * i};
  expect_same_as_one_box(c, {3, 8, 64});
}

TEST(Boxes, CloudsThatFillPartOfTheDomain) {
  // Every cell is finished within three rounds of messages (a move to the nearest rank that
  // may cut it, copies to the others, their answers), at any number of boxes.
  std::vector<std::pair<std::string, Cloud>> clouds = {
      {"corner", partial_cloud("corner", 3000, 35)},
      {"band", partial_cloud("band", 3000, 36)},
      {"line", partial_cloud("line", 1000, 37)},
      {"clusters", partial_cloud("clusters", 2000, 34)}};
  for (auto const& [name, c] : clouds) {
    SCOPED_TRACE(name);
    expect_same_as_one_box(c, {2, 3, 8, 64, 257});
    for (int k : {8, 64, 257}) {
      sdot::PowerDiagramOptions options;
      options.nb_boxes = k;
      sdot::PowerDiagramStatistics st;
      measures_with(c, unit_square(), options, &st);
      EXPECT_LE(st.rounds, 3) << k << " boxes";
      EXPECT_EQ(st.reruns, 0) << k << " boxes";
    }
  }
}

TEST(Boxes, CloudsThatFillPartOfTheDomainMatchBruteForce) {
  for (std::string kind : {"corner", "band", "line", "clusters"}) {
    auto c = partial_cloud(kind, 200, 38);
    auto ref = brute_force(c.x, c.w, unit_square());
    for (int k : {3, 8, 64}) {
      sdot::PowerDiagramOptions options;
      options.nb_boxes = k;
      auto m = measures_with(c, unit_square(), options);
      for (std::size_t i = 0; i < m.size(); ++i)
        EXPECT_NEAR(m[i], ref.measures[i], 1e-12)
            << kind << ", seed " << i << ", " << k << " boxes";
    }
  }
}

TEST(Boxes, LargeWeightsEmptyCellsNegativeWeights) {
  auto c = uniform_cloud(1000, 10.0 / 1000, 24);
  for (std::size_t i = 0; i < c.w.size(); i += 3)
    c.w[i] = -c.w[i];
  expect_same_as_one_box(c, {2, 8, 64});
}

TEST(Boxes, SeedsOutsideTheDomainAndDuplicates) {
  auto c = uniform_cloud(500, 0.001, 25, -0.3, 1.3);
  c.x.push_back(c.x[10]);
  c.w.push_back(c.w[10]);
  c.x.push_back(c.x[20]);
  c.w.push_back(c.w[20]);
  expect_same_as_one_box(c, {2, 3, 8});
  auto m = measures_with(c, unit_square(), {});
  sdot::PowerDiagramOptions options;
  options.nb_boxes = 8;
  auto m8 = measures_with(c, unit_square(), options);
  EXPECT_EQ(m8[500], 0);
  EXPECT_EQ(m8[501], 0);
}

TEST(Boxes, HugeWeightVisitsManyRanksAndGrowsTheMessages) {
  auto c = uniform_cloud(1500, 0, 26);
  c.x[0] = {0.5, 0.5};
  c.w[0] = 0.2;
  sdot::PowerDiagramOptions options;
  options.nb_boxes = 16;
  sdot::PowerDiagramStatistics st;
  measures_with(c, unit_square(), options, &st);
  EXPECT_GT(st.reruns, 0);
  EXPECT_GT(st.msg_capacity, 16);
  expect_same_as_one_box(c, {3, 16, 64});
}

TEST(Boxes, InboxCapacityOneGrowsWithoutRerun) {
  // Messages are sized by their count: a small inbox capacity is grown to the most cells one
  // rank sent to another in a round, and nothing is computed again.
  auto c = uniform_cloud(2000, 1.0 / 2000, 27);
  sdot::PowerDiagramOptions options;
  options.inbox_capacity = 1;
  options.nb_boxes = 8;
  sdot::PowerDiagramStatistics st;
  measures_with(c, unit_square(), options, &st);
  EXPECT_EQ(st.reruns, 0);
  EXPECT_GT(st.inbox_capacity, 1);
  expect_same_as_one_box(c, {8, 64}, unit_square(), options);
}

TEST(Boxes, SecondCallKeepsTheGrownPolygons) {
  // A huge weight: its cell has more vertices than the first polygons hold, so it is cut again
  // with larger ones; a diagram made with the grown options starts with them.
  auto c = uniform_cloud(1000, 1.0 / 1000, 28);
  c.x[0] = {0.5, 0.5};
  c.w[0] = 0.2;
  sdot::PowerDiagramOptions options;
  options.nb_boxes = 8;
  sdot::PowerDiagram<> pd(positions_view(c), weights_view(c), unit_square(), options);
  auto a = to_vector(pd.measures());
  EXPECT_GT(pd.statistics().reruns, 0);
  EXPECT_GT(pd.options().msg_capacity, 16);
  sdot::PowerDiagram<> again(positions_view(c), weights_view(c), unit_square(), pd.options());
  auto b = to_vector(again.measures());
  EXPECT_EQ(again.statistics().reruns, 0);
  EXPECT_EQ(a, b);
}

TEST(Boxes, FewSeedsManyBoxes) {
  for (int n : {0, 1, 2, 5}) {
    auto c = uniform_cloud(n, 0.01, 29);
    sdot::PowerDiagramOptions options;
    options.nb_boxes = 8;
    auto m = measures_with(c, unit_square(), options);
    double sum = std::accumulate(m.begin(), m.end(), 0.0);
    if (n > 0)
      EXPECT_NEAR(sum, 1.0, 1e-13) << n << " seeds";
    expect_same_as_one_box(c, {3, 8});
  }
}

TEST(Boxes, TriangleDomain) {
  std::vector<sdot::HalfSpace> triangle = {{{0, -1}, 0}, {{0.9, 0.7}, 0.9}, {{-0.9, 0.3}, 0}};
  expect_same_as_one_box(uniform_cloud(800, 0.001, 30), {2, 5, 8}, triangle);
}

TEST(Boxes, Deterministic) {
  auto c = clustered_cloud(3000, 31);
  sdot::PowerDiagramOptions options;
  options.nb_boxes = 8;
  auto a = measures_with(c, unit_square(), options);
  auto b = measures_with(c, unit_square(), options);
  for (std::size_t i = 0; i < a.size(); ++i)
    ASSERT_EQ(a[i], b[i]) << "seed " << i;
}

TEST(Boxes, CellPolygonsMatchOneBox) {
  auto c = uniform_cloud(600, 1.0 / 600, 32);
  sdot::PowerDiagram<> one(positions_view(c), weights_view(c), unit_square());
  sdot::PowerDiagramOptions options;
  options.nb_boxes = 5;
  sdot::PowerDiagram<> five(positions_view(c), weights_view(c), unit_square(), options);
  auto a = one.cell_polygons();
  auto b = five.cell_polygons();
  auto ao = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), a.offsets);
  auto bo = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), b.offsets);
  auto as = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), a.edge_sources);
  auto bs = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), b.edge_sources);
  for (int i = 0; i < 600; ++i) {
    // Same neighbours (as sets: the first vertex may differ).
    std::vector<int> na(as.data() + ao(i), as.data() + ao(i + 1)),
        nb(bs.data() + bo(i), bs.data() + bo(i + 1));
    std::sort(na.begin(), na.end());
    std::sort(nb.begin(), nb.end());
    EXPECT_EQ(na, nb) << "cell " << i;
  }
  expect_polygon_areas_are_the_measures(b, to_vector(one.measures()));
}

TEST(Boxes, CellPolygonsOfAClusteredCloud) {
  auto c = clustered_cloud(800, 5);
  for (auto& w : c.w)
    w *= 1e-3;
  for (int boxes : {1, 3, 8}) {
    SCOPED_TRACE(std::to_string(boxes) + " boxes");
    sdot::PowerDiagramOptions options;
    options.nb_boxes = boxes;
    sdot::PowerDiagram<> pd(positions_view(c), weights_view(c), unit_square(), options);
    auto const m = to_vector(pd.measures());
    expect_polygon_areas_are_the_measures(pd.cell_polygons(), m);
  }
}

TEST(Boxes, SmallMessageCapacityIsGrown) {
  auto c = uniform_cloud(301, 1.0 / 301, 33);
  for (int capacity : {1, 2, 4}) {
    sdot::PowerDiagramOptions options;
    options.msg_capacity = capacity;
    sdot::PowerDiagramStatistics st;
    expect_same_as_one_box(c, {3, 8}, unit_square(), options);
    options.nb_boxes = 3;
    measures_with(c, unit_square(), options, &st);
    EXPECT_EQ(st.reruns, 0); // the polygons hold at least 32 vertices whatever the messages
    EXPECT_GT(st.msg_capacity, capacity);
  }
}

TEST(Boxes, EveryReferenceCaseAtEveryBoxCount) {
  for (auto const& rc : reference_cases()) {
    auto const ref = brute_force(rc.cloud.x, rc.cloud.w, rc.domain);
    double const area = static_cast<double>(sdot_test::area(domain(rc.domain)));
    for (int k : {1, 2, 3, 8, 64, 257}) {
      sdot::PowerDiagramOptions options;
      options.nb_boxes = k;
      auto m = measures_with(rc.cloud, rc.domain, options);
      ASSERT_EQ(m.size(), ref.measures.size());
      for (std::size_t i = 0; i < m.size(); ++i)
        EXPECT_NEAR(m[i], ref.measures[i], 1e-12 * area)
            << rc.name << ", seed " << i << ", " << k << " boxes";
    }
  }
}

TEST(Boxes, CoarseToFineAtEveryBoxCount) {
  // Each box's first-round cells (its own diagram over the domain) from coarser diagrams: the
  // hard cases, and cells far from their seeds with many empty ones, against brute force.
  auto cases = reference_cases();
  cases.push_back(
      {"cells far from their seeds, 3000",
       with_displacing_weights(clustered_cloud(3000, 61), {0.7, 0.75}, 9.0, {-0.1, 0.05}, 62),
       unit_square()});
  for (auto const& rc : cases) {
    auto const ref = brute_force(rc.cloud.x, rc.cloud.w, rc.domain);
    double const area = static_cast<double>(sdot_test::area(domain(rc.domain)));
    for (int k : {2, 3, 8, 64}) {
      sdot::PowerDiagramOptions options;
      options.nb_boxes = k;
      options.coarse_to_fine = sdot::CoarseToFine::always;
      options.coarsest_level_seeds = 16;
      sdot::PowerDiagramStatistics st;
      auto m = measures_with(rc.cloud, rc.domain, options, &st);
      ASSERT_EQ(m.size(), ref.measures.size());
      for (std::size_t i = 0; i < m.size(); ++i)
        EXPECT_NEAR(m[i], ref.measures[i], 1e-12 * area)
            << rc.name << ", seed " << i << ", " << k << " boxes";
      if (rc.cloud.x.size() >= 3000 && k <= 8) {
        EXPECT_GE(st.coarse_levels, 2) << k << " boxes";
        EXPECT_GT(st.warm_cells, 0) << k << " boxes";
        EXPECT_EQ(st.seconds.count("box_cells"), 1u);
      }
    }
  }
  // automatic: not at zero weights (round 0 searches, no phase of its own).
  sdot::PowerDiagramOptions options;
  options.nb_boxes = 3;
  sdot::PowerDiagramStatistics st;
  measures_with(uniform_cloud(3000, 0, 63), unit_square(), options, &st);
  EXPECT_EQ(st.coarse_levels, 0);
  EXPECT_EQ(st.seconds.count("box_cells"), 0u);
}

namespace {

/// The seeds' box ranks by a plain recursive bisection of (coordinate, index) along the longer
/// side of the seeds' bounding box: floor(K/2)/K of a box's seeds go left.
void reference_bisection(Cloud const& c, std::vector<int> seeds, int rank_begin, int rank_end,
                         std::vector<int>& box) {
  if (rank_end - rank_begin == 1) {
    for (int i : seeds)
      box[i] = rank_begin;
    return;
  }
  double lo[2] = {1e300, 1e300}, hi[2] = {-1e300, -1e300};
  for (int i : seeds)
    for (int a = 0; a < 2; ++a) {
      lo[a] = std::min(lo[a], c.x[i][a]);
      hi[a] = std::max(hi[a], c.x[i][a]);
    }
  int const axis = seeds.empty() || hi[0] - lo[0] >= hi[1] - lo[1] ? 0 : 1;
  std::stable_sort(seeds.begin(), seeds.end(),
                   [&](int a, int b) { return c.x[a][axis] < c.x[b][axis]; });
  int const parts = rank_end - rank_begin, mid = rank_begin + parts / 2;
  std::size_t const left = seeds.size() * std::size_t(parts / 2) / parts;
  reference_bisection(c, std::vector<int>(seeds.begin(), seeds.begin() + left), rank_begin, mid,
                      box);
  reference_bisection(c, std::vector<int>(seeds.begin() + left, seeds.end()), mid, rank_end, box);
}

} // namespace

TEST(Boxes, BisectionSplitsAtTheMedianOfCoordinateThenIndex) {
  // Uniform, clustered, a lattice (ties everywhere: the index decides) and duplicates, into
  // 2, 3, 7 and 64 boxes: the same boxes as a plain sort-based bisection.
  auto lattice = lattice_cloud(16);
  auto duplicates = uniform_cloud(300, 0, 39);
  for (int i = 0; i < 150; ++i)
    duplicates.x[150 + i] = duplicates.x[i];
  std::vector<std::pair<std::string, Cloud>> clouds = {{"uniform", uniform_cloud(2000, 0, 40)},
                                                       {"clustered", clustered_cloud(2000, 41)},
                                                       {"lattice", lattice},
                                                       {"duplicates", duplicates}};
  for (auto const& [name, c] : clouds)
    for (int k : {2, 3, 7, 64}) {
      auto const n = static_cast<int>(c.x.size());
      auto box = sdot::detail::bisect_into_boxes(
          Kokkos::DefaultExecutionSpace(), loom::BoxRanks(k),
          sdot::ConstPoints<Kokkos::DefaultExecutionSpace::memory_space>(positions_view(c)), 0, n);
      auto got = to_vector(box);
      std::vector<int> seeds(n), expected(n);
      std::iota(seeds.begin(), seeds.end(), 0);
      reference_bisection(c, seeds, 0, k, expected);
      for (int i = 0; i < n; ++i)
        ASSERT_EQ(static_cast<int>(got[i]), expected[i])
            << name << ", " << k << " boxes, seed " << i;
    }
}

namespace {

/// Everything a diagram with options.same_bits gives, on the host.
struct DiagramBits {
  std::vector<double> measures, centroids, vertices, jacobian;
  std::vector<int> offsets, labels, columns;
};

void jacobian_bits(sdot::PowerDiagram<>& pd, Cloud const& c, DiagramBits& bits);

/// Measures and centroids of a diagram, on the host.
DiagramBits measures_and_centroids(sdot::PowerDiagram<>& pd) {
  DiagramBits bits;
  bits.measures = to_vector(pd.measures());
  auto const centroids = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), pd.centroids());
  for (std::size_t i = 0; i < centroids.extent(0); ++i)
    bits.centroids.insert(bits.centroids.end(), {centroids(i, 0), centroids(i, 1)});
  return bits;
}

/// Measures, centroids and polygons of a diagram, on the host.
DiagramBits diagram_outputs(sdot::PowerDiagram<>& pd) {
  DiagramBits bits = measures_and_centroids(pd);
  auto const polygons = pd.cell_polygons();
  auto const offsets = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), polygons.offsets);
  auto const vertices = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), polygons.vertices);
  auto const labels =
      Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), polygons.edge_sources);
  bits.offsets.assign(offsets.data(), offsets.data() + offsets.extent(0));
  for (std::size_t k = 0; k < vertices.extent(0); ++k)
    bits.vertices.insert(bits.vertices.end(), {vertices(k, 0), vertices(k, 1)});
  bits.labels.assign(labels.data(), labels.data() + labels.extent(0));
  return bits;
}

DiagramBits same_bits_diagram(Cloud const& c, std::vector<sdot::HalfSpace> const& hs, int boxes,
                              sdot::PowerDiagramOptions options = {}) {
  options.same_bits = true;
  options.nb_boxes = boxes;
  sdot::PowerDiagram<> pd(positions_view(c), weights_view(c), hs, options);
  DiagramBits bits = diagram_outputs(pd);
  // An edge made by one of several seeds at the same place with the same weight is the same
  // edge whichever of them made it: named by the first of them here.
  std::map<std::tuple<double, double, double>, int> first_of;
  for (std::size_t i = c.x.size(); i-- > 0;)
    first_of[{c.x[i][0], c.x[i][1], c.w[i]}] = static_cast<int>(i);
  bool const repeats = first_of.size() < c.x.size();
  for (int& l : bits.labels)
    if (l >= 0)
      l = first_of[{c.x[l][0], c.x[l][1], c.w[l]}];
  if (!c.x.empty() && !repeats) // with repeated seeds, their couplings may go to either
    jacobian_bits(pd, c, bits);
  return bits;
}

void jacobian_bits(sdot::PowerDiagram<>& pd, Cloud const& c, DiagramBits& bits) {
  auto const jacobian = sdot::measure_jacobian(pd, positions_view(c));
  auto const values =
      Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), jacobian.global.values);
  auto const columns =
      Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), jacobian.global.graph.entries);
  bits.jacobian.assign(values.data(), values.data() + values.extent(0));
  bits.columns.assign(columns.data(), columns.data() + columns.extent(0));
}

/// The same bits at every box count as at one box; the measures those of the diagram computed
/// without same_bits, to round-off.
void expect_same_bits_at_every_box_count(Cloud const& c,
                                         std::vector<sdot::HalfSpace> const& hs = unit_square()) {
  auto const one = same_bits_diagram(c, hs, 1);
  auto const plain = measures_with(c, hs, {});
  double const area = static_cast<double>(sdot_test::area(domain(hs)));
  double sum = 0;
  for (std::size_t i = 0; i < plain.size(); ++i) {
    EXPECT_NEAR(one.measures[i], plain[i], 1e-12 * area) << "seed " << i;
    sum += one.measures[i];
  }
  if (!c.x.empty())
    EXPECT_NEAR(sum, area, 1e-12 * area);
  for (int boxes : {2, 3, 8, 64}) {
    SCOPED_TRACE(std::to_string(boxes) + " boxes");
    auto const other = same_bits_diagram(c, hs, boxes);
    ASSERT_EQ(other.measures.size(), one.measures.size());
    for (std::size_t i = 0; i < one.measures.size(); ++i) {
      ASSERT_EQ(other.measures[i], one.measures[i]) << "measure of seed " << i;
      ASSERT_EQ(other.centroids[2 * i], one.centroids[2 * i]) << "centroid of seed " << i;
      ASSERT_EQ(other.centroids[2 * i + 1], one.centroids[2 * i + 1]) << "centroid of seed " << i;
    }
    EXPECT_EQ(other.offsets, one.offsets);
    EXPECT_EQ(other.labels, one.labels);
    EXPECT_EQ(other.vertices, one.vertices);
    EXPECT_EQ(other.columns, one.columns);
    EXPECT_EQ(other.jacobian, one.jacobian);
  }
}

} // namespace

TEST(Boxes, SameBitsUniformCloud) {
  expect_same_bits_at_every_box_count(uniform_cloud(3000, 1.0 / 3000, 51));
}

TEST(Boxes, SameBitsLattice) {
  // Four co-circular seeds at every inner vertex: edges of no length come and go with the
  // order of the cuts.
  expect_same_bits_at_every_box_count(lattice_cloud(40));
}

TEST(Boxes, SameBitsClusteredAndDisplacedCells) {
  expect_same_bits_at_every_box_count(clustered_cloud(3000, 52));
  expect_same_bits_at_every_box_count(displaced_cells_cloud(2000, 53));
}

TEST(Boxes, SameBitsPartialCloudsEmptyCellsAndATriangle) {
  expect_same_bits_at_every_box_count(partial_cloud("corner", 1500, 54));
  expect_same_bits_at_every_box_count(partial_cloud("clusters", 1500, 55));
  auto c = uniform_cloud(1000, 1.0 / 1000, 56);
  c.w[10] = 0.3; // a cell holding much of the domain, many empty ones
  c.w[20] = -0.2;
  expect_same_bits_at_every_box_count(c);
  expect_same_bits_at_every_box_count(uniform_cloud(800, 0, 57),
                                      {{{-1, 0}, 0}, {{0, -1}, 0}, {{1, 1}, 1}});
}

namespace {

void expect_same_outputs(DiagramBits const& a, DiagramBits const& b) {
  ASSERT_EQ(a.measures, b.measures);
  ASSERT_EQ(a.centroids, b.centroids);
  ASSERT_EQ(a.offsets, b.offsets);
  ASSERT_EQ(a.vertices, b.vertices);
  ASSERT_EQ(a.labels, b.labels);
}

/// A change of the weights of a cloud: from `first`'s to `second`.
struct WeightChange {
  std::string name;
  Cloud first;
  std::vector<double> second;
  std::vector<sdot::HalfSpace> domain;
};

/// The changes both recomputation tests go through: displaced cells (n_displaced seeds) from
/// small weights to theirs, which move the cells far from their seeds; a cloud in one corner
/// (n_corner seeds) to one cell holding much of the domain, some negative weights and empty
/// cells; every reference case (duplicates, seeds outside the domain, a triangle, 0, 1 and 2
/// seeds) from zero weights to its own.
std::vector<WeightChange> weight_changes(int n_displaced, unsigned displaced_seed, int n_corner,
                                         unsigned corner_seed) {
  std::vector<WeightChange> changes;
  auto const displaced = displaced_cells_cloud(n_displaced, displaced_seed);
  auto small = displaced;
  for (std::size_t i = 0; i < small.w.size(); ++i)
    small.w[i] = 1e-4 * std::sin(double(i));
  changes.push_back({"displaced cells", small, displaced.w, unit_square()});
  auto const corner = partial_cloud("corner", n_corner, corner_seed);
  auto w = corner.w;
  w[5] = 0.3;
  for (std::size_t i = 0; i < w.size(); i += 7)
    w[i] = -0.01;
  changes.push_back({"corner", corner, w, unit_square()});
  for (auto const& rc : reference_cases()) {
    auto zero = rc.cloud;
    std::fill(zero.w.begin(), zero.w.end(), 0.0);
    changes.push_back({rc.name, zero, rc.cloud.w, rc.domain});
  }
  return changes;
}

/// set_weights() keeps the boxes and their indexes: at each box count, the diagram of the
/// second weights, then of the first again, gives the bits of a new diagram of them, with and
/// without kept polygons.
void expect_new_weights_as_a_new_diagram(Cloud const& first, std::vector<double> const& second,
                                         std::vector<sdot::HalfSpace> const& hs = unit_square()) {
  Cloud other = first;
  other.w = second;
  for (bool keep : {false, true})
    for (int k : {1, 2, 3, 8, 64}) {
      SCOPED_TRACE(std::to_string(k) + " boxes, keep_polygons " + std::to_string(keep));
      sdot::PowerDiagramOptions options;
      options.nb_boxes = k;
      options.keep_polygons = keep;
      sdot::PowerDiagram<> pd(positions_view(first), weights_view(first), hs, options);
      auto const at_first = diagram_outputs(pd);
      EXPECT_FALSE(pd.statistics().index_kept);
      pd.set_weights(weights_view(other));
      sdot::PowerDiagram<> fresh(positions_view(other), weights_view(other), hs, options);
      expect_same_outputs(diagram_outputs(pd), diagram_outputs(fresh));
      EXPECT_TRUE(pd.statistics().index_kept);
      EXPECT_EQ(pd.statistics().rounds, fresh.statistics().rounds);
      EXPECT_EQ(pd.statistics().travelled_cells, fresh.statistics().travelled_cells);
      pd.set_weights(weights_view(first));
      expect_same_outputs(diagram_outputs(pd), at_first);
    }
}

} // namespace

namespace {

/// At each number of boxes, the diagram of `c` with polygons kept, its options changed by
/// `roomy` (sizes that hold everything at once) and by `tight` (sizes found too small, so that
/// passes or rounds are cut again): the same outputs, bit for bit, and reruns only when tight.
/// `then(tight_diagram)` checks more.
template <class Roomy, class Tight, class Then>
void expect_reruns_keep_the_bits(Cloud const& c, std::vector<int> const& boxes_list,
                                 Roomy const& roomy, Tight const& tight, Then const& then) {
  for (int boxes : boxes_list) {
    SCOPED_TRACE(std::to_string(boxes) + " boxes");
    sdot::PowerDiagramOptions options;
    options.nb_boxes = boxes;
    options.keep_polygons = true;
    sdot::PowerDiagramOptions roomy_options = options, tight_options = options;
    roomy(roomy_options);
    tight(tight_options);
    sdot::PowerDiagram<> at_once(positions_view(c), weights_view(c), unit_square(), roomy_options);
    auto const outputs = diagram_outputs(at_once);
    EXPECT_EQ(at_once.statistics().reruns, 0);
    sdot::PowerDiagram<> again(positions_view(c), weights_view(c), unit_square(), tight_options);
    expect_same_outputs(diagram_outputs(again), outputs);
    EXPECT_GT(again.statistics().reruns, 0);
    then(again);
  }
}

} // namespace

TEST(Boxes, KeptVerticesThatDoNotFitAreCutAgainWithMoreRoom) {
  // Room for one vertex per seed: round 0 finishes more, so it is cut again with the room it
  // asked for; the polygons and measures are those of the default room, and the room is kept
  // for the next computation of the diagram.
  auto c = clustered_cloud(700, 6);
  for (auto& w : c.w)
    w *= 1e-3;
  Cloud half = c;
  for (auto& w : half.w)
    w *= 0.5;
  expect_reruns_keep_the_bits(
      c, {2, 8, 64}, [](sdot::PowerDiagramOptions&) {},
      [](sdot::PowerDiagramOptions& o) { o.kept_vertices_per_seed = 1; },
      [&](sdot::PowerDiagram<>& tight) {
        EXPECT_GT(tight.options().kept_vertices_per_seed, 1);
        // The grown room stays with the diagram.
        tight.set_weights(weights_view(half));
        tight.measures();
        EXPECT_EQ(tight.statistics().reruns, 0);
      });
}

TEST(Boxes, CellsTooLargeForTheirPolygonsAreCutAgainAloneWithTheSameBits) {
  // A huge weight: its cell has more vertices than the first polygons hold. The cells that do
  // not fit are cut again alone with larger polygons, in whichever pass found them (a rank's
  // own cells, received ones, the packing of messages, the cells settled with their answers),
  // and every output has the bits of a computation whose polygons hold every cell at once.
  auto c = uniform_cloud(1500, 0, 26);
  c.x[0] = {0.5, 0.5};
  c.w[0] = 0.2;
  expect_reruns_keep_the_bits(
      c, {2, 3, 8, 64}, [](sdot::PowerDiagramOptions& o) { o.msg_capacity = 256; },
      [](sdot::PowerDiagramOptions&) {},
      [](sdot::PowerDiagram<>& tight) { EXPECT_GT(tight.options().msg_capacity, 16); });
}

TEST(Boxes, NewWeightsKeepTheBoxesAndGiveWhatANewDiagramGives) {
  // Each change of weights, and back.
  for (auto const& change : weight_changes(1500, 61, 1200, 62)) {
    SCOPED_TRACE(change.name);
    expect_new_weights_as_a_new_diagram(change.first, change.second, change.domain);
  }
}

TEST(Boxes, SameBitsForEveryReferenceCase) {
  // Duplicates, seeds outside the domain, 0, 1 and 2 seeds, huge and negative weights...: the
  // measures against brute force, and the same bits at every box count.
  for (auto const& rc : reference_cases()) {
    SCOPED_TRACE(rc.name);
    auto const ref = brute_force(rc.cloud.x, rc.cloud.w, rc.domain);
    auto const one = same_bits_diagram(rc.cloud, rc.domain, 1);
    double const area = static_cast<double>(sdot_test::area(domain(rc.domain)));
    for (std::size_t i = 0; i < one.measures.size(); ++i)
      EXPECT_NEAR(one.measures[i], ref.measures[i], 1e-12 * area) << "seed " << i;
    expect_same_bits_at_every_box_count(rc.cloud, rc.domain);
  }
}

namespace {

/// warm_start with K boxes: each box's first-round cells come from the neighbours of the last
/// computation. At each box count, the diagram of the second weights, then of the first again,
/// gives the measures and centroids of a new diagram to round-off and of brute force (both
/// every seed); `warm_expected`: some cells were certified from their neighbours. Two diagrams
/// with the same history give the same bits.
/// warm_start at 2, 3, 8 and 64 boxes: the first computation against brute force; at the second
/// weights, then at the first again, against a new diagram (to round-off), brute force, and a
/// twin with the same history (bit for bit).
void expect_warm_start_as_a_new_diagram(Cloud const& first, std::vector<double> const& second,
                                        std::vector<sdot::HalfSpace> const& hs,
                                        bool warm_expected) {
  Cloud other = first;
  other.w = second;
  double const area = static_cast<double>(sdot_test::area(domain(hs)));
  auto const ref_other = brute_force(other.x, other.w, hs),
             ref_first = brute_force(first.x, first.w, hs);
  for (int k : {2, 3, 8, 64}) {
    SCOPED_TRACE(std::to_string(k) + " boxes");
    sdot::PowerDiagramOptions options;
    options.nb_boxes = k;
    options.warm_start = true;
    sdot::PowerDiagram<> pd(positions_view(first), weights_view(first), hs, options);
    sdot::PowerDiagram<> twin(positions_view(first), weights_view(first), hs, options);
    // The first computation: no neighbours yet, each box's first-round cells searched and kept.
    auto const at_first = measures_and_centroids(pd);
    for (std::size_t i = 0; i < at_first.measures.size(); ++i)
      ASSERT_NEAR(at_first.measures[i], ref_first.measures[i], 1e-12 * area) << "seed " << i;
    twin.measures();
    for (Cloud const* c : std::vector<Cloud const*>{&other, &first}) {
      pd.set_weights(weights_view(*c));
      twin.set_weights(weights_view(*c));
      auto const warm = measures_and_centroids(pd);
      if (warm_expected)
        EXPECT_GT(pd.statistics().warm_cells, 0);
      sdot::PowerDiagramOptions cold_options;
      cold_options.nb_boxes = k;
      cold_options.coarse_to_fine = sdot::CoarseToFine::never; // round 0 searched
      sdot::PowerDiagram<> fresh(positions_view(*c), weights_view(*c), hs, cold_options);
      auto const cold = measures_and_centroids(fresh);
      // The boxes' first-round cells are a phase of their own with warm_start.
      EXPECT_EQ(pd.statistics().seconds.count("box_cells"), 1u);
      EXPECT_EQ(fresh.statistics().seconds.count("box_cells"), 0u);
      auto const& ref = c == &first ? ref_first : ref_other;
      ASSERT_EQ(warm.measures.size(), c->x.size());
      for (std::size_t i = 0; i < warm.measures.size(); ++i) {
        ASSERT_NEAR(warm.measures[i], cold.measures[i], 1e-13 * area) << "seed " << i;
        ASSERT_NEAR(warm.measures[i], ref.measures[i], 1e-12 * area) << "seed " << i;
        for (int d : {0, 1})
          ASSERT_NEAR(warm.centroids[2 * i + d], cold.centroids[2 * i + d], 1e-10) << "seed " << i;
      }
      auto const again = measures_and_centroids(twin);
      ASSERT_EQ(warm.measures, again.measures);
      ASSERT_EQ(warm.centroids, again.centroids);
    }
  }
}

} // namespace

TEST(Boxes, WarmStartBuildsTheFirstRoundFromTheNeighboursAndGivesANewDiagram) {
  // Each change of weights, and back: the displaced cells from small weights (most cells fail
  // the certification and are searched, some are certified), the others from zero weights.
  auto const changes = weight_changes(1000, 63, 1000, 65);
  for (auto const& change : changes) {
    SCOPED_TRACE(change.name);
    expect_warm_start_as_a_new_diagram(change.first, change.second, change.domain,
                                       change.name == "displaced cells");
  }
  // The displaced cells from nearby weights (most are certified).
  auto const& displaced = changes[0];
  Cloud at_solution = displaced.first;
  at_solution.w = displaced.second;
  auto near = displaced.second;
  for (std::size_t i = 0; i < near.size(); ++i)
    near[i] += 1e-5 * std::cos(3.0 * double(i));
  expect_warm_start_as_a_new_diagram(at_solution, near, unit_square(), true);
  // A clustered cloud.
  auto const clustered = clustered_cloud(1200, 64);
  auto moved = clustered.w;
  for (std::size_t i = 0; i < moved.size(); ++i)
    moved[i] += 2e-4 * std::sin(7 * clustered.x[i][0] + 3 * clustered.x[i][1]);
  expect_warm_start_as_a_new_diagram(clustered, moved, unit_square(), true);
  // Duplicates in different boxes (the seed of a cell that travels of the lower index, and of
  // the higher), three at one place, and a duplicate with another weight.
  Cloud twins = uniform_cloud(300, 0, 15);
  twins.x[251] = twins.x[40];
  twins.x[3] = twins.x[298];
  twins.x[120] = twins.x[121] = twins.x[7];
  twins.x[60] = twins.x[200];
  twins.w[60] = 1e-4;
  auto spread = twins.w;
  for (std::size_t i = 0; i < spread.size(); ++i)
    spread[i] = i == 60 ? 1e-4 : 3e-3 * std::sin(37 * twins.x[i][0] + 23 * twins.x[i][1]);
  expect_warm_start_as_a_new_diagram(twins, spread, unit_square(), false);
}

TEST(Boxes, WarmStartWithSameBitsGivesTheBitsOfOneBox) {
  // A recomputation from the earlier neighbours (several boxes: the first round from them),
  // then every cell recomputed from its edges: the bits of a new one-box diagram, at every box
  // count.
  auto c = displaced_cells_cloud(1500, 66);
  auto const target = same_bits_diagram(c, unit_square(), 1);
  auto d = c;
  for (double& w : d.w)
    w *= 0.9;
  for (int k : {1, 2, 3, 8, 64}) {
    SCOPED_TRACE(std::to_string(k) + " boxes");
    sdot::PowerDiagramOptions options;
    options.same_bits = true;
    options.warm_start = true;
    options.nb_boxes = k;
    sdot::PowerDiagram<> pd(positions_view(d), weights_view(d), unit_square(), options);
    pd.measures();
    pd.set_weights(weights_view(c));
    auto const m = to_vector(pd.measures());
    EXPECT_GT(pd.statistics().warm_cells, 0);
    for (std::size_t i = 0; i < m.size(); ++i)
      ASSERT_EQ(m[i], target.measures[i]) << "seed " << i;
  }
}

TEST(Boxes, FarFromTheOriginTheBoxesKeepTheirFirstRoundCellsExactly) {
  // A domain 2^30 of its sizes from the origin, where absolute coordinates hold 2^-22 of its
  // size: the boxes' first-round cells (from coarser diagrams, or from the earlier neighbours)
  // are kept relative to their seeds, so that the rounds after them cut the same cells as the
  // diagram translated to the origin (exactly: the seeds' coordinates less 2^30), to round-off,
  // at 1, 2, 3, 8 and 64 boxes.
  double const offset = std::ldexp(1.0, 30);
  auto const near_origin = displaced_cells_cloud(1500, 66);
  Cloud far = near_origin, near = near_origin;
  for (std::size_t i = 0; i < far.x.size(); ++i)
    for (int a = 0; a < 2; ++a) {
      far.x[i][a] += offset;
      near.x[i][a] = far.x[i][a] - offset; // exact
    }
  auto const far_square = sdot::box_half_spaces({offset, offset}, {offset + 1, offset + 1});
  auto moved = near.w;
  for (std::size_t i = 0; i < moved.size(); ++i)
    moved[i] *= 1 + 0.05 * std::sin(7 * near.x[i][0] + 3 * near.x[i][1]);
  Cloud near_moved = near;
  near_moved.w = moved;
  auto const reference = measures_with(near, unit_square(), {});
  auto const moved_reference = measures_with(near_moved, unit_square(), {});
  auto const expect_reference = [](std::vector<double> const& m, std::vector<double> const& ref) {
    ASSERT_EQ(m.size(), ref.size());
    for (std::size_t i = 0; i < m.size(); ++i)
      ASSERT_NEAR(m[i], ref[i], 1e-12) << "seed " << i;
  };
  for (int k : {1, 2, 3, 8, 64}) {
    SCOPED_TRACE(std::to_string(k) + " boxes");
    sdot::PowerDiagramOptions options;
    options.nb_boxes = k;
    options.coarse_to_fine = sdot::CoarseToFine::always;
    options.coarsest_level_seeds = 16;
    sdot::PowerDiagramStatistics st;
    expect_reference(measures_with(far, far_square, options, &st), reference);
    EXPECT_GE(st.coarse_levels, k <= 8 ? 2 : 1); // 64 boxes: ~23 seeds per box
    // A recomputation from the earlier neighbours.
    options.coarse_to_fine = sdot::CoarseToFine::never;
    options.warm_start = true;
    sdot::PowerDiagram<> pd(positions_view(far), weights_view(far), far_square, options);
    expect_reference(to_vector(pd.measures()), reference);
    Cloud far_moved = far;
    far_moved.w = moved;
    pd.set_weights(weights_view(far_moved));
    expect_reference(to_vector(pd.measures()), moved_reference);
    EXPECT_GT(pd.statistics().warm_cells, 0);
  }
}

namespace {

/// The lower envelope of rank q's power (rank_envelopes.hpp) against brute force, as the
/// travelling cells use it: the seeds of `c` split at the median abscissa into ranks p and q,
/// each of p's first-round cells (the diagram of p's seeds alone) tested against q's envelope,
/// built from q's first-round cells. With `groups` = 2, q is two ranks (its seeds split at
/// their median ordinate, each with the diagram of its own seeds) and the envelope is their
/// union (envelope_of_union()), as a subtree of the tree over the ranks' boxes has it. It never
/// rules out q where one of q's seeds cuts the cell (|v − x_j|² − w_j < |v − x_i|² − w_i at a
/// vertex v, in long double) or ties with its seed; returns the fraction of the cells that no
/// seed of q cuts that it rules out. With `unknown_every` = k > 0, every k-th first-round cell
/// of q is given without its polygon (a count of −1, as a cell of more vertices than its slot
/// holds): beyond max_unknown_envelope_cells of them the envelope rules nothing out.
double envelope_against_brute_force(Cloud const& c, std::vector<sdot::HalfSpace> const& hs,
                                    int groups = 1, int unknown_every = 0) {
  using Space = Kokkos::DefaultHostExecutionSpace;
  using Memory = Space::memory_space;
  Space const space;
  // The seeds of `r` split at the median of coordinate `axis` (ties by their order in r).
  auto const halves = [](Cloud const& r, int axis) {
    std::vector<int> order(r.x.size());
    std::iota(order.begin(), order.end(), 0);
    std::stable_sort(order.begin(), order.end(),
                     [&](int a, int b) { return r.x[a][axis] < r.x[b][axis]; });
    std::pair<Cloud, Cloud> out;
    for (std::size_t k = 0; k < order.size(); ++k) {
      Cloud& to = k < order.size() / 2 ? out.first : out.second;
      to.x.push_back(r.x[order[k]]);
      to.w.push_back(r.w[order[k]]);
    }
    return out;
  };
  auto const [p, q] = halves(c, 0);
  auto const cells_of = [&](Cloud const& r) {
    sdot::PowerDiagram<Space> pd(space, positions_view<Memory>(r), weights_view<Memory>(r), hs);
    return pd.cell_polygons();
  };
  auto const p_cells = cells_of(p);

  auto const dom = domain(hs);
  sdot::Points<Memory> domain_vertices("domain", dom.size());
  double x0 = 1e300, y0 = 1e300, x1 = -1e300, y1 = -1e300;
  for (std::size_t k = 0; k < dom.size(); ++k) {
    domain_vertices(k, 0) = static_cast<double>(dom[k].x);
    domain_vertices(k, 1) = static_cast<double>(dom[k].y);
    x0 = std::min(x0, domain_vertices(k, 0));
    x1 = std::max(x1, domain_vertices(k, 0));
    y0 = std::min(y0, domain_vertices(k, 1));
    y1 = std::max(y1, domain_vertices(k, 1));
  }
  auto const grid =
      sdot::detail::envelope_grid_for(2, static_cast<std::int64_t>(c.x.size()), x0, y0, x1, y1);
  EXPECT_GT(grid.side, 0);
  int const nodes = grid.nodes();

  // The envelope of a group of q's seeds from its first-round cells, in slots (relative to
  // their seeds).
  bool disabled = false; // a group with too many cells without a polygon
  auto const envelope_of = [&](Cloud const& r) {
    auto const r_cells = cells_of(r);
    int const nr = static_cast<int>(r.x.size());
    int capacity = 0;
    for (int j = 0; j < nr; ++j)
      capacity = std::max(capacity, r_cells.offsets(j + 1) - r_cells.offsets(j));
    auto slots = sdot::detail::allocate_slot_polygons(space, nr, capacity);
    Kokkos::View<sdot::detail::Seed*, Memory> seeds("seeds", nr);
    for (int j = 0; j < nr; ++j) {
      seeds(j) = {r.x[j][0], r.x[j][1], r.w[j]};
      slots.counts(j) = r_cells.offsets(j + 1) - r_cells.offsets(j);
      for (int k = 0; k < slots.counts(j); ++k)
        for (int d : {0, 1})
          slots.vertices(std::size_t(j) * capacity + k, d) =
              r_cells.vertices(r_cells.offsets(j) + k, d) - r.x[j][d];
    }
    auto const envelope = [&] {
      return sdot::detail::rank_envelope(space, grid, seeds, slots, 0, nr,
                                         sdot::ConstPoints<Memory>(domain_vertices));
    };
    auto const known = envelope();
    EXPECT_EQ(known.size(), std::size_t(nodes) + 1);
    if (unknown_every == 0)
      return known;
    int group_unknown = 0;
    for (int j = 0; j < nr; j += unknown_every, ++group_unknown)
      slots.counts(j) = -1;
    auto const values = envelope();
    bool const group_disabled = group_unknown > sdot::detail::max_unknown_envelope_cells;
    disabled = disabled || group_disabled;
    // The node values that the polygons give, to rounding (a node keeps the largest plane it
    // is given; the cells' own planes are all at most the envelope there).
    if (!group_disabled)
      for (int k = 0; k < nodes; ++k) {
        EXPECT_EQ(std::isfinite(values[k]), std::isfinite(known[k])) << "node " << k;
        if (std::isfinite(known[k]))
          EXPECT_NEAR(values[k], known[k], 1e-12 * known[nodes]) << "node " << k;
      }
    return values;
  };
  std::vector<double> values;
  if (groups == 1)
    values = envelope_of(q);
  else {
    auto const [low, high] = halves(q, 1);
    auto const of_low = envelope_of(low), of_high = envelope_of(high);
    values.resize(of_low.size());
    sdot::detail::envelope_of_union(of_low.data(), of_high.data(), of_low.size(), values.data());
    for (int k = 0; k <= nodes; ++k)
      EXPECT_EQ(values[k], std::max(of_low[k], of_high[k])) << "node " << k;
  }
  Kokkos::View<double*, Memory> node_values("values", nodes), scale("scale", 1);
  int finite = 0;
  for (int k = 0; k < nodes; ++k) {
    node_values(k) = values[k];
    finite += std::isfinite(values[k]);
  }
  // Too many cells without a polygon (in one of the groups): nothing ruled out.
  if (disabled)
    EXPECT_EQ(finite, 0);
  else
    EXPECT_GT(finite, nodes / 3);
  scale(0) = values[nodes];
  sdot::detail::RankEnvelopes<Memory> envelopes;
  envelopes.grid = grid;
  envelopes.values = node_values;
  envelopes.scale = scale;

  int const nq = static_cast<int>(q.x.size());
  int uncut = 0, ruled_out = 0;
  for (std::size_t i = 0; i < p.x.size(); ++i) {
    int const b = p_cells.offsets(i), e = p_cells.offsets(i + 1);
    if (b == e)
      continue;
    std::vector<std::array<double, 2>> relative;
    for (int k = b; k < e; ++k)
      relative.push_back({p_cells.vertices(k, 0) - p.x[i][0], p_cells.vertices(k, 1) - p.x[i][1]});
    HostPolygon cell(64, relative);
    sdot::detail::CellSeed const seed{p.x[i][0], p.x[i][1], p.w[i], static_cast<int>(i), -1};
    bool const may = envelopes.may_cut(cell.polygon, seed, 0);
    // The answer does not depend on the vertex the test starts from.
    for (int first = 1; first < cell.polygon.size; ++first)
      EXPECT_EQ(envelopes.may_cut(cell.polygon, seed, 0, first), may) << "cell " << i;
    bool cut = false, tie = false;
    for (int k = b; k < e && !cut; ++k) {
      Real const vx = p_cells.vertices(k, 0), vy = p_cells.vertices(k, 1);
      Real const own =
          (vx - p.x[i][0]) * (vx - p.x[i][0]) + (vy - p.x[i][1]) * (vy - p.x[i][1]) - Real(p.w[i]);
      for (int j = 0; j < nq && !cut; ++j) {
        Real const other = (vx - q.x[j][0]) * (vx - q.x[j][0]) +
                           (vy - q.x[j][1]) * (vy - q.x[j][1]) - Real(q.w[j]);
        cut = other < own;
        tie = tie || (q.x[j] == p.x[i] && q.w[j] == p.w[i]);
      }
    }
    if (cut || tie)
      EXPECT_TRUE(may) << "cell " << i << (tie ? " (a duplicate in q)" : "");
    else {
      ++uncut;
      ruled_out += !may;
    }
  }
  return uncut > 0 ? double(ruled_out) / uncut : 1.0;
}

} // namespace

TEST(Boxes, RankEnvelopesNeverRuleOutARankThatCutsAndRuleOutTheFarCells) {
  // Zero weights: most of p's cells lie far from q's seeds.
  EXPECT_GT(envelope_against_brute_force(uniform_cloud(2000, 0, 81), unit_square()), 0.8);
  // Cells far from their seeds (one cluster spread over the domain), and a clustered cloud.
  EXPECT_GT(envelope_against_brute_force(displaced_cells_cloud(2000, 82), unit_square()), 0.5);
  EXPECT_GT(envelope_against_brute_force(clustered_cloud(2000, 83), unit_square()), 0.5);
  // A triangle: the nodes outside the domain rule nothing out.
  EXPECT_GT(envelope_against_brute_force(uniform_cloud(2000, 0.002, 84), triangle_domain()), 0.5);
  // Duplicates across the split (ties), and huge weights that empty most cells.
  Cloud twins = uniform_cloud(1000, 0, 85);
  for (int k = 0; k < 20; ++k)
    twins.x.push_back(twins.x[k]), twins.w.push_back(twins.w[k]);
  envelope_against_brute_force(twins, unit_square());
  Cloud huge = uniform_cloud(1000, 0, 86);
  for (int k = 0; k < 1000; k += 97)
    huge.w[k] = 0.3;
  envelope_against_brute_force(huge, unit_square());
}

TEST(Boxes, RankEnvelopesTakeTheCellsWhosePolygonsAreNotKnown) {
  // First-round cells without a polygon (more vertices than a slot holds) give their seed's
  // plane to every node: the envelope stays exact, and as tight. Every 7th cell of q (143 of
  // 1000), alone and in two groups; every cell: more than max_unknown_envelope_cells, nothing
  // ruled out.
  EXPECT_GT(envelope_against_brute_force(uniform_cloud(2000, 0, 81), unit_square(), 1, 7), 0.8);
  EXPECT_GT(envelope_against_brute_force(displaced_cells_cloud(2000, 82), unit_square(), 1, 7),
            0.5);
  EXPECT_GT(envelope_against_brute_force(clustered_cloud(2000, 83), unit_square(), 2, 7), 0.4);
  EXPECT_GT(envelope_against_brute_force(uniform_cloud(2000, 0.002, 84), triangle_domain(), 1, 7),
            0.5);
  EXPECT_EQ(envelope_against_brute_force(clustered_cloud(2000, 83), unit_square(), 1, 1), 0.0);
}

TEST(Boxes, TheEnvelopeOfTwoRanksNeverRulesOutOneThatCuts) {
  // Two ranks' envelopes together (a subtree of the tree over the ranks' boxes): at zero
  // weights, with cells far from their seeds, on a clustered cloud, in a triangle, with
  // duplicates and with huge weights.
  EXPECT_GT(envelope_against_brute_force(uniform_cloud(2000, 0, 91), unit_square(), 2), 0.8);
  EXPECT_GT(envelope_against_brute_force(displaced_cells_cloud(2000, 92), unit_square(), 2), 0.4);
  EXPECT_GT(envelope_against_brute_force(clustered_cloud(2000, 93), unit_square(), 2), 0.4);
  EXPECT_GT(envelope_against_brute_force(uniform_cloud(2000, 0.002, 94), triangle_domain(), 2),
            0.4);
  Cloud twins = uniform_cloud(1000, 0, 95);
  for (int k = 0; k < 20; ++k)
    twins.x.push_back(twins.x[k]), twins.w.push_back(twins.w[k]);
  envelope_against_brute_force(twins, unit_square(), 2);
  Cloud huge = uniform_cloud(1000, 0, 96);
  for (int k = 0; k < 1000; k += 97)
    huge.w[k] = 0.3;
  envelope_against_brute_force(huge, unit_square(), 2);
}

TEST(Boxes, CellsFarFromTheirSeedsStayHomeOnceTheEnvelopesAreKnown) {
  // A clustered cloud at the weights that solve its transport towards uniform masses: cells
  // far from their seeds, which the boxes of the seeds bound poorly. With warm_start (each
  // box's first-round cells known before round 0, hence every rank's envelope), at 2, 3 and 8
  // boxes, far fewer cells travel than without, for the same measures to round-off (those of
  // the diagram without envelopes, which the other tests hold to brute force).
  Cloud const c = at_transport_weights(clustered_cloud(2000, 87));
  for (int k : {2, 3, 8}) {
    SCOPED_TRACE(std::to_string(k) + " boxes");
    sdot::PowerDiagramOptions options;
    options.nb_boxes = k;
    options.coarse_to_fine = sdot::CoarseToFine::never;
    sdot::PowerDiagram<> searched(positions_view(c), weights_view(c), unit_square(), options);
    auto const reference = to_vector(searched.measures());
    long const without = searched.statistics().travelled_cells;
    options.warm_start = true;
    sdot::PowerDiagram<> pd(positions_view(c), weights_view(c), unit_square(), options);
    auto const m = to_vector(pd.measures());
    long const with = pd.statistics().travelled_cells;
    EXPECT_LT(4 * with, without) << without << " then " << with;
    ASSERT_EQ(m.size(), reference.size());
    for (std::size_t i = 0; i < m.size(); ++i)
      ASSERT_NEAR(m[i], reference[i], 1e-13) << "seed " << i;
  }
}
