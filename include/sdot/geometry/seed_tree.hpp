#pragma once
// The spatial index over the seeds, in two layers:
// - a complete binary tree over the tree order (node k of level l holds the seeds
//   [k·n/2^l, (k+1)·n/2^l) of that order); each node keeps the bounding box of its seeds and
//   their largest weight, the two things the stopping rule needs;
// - blocks, tree nodes that cut the tree (consecutive along a Hilbert curve): each a node of
//   about block_size seeds, or, where the seeds are spread evenly, an ancestor of such nodes
//   (choose_blocks), each with its own uniform grid of square cells holding about
//   grid_occupancy seeds: a grid adapts to the local density because a block is a fixed
//   number of seeds, and to uneven seeds because a block is small there.
// The tree order is: blocks along the Hilbert curve, and inside a block, its grid cells row
// by row (Hilbert order inside a grid cell). Built with a few parallel passes and two stable
// radix sorts of all the seeds (along the curve, then by grid cell), whatever the blocks' sizes.

#include <sdot/base/point_bounds.hpp>
#include <sdot/base/radix_sort.hpp>
#include <sdot/points.hpp>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <utility>

namespace sdot::detail {

struct Seed {
  double x, y, w;
};

/// A node of the tree: the bounding box of its seeds, their largest weight, and a second lower
/// bound of their power that follows the trend of the weights. With c the box's centre,
/// e_j = x_j − c, a slope g and a curvature κ = 1 + μ > 0 per axis (the weights' trend: w_j ≈
/// a − 2 g·e_j − Σ_a μ_a e_ja²), every seed j of the node has
/// s_j = −w_j − 2 g·e_j − Σ_a μ_a e_ja² ≥ smin, so that the power of a point p = c + u over the
/// node is, axis by axis (a = x, y),
///   |p − x_j|² − w_j = Σ_a [κ_a (e_ja − (u_a − g_a)/κ_a)² + u_a² − (u_a − g_a)²/κ_a] + s_j
///                    ≥ Σ_a [κ_a dist²((u_a − g_a)/κ_a, [−h_a, h_a]) + u_a² − (u_a − g_a)²/κ_a]
///                      + smin,
/// h_a the largest |e_ja| (reach_x(), reach_y()).
/// With g = 0, κ = 1 and smin = −wmax this is the box bound dist²(p, box) − wmax; where the
/// weights trend (optimal transport: cells far from their seeds, bunched seeds whose cells
/// spread) it is much tighter near c + g, where the node's cells lie. smin = −∞: no such bound.
struct TreeNode {
  double xmin, ymin, xmax, ymax, wmax;
  double gx = 0, gy = 0, kappa_x = 1, kappa_y = 1, smin = -sdot::compat::infinity<double>();
  int block = -1; ///< the block (number in SeedTree::blocks) whose node this is, or -1
  /// Whether the bound along the trend is worth testing: the node's cells lie more than a
  /// quarter of its size away from its seeds (|g| + (|μ_x| + |μ_y|) (h_x + h_y) > (h_x + h_y) / 4);
  /// otherwise the box bound alone is tested.
  int trend = 0;

  /// Sets `trend` from g and κ (see there).
  KOKKOS_INLINE_FUNCTION void judge_trend() {
    double const size = half_width() + half_height();
    trend = sdot::compat::fabs(gx) + sdot::compat::fabs(gy) +
                    (sdot::compat::fabs(kappa_x - 1) + sdot::compat::fabs(kappa_y - 1)) * size >
                size / 4 &&
            smin > -sdot::compat::infinity<double>();
  }

  KOKKOS_INLINE_FUNCTION bool empty() const { return !(xmin <= xmax); }
  KOKKOS_INLINE_FUNCTION double centre_x() const { return (xmin + xmax) / 2; }
  KOKKOS_INLINE_FUNCTION double centre_y() const { return (ymin + ymax) / 2; }
  KOKKOS_INLINE_FUNCTION double half_width() const { return (xmax - xmin) / 2; }
  KOKKOS_INLINE_FUNCTION double half_height() const { return (ymax - ymin) / 2; }
  /// The half-sizes h_x, h_y of the bound: the largest |e_j| along each axis about the centre
  /// as computed (centre_x(), centre_y()). They exceed half_width() and half_height() where the
  /// centre is rounded: a box far from the origin for its size (at 1e9 of its size, a box of a
  /// few units in the last place of its coordinates) would otherwise leave its edge seeds
  /// outside [−h, h], and the bound would rule out seeds that cut.
  KOKKOS_INLINE_FUNCTION double reach_x() const {
    double const c = centre_x();
    return sdot::compat::max(xmax - c, c - xmin);
  }
  KOKKOS_INLINE_FUNCTION double reach_y() const {
    double const c = centre_y();
    return sdot::compat::max(ymax - c, c - ymin);
  }
};

/// A curvature κ = 1 + μ of the trend bound, clamped to [1/16, 10⁴].
KOKKOS_INLINE_FUNCTION double clamped_curvature(double mu) {
  return sdot::compat::min(sdot::compat::max(1 + mu, 1.0 / 16), 1e4);
}

/// The least value of α t² + 2 k t over t in [−h, h].
KOKKOS_INLINE_FUNCTION double least_of_quadratic(double alpha, double k, double h) {
  if (alpha > 0) {
    double const t = sdot::compat::min(sdot::compat::max(-k / alpha, -h), h);
    return (alpha * t + 2 * k) * t;
  }
  return alpha * h * h - 2 * sdot::compat::fabs(k) * h;
}

/// smin of `parent` (box, g and κ set) drawn from the bound of `child`, one of its parts: with
/// δ = c_child − c_parent and e = e_child + δ,
///   −w − 2 g·e − μ |e|² = s_child + (μ_child − μ) |e_child|² + 2 (g_child − g − μ δ)·e_child
///                          − 2 g·δ − μ |δ|².
/// Lowered for rounding.
KOKKOS_INLINE_FUNCTION double smin_from_part(TreeNode const& parent, TreeNode const& child) {
  if (child.empty())
    return sdot::compat::infinity<double>();
  if (!(child.smin > -sdot::compat::infinity<double>()))
    return -sdot::compat::infinity<double>();
  double const dx = child.centre_x() - parent.centre_x();
  double const dy = child.centre_y() - parent.centre_y();
  // The parent's curvature is the same along both axes (bound_from_parts).
  double const mu = parent.kappa_x - 1;
  double const alpha_x = child.kappa_x - parent.kappa_x, alpha_y = child.kappa_y - parent.kappa_x;
  double const kx = child.gx - parent.gx - mu * dx, ky = child.gy - parent.gy - mu * dy;
  double const hx = child.reach_x(), hy = child.reach_y();
  double const spread = least_of_quadratic(alpha_x, kx, hx) + least_of_quadratic(alpha_y, ky, hy);
  double const shift = 2 * (parent.gx * dx + parent.gy * dy) + mu * (dx * dx + dy * dy);
  double const scale =
      sdot::compat::fabs(child.smin) + sdot::compat::fabs(shift) +
      (sdot::compat::fabs(alpha_x) + sdot::compat::fabs(alpha_y)) * (hx * hx + hy * hy) +
      2 * (sdot::compat::fabs(kx) * hx + sdot::compat::fabs(ky) * hy);
  return child.smin + spread - shift - 8 * sdot::compat::epsilon<double>() * scale;
}

/// The bound of a node (its box set) from those of its `count` ≤ 4 parts: the curvature and
/// slope by least squares from how the parts' slopes vary with their centres
/// (g_part ≈ g + μ (c_part − c)), smin from every part.
KOKKOS_INLINE_FUNCTION void bound_from_parts(TreeNode& node, TreeNode const* parts, int count) {
  double const cx = node.centre_x(), cy = node.centre_y();
  double mcx = 0, mcy = 0, mgx = 0, mgy = 0;
  int used = 0;
  for (int k = 0; k < count; ++k)
    if (!parts[k].empty()) {
      mcx += parts[k].centre_x() - cx;
      mcy += parts[k].centre_y() - cy;
      mgx += parts[k].gx;
      mgy += parts[k].gy;
      ++used;
    }
  node.gx = node.gy = 0;
  node.kappa_x = node.kappa_y = 1;
  node.smin = -sdot::compat::infinity<double>();
  if (used == 0)
    return;
  mcx /= used;
  mcy /= used;
  mgx /= used;
  mgy /= used;
  double sgc = 0, scc = 0;
  for (int k = 0; k < count; ++k)
    if (!parts[k].empty()) {
      double const dx = parts[k].centre_x() - cx - mcx, dy = parts[k].centre_y() - cy - mcy;
      sgc += (parts[k].gx - mgx) * dx + (parts[k].gy - mgy) * dy;
      scc += dx * dx + dy * dy;
    }
  double mu = scc > 0 ? sgc / scc : 0;
  mu = mu == mu ? mu : 0;
  node.kappa_x = node.kappa_y = clamped_curvature(mu);
  mu = node.kappa_x - 1;
  node.gx = mgx - mu * mcx;
  node.gy = mgy - mu * mcy;
  if (!(sdot::compat::fabs(node.gx) + sdot::compat::fabs(node.gy) <
        sdot::compat::infinity<double>()))
    node.gx = node.gy = 0;
  double smin = sdot::compat::infinity<double>();
  for (int k = 0; k < count; ++k)
    smin = sdot::compat::min(smin, smin_from_part(node, parts[k]));
  node.smin = smin;
}

/// Solves the k × k system a·x = b for the n right-hand sides of b (its columns) by Gaussian
/// elimination with partial pivoting, in place (x in b). Returns false when a pivot vanishes
/// or is not finite.
template <int k, int n>
KOKKOS_INLINE_FUNCTION bool solve_small_system(double (&a)[k][k], double (&b)[k][n]) {
  for (int c = 0; c < k; ++c) {
    int pivot = c;
    for (int r = c + 1; r < k; ++r)
      if (sdot::compat::fabs(a[r][c]) > sdot::compat::fabs(a[pivot][c]))
        pivot = r;
    if (!(sdot::compat::fabs(a[pivot][c]) > 0 &&
          sdot::compat::fabs(a[pivot][c]) < sdot::compat::infinity<double>()))
      return false;
    for (int m = 0; m < k; ++m) {
      double const t = a[c][m];
      a[c][m] = a[pivot][m];
      a[pivot][m] = t;
    }
    for (int m = 0; m < n; ++m) {
      double const t = b[c][m];
      b[c][m] = b[pivot][m];
      b[pivot][m] = t;
    }
    for (int r = c + 1; r < k; ++r) {
      double const f = a[r][c] / a[c][c];
      for (int m = c; m < k; ++m)
        a[r][m] -= f * a[c][m];
      for (int m = 0; m < n; ++m)
        b[r][m] -= f * b[c][m];
    }
  }
  for (int c = k - 1; c >= 0; --c)
    for (int m = 0; m < n; ++m) {
      for (int j = c + 1; j < k; ++j)
        b[c][m] -= a[c][j] * b[j][m];
      b[c][m] /= a[c][c];
    }
  return true;
}

/// Σ w xⁱ yʲ over a node's seeds for the (i, j) of powers(k), in the node's frame (TrendSums):
/// the right-hand side of the normal equations of its trend, the part that depends on the
/// weights. Additive: a node's follow from its parts' in their own frames (add_shifted_sums).
struct WeightedSums {
  static constexpr int terms = 5; ///< (0,0) (1,0) (0,1) (2,0) (0,2): the basis (1, x, y, x², y²)
  double wm[terms] = {};

