#pragma once
// Runs the cell kernel over all seeds of a tree: a first pass with kernel-local polygon
// storage of a fixed capacity, then, for the cells that overflowed it, passes with a
// workspace of twice the capacity, until every cell fits. Never truncates a cell.

#include <sdot/base/scan.hpp>
#include <sdot/geometry/canonical_cells.hpp>
#include <sdot/geometry/cell_kernel.hpp>
#include <sdot/geometry/polygon_storage.hpp>
#include <sdot/points.hpp>

#include <stdexcept>
#include <string>

namespace sdot::detail {

template <class MemorySpace>
struct CellOutputs {
  Kokkos::View<double*, MemorySpace> measures;   ///< by input index
  Points<MemorySpace> centroids;                 ///< by input index
  Kokkos::View<int*, MemorySpace> vertex_counts; ///< by input index
  // Optional polygon output (when offsets is allocated), by input index: cell i has the
  // vertices [polygon_offsets(i), polygon_offsets(i + 1)).
  Kokkos::View<int*, MemorySpace> polygon_offsets;
  Points<MemorySpace> polygon_vertices;
  Kokkos::View<int*, MemorySpace> polygon_labels;
  /// PowerDiagramOptions::same_bits (when active): each cell recomputed from its edges'
  /// lines before it is written (canonical_cells.hpp).
  SeedLookup<MemorySpace> same_bits = {};
};

/// Measures, centroids and vertex counts for n cells (labels `prefix` + "measures", ...), no
/// polygon output.
template <class ExecutionSpace>
CellOutputs<typename ExecutionSpace::memory_space>
allocate_cell_outputs(ExecutionSpace const& space, int n, std::string const& prefix) {
  using MemorySpace = typename ExecutionSpace::memory_space;
  CellOutputs<MemorySpace> out;
  out.measures = Kokkos::View<double*, MemorySpace>(
      Kokkos::view_alloc(space, Kokkos::WithoutInitializing, prefix + "measures"), n);
  out.centroids = Points<MemorySpace>(
      Kokkos::view_alloc(space, Kokkos::WithoutInitializing, prefix + "centroids"), n);
  out.vertex_counts = Kokkos::View<int*, MemorySpace>(
      Kokkos::view_alloc(space, Kokkos::WithoutInitializing, prefix + "vertex_counts"), n);
  return out;
}

/// The kernel-local polygon capacity (16, 32 or 64) of a first pass asked for `capacity`
/// vertices on a domain of `domain_size` vertices, or 0 when none fits (a workspace then).
inline int inline_polygon_capacity(int capacity, int domain_size) {
  int const c = capacity <= 16 ? 16 : capacity <= 32 ? 32 : capacity <= 64 ? 64 : 0;
  return c < domain_size + 2 ? 0 : c;
}

/// Giving up a pass as soon as a cell's measure is below `below` (for callers that reject such
/// a diagram anyway): the flag is raised, and the cells not yet started are skipped (no
/// measure). Inactive when the flag is not allocated.
template <class MemorySpace>
struct AbandonBelow {
  Kokkos::View<int, MemorySpace> raised;
  double below = 0;

  KOKKOS_INLINE_FUNCTION bool active() const { return raised.data() != nullptr; }
  /// Whether some cell already fell below (an atomic read: other threads raise it).
  KOKKOS_INLINE_FUNCTION bool given_up() const {
    return active() && Kokkos::atomic_fetch_add(raised.data(), 0) != 0;
  }
  KOKKOS_INLINE_FUNCTION void check(double measure) const {
    if (active() && !(measure >= below))
      sdot::compat::atomic_max(raised.data(), 1);
  }
};

/// Whether `abandon` was raised during the passes before (fences `space`).
template <class ExecutionSpace, class MemorySpace>
bool abandoned(ExecutionSpace const& space, AbandonBelow<MemorySpace> const& abandon) {
  if (!abandon.active())
    return false;
  int raised = 0;
  Kokkos::deep_copy(space, raised, abandon.raised);
  space.fence();
  return raised != 0;
}

/// One cell per item (a cell step: see polygon_storage.hpp).
template <class MemorySpace>
struct CellsFunctor {
  SeedTree<MemorySpace> tree;
  ConstPoints<MemorySpace> domain_vertices;
  Kokkos::View<int const*, MemorySpace> domain_labels;
  Kokkos::View<int const*, MemorySpace> items; ///< tree slots to build (empty: item = slot)
  CellOutputs<MemorySpace> out;
  Kokkos::View<int*, MemorySpace> overflowed; ///< by item: 1 if the cell did not fit
  AbandonBelow<MemorySpace> abandon = {};

  KOKKOS_FUNCTION void operator()(Polygon& cell, int item) const {
    int const slot = items.extent(0) ? items(item) : item;
    Seed const s = tree.seeds(slot);
    CellSeed const seed{s.x, s.y, s.w, tree.index(slot), slot};
    build(cell, seed, item);
  }

