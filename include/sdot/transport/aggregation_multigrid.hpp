#pragma once
// A multilevel aggregation preconditioner for the conjugate gradient on a weighted graph
// Laplacian (the Jacobian of the measures) whose rows spread over the processes: one symmetric
// W-cycle (V-cycle: AggregationOptions) of the whole matrix, or with
// AggregationOptions::couple_processes off, of each process's block alone (block Jacobi).
//
// - Processes: aggregates stay within a process; each level keeps its couplings to other
//   processes' nodes (columns in extended numbering: this process's rows, then the level's
//   halo, a loom::Halo plan built with the level), every sweep and residual first brings the
//   halo rows of the vector it reads. The last coupled level (≤ gathered_level_factor ×
//   `coarsest_size` nodes over all the processes) is gathered on every process, which builds
//   that whole level's own multigrid (levels along the processes' Z orders put end to end,
//   down to `coarsest_size`, factored there) and runs it on the gathered right-hand side,
//   keeping its rows: the coarse levels, visited most often by the W-cycle, without
//   exchanges. The same levels and sweeps on every process (the levels stop on global sizes),
//   so the exchanges match.
//
// - Numbering: the seeds sorted along a Morton (Z-order) curve (one sort per transport solve:
//   positions() do not change); every level keeps that order.
// - Aggregates: on the first matched_levels_used() levels (by default 3, none under a block
//   Jacobi: sdot/aggregation_options.hpp), two rounds of pairwise matching along
//   the strongest couplings (mg_match: each node proposes to its strongest unmatched
//   neighbour, −a_ij ≥ 0.25 max_k −a_ik, and mutual proposals pair up, over a few rounds;
//   then the same on the Galerkin matrix of the pairs): aggregates of up to 4 nodes that follow
//   the couplings, which at transport weights are far from isotropic. Coarse nodes are
//   numbered in the order of their first node, so they keep the curve's order. Below, or where
//   matching would coarsen by less than 2.5, consecutive groups of `aggregate_size` along it.
// - Prolongation: piecewise constant (unsmoothed aggregation); coarse matrices by the Galerkin
//   product Pᵀ A P, assembled per coarse row (entries sorted by column, each summed in the
//   fine entries' order: the same bits on every run).
// - Smoother: `sweeps` damped Jacobi sweeps (ω) before and after the coarse correction (so the
//   cycle is symmetric); the coarse correction is scaled by `coarse_scale` (over-correction,
//   which unsmoothed aggregation needs). A W-cycle visits each coarse level twice per visit of
//   the level above: the second visit continues from the first one's result, whose last
//   sweeps stand for its first ones (S C S C S: still a palindrome of self-adjoint steps).
// - Coarsest level (≤ `coarsest_size` nodes): dense Cholesky of A_c + s 1 1ᵀ (s = mean
//   diagonal / size, only where the levels hold the whole singular Laplacian, not a block
//   Jacobi's block; the constants are its kernel and the right-hand sides are orthogonal to
//   them).
// Under a block Jacobi, columns of other processes (extended numbering ≥ n) are left out
// (their coupling stays in the diagonal: the blocks are positive definite). Everything is a
// positive combination of symmetric positive semi-definite terms plus the smoother's positive
// definite part, so the preconditioner is symmetric positive definite for ω ∈ (0, 1].
// - The cycle's residuals read each level's matrix from a copy in slices of 8 rows (SELL-8:
//   a slice's rows padded with zeros to its longest, entry k of its rows side by side), in
//   single precision: fixed trip counts for 8 rows at a time and 8 bytes per entry instead of
//   a row-by-row loop over 12. The matrices are assembled in double (compressed rows, freed
//   once the levels are built); rounding moves an entry by 6e-8 of itself and keeps each level
//   symmetric, against margins of order one in the argument above.
// - Each pass over a level's matrix finishes its step in the same loop
//   (for_each_residual_slice): the residual before restriction is summed straight into the
//   coarse right-hand side (mg_restrict_residual), and a Jacobi sweep writes x + ω D⁻¹ (b − A x)
//   into the level's other vector (mg_smooth), so the cycle goes back and forth between the
//   level's x and t. The same operations in the same order as one pass per operation: the same
//   bits.

#include <sdot/base/morton.hpp>
#include <sdot/base/radix_sort.hpp>
#include <sdot/base/scan.hpp>
#include <sdot/base/small_sort.hpp>
#include <sdot/base/views.hpp>
#include <sdot/transport/inverse_diagonal.hpp>

#include <loom/detail/segments.hpp>
#include <loom/halo.hpp>
#include <loom/ranks.hpp>
#include <loom/row_blocks.hpp>
#include <sdot/aggregation_options.hpp>
#include <sdot/base/kokkos_compat.hpp>

#include <Kokkos_Core.hpp>

#include <cstdint>
#include <memory>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

