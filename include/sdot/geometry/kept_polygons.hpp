#pragma once
// One-box cells built once for both their measures and their polygons
// (PowerDiagramOptions::keep_polygons): the first pass, at the kernel-local capacity, also
// copies every cell of at most S = 16 vertices (nearly all) into a fixed slot of S vertices
// (the cell of tree slot s: rows [s S, s S + size), written in the order the cells are built); the
// cells that did not fit the first pass are rebuilt at larger capacities as build_cells() does
// (measures only). kept_cell_polygons() then compacts the slots into CellPolygons and rebuilds only
// the cells without a slot, writing their polygons in place; a CellPolygonReader reads them
// from the slots, uncompacted, when every cell has one. The polygons are the same bits as those
// of a second build_cells() pass with polygon output (same code, same inputs).

#include <sdot/base/scan.hpp>
#include <sdot/geometry/cells.hpp>
#include <sdot/geometry/polygon_storage.hpp>
#include <sdot/points.hpp>

#include <Kokkos_Core.hpp>

#include <cstdint>
#include <stdexcept>

namespace sdot::detail {

/// Vertices of a slot. Cells have about 6 and seldom more than 12 (none of the 1e5 cells of a
/// clustered cloud at its transport weights); a cell with more has no slot and is built apart.
/// Each vertex of capacity is 20 bytes per seed: the slots are the largest part of what a first
/// computation allocates.
inline constexpr int kept_slot_capacity = 12;

/// The polygons of a measures pass, in fixed slots. The vertices are relative to the cell's
/// seed, as the cell kernel computes them: a cell read back from its slot, to be cut further,
/// is the same bits however far the domain lies from the origin (absolute() gives the
/// coordinates of the outputs).
template <class MemorySpace>
struct SlotPolygons {
  int capacity = 0; ///< of a slot; 0: nothing kept (no kernel-local capacity for this domain)
  Points<MemorySpace> vertices; ///< n × capacity rows, relative to each cell's seed
  Kokkos::View<int*, MemorySpace> labels;
  /// Vertices of the cell of each tree slot in its slot, or -1 when it has no slot.
  Kokkos::View<int*, MemorySpace> counts;
  Kokkos::View<int*, MemorySpace> overflow_items; ///< tree slots of the cells without a slot
  int overflow_capacity = 0;                      ///< a capacity at which all of them fit

  /// Coordinate `axis` of the vertex in row `row` of a slot of `seed`'s cell, in absolute
  /// coordinates (the bits of the outputs: seed + relative vertex).
  KOKKOS_INLINE_FUNCTION double absolute(std::size_t row, int axis, Seed const& seed) const {
    return (axis == 0 ? seed.x : seed.y) + vertices(row, axis);
  }
};

/// Copies `cell` (vertices relative to its seed, of tree slot `slot`) into its slot, or marks it
/// as without a slot when it has more vertices than a slot holds.
template <class MemorySpace>
KOKKOS_INLINE_FUNCTION void keep_in_slot(SlotPolygons<MemorySpace> const& kept, int slot,
                                         Polygon const& cell) {
  if (cell.size > kept.capacity) {
    kept.counts(slot) = -1;
    return;
  }
  std::size_t const begin = std::size_t(slot) * std::size_t(kept.capacity);
  for (int k = 0; k < cell.size; ++k) {
    kept.vertices(begin + k, 0) = cell.x(k);
    kept.vertices(begin + k, 1) = cell.y(k);
    kept.labels(begin + k) = cell.label(k);
  }
  kept.counts(slot) = cell.size;
}

/// Starts `cell` as the polygon in slot `slot` (which must have one): the same bits as the
/// polygon that was kept, to be cut further; each edge label l ≥ 0 becomes relabel(l).
template <class MemorySpace, class Relabel>
KOKKOS_INLINE_FUNCTION void start_from_slot(Polygon& cell, SlotPolygons<MemorySpace> const& kept,
                                            int slot, Relabel const& relabel) {
  cell.size = 0;
  cell.max_radius2 = 0;
  std::size_t const begin = std::size_t(slot) * std::size_t(kept.capacity);
  for (int k = 0; k < kept.counts(slot); ++k) {
    int const label = kept.labels(begin + k);
    cell.push(kept.vertices(begin + k, 0), kept.vertices(begin + k, 1),
              label < 0 ? label : relabel(label));
  }
}

/// start_from_slot() with the labels as kept.
template <class MemorySpace>
KOKKOS_INLINE_FUNCTION void start_from_slot(Polygon& cell, SlotPolygons<MemorySpace> const& kept,
                                            int slot) {
  start_from_slot(cell, kept, slot, [](int label) { return label; });
}

/// The cell step of build_cells(), which also copies a cell that fits into its slot (the
/// cells.items' tree slots, or item = tree slot when it has none).
template <class MemorySpace>
struct SlotCellsStep {
  CellsFunctor<MemorySpace> cells; ///< no polygon output
  SlotPolygons<MemorySpace> kept;

