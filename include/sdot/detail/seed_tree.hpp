#pragma once
// The spatial index over the seeds: seeds sorted along a Hilbert curve, and a complete
// binary tree over that order (node k of level l holds the sorted seeds
// [k·n/2^l, (k+1)·n/2^l)). Each node keeps the bounding box of its seeds and their largest
// weight, the two things the stopping rule needs. Built with a few parallel passes.

#include <sdot/detail/radix_sort.hpp>

#include <cstdint>

namespace sdot::detail {

struct Seed {
  double x, y, w;
};

struct TreeNode {
  double xmin, ymin, xmax, ymax, wmax;
};

/// Position along a Hilbert curve of order `bits` of the cell (ix, iy).
KOKKOS_INLINE_FUNCTION std::uint64_t hilbert_index(std::uint32_t ix, std::uint32_t iy, int bits) {
  std::uint64_t d = 0;
  std::uint32_t const full = (std::uint32_t(1) << bits) - 1;
  for (std::uint32_t s = std::uint32_t(1) << (bits - 1); s > 0; s >>= 1) {
    std::uint32_t rx = (ix & s) ? 1 : 0;
    std::uint32_t ry = (iy & s) ? 1 : 0;
    d += std::uint64_t(s) * s * ((3 * rx) ^ ry);
    if (ry == 0) {
      if (rx == 1) {
        ix = full - ix;
        iy = full - iy;
      }
      std::uint32_t t = ix;
      ix = iy;
      iy = t;
    }
  }
  return d;
}

template <class MemorySpace>
struct SeedTree {
  Kokkos::View<Seed*, MemorySpace> seeds;  ///< in tree order
  Kokkos::View<int*, MemorySpace> index;   ///< input index of each seed in tree order
  Kokkos::View<TreeNode*, MemorySpace> nodes; ///< heap order, root at 1
  int size = 0;
  int depth = 0; ///< leaves are at this level

  KOKKOS_INLINE_FUNCTION int first_leaf() const { return 1 << depth; }
  /// First sorted seed of node `node` (heap numbering) at level `level`.
  KOKKOS_INLINE_FUNCTION int node_begin(int node, int level) const {
    std::int64_t k = node - (std::int64_t(1) << level);
    return static_cast<int>((k * size) >> level);
  }
};

/// Levels below the root such that no leaf holds more than `leaf_size` seeds.
inline int tree_depth(int n, int leaf_size) {
  int depth = 0;
  while ((std::int64_t(n) + (std::int64_t(1) << depth) - 1) >> depth > leaf_size && depth < 28)
    ++depth;
  return depth;
}

template <class ExecutionSpace, class MemorySpace>
SeedTree<MemorySpace> build_seed_tree(ExecutionSpace const& space,
                                      Kokkos::View<double const* [2], MemorySpace> positions,
                                      Kokkos::View<double const*, MemorySpace> weights,
                                      int leaf_size) {
  using Policy = Kokkos::RangePolicy<ExecutionSpace>;
  loom::compat::ScopedRegion region("sdot::build_seed_tree");
  int const n = static_cast<int>(positions.extent(0));
  SeedTree<MemorySpace> tree;
  tree.size = n;
  tree.depth = tree_depth(n, leaf_size);

  // Hilbert keys on a 2^20 × 2^20 grid over the seeds' bounding box.
  constexpr int bits = 20;
  Kokkos::MinMaxScalar<double> bx, by;
  Kokkos::parallel_reduce(
      "sdot::tree::bounds_x", Policy(space, 0, n),
      KOKKOS_LAMBDA(int i, Kokkos::MinMaxScalar<double>& r) {
        r.min_val = loom::compat::min(r.min_val, positions(i, 0));
        r.max_val = loom::compat::max(r.max_val, positions(i, 0));
      },
      Kokkos::MinMax<double>(bx));
  Kokkos::parallel_reduce(
      "sdot::tree::bounds_y", Policy(space, 0, n),
      KOKKOS_LAMBDA(int i, Kokkos::MinMaxScalar<double>& r) {
        r.min_val = loom::compat::min(r.min_val, positions(i, 1));
        r.max_val = loom::compat::max(r.max_val, positions(i, 1));
      },
      Kokkos::MinMax<double>(by));
  double const x0 = bx.min_val, y0 = by.min_val;
  double const extent = loom::compat::max(bx.max_val - bx.min_val, by.max_val - by.min_val);
  double const scale = extent > 0 ? ((1 << bits) - 1) / extent : 0;
  Kokkos::View<std::uint64_t*, MemorySpace> keys(
      Kokkos::view_alloc(space, Kokkos::WithoutInitializing, "sdot::tree::hilbert_keys"), n);
  Kokkos::parallel_for(
      "sdot::tree::hilbert_keys", Policy(space, 0, n), KOKKOS_LAMBDA(int i) {
        auto ix = static_cast<std::uint32_t>((positions(i, 0) - x0) * scale);
        auto iy = static_cast<std::uint32_t>((positions(i, 1) - y0) * scale);
        keys(i) = hilbert_index(ix, iy, bits);
      });
  tree.index = stable_sort_permutation(
      space, Kokkos::View<std::uint64_t const*, MemorySpace>(keys), 2 * bits);

  tree.seeds = Kokkos::View<Seed*, MemorySpace>(
      Kokkos::view_alloc(space, Kokkos::WithoutInitializing, "sdot::tree::seeds"), n);
  auto seeds = tree.seeds;
  auto index = tree.index;
  Kokkos::parallel_for(
      "sdot::tree::gather_seeds", Policy(space, 0, n), KOKKOS_LAMBDA(int t) {
        int i = index(t);
        seeds(t) = Seed{positions(i, 0), positions(i, 1), weights(i)};
      });

  // Leaves from their seeds, then each level from the one below.
  int const depth = tree.depth;
  tree.nodes = Kokkos::View<TreeNode*, MemorySpace>(
      Kokkos::view_alloc(space, Kokkos::WithoutInitializing, "sdot::tree::nodes"),
      std::size_t(2) << depth);
  auto nodes = tree.nodes;
  auto const t = tree;
  Kokkos::parallel_for(
      "sdot::tree::leaves", Policy(space, 1 << depth, 2 << depth), KOKKOS_LAMBDA(int node) {
        int begin = t.node_begin(node, depth), end = t.node_begin(node + 1, depth);
        double const inf = loom::compat::infinity<double>();
        TreeNode box{inf, inf, -inf, -inf, -inf};
        for (int s = begin; s < end; ++s) {
          Seed const p = seeds(s);
          box.xmin = loom::compat::min(box.xmin, p.x);
          box.ymin = loom::compat::min(box.ymin, p.y);
          box.xmax = loom::compat::max(box.xmax, p.x);
          box.ymax = loom::compat::max(box.ymax, p.y);
          box.wmax = loom::compat::max(box.wmax, p.w);
        }
        nodes(node) = box;
      });
  for (int level = depth - 1; level >= 0; --level) {
    Kokkos::parallel_for(
        "sdot::tree::inner_nodes", Policy(space, 1 << level, 2 << level), KOKKOS_LAMBDA(int node) {
          TreeNode const a = nodes(2 * node), b = nodes(2 * node + 1);
          nodes(node) = TreeNode{loom::compat::min(a.xmin, b.xmin), loom::compat::min(a.ymin, b.ymin),
                                 loom::compat::max(a.xmax, b.xmax), loom::compat::max(a.ymax, b.ymax),
                                 loom::compat::max(a.wmax, b.wmax)};
        });
  }
  return tree;
}

} // namespace sdot::detail