  /// The powers (i, j) of term k.
  KOKKOS_INLINE_FUNCTION static void powers(int k, int& i, int& j) {
    constexpr int pi[terms] = {0, 1, 0, 2, 0}, pj[terms] = {0, 0, 1, 0, 2};
    i = pi[k];
    j = pj[k];
  }

  /// Adds one seed at (x, y) (the node's frame) of weight w.
  KOKKOS_INLINE_FUNCTION void add(double x, double y, double w) {
    wm[0] += w;
    wm[1] += w * x;
    wm[2] += w * y;
    wm[3] += w * (x * x);
    wm[4] += w * (y * y);
  }
};

/// Sums over a node's seeds for the least-squares fit of its trend, in the node's frame
/// (x = (p_x − c_x)·unit, y = (p_y − c_y)·unit, unit = 1 / the node's larger half-size):
/// m[k] = Σ xⁱ yʲ for the (i, j) of powers(k), the entries of the normal equations of the basis
/// (1, x, y, x², y²), which depend on the positions only (trend_solver()), and wm (WeightedSums)
/// for the right-hand side.
struct TrendSums {
  static constexpr int moments = 13; ///< (0,0) (1,0) (0,1) (2,0) (1,1) (0,2) (3,0) (2,1) (1,2)
                                     ///< (0,3) (4,0) (2,2) (0,4)
  double m[moments] = {};
  WeightedSums wm;

  /// The moment of powers (i, j), i + j ≤ 4 and (i, j) one of the list above.
  KOKKOS_INLINE_FUNCTION static int moment(int i, int j) {
    constexpr int first_of_degree[5] = {0, 1, 3, 6, 10};
    int const d = i + j;
    if (d == 4)
      return i == 4 ? 10 : i == 2 ? 11 : 12;
    return first_of_degree[d] + j;
  }

