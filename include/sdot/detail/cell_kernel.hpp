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

/// Clips `cell` by the seeds of the leaf `node`. Returns true when the walk must stop
/// (`result` is then `emptied` or `overflow`).
template <class MemorySpace>
KOKKOS_INLINE_FUNCTION bool clip_by_leaf(Polygon& cell, CellSeed const& seed,
                                         SeedTree<MemorySpace> const& tree, int node,
                                         ClipResult& result) {
  int const begin = tree.node_begin(node, tree.depth);
  int const end = tree.node_begin(node + 1, tree.depth);
  for (int s = begin; s < end; ++s) {
    if (s == seed.tree_slot)
      continue;
    Seed const other = tree.seeds(s);
    double const dx = other.x - seed.x, dy = other.y - seed.y;
    double const d2 = dx * dx + dy * dy;
    if (d2 == 0 && other.w == seed.w) {
      // Duplicates: the lower index keeps the cell.
      if (tree.index(s) < seed.index) {
        cell.size = 0;
        cell.max_radius2 = 0;
        result = ClipResult::emptied;
        return true;
      }
      continue;
    }
    if (!may_cut(d2, seed.w, other.w, cell.max_radius2))
      continue;
    ClipResult r = cell.clip(dx, dy, (d2 + (seed.w - other.w)) / 2, tree.index(s));
    if (r == ClipResult::emptied || r == ClipResult::overflow) {
      result = r;
      return true;
    }
    if (r == ClipResult::clipped)
      result = r;
  }
  return false;
}

/// Depth-first walk of the subtree of `root`, nearest child first (used when the best-first
/// queue is full). Returns true when the walk must stop.
template <class MemorySpace>
KOKKOS_INLINE_FUNCTION bool clip_by_subtree(Polygon& cell, CellSeed const& seed,
                                            SeedTree<MemorySpace> const& tree, int root,
                                            double root_d2, ClipResult& result) {
  constexpr int max_stack = 64; // ≥ tree depth + 2
  int stack_node[max_stack];
  double stack_d2[max_stack];
  int sp = 0;
  stack_node[sp] = root;
  stack_d2[sp++] = root_d2;
  int const first_leaf = tree.first_leaf();
  while (sp > 0) {
    --sp;
    int const node = stack_node[sp];
    if (!node_may_cut(stack_d2[sp], seed.w, tree.nodes(node).wmax, cell.max_radius2))
      continue;
    if (node >= first_leaf) {
      if (clip_by_leaf(cell, seed, tree, node, result))
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

/// Clips `cell` by every seed of `tree` that can cut it. Nodes are visited best first
/// (nearest box first, from a small binary heap), so the cell shrinks early and the stopping
/// rule prunes most of the tree. Returns `emptied`, `overflow`, `clipped` or `unchanged`.
template <class MemorySpace>
KOKKOS_INLINE_FUNCTION ClipResult clip_by_tree(Polygon& cell, CellSeed const& seed,
                                               SeedTree<MemorySpace> const& tree) {
  ClipResult result = ClipResult::unchanged;
  if (tree.size == 0)
    return result;
  constexpr int heap_capacity = 96;
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
  int const first_leaf = tree.first_leaf();
  // The seed's own leaf first: its seeds are near, so the cell is small from the start and
  // the stopping rule prunes most nodes as soon as they are seen.
  int own_leaf = -1;
  if (seed.tree_slot >= 0) {
    own_leaf = 1;
    for (int level = 0; level < tree.depth; ++level)
      own_leaf = 2 * own_leaf + (seed.tree_slot >= tree.node_begin(2 * own_leaf + 1, level + 1));
    if (clip_by_leaf(cell, seed, tree, own_leaf, result))
      return result;
  }
  push(1, box_distance2(tree.nodes(1), seed.x, seed.y));
  while (heap_size > 0) {
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
    if (!node_may_cut(node_d2, seed.w, tree.nodes(node).wmax, cell.max_radius2))
      continue;
    if (node >= first_leaf) {
      if (node != own_leaf && clip_by_leaf(cell, seed, tree, node, result))
        return result;
      continue;
    }
    for (int child = 2 * node; child <= 2 * node + 1; ++child) {
      TreeNode const box = tree.nodes(child);
      double const d2 = box_distance2(box, seed.x, seed.y);
      if (!node_may_cut(d2, seed.w, box.wmax, cell.max_radius2) || child == own_leaf)
        continue;
      if (heap_size < heap_capacity)
        push(child, d2);
      else if (clip_by_subtree(cell, seed, tree, child, d2, result))
        return result;
    }
  }
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
