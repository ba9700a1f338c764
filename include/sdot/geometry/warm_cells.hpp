#pragma once
// Cells from the neighbours of an earlier computation of the same seeds
// (PowerDiagramOptions::warm_start): each cell is the domain clipped by the seeds of its earlier
// neighbouring cells (built at once from where consecutive bisectors meet, when they make that
// cell: cell_from_neighbour_cycle()). Where such a build finds an edge of no positive length at
// the new weights (its ends crossed: an edge flip), the two cells at that edge's other ends are
// cut further by each other's seed. Then each cell is certified against its neighbours' cells;
// a cell that fails is cut further by the neighbours of those across its failed edges, and if
// it fails again, built by the search (clip_by_tree). The certification is repeated until no
// cell fails.
//
// Why the result is exact: a cell clipped by some of the bisectors contains the true cell.
// When every edge between two seeds' cells is also an edge of the other cell, with the same
// ends, the cells glue into a covering of the domain of some whole degree d, and their measures
// add up to d times the domain's area. They are checked to add up to the area, so d = 1: the
// cells tile the domain and, each containing its true cell, are the true cells. Two edges have
// the same ends when the edges around them have the same labels (each end is where the same
// three lines meet: bisectors of the three seeds, or a side of the domain), or else when their
// coordinates agree within the tolerance (1e-10 of the domain's size, plus the distances
// involved); edges shorter than the tolerance are not compared: rounding makes and unmakes
// them, as it does in the search.

#include <sdot/base/scan.hpp>
#include <sdot/geometry/kept_polygons.hpp>
#include <sdot/geometry/validate.hpp>
#include <sdot/points.hpp>

#include <Kokkos_Core.hpp>

#include <functional>

namespace sdot::detail {

/// The seeds whose cells shared an edge with each seed's cell, by tree slot.
template <class MemorySpace>
struct NeighbourGraph {
  Kokkos::View<int*, MemorySpace> offsets; ///< n + 1 (empty: no graph)
  Kokkos::View<int*, MemorySpace> slots;   ///< neighbours' tree slots, by cell in edge order