  KOKKOS_FUNCTION void operator()(Polygon& cell, int item) const {
    cells(cell, item);
    int const slot = cells.items.extent(0) ? cells.items(item) : item;
    if (cells.overflowed(item)) {
      kept.counts(slot) = -1;
      return;
    }
    keep_in_slot(kept, slot, cell);
  }
};

/// Slots of `capacity` vertices for n cells.
template <class ExecutionSpace>
SlotPolygons<typename ExecutionSpace::memory_space>
allocate_slot_polygons(ExecutionSpace const& space, int n, int capacity) {
  using MemorySpace = typename ExecutionSpace::memory_space;
  SlotPolygons<MemorySpace> kept;
  kept.capacity = capacity;
  std::size_t const rows = std::size_t(n) * std::size_t(capacity);
  kept.vertices = Points<MemorySpace>(
      Kokkos::view_alloc(space, Kokkos::WithoutInitializing, "sdot::kept::vertices"), rows);
  kept.labels = Kokkos::View<int*, MemorySpace>(
      Kokkos::view_alloc(space, Kokkos::WithoutInitializing, "sdot::kept::labels"), rows);
  kept.counts = Kokkos::View<int*, MemorySpace>(
      Kokkos::view_alloc(space, Kokkos::WithoutInitializing, "sdot::kept::counts"), n);
  return kept;
}

/// The cells' polygons as a reader of every cell takes them, cell c of their storage order
/// (c ∈ [0, n)): either in compressed rows (cell c is seed c's: CellPolygons) or in the slots of
/// a one-box computation (cell c is tree slot c's, of seed index(c)), read without compacting
/// them; there, a cell without a slot (slots.counts(c) < 0) is read from the compressed rows,
/// at its seed's row (overflowed_cell_polygons(): only those cells have vertices there). The
/// same vertices (absolute coordinates, the bits of the outputs) and edge labels either way.
template <class MemorySpace>
struct CellPolygonReader {
  // compressed rows (slots.capacity == 0), or the cells without a slot
  Kokkos::View<int const*, MemorySpace> offsets; ///< n + 1
  ConstPoints<MemorySpace> vertices;
  Kokkos::View<int const*, MemorySpace> labels;
  // slots (slots.capacity > 0)
  SlotPolygons<MemorySpace> slots;
  Kokkos::View<int const*, MemorySpace> slot_seed; ///< the seed of each tree slot
  Kokkos::View<Seed const*, MemorySpace> seeds;    ///< in tree order