namespace sdot::detail {

/// One level: a square matrix (this process's rows and columns), with its inverse diagonal, and
/// what the cycle needs there.
template <class MemorySpace>
struct MultigridLevel {
  using Vector = Kokkos::View<double*, Kokkos::LayoutLeft, MemorySpace>;
  static constexpr int slice_rows = 8;
  int size = 0;
  /// The matrix in compressed rows, while the levels are built (the finest level's may be the
  /// matrix's own arrays: read only).
  Kokkos::View<int const*, MemorySpace> row_map;
  Kokkos::View<int const*, MemorySpace> columns;
  Kokkos::View<double const*, MemorySpace> values;
  Kokkos::View<double*, MemorySpace> inverse_diagonal;
  /// The matrix as the cycle reads it: slice s (rows 8s to 8s + 7) holds its entries from
  /// slice_begin(s), entry k of row 8s + r at slice_begin(s) + 8k + r; a row shorter than its
  /// slice's longest is padded with zeros (column: the row itself, or 0 past the last row).
  Kokkos::View<int*, MemorySpace> slice_begin, sliced_columns;
  Kokkos::View<float*, MemorySpace> sliced_values;
  /// To the next level: node → coarse node, and each coarse node's nodes.
  Kokkos::View<int*, MemorySpace> aggregate, member_offsets, members;
  /// Whether the aggregates are consecutive groups of `aggregate_size` (else matched).
  bool consecutive_aggregates = true;
  Vector b, x, t;
};

/// The aggregates of every level but the coarsest, and so the levels' sizes (a level's next
/// size: its member_offsets' extent less one): computed by the first AggregationMultigrid of a
/// transport solve and kept for the next ones (whose matrices have the same rows: Newton steps
/// of the same seeds), which then only form the Galerkin products of their own matrices. Empty
/// until then (whatever the rows: a process without rows, or a matrix too small to coarsen,
/// keeps its empty list of levels, as every process must take the same path).
template <class MemorySpace>
struct MultigridAggregates {
  struct Level {
    bool consecutive = true;
    Kokkos::View<int*, MemorySpace> aggregate, member_offsets, members;
  };
  int fine_size = 0;
  std::vector<Level> levels;
  bool computed = false;
  bool empty() const { return !computed; }
};

/// Calls finish(first, s) for each slice of 8 rows of `level` (rows first to first + 7), s[r]
/// being row first + r of b − A x (0 past the last row), A read from its sliced copy (each
/// row's products subtracted in its entries' order): the one loop of every residual of the
/// cycle, whose callers differ in what they write from it.
template <class ExecutionSpace, class MemorySpace, class B, class X, class Finish>
void for_each_residual_slice(ExecutionSpace const& space, std::string const& label,
                             MultigridLevel<MemorySpace> const& level, B const& b, X const& x,
                             Finish const& finish) {
  constexpr int rows = MultigridLevel<MemorySpace>::slice_rows;
  auto const slice_begin = level.slice_begin;
  auto const columns = level.sliced_columns;
  auto const values = level.sliced_values;
  int const n = level.size;
  Kokkos::parallel_for(
      label,
      Kokkos::RangePolicy<ExecutionSpace>(space, 0, static_cast<int>(slice_begin.extent(0)) - 1),
      KOKKOS_LAMBDA(int slice) {
        int const first = slice * rows;
        double s[rows];
        for (int r = 0; r < rows; ++r)
          s[r] = first + r < n ? b(first + r) : 0.0;
        int const begin = slice_begin(slice);
        int const width = (slice_begin(slice + 1) - begin) / rows;
        for (int k = 0; k < width; ++k)
          for (int r = 0; r < rows; ++r) {
            int const e = begin + k * rows + r;
            s[r] -= values(e) * x(columns(e));
          }
        finish(first, s);
      });
}

/// t = b − A x.
template <class ExecutionSpace, class MemorySpace, class B, class X, class T>
void mg_residual(ExecutionSpace const& space, MultigridLevel<MemorySpace> const& level, B const& b,
                 X const& x, T const& t) {
  constexpr int rows = MultigridLevel<MemorySpace>::slice_rows;
  int const n = level.size;
  for_each_residual_slice(
      space, "sdot::mg::residual", level, b, x, KOKKOS_LAMBDA(int first, double const* s) {
        for (int r = 0; r < rows && first + r < n; ++r)
          t(first + r) = s[r];
      });
}

/// x_out = x + ω D⁻¹ (b − A x): one damped Jacobi sweep, out of place.
template <class ExecutionSpace, class MemorySpace, class B, class X>
void mg_smooth(ExecutionSpace const& space, MultigridLevel<MemorySpace> const& level, B const& b,
               X const& x, X const& x_out, double omega) {
  constexpr int rows = MultigridLevel<MemorySpace>::slice_rows;
  int const n = level.size;
  auto const inverse_diagonal = level.inverse_diagonal;
  for_each_residual_slice(
      space, "sdot::mg::smooth", level, b, x, KOKKOS_LAMBDA(int first, double const* s) {
        for (int r = 0; r < rows && first + r < n; ++r) {
          int const i = first + r;
          double const update = omega * inverse_diagonal(i) * s[r];
          x_out(i) = x(i) + update;
        }
      });
}

/// A graph Laplacian (rows adding up to zero, off the diagonal ≤ 0: the measures' Jacobian)
/// read from a level's sliced single-precision copy, as the conjugate gradient's operator: row
/// i of A x is Σ_j a_ij (x_j − x_i) (the diagonal's term is zero), so that the rounding of the
/// entries perturbs the couplings only: the operator keeps the constants in its kernel and its
/// error is relative to the differences x_j − x_i, not to the values.
template <class MemorySpace>
struct SlicedLaplacian {
  MultigridLevel<MemorySpace> level;
};

/// y = A x for a SlicedLaplacian (conjugate_gradient()'s matrix product).
template <class ExecutionSpace, class MemorySpace, class X, class Y>
void multiply(ExecutionSpace const& space, SlicedLaplacian<MemorySpace> const& laplacian,
              X const& x, Y const& y) {
  constexpr int rows = MultigridLevel<MemorySpace>::slice_rows;
  auto const slice_begin = laplacian.level.slice_begin;
  auto const columns = laplacian.level.sliced_columns;
  auto const values = laplacian.level.sliced_values;
  int const n = laplacian.level.size;
  Kokkos::parallel_for(
      "sdot::mg::laplacian_product",
      Kokkos::RangePolicy<ExecutionSpace>(space, 0, static_cast<int>(slice_begin.extent(0)) - 1),
      KOKKOS_LAMBDA(int slice) {
        int const first = slice * rows;
        double own[rows], s[rows];
        for (int r = 0; r < rows; ++r) {
          own[r] = first + r < n ? x(first + r) : 0.0;
          s[r] = 0;
        }
        int const begin = slice_begin(slice);
        int const width = (slice_begin(slice + 1) - begin) / rows;
        for (int k = 0; k < width; ++k)
          for (int r = 0; r < rows; ++r) {
            int const e = begin + k * rows + r;
            s[r] += values(e) * (x(columns(e)) - own[r]);
          }
        for (int r = 0; r < rows && first + r < n; ++r)
          y(first + r) = s[r];
      });
}

/// The sliced single-precision copy of `level`'s matrix (see MultigridLevel), then its
/// compressed rows freed.
template <class ExecutionSpace, class MemorySpace>
void mg_slice(ExecutionSpace const& space, MultigridLevel<MemorySpace>& level) {
  using Policy = Kokkos::RangePolicy<ExecutionSpace>;
  constexpr int rows = MultigridLevel<MemorySpace>::slice_rows;
  int const n = level.size;
  int const slices = (n + rows - 1) / rows;
  level.slice_begin = uninitialized_view<int*>(space, "sdot::mg::slice_begin", slices + 1);
  auto const slice_begin = level.slice_begin;
  auto const row_map = level.row_map;
  Kokkos::parallel_for(
      "sdot::mg::slice_widths", Policy(space, 0, slices), KOKKOS_LAMBDA(int slice) {
        int width = 0;
        for (int i = slice * rows; i < sdot::compat::min(n, (slice + 1) * rows); ++i)
          width = sdot::compat::max(width, row_map(i + 1) - row_map(i));
        slice_begin(slice) = rows * width;
      });
  int const total =
      exclusive_scan(space, "sdot::mg::slice_begin",
                     Kokkos::subview(slice_begin, Kokkos::make_pair(0, slices)), slice_begin);
  level.sliced_columns = uninitialized_view<int*>(space, "sdot::mg::sliced_columns", total);
  level.sliced_values = uninitialized_view<float*>(space, "sdot::mg::sliced_values", total);
  auto const columns = level.columns;
  auto const values = level.values;
  auto const sliced_columns = level.sliced_columns;
  auto const sliced_values = level.sliced_values;
  Kokkos::parallel_for(
      "sdot::mg::slice_entries", Policy(space, 0, slices), KOKKOS_LAMBDA(int slice) {
        int const begin = slice_begin(slice);
        int const width = (slice_begin(slice + 1) - begin) / rows;
        for (int r = 0; r < rows; ++r) {
          int const i = slice * rows + r;
          int const length = i < n ? row_map(i + 1) - row_map(i) : 0;
          for (int k = 0; k < width; ++k) {
            int const e = begin + k * rows + r;
            sliced_columns(e) = k < length ? columns(row_map(i) + k) : (i < n ? i : 0);
            sliced_values(e) = k < length ? static_cast<float>(values(row_map(i) + k)) : 0.0f;
          }
        }
      });
  level.row_map = {};
  level.columns = {};
  level.values = {};
}

/// x = ω D⁻¹ b: a damped Jacobi sweep from zero.
template <class ExecutionSpace, class MemorySpace, class X, class B>
void mg_jacobi(ExecutionSpace const& space, MultigridLevel<MemorySpace> const& level, X const& x,
               B const& b, double omega) {
  auto const inverse_diagonal = level.inverse_diagonal;
  Kokkos::parallel_for(
      "sdot::mg::jacobi", Kokkos::RangePolicy<ExecutionSpace>(space, 0, level.size),
      KOKKOS_LAMBDA(int i) { x(i) = omega * inverse_diagonal(i) * b(i); });
}

/// coarse_b(I) = Σ_{m in I} t(m)
template <class ExecutionSpace, class MemorySpace, class T, class C>
void mg_restrict(ExecutionSpace const& space, MultigridLevel<MemorySpace> const& fine, T const& t,
                 C const& coarse_b, int coarse_size) {
  auto const offsets = fine.member_offsets;
  auto const members = fine.members;
  Kokkos::parallel_for(
      "sdot::mg::restrict", Kokkos::RangePolicy<ExecutionSpace>(space, 0, coarse_size),
      KOKKOS_LAMBDA(int c) {
        double s = 0;
        for (int p = offsets(c); p < offsets(c + 1); ++p)
          s += t(members(p));
        coarse_b(c) = s;
      });
}

/// coarse_b(I) = Σ_{m in I} (b − A x)(m), the sums in mg_restrict's order; `t` holds b − A x
/// on the way unless the aggregates are consecutive groups of `aggregate_size` nodes that tile
/// the slices of 8 rows (matched aggregates: a residual pass, then the sums by members; one
/// kernel per aggregate reading its members' rows in their slices took 1.8× as long).
template <class ExecutionSpace, class MemorySpace, class B, class X, class T, class C>
void mg_restrict_residual(ExecutionSpace const& space, MultigridLevel<MemorySpace> const& level,
                          B const& b, X const& x, T const& t, C const& coarse_b, int coarse_size,
                          int aggregate_size) {
  constexpr int rows = MultigridLevel<MemorySpace>::slice_rows;
  if (rows % aggregate_size != 0 || !level.consecutive_aggregates) {
    mg_residual(space, level, b, x, t);
    mg_restrict(space, level, t, coarse_b, coarse_size);
    return;
  }
  int const n = level.size;
  for_each_residual_slice(
      space, "sdot::mg::restrict_residual", level, b, x, KOKKOS_LAMBDA(int first, double const* s) {
        for (int a = 0; a < rows; a += aggregate_size) {
          int const c = (first + a) / aggregate_size;
          if (c >= coarse_size)
            return;
          double sum = 0;
          for (int m = a; m < a + aggregate_size && first + m < n; ++m)
            sum += s[m];
          coarse_b(c) = sum;
        }
      });
}

/// x(i) += scale × coarse_x(aggregate(i))
template <class ExecutionSpace, class MemorySpace, class X, class C>
void mg_prolong(ExecutionSpace const& space, MultigridLevel<MemorySpace> const& fine, X const& x,
                C const& coarse_x, double scale) {
  auto const aggregate = fine.aggregate;
  Kokkos::parallel_for(
      "sdot::mg::prolong", Kokkos::RangePolicy<ExecutionSpace>(space, 0, fine.size),
      KOKKOS_LAMBDA(int i) { x(i) += scale * coarse_x(aggregate(i)); });
}

/// The Galerkin product Pᵀ A P of `fine` with its aggregates (already set in `fine`), its
/// columns numbered by `coarse_column` (of each of fine's columns: its aggregate, or with
/// levels that couple the processes the global number of its aggregate, this process's
/// aggregates from `first_coarse` on).
template <class ExecutionSpace, class MemorySpace>
MultigridLevel<MemorySpace>
mg_coarsen(ExecutionSpace const& space, MultigridLevel<MemorySpace> const& fine, int coarse_size,
           Kokkos::View<int*, MemorySpace> coarse_column, int first_coarse = 0) {
  using Policy = Kokkos::RangePolicy<ExecutionSpace>;
  auto const row_map = fine.row_map;
  auto const columns = fine.columns;
  auto const values = fine.values;
  auto const offsets = fine.member_offsets;
  auto const members = fine.members;
  auto const aggregate = coarse_column;
  auto counts = uninitialized_view<int*>(space, "sdot::mg::counts", coarse_size);
  Kokkos::parallel_for(
      "sdot::mg::count", Policy(space, 0, coarse_size), KOKKOS_LAMBDA(int c) {
        int k = 0;
        for (int p = offsets(c); p < offsets(c + 1); ++p) {
          int const m = members(p);
          k += row_map(m + 1) - row_map(m);
        }
        counts(c) = k;
      });
  auto raw_offsets = uninitialized_view<int*>(space, "sdot::mg::raw_offsets", coarse_size + 1);
  int const raw_total = exclusive_scan(space, "sdot::mg::raw_offsets", counts, raw_offsets);
  auto raw_columns = uninitialized_view<int*>(space, "sdot::mg::raw_columns", raw_total);
  auto raw_values = uninitialized_view<double*>(space, "sdot::mg::raw_values", raw_total);
  // Entries of each coarse row by coarse column, each column's value summed in the fine
  // entries' order (the same sums as a stable sort then a merge): the entries are kept in the
  // order their columns first come, a table of open addressing finds a column's entry (a scan
  // of the entries once they would fill more than 3/4 of it), and the distinct columns are
  // sorted at the end. An insertion into a sorted list with the sums on the way took about
  // twice as long (an exit from its scan mispredicted for each fine entry).
  constexpr int table_size = 64;
  Kokkos::parallel_for(
      "sdot::mg::galerkin_rows", Policy(space, 0, coarse_size), KOKKOS_LAMBDA(int c) {
        int const b = raw_offsets(c);
        int end = b;
        int table_columns[table_size];
        std::uint8_t table_entries[table_size];
        for (int h = 0; h < table_size; ++h)
          table_columns[h] = -1;
        for (int p = offsets(c); p < offsets(c + 1); ++p) {
          int const m = members(p);
          for (int e = row_map(m); e < row_map(m + 1); ++e) {
            int const column = aggregate(columns(e));
            bool const in_table = end - b < table_size * 3 / 4;
            int found = -1, h = column & (table_size - 1);
            if (in_table) {
              while (table_columns[h] != -1 && table_columns[h] != column)
                h = (h + 1) & (table_size - 1);
              if (table_columns[h] == column)
                found = b + table_entries[h];
            } else {
              for (int r = b; r < end && found < 0; ++r)
                if (raw_columns(r) == column)
                  found = r;
            }
            if (found >= 0) {
              raw_values(found) += values(e);
              continue;
            }
            if (in_table) {
              table_columns[h] = column;
              table_entries[h] = static_cast<std::uint8_t>(end - b);
            }
            raw_columns(end) = column;
            raw_values(end) = values(e);
            ++end;
          }
        }
        // Distinct columns: any sort gives the same order.
        if (end - b <= small_sort_max) { // by rank
          std::uint64_t keys[small_sort_max];
          double sums[small_sort_max];
          for (int r = b; r < end; ++r) {
            keys[r - b] = column_key(raw_columns(r), r - b);
            sums[r - b] = raw_values(r);
          }
          for (int k = 0; k < end - b; ++k) {
            int const to = b + rank_among(keys, end - b, k);
            raw_columns(to) = static_cast<int>(keys[k] >> 32);
            raw_values(to) = sums[k];
          }
        } else {
          for (int r = b + 1; r < end; ++r) { // insertion sort
            int const column = raw_columns(r);
            double const value = raw_values(r);
            int s = r;
            for (; s > b && raw_columns(s - 1) > column; --s) {
              raw_columns(s) = raw_columns(s - 1);
              raw_values(s) = raw_values(s - 1);
            }
            raw_columns(s) = column;
            raw_values(s) = value;
          }
        }
        counts(c) = end - b;
      });
  MultigridLevel<MemorySpace> coarse;
  coarse.size = coarse_size;
  auto const out_map = uninitialized_view<int*>(space, "sdot::mg::row_map", coarse_size + 1);
  int const nnz = exclusive_scan(space, "sdot::mg::row_map", counts, out_map);
  auto const out_columns = uninitialized_view<int*>(space, "sdot::mg::columns", nnz);
  auto const out_values = uninitialized_view<double*>(space, "sdot::mg::values", nnz);
  auto const inverse_diagonal =
      uninitialized_view<double*>(space, "sdot::mg::inverse_diagonal", coarse_size);
  coarse.row_map = out_map;
  coarse.columns = out_columns;
  coarse.values = out_values;
  coarse.inverse_diagonal = inverse_diagonal;
  Kokkos::parallel_for(
      "sdot::mg::copy_rows", Policy(space, 0, coarse_size), KOKKOS_LAMBDA(int c) {
        int const b = raw_offsets(c), out = out_map(c), size = out_map(c + 1) - out;
        double diagonal = 0;
        for (int r = 0; r < size; ++r) {
          out_columns(out + r) = raw_columns(b + r);
          out_values(out + r) = raw_values(b + r);
          if (raw_columns(b + r) == first_coarse + c)
            diagonal = raw_values(b + r);
        }
        inverse_diagonal(c) = inverse_of_diagonal(diagonal);
      });
  return coarse;
}

/// Aggregates of consecutive groups of `size` nodes.
template <class ExecutionSpace, class MemorySpace>
int mg_aggregate(ExecutionSpace const& space, MultigridLevel<MemorySpace>& level, int size) {
  using Policy = Kokkos::RangePolicy<ExecutionSpace>;
  int const n = level.size;
  int const coarse_size = (n + size - 1) / size;
  level.aggregate = uninitialized_view<int*>(space, "sdot::mg::aggregate", n);
  level.member_offsets =
      uninitialized_view<int*>(space, "sdot::mg::member_offsets", coarse_size + 1);
  level.members = uninitialized_view<int*>(space, "sdot::mg::members", n);
  auto const aggregate = level.aggregate;
  auto const offsets = level.member_offsets;
  auto const members = level.members;
  Kokkos::parallel_for(
      "sdot::mg::aggregate", Policy(space, 0, n), KOKKOS_LAMBDA(int p) {
        members(p) = p;
        aggregate(p) = p / size;
      });
  Kokkos::parallel_for(
      "sdot::mg::member_offsets", Policy(space, 0, coarse_size + 1),
      KOKKOS_LAMBDA(int c) { offsets(c) = c * size < n ? c * size : n; });
  return coarse_size;
}

/// Groups of nodes, each node alone (`singletons`) or the groups of an earlier aggregation.
template <class MemorySpace>
struct MatchedGroups {
  bool singletons;
  Kokkos::View<int*, MemorySpace> offsets, members;
  KOKKOS_INLINE_FUNCTION int size(int g) const {
    return singletons ? 1 : offsets(g + 1) - offsets(g);
  }
  KOKKOS_INLINE_FUNCTION int member(int g, int k) const {
    return singletons ? g : members(offsets(g) + k);
  }
};

/// A pairwise matching of the groups of nodes of `level` (its compressed rows, a weighted
/// graph Laplacian: couplings −a_ij > 0; `group_of`: the group of each node, empty when each
/// node is its own) along their strongest couplings, two groups being as strongly coupled as
/// their strongest pair of nodes: partner(g) is the group g is paired with, or −1. Each group
/// keeps its `match_candidates` most strongly coupled groups among those coupled at least
/// β times its strongest coupling (ties to the lower group); in each of `rounds` rounds every
/// unpaired group proposes to its first unpaired candidate, and two groups that propose to
/// each other pair up. The same pairs on every backend and run.
inline constexpr int match_candidates = 4;
template <class ExecutionSpace, class MemorySpace>
Kokkos::View<int*, MemorySpace>
mg_match(ExecutionSpace const& space, MultigridLevel<MemorySpace> const& level,
         MatchedGroups<MemorySpace> const& groups, Kokkos::View<int*, MemorySpace> group_of,
         int size, int rounds, double beta = 0.25) {
  using Policy = Kokkos::RangePolicy<ExecutionSpace>;
  constexpr int kept = match_candidates;
  auto const row_map = level.row_map;
  auto const columns = level.columns;
  auto const values = level.values;
  bool const singletons = group_of.extent(0) == 0;
  int const level_size = level.size;
  Kokkos::View<int*, MemorySpace> partner(Kokkos::view_alloc(space, "sdot::mg::partner"), size);
  auto const proposal = uninitialized_view<int*>(space, "sdot::mg::proposal", size);
  auto const candidates =
      uninitialized_view<int*>(space, "sdot::mg::match_candidates", std::size_t(kept) * size);
  Kokkos::parallel_for(
      "sdot::mg::match_candidates", Policy(space, 0, size), KOKKOS_LAMBDA(int g) {
        int best[kept];
        double strength[kept];
        for (int c = 0; c < kept; ++c) {
          best[c] = -1;
          strength[c] = 0;
        }
        // The strongest coupling to each other group, kept in the top `kept` (sorted).
        for (int k = 0; k < groups.size(g); ++k) {
          int const i = groups.member(g, k);
          for (int e = row_map(i); e < row_map(i + 1); ++e) {
            if (columns(e) >= level_size) // another process's node
              continue;
            int h = singletons ? columns(e) : group_of(columns(e));
            double v = -values(e);
            if (h == g || !(v > 0))
              continue;
            int c = 0; // h's place, or the first empty one
            while (c < kept && best[c] >= 0 && best[c] != h)
              ++c;
            if (c < kept && best[c] == h) {
              if (v <= strength[c])
                continue;
              for (int d = c; d + 1 < kept; ++d) { // h taken out, put back below
                best[d] = best[d + 1];
                strength[d] = strength[d + 1];
              }
              best[kept - 1] = -1;
              strength[kept - 1] = 0;
            }
            // Insert (v, h), stronger first, ties to the lower group.
            for (c = 0; c < kept; ++c)
              if (best[c] < 0 || v > strength[c] || (v == strength[c] && h < best[c])) {
                for (int d = c; d < kept; ++d) {
                  int const bh = best[d];
                  double const bv = strength[d];
                  best[d] = h;
                  strength[d] = v;
                  h = bh;
                  v = bv;
                  if (h < 0)
                    break;
                }
                break;
              }
          }
        }
        for (int c = 0; c < kept; ++c)
          candidates(std::size_t(kept) * g + c) =
              best[c] >= 0 && strength[c] >= beta * strength[0] ? best[c] : -1;
        partner(g) = -1;
      });
  for (int round = 0; round < rounds; ++round) {
    Kokkos::parallel_for(
        "sdot::mg::match_propose", Policy(space, 0, size), KOKKOS_LAMBDA(int g) {
          int choice = -1;
          if (partner(g) < 0)
            for (int c = 0; c < kept && choice < 0; ++c) {
              int const h = candidates(std::size_t(kept) * g + c);
              if (h < 0)
                break;
              if (partner(h) < 0)
                choice = h;
            }
          proposal(g) = choice;
        });
    Kokkos::parallel_for(
        "sdot::mg::match_pair", Policy(space, 0, size), KOKKOS_LAMBDA(int g) {
          int const h = proposal(g);
          if (h >= 0 && proposal(h) == g)
            partner(g) = h;
        });
  }
  return partner;
}

/// Aggregates of `level` from groups of nodes of an earlier level: group g of `inner` (its
/// member_offsets and members, `inner_size` groups, over the nodes of `level`) paired by
/// `partner` (−1: alone) with another group; each pair, or lone group, becomes one aggregate,
/// numbered in the order of its lower group, its members those of its lower group then those
/// of the other. Without `inner` (empty offsets) every node is its own group. Returns the
/// number of aggregates.
template <class ExecutionSpace, class MemorySpace>
int mg_pair_aggregates(ExecutionSpace const& space, MultigridLevel<MemorySpace>& level,
                       MatchedGroups<MemorySpace> const& groups, int inner_size,
                       Kokkos::View<int*, MemorySpace> partner) {
  using Policy = Kokkos::RangePolicy<ExecutionSpace>;
  // At the lower group of each aggregate (0 elsewhere): its node count and 1, then scanned
  // into its first member's place and its number (the count of lower groups before it).
  auto const offsets = uninitialized_view<int*>(space, "sdot::mg::pair_offsets", inner_size + 1);
  auto const number = uninitialized_view<int*>(space, "sdot::mg::pair_number", inner_size + 1);
  Kokkos::parallel_for(
      "sdot::mg::pair_counts", Policy(space, 0, inner_size), KOKKOS_LAMBDA(int g) {
        int const p = partner(g);
        bool const lower = p < 0 || p > g;
        offsets(g) = lower ? groups.size(g) + (p >= 0 ? groups.size(p) : 0) : 0;
        number(g) = lower ? 1 : 0;
      });
  exclusive_scan(space, "sdot::mg::pair_offsets",
                 Kokkos::subview(offsets, Kokkos::make_pair(0, inner_size)), offsets);
  int const coarse_size =
      exclusive_scan(space, "sdot::mg::pair_number",
                     Kokkos::subview(number, Kokkos::make_pair(0, inner_size)), number);
  level.member_offsets =
      uninitialized_view<int*>(space, "sdot::mg::member_offsets", coarse_size + 1);
  level.members = uninitialized_view<int*>(space, "sdot::mg::members", level.size);
  level.aggregate = uninitialized_view<int*>(space, "sdot::mg::aggregate", level.size);
  auto const member_offsets = level.member_offsets;
  auto const members = level.members;
  auto const aggregate = level.aggregate;
  int const n = level.size;
  Kokkos::parallel_for(
      "sdot::mg::pair_members", Policy(space, 0, inner_size), KOKKOS_LAMBDA(int g) {
        int const p = partner(g);
        if (p >= 0 && p < g)
          return;
        int const c = number(g);
        int next = offsets(g);
        member_offsets(c) = next;
        if (c + 1 == coarse_size)
          member_offsets(coarse_size) = n;
        for (int k = 0; k < groups.size(g); ++k) {
          members(next) = groups.member(g, k);
          aggregate(members(next++)) = c;
        }
        if (p >= 0)
          for (int k = 0; k < groups.size(p); ++k) {
            members(next) = groups.member(p, k);
            aggregate(members(next++)) = c;
          }
      });
  level.consecutive_aggregates = false;
  return coarse_size;
}

/// Aggregates of up to 4 nodes along the strongest couplings of `level` (its compressed rows):
/// pairs of nodes, then pairs of those pairs (mg_match). Returns the number of aggregates.
template <class ExecutionSpace, class MemorySpace>
int mg_aggregate_by_matching(ExecutionSpace const& space, MultigridLevel<MemorySpace>& level) {
  constexpr int rounds = 2;
  MatchedGroups<MemorySpace> const nodes{true, {}, {}};
  int const pairs = mg_pair_aggregates(space, level, nodes, level.size,
                                       mg_match(space, level, nodes, {}, level.size, rounds));
  MatchedGroups<MemorySpace> const paired{false, level.member_offsets, level.members};
  return mg_pair_aggregates(space, level, paired, pairs,
                            mg_match(space, level, paired, level.aggregate, pairs, rounds));
}

/// A square matrix in compressed rows, read by mg_fine_level() as it reads a
/// KokkosSparse::CrsMatrix (numRows(), graph.row_map, graph.entries, values).
template <class MemorySpace>
struct CompressedRows {
  struct Graph {
    Kokkos::View<int*, MemorySpace> row_map, entries;
  } graph;
  Kokkos::View<double*, MemorySpace> values;
  int rows = 0;
  int numRows() const { return rows; }
  int numCols() const { return rows; }
};

/// The finest level: `matrix` with its rows and columns renumbered along `order` (p ↦ row;
/// identity when empty; columns ≥ its rows, other processes', left out, or with `keep_halo`
/// kept as they are), each row's entries in their order (the same sums, in the same order, as
/// in `matrix`), with the inverse of `diagonal`. The coarse levels keep that numbering, so
/// that every level is read in sequence.
template <class ExecutionSpace, class Matrix, class Diagonal>
MultigridLevel<typename ExecutionSpace::memory_space>
mg_fine_level(ExecutionSpace const& space, Matrix const& matrix, Diagonal const& diagonal,
              Kokkos::View<int*, typename ExecutionSpace::memory_space> order,
              bool keep_halo = false) {
  using memory_space = typename ExecutionSpace::memory_space;
  using Policy = Kokkos::RangePolicy<ExecutionSpace>;
  int const n = static_cast<int>(matrix.numRows());
  bool const identity = order.extent(0) == 0;
  MultigridLevel<memory_space> fine;
  fine.size = n;
  if (identity && !keep_halo && static_cast<int>(matrix.numCols()) == n) {
    // Nothing to renumber or leave out: the matrix's own arrays.
    fine.row_map = matrix.graph.row_map;
    fine.columns = matrix.graph.entries;
    fine.values = matrix.values;
    auto const inverse_diagonal =
        uninitialized_view<double*>(space, "sdot::mg::inverse_diagonal", n);
    fine.inverse_diagonal = inverse_diagonal;
    Kokkos::parallel_for(
        "sdot::mg::fine_inverse_diagonal", Policy(space, 0, n),
        KOKKOS_LAMBDA(int p) { inverse_diagonal(p) = inverse_of_diagonal(diagonal(p)); });
    return fine;
  }
  auto const row_map = uninitialized_view<int*>(space, "sdot::mg::row_map", n + 1);
  auto const inverse_diagonal = uninitialized_view<double*>(space, "sdot::mg::inverse_diagonal", n);
  fine.row_map = row_map;
  fine.inverse_diagonal = inverse_diagonal;
  auto position = uninitialized_view<int*>(space, "sdot::mg::position", n);
  auto const in_map = matrix.graph.row_map;
  auto const in_columns = matrix.graph.entries;
  auto const in_values = matrix.values;
  Kokkos::parallel_for(
      "sdot::mg::fine_rows", Policy(space, 0, n), KOKKOS_LAMBDA(int p) {
        int const row = identity ? p : order(p);
        position(row) = p;
        int count = 0;
        for (auto k = in_map(row); k < in_map(row + 1); ++k)
          count += keep_halo || in_columns(k) < n;
        row_map(p) = count;
        inverse_diagonal(p) = inverse_of_diagonal(diagonal(row));
      });
  int const kept = exclusive_scan(space, "sdot::mg::fine_row_map",
                                  Kokkos::subview(row_map, Kokkos::make_pair(0, n)), row_map);
  auto const columns = uninitialized_view<int*>(space, "sdot::mg::columns", kept);
  auto const values = uninitialized_view<double*>(space, "sdot::mg::values", kept);
  fine.columns = columns;
  fine.values = values;
  Kokkos::parallel_for(
      "sdot::mg::fine_entries", Policy(space, 0, n), KOKKOS_LAMBDA(int p) {
        int const row = identity ? p : order(p);
        int e = row_map(p);
        for (auto k = in_map(row); k < in_map(row + 1); ++k) {
          int const c = static_cast<int>(in_columns(k));
          if (c < n || keep_halo) {
            columns(e) = c < n ? position(c) : c;
            values(e) = in_values(k);
            ++e;
          }
        }
      });
  return fine;
}

/// With levels that couple the processes, the last of them has at most this many times
/// AggregationOptions::coarsest_size nodes over all the processes: below, every process holds
/// the whole level and its coarser ones (the same work on every process, no exchange), as a
/// level visited 2^l times by the W-cycle would otherwise cost an exchange per pass for a few
/// rows per process.
inline constexpr int gathered_level_factor = 16;

/// The processes whose rows a multigrid's matrix spreads over: its rows' blocks and the halo
/// of its extended columns (the Jacobian's).
template <class ExecutionSpace>
struct MultigridProcesses {
  loom::Ranks ranks;
  loom::RowBlocks blocks;
  loom::Halo<ExecutionSpace> const* halo = nullptr;
};

/// The preconditioner (see the top of this file). Built once per matrix.
template <class ExecutionSpace>
class AggregationMultigrid {
public:
  using memory_space = typename ExecutionSpace::memory_space;
  using Vector = Kokkos::View<double*, Kokkos::LayoutLeft, memory_space>;

