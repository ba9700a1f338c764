#pragma once
/// @file
/// Settings of the transport solver's multilevel aggregation preconditioner
/// (CgPreconditioner::aggregation).

namespace sdot {

/// Settings of the multilevel aggregation preconditioner (docs/transport.md, "The
/// preconditioner"). OptimalTransport checks each one and names the first out of its range.
struct AggregationOptions {
  /// Levels, from the finest, whose aggregates follow the strongest couplings (two rounds of
  /// pairwise matching: aggregates of up to 4 nodes), ≥ −1; the levels below them, and a level
  /// where matching would coarsen by less than 2.5, take consecutive groups of
  /// `aggregate_size` along the Z-order curve. 0: every level along the curve. −1 (the
  /// default): 3 when the levels hold the whole matrix (one process, or processes coupled:
  /// `couple_processes`), 0 for the blocks of a block Jacobi (matched_levels_used()).
  int matched_levels = -1;
  /// On several processes: whether every level keeps the couplings between the processes
  /// (each sweep first exchanges the level's halo rows; the first level of at most 16 ×
  /// `coarsest_size` nodes over all the processes is gathered on every process, which runs
  /// that level's own multigrid), or each process's block is preconditioned alone (block
  /// Jacobi over the processes: the couplings across blocks are left out, and the iterations
  /// grow with the number of processes). Aggregates stay within each process either way.
  bool couple_processes = true;
  /// Nodes per aggregate along the Z-order curve, ≥ 2.
  int aggregate_size = 4;
  /// Nodes of the coarsest level at most (a dense Cholesky factorisation there), ≥ 1.
  int coarsest_size = 256;
  /// Damped Jacobi sweeps before and after the coarse correction, ≥ 1.
  int sweeps = 1;
  /// Damping of the Jacobi sweeps, in (0, 1].
  double omega = 2.0 / 3.0;
  /// Scale of the coarse correction (unsmoothed aggregation under-corrects), in (0, 2).
  double coarse_scale = 1.5;
  /// Visits of each coarse level per visit of the level above, ≥ 1: 1, a V-cycle; 2, a
  /// W-cycle (the default: about 40 % fewer CG iterations for about 1.5× the work per cycle).
  /// Each visit after the first continues from the one before it, without sweeps of its own
  /// before its coarse correction.
  int cycle = 2;
};

/// The matched levels a solve uses: `options.matched_levels`, or where it is −1, 3 when the
/// levels hold the whole matrix (`whole_matrix`: one process, or several coupled by
/// `couple_processes`) and 0 when each holds one process's block (block Jacobi). Matched
/// aggregates take about half the CG iterations of aggregates along the curve, for ~1.5× the
/// work per cycle; under a block Jacobi over processes the lost couplings bound the
/// iterations, and they removed few of them (docs/transport.md, "The preconditioner").
inline int matched_levels_used(AggregationOptions const& options, bool whole_matrix) {
  if (options.matched_levels >= 0)
    return options.matched_levels;
  return whole_matrix ? 3 : 0;
}

} // namespace sdot