  /// Adds one seed at (x, y) (the node's frame) of weight w.
  KOKKOS_INLINE_FUNCTION void add(double x, double y, double w) {
    double const x2 = x * x, y2 = y * y;
    double const terms[moments] = {1,      x,      y,      x2,      x * y,   y2,     x2 * x,
                                   x2 * y, x * y2, y2 * y, x2 * x2, x2 * y2, y2 * y2};
    for (int k = 0; k < moments; ++k)
      m[k] += terms[k];
    wm.add(x, y, w);
  }
};

/// The unit of a node's frame (see TrendSums): 1 / its larger half-size, 0 for a point.
KOKKOS_INLINE_FUNCTION double trend_unit(TreeNode const& node) {
  double const size = sdot::compat::max(node.half_width(), node.half_height());
  return size > 0 ? 1 / size : 0;
}

/// Adds to `sums` (the frame of `node`) the weighted sums of `part` (its own frame): with
/// x = s x_part + t_x (s the ratio of the units, t the part's centre in the node's frame),
/// Σ w xⁱ yʲ = Σ_{a ≤ i, b ≤ j} C(i, a) C(j, b) s^(a+b) t_x^(i−a) t_y^(j−b) Σ w x_partᵃ y_partᵇ.
KOKKOS_INLINE_FUNCTION void add_shifted_sums(WeightedSums& sums, TreeNode const& node,
                                             WeightedSums const& part_sums, TreeNode const& part) {
  double const unit = trend_unit(node), part_unit = trend_unit(part);
  double const s = part_unit > 0 ? unit / part_unit : 0; // a point part: x_part = 0
  double const tx = (part.centre_x() - node.centre_x()) * unit;
  double const ty = (part.centre_y() - node.centre_y()) * unit;
  double const* p = part_sums.wm; // (0,0) (1,0) (0,1) (2,0) (0,2)
  sums.wm[0] += p[0];
  sums.wm[1] += s * p[1] + tx * p[0];
  sums.wm[2] += s * p[2] + ty * p[0];
  sums.wm[3] += s * s * p[3] + 2 * s * tx * p[1] + tx * tx * p[0];
  sums.wm[4] += s * s * p[4] + 2 * s * ty * p[2] + ty * ty * p[0];
}

/// The least-squares fit of a node's trend, w ≈ a − 2 g·e − μ_x e_x² − μ_y e_y² over its seeds,
/// as far as it depends on their positions: the rows of the inverse of its normal matrix
/// (ridge-regularised: few seeds give a flat trend) that give g and μ from the weighted sums.
/// Zero where there is no trend to fit (fewer than 3 seeds, a point, a singular system): g = 0,
/// κ = 1. A quad keeps it while its seeds keep their places (SeedTree::quad_solvers).
struct TrendSolver {
  double rows[4][WeightedSums::terms] = {};
};

/// The trend solver of a node (box set) from `sums` (its frame; the moments m only).
KOKKOS_INLINE_FUNCTION TrendSolver trend_solver(TreeNode const& node, TrendSums const& sums) {
  TrendSolver solver;
  double const unit = trend_unit(node);
  double const n = sums.m[0];
  if (!(n >= 3 && unit > 0))
    return solver;
  constexpr int terms = WeightedSums::terms; // the basis (1, x, y, x², y²)
  double normal[terms][terms];
  for (int r = 0; r < terms; ++r) {
    int ir, jr;
    WeightedSums::powers(r, ir, jr);
    for (int c = 0; c < terms; ++c) {
      int ic, jc;
      WeightedSums::powers(c, ic, jc);
      normal[r][c] = sums.m[TrendSums::moment(ir + ic, jr + jc)];
    }
  }
  for (int r = 1; r < terms; ++r)
    normal[r][r] += 1e-9 * n; // the ridge
  double inverse[terms][terms];
  for (int r = 0; r < terms; ++r)
    for (int c = 0; c < terms; ++c)
      inverse[r][c] = r == c ? 1 : 0;
  if (!solve_small_system(normal, inverse))
    return solver;
  for (int r = 1; r < terms; ++r)
    for (int c = 0; c < terms; ++c)
      solver.rows[r - 1][c] = inverse[r][c];
  return solver;
}

/// The trend of a node (box set) from its solver and its weighted sums (its frame): κ_a = 1 + μ_a
/// clamped to [1/16, 10⁴]; g = 0, κ = 1 where the solver is zero or the trend not finite.
KOKKOS_INLINE_FUNCTION void fit_trend(TreeNode& node, TrendSolver const& solver,
                                      WeightedSums const& sums) {
  node.gx = node.gy = 0;
  node.kappa_x = node.kappa_y = 1;
  double b[4];
  for (int r = 0; r < 4; ++r) {
    b[r] = 0;
    for (int c = 0; c < WeightedSums::terms; ++c)
      b[r] += solver.rows[r][c] * sums.wm[c];
  }
  double const unit = trend_unit(node);
  double const gx = -b[0] * unit / 2, gy = -b[1] * unit / 2;
  double const mu_x = -b[2] * unit * unit, mu_y = -b[3] * unit * unit;
  if (!(sdot::compat::fabs(gx) + sdot::compat::fabs(gy) + sdot::compat::fabs(mu_x) +
            sdot::compat::fabs(mu_y) <
        sdot::compat::infinity<double>()))
    return;
  node.gx = gx;
  node.gy = gy;
  node.kappa_x = clamped_curvature(mu_x);
  node.kappa_y = clamped_curvature(mu_y);
}

/// Whether a node's weights, from wmin to its wmax, span too little for a trend: less than
/// (h_x + h_y)²/4. A trend that TreeNode::judge_trend counts (|g| > (h_x + h_y)/4) spans about
/// twice that, and a fit to weights spread at random at that scale (few seeds, say) would
/// only be noise. Such a node keeps the box bound (g = 0, κ = 1, smin = −wmax).
KOKKOS_INLINE_FUNCTION bool flat_weights(TreeNode const& node, double wmin) {
  double const span = node.half_width() + node.half_height();
  return !(node.wmax - wmin > span * span / 4);
}

/// The box bound of a node with flat weights (flat_weights): g = 0, κ = 1, smin = −wmax
/// (−∞ without seeds).
KOKKOS_INLINE_FUNCTION void set_box_bound(TreeNode& node, double wmin) {
  node.gx = node.gy = 0;
  node.kappa_x = node.kappa_y = 1;
  node.smin = wmin <= node.wmax ? -node.wmax : -sdot::compat::infinity<double>(); // none: empty
}

/// smin of a node whose trend is set, exact over its seeds (visited by `for_each_seed(f)`,
/// f(Seed)) and lowered for rounding, so that the bound holds whatever the fit.
template <class ForEachSeed>
KOKKOS_INLINE_FUNCTION void set_smin_from_seeds(TreeNode& node, ForEachSeed const& for_each_seed) {
  double const cx = node.centre_x(), cy = node.centre_y();
  double const mu_x = node.kappa_x - 1, mu_y = node.kappa_y - 1;
  double smin = sdot::compat::infinity<double>();
  for_each_seed([&](auto const& p) {
    double const ex = p.x - cx, ey = p.y - cy, w = p.w;
    double const slope = 2 * (node.gx * ex + node.gy * ey);
    double const curve_x = mu_x * ex * ex, curve_y = mu_y * ey * ey, curve = curve_x + curve_y;
    double const scale = sdot::compat::fabs(w) + sdot::compat::fabs(slope) +
                         sdot::compat::fabs(curve_x) + sdot::compat::fabs(curve_y);
    smin =
        sdot::compat::min(smin, -w - slope - curve - 8 * sdot::compat::epsilon<double>() * scale);
  });
  node.smin = smin; // the node has seeds: a node without any is flat
}

/// The sums (TrendSums or WeightedSums) of a node's seeds (visited by `for_each_seed(f)`,
/// f(Seed)) in its frame.
template <class Sums, class ForEachSeed>
KOKKOS_INLINE_FUNCTION Sums sums_from_seeds(TreeNode const& node,
                                            ForEachSeed const& for_each_seed) {
  double const cx = node.centre_x(), cy = node.centre_y(), unit = trend_unit(node);
  Sums sums;
  for_each_seed([&](auto const& p) { sums.add((p.x - cx) * unit, (p.y - cy) * unit, p.w); });
  return sums;
}

/// The bound of a node (its box set) from its seeds, visited by `for_each_seed(f)` (f(Seed)):
/// the box bound where its weights are flat (flat_weights), otherwise the trend fitted to the
/// seeds (fit_trend) and smin exact over them. One pass over the seeds for a flat node, three
/// otherwise.
template <class ForEachSeed>
KOKKOS_INLINE_FUNCTION void bound_from_seeds(TreeNode& node, ForEachSeed const& for_each_seed) {
  double wmin = sdot::compat::infinity<double>();
  for_each_seed([&](auto const& p) { wmin = sdot::compat::min(wmin, p.w); });
  if (flat_weights(node, wmin)) {
    set_box_bound(node, wmin);
    return;
  }
  TrendSums const sums = sums_from_seeds<TrendSums>(node, for_each_seed);
  fit_trend(node, trend_solver(node, sums), sums.wm);
  set_smin_from_seeds(node, for_each_seed);
}

/// Bounding box, largest weight and number of a set of seeds, gathered one seed or one set at a
/// time.
struct NodeStats {
  double xmin = sdot::compat::infinity<double>(), ymin = sdot::compat::infinity<double>();
  double xmax = -sdot::compat::infinity<double>(), ymax = -sdot::compat::infinity<double>();
  double wmax = -sdot::compat::infinity<double>();
  int count = 0;

  KOKKOS_INLINE_FUNCTION void add(Seed const& p) { add(NodeStats{p.x, p.y, p.x, p.y, p.w, 1}); }
  KOKKOS_INLINE_FUNCTION void add(NodeStats const& o) {
    xmin = sdot::compat::min(xmin, o.xmin);
    ymin = sdot::compat::min(ymin, o.ymin);
    xmax = sdot::compat::max(xmax, o.xmax);
    ymax = sdot::compat::max(ymax, o.ymax);
    wmax = sdot::compat::max(wmax, o.wmax);
    count += o.count;
  }
  KOKKOS_INLINE_FUNCTION double area() const { return (xmax - xmin) * (ymax - ymin); }
  KOKKOS_INLINE_FUNCTION TreeNode node() const { return TreeNode{xmin, ymin, xmax, ymax, wmax}; }
};

/// Grid cells per row span, the unit of the weight bounds inside a block: short enough that a
/// weight trend across a large block does not loosen them.
inline constexpr int row_span_cells = 8;

/// The grid of a block is padded by this many empty cells on each side, so that a seed's near
/// cells (see near_reach) are all on it: no test for the grid's edges in the near walk.
inline constexpr int grid_padding = 2;

/// The uniform grid of a block: cell (i, j), 0 ≤ i < nx, 0 ≤ j < ny, is the square
/// [x0 + i·h, x0 + (i+1)·h] × [y0 + j·h, y0 + (j+1)·h], number cell(i, j) of the tree's
/// cells; the cells of the padding (−grid_padding ≤ i < nx + grid_padding, the same for j)
/// are empty.
struct GridBlock {
  double x0, y0, h, inv_h;
  int nx, ny;
  int first_cell;
  /// Bound on how far a point may lie outside the cell that column() and row() give it
  /// (rounding), to be taken off every distance bound drawn from the grid.
  double slack;
  int first_span = 0;  ///< number of its first row span among the tree's (see row_wmax)
  int node = 1;        ///< the tree node (heap numbering) whose seeds the block holds
  int quad_levels = 1; ///< levels of its quads (see quad_columns), the top one a single quad

  /// Cells of the block, padding included.
  KOKKOS_INLINE_FUNCTION int cell_count() const {
    return (nx + 2 * grid_padding) * (ny + 2 * grid_padding);
  }
  /// Number of the cell (i, j) among the tree's: those of a row are consecutive.
  KOKKOS_INLINE_FUNCTION int cell(int i, int j) const {
    return first_cell + (j + grid_padding) * (nx + 2 * grid_padding) + i + grid_padding;
  }

  /// Row spans per row: a row's largest weight is kept per run of row_span_cells cells.
  KOKKOS_INLINE_FUNCTION int spans_per_row() const {
    return (nx + row_span_cells - 1) / row_span_cells;
  }
  /// Number, among the tree's row spans, of the span of row j holding column i.
  KOKKOS_INLINE_FUNCTION int span(int i, int j) const {
    return first_span + j * spans_per_row() + i / row_span_cells;
  }

  /// Quads of level l (0 the finest) along a row and a column: each covers
  /// 2^(l+1) × 2^(l+1) grid cells.
  KOKKOS_INLINE_FUNCTION int quad_columns(int level) const { return ((nx - 1) >> (level + 1)) + 1; }
  KOKKOS_INLINE_FUNCTION int quad_rows(int level) const { return ((ny - 1) >> (level + 1)) + 1; }