  AggregationMultigrid() = default;

  /// Collective over the processes of `processes` (when given).
  /// @param matrix this process's rows (a KokkosSparse::CrsMatrix), columns in extended
  ///        numbering (those ≥ rows are other processes')
  /// @param diagonal its diagonal (with the couplings to other processes)
  /// @param order this process's rows in Z order (morton_order() of its seeds)
  /// @param singular true when the whole matrix, over all the processes, has the constants in
  ///        its kernel (a graph Laplacian): the coarsest level is shifted where it stands for
  ///        the whole matrix (one process, or levels that couple the processes)
  /// @param aggregates the levels' aggregates: used when given and not empty (the same rows as
  ///        `matrix`), else computed and, when given, stored there
  /// @param processes the processes the matrix's rows spread over; without it (or with one
  ///        process) `matrix` is taken as the whole matrix. On several processes the levels
  ///        couple them (AggregationOptions::couple_processes), or each process's block is
  ///        preconditioned alone (block Jacobi: other processes' columns left out)
  template <class Matrix, class Diagonal>
  AggregationMultigrid(ExecutionSpace const& space, Matrix const& matrix, Diagonal const& diagonal,
                       Kokkos::View<int*, memory_space> order, bool singular,
                       AggregationOptions const& options = {},
                       MultigridAggregates<memory_space>* aggregates = nullptr,
                       MultigridProcesses<ExecutionSpace> const* processes = nullptr)
      : options_(options) {
    sdot::compat::ScopedRegion region("sdot::AggregationMultigrid::setup");
    bool const one_process = !processes || processes->ranks.process_count() == 1;
    coupled_ = !one_process && options_.couple_processes;
    order_ = order;
    levels_.push_back(mg_fine_level(space, matrix, diagonal, order, coupled_));
    if (coupled_) {
      ranks_ = processes->ranks;
      couple_fine_level(space, *processes);
    }
    if (aggregates && !aggregates->empty()) {
      if (aggregates->fine_size != levels_.back().size)
        throw std::invalid_argument("sdot::AggregationMultigrid: aggregates of " +
                                    std::to_string(aggregates->fine_size) + " rows for " +
                                    std::to_string(levels_.back().size));
      for (auto const& kept : aggregates->levels) {
        auto& level = levels_.back();
        level.aggregate = kept.aggregate;
        level.member_offsets = kept.member_offsets;
        level.members = kept.members;
        level.consecutive_aggregates = kept.consecutive;
        coarsen(space, static_cast<int>(kept.member_offsets.extent(0)) - 1);
      }
    } else {
      build_levels(space, one_process || coupled_);
      if (aggregates) {
        aggregates->computed = true;
        aggregates->fine_size = levels_.front().size;
        for (std::size_t l = 0; l + 1 < levels_.size(); ++l)
          aggregates->levels.push_back({levels_[l].consecutive_aggregates, levels_[l].aggregate,
                                        levels_[l].member_offsets, levels_[l].members});
      }
    }
    factor_coarsest(space, singular && (one_process || coupled_));
    for (std::size_t l = 0; l < levels_.size(); ++l) {
      auto& level = levels_[l];
      mg_slice(space, level);
      auto alloc = [&](char const* label, int size) {
        return uninitialized_view<Vector>(space, label, size);
      };
      int const extended = level.size + halo_size(static_cast<int>(l));
      level.b = alloc("sdot::mg::b", level.size);
      level.x = alloc("sdot::mg::x", extended);
      level.t = alloc("sdot::mg::t", extended);
    }
  }