  bool empty() const { return offsets.extent(0) == 0; }
};

/// The position of slot t in the list of slot s in `graph` (the last, should it come twice), or
/// −1 when t is not there.
template <class MemorySpace>
KOKKOS_INLINE_FUNCTION int position_in_list(NeighbourGraph<MemorySpace> const& graph, int s,
                                            int t) {
  int position = -1;
  for (int e = graph.offsets(s), k = 0; e < graph.offsets(s + 1); ++e, ++k)
    if (graph.slots(e) == t)
      position = k;
  return position;
}

/// The seeds at the two ends of the edge between a and the p-th seed of its list (the seeds
/// before and after it in the list: the cells that meet that edge's ends).
template <class MemorySpace>
KOKKOS_INLINE_FUNCTION void seeds_at_edge_ends(NeighbourGraph<MemorySpace> const& graph, int a,
                                               int p, int& before, int& after) {
  int const first = graph.offsets(a), m = graph.offsets(a + 1) - first;
  before = graph.slots(first + (p == 0 ? m - 1 : p - 1));
  after = graph.slots(first + (p + 1 == m ? 0 : p + 1));
}

/// tree.index inverted: the tree slot of each input index.
template <class ExecutionSpace, class MemorySpace>
Kokkos::View<int*, MemorySpace> slot_of_index(ExecutionSpace const& space,
                                              SeedTree<MemorySpace> const& tree) {
  Kokkos::View<int*, MemorySpace> slots(
      Kokkos::view_alloc(space, Kokkos::WithoutInitializing, "sdot::warm::slot_of_index"),
      tree.size);
  auto const index = tree.index;
  Kokkos::parallel_for(
      "sdot::warm::slot_of_index", Kokkos::RangePolicy<ExecutionSpace>(space, 0, tree.size),
      KOKKOS_LAMBDA(int s) { slots(index(s)) = s; });
  return slots;
}

/// The neighbour graph of the cells kept in `kept` (a cell without a slot has no neighbours,
/// as an empty cell: the next warm start builds both by the search).
template <class ExecutionSpace, class MemorySpace>
NeighbourGraph<MemorySpace> neighbour_graph(ExecutionSpace const& space,
                                            SeedTree<MemorySpace> const& tree,
                                            SlotPolygons<MemorySpace> const& kept,
                                            Kokkos::View<int const*, MemorySpace> slot_of) {
  using Policy = Kokkos::RangePolicy<ExecutionSpace>;
  int const n = tree.size;
  NeighbourGraph<MemorySpace> graph;
  graph.offsets = Kokkos::View<int*, MemorySpace>(
      Kokkos::view_alloc(space, Kokkos::WithoutInitializing, "sdot::warm::neighbour_offsets"),
      n + 1);
  auto const offsets = graph.offsets;
  std::size_t const capacity = kept.capacity;
  auto const counts = kept.counts;
  auto const labels = kept.labels;
  Kokkos::parallel_for(
      "sdot::warm::count_neighbours", Policy(space, 0, n), KOKKOS_LAMBDA(int s) {
        int count = 0;
        for (int k = 0; k < counts(s); ++k)
          count += labels(s * capacity + k) >= 0;
        offsets(s) = count;
      });
  int const total = exclusive_scan(space, "sdot::warm::neighbour_offsets",
                                   Kokkos::subview(offsets, Kokkos::make_pair(0, n)), offsets);
  graph.slots = Kokkos::View<int*, MemorySpace>(
      Kokkos::view_alloc(space, Kokkos::WithoutInitializing, "sdot::warm::neighbours"), total);
  auto const slots = graph.slots;
  Kokkos::parallel_for(
      "sdot::warm::neighbours", Policy(space, 0, n), KOKKOS_LAMBDA(int s) {
        int next = offsets(s);
        for (int k = 0; k < counts(s); ++k) {
          int const j = labels(s * capacity + k);
          if (j >= 0)
            slots(next++) = slot_of(j);
        }
      });
  return graph;
}

/// The graph with its rows and entries renumbered: row r of the result is row row_of(r) of
/// `graph` (n rows), each entry e becoming entry_of(e), in the same order. From tree slots to
/// input indices (row_of: slot_of_index, entry_of: tree.index) and back with another tree.
template <class ExecutionSpace, class MemorySpace, class RowOf, class EntryOf>
NeighbourGraph<MemorySpace> renumbered_graph(ExecutionSpace const& space,
                                             NeighbourGraph<MemorySpace> const& graph, int n,
                                             RowOf const& row_of, EntryOf const& entry_of) {
  using Policy = Kokkos::RangePolicy<ExecutionSpace>;
  NeighbourGraph<MemorySpace> out;
  out.offsets = Kokkos::View<int*, MemorySpace>(
      Kokkos::view_alloc(space, Kokkos::WithoutInitializing, "sdot::warm::renumbered_offsets"),
      n + 1);
  auto const offsets = out.offsets;
  auto const from_offsets = graph.offsets;
  Kokkos::parallel_for(
      "sdot::warm::renumbered_counts", Policy(space, 0, n), KOKKOS_LAMBDA(int r) {
        int const row = row_of(r);
        offsets(r) = from_offsets(row + 1) - from_offsets(row);
      });
  int const total = exclusive_scan(space, "sdot::warm::renumbered_offsets",
                                   Kokkos::subview(offsets, Kokkos::make_pair(0, n)), offsets);
  out.slots = Kokkos::View<int*, MemorySpace>(
      Kokkos::view_alloc(space, Kokkos::WithoutInitializing, "sdot::warm::renumbered"), total);
  auto const entries = out.slots;
  auto const from_entries = graph.slots;
  Kokkos::parallel_for(
      "sdot::warm::renumbered", Policy(space, 0, n), KOKKOS_LAMBDA(int r) {
        int const row = row_of(r);
        int next = offsets(r);
        for (int q = from_offsets(row); q < from_offsets(row + 1); ++q)
          entries(next++) = entry_of(from_entries(q));
      });
  return out;
}

/// Calls visit(t) for the seeds t two edges away from slot s in `graph` (its neighbours'
/// neighbours, s and its neighbours left out), each once, until visit returns true; returns
/// whether it did. Each list runs in the order of its cell's edges (counterclockwise), so
/// where the cells that made the graph meet three at a vertex, a neighbour j of s holds s at
/// some position p, the neighbours of s that share s's vertices with j at p − 1 and p + 1,
/// and at p − 2 the seed across j's edge with the one at p − 1, j', whose list holds it at
/// p' + 2 (the order flips from a cell to its neighbour). So j's list is visited without s,
/// without the neighbours of s at p ± 1, and without the entry at p − 2 when the one at p − 1
/// is a neighbour of s. Where the cells did not meet that way (the domain's boundary, edges
/// too short to tell apart, a neighbour's list without s), a seed can come twice, or a
/// neighbour of s come too: the caller must allow for both (clip_by_other's `revisit`); a
/// seed left out is left to what checks the cells (a wrong guess costs time, not exactness).
template <class MemorySpace, class Visit>
KOKKOS_INLINE_FUNCTION bool for_each_second_neighbour(NeighbourGraph<MemorySpace> const& graph,
                                                      int s, Visit const& visit) {
  int const begin = graph.offsets(s), end = graph.offsets(s + 1);
  auto const is_neighbour = [&](int t) { return position_in_list(graph, s, t) >= 0; };
  for (int k = begin; k < end; ++k) {
    int const j = graph.slots(k);
    int const first = graph.offsets(j), size = graph.offsets(j + 1) - first;
    int const p = position_in_list(graph, j, s);
    // Positions skipped besides p (-1: none).
    int after = -1, before = -1, across = -1;
    if (p >= 0 && size >= 3) {
      if (is_neighbour(graph.slots(first + (p + 1) % size)))
        after = (p + 1) % size;
      if (is_neighbour(graph.slots(first + (p + size - 1) % size))) {
        before = (p + size - 1) % size;
        if (size >= 4)
          across = (p + size - 2) % size;
      }
    }
    for (int q = 0; q < size; ++q) {
      int const t = graph.slots(first + q);
      if (q == after || q == before || q == across || t == s)
        continue;
      if (visit(t))
        return true;
    }
  }
  return false;
}

/// Builds `cell` (of `seed`, at tree slot s) as the polygon whose edges lie, in order, on the
/// bisectors with the seeds of graph list s, when that polygon is the domain cut by them: the
/// lines turn left from one to the next and once around, every edge has a positive length,
/// and the polygon lies strictly inside the domain. Then it is the cell clipping by those
/// seeds would make (the same edges, each vertex where two consecutive bisectors meet), built
/// from one intersection per vertex instead of a clip per seed. Returns false, the cell
/// undefined, where it is not (a neighbour lost its edge, the cell met the domain's boundary,
/// a tie): the caller clips. `collapsed` (when given): k where it gave up because the edge on
/// the bisector with the k-th seed of list s has no positive length (the weights moved the
/// ends of that edge past each other), else −1.
template <class MemorySpace>
KOKKOS_INLINE_FUNCTION bool
cell_from_neighbour_cycle(Polygon& cell, CellSeed const& seed, SeedTree<MemorySpace> const& tree,
                          NeighbourGraph<MemorySpace> const& graph, int s,
                          ConstPoints<MemorySpace> const& domain, int* collapsed = nullptr) {
  int const begin = graph.offsets(s), m = graph.offsets(s + 1) - begin;
  if (collapsed)
    *collapsed = -1;
  if (m < 3 || m > cell.capacity)
    return false;
  // The bisector with the k-th neighbour: ax·x + ay·y = b, relative to the seed (as clipped).
  struct Line {
    double ax, ay, b;
    int label;
  };
  auto const line = [&](int k) {
    int const t = graph.slots(begin + k);
    Seed const other = tree.seeds(t);
    double const dx = other.x - seed.x, dy = other.y - seed.y;
    return Line{dx, dy, bisector_offset(dx * dx + dy * dy, seed.w, other.w), tree.index(t)};
  };
  cell.size = 0;
  cell.max_radius2 = 0;
  Line const closing = line(m - 1);
  Line previous = closing;
  int crossings = 0; // of the normals through the direction (1, 0)
  double last_x = 0, last_y = 0;
  for (int k = 0; k < m; ++k) {
    Line const next = k + 1 < m ? line(k) : closing;
    double const turn = previous.ax * next.ay - previous.ay * next.ax;
    if (!(turn > 0))
      return false;
    crossings += previous.ay < 0 && next.ay >= 0;
    double const inverse = 1 / turn;
    double const x = (previous.b * next.ay - next.b * previous.ay) * inverse;
    double const y = (previous.ax * next.b - next.ax * previous.b) * inverse;
    // The edge on `previous` runs from the last vertex to this one, along (−ay, ax).
    if (k > 0 && !(previous.ax * (last_y - y) - previous.ay * (last_x - x) < 0)) {
      if (collapsed)
        *collapsed = k - 1;
      return false;
    }
    cell.push(x, y, next.label);
    last_x = x;
    last_y = y;
    previous = next;
  }
  if (crossings != 1)
    return false;
  if (!(previous.ax * (last_y - cell.y(0)) - previous.ay * (last_x - cell.x(0)) < 0)) {
    if (collapsed)
      *collapsed = m - 1;
    return false;
  }
  // Inside the domain: the corners of the cell's bounding box are (the domain is convex).
  int const nb_domain = static_cast<int>(domain.extent(0));
  for (int d = 0; d < nb_domain; ++d) {
    int const e = d + 1 == nb_domain ? 0 : d + 1;
    double const ux = domain(d, 0) - seed.x, uy = domain(d, 1) - seed.y;
    double const ex = domain(e, 0) - seed.x - ux, ey = domain(e, 1) - seed.y - uy;
    auto const inside = [&](double x, double y) { return ex * (y - uy) - ey * (x - ux) > 0; };
    if (!(inside(cell.xmin, cell.ymin) && inside(cell.xmax, cell.ymin) &&
          inside(cell.xmin, cell.ymax) && inside(cell.xmax, cell.ymax)))
      return false;
  }
  return true;
}

/// How a cell of the warm start stands.
enum WarmState : int {
  warm_cell = 0,      ///< built from the earlier neighbours, certified so far
  cell_to_search = 1, ///< to be built by the search
  searched_cell = 2,  ///< built by the search
  cell_to_widen = 3,  ///< to be built again from the earlier neighbours and theirs
  widened_cell = 4    ///< built from the earlier neighbours and theirs, certified so far
};

/// The most neighbours across failed edges whose neighbours widen a cell (WarmCellsStep).
inline constexpr int max_widened_through = 8;

/// Builds the cell of each tree slot (or of each slot of `items`, when given) from its earlier
/// neighbours, and with `widen` from their neighbours too (the first ones first: the cell is
/// then nearly final, and most of the others leave it unchanged). Most cells keep their
/// neighbours from one computation to the next, so the first build takes the neighbours only
/// (after a small change of the weights the neighbours' neighbours cut almost no cell, and
/// testing them is most of the build's time); those whose certification fails are widened:
/// their first cells, kept in their slots, cut further by the neighbours' neighbours. A
/// seed without earlier neighbours (its cell was empty, or had no slot), or whose cell
/// overflows or has more vertices than a slot holds, is left to the search.
template <class MemorySpace>
struct WarmCellsStep {
  CellsFunctor<MemorySpace> cells; ///< the outputs (no polygon output) and `abandon`
  SlotPolygons<MemorySpace> kept;
  NeighbourGraph<MemorySpace> graph;
  Kokkos::View<int*, MemorySpace> state;       ///< by tree slot (WarmState)
  Kokkos::View<int const*, MemorySpace> items; ///< the slots to build (empty: every slot)
  bool widen = false; ///< with the neighbours' neighbours (widened_through())
  /// widen: by tree slot, the edges of the first build's cell that failed the certification
  /// (CertifyEdges::disagreeing); where it names at most max_widened_through of them, the cell
  /// is widened by those neighbours' neighbours alone.
  Kokkos::View<unsigned const*, MemorySpace> disagreeing = {};
  Kokkos::View<int const*, MemorySpace> slot_of = {}; ///< input index -> tree slot (widen)
  /// By tree slot: bit k set where the first build found the edge on the bisector with the
  /// k-th neighbour of no positive length at the new weights (the first such edge; written by
  /// the first build when allocated, read with `flips`).
  Kokkos::View<unsigned*, MemorySpace> collapsed_edges = {};
  /// Cut further after the first build (the cells at the ends of collapsed edges): the first
  /// build's cell by the seed across each collapsed edge between two consecutive neighbours
  /// (an edge flip: the edge between them gives way to one with that seed).
  bool flips = false;