  /// Column of abscissa x, clamped to the grid (clamped before the conversion: x may be far).
  KOKKOS_INLINE_FUNCTION int column(double x) const { return clamp((x - x0) * inv_h, nx); }
  KOKKOS_INLINE_FUNCTION int row(double y) const { return clamp((y - y0) * inv_h, ny); }
  KOKKOS_INLINE_FUNCTION static int clamp(double t, int n) {
    return t < 1 ? 0 : t >= n ? n - 1 : static_cast<int>(t);
  }
};

/// A grid cell (di, dj) away from the seed's, and the least distance between a point of the
/// seed's part of its cell (see ring_parts) and a point of that one: gap·h.
struct RingOffset {
  int di, dj;
  double gap;
};

/// Position along a Hilbert curve of order `bits` ≤ 16 of the cell (ix, iy). Branch-free: the
/// orientation of the sub-square is kept as two flags (coordinates swapped, complemented),
/// toggled level by level.
KOKKOS_INLINE_FUNCTION std::uint32_t hilbert_index(std::uint32_t ix, std::uint32_t iy, int bits) {
  std::uint32_t d = 0;
  std::uint32_t swapped = 0, complemented = 0;
  for (int level = bits - 1; level >= 0; --level) {
    std::uint32_t const bx = ((ix >> level) & 1) ^ complemented;
    std::uint32_t const by = ((iy >> level) & 1) ^ complemented;
    std::uint32_t const exchange = swapped & (bx ^ by);
    std::uint32_t const rx = bx ^ exchange, ry = by ^ exchange;
    d = (d << 2) | ((3 * rx) ^ ry);
    std::uint32_t const lower_half = ry ^ 1;
    swapped ^= lower_half;
    complemented ^= lower_half & rx;
  }
  return d;
}

template <class MemorySpace>
struct SeedTree {
  Kokkos::View<Seed*, MemorySpace> seeds;     ///< in tree order
  Kokkos::View<int*, MemorySpace> index;      ///< input index of each seed in tree order
  Kokkos::View<TreeNode*, MemorySpace> nodes; ///< heap order, root at 1
  int size = 0;
  int depth = 0; ///< leaves are at this level
  /// Level of the finest blocks (about block_size seeds); a block is a node of this level or
  /// of one up to max_block_merge levels above.
  int finest_block_level = 0;
  Kokkos::View<GridBlock*, MemorySpace> blocks; ///< along the curve
  /// The block holding each node of level finest_block_level (by node − 2^finest_block_level).
  Kokkos::View<int*, MemorySpace> finest_block;
  Kokkos::View<int*, MemorySpace> cell_begin; ///< first tree slot of each grid cell, + end
  /// Largest weight in each row span (the row_span_cells columns from k·row_span_cells on of row
  /// j of block g: g.span(i, j) for a column i among them); a row's seeds are consecutive slots.
  Kokkos::View<double*, MemorySpace> row_wmax;
  Kokkos::View<RingOffset*, MemorySpace> ring; ///< the near grid offsets, nearest first
  /// The quads of every block (a pyramid of 2 × 2 merges over its grid, whose nodes are
  /// squares, where the tree's nodes inside a block are runs of grid rows), level by level from
  /// the finest, each level block by block, each block's row by row; their bounds as the tree
  /// nodes'.
  Kokkos::View<TreeNode*, MemorySpace> quads;
  /// First quad of level l of block b at quad_first(l · blocks + b), then one past the last.
  Kokkos::View<int*, MemorySpace> quad_first;
  /// Each quad's trend solver (what its fit takes from the positions, from its own seeds), where
  /// quad_solved is set: computed by the first compute_quad_bounds() that fits the quad a trend.
  Kokkos::View<TrendSolver*, MemorySpace> quad_solvers;
  Kokkos::View<int*, MemorySpace> quad_solved;