  /// The coarse levels below the finest: matched aggregates on the first
  /// matched_levels_used() (`whole_matrix`: the levels hold the whole matrix, not one
  /// process's block of it), then consecutive ones, down to `coarsest_size` nodes, or with
  /// levels that couple the processes down to gathered_level_factor × `coarsest_size` nodes
  /// over all of them (or one node on the process with the most), the level then gathered on
  /// every process (gather_last_level()).
  void build_levels(ExecutionSpace const& space, bool whole_matrix) {
    int const matched_levels = matched_levels_used(options_, whole_matrix);
    bool matching = matched_levels > 0;
    std::int64_t const last_size =
        coupled_ ? std::int64_t(gathered_level_factor) * options_.coarsest_size
                 : options_.coarsest_size;
    while (global_size(levels_.back().size) > last_size && largest_size(levels_.back().size) > 1 &&
           options_.aggregate_size > 1) {
      auto& level = levels_.back();
      matching = matching && static_cast<int>(levels_.size()) <= matched_levels;
      int coarse_size = matching ? mg_aggregate_by_matching(space, level) : 0;
      if (matching && 2 * global_size(coarse_size) >
                          global_size(level.size) * 4 / 5) // coarsens by less than 2.5
        matching = false;
      if (!matching) {
        level.consecutive_aggregates = true;
        coarse_size = mg_aggregate(space, level, options_.aggregate_size);
      }
      coarsen(space, coarse_size);
    }
  }