  KOKKOS_FUNCTION void operator()(Polygon& cell, int item) const {
    int const s = items.extent(0) ? items(item) : item;
    SeedTree<MemorySpace> const& tree = cells.tree;
    int const index = tree.index(s);
    Seed const me = tree.seeds(s);
    CellSeed const seed{me.x, me.y, me.w, index, s};
    int through[max_widened_through];
    int const nb_through = widen ? widened_through(s, through) : 0;
    int const begin = graph.offsets(s), end = graph.offsets(s + 1);
    // (A cell to widen or flip has its first cell in its slot; without one it is searched.)
    if (begin == end || cells.abandon.given_up() || ((widen || flips) && kept.counts(s) < 0)) {
      kept.counts(s) = -1;
      state(s) = cell_to_search;
      return;
    }
    ClipResult result = ClipResult::unchanged;
    auto const clip_by_slot = [&](int t, bool revisit) {
      return clip_by_slots(cell, seed, tree, t, t + 1, result, revisit);
    };
    bool stop = false;
    if (widen || flips) {
      // The first build's cell, kept in its slot, is the domain cut by the neighbours already
      // (or by more seeds: a first pass from candidates): the same bits as cutting it again.
      start_from_slot(cell, kept, s);
    } else {
      int collapsed;
      if (!cell_from_neighbour_cycle(cell, seed, tree, graph, s, cells.domain_vertices,
                                     &collapsed)) {
        if (collapsed >= 0 && collapsed < 32 && collapsed_edges.extent(0) > 0)
          collapsed_edges(s) = 1u << collapsed;
        start_from_domain(cell, seed.x, seed.y, cells.domain_vertices, cells.domain_labels);
        for (int k = begin; k < end && !stop; ++k)
          stop = clip_by_slot(graph.slots(k), false);
      }
    }
    kept.counts(s) = -1;
    // The seeds across the collapsed edges between consecutive neighbours (edge flips).
    for (int k = begin; k < end && flips && !stop; ++k) {
      int const t =
          seed_across_collapsed_edge(s, graph.slots(k), graph.slots(k + 1 == end ? begin : k + 1));
      if (t >= 0)
        stop = clip_by_slot(t, true);
    }
    // The neighbours' neighbours: those of the neighbours across a failed edge, or all
    // (for_each_second_neighbour).
    if (widen && !stop && nb_through < 0)
      stop = for_each_second_neighbour(graph, s, [&](int t) { return clip_by_slot(t, true); });
    for (int c = 0; c < nb_through && !stop; ++c) {
      int const j = through[c];
      for (int k = graph.offsets(j); k < graph.offsets(j + 1) && !stop; ++k)
        if (graph.slots(k) != s)
          stop = clip_by_slot(graph.slots(k), true);
    }
    if (result == ClipResult::overflow || cell.size > kept.capacity) {
      state(s) = cell_to_search;
      return;
    }
    // Emptied: the true cell, inside this one, is empty too. A measure below `abandon`'s is
    // below for the true cell too.
    cells.finish(cell, seed);
    keep_in_slot(kept, s, cell);
    state(s) = widen ? widened_cell : warm_cell;
  }

