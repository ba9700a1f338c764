#pragma once
// Building one cell: the polygon (the domain, or a cell received from another rank) is
// clipped by the bisectors of the seeds of a tree, visited depth first, nearest child first,
// and only where the stopping rule says a seed may still cut.

#include <sdot/geometry/polygon.hpp>
#include <sdot/geometry/seed_tree.hpp>
#include <sdot/points.hpp>

namespace sdot::detail {

/// Seed i as seen by its own cell.
struct CellSeed {
  double x, y, w;
  int index;     ///< global index (the tie-break between duplicates)
  int tree_slot; ///< position of the seed in the tree being walked, or -1 if it is not there
};

/// Whether a seed at squared distance d2 ≥ 0 with weight ≤ w_other can cut a cell whose
/// vertices lie within sqrt(r2) of the seed i of weight w_i. A seed at distance d cuts only
/// if 2·v·d > d² + w_i − w_other for some vertex v, and 2·v·d ≤ 2·R·d. A seed at the same
/// place with the same weight (t = 0: a duplicate, or the seed itself) passes, for the caller
/// to settle.
KOKKOS_INLINE_FUNCTION bool may_cut(double d2, double w_i, double w_other, double r2) {
  double const t = d2 + (w_i - w_other); // the weight difference first: exact for close weights
  // t² ≥ 4·r2·d2 compared as t·(t / d2) ≥ 4·r2: squared lengths only. Fourth powers of lengths
  // leave double's range below lengths of about 1e-77 (a product flushed to 0 said "cannot
  // cut") and above 1e77. The division costs nothing measurable (1e6 uniform seeds: the same
  // cells time to 1 %).
  return !(t > 0) | !(t * (t / d2) >= 4 * r2); // no branch
}

/// Whether some seed of a node at squared distance ≥ box_d2 with weights ≤ w_max may cut:
/// f(d) = d² − 2Rd + w_i − w_max must be negative for some d ≥ box distance.
KOKKOS_INLINE_FUNCTION bool node_may_cut(double box_d2, double w_i, double w_max, double r2) {
  double c = w_i - w_max;
  if (c >= r2)
    return false; // f has no real root: positive everywhere
  if (box_d2 < r2)
    return true; // the minimum of f, at d = R, is reachable
  return may_cut(box_d2, w_i, w_max, r2);
}

/// Distance below which a seed with weight ≤ w_i − w_gap may cut a cell whose vertices lie
/// within sqrt(r2) of the seed i (slightly enlarged for rounding): R + sqrt(R² − w_gap), or
/// a negative value when no such seed can cut.
KOKKOS_INLINE_FUNCTION double reach_of_weighted_seeds(double r2, double w_gap) {
  if (w_gap >= r2)
    return -1;
  return (sdot::compat::sqrt(r2) + sdot::compat::sqrt(r2 - w_gap)) * (1 + 1e-12);
}

KOKKOS_INLINE_FUNCTION double box_distance2(TreeNode const& b, double x, double y) {
  double dx = sdot::compat::max(sdot::compat::max(b.xmin - x, x - b.xmax), 0.0);
  double dy = sdot::compat::max(sdot::compat::max(b.ymin - y, y - b.ymax), 0.0);
  return dx * dx + dy * dy;
}

/// Whether a seed of `node` may cut the cell, vertex by vertex: a half-plane that cuts a convex
/// polygon holds one of its vertices, so no seed of the node cuts when, at every vertex v, a
/// lower bound of the node's power at v exceeds |v − x_i|² − w_i. The bound: the node's bound
/// along the weights' trend (TreeNode) where its weights trend (TreeNode::trend), tight where
/// the cells lie far from their seeds; dist²(v, box) − w_max otherwise (the same bound with a
/// flat trend, cheaper). Much tighter than the disk of radius R for a cell still open on one
/// side (a cell at the border of a rank's box) and for cells far from their seeds. Along the
/// trend, the cell's bounding box rules the node out first when it can (after the first
/// vertex: a node that may cut usually does there).
KOKKOS_INLINE_FUNCTION bool box_may_cut_vertices(Polygon const& cell, CellSeed const& seed,
                                                 TreeNode const& box) {
  if (!box.trend) {
    double const x0 = box.xmin - seed.x, x1 = box.xmax - seed.x;
    double const y0 = box.ymin - seed.y, y1 = box.ymax - seed.y;
    double const dw = box.wmax - seed.w;
    for (int k = 0; k < cell.size; ++k) {
      double const vx = cell.x(k), vy = cell.y(k);
      double const dx = sdot::compat::max(sdot::compat::max(x0 - vx, vx - x1), 0.0);
      double const dy = sdot::compat::max(sdot::compat::max(y0 - vy, vy - y1), 0.0);
      if (dx * dx + dy * dy - dw <= vx * vx + vy * vy) // ties kept: duplicates decide by index
        return true;
    }
    return false;
  }
  // The trend bound at v (relative to the seed; c the box's centre relative to the seed,
  // a = c + g, t = |v − a| per axis): Σ φ(t)/κ − 2 v·c + |c|² + smin + w_i > 0 rules the node
  // out, with φ(t) = max(t − κh, 0)² − t² per axis (κ dist²((v − a)/κ, [−h, h]) − (v − a)²/κ);
  // within `slack` it does not (rounding).
  double const cx = box.centre_x() - seed.x, cy = box.centre_y() - seed.y;
  double const ax = cx + box.gx, ay = cy + box.gy;
  double const kx = box.kappa_x * box.reach_x(), ky = box.kappa_y * box.reach_y();
  double const inv_kappa_x = 1 / box.kappa_x, inv_kappa_y = 1 / box.kappa_y;
  double const size = sdot::compat::fabs(ax) + sdot::compat::fabs(ay) + sdot::compat::fabs(cx) +
                      sdot::compat::fabs(cy) + kx + ky;
  double const slack =
      1e-12 * ((1 + inv_kappa_x + inv_kappa_y) * (size * size + 4 * cell.max_radius2) +
               sdot::compat::fabs(box.smin) + sdot::compat::fabs(seed.w));
  double const base = cx * cx + cy * cy + box.smin + seed.w - slack;
  // Along each axis the bound is a concave function of that coordinate (φ is concave and
  // decreasing in t ≥ 0), so its least value over the cell's bounding box is at one end of the
  // box on each axis: positive there, it is positive at every vertex.
  // One axis's part of the bound at coordinate v (a, κh, 1/κ and c of that axis).
  auto const along = [](double v, double a, double k, double inv_kappa, double c) {
    double const t = sdot::compat::fabs(v - a);
    return (t <= k ? -t * t : k * (k - 2 * t)) * inv_kappa - 2 * v * c;
  };
  auto const along_x = [&](double vx) { return along(vx, ax, kx, inv_kappa_x, cx); };
  auto const along_y = [&](double vy) { return along(vy, ay, ky, inv_kappa_y, cy); };
  if (cell.size > 0 && !(along_x(cell.x(0)) + along_y(cell.y(0)) + base > 0))
    return true;
  if (sdot::compat::min(along_x(cell.xmin), along_x(cell.xmax)) +
          sdot::compat::min(along_y(cell.ymin), along_y(cell.ymax)) + base >
      0)
    return false;
  for (int k = 1; k < cell.size; ++k)
    if (!(along_x(cell.x(k)) + along_y(cell.y(k)) + base > 0)) // ties kept: duplicates decide
      return true;                                             // by index
  return false;
}

/// The offset of the bisector of a seed of weight w_i with a seed of weight w_other at squared
/// distance d2 (dx·x + dy·y = offset, relative to the seed of w_i, (dx, dy) the other seed's
/// offset): every construction of a bisector (clips, candidates, neighbour cycles) takes it
/// from here, so that they cut along the same line, bit for bit.
KOKKOS_INLINE_FUNCTION double bisector_offset(double d2, double w_i, double w_other) {
  return (d2 + (w_i - w_other)) / 2;
}

/// The cut of `cell` by the seed `other` of index `other_index` at squared distance d2 and
/// offset (d2 + w_i − w_other) / 2 (its bisector: dx·x + dy·y = offset, relative to the seed),
/// once a test let it through: duplicates (the lower index keeps the cell), `revisit` (the seed
/// may have cut the cell already: an edge of it is then left as it is), then the clip. Returns
/// true when the walk must stop (`result` is then `emptied` or `overflow`).
KOKKOS_INLINE_FUNCTION bool clip_tested(Polygon& cell, CellSeed const& seed, int other_index,
                                        double d2, Seed const& other, double dx, double dy,
                                        double offset, ClipResult& result, bool revisit) {
  if (d2 == 0 && other.w == seed.w) {
    // Duplicates: the lower index keeps the cell.
    if (other_index < seed.index) {
      cell.size = 0;
      cell.max_radius2 = 0;
      result = ClipResult::emptied;
      return true;
    }
    return false;
  }
  if (revisit && cell.has_edge(other_index))
    return false; // clipped by it before: again, rounding could add a tiny edge
  ClipResult const r = cell.clip(dx, dy, offset, other_index);
  if (r == ClipResult::emptied || r == ClipResult::overflow) {
    result = r;
    return true;
  }
  if (r == ClipResult::clipped)
    result = r;
  return false;
}

/// Clips `cell` by the seed `other` of index `other_index` at squared distance d2, where the
/// cell's radius and its bounding box say it may cut (clip_tested()). Returns true when the walk
/// must stop.
KOKKOS_INLINE_FUNCTION bool clip_by_other(Polygon& cell, CellSeed const& seed, int other_index,
                                          double d2, Seed const& other, ClipResult& result,
                                          bool revisit = false) {
  double const dx = other.x - seed.x, dy = other.y - seed.y;
  double const offset = bisector_offset(d2, seed.w, other.w);
  // The tests at once (one branch to mispredict, not several); duplicates pass them.
  if (!(may_cut(d2, seed.w, other.w, cell.max_radius2) & cell.may_reach(dx, dy, offset)))
    return false;
  return clip_tested(cell, seed, other_index, d2, other, dx, dy, offset, result, revisit);
}

/// Clips `cell` by the seed of tree slot `s` (clip_by_other).
template <class MemorySpace>
KOKKOS_INLINE_FUNCTION bool
clip_by_seed(Polygon& cell, CellSeed const& seed, SeedTree<MemorySpace> const& tree, int s,
             double d2, Seed const& other, ClipResult& result, bool revisit = false) {
  return clip_by_other(cell, seed, tree.index(s), d2, other, result, revisit);
}

/// Clips `cell` by the seeds of tree slots [begin, end) (its own leaves it unchanged). Returns
/// true when the walk must stop.
template <class MemorySpace>
KOKKOS_INLINE_FUNCTION bool clip_by_slots(Polygon& cell, CellSeed const& seed,
                                          SeedTree<MemorySpace> const& tree, int begin, int end,
                                          ClipResult& result, bool revisit = false) {
  for (int s = begin; s < end; ++s) { // the seed itself: a duplicate with the same index
    Seed const other = tree.seeds(s);
    double const dx = other.x - seed.x, dy = other.y - seed.y;
    if (clip_by_seed(cell, seed, tree, s, dx * dx + dy * dy, other, result, revisit))
      return true;
  }
  return false;
}

/// Clips `cell` by the seeds of the leaf `node`. Returns true when the walk must stop.
template <class MemorySpace>
KOKKOS_INLINE_FUNCTION bool clip_by_leaf(Polygon& cell, CellSeed const& seed,
                                         SeedTree<MemorySpace> const& tree, int node,
                                         ClipResult& result, bool revisit = false) {
  return clip_by_slots(cell, seed, tree, tree.node_begin(node, tree.depth),
                       tree.node_begin(node + 1, tree.depth), result, revisit);
}

/// Depth-first walk of the subtree of `root`, nearest child first, pruned by the stopping
/// rule with the cell as it is when a node is reached. Returns true when the walk must stop.
template <class MemorySpace>
KOKKOS_INLINE_FUNCTION bool clip_by_subtree(Polygon& cell, CellSeed const& seed,
                                            SeedTree<MemorySpace> const& tree, int root,
                                            ClipResult& result, bool revisit = false) {
  constexpr int max_stack = 64; // ≥ tree depth + 2
  int stack_node[max_stack];
  double stack_d2[max_stack];
  int sp = 0;
  stack_node[sp] = root;
  stack_d2[sp++] = box_distance2(tree.nodes(root), seed.x, seed.y);
  int const first_leaf = tree.first_leaf();
  while (sp > 0) {
    --sp;
    int const node = stack_node[sp];
    TreeNode const& box = tree.nodes(node);
    if (!node_may_cut(stack_d2[sp], seed.w, box.wmax, cell.max_radius2) ||
        !box_may_cut_vertices(cell, seed, box))
      continue;
    if (node >= first_leaf) {
      if (clip_by_leaf(cell, seed, tree, node, result, revisit))
        return true;
      continue;
    }
    int const a = 2 * node, b = 2 * node + 1;
    double const da = box_distance2(tree.nodes(a), seed.x, seed.y);
    double const db = box_distance2(tree.nodes(b), seed.x, seed.y);
    bool const a_first = da <= db;
    stack_node[sp] = a_first ? b : a;
    stack_d2[sp++] = a_first ? db : da;
    stack_node[sp] = a_first ? a : b;
    stack_d2[sp++] = a_first ? da : db;
  }
  return false;
}

/// Clips `cell` by the seeds of block `block` (its number in tree.blocks) through its quads:
/// depth first from the top quad, nearest child first, each quad pruned by the stopping rule
/// with the cell as it is when the quad is reached; a quad of the finest level clips by the
/// seeds of its 2 × 2 grid cells. Square nodes whose bounds follow the weights' trend: the
/// search for a cell far from its seed. `top_passed`: the top quad (whose bound is the block
/// node's) has passed the stopping rule already. Returns true when the walk must stop.
template <class MemorySpace>
KOKKOS_INLINE_FUNCTION bool
clip_by_block_quads(Polygon& cell, CellSeed const& seed, SeedTree<MemorySpace> const& tree,
                    int block, ClipResult& result, bool revisit = false, bool top_passed = false) {
  GridBlock const g = tree.blocks(block);
  constexpr int max_stack = 128; // ≥ 3 × levels + 1
  int stack_level[max_stack], stack_i[max_stack], stack_j[max_stack];
  double stack_d2[max_stack]; // the quad's squared distance to the seed, computed when pushed
  int sp = 0;
  stack_level[sp] = g.quad_levels - 1;
  stack_i[sp] = 0;
  stack_j[sp] = 0;
  stack_d2[sp++] = box_distance2(tree.quad(block, g.quad_levels - 1, 0, 0), seed.x, seed.y);
  while (sp > 0) {
    --sp;
    int const level = stack_level[sp], qi = stack_i[sp], qj = stack_j[sp];
    TreeNode const& box = tree.quad(block, level, qi, qj);
    bool const tested = top_passed && level == g.quad_levels - 1;
    if (!tested &&
        (box.empty() || !node_may_cut(stack_d2[sp], seed.w, box.wmax, cell.max_radius2) ||
         !box_may_cut_vertices(cell, seed, box)))
      continue;
    if (level == 0) {
      if (tree.for_each_quad_row(g, 0, qi, qj, [&](int begin, int end) {
            return clip_by_slots(cell, seed, tree, begin, end, result, revisit);
          }))
        return true;
      continue;
    }
    // The children, farthest pushed first.
    int const columns = g.quad_columns(level - 1), rows = g.quad_rows(level - 1);
    int child_i[4], child_j[4];
    double child_d2[4];
    int count = 0;
    for (int dj = 0; dj < 2; ++dj)
      for (int di = 0; di < 2; ++di) {
        int const ci = 2 * qi + di, cj = 2 * qj + dj;
        if (ci >= columns || cj >= rows)
          continue;
        double const d2 = box_distance2(tree.quad(block, level - 1, ci, cj), seed.x, seed.y);
        int k = count++;
        for (; k > 0 && child_d2[k - 1] < d2; --k) {
          child_i[k] = child_i[k - 1];
          child_j[k] = child_j[k - 1];
          child_d2[k] = child_d2[k - 1];
        }
        child_i[k] = ci;
        child_j[k] = cj;
        child_d2[k] = d2;
      }
    for (int k = 0; k < count && sp < max_stack; ++k) {
      stack_level[sp] = level - 1;
      stack_i[sp] = child_i[k];
      stack_j[sp] = child_j[k];
      stack_d2[sp++] = child_d2[k];
    }
  }
  return false;
}

/// Clips `cell` by the seeds of the near grid cells of block `block` (its number in
/// tree.blocks), nearest first, so that the cell is nearly final. Returns true when the
/// walk must stop; `rest_in_reach` tells whether seeds of farther grid cells may still cut.
template <class MemorySpace>
KOKKOS_INLINE_FUNCTION bool clip_by_block_near(Polygon& cell, CellSeed const& seed,
                                               SeedTree<MemorySpace> const& tree, int block,
                                               bool& rest_in_reach, ClipResult& result) {
  GridBlock const g = tree.blocks(block);
  double const w_gap = seed.w - tree.nodes(g.node).wmax;
  int const ci = g.column(seed.x), cj = g.row(seed.y);
  rest_in_reach = false;
  // A seed at distance d may cut only if d < R + sqrt(R² − w_i + w_max): the walk stops at
  // the first cell whose gap, in units of h, is beyond that (recomputed when the cell shrinks).
  double r2 = -1, limit = 0;
  auto const update_limit = [&] { // false: no seed of the block can cut
    if (cell.max_radius2 != r2) {
      r2 = cell.max_radius2;
      double const reach = reach_of_weighted_seeds(r2, w_gap);
      if (!(reach >= 0))
        return false;
      limit = (reach + 2 * g.slack) * g.inv_h;
    }
    return true;
  };
  // The near cells in the order of the seed's part of its cell, then the least gap to the
  // cells beyond.
  int const per_part = static_cast<int>(tree.ring.extent(0)) / (ring_parts * ring_parts);
  int const part = ring_part((seed.x - g.x0) * g.inv_h - ci, (seed.y - g.y0) * g.inv_h - cj);
  int const first_offset = part * per_part, beyond = first_offset + per_part - 1;
  for (int k = first_offset; k < beyond; ++k) {
    RingOffset const o = tree.ring(k);
    if (!update_limit())
      return false;
    if (o.gap >= limit)
      break;                                    // the gaps only grow from here
    int const c = g.cell(ci + o.di, cj + o.dj); // off the grid: an empty cell of the padding
    if (clip_by_slots(cell, seed, tree, tree.cell_begin(c), tree.cell_begin(c + 1), result))
      return true;
  }
  rest_in_reach = update_limit() && tree.ring(beyond).gap < limit;
  return false;
}

/// Clips `cell` by the seeds of block `block` (its number in tree.blocks) beyond its near grid
/// cells, within the disk of
/// the stopping rule, row by row: the seeds of a row segment are consecutive slots, tested in
/// one loop whose stopping test is nearly always false (no branch per grid cell to
/// mispredict). Returns true when the walk must stop.
template <class MemorySpace>
KOKKOS_INLINE_FUNCTION bool clip_by_block_rest(Polygon& cell, CellSeed const& seed,
                                               SeedTree<MemorySpace> const& tree, int block,
                                               ClipResult& result) {
  GridBlock const g = tree.blocks(block);
  double const w_gap = seed.w - tree.nodes(g.node).wmax;
  int const ci = g.column(seed.x), cj = g.row(seed.y);
  // Distance below which a seed of the block may cut, widened by the grid's rounding slack
  // (below the slack: none may cut); recomputed when the cell shrinks.
  auto reach_now = [&] { return reach_of_weighted_seeds(cell.max_radius2, w_gap) + g.slack; };
  double r2 = cell.max_radius2, reach = reach_now();
  if (!(reach >= g.slack))
    return false;
  int const j_begin = g.row(seed.y - reach), j_end = g.row(seed.y + reach);
  for (int j = j_begin; j <= j_end; ++j) {
    if (cell.max_radius2 != r2) {
      r2 = cell.max_radius2;
      reach = reach_now();
      if (!(reach >= g.slack))
        return false;
    }
    double const ylo = g.y0 + j * g.h - g.slack, yhi = ylo + g.h + 2 * g.slack;
    double const dy = sdot::compat::max(sdot::compat::max(ylo - seed.y, seed.y - yhi), 0.0);
    if (dy >= reach)
      continue;
    // The largest weight of the row's spans within the disk narrows it (rows far in weight
    // are skipped).
    int const row = g.cell(0, j);
    double const half_disk = sdot::compat::sqrt(reach * reach - dy * dy) + g.slack;
    int const last_span = g.span(g.column(seed.x + half_disk), j);
    double w_row = -sdot::compat::infinity<double>();
    for (int k = g.span(g.column(seed.x - half_disk), j); k <= last_span; ++k)
      w_row = sdot::compat::max(w_row, tree.row_wmax(k));
    double const row_reach = reach_of_weighted_seeds(cell.max_radius2, seed.w - w_row) + g.slack;
    if (!(row_reach > dy))
      continue;
    double const half = sdot::compat::sqrt(row_reach * row_reach - dy * dy) + g.slack;
    int const i_begin = g.column(seed.x - half), i_end = g.column(seed.x + half);
    auto segment = [&](int first, int last) {
      return first <= last && clip_by_slots(cell, seed, tree, tree.cell_begin(row + first),
                                            tree.cell_begin(row + last + 1), result);
    };
    // Columns [i_begin, i_end] less the near ones [ci − a, ci + a]: at most two segments.
    int const a = near_half_width(j - cj);
    if (a < 0 ? segment(i_begin, i_end)
              : segment(i_begin, sdot::compat::min(i_end, ci - a - 1)) ||
                    segment(sdot::compat::max(i_begin, ci + a + 1), i_end))
      return true;
  }
  return false;
}

/// Best-first walk of the tree (nearest box first, from a small binary heap), each node pruned
/// by the stopping rule with the cell as it is when the node is reached. The heap starts with
/// the siblings of the path from node `own` to the root, or with the root when own < 1. Once
/// the cell's squared radius is at most `settled_r2`, the nodes left in the heap are walked
/// depth first instead, in the heap's order (no more sifts). Returns true when the walk must
/// stop.
template <class MemorySpace>
KOKKOS_INLINE_FUNCTION bool clip_best_first(Polygon& cell, CellSeed const& seed,
                                            SeedTree<MemorySpace> const& tree, int own,
                                            double settled_r2, ClipResult& result) {
  constexpr int heap_capacity = 96; // ≥ depth + 2: the path's siblings fit
  int heap_node[heap_capacity];
  double heap_d2[heap_capacity];
  int heap_size = 0;
  auto push = [&](int node, double d2) {
    int i = heap_size++;
    while (i > 0) {
      int parent = (i - 1) / 2;
      if (heap_d2[parent] <= d2)
        break;
      heap_node[i] = heap_node[parent];
      heap_d2[i] = heap_d2[parent];
      i = parent;
    }
    heap_node[i] = node;
    heap_d2[i] = d2;
  };
  if (own >= 1) {
    for (int node = own; node > 1; node /= 2) {
      TreeNode const& box = tree.nodes(node ^ 1);
      double const d2 = box_distance2(box, seed.x, seed.y);
      if (node_may_cut(d2, seed.w, box.wmax, cell.max_radius2))
        push(node ^ 1, d2);
    }
  } else {
    push(1, box_distance2(tree.nodes(1), seed.x, seed.y));
  }
  int const first_leaf = tree.first_leaf();
  while (heap_size > 0) {
    if (cell.max_radius2 <= settled_r2) {
      for (int k = 0; k < heap_size; ++k)
        if (clip_by_subtree(cell, seed, tree, heap_node[k], result))
          return true;
      return false;
    }
    int const node = heap_node[0];
    double const node_d2 = heap_d2[0];
    // Pop: sift the last entry down from the top.
    --heap_size;
    int const last_node = heap_node[heap_size];
    double const last_d2 = heap_d2[heap_size];
    int i = 0;
    while (true) {
      int child = 2 * i + 1;
      if (child >= heap_size)
        break;
      if (child + 1 < heap_size && heap_d2[child + 1] < heap_d2[child])
        ++child;
      if (heap_d2[child] >= last_d2)
        break;
      heap_node[i] = heap_node[child];
      heap_d2[i] = heap_d2[child];
      i = child;
    }
    heap_node[i] = last_node;
    heap_d2[i] = last_d2;

    // The cell may have shrunk since the node was queued.
    TreeNode const& node_box = tree.nodes(node);
    if (!node_may_cut(node_d2, seed.w, node_box.wmax, cell.max_radius2) ||
        !box_may_cut_vertices(cell, seed, node_box))
      continue;
    if (node_box.block >= 0) { // a block: its quads, square, where its nodes are runs of rows
      if (clip_by_block_quads(cell, seed, tree, node_box.block, result, false, true))
        return true;
      continue;
    }
    if (node >= first_leaf) {
      if (clip_by_leaf(cell, seed, tree, node, result))
        return true;
      continue;
    }
    for (int child = 2 * node; child <= 2 * node + 1; ++child) {
      TreeNode const& box = tree.nodes(child);
      double const d2 = box_distance2(box, seed.x, seed.y);
      if (!node_may_cut(d2, seed.w, box.wmax, cell.max_radius2))
        continue;
      if (heap_size < heap_capacity)
        push(child, d2);
      else if (clip_by_subtree(cell, seed, tree, child, result))
        return true;
    }
  }
  return false;
}

/// Whether the trend of the weights of the finest quad of block `block` holding (x, y) puts
/// the cell of a seed there more than a grid step away (at x_i + g + μ e_i per axis), as
/// optimal transport's weights do.
template <class MemorySpace>
KOKKOS_INLINE_FUNCTION bool predicted_far(SeedTree<MemorySpace> const& tree, int block, double x,
                                          double y) {
  GridBlock const g = tree.blocks(block);
  TreeNode const& q = tree.quad(block, 0, g.column(x) / 2, g.row(y) / 2);
  double const dx = q.gx + (q.kappa_x - 1) * (x - q.centre_x());
  double const dy = q.gy + (q.kappa_y - 1) * (y - q.centre_y());
  return q.trend && dx * dx + dy * dy > g.h * g.h;
}

/// The seeds of `tree` whose cells predicted_far() puts more than a grid step away (0 for a
/// tree without grids). Needs the bounds of the finest quads (compute_finest_quad_bounds(), or
/// all the weight bounds).
template <class ExecutionSpace, class MemorySpace>
int cells_predicted_far(ExecutionSpace const& space, SeedTree<MemorySpace> const& tree) {
  if (tree.blocks.extent(0) == 0)
    return 0;
  int far = 0;
  Kokkos::parallel_reduce(
      "sdot::cells::predicted_far", Kokkos::RangePolicy<ExecutionSpace>(space, 0, tree.size),
      KOKKOS_LAMBDA(int s, int& count) {
        Seed const seed = tree.seeds(s);
        count += predicted_far(tree, tree.block_of_slot(s), seed.x, seed.y) ? 1 : 0;
      },
      far);
  return far;
}

/// Clips `cell` by every seed of `tree` that can cut it. Returns `emptied`, `overflow`,
/// `clipped` or `unchanged`.
///
/// A seed of the tree starts with the near grid cells of its own block, nearest first (a tree
/// without grids: its own leaf). Then the other blocks: if the cell is now nearly final (within
/// 4 grid steps of its seed: 2 and 3 measured slightly worse), the siblings of the path from the
/// block to the root, from the lowest up, each walked depth first, nearest child first; otherwise
/// (a cell at the border of the seeds, still large) best first, so that the nearest seeds shrink it
/// before farther ones are looked at (depth first, such a cell would be clipped many times, and
/// overflow). Every node is pruned by the stopping rule with the cell as it is when the node is
/// reached. The rest of its own block comes last, row by row, when the cell is final: a cell near
/// the block's border is first cut by its neighbours across the border. A seed whose cell the
/// weights' trend puts more than a grid step away walks its block's quads instead, then the
/// other blocks best first. Any other seed (a cell received from elsewhere) walks the whole tree
/// best first.
template <class MemorySpace>
KOKKOS_INLINE_FUNCTION ClipResult clip_by_tree(Polygon& cell, CellSeed const& seed,
                                               SeedTree<MemorySpace> const& tree) {
  ClipResult result = ClipResult::unchanged;
  if (tree.size == 0)
    return result;
  if (seed.tree_slot < 0) {
    clip_best_first(cell, seed, tree, 0, -1, result);
    return result;
  }
  // The seed's own block (with its grid), or its own leaf for a tree without grids (such as
  // one assembled from views by hand): its nearest seeds are there.
  bool const has_grids = tree.blocks.extent(0) > 0;
  int const block = has_grids ? tree.block_of_slot(seed.tree_slot) : -1;
  int const own =
      has_grids ? tree.blocks(block).node : tree.node_of_slot(seed.tree_slot, tree.depth);
  // A cell predicted far from its seed (more than a grid step, by the trend of the weights of the
  // seed's finest quad: its cell lies near x_i + g + μ e_i per axis), as optimal transport gives:
  // its block through the quads (its cutters are seeds near its own, and the quads are pruned
  // vertex by vertex, where the near grid cells are walked in a disk about the seed), then the
  // other blocks best first, each through its quads.
  if (has_grids && predicted_far(tree, block, seed.x, seed.y)) {
    if (!clip_by_block_quads(cell, seed, tree, block, result))
      clip_best_first(cell, seed, tree, own, -1, result);
    return result;
  }
  bool rest_in_reach = false;
  if (has_grids ? clip_by_block_near(cell, seed, tree, block, rest_in_reach, result)
                : clip_by_leaf(cell, seed, tree, own, result))
    return result;
  double const h = has_grids ? tree.blocks(block).h : 0;
  double const settled_r2 = 16 * h * h;
  if (cell.max_radius2 <= settled_r2) {
    for (int node = own; node > 1; node /= 2)
      if (clip_by_subtree(cell, seed, tree, node ^ 1, result))
        return result;
  } else if (clip_best_first(cell, seed, tree, own, settled_r2, result)) {
    return result;
  }
  // A cell still large (open towards where the tree has no seeds: a rank's border cell) would
  // scan most of its block by rows; its block's quads, pruned vertex by vertex, are cheaper
  // (they revisit the near cells' seeds).
  if (rest_in_reach) {
    if (cell.max_radius2 <= settled_r2)
      clip_by_block_rest(cell, seed, tree, block, result);
    else if (has_grids)
      clip_by_block_quads(cell, seed, tree, block, result, true);
    else
      clip_by_subtree(cell, seed, tree, own, result, true);
  }
  return result;
}

/// Starts `cell` as the domain polygon, seen from the seed (the views by reference: no
/// reference count to update per cell).
template <class MemorySpace>
KOKKOS_INLINE_FUNCTION void start_from_domain(Polygon& cell, double x, double y,
                                              ConstPoints<MemorySpace> const& vertices,
                                              Kokkos::View<int const*, MemorySpace> const& labels) {
  cell.size = 0;
  cell.max_radius2 = 0;
  int const n = static_cast<int>(vertices.extent(0));
  for (int k = 0; k < n; ++k)
    cell.push(vertices(k, 0) - x, vertices(k, 1) - y, labels(k));
}

} // namespace sdot::detail