  int levels() const { return static_cast<int>(levels_.size()); }
  /// The finest level: the matrix's rows (in `order`'s numbering), as the cycle reads them.
  MultigridLevel<memory_space> const& finest_level() const { return levels_.front(); }

  /// The conjugate gradient applies Π M⁻¹ Π (Π: minus the mean over all processes): for a
  /// matrix whose kernel is the constants (conjugate_gradient()).
  bool project_constants = false;

  /// z = M⁻¹ r (this process's rows).
  template <class R, class Z>
  void apply(ExecutionSpace const& space, R const& r, Z const& z) const {
    sdot::compat::ScopedRegion region("sdot::AggregationMultigrid::apply");
    using Policy = Kokkos::RangePolicy<ExecutionSpace>;
    auto const& fine = levels_[0];
    if (order_.extent(0) == 0) {
      auto const x = cycle(space, 0, r);
      Kokkos::parallel_for(
          "sdot::mg::from_levels", Policy(space, 0, fine.size),
          KOKKOS_LAMBDA(int p) { z(p) = x(p); });
      return;
    }
    // The levels are numbered along order_: r in that numbering, and z back from it.
    gather_in_order(space, "sdot::mg::to_levels", fine.b, r, order_);
    scatter_from_order(space, "sdot::mg::from_levels", z, cycle(space, 0, fine.b), order_);
  }