  KOKKOS_FUNCTION void build(Polygon& cell, CellSeed const& seed, int item) const {
    if (abandon.given_up()) {
      cell.size = 0;
      overflowed(item) = 0;
      return;
    }
    start_from_domain(cell, seed.x, seed.y, domain_vertices, domain_labels);
    ClipResult r = clip_by_tree(cell, seed, tree);
    overflowed(item) = r == ClipResult::overflow;
    if (r == ClipResult::overflow)
      return;
    finish(cell, seed);
  }

  /// Writes the finished `cell` of `seed` into the outputs (and tells `abandon` its measure),
  /// first recomputed from its edges with out.same_bits.
  KOKKOS_FUNCTION void finish(Polygon& cell, CellSeed const& seed) const {
    if (out.same_bits.active())
      make_canonical(cell, seed.x, seed.y, seed.w, out.same_bits, domain_vertices, domain_labels);
    record(cell, seed);
  }

  /// Writes `cell` of `seed` into the outputs as it is (see finish()).
  KOKKOS_FUNCTION void record(Polygon const& cell, CellSeed const& seed) const {
    double area, cx, cy;
    cell.area_and_centroid(seed.x, seed.y, area, cx, cy);
    abandon.check(area);
    out.measures(seed.index) = area;
    out.centroids(seed.index, 0) = cx;
    out.centroids(seed.index, 1) = cy;
    out.vertex_counts(seed.index) = cell.size;
    if (out.polygon_offsets.extent(0)) {
      int const begin = out.polygon_offsets(seed.index);
      for (int k = 0; k < cell.size; ++k) {
        out.polygon_vertices(begin + k, 0) = seed.x + cell.x(k);
        out.polygon_vertices(begin + k, 1) = seed.y + cell.y(k);
        out.polygon_labels(begin + k) = cell.label(k);
      }
    }
  }
};

struct CellsReport {
  int overflowed_cells = 0; ///< cells that did not fit the first capacity
  int reruns = 0;           ///< passes after the first one
  int final_capacity = 0;   ///< capacity of the last pass
  bool abandoned = false;   ///< a cell fell below AbandonBelow::below: the passes stopped
};

/// Builds again, doubling `capacity`, the cells that overflowed a pass of `step` over
/// `nb_items` items (cut_again_until_fit). Counts the first pass's overflows in `report` when
/// `count_overflows`.
template <class ExecutionSpace, class MemorySpace>
void rebuild_overflowed_cells(ExecutionSpace const& space, CellsFunctor<MemorySpace> const& step,
                              Kokkos::View<int*, MemorySpace> overflowed, int nb_items,
                              int capacity, bool count_overflows, CellsReport& report) {
  PassesAgain const again =
      cut_again_until_fit(space, "sdot::cells::rebuild", step, overflowed, nb_items, capacity);
  report.overflowed_cells = count_overflows ? again.overflowed_cells : 0;
  report.reruns += again.passes;
  if (again.passes > 0)
    report.final_capacity = again.final_capacity;
}

/// Builds every cell of `tree` into `out`. `capacity` is the first pass's vertex capacity.
/// With an active `abandon`, stops (report.abandoned) once a cell falls below its measure.
template <class ExecutionSpace, class MemorySpace>
CellsReport build_cells(ExecutionSpace const& space, SeedTree<MemorySpace> const& tree,
                        ConstPoints<MemorySpace> domain_vertices,
                        Kokkos::View<int const*, MemorySpace> domain_labels, int capacity,
                        CellOutputs<MemorySpace> const& out,
                        AbandonBelow<MemorySpace> const& abandon = {}) {
  sdot::compat::ScopedRegion region("sdot::build_cells");
  int const n = tree.size;
  CellsReport report;
  Kokkos::View<int*, MemorySpace> overflowed(
      Kokkos::view_alloc(space, Kokkos::WithoutInitializing, "sdot::cells::overflowed"), n);
  int const domain_size = static_cast<int>(domain_vertices.extent(0));
  int const inline_capacity = inline_polygon_capacity(capacity, domain_size);
  int next_capacity = capacity;
  CellsFunctor<MemorySpace> step{tree, domain_vertices, domain_labels, {},
                                 out,  overflowed,      abandon};
  if (inline_capacity > 0) {
    for_each_cell(space, "sdot::cells::first_pass", step, n, inline_capacity);
    next_capacity = 2 * inline_capacity;
    if (abandoned(space, abandon)) {
      report.abandoned = true;
      return report;
    }
  } else {
    Kokkos::deep_copy(space, overflowed, 1);
    next_capacity = sdot::compat::max(capacity, domain_size + 2);
  }
  report.final_capacity = inline_capacity;
  rebuild_overflowed_cells(space, step, overflowed, n, next_capacity, inline_capacity > 0, report);
  report.abandoned = abandoned(space, abandon);
  return report;
}

} // namespace sdot::detail