  KOKKOS_INLINE_FUNCTION int first_leaf() const { return 1 << depth; }
  /// First sorted seed of node `node` (heap numbering) at level `level`.
  KOKKOS_INLINE_FUNCTION int node_begin(int node, int level) const {
    std::int64_t k = node - (std::int64_t(1) << level);
    return static_cast<int>((k * size) >> level);
  }
  /// The node of level `level` (heap numbering) holding sorted seed `slot`: the last k with
  /// node_begin(2^level + k) ≤ slot, that is k·size < (slot + 1)·2^level.
  KOKKOS_INLINE_FUNCTION int node_of_slot(int slot, int level) const {
    std::int64_t const k = ((std::int64_t(slot + 1) << level) - 1) / size;
    return static_cast<int>((std::int64_t(1) << level) + k);
  }
  /// The number, in `quads`, of the quad (qi, qj) of level `level` of block `b`.
  KOKKOS_INLINE_FUNCTION int quad_number(int b, int level, int qi, int qj) const {
    return quad_first(level * static_cast<int>(blocks.extent(0)) + b) +
           qj * blocks(b).quad_columns(level) + qi;
  }
  /// The quad (qi, qj) of level `level` of block `b`.
  KOKKOS_INLINE_FUNCTION TreeNode const& quad(int b, int level, int qi, int qj) const {
    return quads(quad_number(b, level, qi, qj));
  }
  /// Calls f(begin, end) with the slots of each row of the grid cells of quad (qi, qj) of level
  /// `level` of block `g` (2^(level+1) × 2^(level+1) cells; a row's seeds are consecutive
  /// slots), until f returns true. Returns whether it did.
  template <class F>
  KOKKOS_INLINE_FUNCTION bool for_each_quad_row(GridBlock const& g, int level, int qi, int qj,
                                                F const& f) const {
    int const span = 2 << level;
    int const i_begin = span * qi, j_begin = span * qj;
    int const i_end = sdot::compat::min(i_begin + span, g.nx);
    int const j_end = sdot::compat::min(j_begin + span, g.ny);
    for (int j = j_begin; j < j_end; ++j)
      if (f(cell_begin(g.cell(i_begin, j)), cell_begin(g.cell(i_end, j))))
        return true;
    return false;
  }
  /// The block (number in `blocks`) holding sorted seed `slot` (a tree with grids).
  KOKKOS_INLINE_FUNCTION int block_of_slot(int slot) const {
    return finest_block(node_of_slot(slot, finest_block_level) - (1 << finest_block_level));
  }
};

/// Level of a node in heap numbering (the root, 1, is at level 0).
KOKKOS_INLINE_FUNCTION int node_level(int node) {
  int level = 0;
  while (node >> (level + 1))
    ++level;
  return level;
}

/// The first descendant of `node` at level `level` (at or below the node's), numbered from 0
/// along that level (node − 2^level for a node of that level).
KOKKOS_INLINE_FUNCTION int first_descendant(int node, int level) {
  int const node_at = node_level(node);
  return (node - (1 << node_at)) << (level - node_at);
}

/// Levels below the root such that no leaf holds more than `leaf_size` seeds.
inline int tree_depth(int n, int leaf_size) {
  int depth = 0;
  while ((std::int64_t(n) + (std::int64_t(1) << depth) - 1) >> depth > leaf_size && depth < 28)
    ++depth;
  return depth;
}

/// The near grid cells of a seed, those whose gap to its own cell is below sqrt(near_gap2) h
/// (the 25 cells within two rows and columns), are walked one by one, nearest first; the rest
/// of a block is scanned row by row (cell_kernel.hpp). Measured (docs/performance.md): larger
/// sets help zero weights and hurt spread (optimal-transport) ones.
inline constexpr int near_gap2 = 3;

/// Gap, in units of h², between two grid cells (di, dj) apart: the least squared distance
/// between their points.
KOKKOS_INLINE_FUNCTION int grid_gap2(int di, int dj) {
  int const gi = di < 0 ? -di - 1 : di > 0 ? di - 1 : 0;
  int const gj = dj < 0 ? -dj - 1 : dj > 0 ? dj - 1 : 0;
  return gi * gi + gj * gj;
}

/// Half-width, in columns, of the near cells in the row dj rows away from the seed's (they
/// are the columns −a … a around the seed's), or −1 when that row has none.
KOKKOS_INLINE_FUNCTION constexpr int near_half_width(int dj) {
  int const gj = dj < 0 ? -dj - 1 : dj > 0 ? dj - 1 : 0;
  int const room = near_gap2 - gj * gj;
  if (room <= 0)
    return -1;
  int gi = 0;
  while ((gi + 1) * (gi + 1) < room)
    ++gi;
  return gi + 1;
}

/// Each grid cell is cut into ring_parts × ring_parts parts, each with its own order of the
/// near cells, by their least distance to the part: the walk from a seed is then closer to
/// nearest first, and stops sooner (see docs/performance.md).
inline constexpr int ring_parts = 8;

/// The near grid cells are at most this many rows or columns away from the seed's.
KOKKOS_INLINE_FUNCTION constexpr int near_reach() {
  return near_half_width(0);
}
static_assert(grid_padding >= near_reach(), "the padding must hold every near cell");

/// Number of near grid cells (gap² < near_gap2).
inline int near_cell_count() {
  int const reach = near_reach();
  int count = 0;
  for (int dj = -reach; dj <= reach; ++dj)
    for (int di = -reach; di <= reach; ++di)
      count += grid_gap2(di, dj) < near_gap2;
  return count;
}

/// Part of the seed's grid cell holding a point at (fx, fy) in units of h from the cell's
/// corner (clamped: rounding, or a point off the grid).
KOKKOS_INLINE_FUNCTION int ring_part(double fx, double fy) {
  return GridBlock::clamp(fy * ring_parts, ring_parts) * ring_parts +
         GridBlock::clamp(fx * ring_parts, ring_parts);
}

/// Entries of ring_offsets() per part of a cell: the near cells, then one more whose gap is
/// the least gap to a cell beyond them (a near cell may be farther from the part than that).
inline int ring_entries_per_part() {
  return near_cell_count() + 1;
}

/// The near grid offsets (gap² < near_gap2) of each part of a cell, by increasing gap to the
/// part (ties by distance between centres, then row, then column: a fixed order), each part's
/// followed by the least gap to a cell beyond them (see ring_entries_per_part).
/// The table is the same for every tree: computed once, on the host.
inline std::vector<RingOffset> const& ring_table() {
  static std::vector<RingOffset> const table = [] {
    int const reach = near_reach();
    int const per_part = ring_entries_per_part();
    int const nb_parts = ring_parts * ring_parts;
    std::vector<RingOffset> host(nb_parts * per_part);
    for (int part = 0; part < nb_parts; ++part) {
      // The part: [px0, px1] × [py0, py1] in units of h from the cell's corner.
      double const px0 = double(part % ring_parts) / ring_parts, px1 = px0 + 1.0 / ring_parts;
      double const py0 = double(part / ring_parts) / ring_parts, py1 = py0 + 1.0 / ring_parts;
      auto const gap_to = [&](int di, int dj) {
        double const gx = std::max({0.0, di - px1, px0 - (di + 1)});
        double const gy = std::max({0.0, dj - py1, py0 - (dj + 1)});
        return std::sqrt(gx * gx + gy * gy);
      };
      RingOffset* const first = &host[part * per_part];
      int k = 0;
      double beyond = std::numeric_limits<double>::infinity();
      for (int dj = -reach - 1; dj <= reach + 1; ++dj)
        for (int di = -reach - 1; di <= reach + 1; ++di) {
          if (grid_gap2(di, dj) < near_gap2)
            first[k++] = RingOffset{di, dj, gap_to(di, dj)};
          else
            beyond = std::min(beyond, gap_to(di, dj));
        }
      double const cx = (px0 + px1) / 2 - 0.5, cy = (py0 + py1) / 2 - 0.5;
      auto const before = [&](RingOffset const& a, RingOffset const& b) {
        double const ca = (a.di - cx) * (a.di - cx) + (a.dj - cy) * (a.dj - cy);
        double const cb = (b.di - cx) * (b.di - cx) + (b.dj - cy) * (b.dj - cy);
        if (a.gap != b.gap)
          return a.gap < b.gap;
        if (ca != cb)
          return ca < cb;
        return a.dj != b.dj ? a.dj < b.dj : a.di < b.di;
      };
      std::stable_sort(first, first + k, before); // a few entries, once
      first[k] = RingOffset{0, 0, beyond};
    }
    return host;
  }();
  return table;
}

/// ring_table() in the memory space.
template <class ExecutionSpace, class MemorySpace>
Kokkos::View<RingOffset*, MemorySpace> ring_offsets(ExecutionSpace const& space) {
  auto const& table = ring_table();
  Kokkos::View<RingOffset const*, Kokkos::HostSpace, Kokkos::MemoryTraits<Kokkos::Unmanaged>> host(
      table.data(), table.size());
  Kokkos::View<RingOffset*, MemorySpace> ring(
      Kokkos::view_alloc(space, Kokkos::WithoutInitializing, "sdot::tree::ring"), host.extent(0));
  Kokkos::deep_copy(space, ring, host);
  space.fence();
  return ring;
}

/// A block holds block_size seeds (the finest block level) or, where the seeds are spread
/// evenly, up to 2^max_block_merge times more (about a million with the default 256): larger
/// blocks leave fewer cells at a block's border, whose neighbours across it are found through
/// the tree (model cycles per cell at 1e6 uniform seeds: −18 % with 16× larger blocks, −13 %
/// more with up to 1024×), but a block's grid has one cell size, so it suits only seeds of even
/// density. The choice is made per subtree (clustered 1e6: −15 %), and small finest blocks
/// suit uneven seeds (clustered 1e4: 1024 → 256 seeds, −21 %). The cap keeps a grid's rows (a
/// cell's near walk reads five of them) within about a thousand cells. The weights do not
/// enter the choice: their bounds inside a block are kept per row span (row_span_cells),
/// whatever the block's size.
inline constexpr int max_block_merge = 12;
/// A larger block is taken only if none of its finest blocks is denser than this times its own
/// mean density (bounding-box areas; Hilbert blocks of uniform seeds stay within about 2).
inline constexpr double block_density_ratio = 3;

/// Bounding box, largest weight and number of seeds of each node of level `level` of `tree`
/// (its size set), from the seeds in an order with the tree's partition (along the curve).
template <class ExecutionSpace, class MemorySpace>
Kokkos::View<NodeStats*, MemorySpace>
level_stats(ExecutionSpace const& space, SeedTree<MemorySpace> const& tree,
            Kokkos::View<Seed const*, MemorySpace> seeds, int level) {
  auto const t = tree;
  Kokkos::View<NodeStats*, MemorySpace> stats(
      Kokkos::view_alloc(space, Kokkos::WithoutInitializing, "sdot::tree::level_stats"),
      1 << level);
  Kokkos::parallel_for(
      "sdot::tree::level_stats", Kokkos::RangePolicy<ExecutionSpace>(space, 0, 1 << level),
      KOKKOS_LAMBDA(int k) {
        NodeStats st;
        for (int s = t.node_begin((1 << level) + k, level);
             s < t.node_begin((1 << level) + k + 1, level); ++s)
          st.add(seeds(s));
        stats(k) = st;
      });
  return stats;
}

/// The block of each finest block (level `finest`, statistics `parts`): its coarsest ancestor
/// from level `coarsest` on that is even (no finest block in it denser than
/// block_density_ratio times its mean), else itself, as a node in heap numbering. Such
/// ancestors never overlap but by containing one another, so they cut the tree into blocks.
/// From the positions only, so new weights keep the blocks.
template <class ExecutionSpace, class MemorySpace>
Kokkos::View<int*, MemorySpace> choose_blocks(ExecutionSpace const& space,
                                              Kokkos::View<NodeStats const*, MemorySpace> parts,
                                              int coarsest, int finest) {
  using Policy = Kokkos::RangePolicy<ExecutionSpace>;
  int const nb_parts = 1 << finest;
  Kokkos::View<int*, MemorySpace> block_node(
      Kokkos::view_alloc(space, Kokkos::WithoutInitializing, "sdot::tree::block_node"), nb_parts);
  Kokkos::parallel_for(
      "sdot::tree::finest_blocks", Policy(space, 0, nb_parts),
      KOKKOS_LAMBDA(int q) { block_node(q) = nb_parts + q; });
  // From the finest levels up: an even node takes its finest blocks from any even descendant.
  for (int level = finest - 1; level >= coarsest; --level) {
    int const per_node = 1 << (finest - level);
    Kokkos::parallel_for(
        "sdot::tree::even_nodes", Policy(space, 0, 1 << level), KOKKOS_LAMBDA(int k) {
          NodeStats node;
          for (int q = k * per_node; q < (k + 1) * per_node; ++q)
            node.add(parts(q));
          double const area = node.area();
          bool dense_part = node.count > 1 && !(area > 0);
          for (int q = k * per_node; q < (k + 1) * per_node; ++q) {
            NodeStats const st = parts(q);
            dense_part |=
                st.count > 1 && !(st.count * area <= block_density_ratio * node.count * st.area());
          }
          if (!dense_part)
            for (int q = k * per_node; q < (k + 1) * per_node; ++q)
              block_node(q) = (1 << level) + k;
        });
  }
  return block_node;
}

/// The last k in [0, count) with first(k) ≤ value, for a nondecreasing first (count ≥ 1).
template <class First>
KOKKOS_INLINE_FUNCTION int last_at_most(int count, int value, First const& first) {
  int lo = 0, hi = count - 1;
  while (lo < hi) {
    int const middle = (lo + hi + 1) / 2;
    if (first(middle) <= value)
      lo = middle;
    else
      hi = middle - 1;
  }
  return lo;
}

/// The quads' layout of `tree` (its blocks set): each block's number of levels, and the first
/// quad of each level of each block (SeedTree::quad_first). Allocates the quads, once per index
/// (nothing for a tree without blocks, or already laid out).
template <class ExecutionSpace, class MemorySpace>
void lay_out_quads(ExecutionSpace const& space, SeedTree<MemorySpace>& tree) {
  using Policy = Kokkos::RangePolicy<ExecutionSpace>;
  int const nb_blocks = static_cast<int>(tree.blocks.extent(0));
  if (nb_blocks == 0 || tree.quad_first.extent(0) > 0)
    return;
  auto const blocks = tree.blocks;
  int levels = 0;
  Kokkos::parallel_reduce(
      "sdot::tree::quad_levels", Policy(space, 0, nb_blocks),
      KOKKOS_LAMBDA(int b, int& most) {
        GridBlock g = blocks(b);
        int l = 1;
        while (g.quad_columns(l - 1) > 1 || g.quad_rows(l - 1) > 1)
          ++l;
        blocks(b).quad_levels = l;
        most = sdot::compat::max(most, l);
      },
      Kokkos::Max<int>(levels));
  tree.quad_first = Kokkos::View<int*, MemorySpace>(
      Kokkos::view_alloc(space, Kokkos::WithoutInitializing, "sdot::tree::quad_first"),
      levels * nb_blocks + 1);
  auto const quad_first = tree.quad_first;
  int nb_quads = 0;
  Kokkos::parallel_scan(
      "sdot::tree::quad_first", Policy(space, 0, levels * nb_blocks),
      KOKKOS_LAMBDA(int k, int& before, bool final) {
        GridBlock const g = blocks(k % nb_blocks);
        int const l = k / nb_blocks;
        if (final)
          quad_first(k) = before;
        before += l < g.quad_levels ? g.quad_columns(l) * g.quad_rows(l) : 0;
      },
      nb_quads);
  Kokkos::deep_copy(space, Kokkos::subview(quad_first, levels * nb_blocks), nb_quads);
  tree.quads = Kokkos::View<TreeNode*, MemorySpace>(
      Kokkos::view_alloc(space, Kokkos::WithoutInitializing, "sdot::tree::quads"), nb_quads);
  tree.quad_solvers = Kokkos::View<TrendSolver*, MemorySpace>(
      Kokkos::view_alloc(space, Kokkos::WithoutInitializing, "sdot::tree::quad_solvers"), nb_quads);
  tree.quad_solved = Kokkos::View<int*, MemorySpace>(
      Kokkos::view_alloc(space, "sdot::tree::quad_solved"), nb_quads);
}

/// What a quad of the level below passes to its parent in compute_quad_bounds: its least
/// weight, and the weighted sums of its seeds when they are known.
struct QuadSums {
  WeightedSums sums;
  double wmin;
  int known; ///< the sums were computed (from the seeds or from the quads below)
};

/// The levels of the quads that compute_quad_bounds() computes.
enum class QuadLevels { all, finest_only, above_finest };

/// The bounds of the quads of `tree` (laid out), level by level from the finest (2 × 2 grid
/// cells): each quad's box and least weight from the quads below, its trend fitted to all its
/// seeds (exact at every level: bounds drawn from the quads below lose at every level, and the
/// trend of a cluster's weights is curved) and smin exact over them. The fit's weighted sums
/// come from the quads below when each of them has its own (shifted to the quad's frame,
/// WeightedSums), and the part of the fit that depends on the positions from the index
/// (SeedTree::quad_solvers, computed from the quad's seeds the first time it has a trend: a
/// function of its seeds' places alone, so that an index given new weights has the bounds of a
/// new index, bit for bit), so that a quad with a trend reads its seeds once (smin), and a flat
/// one not at all. `finest`: the finest level's sums, which `levels_wanted` writes
/// (finest_only: allocated here) or reads (above_finest: that level's bounds already in the
/// tree, for the same weights).
template <class ExecutionSpace, class MemorySpace>
void compute_quad_bounds(ExecutionSpace const& space, SeedTree<MemorySpace> const& tree,
                         QuadLevels levels_wanted = QuadLevels::all,
                         Kokkos::View<QuadSums*, MemorySpace>* finest = nullptr) {
  using Policy = Kokkos::RangePolicy<ExecutionSpace>;
  int const nb_blocks = static_cast<int>(tree.blocks.extent(0));
  if (nb_blocks == 0)
    return;
  int const levels = static_cast<int>(tree.quad_first.extent(0) - 1) / nb_blocks;
  auto const quad_first_host =
      Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), tree.quad_first);
  auto const t = tree;
  // The finest level has the most quads.
  int const most = quad_first_host(nb_blocks) - quad_first_host(0);
  auto const sums_view = [&] {
    return Kokkos::View<QuadSums*, MemorySpace>(
        Kokkos::view_alloc(space, Kokkos::WithoutInitializing, "sdot::tree::quad_sums"), most);
  };
  bool const finest_only = levels_wanted == QuadLevels::finest_only;
  bool const above_finest = levels_wanted == QuadLevels::above_finest;
  if (finest_only)
    *finest = sums_view();
  // The level below's sums, and this level's (each at least the finest level's size).
  auto below = above_finest ? *finest : sums_view();
  auto here = finest_only ? *finest : sums_view();
  for (int l = above_finest ? 1 : 0; l < (finest_only ? 1 : levels); ++l) {
    int const begin = quad_first_host(l * nb_blocks);
    int const end = quad_first_host((l + 1) * nb_blocks);
    int const begin_below = l > 0 ? quad_first_host((l - 1) * nb_blocks) : 0;
    Kokkos::parallel_for(
        "sdot::tree::quads", Policy(space, begin, end), KOKKOS_LAMBDA(int q) {
          int const b =
              last_at_most(nb_blocks, q, [&](int k) { return t.quad_first(l * nb_blocks + k); });
          GridBlock const g = t.blocks(b);
          int const in_level = q - t.quad_first(l * nb_blocks + b);
          int const qi = in_level % g.quad_columns(l), qj = in_level / g.quad_columns(l);
          auto const for_each_seed = [&](auto const& f) {
            t.for_each_quad_row(g, l, qi, qj, [&](int begin, int end) {
              for (int s = begin; s < end; ++s)
                f(t.seeds(s));
              return false;
            });
          };
          TreeNode box;
          QuadSums out;
          out.wmin = sdot::compat::infinity<double>();
          out.known = 0;
          int parts[4], nb_parts = 0; // the non-empty quads below (numbers in t.quads)
          if (l == 0) {
            NodeStats stats;
            for_each_seed([&](Seed const& p) {
              stats.add(p);
              out.wmin = sdot::compat::min(out.wmin, p.w);
            });
            box = stats.node();
          } else {
            NodeStats stats;
            for (int dj = 0; dj < 2; ++dj)
              for (int di = 0; di < 2; ++di)
                if (2 * qi + di < g.quad_columns(l - 1) && 2 * qj + dj < g.quad_rows(l - 1)) {
                  int const c = t.quad_number(b, l - 1, 2 * qi + di, 2 * qj + dj);
                  TreeNode const& part = t.quads(c);
                  if (part.empty())
                    continue;
                  stats.add(NodeStats{part.xmin, part.ymin, part.xmax, part.ymax, part.wmax, 1});
                  parts[nb_parts++] = c;
                  out.wmin = sdot::compat::min(out.wmin, below(c - begin_below).wmin);
                }
            box = stats.node();
            out.known = 1;
            for (int k = 0; k < nb_parts; ++k)
              if (below(parts[k] - begin_below).known) {
                add_shifted_sums(out.sums, box, below(parts[k] - begin_below).sums,
                                 t.quads(parts[k]));
              } else {
                out.known = 0;
                break;
              }
          }
          if (flat_weights(box, out.wmin)) {
            set_box_bound(box, out.wmin);
          } else {
            if (!t.quad_solved(q)) { // the seeds' places: once per index
              TrendSums const sums = sums_from_seeds<TrendSums>(box, for_each_seed);
              t.quad_solvers(q) = trend_solver(box, sums);
              t.quad_solved(q) = 1;
              if (!out.known) {
                out.sums = sums.wm;
                out.known = 1;
              }
            }
            if (!out.known) {
              out.sums = sums_from_seeds<WeightedSums>(box, for_each_seed);
              out.known = 1;
            }
            fit_trend(box, t.quad_solvers(q), out.sums);
            set_smin_from_seeds(box, for_each_seed);
          }
          box.judge_trend();
          t.quads(q) = box;
          here(q - begin) = out;
        });
    std::swap(below, here);
  }
}