  /// x ≈ A_l⁻¹ b on level l: smooth from zero, then correct_and_smooth(). The sweeps go back
  /// and forth between the level's x and t; returns the one holding the result.
  template <class B>
  Vector cycle(ExecutionSpace const& space, int l, B const& b) const {
    auto const& level = levels_[l];
    if (l == static_cast<int>(levels_.size()) - 1) {
      solve_coarsest(space, b, level.x);
      return level.x;
    }
    Vector x = level.x, spare = level.t;
    mg_jacobi(space, level, x, b, options_.omega);
    for (int s = 1; s < options_.sweeps; ++s) {
      exchange(space, l, x);
      mg_smooth(space, level, b, x, spare, options_.omega);
      std::swap(x, spare);
    }
    return correct_and_smooth(space, l, b, x, spare);
  }

  /// The rest of a visit of level l from x (one of the level's x and t, `spare` the other):
  /// restrict the residual, solve the next level, prolong, smooth. The next level is visited
  /// `cycle` times: the first visit from zero (cycle()), each other one continuing from the
  /// result of the one before it, whose last sweeps stand for its first ones (a visit of level
  /// l + 1 reads S C S C S, S the sweeps and C the coarse corrections: a palindrome of
  /// self-adjoint steps, so the cycle stays symmetric).
  template <class B>
  Vector correct_and_smooth(ExecutionSpace const& space, int l, B const& b, Vector x,
                            Vector spare) const {
    auto const& level = levels_[l];
    auto const& next = levels_[l + 1];
    exchange(space, l, x);
    mg_restrict_residual(space, level, b, x, spare, next.b, next.size, options_.aggregate_size);
    Vector coarse_x = cycle(space, l + 1, next.b);
    for (int visit = 1; visit < options_.cycle && l + 2 < static_cast<int>(levels_.size());
         ++visit) {
      Vector const other = coarse_x.data() == next.x.data() ? next.t : next.x;
      coarse_x = correct_and_smooth(space, l + 1, next.b, coarse_x, other);
    }
    mg_prolong(space, level, x, coarse_x, options_.coarse_scale);
    for (int s = 0; s < options_.sweeps; ++s) {
      exchange(space, l, x);
      mg_smooth(space, level, b, x, spare, options_.omega);
      std::swap(x, spare);
    }
    return x;
  }

