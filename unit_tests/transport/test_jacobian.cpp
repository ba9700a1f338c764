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

TEST(MeasureJacobian, AssembledInAnOrder) {
  // The transport solver's Jacobian in the seeds' Z order (one process): entry (p, q) is the
  // Jacobian's (order(p), order(q)), the off-diagonal values the same bits (each from its own
  // edge), the diagonals summed in another order (equal to round-off); rows in increasing
  // column order; on clouds with empty cells and coincident seeds too.
  Cloud with_duplicate = uniform_cloud(300, 0, 12);
  with_duplicate.x[7] = with_duplicate.x[2];
  Cloud far = clustered_cloud(400, 13);
  for (std::size_t i = 0; i < far.x.size(); ++i)
    far.w[i] = 0.3 * far.x[i][0]; // cells far from their seeds, some empty
  int k = 0;
  for (Cloud const& c : {clustered(500, 14), with_duplicate, far, lattice_cloud(12)}) {
    SCOPED_TRACE("cloud " + std::to_string(k++));
    int const n = static_cast<int>(c.x.size());
    auto positions = positions_view(c);
    sdot::PowerDiagram<> pd(positions, weights_view(c), unit_square());
    auto const polygons = pd.cell_polygons();
    Kokkos::DefaultExecutionSpace space;
    auto const order = sdot::detail::morton_order(space, sdot::ConstPoints<>(positions));
    auto const plain =
        host_entries(sdot::measure_jacobian(pd, sdot::ConstPoints<>(positions)).global);
    auto const ordered = sdot::detail::assemble_jacobian(
        space, loom::Ranks{}, sdot::ConstPoints<>(positions),
        sdot::detail::polygon_reader(polygons), Kokkos::View<int const*>(order));
    EXPECT_EQ(ordered.global.numRows(), n);
    auto const entries = host_entries(ordered.global);
    auto const extended = host_entries(ordered.extended);
    EXPECT_EQ(entries, extended); // one process: no halo
    auto const o = to_vector(order);
    ASSERT_EQ(entries.size(), plain.size());
    double const scale = max_abs(plain);
    for (auto const& [at, value] : entries) {
      auto it = plain.find({o[at.first], o[at.second]});
      ASSERT_NE(it, plain.end()) << "entry (" << at.first << ", " << at.second << ")";
      if (at.first != at.second)
        EXPECT_EQ(value, it->second) << "entry (" << at.first << ", " << at.second << ")";
      else
        EXPECT_NEAR(value, it->second, 1e-14 * scale) << "diagonal " << at.first;
    }
    auto const diagonal = to_vector(ordered.diagonal);
    for (int p = 0; p < n; ++p)
      EXPECT_EQ(diagonal[p], entries.at({p, p})) << "row " << p;
    auto const row_map =
        Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), ordered.global.graph.row_map);
    auto const columns =
        Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), ordered.global.graph.entries);
    for (int p = 0; p < n; ++p)
      for (auto e = row_map(p) + 1; e < row_map(p + 1); ++e)
        EXPECT_LT(columns(e - 1), columns(e)) << "row " << p;
    // An order that is not one per seed: refused.
    EXPECT_THROW(sdot::detail::assemble_jacobian(
                     space, loom::Ranks{}, sdot::ConstPoints<>(positions),
                     sdot::detail::polygon_reader(polygons),
                     Kokkos::View<int const*>(Kokkos::subview(order, std::make_pair(0, n - 1)))),
                 std::logic_error);
  }
}

TEST(MeasureJacobian, CellWithManyNeighbours) {
  // A seed ringed by 24 others: its cell is a 24-gon, every edge shared (rows beyond the
  // entries a row sorts by ranks), against finite differences and with its 24 neighbours.
  Cloud c;
  c.x.push_back({0.5, 0.5});
  c.w.push_back(0);
  double const pi = std::acos(-1.0);
  for (int k = 0; k < 24; ++k) {
    c.x.push_back({0.5 + 0.2 * std::cos(2 * pi * k / 24), 0.5 + 0.2 * std::sin(2 * pi * k / 24)});
    c.w.push_back(0);
  }
  expect_matches_finite_differences(c, unit_square());
  auto const jacobian = jacobian_of(c, unit_square());
  expect_invariants(jacobian, 25);
  for (int k = 1; k <= 24; ++k)
    EXPECT_TRUE(jacobian.count({0, k})) << "column " << k;
}