/// The bounds of the finest level of the blocks' quads alone (compute_quad_bounds()): what
/// cells_predicted_far() reads, where the rest of the bounds would be read only by the search.
/// Returns that level's sums, from which compute_weight_bounds() computes the rest for the same
/// weights (the same bits as all at once).
template <class ExecutionSpace, class MemorySpace>
Kokkos::View<QuadSums*, MemorySpace> compute_finest_quad_bounds(ExecutionSpace const& space,
                                                                SeedTree<MemorySpace>& tree) {
  Kokkos::View<QuadSums*, MemorySpace> finest;
  lay_out_quads(space, tree);
  compute_quad_bounds(space, tree, QuadLevels::finest_only, &finest);
  return finest;
}

/// The parts of `tree` that depend on the weights: the largest weight of each row span and the
/// nodes (boxes and largest weights), from the seeds in tree order. Allocates them the first
/// time. `finest_quads`: the sums of compute_finest_quad_bounds() for the current weights, whose
/// level it does not compute again (empty: every level).
template <class ExecutionSpace, class MemorySpace>
void compute_weight_bounds(ExecutionSpace const& space, SeedTree<MemorySpace>& tree,
                           Kokkos::View<QuadSums*, MemorySpace> finest_quads = {}) {
  using Policy = Kokkos::RangePolicy<ExecutionSpace>;
  int const nb_blocks = static_cast<int>(tree.blocks.extent(0));
  auto const blocks = tree.blocks;
  auto const cell_begin = tree.cell_begin;
  auto const seeds = tree.seeds;
  int nb_spans = 0;
  Kokkos::parallel_reduce(
      "sdot::tree::count_spans", Policy(space, 0, nb_blocks),
      KOKKOS_LAMBDA(int b, int& spans) { spans += blocks(b).ny * blocks(b).spans_per_row(); },
      nb_spans);
  if (tree.row_wmax.extent(0) != std::size_t(nb_spans))
    tree.row_wmax = Kokkos::View<double*, MemorySpace>(
        Kokkos::view_alloc(space, Kokkos::WithoutInitializing, "sdot::tree::row_wmax"), nb_spans);
  auto const row_wmax = tree.row_wmax;
  Kokkos::parallel_for(
      "sdot::tree::row_weights", Policy(space, 0, nb_spans), KOKKOS_LAMBDA(int span) {
        // The span's block: the last whose first span is at most this one.
        GridBlock const g =
            blocks(last_at_most(nb_blocks, span, [&](int b) { return blocks(b).first_span; }));
        int const in_block = span - g.first_span;
        int const j = in_block / g.spans_per_row();
        int const i = in_block % g.spans_per_row() * row_span_cells;
        int const row = g.cell(0, j);
        int const end = sdot::compat::min(i + row_span_cells, g.nx);
        double w = -sdot::compat::infinity<double>();
        for (int t = cell_begin(row + i); t < cell_begin(row + end); ++t)
          w = sdot::compat::max(w, seeds(t).w);
        row_wmax(span) = w;
      });

  // The blocks' quads first: a block's node takes the bound of its top quad (squares below
  // it, where the tree's nodes inside a block are runs of grid rows).
  lay_out_quads(space, tree);
  if (finest_quads.extent(0) > 0)
    compute_quad_bounds(space, tree, QuadLevels::above_finest, &finest_quads);
  else
    compute_quad_bounds(space, tree);

  // Leaves from their seeds, then each level from the one below.
  int const depth = tree.depth;
  if (tree.nodes.extent(0) != std::size_t(2) << depth)
    tree.nodes = Kokkos::View<TreeNode*, MemorySpace>(
        Kokkos::view_alloc(space, Kokkos::WithoutInitializing, "sdot::tree::nodes"), std::size_t(2)
                                                                                         << depth);
  auto nodes = tree.nodes;
  auto const t = tree;
  int const finest = tree.finest_block_level;
  // The block whose node `node` of level `level` is, or -1.
  auto const block_at = KOKKOS_LAMBDA(int node, int level) {
    if (nb_blocks == 0 || level > finest)
      return -1;
    int const b = t.finest_block(first_descendant(node, finest));
    return t.blocks(b).node == node ? b : -1;
  };
  auto const take_block_bound = KOKKOS_LAMBDA(TreeNode & box, int b) {
    box.block = b;
    if (b >= 0) {
      TreeNode const& top = t.quad(b, t.blocks(b).quad_levels - 1, 0, 0);
      box.gx = top.gx;
      box.gy = top.gy;
      box.kappa_x = top.kappa_x;
      box.kappa_y = top.kappa_y;
      box.smin = top.smin;
    }
    box.judge_trend();
  };
  Kokkos::parallel_for(
      "sdot::tree::leaves", Policy(space, 1 << depth, 2 << depth), KOKKOS_LAMBDA(int node) {
        int begin = t.node_begin(node, depth), end = t.node_begin(node + 1, depth);
        NodeStats leaf;
        for (int s = begin; s < end; ++s)
          leaf.add(seeds(s));
        TreeNode box = leaf.node(); // no bound along the trend below the blocks: their quads
        int const b = block_at(node, depth);
        if (b < 0 && nb_blocks == 0)
          bound_from_seeds(box, [&](auto const& f) {
            for (int s = begin; s < end; ++s)
              f(seeds(s));
          });
        take_block_bound(box, b);
        nodes(node) = box;
      });
  for (int level = depth - 1; level >= 0; --level) {
    Kokkos::parallel_for(
        "sdot::tree::inner_nodes", Policy(space, 1 << level, 2 << level), KOKKOS_LAMBDA(int node) {
          TreeNode const a = nodes(2 * node), b = nodes(2 * node + 1);
          TreeNode box{sdot::compat::min(a.xmin, b.xmin), sdot::compat::min(a.ymin, b.ymin),
                       sdot::compat::max(a.xmax, b.xmax), sdot::compat::max(a.ymax, b.ymax),
                       sdot::compat::max(a.wmax, b.wmax)};
          if (level <= finest || nb_blocks == 0) {
            TreeNode const parts[2] = {a, b};
            bound_from_parts(box, parts, 2);
          }
          take_block_bound(box, block_at(node, level));
          nodes(node) = box;
        });
  }
}