  /// When the edge between a and b collapsed (as a's or b's first build found it), the seed at
  /// its other end from s (in a's list, the neighbour on the other side of b), else −1.
  KOKKOS_FUNCTION int seed_across_collapsed_edge(int s, int a, int b) const {
    // The position of `to` in the list of `from`, and whether the edge there collapsed.
    auto const collapsed = [&](int from, int to, int& position) {
      position = position_in_list(graph, from, to);
      return position >= 0 && position < 32 && ((collapsed_edges(from) >> position) & 1u);
    };
    int p, q;
    bool const from_a = collapsed(a, b, p);
    if (p < 0 || !(from_a || (collapsed_edges(b) != 0u && collapsed(b, a, q))))
      return -1;
    if (graph.offsets(a + 1) - graph.offsets(a) < 3)
      return -1;
    int before, after;
    seeds_at_edge_ends(graph, a, p, before, after);
    int const t = before == s ? after : after == s ? before : -1;
    return t == b ? -1 : t;
  }

  /// The tree slots of the neighbours across the failed edges of the first build's cell of
  /// slot s (still in its slot), into `through`; -1 where the whole second ring is taken: no
  /// failed edge is known (the cell failed without one, or every cell is widened), an edge
  /// beyond the 32nd failed, or more than max_widened_through did. A seed the first build
  /// missed cuts the cell where the edge that fails lies, and so, nearly always, the cell
  /// across it too: it is among that cell's neighbours (a clustered 1e5 transport solve: no
  /// more cells fail after widening than with the whole second ring).
  KOKKOS_FUNCTION int widened_through(int s, int* through) const {
    unsigned const failed = disagreeing.extent(0) ? disagreeing(s) : 0u;
    int const size = kept.counts(s);
    if (failed == 0u || failed == ~0u || size < 0)
      return -1;
    std::size_t const row = std::size_t(s) * std::size_t(kept.capacity);
    int count = 0;
    for (int k = 0; k < size; ++k) {
      int const j = kept.labels(row + k);
      if (!((failed >> k) & 1u) || j < 0)
        continue;
      if (count == max_widened_through)
        return -1;
      through[count++] = slot_of(j);
    }
    return count;
  }
};

/// Whether a cell in WarmState `state` was built from the earlier neighbours (and is certified
/// so far).
KOKKOS_INLINE_FUNCTION bool is_warm(int state) {
  return state == warm_cell || state == widened_cell;
}

/// Compares each edge of a kept cell between two seeds with the same edge of the other seed's
/// cell; where they differ (or the other cell has no slot), the warm cells of the two are
/// marked in `redo`.
template <class MemorySpace>
struct CertifyEdges {
  SeedTree<MemorySpace> tree;
  SlotPolygons<MemorySpace> kept;
  Kokkos::View<int const*, MemorySpace> slot_of;
  Kokkos::View<int const*, MemorySpace> state;
  Kokkos::View<int*, MemorySpace> redo;        ///< by tree slot
  double length = 0;                           ///< the diagonal of the domain's bounding box
  Kokkos::View<int const*, MemorySpace> items; ///< the slots to certify (empty: every slot)
  Kokkos::View<int*, MemorySpace> check; ///< by tree slot: the ends of a disagreeing edge marked
  /// When allocated, by tree slot: bit k set where edge k of the cell disagreed (every bit:
  /// an edge beyond the 32nd, or one the other cell does not have).
  Kokkos::View<unsigned*, MemorySpace> disagreeing = {};