  /// x = C⁻¹ b on the coarsest level (forward and back substitution, one thread); with
  /// levels that couple the processes, x ≈ C⁻¹ b on the last coupled level by the multigrid
  /// of the whole level that every process holds (gathered_), on the right-hand side gathered
  /// from all the processes, each keeping its rows.
  template <class B, class X>
  void solve_coarsest(ExecutionSpace const& space, B const& b, X const& x) const {
    if (!coupled_) {
      substitute(space, factor_, b, x);
      return;
    }
    int const m = levels_.back().size;
    auto const host_b = Kokkos::create_mirror_view_and_copy(
        Kokkos::HostSpace(), Kokkos::subview(b, Kokkos::make_pair(0, m)));
    ranks_.allgatherv_bytes(host_b.data(), coarsest_b_host_.data(), coarsest_counts_,
                            sizeof(double));
    Kokkos::View<double*, Kokkos::HostSpace, Kokkos::MemoryTraits<Kokkos::Unmanaged>> all(
        coarsest_b_host_.data(), coarsest_b_host_.size());
    Kokkos::deep_copy(space, coarsest_b_, all);
    gathered_->apply(space, coarsest_b_, coarsest_x_);
    auto const whole = coarsest_x_;
    int const first = coarsest_first_;
    Kokkos::parallel_for(
        "sdot::mg::coarsest_rows", Kokkos::RangePolicy<ExecutionSpace>(space, 0, m),
        KOKKOS_LAMBDA(int i) { x(i) = whole(first + i); });
  }

  /// x = (L Lᵀ)⁻¹ b, L the lower triangle of `factor` and Lᵀ its upper one (one thread). Both
  /// substitutions subtract each solved unknown from the ones left (a row of `factor` at a
  /// time, contiguous): independent updates that pipeline, rather than one chain of dependent
  /// subtractions per unknown.
  template <class B, class X>
  static void substitute(ExecutionSpace const& space,
                         Kokkos::View<double**, Kokkos::LayoutRight, memory_space> const& factor,
                         B const& b, X const& x) {
    int const m = static_cast<int>(factor.extent(0));
    Kokkos::parallel_for(
        "sdot::mg::coarsest_solve", Kokkos::RangePolicy<ExecutionSpace>(space, 0, 1),
        KOKKOS_LAMBDA(int) {
          for (int i = 0; i < m; ++i)
            x(i) = b(i);
          for (int k = 0; k < m; ++k) { // L y = b: column k of L is row k of Lᵀ
            double const y = x(k) / factor(k, k);
            x(k) = y;
            for (int i = k + 1; i < m; ++i)
              x(i) -= factor(k, i) * y;
          }
          for (int i = m - 1; i >= 0; --i) { // Lᵀ x = y: row i of L
            double const xi = x(i) / factor(i, i);
            x(i) = xi;
            for (int k = 0; k < i; ++k)
              x(k) -= factor(i, k) * xi;
          }
        });
  }

  /// Dense Cholesky factor L of the coarsest matrix (+ s 1 1ᵀ when `shifted`: s = mean
  /// diagonal / size) in the lower triangle, Lᵀ in the upper one (for substitute()); a pivot
  /// that rounding makes tiny is replaced by the diagonal entry (still positive definite). With
  /// levels that couple the processes, the last coupled level gathered on every process
  /// instead, with its own multigrid (gather_last_level()).
  void factor_coarsest(ExecutionSpace const& space, bool shifted) {
    if (coupled_) {
      gather_last_level(space, shifted);
      return;
    }
    assemble_coarsest(space, shifted);
    auto const factor = factor_;
    int const m = static_cast<int>(factor_.extent(0));
    Kokkos::parallel_for(
        "sdot::mg::coarsest_factor", Kokkos::RangePolicy<ExecutionSpace>(space, 0, 1),
        KOKKOS_LAMBDA(int) {
          for (int j = 0; j < m; ++j) {
            double const original = factor(j, j);
            double d = original;
            for (int k = 0; k < j; ++k)
              d -= factor(j, k) * factor(j, k);
            if (!(d > 1e-12 * original))
              d = original > 0 ? original : 1.0;
            double const pivot = sdot::compat::sqrt(d);
            factor(j, j) = pivot;
            for (int i = j + 1; i < m; ++i) {
              double s = factor(i, j);
              for (int k = 0; k < j; ++k)
                s -= factor(i, k) * factor(j, k);
              factor(i, j) = s / pivot;
            }
          }
          for (int i = 0; i < m; ++i)
            for (int j = i + 1; j < m; ++j)
              factor(i, j) = factor(j, i);
        });
  }

  /// factor_ = the coarsest level's matrix (+ the shift), dense.
  void assemble_coarsest(ExecutionSpace const& space, bool shifted) {
    auto const& level = levels_.back();
    int const m = level.size;
    factor_ = Kokkos::View<double**, Kokkos::LayoutRight, memory_space>("sdot::mg::factor", m, m);
    auto const factor = factor_;
    auto const row_map = level.row_map;
    auto const columns = level.columns;
    auto const values = level.values;
    auto const inverse_diagonal = level.inverse_diagonal;
    double mean_diagonal = sum(
        space, "sdot::mg::mean_diagonal", m,
        KOKKOS_LAMBDA(int i) { return 1 / inverse_diagonal(i); });
    mean_diagonal /= m > 0 ? m : 1;
    double const shift = shifted && m > 0 ? mean_diagonal / m : 0.0;
    Kokkos::parallel_for(
        "sdot::mg::coarsest_matrix", Kokkos::RangePolicy<ExecutionSpace>(space, 0, m),
        KOKKOS_LAMBDA(int i) {
          for (int j = 0; j < m; ++j)
            factor(i, j) = shift;
          for (int e = row_map(i); e < row_map(i + 1); ++e)
            factor(i, columns(e)) += values(e);
        });
  }

