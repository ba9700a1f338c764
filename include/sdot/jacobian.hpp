#pragma once
/// @file
/// The Jacobian of the cells' measures with respect to the weights, as a Kokkos-Kernels
/// sparse matrix holding this process's rows.

#ifndef SDOT_ENABLE_KOKKOS_KERNELS
#error "sdot/jacobian.hpp needs Kokkos-Kernels: configure sdot with SDOT_ENABLE_KOKKOS_KERNELS=ON"
#endif

#include <loom/halo.hpp>
#include <loom/row_blocks.hpp>
#include <sdot/base/scan.hpp>
#include <sdot/base/small_sort.hpp>
#include <sdot/base/views.hpp>
#include <sdot/points.hpp>
#include <sdot/power_diagram.hpp>

#include <KokkosSparse_CrsMatrix.hpp>
#include <Kokkos_Core.hpp>

#include <cstdint>
#include <stdexcept>
#include <string>

namespace sdot {

/// Sparse matrix type of the Jacobians: double values, int column indices and row offsets.
template <class ExecutionSpace>
using SparseMatrix = KokkosSparse::CrsMatrix<
    double, int, Kokkos::Device<ExecutionSpace, typename ExecutionSpace::memory_space>, void, int>;

/// The Jacobian ∂m_i/∂w_j of the measures of this process's cells, i in its block of seeds.
///
/// For neighbours i ≠ j sharing an edge e_ij, ∂m_i/∂w_j = −|e_ij| / (2 |x_i − x_j|), and
/// ∂m_i/∂w_i = −Σ_{j≠i} ∂m_i/∂w_j: rows add up to zero, the matrix is symmetric (up to
/// rounding), positive semi-definite, and constants are in its kernel. Edges on the domain's
/// boundary, edges of zero length and coincident seeds add nothing.
///
/// Two forms share the values: global() with columns in global seed numbering (what users
/// see), and extended() with columns in this process's extended numbering (own seeds first,
/// then the halo()'s rows, owned by other processes), which Kokkos-Kernels' SpMV applies to
/// extended vectors.
template <class ExecutionSpace>
struct MeasureJacobian {
  using matrix_type = SparseMatrix<ExecutionSpace>;           ///< Type of global and extended.
  using memory_space = typename ExecutionSpace::memory_space; ///< Where the matrices live.