  /// Called once every cell is built (warm or searched).
  KOKKOS_FUNCTION void operator()(int item) const {
    int const s = items.extent(0) ? items(item) : item;
    int const own_state = state(s);
    int const i = tree.index(s);
    int const size = kept.counts(s);
    Seed const me = tree.seeds(s);
    std::size_t const begin = std::size_t(s) * std::size_t(kept.capacity);
    // A cell bounded by the domain alone has no edge to compare: unless it is the only seed,
    // it is built again (others empty it, or it holds the whole domain, as the search says).
    bool bounded_by_a_seed = tree.size == 1;
    for (int k = 0; k < size; ++k)
      bounded_by_a_seed |= kept.labels(begin + k) >= 0;
    if (size > 0 && !bounded_by_a_seed && is_warm(own_state))
      sdot::compat::atomic_max(&redo(s), 1);
    for (int k = 0; k < size; ++k) {
      int const j = kept.labels(begin + k);
      if (j < 0)
        continue;
      std::size_t const next = begin + (k + 1 == size ? 0 : k + 1);
      int const t = slot_of(j);
      int const other_size = kept.counts(t);
      std::size_t const other_begin = std::size_t(t) * std::size_t(kept.capacity);
      // The same edge in the other cell runs the other way: from b to a.
      int other_edge = -1;
      for (int q = 0; q < other_size && other_edge < 0; ++q)
        if (kept.labels(other_begin + q) == i)
          other_edge = q;
      if (other_edge >= 0 && same_neighbours(begin, size, k, other_begin, other_size, other_edge))
        continue;
      double const ax = kept.absolute(begin + k, 0, me), ay = kept.absolute(begin + k, 1, me);
      double const bx = kept.absolute(next, 0, me), by = kept.absolute(next, 1, me);
      Seed const other = tree.seeds(t);
      double const tolerance =
          1e-10 * (length + sdot::compat::fabs(ax - me.x) + sdot::compat::fabs(ay - me.y) +
                   sdot::compat::fabs(other.x - me.x) + sdot::compat::fabs(other.y - me.y));
      if ((bx - ax) * (bx - ax) + (by - ay) * (by - ay) <= tolerance * tolerance)
        continue;
      std::size_t const other_next =
          other_begin + (other_edge + 1 == other_size ? 0 : other_edge + 1);
      bool const same =
          other_edge >= 0 &&
          sdot::compat::fabs(kept.absolute(other_begin + other_edge, 0, other) - bx) <= tolerance &&
          sdot::compat::fabs(kept.absolute(other_begin + other_edge, 1, other) - by) <= tolerance &&
          sdot::compat::fabs(kept.absolute(other_next, 0, other) - ax) <= tolerance &&
          sdot::compat::fabs(kept.absolute(other_next, 1, other) - ay) <= tolerance;
      if (same)
        continue;
      // Both are certified again next round, whatever is built again (see the loop).
      sdot::compat::atomic_max(&check(s), 1);
      sdot::compat::atomic_max(&check(t), 1);
      if (is_warm(own_state))
        sdot::compat::atomic_max(&redo(s), 1);
      if (is_warm(state(t)))
        sdot::compat::atomic_max(&redo(t), 1);
      if (disagreeing.extent(0)) {
        Kokkos::atomic_fetch_or(&disagreeing(s), edge_bit(k));
        Kokkos::atomic_fetch_or(&disagreeing(t), edge_bit(other_edge));
      }
    }
  }