  /// gathered_ = the multigrid of the last coupled level, whole, on every process: each
  /// process's rows in global columns, gathered in process order (collective), coarsened
  /// along the processes' Z orders put end to end down to `coarsest_size` nodes, factored
  /// there (shifted by s 1 1ᵀ when `shifted`). Every process builds the same one.
  void gather_last_level(ExecutionSpace const& space, bool shifted) {
    auto const& level = levels_.back();
    int const l = static_cast<int>(levels_.size()) - 1;
    int const m = level.size;
    int const total = static_cast<int>(global_sizes_[l]);
    coarsest_first_ = static_cast<int>(firsts_[l]);
    auto const row_map = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), level.row_map);
    auto const columns = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), level.columns);
    auto const values = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), level.values);
    auto const remote =
        Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), halos_[l].remote_columns());
    std::vector<int> lengths(m), global_columns;
    std::vector<double> entries;
    for (int i = 0; i < m; ++i) {
      lengths[i] = row_map(i + 1) - row_map(i);
      for (int e = row_map(i); e < row_map(i + 1); ++e) {
        int const c = columns(e);
        global_columns.push_back(c < m ? coarsest_first_ + c : remote(c - m));
        entries.push_back(values(e));
      }
    }
    auto const sizes = ranks_.allgather(std::vector<std::int64_t>{m});
    auto const counts =
        ranks_.allgather(std::vector<std::int64_t>{std::int64_t(global_columns.size())});
    std::int64_t nnz = 0;
    for (auto c : counts)
      nnz += c;
    std::vector<int> all_lengths(total), all_columns(nnz), all_map(total + 1, 0);
    std::vector<double> all_values(nnz), diagonal(total, 0.0);
    ranks_.allgatherv_bytes(lengths.data(), all_lengths.data(), sizes, sizeof(int));
    ranks_.allgatherv_bytes(global_columns.data(), all_columns.data(), counts, sizeof(int));
    ranks_.allgatherv_bytes(entries.data(), all_values.data(), counts, sizeof(double));
    for (int i = 0; i < total; ++i) {
      all_map[i + 1] = all_map[i] + all_lengths[i];
      for (int e = all_map[i]; e < all_map[i + 1]; ++e)
        if (all_columns[e] == i)
          diagonal[i] = all_values[e];
    }
    CompressedRows<memory_space> whole;
    whole.rows = total;
    whole.graph.row_map = loom::detail::to_device(space, all_map, "sdot::mg::gathered_row_map");
    whole.graph.entries = loom::detail::to_device(space, all_columns, "sdot::mg::gathered_columns");
    whole.values = loom::detail::to_device(space, all_values, "sdot::mg::gathered_values");
    AggregationOptions nested = options_;
    nested.matched_levels = 0; // below the first levels
    gathered_ = std::make_shared<AggregationMultigrid const>(
        space, whole, loom::detail::to_device(space, diagonal, "sdot::mg::gathered_diagonal"),
        Kokkos::View<int*, memory_space>(), shifted, nested);
    coarsest_counts_ = sizes;
    coarsest_b_host_.assign(total, 0.0);
    coarsest_b_ = uninitialized_view<Vector>(space, "sdot::mg::coarsest_b", total);
    coarsest_x_ = uninitialized_view<Vector>(space, "sdot::mg::coarsest_x", total);
  }

  /// Rows of all the processes at a level of `size` rows here (this process's alone unless the
  /// levels couple the processes).
  std::int64_t global_size(int size) const {
    return coupled_ ? static_cast<std::int64_t>(ranks_.process_sum(double(size))) : size;
  }
  /// The most rows at a level of `size` rows here over the processes.
  int largest_size(int size) const {
    return coupled_ ? static_cast<int>(ranks_.process_max(double(size))) : size;
  }
  /// Rows of other processes that level `l` reads (none unless the levels couple them).
  int halo_size(int l) const { return coupled_ ? halos_[l].size() : 0; }

  /// Collective with levels that couple the processes: the halo rows of `v` at level `l`.
  template <class V>
  void exchange(ExecutionSpace const& space, int l, V const& v) const {
    if (coupled_)
      halos_[l].update(space, v);
  }

  /// Level 0 with the couplings to other processes: its columns from the Jacobian's extended
  /// numbering to the level's own (this process's rows in Z order, then its halo), the halo of
  /// rows numbered globally by the processes' Z orders.
  void couple_fine_level(ExecutionSpace const& space,
                         MultigridProcesses<ExecutionSpace> const& processes) {
    using Policy = Kokkos::RangePolicy<ExecutionSpace>;
    auto& fine = levels_[0];
    int const n = fine.size;
    int const first = static_cast<int>(processes.blocks.begin());
    // Each row's global number in the levels' numbering, then those of the halo's rows.
    auto const global_row =
        uninitialized_view<Vector>(space, "sdot::mg::global_row", n + processes.halo->size());
    auto const order = order_;
    bool const identity = order.extent(0) == 0;
    Kokkos::parallel_for(
        "sdot::mg::global_rows", Policy(space, 0, n),
        KOKKOS_LAMBDA(int p) { global_row(identity ? p : order(p)) = first + p; });
    processes.halo->update(space, global_row);
    auto const columns = fine.columns;
    auto const global_columns =
        uninitialized_view<int*>(space, "sdot::mg::global_columns", columns.extent(0));
    Kokkos::parallel_for(
        "sdot::mg::global_columns", Policy(space, 0, columns.extent(0)), KOKKOS_LAMBDA(int e) {
          int const c = columns(e);
          global_columns(e) = c < n ? first + c : static_cast<int>(global_row(c));
        });
    auto const extended_columns =
        uninitialized_view<int*>(space, "sdot::mg::columns", columns.extent(0));
    add_halo(space, processes.blocks, global_columns, extended_columns);
    fine.columns = extended_columns;
  }

  /// The plan of level halos_.size()'s halo, and its columns in extended numbering.
  void add_halo(ExecutionSpace const& space, loom::RowBlocks const& blocks,
                Kokkos::View<int const*, memory_space> global_columns,
                Kokkos::View<int*, memory_space> extended_columns) {
    halos_.emplace_back(space, ranks_, blocks, global_columns, extended_columns);
    firsts_.push_back(blocks.begin());
    global_sizes_.push_back(blocks.global_size());
  }

  /// The next level below the last one, whose aggregates are set: its Galerkin product, and
  /// with levels that couple the processes its halo (the aggregates of the last level's halo
  /// rows, numbered globally, fetched from their processes).
  void coarsen(ExecutionSpace const& space, int coarse_size) {
    int const l = static_cast<int>(levels_.size()) - 1;
    auto const& fine = levels_[l];
    if (!coupled_) {
      levels_.push_back(mg_coarsen(space, fine, coarse_size, fine.aggregate));
      return;
    }
    loom::RowBlocks const blocks(ranks_, coarse_size);
    int const first = static_cast<int>(blocks.begin());
    int const n = fine.size;
    int const extended = n + halos_[l].size();
    auto const global_aggregate =
        uninitialized_view<Vector>(space, "sdot::mg::global_aggregate", extended);
    auto const aggregate = fine.aggregate;
    Kokkos::parallel_for(
        "sdot::mg::global_aggregates", Kokkos::RangePolicy<ExecutionSpace>(space, 0, n),
        KOKKOS_LAMBDA(int i) { global_aggregate(i) = first + aggregate(i); });
    halos_[l].update(space, global_aggregate);
    auto const coarse_column = uninitialized_view<int*>(space, "sdot::mg::coarse_column", extended);
    Kokkos::parallel_for(
        "sdot::mg::coarse_columns", Kokkos::RangePolicy<ExecutionSpace>(space, 0, extended),
        KOKKOS_LAMBDA(int i) { coarse_column(i) = static_cast<int>(global_aggregate(i)); });
    auto coarse = mg_coarsen(space, fine, coarse_size, coarse_column, first);
    auto const global_columns = coarse.columns;
    auto const extended_columns =
        uninitialized_view<int*>(space, "sdot::mg::columns", global_columns.extent(0));
    add_halo(space, blocks, global_columns, extended_columns);
    coarse.columns = extended_columns;
    levels_.push_back(coarse);
  }

private:
  AggregationOptions options_;
  Kokkos::View<int*, memory_space> order_; ///< the levels' numbering: p ↦ row of the matrix
  std::vector<MultigridLevel<memory_space>> levels_;
  Kokkos::View<double**, Kokkos::LayoutRight, memory_space> factor_;
  /// Levels that couple the processes: the processes, and each level's halo, first global row
  /// here and rows over all the processes.
  bool coupled_ = false;
  loom::Ranks ranks_;
  std::vector<loom::Halo<ExecutionSpace>> halos_;
  std::vector<std::int64_t> firsts_, global_sizes_;
  /// The last coupled level whole, with its own multigrid (on every process); that level's
  /// rows on every process, this process's first, and the whole level's right-hand side and
  /// solution.
  std::shared_ptr<AggregationMultigrid const> gathered_;
  std::vector<std::int64_t> coarsest_counts_;
  int coarsest_first_ = 0;
  mutable std::vector<double> coarsest_b_host_;
  Vector coarsest_b_, coarsest_x_;
};

} // namespace sdot::detail
