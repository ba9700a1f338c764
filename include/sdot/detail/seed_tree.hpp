#pragma once
// The spatial index over the seeds, in two layers:
// - a complete binary tree over the tree order (node k of level l holds the seeds
//   [k·n/2^l, (k+1)·n/2^l) of that order); each node keeps the bounding box of its seeds and
//   their largest weight, the two things the stopping rule needs;
// - blocks, the nodes of one level (about block_size seeds each, consecutive along a Hilbert
//   curve), each with its own uniform grid of square cells holding about grid_occupancy
//   seeds: a grid adapts to the local density because a block is a fixed number of seeds.
// The tree order is: blocks along the Hilbert curve, and inside a block, its grid cells row
// by row (Hilbert order inside a grid cell). Built with a few parallel passes.

#include <sdot/detail/point_bounds.hpp>
#include <sdot/detail/radix_sort.hpp>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>

namespace sdot::detail {

struct Seed {
  double x, y, w;
};

struct TreeNode {
  double xmin, ymin, xmax, ymax, wmax;
};

/// Bounding box, largest weight and number of a set of seeds, gathered one seed or one set at a
/// time.
struct NodeStats {
  double xmin = loom::compat::infinity<double>(), ymin = loom::compat::infinity<double>();
  double xmax = -loom::compat::infinity<double>(), ymax = -loom::compat::infinity<double>();
  double wmax = -loom::compat::infinity<double>();
  int count = 0;