  /// Whether edge `other_edge` of the cell in the slot at `other_begin` (`other_size`
  /// vertices), labelled with this cell's seed, lies between the labels of the edges around
  /// edge k of the cell at `begin`, taken the other way: then both edges join the points where
  /// the same three lines meet (their seeds' bisectors or the domain's sides), the same edge up
  /// to rounding, and the comparison of coordinates (which reads the other cell's vertices) is
  /// not needed.
  KOKKOS_INLINE_FUNCTION bool same_neighbours(std::size_t begin, int size, int k,
                                              std::size_t other_begin, int other_size,
                                              int other_edge) const {
    int const before = kept.labels(begin + (k == 0 ? size - 1 : k - 1));
    int const after = kept.labels(begin + (k + 1 == size ? 0 : k + 1));
    int const q = other_edge;
    return kept.labels(other_begin + (q + 1 == other_size ? 0 : q + 1)) == before &&
           kept.labels(other_begin + (q == 0 ? other_size - 1 : q - 1)) == after;
  }

  KOKKOS_INLINE_FUNCTION static unsigned edge_bit(int k) {
    return k >= 0 && k < 32 ? 1u << k : ~0u;
  }
};

/// What build_cells_from_neighbours() did.
struct WarmReport {
  CellsReport cells;
  bool certified = false; ///< false: the cells do not tile the domain, build them all again
  int warm_cells = 0;     ///< cells kept from the neighbours' clipping
  int rounds = 0;         ///< certifications that sent cells to be widened or searched
};

/// What a first pass of certified_cells() builds with: the cell step (outputs and `abandon`),
/// the slots to keep the cells in, the state of each cell (WarmState) and the kernel-local
/// capacity of the polygons.
template <class MemorySpace>
struct FirstPassArguments {
  CellsFunctor<MemorySpace> step;
  SlotPolygons<MemorySpace> kept;
  Kokkos::View<int*, MemorySpace> state;
  int inline_capacity;
};

/// The first pass of certified_cells() (a std::function: a function template instantiated with
/// a lambda's type could not hold device lambdas, by nvcc's rules).
template <class MemorySpace>
using FirstPass =
    std::function<NeighbourGraph<MemorySpace>(FirstPassArguments<MemorySpace> const&)>;

/// Cells built by `first_pass`, then certified, and built again where the certification fails
/// (see the top of this file), into `out` and the slots `kept` (allocated here).
/// first_pass(FirstPassArguments) builds every cell it can into its slot (state warm_cell, or
/// cell_to_search), and returns the neighbour graph that widens the cells that fail.
/// `domain_area` and `domain_length` (the diagonal of its bounding box) for the certification.
/// `before_search` runs once before the first cell goes to the search, the only step that
/// reads the tree's weight bounds: a caller whose tree holds new weights without their bounds
/// (set_seed_weights()) computes them there, and not at all when every cell is certified or
/// the computation is abandoned first.
template <class ExecutionSpace, class MemorySpace>
WarmReport certified_cells(ExecutionSpace const& space, SeedTree<MemorySpace> const& tree,
                           ConstPoints<MemorySpace> domain_vertices,
                           Kokkos::View<int const*, MemorySpace> domain_labels, int capacity,
                           CellOutputs<MemorySpace> const& out, SlotPolygons<MemorySpace>& kept,
                           Kokkos::View<int const*, MemorySpace> slot_of, double domain_area,
                           double domain_length, AbandonBelow<MemorySpace> const& abandon,
                           std::function<void()> const& before_search,
                           FirstPass<MemorySpace> const& first_pass) {
  using Policy = Kokkos::RangePolicy<ExecutionSpace>;
  int const n = tree.size;
  WarmReport report;
  int const domain_size = static_cast<int>(domain_vertices.extent(0));
  int const inline_capacity = inline_polygon_capacity(capacity, domain_size);
  if (inline_capacity == 0 || n == 0)
    return report;
  kept = allocate_slot_polygons(space, n, sdot::compat::min(inline_capacity, kept_slot_capacity));
  Kokkos::View<int*, MemorySpace> state(
      Kokkos::view_alloc(space, Kokkos::WithoutInitializing, "sdot::warm::state"), n);
  Kokkos::View<int*, MemorySpace> redo(Kokkos::view_alloc(space, "sdot::warm::redo"), n);
  CellOutputs<MemorySpace> plain = out;
  plain.polygon_offsets = {};
  CellsFunctor<MemorySpace> step{tree, domain_vertices, domain_labels, {}, plain, {}, abandon};
  NeighbourGraph<MemorySpace> const graph =
      first_pass(FirstPassArguments<MemorySpace>{step, kept, state, inline_capacity});
  report.cells.final_capacity = inline_capacity;
  int overflow_capacity = inline_capacity;
  // Then every cell left goes to the search. A round after the first certifies only the cells
  // around those built again, and a cell whose seed takes cells away from far seeds fails one
  // ring of neighbours further each round.
  constexpr int max_rounds = 8;
  Kokkos::View<int*, MemorySpace> check(Kokkos::view_alloc(space, "sdot::warm::check"), n);
  // The first certification's failed edges, which narrow the widening.
  Kokkos::View<unsigned*, MemorySpace> disagreeing(
      Kokkos::view_alloc(space, "sdot::warm::disagreeing"), n);
  Kokkos::View<int const*, MemorySpace> to_check; // empty: every cell
  bool searched = false;
  while (true) {
    if (abandoned(space, abandon)) {
      report.cells.abandoned = true;
      return report;
    }
    // The cells to widen: built again from their neighbours' neighbours too.
    auto const to_widen = items_where(
        space, "sdot::warm::to_widen", n,
        KOKKOS_LAMBDA(int s) { return state(s) == cell_to_widen; });
    if (to_widen.extent(0) > 0)
      for_each_cell(space, "sdot::warm::widened_cells",
                    WarmCellsStep<MemorySpace>{step, kept, graph, state, to_widen, true,
                                               disagreeing, slot_of},
                    static_cast<int>(to_widen.extent(0)), inline_capacity);
    if (abandoned(space, abandon)) {
      report.cells.abandoned = true;
      return report;
    }
    // The cells to search: built with their slots, those that overflow at larger capacities.
    auto const to_search = items_where(
        space, "sdot::warm::to_search", n,
        KOKKOS_LAMBDA(int s) { return state(s) == cell_to_search; });
    int const count = static_cast<int>(to_search.extent(0));
    if (count > 0) {
      if (before_search && !searched) {
        before_search();
        step.tree = tree; // the bounds as computed there
      }
      searched = true;
      Kokkos::View<int*, MemorySpace> overflowed(
          Kokkos::view_alloc(space, Kokkos::WithoutInitializing, "sdot::warm::overflowed"), count);
      CellsFunctor<MemorySpace> search = step;
      search.items = to_search;
      search.overflowed = overflowed;
      for_each_cell(space, "sdot::warm::search", SlotCellsStep<MemorySpace>{search, kept}, count,
                    inline_capacity);
      CellsReport rebuilt;
      rebuild_overflowed_cells(space, search, overflowed, count, 2 * inline_capacity, true,
                               rebuilt);
      report.cells.overflowed_cells += rebuilt.overflowed_cells;
      report.cells.reruns += rebuilt.reruns;
      overflow_capacity = sdot::compat::max(overflow_capacity, rebuilt.final_capacity);
      Kokkos::parallel_for(
          "sdot::warm::searched", Policy(space, 0, count),
          KOKKOS_LAMBDA(int k) { state(to_search(k)) = searched_cell; });
      if (abandoned(space, abandon)) {
        report.cells.abandoned = true;
        return report;
      }
    }
    // Certify: the warm cells whose edges disagree with their neighbours' are widened, or
    // searched when they were widened already. After the first round, only the cells built
    // again, their neighbours before, and the cells that had a disagreeing edge: a cell with a
    // disagreeing edge now is one of them (if it was not built again, that edge either
    // disagreed the round before, or agreed with a cell that was built again, whose old
    // polygon then had the edge).
    int const checked = to_check.extent(0) ? static_cast<int>(to_check.extent(0)) : n;
    Kokkos::parallel_for(
        "sdot::warm::certify", Policy(space, 0, checked),
        CertifyEdges<MemorySpace>{tree, kept, slot_of, state, redo, domain_length, to_check, check,
                                  report.rounds == 0 ? disagreeing : decltype(disagreeing)()});
    // The first round's failures are widened, later ones searched: a cell that fails once its
    // neighbours were built again lies where the weights moved the cells most.
    bool const first_round = report.rounds == 0;
    int failed = 0;
    Kokkos::parallel_reduce(
        "sdot::warm::failed", Policy(space, 0, n),
        KOKKOS_LAMBDA(int s, int& c) {
          if (redo(s)) {
            state(s) = state(s) == warm_cell && first_round ? cell_to_widen : cell_to_search;
            redo(s) = 0;
            ++c;
          }
        },
        failed);
    if (failed == 0)
      break;
    ++report.rounds;
    // Most cells failed: after a first build from the neighbours alone, every cell is widened
    // (the failures' neighbours would fail next); in a later round, or after many rounds, every
    // warm cell left goes to the search now.
    bool const many = failed > n / 2;
    bool const widen_the_rest = many && first_round;
    bool const search_the_rest = report.rounds >= max_rounds || (many && !widen_the_rest);
    if (widen_the_rest || search_the_rest)
      Kokkos::parallel_for(
          "sdot::warm::rebuild_the_rest", Policy(space, 0, n), KOKKOS_LAMBDA(int s) {
            int const now = state(s);
            if (search_the_rest ? is_warm(now) || now == cell_to_widen : now == warm_cell)
              state(s) = search_the_rest ? cell_to_search : cell_to_widen;
          });
    // The next round certifies the cells to build again and their neighbours now (marked
    // before the cells change), with those the certification marked.
    Kokkos::parallel_for(
        "sdot::warm::mark_checks", Policy(space, 0, n), KOKKOS_LAMBDA(int s) {
          int const now = state(s);
          if (now != cell_to_widen && now != cell_to_search)
            return;
          check(s) = 1;
          std::size_t const begin = std::size_t(s) * std::size_t(kept.capacity);
          for (int k = 0; k < kept.counts(s); ++k) {
            int const j = kept.labels(begin + k);
            if (j >= 0)
              sdot::compat::atomic_max(&check(slot_of(j)), 1);
          }
        });
    to_check = items_where(
        space, "sdot::warm::to_check", n, KOKKOS_LAMBDA(int s) { return check(s) != 0; });
    Kokkos::deep_copy(space, check, 0);
  }
  report.cells.final_capacity = overflow_capacity;
  Kokkos::parallel_reduce(
      "sdot::warm::count_warm", Policy(space, 0, n),
      KOKKOS_LAMBDA(int s, int& c) { c += is_warm(state(s)); }, report.warm_cells);
  report.certified =
      sdot::compat::fabs(measures_sum(space, out.measures) - domain_area) <= 1e-9 * domain_area;
  list_unslotted_cells(space, tree, kept, overflow_capacity);
  return report;
}

/// Builds the cells of `tree` from the neighbour graph of an earlier computation (see the top
/// of this file; certified_cells()), from the neighbours alone first.
template <class ExecutionSpace, class MemorySpace>
WarmReport build_cells_from_neighbours(
    ExecutionSpace const& space, SeedTree<MemorySpace> const& tree,
    ConstPoints<MemorySpace> domain_vertices, Kokkos::View<int const*, MemorySpace> domain_labels,
    int capacity, CellOutputs<MemorySpace> const& out, SlotPolygons<MemorySpace>& kept,
    NeighbourGraph<MemorySpace> const& graph, Kokkos::View<int const*, MemorySpace> slot_of,
    double domain_area, double domain_length, AbandonBelow<MemorySpace> const& abandon = {},
    std::function<void()> const& before_search = {}) {
  sdot::compat::ScopedRegion region("sdot::build_cells_from_neighbours");
  return certified_cells(
      space, tree, domain_vertices, domain_labels, capacity, out, kept, slot_of, domain_area,
      domain_length, abandon, before_search,
      FirstPass<MemorySpace>([&](FirstPassArguments<MemorySpace> const& first) {
        Kokkos::View<unsigned*, MemorySpace> collapsed(
            Kokkos::view_alloc(space, "sdot::warm::collapsed_edges"), tree.size);
        WarmCellsStep<MemorySpace> step{first.step, first.kept, graph, first.state, {}};
        step.collapsed_edges = collapsed;
        for_each_cell(space, "sdot::warm::cells", step, tree.size, first.inline_capacity);
        // The cells at the other ends of the collapsed edges, cut further by the seeds across them.
        Kokkos::View<int*, MemorySpace> flipped(Kokkos::view_alloc(space, "sdot::warm::flipped"),
                                                tree.size);
        NeighbourGraph<MemorySpace> const neighbours = graph;
        Kokkos::parallel_for(
            "sdot::warm::mark_flipped", Kokkos::RangePolicy<ExecutionSpace>(space, 0, tree.size),
            KOKKOS_LAMBDA(int a) {
              unsigned const bits = collapsed(a);
              int const m = neighbours.offsets(a + 1) - neighbours.offsets(a);
              if (bits == 0u || m < 3)
                return;
              for (int p = 0; p < m && p < 32; ++p)
                if ((bits >> p) & 1u) {
                  int before, after;
                  seeds_at_edge_ends(neighbours, a, p, before, after);
                  Kokkos::atomic_fetch_or(&flipped(before), 1);
                  Kokkos::atomic_fetch_or(&flipped(after), 1);
                }
            });
        auto const state = first.state;
        auto const items = items_where(
            space, "sdot::warm::to_flip", tree.size,
            KOKKOS_LAMBDA(int t) { return flipped(t) != 0 && state(t) == warm_cell; });
        if (items.extent(0) > 0) {
          step.items = items;
          step.flips = true;
          for_each_cell(space, "sdot::warm::flipped_cells", step, static_cast<int>(items.extent(0)),
                        first.inline_capacity);
        }
        return graph;
      }));
}

} // namespace sdot::detail