/// New weights for the seeds of `tree` (by input index, as built), without their bounds: the
/// tree's nodes, quads and row spans still bound the earlier weights until
/// compute_weight_bounds() runs (what only the search reads).
template <class ExecutionSpace, class MemorySpace>
void set_seed_weights(ExecutionSpace const& space, SeedTree<MemorySpace> const& tree,
                      Kokkos::View<double const*, MemorySpace> weights) {
  auto const seeds = tree.seeds;
  auto const index = tree.index;
  Kokkos::parallel_for(
      "sdot::tree::new_weights", Kokkos::RangePolicy<ExecutionSpace>(space, 0, tree.size),
      KOKKOS_LAMBDA(int s) { seeds(s).w = weights(index(s)); });
}

/// New weights for the seeds of `tree` (by input index, as built): the order, the blocks, the
/// grids and the boxes depend on the positions only, so the tree is the one build_seed_tree()
/// would give.
template <class ExecutionSpace, class MemorySpace>
void reweight_seed_tree(ExecutionSpace const& space, SeedTree<MemorySpace>& tree,
                        Kokkos::View<double const*, MemorySpace> weights) {
  sdot::compat::ScopedRegion region("sdot::reweight_seed_tree");
  set_seed_weights(space, tree, weights);
  compute_weight_bounds(space, tree);
}

/// The seeds' order along a Hilbert curve on a 2^bits × 2^bits grid over their bounding box,
/// about 4 grid cells per seed (bits ≤ 16): two sort passes up to a million seeds, not three.
/// Seeds in the same grid cell keep their input order.
template <class ExecutionSpace, class MemorySpace>
Kokkos::View<int*, MemorySpace> hilbert_order(ExecutionSpace const& space,
                                              ConstPoints<MemorySpace> positions) {
  int const n = static_cast<int>(positions.extent(0));
  int bits = 1;
  while (bits < 16 && (std::int64_t(1) << (2 * bits)) < 4 * std::int64_t(n))
    ++bits;
  PointBounds const bounds = point_bounds(space, "sdot::tree::bounds", positions);
  double const x0 = bounds.xmin, y0 = bounds.ymin;
  double const extent = sdot::compat::max(bounds.xmax - bounds.xmin, bounds.ymax - bounds.ymin);
  double const scale = extent > 0 ? ((1 << bits) - 1) / extent : 0;
  Kokkos::View<std::uint32_t*, MemorySpace> keys(
      Kokkos::view_alloc(space, Kokkos::WithoutInitializing, "sdot::tree::hilbert_keys"), n);
  Kokkos::parallel_for(
      "sdot::tree::hilbert_keys", Kokkos::RangePolicy<ExecutionSpace>(space, 0, n),
      KOKKOS_LAMBDA(int i) {
        auto ix = static_cast<std::uint32_t>((positions(i, 0) - x0) * scale);
        auto iy = static_cast<std::uint32_t>((positions(i, 1) - y0) * scale);
        keys(i) = hilbert_index(ix, iy, bits);
      });
  return stable_sort_permutation(space, Kokkos::View<std::uint32_t const*, MemorySpace>(keys),
                                 2 * bits);
}

