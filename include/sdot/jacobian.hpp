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

/// Calls f(source, length2) for each edge of cell c shared with another seed than `own`
/// (global), its source, with a positive squared length length2, in the polygon's order.
template <class Reader, class F>
KOKKOS_INLINE_FUNCTION void for_each_shared_edge(Reader const& cells, int c, int own, F&& f) {
  auto const polygon = cells.polygon(c);
  int const size = polygon.count;
  if (size == 0)
    return;
  double const x0 = cells.vertex(polygon, 0, 0), y0 = cells.vertex(polygon, 0, 1);
  double x = x0, y = y0;
  for (int k = 0; k < size; ++k) {
    double const next_x = k + 1 < size ? cells.vertex(polygon, k + 1, 0) : x0;
    double const next_y = k + 1 < size ? cells.vertex(polygon, k + 1, 1) : y0;
    int const source = cells.label(polygon, k);
    double const dx = next_x - x, dy = next_y - y;
    double const length2 = dx * dx + dy * dy;
    if (source >= 0 && source != own && length2 > 0)
      f(source, length2);
    x = next_x;
    y = next_y;
  }
}

/// The rows' columns and the lengths of their edges (`lengths`, one per entry; 0 for the
/// diagonal): row p holds the diagonal and one entry per other seed sharing an edge of positive
/// length with the cell (the lengths of its edges summed, in the order of the polygon), sorted
/// by global column. The cells are read in their storage order, each row written at its place
/// (`place`: seed ↦ row, identity when empty; with it, a column is the place of its seed).
/// One pass over the polygons: each row is written where its cell's vertex count bounds it
/// (its shared edges and the diagonal), then the rows are packed. Returns the row offsets.
template <class ExecutionSpace, class Reader>
Kokkos::View<int*, typename ExecutionSpace::memory_space>
jacobian_rows(ExecutionSpace const& space, Reader const& cells, int first,
              Kokkos::View<int const*, typename ExecutionSpace::memory_space> place,
              Kokkos::View<int*, typename ExecutionSpace::memory_space>& columns,
              Kokkos::View<double*, typename ExecutionSpace::memory_space>& lengths) {
  using Policy = Kokkos::RangePolicy<ExecutionSpace>;
  int const n = cells.size();
  bool const identity = place.extent(0) == 0;
  // Room for each row: its cell's vertices (at most one shared edge each) and the diagonal.
  auto room = uninitialized_view<int*>(space, "sdot::jacobian::row_room", n + 1);
  Kokkos::parallel_for(
      "sdot::jacobian::row_room", Policy(space, 0, n), KOKKOS_LAMBDA(int c) {
        int const i = cells.seed(c);
        room(identity ? i : place(i)) = cells.vertex_count(c) + 1;
      });
  int const total = exclusive_scan(space, "sdot::jacobian::row_room",
                                   Kokkos::subview(room, Kokkos::make_pair(0, n)), room);
  auto const roomy_columns =
      uninitialized_view<int*>(space, "sdot::jacobian::roomy_columns", total);
  auto const roomy_lengths =
      uninitialized_view<double*>(space, "sdot::jacobian::roomy_lengths", total);
  auto row_map = uninitialized_view<int*>(space, "sdot::jacobian::row_map", n + 1);
  // Each row: the shared edges sorted by rank (column, then their order in the polygon; by
  // insertion into the row beyond small_sort_max), a seed met again adding its length, the
  // diagonal placed among them.
  Kokkos::parallel_for(
      "sdot::jacobian::rows", Policy(space, 0, n), KOKKOS_LAMBDA(int c) {
        int const i = cells.seed(c);
        int const p = identity ? i : place(i);
        int const own = first + p;
        int const b = room(p);
        std::uint64_t keys[small_sort_max];
        double edge_lengths[small_sort_max];
        int m = 0;
        for_each_shared_edge(cells, c, first + i, [&](int source, double length2) {
          if (m < small_sort_max) {
            keys[m] = column_key(identity ? source : place(source), m);
            edge_lengths[m] = sdot::compat::sqrt(length2);
          }
          ++m;
        });
        if (m <= small_sort_max) {
          int sorted_columns[small_sort_max];
          double sorted_lengths[small_sort_max];
          for (int a = 0; a < m; ++a) {
            int const r = rank_among(keys, m, a);
            sorted_columns[r] = static_cast<int>(keys[a] >> 32);
            sorted_lengths[r] = edge_lengths[a];
          }
          int out = b;
          bool diagonal_written = false;
          for (int r = 0; r < m; ++r) {
            if (!diagonal_written && own < sorted_columns[r]) {
              roomy_columns(out) = own;
              roomy_lengths(out++) = 0;
              diagonal_written = true;
            }
            if (r > 0 && sorted_columns[r] == sorted_columns[r - 1]) {
              roomy_lengths(out - 1) += sorted_lengths[r];
            } else {
              roomy_columns(out) = sorted_columns[r];
              roomy_lengths(out++) = sorted_lengths[r];
            }
          }
          if (!diagonal_written) {
            roomy_columns(out) = own;
            roomy_lengths(out++) = 0;
          }
          row_map(p) = out - b;
          return;
        }
        roomy_columns(b) = own;
        roomy_lengths(b) = 0;
        int filled = 1;
        for_each_shared_edge(cells, c, first + i, [&](int source, double length2) {
          int const column = identity ? source : place(source);
          double const length = sdot::compat::sqrt(length2);
          int at = filled;
          while (at > 0 && roomy_columns(b + at - 1) > column)
            --at;
          if (at > 0 && roomy_columns(b + at - 1) == column) {
            roomy_lengths(b + at - 1) += length;
            return;
          }
          for (int e = filled; e > at; --e) {
            roomy_columns(b + e) = roomy_columns(b + e - 1);
            roomy_lengths(b + e) = roomy_lengths(b + e - 1);
          }
          roomy_columns(b + at) = column;
          roomy_lengths(b + at) = length;
          ++filled;
        });
        row_map(p) = filled;
      });
  int const nnz = exclusive_scan(space, "sdot::jacobian::row_map",
                                 Kokkos::subview(row_map, Kokkos::make_pair(0, n)), row_map);
  columns = uninitialized_view<int*>(space, "sdot::jacobian::global_columns", nnz);
  lengths = uninitialized_view<double*>(space, "sdot::jacobian::values", nnz);
  auto const out_columns = columns;
  auto const out_lengths = lengths;
  Kokkos::parallel_for(
      "sdot::jacobian::packed_rows", Policy(space, 0, n), KOKKOS_LAMBDA(int p) {
        int const from = room(p), begin = row_map(p), end = row_map(p + 1);
        for (int e = begin; e < end; ++e) {
          out_columns(e) = roomy_columns(from + e - begin);
          out_lengths(e) = roomy_lengths(from + e - begin);
        }
      });
  return row_map;
}

