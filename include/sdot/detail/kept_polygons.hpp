#pragma once
// One-box cells built once for both their measures and their polygons
// (PowerDiagramOptions::keep_polygons): the first pass, at the kernel-local capacity, also
// copies every cell of at most S = 16 vertices (nearly all) into a fixed slot of S vertices
// (cell i: rows [i S, i S + size)); the cells that did not fit the first pass are rebuilt at
// larger capacities as build_cells() does (measures only). kept_cell_polygons() then compacts
// the slots into CellPolygons and rebuilds only the cells without a slot, writing their
// polygons in place. The polygons are the same bits as
// those of a second build_cells() pass with polygon output (same code, same inputs).

#include <sdot/detail/cells.hpp>
#include <sdot/detail/polygon_storage.hpp>
#include <sdot/detail/scan.hpp>

#include <Kokkos_Core.hpp>

#include <cstdint>
#include <stdexcept>

namespace sdot::detail {

/// Vertices of a slot.
inline constexpr int kept_slot_capacity = 16;

/// The polygons of a measures pass, in fixed slots.
template <class MemorySpace>
struct SlotPolygons {
  int capacity = 0; ///< of a slot; 0: nothing kept (no kernel-local capacity for this domain)
  Kokkos::View<double* [2], MemorySpace> vertices; ///< n × capacity rows
  Kokkos::View<int*, MemorySpace> labels;
  /// Vertices of cell i in its slot, or -1 when it has no slot.
  Kokkos::View<int*, MemorySpace> counts;
  /// By tree slot: 1 when the cell has no slot (too many vertices, or rebuilt).
  Kokkos::View<int*, MemorySpace> unslotted;
  Kokkos::View<int*, MemorySpace> overflow_items; ///< tree slots of the cells without a slot
  int overflow_capacity = 0;                      ///< a capacity at which all of them fit
};

/// The cell step of build_cells(), which also copies a cell that fits into its slot.
template <class MemorySpace>
struct SlotCellsStep {
  CellsFunctor<MemorySpace> cells; ///< items empty (item = tree slot), no polygon output
  SlotPolygons<MemorySpace> kept;