/// The blocks of `tree` (its finest_block_level set): the largest nodes whose seeds are spread
/// evenly, numbered along the curve (a finest block starts one when it is the first of its
/// block's node), each with a grid sized from its bounding box and number of seeds. Sets
/// tree.finest_block and tree.blocks; returns the number of grid cells of all the blocks.
template <class ExecutionSpace, class MemorySpace>
int build_grid_blocks(ExecutionSpace const& space, SeedTree<MemorySpace>& tree,
                      Kokkos::View<Seed const*, MemorySpace> along_curve, double grid_occupancy) {
  using Policy = Kokkos::RangePolicy<ExecutionSpace>;
  int const finest = tree.finest_block_level;
  int const nb_parts = 1 << finest;
  Kokkos::View<NodeStats const*, MemorySpace> const finest_stats =
      level_stats(space, tree, along_curve, finest);
  auto const part_node =
      choose_blocks(space, finest_stats, sdot::compat::max(finest - max_block_merge, 0), finest);
  tree.finest_block = Kokkos::View<int*, MemorySpace>(
      Kokkos::view_alloc(space, Kokkos::WithoutInitializing, "sdot::tree::finest_block"), nb_parts);
  auto const finest_block = tree.finest_block;
  int nb_blocks = 0;
  Kokkos::parallel_scan(
      "sdot::tree::number_blocks", Policy(space, 0, nb_parts),
      KOKKOS_LAMBDA(int q, int& blocks_before, bool final) {
        bool const starts = q == first_descendant(part_node(q), finest);
        if (final)
          finest_block(q) = blocks_before + starts - 1;
        blocks_before += starts;
      },
      nb_blocks);
  // The grid of each block, sized from the block's bounding box and number of seeds.
  tree.blocks = Kokkos::View<GridBlock*, MemorySpace>(
      Kokkos::view_alloc(space, Kokkos::WithoutInitializing, "sdot::tree::blocks"), nb_blocks);
  auto const blocks = tree.blocks;
  Kokkos::parallel_for(
      "sdot::tree::block_nodes", Policy(space, 0, nb_parts), KOKKOS_LAMBDA(int q) {
        if (q == first_descendant(part_node(q), finest))
          blocks(finest_block(q)).node = part_node(q);
      });
  int nb_cells = 0;
  Kokkos::parallel_scan(
      "sdot::tree::block_grids", Policy(space, 0, nb_blocks),
      KOKKOS_LAMBDA(int b, int& first_cell, bool final) {
        int const node = blocks(b).node;
        NodeStats box; // its finest blocks'
        int const first = first_descendant(node, finest);
        for (int q = first; q < first + (1 << (finest - node_level(node))); ++q)
          box.add(finest_stats(q));
        double const xmin = box.xmin, ymin = box.ymin, xmax = box.xmax, ymax = box.ymax;
        GridBlock g{0, 0, 1, 1, 1, 1, first_cell, 0};
        double const wx = xmax - xmin, wy = ymax - ymin, ext = sdot::compat::max(wx, wy);
        if (box.count > 0 && ext > 0) {
          double const target = sdot::compat::max(1.0, box.count / grid_occupancy);
          // Square cells; never more than `target` along a side (a thin block).
          double const h = sdot::compat::max(sdot::compat::sqrt(wx * wy / target), ext / target);
          int const nx = static_cast<int>(wx / h) + 1, ny = static_cast<int>(wy / h) + 1;
          double const scale =
              sdot::compat::fmax(xmin, -xmin) + sdot::compat::fmax(ymin, -ymin) + 2 * (nx + ny) * h;
          g = GridBlock{xmin, ymin, h,          1 / h,
                        nx,   ny,   first_cell, 16 * sdot::compat::epsilon<double>() * scale};
        } else if (box.count > 0) {
          g.x0 = xmin;
          g.y0 = ymin;
        }
        g.node = node;
        if (final)
          blocks(b) = g;
        first_cell += g.cell_count();
      },
      nb_cells);
  Kokkos::parallel_scan(
      "sdot::tree::block_spans", Policy(space, 0, nb_blocks),
      KOKKOS_LAMBDA(int b, int& first_span, bool final) {
        if (final)
          blocks(b).first_span = first_span;
        first_span += blocks(b).ny * blocks(b).spans_per_row();
      });
  return nb_cells;
}

/// The seeds in their slots: by grid cell (cells are numbered block by block, row by row), in
/// their order along the curve inside a cell: one stable sort of all seeds, whatever the
/// blocks' sizes. Sets tree.cell_begin, tree.index and tree.seeds; `hilbert` (input index of
/// each seed along the curve) is released once read for the last time (the peak memory of the
/// build is here).
template <class ExecutionSpace, class MemorySpace>
void place_seeds_by_cell(ExecutionSpace const& space, SeedTree<MemorySpace>& tree,
                         Kokkos::View<Seed const*, MemorySpace> along_curve,
                         Kokkos::View<int*, MemorySpace>& hilbert, int nb_cells) {
  using Policy = Kokkos::RangePolicy<ExecutionSpace>;
  int const n = tree.size;
  auto const blocks = tree.blocks;
  Kokkos::View<std::uint32_t*, MemorySpace> cell_keys(
      Kokkos::view_alloc(space, Kokkos::WithoutInitializing, "sdot::tree::cell_keys"), n);
  auto const t0 = tree;
  Kokkos::parallel_for(
      "sdot::tree::cell_keys", Policy(space, 0, n), KOKKOS_LAMBDA(int k) {
        GridBlock const g = blocks(t0.block_of_slot(k));
        Seed const p = along_curve(k);
        cell_keys(k) = static_cast<std::uint32_t>(g.cell(g.column(p.x), g.row(p.y)));
      });

  int cell_bits = 1;
  while ((std::int64_t(1) << cell_bits) < nb_cells)
    ++cell_bits;
  Kokkos::View<std::uint32_t const*, MemorySpace> sorted_cells;
  auto const by_cell = stable_sort_permutation(
      space, Kokkos::View<std::uint32_t const*, MemorySpace>(cell_keys), cell_bits, &sorted_cells);
  cell_keys = {};

  // Each buffer is released once read for the last time (the peak memory is here).
  tree.cell_begin = Kokkos::View<int*, MemorySpace>(
      Kokkos::view_alloc(space, Kokkos::WithoutInitializing, "sdot::tree::cell_begin"),
      nb_cells + 1);
  auto const cell_begin = tree.cell_begin;
  // Slot s begins the cells after the previous slot's, up to its own (the last slot, n, the
  // cells after the last seed's and the end).
  Kokkos::parallel_for(
      "sdot::tree::cell_begin", Policy(space, 0, n + 1), KOKKOS_LAMBDA(int slot) {
        int const first = slot == 0 ? 0 : int(sorted_cells(slot - 1)) + 1;
        int const last = slot == n ? nb_cells : int(sorted_cells(slot));
        for (int c = first; c <= last; ++c)
          cell_begin(c) = slot;
      });
  sorted_cells = {};
  tree.index = Kokkos::View<int*, MemorySpace>(
      Kokkos::view_alloc(space, Kokkos::WithoutInitializing, "sdot::tree::index"), n);
  auto const index = tree.index;
  Kokkos::parallel_for(
      "sdot::tree::place_indices", Policy(space, 0, n),
      KOKKOS_LAMBDA(int slot) { index(slot) = hilbert(by_cell(slot)); });
  hilbert = {};
  tree.seeds = Kokkos::View<Seed*, MemorySpace>(
      Kokkos::view_alloc(space, Kokkos::WithoutInitializing, "sdot::tree::seeds"), n);
  auto const seeds = tree.seeds;
  Kokkos::parallel_for(
      "sdot::tree::place_seeds", Policy(space, 0, n),
      KOKKOS_LAMBDA(int slot) { seeds(slot) = along_curve(by_cell(slot)); });
}

/// Builds the index of the seeds without the parts that depend on the weights, which only the
/// search reads (compute_weight_bounds() adds them). `leaf_size`: most seeds in a tree leaf;
/// `block_size`: most seeds in a finest block (a grid; blocks where the seeds are even are
/// larger); `grid_occupancy`: seeds per grid cell aimed at.
template <class ExecutionSpace, class MemorySpace>
SeedTree<MemorySpace>
build_seed_tree_without_bounds(ExecutionSpace const& space, ConstPoints<MemorySpace> positions,
                               Kokkos::View<double const*, MemorySpace> weights, int leaf_size,
                               int block_size = 256, double grid_occupancy = 1.5) {
  static_assert(Kokkos::SpaceAccessibility<ExecutionSpace, MemorySpace>::accessible,
                "build_seed_tree: the seeds must be accessible from the execution space");
  sdot::compat::ScopedRegion region("sdot::build_seed_tree");
  int const n = static_cast<int>(positions.extent(0));
  SeedTree<MemorySpace> tree;
  tree.size = n;
  tree.depth = tree_depth(n, leaf_size);
  tree.finest_block_level =
      sdot::compat::min(tree.depth, tree_depth(n, sdot::compat::max(block_size, 1)));
  tree.ring = ring_offsets<ExecutionSpace, MemorySpace>(space);
  auto hilbert = hilbert_order(space, positions);
  // The seeds in Hilbert order: the one gather with scattered reads.
  Kokkos::View<Seed*, MemorySpace> along_curve(
      Kokkos::view_alloc(space, Kokkos::WithoutInitializing, "sdot::tree::seeds_along_curve"), n);
  Kokkos::parallel_for(
      "sdot::tree::gather_along_curve", Kokkos::RangePolicy<ExecutionSpace>(space, 0, n),
      KOKKOS_LAMBDA(int k) {
        int const i = hilbert(k);
        along_curve(k) = Seed{positions(i, 0), positions(i, 1), weights(i)};
      });
  int const nb_cells = build_grid_blocks(
      space, tree, Kokkos::View<Seed const*, MemorySpace>(along_curve), grid_occupancy);
  place_seeds_by_cell(space, tree, Kokkos::View<Seed const*, MemorySpace>(along_curve), hilbert,
                      nb_cells);
  return tree;
}

/// Builds the index of the seeds, its weight bounds included (build_seed_tree_without_bounds()).
template <class ExecutionSpace, class MemorySpace>
SeedTree<MemorySpace>
build_seed_tree(ExecutionSpace const& space, ConstPoints<MemorySpace> positions,
                Kokkos::View<double const*, MemorySpace> weights, int leaf_size,
                int block_size = 256, double grid_occupancy = 1.5) {
  auto tree = build_seed_tree_without_bounds(space, positions, weights, leaf_size, block_size,
                                             grid_occupancy);
  compute_weight_bounds(space, tree);
  return tree;
}

} // namespace sdot::detail