/// measure_jacobian() of the cells that `cells` reads, with the rows and columns renumbered by
/// `order` when it is not empty (one process only, a permutation of the seeds): row p is seed
/// order(p)'s, and seed j's column its place in `order`; `positions` stay in the seeds'
/// numbering.
template <class ExecutionSpace>
MeasureJacobian<ExecutionSpace>
assemble_jacobian(ExecutionSpace const& space, loom::Ranks const& ranks,
                  ConstPoints<typename ExecutionSpace::memory_space> positions,
                  CellPolygonReader<typename ExecutionSpace::memory_space> const& cells,
                  Kokkos::View<int const*, typename ExecutionSpace::memory_space> order) {
  using memory_space = typename ExecutionSpace::memory_space;
  using Policy = Kokkos::RangePolicy<ExecutionSpace>;
  sdot::compat::ScopedRegion region("sdot::measure_jacobian");
  int const n = static_cast<int>(positions.extent(0));
  if (cells.size() != n)
    throw std::invalid_argument("sdot::measure_jacobian: " + std::to_string(n) + " positions but " +
                                std::to_string(cells.size()) + " cells");
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

  // Each seed's place in the rows' numbering.
  Kokkos::View<int*, memory_space> place;
  if (renumbered) {
    place = uninitialized_view<int*>(space, "sdot::jacobian::place", n);
    Kokkos::parallel_for(
        "sdot::jacobian::places", Policy(space, 0, n),
        KOKKOS_LAMBDA(int p) { place(order(p)) = p; });
  }

  // The rows' global columns, with their edges' lengths where the values go.
  Kokkos::View<int*, memory_space> global_columns;
  Kokkos::View<double*, memory_space> values;
  auto const row_map = jacobian_rows(
      space, cells, first, Kokkos::View<int const*, memory_space>(place), global_columns, values);
  int const nnz = static_cast<int>(global_columns.extent(0));

  // The halo: neighbours' positions held by other processes; the positions in the rows' order.
  auto extended_columns = uninitialized_view<int*>(space, "sdot::jacobian::extended_columns", nnz);
  jacobian.halo =
      loom::Halo<ExecutionSpace>(space, ranks, jacobian.blocks, global_columns, extended_columns);
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

  // The values −length / (2 |x_j − x_i|); the diagonal is minus the sum of the others, in
  // column order.
  jacobian.diagonal = uninitialized_view<double*>(space, "sdot::jacobian::diagonal", n);
  auto diagonal = jacobian.diagonal;
  Kokkos::parallel_for(
      "sdot::jacobian::values", Policy(space, 0, n), KOKKOS_LAMBDA(int p) {
        int diagonal_entry = row_map(p);
        double off_diagonal_sum = 0;
        for (int e = row_map(p); e < row_map(p + 1); ++e) {
          if (global_columns(e) == first + p) {
            diagonal_entry = e;
            continue;
          }
          int const j = extended_columns(e);
          double const dx = x(j, 0) - x(p, 0), dy = x(j, 1) - x(p, 1);
          double const distance = sdot::compat::sqrt(dx * dx + dy * dy);
          double const value = distance > 0 ? -values(e) / (2 * distance) : 0.0;
          values(e) = value;
          off_diagonal_sum += value;
        }
        values(diagonal_entry) = -off_diagonal_sum;
        diagonal(p) = -off_diagonal_sum;
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
  return detail::assemble_jacobian(space, ranks, positions, detail::polygon_reader(polygons), {});
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
                          CellPolygonReader<Kokkos::DefaultExecutionSpace::memory_space> const&,
                          Kokkos::View<int const*, Kokkos::DefaultExecutionSpace::memory_space>);
extern template MeasureJacobian<Kokkos::DefaultExecutionSpace>
measure_jacobian(Kokkos::DefaultExecutionSpace const&, loom::Ranks const&,
                 ConstPoints<Kokkos::DefaultExecutionSpace::memory_space>,
                 CellPolygons<Kokkos::DefaultExecutionSpace::memory_space> const&);
#endif

} // namespace sdot