  /// The number of cells.
  int size() const {
    return slots.capacity > 0 ? static_cast<int>(slot_seed.extent(0))
                              : static_cast<int>(offsets.extent(0)) - 1;
  }
  KOKKOS_INLINE_FUNCTION bool slotted() const { return slots.capacity > 0; }
  /// The seed of cell c.
  KOKKOS_INLINE_FUNCTION int seed(int c) const { return slotted() ? slot_seed(c) : c; }
  /// Where cell c's polygon lies: read once per cell, then its vertices and labels by vertex()
  /// and label().
  struct PolygonRows {
    std::size_t first; ///< row of its first vertex (in the slots, or in the compressed rows)
    int count;         ///< vertices
    bool in_slot;      ///< else in the compressed rows
    Seed seed;         ///< which a slot's vertices are relative to
  };
  KOKKOS_INLINE_FUNCTION PolygonRows polygon(int c) const {
    if (slotted() && slots.counts(c) >= 0)
      return {std::size_t(c) * std::size_t(slots.capacity), slots.counts(c), true, seeds(c)};
    int const row = seed(c);
    return {std::size_t(offsets(row)), offsets(row + 1) - offsets(row), false, Seed{0, 0, 0}};
  }
  /// The number of vertices of cell c.
  KOKKOS_INLINE_FUNCTION int vertex_count(int c) const { return polygon(c).count; }
  /// Coordinate `axis` of vertex k of `p`.
  KOKKOS_INLINE_FUNCTION double vertex(PolygonRows const& p, int k, int axis) const {
    return p.in_slot ? slots.absolute(p.first + k, axis, p.seed) : vertices(p.first + k, axis);
  }
  /// What made the edge from vertex k of `p` to the next (PowerDiagram::cell_polygons()).
  KOKKOS_INLINE_FUNCTION int label(PolygonRows const& p, int k) const {
    return p.in_slot ? slots.labels(p.first + k) : labels(p.first + k);
  }
};

/// Lists the cells without a slot (kept.overflow_items, by tree slot) for kept_cell_polygons(),
/// which rebuilds them at `overflow_capacity`, a capacity at which they all fit.
template <class ExecutionSpace, class MemorySpace>
void list_unslotted_cells(ExecutionSpace const& space, SeedTree<MemorySpace> const& tree,
                          SlotPolygons<MemorySpace>& kept, int overflow_capacity) {
  kept.overflow_capacity = overflow_capacity;
  auto const counts = kept.counts;
  kept.overflow_items = items_where(
      space, "sdot::kept::unslotted_items", tree.size,
      KOKKOS_LAMBDA(int s) { return counts(s) < 0; });
}

/// build_cells() (no polygon output in `out`) keeping the polygons in `kept`. Falls back to
/// build_cells() with kept.capacity = 0 when the first pass has no kernel-local capacity.
template <class ExecutionSpace, class MemorySpace>
CellsReport
build_cells_keeping_polygons(ExecutionSpace const& space, SeedTree<MemorySpace> const& tree,
                             ConstPoints<MemorySpace> domain_vertices,
                             Kokkos::View<int const*, MemorySpace> domain_labels, int capacity,
                             CellOutputs<MemorySpace> const& out, SlotPolygons<MemorySpace>& kept,
                             AbandonBelow<MemorySpace> const& abandon = {}) {
  sdot::compat::ScopedRegion region("sdot::build_cells_keeping_polygons");
  kept = SlotPolygons<MemorySpace>{};
  int const n = tree.size;
  int const domain_size = static_cast<int>(domain_vertices.extent(0));
  int const inline_capacity = inline_polygon_capacity(capacity, domain_size);
  if (inline_capacity == 0)
    return build_cells(space, tree, domain_vertices, domain_labels, capacity, out, abandon);

  kept = allocate_slot_polygons(space, n, sdot::compat::min(inline_capacity, kept_slot_capacity));
  Kokkos::View<int*, MemorySpace> overflowed(
      Kokkos::view_alloc(space, Kokkos::WithoutInitializing, "sdot::kept::overflowed"), n);
  CellOutputs<MemorySpace> plain = out;
  plain.polygon_offsets = {};
  CellsFunctor<MemorySpace> step{tree,  domain_vertices, domain_labels, {},
                                 plain, overflowed,      abandon};
  for_each_cell(space, "sdot::cells::first_pass_keeping_polygons",
                SlotCellsStep<MemorySpace>{step, kept}, n, inline_capacity);
  CellsReport report;
  report.final_capacity = inline_capacity;
  if (abandoned(space, abandon)) {
    report.abandoned = true;
    return report;
  }

  // The cells that did not fit: as build_cells(), measures only, doubling the capacity.
  rebuild_overflowed_cells(space, step, overflowed, n, 2 * inline_capacity, true, report);
  if (abandoned(space, abandon)) { // a rebuilt cell fell below: the later ones were skipped
    report.abandoned = true;
    return report;
  }
  list_unslotted_cells(space, tree, kept, report.final_capacity);
  return report;
}

/// The polygons of the cells without a slot (kept.overflow_items), rebuilt at a capacity where
/// they all fit, polygons only (their measures go to scratch views), into the compressed rows
/// offsets / vertices / labels, whose offsets (by seed index) come from `vertex_counts`.
template <class ExecutionSpace, class MemorySpace>
void rebuild_unslotted_polygons(ExecutionSpace const& space, SeedTree<MemorySpace> const& tree,
                                ConstPoints<MemorySpace> domain_vertices,
                                Kokkos::View<int const*, MemorySpace> domain_labels,
                                SlotPolygons<MemorySpace> const& kept,
                                Kokkos::View<int*, MemorySpace> offsets,
                                Points<MemorySpace> vertices,
                                Kokkos::View<int*, MemorySpace> labels,
                                SeedLookup<MemorySpace> const& same_bits) {
  int const nb_overflowed = static_cast<int>(kept.overflow_items.extent(0));
  if (nb_overflowed == 0)
    return;
  CellOutputs<MemorySpace> scratch = allocate_cell_outputs(space, tree.size, "sdot::kept::");
  scratch.polygon_offsets = offsets;
  scratch.polygon_vertices = vertices;
  scratch.polygon_labels = labels;
  scratch.same_bits = same_bits;
  Kokkos::View<int*, MemorySpace> overflowed(
      Kokkos::view_alloc(space, Kokkos::WithoutInitializing, "sdot::kept::overflowed"),
      nb_overflowed);
  CellsFunctor<MemorySpace> step{tree,    domain_vertices, domain_labels, kept.overflow_items,
                                 scratch, overflowed};
  for_each_cell(space, "sdot::cells::rebuild_polygons", step, nb_overflowed,
                kept.overflow_capacity);
}

/// The polygons kept by build_cells_keeping_polygons(): offsets from `vertex_counts`, slots
/// compacted, the cells that did not fit the first pass rebuilt (polygons only).
template <class ExecutionSpace, class MemorySpace>
void kept_cell_polygons(ExecutionSpace const& space, SeedTree<MemorySpace> const& tree,
                        ConstPoints<MemorySpace> domain_vertices,
                        Kokkos::View<int const*, MemorySpace> domain_labels,
                        Kokkos::View<int*, MemorySpace> vertex_counts,
                        SlotPolygons<MemorySpace> const& kept,
                        Kokkos::View<int*, MemorySpace>& offsets, Points<MemorySpace>& vertices,
                        Kokkos::View<int*, MemorySpace>& labels,
                        SeedLookup<MemorySpace> const& same_bits = {}) {
  using Policy = Kokkos::RangePolicy<ExecutionSpace>;
  sdot::compat::ScopedRegion region("sdot::kept_cell_polygons");
  int const n = static_cast<int>(vertex_counts.extent(0));
  allocate_polygon_rows(space, vertex_counts, offsets, vertices, labels);
  {
    auto const slots = kept;
    auto const index = tree.index;
    auto const seeds = tree.seeds;
    auto const o = offsets;
    auto const v = vertices;
    auto const l = labels;
    std::size_t const capacity = kept.capacity;
    Kokkos::parallel_for(
        "sdot::kept::compact", Policy(space, 0, n), KOKKOS_LAMBDA(int s) {
          int const size = slots.counts(s);
          std::size_t const from = std::size_t(s) * capacity;
          int const to = o(index(s));
          Seed const seed = seeds(s);
          for (int k = 0; k < size; ++k) {
            v(to + k, 0) = slots.absolute(from + k, 0, seed);
            v(to + k, 1) = slots.absolute(from + k, 1, seed);
            l(to + k) = slots.labels(from + k);
          }
        });
  }
  rebuild_unslotted_polygons(space, tree, domain_vertices, domain_labels, kept, offsets, vertices,
                             labels, same_bits);
}

/// The polygons of the cells without a slot alone (kept.overflow_items), in compressed rows by
/// seed index (the other rows empty), for a CellPolygonReader of the slots: the slots are not
/// compacted.
template <class ExecutionSpace, class MemorySpace>
void overflowed_cell_polygons(
    ExecutionSpace const& space, SeedTree<MemorySpace> const& tree,
    ConstPoints<MemorySpace> domain_vertices, Kokkos::View<int const*, MemorySpace> domain_labels,
    Kokkos::View<int const*, MemorySpace> vertex_counts, SlotPolygons<MemorySpace> const& kept,
    Kokkos::View<int*, MemorySpace>& offsets, Points<MemorySpace>& vertices,
    Kokkos::View<int*, MemorySpace>& labels, SeedLookup<MemorySpace> const& same_bits = {}) {
  sdot::compat::ScopedRegion region("sdot::overflowed_cell_polygons");
  int const n = static_cast<int>(vertex_counts.extent(0));
  Kokkos::View<int*, MemorySpace> counts(Kokkos::view_alloc(space, "sdot::kept::overflowed_counts"),
                                         n);
  auto const items = kept.overflow_items;
  auto const index = tree.index;
  Kokkos::parallel_for(
      "sdot::kept::overflowed_counts",
      Kokkos::RangePolicy<ExecutionSpace>(space, 0, static_cast<int>(items.extent(0))),
      KOKKOS_LAMBDA(int item) {
        int const seed = index(items(item));
        counts(seed) = vertex_counts(seed);
      });
  allocate_polygon_rows(space, counts, offsets, vertices, labels);
  rebuild_unslotted_polygons(space, tree, domain_vertices, domain_labels, kept, offsets, vertices,
                             labels, same_bits);
}

} // namespace sdot::detail