  /// Rows: this process's seeds (in their order); columns: global seed numbers, sorted
  /// within each row; ncols = global number of seeds.
  matrix_type global;
  /// The same entries with extended column numbers; ncols = local + halo rows.
  matrix_type extended;
  /// Diagonal entries, one per row.
  Kokkos::View<double*, memory_space> diagonal;
  /// The rows of other processes that the columns reference.
  loom::Halo<ExecutionSpace> halo;
  /// Seeds of every process.
  loom::RowBlocks blocks;
};

namespace detail {

/// One entry of a row before sorting and merging.
struct JacobianEntry {
  int column;   // global
  int extended; // extended numbering
  double value;
};

/// The raw entries of each row, one per polygon edge and one for the diagonal (the rows'
/// offsets: a scan of their polygons' sizes plus one): the diagonal first (value 0), then per
/// edge the other seed (global column) and the edge's length where the edge is shared with a seed
/// and has a positive length, else the row's own column with length 0 (merged into the diagonal,
/// which sums the other columns only: no pass to count the edges first). With `order` (one
/// process), row p is the cell of seed order(p), and a column the place of its seed in `order`
/// (`place`).
template <class MemorySpace>
struct RawEntries {
  Kokkos::View<int*, MemorySpace> offsets; ///< n + 1
  Kokkos::View<int*, MemorySpace> columns; ///< global
  Kokkos::View<double*, MemorySpace> lengths;
};

template <class ExecutionSpace, class Polygons>
RawEntries<typename ExecutionSpace::memory_space>
raw_jacobian_entries(ExecutionSpace const& space, Polygons const& polygons, int n, int first,
                     Kokkos::View<int const*, typename ExecutionSpace::memory_space> order = {},
                     Kokkos::View<int const*, typename ExecutionSpace::memory_space> place = {}) {
  using memory_space = typename ExecutionSpace::memory_space;
  using Policy = Kokkos::RangePolicy<ExecutionSpace>;
  RawEntries<memory_space> raw;
  auto const offsets = polygons.offsets;
  auto const vertices = polygons.vertices;
  auto const sources = polygons.edge_sources;
  bool const identity = order.extent(0) == 0;
  raw.offsets = uninitialized_view<int*>(space, "sdot::jacobian::raw_offsets", n + 1);
  auto const raw_offsets = raw.offsets;
  Kokkos::parallel_for(
      "sdot::jacobian::raw_lengths", Policy(space, 0, n), KOKKOS_LAMBDA(int p) {
        int const i = identity ? p : order(p);
        raw_offsets(p) = offsets(i + 1) - offsets(i) + 1;
      });
  int const total =
      exclusive_scan(space, "sdot::jacobian::raw_offsets",
                     Kokkos::subview(raw_offsets, Kokkos::make_pair(0, n)), raw_offsets);
  raw.columns = uninitialized_view<int*>(space, "sdot::jacobian::raw_columns", total);
  raw.lengths = uninitialized_view<double*>(space, "sdot::jacobian::raw_lengths", total);
  // In the polygons' order (read in sequence), each row written at its place.
  Kokkos::parallel_for(
      "sdot::jacobian::edges", Policy(space, 0, n), KOKKOS_LAMBDA(int i) {
        int const p = identity ? i : place(i);
        int const b = offsets(i), e = offsets(i + 1);
        int r = raw.offsets(p);
        raw.columns(r) = first + p;
        raw.lengths(r) = 0;
        ++r;
        for (int k = b; k < e; ++k, ++r) {
          int const next = k + 1 < e ? k + 1 : b;
          double const dx = vertices(next, 0) - vertices(k, 0);
          double const dy = vertices(next, 1) - vertices(k, 1);
          bool const shared = sources(k) >= 0 && dx * dx + dy * dy > 0;
          int const source = shared ? sources(k) : 0;
          raw.columns(r) = shared ? (identity ? source : place(source)) : first + p;
          raw.lengths(r) = shared ? sdot::compat::sqrt(dx * dx + dy * dy) : 0.0;
        }
      });
  return raw;
}

/// Each row's entries with their values −length / (2 |x_j − x_i|) (`x`: the extended
/// positions), sorted by global column, equal columns in their raw order (by rank, or by an
/// insertion sort beyond small_sort_max entries); counts(i): its distinct columns.
template <class ExecutionSpace, class Extended, class Positions>
Kokkos::View<JacobianEntry*, typename ExecutionSpace::memory_space>
sorted_jacobian_entries(ExecutionSpace const& space,
                        RawEntries<typename ExecutionSpace::memory_space> const& raw,
                        Extended const& raw_extended, Positions const& x,
                        Kokkos::View<int*, typename ExecutionSpace::memory_space> counts) {
  int const n = static_cast<int>(counts.extent(0));
  auto sorted =
      uninitialized_view<JacobianEntry*>(space, "sdot::jacobian::raw", raw.columns.extent(0));
  Kokkos::parallel_for(
      "sdot::jacobian::sort_rows", Kokkos::RangePolicy<ExecutionSpace>(space, 0, n),
      KOKKOS_LAMBDA(int i) {
        int const b = raw.offsets(i), e = raw.offsets(i + 1);
        auto const entry = [&](int r) {
          int const j = raw_extended(r);
          double const dx = x(j, 0) - x(i, 0), dy = x(j, 1) - x(i, 1);
          double const distance = sdot::compat::sqrt(dx * dx + dy * dy);
          double const value = distance > 0 ? -raw.lengths(r) / (2 * distance) : 0.0;
          return JacobianEntry{raw.columns(r), j, value};
        };
        if (e - b <= small_sort_max) { // by rank: column, then raw order (a stable sort)
          std::uint64_t keys[small_sort_max];
          for (int r = b; r < e; ++r)
            keys[r - b] = column_key(raw.columns(r), r - b);
          for (int r = b; r < e; ++r)
            sorted(b + rank_among(keys, e - b, r - b)) = entry(r);
        } else { // insertion sort (stable)
          for (int r = b; r < e; ++r) {
            JacobianEntry const next = entry(r);
            int s = r;
            while (s > b && sorted(s - 1).column > next.column) {
              sorted(s) = sorted(s - 1);
              --s;
            }
            sorted(s) = next;
          }
        }
        int distinct = 0;
        for (int r = b; r < e; ++r)
          if (r == b || sorted(r).column != sorted(r - 1).column)
            ++distinct;
        counts(i) = distinct;
      });
  return sorted;
}

/// measure_jacobian(), with the rows and columns renumbered by `order` (not empty: one process
/// only, a permutation of the seeds): row p is seed order(p)'s, and seed j's column its place
/// in `order`; `positions` and `polygons` stay in the seeds' numbering.
template <class ExecutionSpace>
MeasureJacobian<ExecutionSpace>
assemble_jacobian(ExecutionSpace const& space, loom::Ranks const& ranks,
                  ConstPoints<typename ExecutionSpace::memory_space> positions,
                  CellPolygons<typename ExecutionSpace::memory_space> const& polygons,
                  Kokkos::View<int const*, typename ExecutionSpace::memory_space> order) {
  using memory_space = typename ExecutionSpace::memory_space;
  using Policy = Kokkos::RangePolicy<ExecutionSpace>;
  sdot::compat::ScopedRegion region("sdot::measure_jacobian");
  int const n = static_cast<int>(positions.extent(0));
  if (static_cast<int>(polygons.offsets.extent(0)) != n + 1)
    throw std::invalid_argument("sdot::measure_jacobian: " + std::to_string(n) + " positions but " +
                                std::to_string(int(polygons.offsets.extent(0)) - 1) + " cells");
  bool const renumbered = order.extent(0) > 0;
  if (renumbered && (ranks.process_count() > 1 || static_cast<int>(order.extent(0)) != n))
    throw std::logic_error("sdot::detail::assemble_jacobian: an order of " +
                           std::to_string(order.extent(0)) + " rows for " + std::to_string(n) +
                           " seeds on " + std::to_string(ranks.process_count()) +
                           " processes (one per seed, one process only)");
  MeasureJacobian<ExecutionSpace> jacobian;
  jacobian.blocks = loom::RowBlocks(ranks, n);
  int const first = static_cast<int>(jacobian.blocks.begin());
  int const global_size = static_cast<int>(jacobian.blocks.global_size());

  // The seeds in the rows' numbering: each seed's place, and the positions in that order.
  Kokkos::View<int*, memory_space> place;
  if (renumbered) {
    place = uninitialized_view<int*>(space, "sdot::jacobian::place", n);
    Kokkos::parallel_for(
        "sdot::jacobian::places", Policy(space, 0, n),
        KOKKOS_LAMBDA(int p) { place(order(p)) = p; });
  }

  // Raw entries: global column and edge length (the diagonal first, length 0).
  auto const raw_entries = raw_jacobian_entries(space, polygons, n, first, order, place);

  // The halo: neighbours' positions held by other processes.
  auto raw_extended = uninitialized_view<int*>(space, "sdot::jacobian::raw_extended",
                                               raw_entries.columns.extent(0));
  jacobian.halo =
      loom::Halo<ExecutionSpace>(space, ranks, jacobian.blocks, raw_entries.columns, raw_extended);
  int const extended_size = n + jacobian.halo.size();
  auto x =
      uninitialized_view<Points<memory_space>>(space, "sdot::jacobian::positions", extended_size);
  if (renumbered)
    Kokkos::parallel_for(
        "sdot::jacobian::ordered_positions", Policy(space, 0, n), KOKKOS_LAMBDA(int p) {
          x(p, 0) = positions(order(p), 0);
          x(p, 1) = positions(order(p), 1);
        });
  else
    Kokkos::deep_copy(space, Kokkos::subview(x, std::make_pair(0, n), Kokkos::ALL), positions);
  jacobian.halo.update(space, x);

  // Per row: entries sorted by global column, and the distinct ones counted.
  auto counts = uninitialized_view<int*>(space, "sdot::jacobian::counts", n);
  auto const raw = sorted_jacobian_entries(space, raw_entries, raw_extended, x, counts);
  auto const raw_offsets = raw_entries.offsets;
  auto row_map = uninitialized_view<int*>(space, "sdot::jacobian::row_map", n + 1);
  int const nnz = exclusive_scan(space, "sdot::jacobian::row_map", counts, row_map);

  // Merged entries; the diagonal is minus the sum of the others, in column order.
  auto global_columns = uninitialized_view<int*>(space, "sdot::jacobian::global_columns", nnz);
  auto extended_columns = uninitialized_view<int*>(space, "sdot::jacobian::extended_columns", nnz);
  auto values = uninitialized_view<double*>(space, "sdot::jacobian::values", nnz);
  jacobian.diagonal = uninitialized_view<double*>(space, "sdot::jacobian::diagonal", n);
  auto diagonal = jacobian.diagonal;
  Kokkos::parallel_for(
      "sdot::jacobian::merge", Policy(space, 0, n), KOKKOS_LAMBDA(int i) {
        int const b = raw_offsets(i), e = raw_offsets(i + 1);
        int out = row_map(i) - 1, diagonal_entry = -1;
        double off_diagonal_sum = 0;
        for (int r = b; r < e; ++r) {
          if (r == b || raw(r).column != raw(r - 1).column) {
            ++out;
            global_columns(out) = raw(r).column;
            extended_columns(out) = raw(r).extended;
            values(out) = 0;
            if (raw(r).column == first + i)
              diagonal_entry = out;
          }
          if (raw(r).column != first + i) {
            values(out) += raw(r).value;
            off_diagonal_sum += raw(r).value;
          }
        }
        values(diagonal_entry) = -off_diagonal_sum;
        diagonal(i) = -off_diagonal_sum;
      });
  space.fence();
  jacobian.global = typename MeasureJacobian<ExecutionSpace>::matrix_type(
      "sdot::jacobian", n, global_size, nnz, values, row_map, global_columns);
  jacobian.extended = typename MeasureJacobian<ExecutionSpace>::matrix_type(
      "sdot::jacobian::extended", n, extended_size, nnz, values, row_map, extended_columns);
  return jacobian;
}

} // namespace detail

/// Collective: assembles the Jacobian of the measures of this process's cells.
///
/// @param space the execution space instance the assembly runs on
/// @param ranks the processes (one process: loom::Ranks{} or any one-process Ranks)
/// @param positions this process's seeds [n, 2]; global seed numbers follow the processes'
///        blocks in process order
/// @param polygons this process's cells (PowerDiagram::cell_polygons()): edge sources in
///        global seed numbering
template <class ExecutionSpace>
MeasureJacobian<ExecutionSpace>
measure_jacobian(ExecutionSpace const& space, loom::Ranks const& ranks,
                 ConstPoints<typename ExecutionSpace::memory_space> positions,
                 CellPolygons<typename ExecutionSpace::memory_space> const& polygons) {
  return detail::assemble_jacobian(space, ranks, positions, polygons, {});
}

/// The Jacobian of the measures of a power diagram computed in one process (every seed's
/// row; columns = seed numbers). `positions` are the diagram's seeds.
template <class ExecutionSpace>
MeasureJacobian<ExecutionSpace>
measure_jacobian(PowerDiagram<ExecutionSpace>& diagram,
                 ConstPoints<typename ExecutionSpace::memory_space> positions) {
  auto polygons = diagram.cell_polygons();
  return measure_jacobian(diagram.execution_space_instance(), loom::Ranks{}, positions, polygons);
}

#ifdef SDOT_EXPLICIT_INSTANTIATION
// Compiled in the sdot library (src/sdot/optimal_transport.cpp).
extern template MeasureJacobian<Kokkos::DefaultExecutionSpace>
detail::assemble_jacobian(Kokkos::DefaultExecutionSpace const&, loom::Ranks const&,
                          ConstPoints<Kokkos::DefaultExecutionSpace::memory_space>,
                          CellPolygons<Kokkos::DefaultExecutionSpace::memory_space> const&,
                          Kokkos::View<int const*, Kokkos::DefaultExecutionSpace::memory_space>);
extern template MeasureJacobian<Kokkos::DefaultExecutionSpace>
measure_jacobian(Kokkos::DefaultExecutionSpace const&, loom::Ranks const&,
                 ConstPoints<Kokkos::DefaultExecutionSpace::memory_space>,
                 CellPolygons<Kokkos::DefaultExecutionSpace::memory_space> const&);
#endif

} // namespace sdot