TEST(MeasureJacobian, FromTheKeptCellsAsFromTheirPolygons) {
  // The transport solver reads the cells where the diagram kept them (one box, no polygon
  // compacted): the same entries, bit for bit, as from cell_polygons(), in the seeds' order and
  // in Z order; a cell too large for a slot (the ringed seed's 20-gon, and any other of more
  // than kept_slot_capacity vertices) is read from its polygon, built again apart.
  Cloud far = clustered_cloud(600, 15);
  for (std::size_t i = 0; i < far.x.size(); ++i)
    far.w[i] = 0.3 * far.x[i][0];
  Cloud ringed = uniform_cloud(200, 0, 16);
  ringed.x[0] = {0.5, 0.5};
  double const pi = std::acos(-1.0);
  for (int k = 1; k <= 20; ++k)
    ringed.x[k] = {0.5 + 0.01 * std::cos(2 * pi * k / 20), 0.5 + 0.01 * std::sin(2 * pi * k / 20)};
  Kokkos::DefaultExecutionSpace space;
  int k = 0;
  for (Cloud const& c : {clustered(500, 14), far, lattice_cloud(12), ringed}) {
    SCOPED_TRACE("cloud " + std::to_string(k));
    auto positions = positions_view(c);
    sdot::OneProcessCells<> cells(space, positions, unit_square());
    cells.set_weights(weights_view(c));
    auto const reader = cells.polygon_reader();
    ASSERT_TRUE(reader.slotted());
    auto const counts =
        Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), reader.slots.counts);
    int without_slot = 0;
    for (std::size_t cell = 0; cell < counts.extent(0); ++cell)
      without_slot += counts(cell) < 0;
    auto const offsets =
        Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), cells.cell_polygons().offsets);
    int too_large = 0;
    for (std::size_t i = 0; i + 1 < offsets.extent(0); ++i)
      too_large += offsets(i + 1) - offsets(i) > sdot::detail::kept_slot_capacity;
    EXPECT_EQ(without_slot, too_large);
    if (k == 3)
      EXPECT_GE(without_slot, 1); // the 20-gon
    auto const order = sdot::detail::morton_order(space, sdot::ConstPoints<>(positions));
    for (bool ordered : {false, true}) {
      Kokkos::View<int const*> rows = ordered ? order : decltype(order)();
      auto const kept = sdot::detail::assemble_jacobian(
          space, loom::Ranks{}, sdot::ConstPoints<>(positions), reader, rows);
      auto const compacted = sdot::detail::assemble_jacobian(
          space, loom::Ranks{}, sdot::ConstPoints<>(positions),
          sdot::detail::polygon_reader(cells.cell_polygons()), rows);
      EXPECT_EQ(host_entries(kept.global), host_entries(compacted.global)) << ordered;
      EXPECT_EQ(to_vector(kept.diagonal), to_vector(compacted.diagonal)) << ordered;
    }
    ++k;
  }
}

TEST(MeasureJacobian, RefusesPositionsNotOnePerCell) {
  Cloud const c = uniform_cloud(30, 0, 17);
  auto positions = positions_view(c);
  sdot::PowerDiagram<> pd(positions, weights_view(c), unit_square());
  auto const polygons = pd.cell_polygons();
  auto const fewer = Kokkos::subview(positions, std::make_pair(0, 29), Kokkos::ALL);
  try {
    sdot::measure_jacobian(Kokkos::DefaultExecutionSpace(), loom::Ranks{},
                           sdot::ConstPoints<>(fewer), polygons);
    FAIL() << "no exception";
  } catch (std::invalid_argument const& e) {
    EXPECT_NE(std::string(e.what()).find("29 positions but 30 cells"), std::string::npos)
        << e.what();
  }
}