  KOKKOS_FUNCTION void operator()(Polygon& cell, int item) const {
    cells(cell, item);
    int const index = cells.tree.index(item);
    if (cells.overflowed(item) || cell.size > kept.capacity) {
      kept.counts(index) = -1;
      kept.unslotted(item) = 1;
      return;
    }
    kept.unslotted(item) = 0;
    Seed const s = cells.tree.seeds(item);
    std::size_t const begin = std::size_t(index) * std::size_t(kept.capacity);
    for (int k = 0; k < cell.size; ++k) {
      kept.vertices(begin + k, 0) = s.x + cell.x(k);
      kept.vertices(begin + k, 1) = s.y + cell.y(k);
      kept.labels(begin + k) = cell.label(k);
    }
    kept.counts(index) = cell.size;
  }
};

/// build_cells() (no polygon output in `out`) keeping the polygons in `kept`. Falls back to
/// build_cells() with kept.capacity = 0 when the first pass has no kernel-local capacity.
template <class ExecutionSpace, class MemorySpace>
CellsReport
build_cells_keeping_polygons(ExecutionSpace const& space, SeedTree<MemorySpace> const& tree,
                             Kokkos::View<double const* [2], MemorySpace> domain_vertices,
                             Kokkos::View<int const*, MemorySpace> domain_labels, int capacity,
                             CellOutputs<MemorySpace> const& out, SlotPolygons<MemorySpace>& kept,
                             AbandonBelow<MemorySpace> const& abandon = {}) {
  using Policy = Kokkos::RangePolicy<ExecutionSpace>;
  loom::compat::ScopedRegion region("sdot::build_cells_keeping_polygons");
  kept = SlotPolygons<MemorySpace>{};
  int const n = tree.size;
  int const domain_size = static_cast<int>(domain_vertices.extent(0));
  int const inline_capacity = inline_polygon_capacity(capacity, domain_size);
  if (inline_capacity == 0)
    return build_cells(space, tree, domain_vertices, domain_labels, capacity, out, abandon);

  kept.capacity = loom::compat::min(inline_capacity, kept_slot_capacity);
  std::size_t const rows = std::size_t(n) * std::size_t(kept.capacity);
  kept.vertices = Kokkos::View<double* [2], MemorySpace>(
      Kokkos::view_alloc(space, Kokkos::WithoutInitializing, "sdot::kept::vertices"), rows);
  kept.labels = Kokkos::View<int*, MemorySpace>(
      Kokkos::view_alloc(space, Kokkos::WithoutInitializing, "sdot::kept::labels"), rows);
  kept.counts = Kokkos::View<int*, MemorySpace>(
      Kokkos::view_alloc(space, Kokkos::WithoutInitializing, "sdot::kept::counts"), n);
  kept.unslotted = Kokkos::View<int*, MemorySpace>(
      Kokkos::view_alloc(space, Kokkos::WithoutInitializing, "sdot::kept::unslotted"), n);
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
  kept.overflow_capacity = report.final_capacity;
  // The cells without a slot, by tree slot (rebuilt by kept_cell_polygons()).
  auto const unslotted = kept.unslotted;
  int count = 0;
  Kokkos::parallel_reduce(
      "sdot::kept::count_unslotted", Policy(space, 0, n),
      KOKKOS_LAMBDA(int k, int& c) { c += unslotted(k); }, count);
  kept.overflow_items = flagged_items(space, "sdot::kept::unslotted_items", unslotted, count);
  return report;
}

/// The polygons kept by build_cells_keeping_polygons(): offsets from `vertex_counts`, slots
/// compacted, the cells that did not fit the first pass rebuilt (polygons only).
template <class ExecutionSpace, class MemorySpace>
void kept_cell_polygons(ExecutionSpace const& space, SeedTree<MemorySpace> const& tree,
                        Kokkos::View<double const* [2], MemorySpace> domain_vertices,
                        Kokkos::View<int const*, MemorySpace> domain_labels,
                        Kokkos::View<int*, MemorySpace> vertex_counts,
                        SlotPolygons<MemorySpace> const& kept,
                        Kokkos::View<int*, MemorySpace>& offsets,
                        Kokkos::View<double* [2], MemorySpace>& vertices,
                        Kokkos::View<int*, MemorySpace>& labels) {
  using Policy = Kokkos::RangePolicy<ExecutionSpace>;
  loom::compat::ScopedRegion region("sdot::kept_cell_polygons");
  int const n = static_cast<int>(vertex_counts.extent(0));
  offsets = Kokkos::View<int*, MemorySpace>(
      Kokkos::view_alloc(space, Kokkos::WithoutInitializing, "sdot::polygons::offsets"), n + 1);
  int const total = exclusive_scan(space, "sdot::polygons::offsets", vertex_counts, offsets);
  vertices = Kokkos::View<double* [2], MemorySpace>(
      Kokkos::view_alloc(space, Kokkos::WithoutInitializing, "sdot::polygons::vertices"), total);
  labels = Kokkos::View<int*, MemorySpace>(
      Kokkos::view_alloc(space, Kokkos::WithoutInitializing, "sdot::polygons::edge_sources"),
      total);
  {
    auto const slot_vertices = kept.vertices;
    auto const slot_labels = kept.labels;
    auto const counts = kept.counts;
    auto const o = offsets;
    auto const v = vertices;
    auto const l = labels;
    std::size_t const capacity = kept.capacity;
    Kokkos::parallel_for(
        "sdot::kept::compact", Policy(space, 0, n), KOKKOS_LAMBDA(int i) {
          int const size = counts(i);
          std::size_t const from = std::size_t(i) * capacity;
          int const to = o(i);
          for (int k = 0; k < size; ++k) {
            v(to + k, 0) = slot_vertices(from + k, 0);
            v(to + k, 1) = slot_vertices(from + k, 1);
            l(to + k) = slot_labels(from + k);
          }
        });
  }
  int const nb_overflowed = static_cast<int>(kept.overflow_items.extent(0));
  if (nb_overflowed == 0)
    return;
  // The cells without a slot: rebuilt at a capacity where they all fit, polygons only (their
  // measures go to scratch views).
  CellOutputs<MemorySpace> scratch = allocate_cell_outputs(space, n, "sdot::kept::");
  scratch.polygon_offsets = offsets;
  scratch.polygon_vertices = vertices;
  scratch.polygon_labels = labels;
  Kokkos::View<int*, MemorySpace> overflowed(
      Kokkos::view_alloc(space, Kokkos::WithoutInitializing, "sdot::kept::overflowed"),
      nb_overflowed);
  CellsFunctor<MemorySpace> step{tree,    domain_vertices, domain_labels, kept.overflow_items,
                                 scratch, overflowed};
  for_each_cell(space, "sdot::cells::rebuild_polygons", step, nb_overflowed,
                kept.overflow_capacity);
}

} // namespace sdot::detail