  KOKKOS_INLINE_FUNCTION void add(Seed const& p) { add(NodeStats{p.x, p.y, p.x, p.y, p.w, 1}); }
  KOKKOS_INLINE_FUNCTION void add(NodeStats const& o) {
    xmin = loom::compat::min(xmin, o.xmin);
    ymin = loom::compat::min(ymin, o.ymin);
    xmax = loom::compat::max(xmax, o.xmax);
    ymax = loom::compat::max(ymax, o.ymax);
    wmax = loom::compat::max(wmax, o.wmax);
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
  int first_span = 0; ///< number of its first row span among the tree's (see row_wmax)

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

/// Position along a Hilbert curve of order `bits` of the cell (ix, iy). Branch-free: the
/// orientation of the sub-square is kept as two flags (coordinates swapped, complemented),
/// toggled level by level.
KOKKOS_INLINE_FUNCTION std::uint64_t hilbert_index(std::uint32_t ix, std::uint32_t iy, int bits) {
  std::uint64_t d = 0;
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
  int depth = 0;                                ///< leaves are at this level
  int block_level = 0;                          ///< blocks are the nodes of this level (≤ depth)
  int finest_block_level = 0;                   ///< the level of blocks of about block_size seeds
  Kokkos::View<GridBlock*, MemorySpace> blocks; ///< by block node − 2^block_level
  Kokkos::View<int*, MemorySpace> cell_begin;   ///< first tree slot of each grid cell, + end
  /// Largest weight in each row span (the row_span_cells columns from k·row_span_cells on of row
  /// j of block g: g.span(i, j) for a column i among them); a row's seeds are consecutive slots.
  Kokkos::View<double*, MemorySpace> row_wmax;
  Kokkos::View<RingOffset*, MemorySpace> ring; ///< the near grid offsets, nearest first

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
template <class ExecutionSpace, class MemorySpace>
Kokkos::View<RingOffset*, MemorySpace> ring_offsets(ExecutionSpace const& space) {
  int const reach = near_reach();
  int const per_part = ring_entries_per_part();
  int const nb_parts = ring_parts * ring_parts;
  Kokkos::View<RingOffset*, Kokkos::HostSpace> host("sdot::tree::ring_host", nb_parts * per_part);
  for (int part = 0; part < nb_parts; ++part) {
    // The part: [px0, px1] × [py0, py1] in units of h from the cell's corner.
    double const px0 = double(part % ring_parts) / ring_parts, px1 = px0 + 1.0 / ring_parts;
    double const py0 = double(part / ring_parts) / ring_parts, py1 = py0 + 1.0 / ring_parts;
    auto const gap_to = [&](int di, int dj) {
      double const gx = std::max({0.0, di - px1, px0 - (di + 1)});
      double const gy = std::max({0.0, dj - py1, py0 - (dj + 1)});
      return std::sqrt(gx * gx + gy * gy);
    };
    RingOffset* const first = &host(part * per_part);
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
    std::stable_sort(first, first + k, before); // a few entries, once per tree
    first[k] = RingOffset{0, 0, beyond};
  }
  Kokkos::View<RingOffset*, MemorySpace> ring(
      Kokkos::view_alloc(space, Kokkos::WithoutInitializing, "sdot::tree::ring"), host.extent(0));
  Kokkos::deep_copy(space, ring, host);
  space.fence();
  return ring;
}

/// A block holds block_size seeds (the finest block level) or, where the seeds are spread
/// evenly, up to 2^max_block_merge times more: larger blocks leave fewer cells at a block's
/// border, whose neighbours across it are found through the tree (measured at 1e6 uniform
/// seeds: 18 % fewer cycles per cell with 16× larger blocks), but a block's grid has one cell
/// size, so it suits only seeds of even density. The weights do not enter the choice: their
/// bounds inside a block are kept per row span (row_span_cells), whatever the block's size.
inline constexpr int max_block_merge = 4;
/// A larger block is taken only if none of its finest blocks is denser than this times its own
/// mean density (bounding-box areas; Hilbert blocks of uniform seeds stay within about 2).
inline constexpr double block_density_ratio = 3;

/// The block level of `tree` (its size set) for the seeds along the curve: the coarsest level
/// from `coarsest` on whose every node is even (no node of level `finest` in it denser than
/// block_density_ratio times its mean), else `finest`. From the positions only, so new weights
/// keep the blocks.
template <class ExecutionSpace, class MemorySpace>
int choose_block_level(ExecutionSpace const& space, SeedTree<MemorySpace> const& tree,
                       Kokkos::View<Seed const*, MemorySpace> seeds, int coarsest, int finest) {
  using Policy = Kokkos::RangePolicy<ExecutionSpace>;
  if (coarsest >= finest)
    return finest;
  auto const t = tree;
  Kokkos::View<NodeStats*, MemorySpace> parts(
      Kokkos::view_alloc(space, Kokkos::WithoutInitializing, "sdot::tree::finest_blocks"),
      1 << finest);
  Kokkos::parallel_for(
      "sdot::tree::finest_blocks", Policy(space, 0, 1 << finest), KOKKOS_LAMBDA(int k) {
        int const begin = t.node_begin((1 << finest) + k, finest);
        int const end = t.node_begin((1 << finest) + k + 1, finest);
        NodeStats st;
        for (int s = begin; s < end; ++s)
          st.add(seeds(s));
        parts(k) = st;
      });
  for (int level = coarsest; level < finest; ++level) {
    int const per_node = 1 << (finest - level);
    int uneven = 0;
    Kokkos::parallel_reduce(
        "sdot::tree::uneven_nodes", Policy(space, 0, 1 << level),
        KOKKOS_LAMBDA(int k, int& count) {
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
          count += dense_part;
        },
        uneven);
    if (uneven == 0)
      return level;
  }
  return finest;
}

/// The parts of `tree` that depend on the weights: the largest weight of each row span and the
/// nodes (boxes and largest weights), from the seeds in tree order. Allocates them the first
/// time.
template <class ExecutionSpace, class MemorySpace>
void compute_weight_bounds(ExecutionSpace const& space, SeedTree<MemorySpace>& tree) {
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
      "sdot::tree::row_weights", Policy(space, 0, nb_blocks), KOKKOS_LAMBDA(int b) {
        GridBlock const g = blocks(b);
        for (int j = 0; j < g.ny; ++j) {
          int const row = g.cell(0, j);
          for (int i = 0; i < g.nx; i += row_span_cells) {
            int const end = loom::compat::min(i + row_span_cells, g.nx);
            double w = -loom::compat::infinity<double>();
            for (int t = cell_begin(row + i); t < cell_begin(row + end); ++t)
              w = loom::compat::max(w, seeds(t).w);
            row_wmax(g.span(i, j)) = w;
          }
        }
      });

  // Leaves from their seeds, then each level from the one below.
  int const depth = tree.depth;
  if (tree.nodes.extent(0) != std::size_t(2) << depth)
    tree.nodes = Kokkos::View<TreeNode*, MemorySpace>(
        Kokkos::view_alloc(space, Kokkos::WithoutInitializing, "sdot::tree::nodes"), std::size_t(2)
                                                                                         << depth);
  auto nodes = tree.nodes;
  auto const t = tree;
  Kokkos::parallel_for(
      "sdot::tree::leaves", Policy(space, 1 << depth, 2 << depth), KOKKOS_LAMBDA(int node) {
        int begin = t.node_begin(node, depth), end = t.node_begin(node + 1, depth);
        NodeStats leaf;
        for (int s = begin; s < end; ++s)
          leaf.add(seeds(s));
        nodes(node) = leaf.node();
      });
  for (int level = depth - 1; level >= 0; --level) {
    Kokkos::parallel_for(
        "sdot::tree::inner_nodes", Policy(space, 1 << level, 2 << level), KOKKOS_LAMBDA(int node) {
          TreeNode const a = nodes(2 * node), b = nodes(2 * node + 1);
          nodes(node) =
              TreeNode{loom::compat::min(a.xmin, b.xmin), loom::compat::min(a.ymin, b.ymin),
                       loom::compat::max(a.xmax, b.xmax), loom::compat::max(a.ymax, b.ymax),
                       loom::compat::max(a.wmax, b.wmax)};
        });
  }
}

/// New weights for the seeds of `tree` (by input index, as built): the order, the blocks, the
/// grids and the boxes depend on the positions only, so the tree is the one build_seed_tree()
/// would give.
template <class ExecutionSpace, class MemorySpace>
void reweight_seed_tree(ExecutionSpace const& space, SeedTree<MemorySpace>& tree,
                        Kokkos::View<double const*, MemorySpace> weights) {
  loom::compat::ScopedRegion region("sdot::reweight_seed_tree");
  auto const seeds = tree.seeds;
  auto const index = tree.index;
  Kokkos::parallel_for(
      "sdot::tree::new_weights", Kokkos::RangePolicy<ExecutionSpace>(space, 0, tree.size),
      KOKKOS_LAMBDA(int s) { seeds(s).w = weights(index(s)); });
  compute_weight_bounds(space, tree);
}

/// Builds the index of the seeds. `leaf_size`: most seeds in a tree leaf; `block_size`: most
/// seeds in a block (a grid); `grid_occupancy`: seeds per grid cell aimed at.
template <class ExecutionSpace, class MemorySpace>
SeedTree<MemorySpace>
build_seed_tree(ExecutionSpace const& space, Kokkos::View<double const* [2], MemorySpace> positions,
                Kokkos::View<double const*, MemorySpace> weights, int leaf_size,
                int block_size = 1024, double grid_occupancy = 1.5) {
  static_assert(Kokkos::SpaceAccessibility<ExecutionSpace, MemorySpace>::accessible,
                "build_seed_tree: the seeds must be accessible from the execution space");
  using Policy = Kokkos::RangePolicy<ExecutionSpace>;
  loom::compat::ScopedRegion region("sdot::build_seed_tree");
  int const n = static_cast<int>(positions.extent(0));
  SeedTree<MemorySpace> tree;
  tree.size = n;
  tree.depth = tree_depth(n, leaf_size);
  tree.finest_block_level =
      loom::compat::min(tree.depth, tree_depth(n, loom::compat::max(block_size, 1)));
  tree.ring = ring_offsets<ExecutionSpace, MemorySpace>(space);

  // Hilbert keys on a 2^16 × 2^16 grid over the seeds' bounding box.
  constexpr int bits = 16;
  PointBounds const bounds = point_bounds(space, "sdot::tree::bounds", positions);
  double const x0 = bounds.xmin, y0 = bounds.ymin;
  double const extent = loom::compat::max(bounds.xmax - bounds.xmin, bounds.ymax - bounds.ymin);
  double const scale = extent > 0 ? ((1 << bits) - 1) / extent : 0;
  Kokkos::View<std::uint64_t*, MemorySpace> keys(
      Kokkos::view_alloc(space, Kokkos::WithoutInitializing, "sdot::tree::hilbert_keys"), n);
  Kokkos::parallel_for(
      "sdot::tree::hilbert_keys", Policy(space, 0, n), KOKKOS_LAMBDA(int i) {
        auto ix = static_cast<std::uint32_t>((positions(i, 0) - x0) * scale);
        auto iy = static_cast<std::uint32_t>((positions(i, 1) - y0) * scale);
        keys(i) = hilbert_index(ix, iy, bits);
      });
  auto const hilbert = stable_sort_permutation(
      space, Kokkos::View<std::uint64_t const*, MemorySpace>(keys), 2 * bits);
  keys = {};
  // The seeds in Hilbert order: the one gather with scattered reads.
  Kokkos::View<Seed*, MemorySpace> along_curve(
      Kokkos::view_alloc(space, Kokkos::WithoutInitializing, "sdot::tree::seeds_along_curve"), n);
  Kokkos::parallel_for(
      "sdot::tree::gather_along_curve", Policy(space, 0, n), KOKKOS_LAMBDA(int k) {
        int const i = hilbert(k);
        along_curve(k) = Seed{positions(i, 0), positions(i, 1), weights(i)};
      });

  // The block level: the largest blocks whose seeds are spread evenly.
  tree.block_level = choose_block_level(
      space, tree, Kokkos::View<Seed const*, MemorySpace>(along_curve),
      loom::compat::max(tree.finest_block_level - max_block_merge, 0), tree.finest_block_level);

  // The grid of each block, sized from the block's bounding box and number of seeds.
  int const block_level = tree.block_level;
  int const nb_blocks = 1 << block_level;
  tree.blocks = Kokkos::View<GridBlock*, MemorySpace>(
      Kokkos::view_alloc(space, Kokkos::WithoutInitializing, "sdot::tree::blocks"), nb_blocks);
  auto const blocks = tree.blocks;
  auto const t0 = tree;
  int nb_cells = 0;
  Kokkos::parallel_scan(
      "sdot::tree::block_grids", Policy(space, 0, nb_blocks),
      KOKKOS_LAMBDA(int b, int& first_cell, bool final) {
        int const begin = t0.node_begin(nb_blocks + b, block_level);
        int const end = t0.node_begin(nb_blocks + b + 1, block_level);
        NodeStats box;
        for (int k = begin; k < end; ++k)
          box.add(along_curve(k));
        double const xmin = box.xmin, ymin = box.ymin, xmax = box.xmax, ymax = box.ymax;
        GridBlock g{0, 0, 1, 1, 1, 1, first_cell, 0};
        double const wx = xmax - xmin, wy = ymax - ymin, ext = loom::compat::max(wx, wy);
        if (end > begin && ext > 0) {
          double const target = loom::compat::max(1.0, (end - begin) / grid_occupancy);
          // Square cells; never more than `target` along a side (a thin block).
          double const h = loom::compat::max(loom::compat::sqrt(wx * wy / target), ext / target);
          int const nx = static_cast<int>(wx / h) + 1, ny = static_cast<int>(wy / h) + 1;
          double const scale =
              loom::compat::fmax(xmin, -xmin) + loom::compat::fmax(ymin, -ymin) + 2 * (nx + ny) * h;
          g = GridBlock{xmin, ymin, h,          1 / h,
                        nx,   ny,   first_cell, 16 * loom::compat::epsilon<double>() * scale};
        } else if (end > begin) {
          g.x0 = xmin;
          g.y0 = ymin;
        }
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

  // Counting sort of each block's seeds by grid cell (serial inside a block, so stable),
  // placing the seeds and their input indices in tree order.
  tree.cell_begin = Kokkos::View<int*, MemorySpace>(
      Kokkos::view_alloc(space, "sdot::tree::cell_begin"), nb_cells + 1);
  Kokkos::View<int*, MemorySpace> cursor(
      Kokkos::view_alloc(space, Kokkos::WithoutInitializing, "sdot::tree::cell_cursor"), nb_cells);
  tree.index = Kokkos::View<int*, MemorySpace>(
      Kokkos::view_alloc(space, Kokkos::WithoutInitializing, "sdot::tree::index"), n);
  tree.seeds = Kokkos::View<Seed*, MemorySpace>(
      Kokkos::view_alloc(space, Kokkos::WithoutInitializing, "sdot::tree::seeds"), n);
  auto const cell_begin = tree.cell_begin;
  auto const index = tree.index;
  auto const seeds = tree.seeds;
  Kokkos::parallel_for(
      "sdot::tree::sort_by_cell", Policy(space, 0, nb_blocks), KOKKOS_LAMBDA(int b) {
        int const begin = t0.node_begin(nb_blocks + b, block_level);
        int const end = t0.node_begin(nb_blocks + b + 1, block_level);
        GridBlock const g = blocks(b);
        for (int k = begin; k < end; ++k) {
          Seed const p = along_curve(k);
          ++cell_begin(g.cell(g.column(p.x), g.row(p.y)));
        }
        int slot = begin;
        for (int c = g.first_cell; c < g.first_cell + g.cell_count(); ++c) {
          int const count = cell_begin(c);
          cell_begin(c) = slot;
          cursor(c) = slot;
          slot += count;
        }
        for (int k = begin; k < end; ++k) {
          Seed const p = along_curve(k);
          int const to = cursor(g.cell(g.column(p.x), g.row(p.y)))++;
          index(to) = hilbert(k);
          seeds(to) = p;
        }
        if (b == nb_blocks - 1)
          cell_begin(g.first_cell + g.cell_count()) = n;
      });
  compute_weight_bounds(space, tree);
  return tree;
}

} // namespace sdot::detail
