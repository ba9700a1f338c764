#pragma once
// Building one cell: the polygon (the domain, or a cell received from another rank) is
// clipped by the bisectors of the seeds of a tree, visited depth first, nearest child first,
// and only where the stopping rule says a seed may still cut.

#include <sdot/detail/polygon.hpp>
#include <sdot/detail/seed_tree.hpp>

namespace sdot::detail {

/// Seed i as seen by its own cell.
struct CellSeed {
  double x, y, w;
  int index;     ///< global index (the tie-break between duplicates)
  int tree_slot; ///< position of the seed in the tree being walked, or -1 if it is not there
};

/// Whether a seed at squared distance d2 ≥ 0 with weight ≤ w_other can cut a cell whose
/// vertices lie within sqrt(r2) of the seed i of weight w_i. A seed at distance d cuts only
/// if 2·v·d > d² + w_i − w_other for some vertex v, and 2·v·d ≤ 2·R·d.
KOKKOS_INLINE_FUNCTION bool may_cut(double d2, double w_i, double w_other, double r2) {
  double t = d2 + (w_i - w_other); // the weight difference first: exact for close weights
  return !(t >= 0 && t * t >= 4 * r2 * d2);
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

KOKKOS_INLINE_FUNCTION double box_distance2(TreeNode const& b, double x, double y) {
  double dx = loom::compat::max(loom::compat::max(b.xmin - x, x - b.xmax), 0.0);
  double dy = loom::compat::max(loom::compat::max(b.ymin - y, y - b.ymax), 0.0);
  return dx * dx + dy * dy;
}

/// Clips `cell` by the seed of tree slot `s`. Returns true when the walk must stop
/// (`result` is then `emptied` or `overflow`).
template <class MemorySpace>
KOKKOS_INLINE_FUNCTION bool clip_by_seed(Polygon& cell, CellSeed const& seed,
                                         SeedTree<MemorySpace> const& tree, int s, double d2,
                                         Seed const& other, ClipResult& result) {
  double const dx = other.x - seed.x, dy = other.y - seed.y;
  if (d2 == 0 && other.w == seed.w) {
    // Duplicates: the lower index keeps the cell.
    if (tree.index(s) < seed.index) {
      cell.size = 0;
      cell.max_radius2 = 0;
      result = ClipResult::emptied;
      return true;
    }
    return false;
  }
  if (!may_cut(d2, seed.w, other.w, cell.max_radius2))
    return false;
  ClipResult const r = cell.clip(dx, dy, (d2 + (seed.w - other.w)) / 2, tree.index(s));
  if (r == ClipResult::emptied || r == ClipResult::overflow) {
    result = r;
    return true;
  }
  if (r == ClipResult::clipped)
    result = r;
  return false;
}

/// Clips `cell` by the seeds of the leaf `node`, except the tree slots in [skip_begin,
/// skip_end) (already done). Returns true when the walk must stop.
template <class MemorySpace>
KOKKOS_INLINE_FUNCTION bool clip_by_leaf(Polygon& cell, CellSeed const& seed,
                                         SeedTree<MemorySpace> const& tree, int node,
                                         int skip_begin, int skip_end, ClipResult& result) {
  int const begin = tree.node_begin(node, tree.depth);
  int const end = tree.node_begin(node + 1, tree.depth);
  for (int s = begin; s < end; ++s) {
    if (s == seed.tree_slot || (s >= skip_begin && s < skip_end))
      continue;
    Seed const other = tree.seeds(s);
    double const dx = other.x - seed.x, dy = other.y - seed.y;
    if (clip_by_seed(cell, seed, tree, s, dx * dx + dy * dy, other, result))
      return true;
  }
  return false;
}

/// Depth-first walk of the subtree of `root`, nearest child first, pruned by the stopping
/// rule with the cell as it is when a node is reached. Returns true when the walk must stop.
template <class MemorySpace>
KOKKOS_INLINE_FUNCTION bool clip_by_subtree(Polygon& cell, CellSeed const& seed,
                                            SeedTree<MemorySpace> const& tree, int root,
                                            int skip_begin, int skip_end, ClipResult& result) {
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
    if (!node_may_cut(stack_d2[sp], seed.w, tree.nodes(node).wmax, cell.max_radius2))
      continue;
    if (node >= first_leaf) {
      if (clip_by_leaf(cell, seed, tree, node, skip_begin, skip_end, result))
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

/// Clips `cell` by every seed of `tree` that can cut it. Returns `emptied`, `overflow`,
/// `clipped` or `unchanged`.
///
/// When the seed is in the tree, its neighbours along the Hilbert curve (the tree order) come
/// first, nearest first, so that the cell is nearly final before any node is tested; then the
/// siblings of the nodes on the path from its leaf to the root, nearest levels first, each
/// walked depth first and pruned by the stopping rule. Otherwise the whole tree is walked
/// depth first from the root.
template <class MemorySpace>
KOKKOS_INLINE_FUNCTION ClipResult clip_by_tree(Polygon& cell, CellSeed const& seed,
                                               SeedTree<MemorySpace> const& tree) {
  ClipResult result = ClipResult::unchanged;
  if (tree.size == 0)
    return result;
  if (seed.tree_slot < 0) {
    clip_by_subtree(cell, seed, tree, 1, 0, 0, result);
    return result;
  }
  // The Hilbert window, sorted by distance (insertion sort: it is small).
  constexpr int half_window = 8;
  int const window_begin = loom::compat::max(0, seed.tree_slot - half_window);
  int const window_end = loom::compat::min(tree.size, seed.tree_slot + half_window + 1);
  double near_d2[2 * half_window];
  int near_slot[2 * half_window];
  int nb_near = 0;
  for (int s = window_begin; s < window_end; ++s) {
    if (s == seed.tree_slot)
      continue;
    Seed const other = tree.seeds(s);
    double const dx = other.x - seed.x, dy = other.y - seed.y;
    double const d2 = dx * dx + dy * dy;
    int k = nb_near++;
    while (k > 0 && near_d2[k - 1] > d2) {
      near_d2[k] = near_d2[k - 1];
      near_slot[k] = near_slot[k - 1];
      --k;
    }
    near_d2[k] = d2;
    near_slot[k] = s;
  }
  for (int k = 0; k < nb_near; ++k)
    if (clip_by_seed(cell, seed, tree, near_slot[k], near_d2[k], tree.seeds(near_slot[k]), result))
      return result;
  // The rest, from the seed's leaf up.
  int node = 1;
  for (int level = 0; level < tree.depth; ++level)
    node = 2 * node + (seed.tree_slot >= tree.node_begin(2 * node + 1, level + 1));
  if (clip_by_leaf(cell, seed, tree, node, window_begin, window_end, result))
    return result;
  for (; node > 1; node /= 2)
    if (clip_by_subtree(cell, seed, tree, node ^ 1, window_begin, window_end, result))
      return result;
  return result;
}

/// Starts `cell` as the domain polygon, seen from the seed.
template <class MemorySpace>
KOKKOS_INLINE_FUNCTION void start_from_domain(Polygon& cell, double x, double y,
                                              Kokkos::View<double const* [2], MemorySpace> vertices,
                                              Kokkos::View<int const*, MemorySpace> labels) {
  cell.size = 0;
  cell.max_radius2 = 0;
  int const n = static_cast<int>(vertices.extent(0));
  for (int k = 0; k < n; ++k)
    cell.push(vertices(k, 0) - x, vertices(k, 1) - y, labels(k));
}

} // namespace sdot::detail
