#pragma once
// The cells of one box: the domain cut by the box's own seeds. One box is the whole diagram;
// with several ranks these are each box's first-round cells, which the travelling cells then
// cut further by the other ranks' seeds (distributed/travelling_cells.hpp). Both build them here,
// from the earlier neighbours (warm_start), from coarser diagrams (coarse_to_fine), or by the
// search.

#include <sdot/geometry/cells.hpp>
#include <sdot/geometry/coarse_to_fine.hpp>
#include <sdot/geometry/kept_polygons.hpp>
#include <sdot/geometry/seed_tree.hpp>
#include <sdot/geometry/warm_cells.hpp>
#include <sdot/points.hpp>

#include <Kokkos_Core.hpp>

#include <functional>
#include <optional>

namespace sdot::detail {

/// How a box's cells are built (PowerDiagramOptions as a box reads them).
struct BoxCellsOptions {
  int vertex_capacity = 32;  ///< polygon capacity of the kernel's first pass
  int leaf_size = 0;         ///< the coarser levels' index leaves (coarse_to_fine)
  CoarseToFineChoice coarse; ///< whether the cells come from coarser diagrams
  bool warm_start = false;   ///< from the neighbours of the last complete computation
  bool keep_polygons = true; ///< keep every cell's polygon in its slot (for warm_start, always)
  /// Build the cells by the search where no candidates were certified; false: build nothing
  /// then (the travelling cells' round 0 searches them, deciding at once where each goes).
  bool search_uncertified = true;
  double domain_area = 0;   ///< the certification's check of the measures' sum
  double domain_length = 0; ///< the certification's coordinate tolerance scale
};

/// What build_one_box_cells() did.
struct BoxCellsReport {
  CellsReport cells;     ///< abandoned, overflowed cells, capacity reruns
  int warm_cells = 0;    ///< cells certified from their candidates
  int warm_rounds = 0;   ///< certifications that sent cells to be widened or searched
  int coarse_levels = 0; ///< coarser diagrams built (0: none)
  bool built = false;    ///< the cells are in the outputs (see search_uncertified)
};

/// Whether build_one_box_cells() builds the cells from the neighbours of the last computation
/// (`warm_start` and an earlier graph): then only a cell that goes to the search reads the
/// index's weight bounds; otherwise coarse_to_fine's choice or the search reads them first.
template <class MemorySpace>
bool cells_from_neighbours(bool warm_start, NeighbourGraph<MemorySpace> const& neighbours) {
  return warm_start && !neighbours.empty();
}

/// The cells of the seeds of `tree`, cut by those seeds alone, into `out` (measures and
/// centroids, by input index) and, with `keep_polygons` or `warm_start`, their polygons into
/// `kept` (tree slots; capacity 0 where the first pass had no kernel-local room). With
/// `warm_start` and an earlier graph in `neighbours`, from those neighbours, certified; else,
/// where `options.coarse` says so, from coarser diagrams, certified; otherwise, or where the
/// certification does not hold, by the search (or not at all, without
/// `search_uncertified`: `kept` is then empty). `neighbours` then holds the graph of this
/// computation (`warm_start`; an empty one when no polygon was kept); a computation given up
/// (`abandon`) leaves it as it was. `weight_bounds` is called before the search reads the
/// index's weight bounds: an index whose bounds are stale computes them then. coarse_to_fine's
/// choice reads only the finest quads' bounds, which the index must have
/// (compute_finest_quad_bounds()).
template <class ExecutionSpace, class MemorySpace>
BoxCellsReport build_one_box_cells(
    ExecutionSpace const& space, SeedTree<MemorySpace> const& tree,
    ConstPoints<MemorySpace> domain_vertices, Kokkos::View<int const*, MemorySpace> domain_labels,
    BoxCellsOptions const& options, CellOutputs<MemorySpace> const& out,
    SlotPolygons<MemorySpace>& kept, NeighbourGraph<MemorySpace>& neighbours,
    Kokkos::View<int const*, MemorySpace> slot_of, AbandonBelow<MemorySpace> const& abandon,
    std::function<void()> const& weight_bounds) {
  int const capacity = options.vertex_capacity;
  bool const warm = cells_from_neighbours(options.warm_start, neighbours);
  BoxCellsReport report;
  std::optional<WarmReport> certified;
  if (warm) {
    certified = build_cells_from_neighbours(space, tree, domain_vertices, domain_labels, capacity,
                                            out, kept, neighbours, slot_of, options.domain_area,
                                            options.domain_length, abandon, weight_bounds);
  } else if (coarse_to_fine_pays(space, tree, options.coarse, capacity,
                                 static_cast<int>(domain_vertices.extent(0)))) {
    auto const coarse =
        coarse_cells(space, tree, domain_vertices, domain_labels, capacity, options.leaf_size,
                     options.coarse.coarsest, options.domain_area, options.domain_length);
    certified = build_cells_from_coarse_cells(space, tree, domain_vertices, domain_labels, capacity,
                                              out, kept, coarse, slot_of, options.domain_area,
                                              options.domain_length, abandon, {}, weight_bounds);
    report.coarse_levels = coarse.levels;
  }
  if (certified) {
    report.cells = certified->cells;
    report.built = certified->certified || certified->cells.abandoned; // else all built again
    report.warm_cells = certified->certified ? certified->warm_cells : 0;
    report.warm_rounds = certified->rounds;
  }
  if (!report.built && !options.search_uncertified) {
    kept = SlotPolygons<MemorySpace>{};
    return report;
  }
  if (!report.built) {
    weight_bounds();
    report.built = true;
    if (options.keep_polygons || options.warm_start || report.coarse_levels > 0) {
      report.cells = build_cells_keeping_polygons(space, tree, domain_vertices, domain_labels,
                                                  capacity, out, kept, abandon);
    } else {
      kept = SlotPolygons<MemorySpace>{};
      report.cells =
          build_cells(space, tree, domain_vertices, domain_labels, capacity, out, abandon);
    }
  }
  // The neighbours for the next computation: those of a complete one.
  if (options.warm_start && !report.cells.abandoned)
    neighbours = kept.capacity > 0 ? neighbour_graph(space, tree, kept, slot_of)
                                   : NeighbourGraph<MemorySpace>{};
  return report;
}

} // namespace sdot::detail
