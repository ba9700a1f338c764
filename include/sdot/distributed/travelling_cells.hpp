#pragma once
// The distributed power diagram: travelling cells.
//
// The seeds are split into one box per rank (boxes.hpp). Each rank builds the cells of its
// seeds from the whole domain, cut by its own seeds. A cell that the seeds of another rank may
// still cut moves to the nearest such rank (its seed, and its vertices with the label of each
// edge), which cuts it further; copies of it then go to the other ranks that may still cut it,
// which answer with the seeds of their cuts, and the cell is cut by them all (TravellingCells::
// travel). Each measure then goes back to its seed's process. No seed is copied between
// ranks for the cells; an answer holds only the seeds of the edges it adds.
//
// With warm_start, a recomputation builds each box's round-0 cells (the domain cut by the box's
// own seeds) as one box builds its cells from the neighbours of the computation before
// (warm_cells.hpp): the cells of the box's seeds alone, certified, in slots that round 0 reads
// instead of searching. The rounds that follow are unchanged.

#include <loom/capacity.hpp>
#include <loom/detail/segments.hpp>
#include <loom/distribute.hpp>
#include <loom/ranks.hpp>
#include <loom/row_blocks.hpp>

#include <sdot/base/phase_clock.hpp>
#include <sdot/base/point_bounds.hpp>
#include <sdot/base/radix_sort.hpp>
#include <sdot/base/scan.hpp>
#include <sdot/base/views.hpp>
#include <sdot/distributed/boxes.hpp>
#include <sdot/distributed/rank_envelopes.hpp>
#include <sdot/geometry/box_cells.hpp>
#include <sdot/geometry/cell_kernel.hpp>
#include <sdot/geometry/cells.hpp>
#include <sdot/geometry/coarse_to_fine.hpp>
#include <sdot/geometry/kept_polygons.hpp>
#include <sdot/geometry/polygon_storage.hpp>
#include <sdot/geometry/warm_cells.hpp>
#include <sdot/points.hpp>

#include <cmath>
#include <map>
#include <optional>
#include <string>
#include <type_traits>
#include <vector>

namespace sdot::detail {

/// Arrays of the local ranks, one after the other: part l is [first(l), first(l+1)).
template <class T, class MemorySpace>
struct Concatenated {
  Kokkos::View<T*, MemorySpace> all;
  Kokkos::View<int*, MemorySpace> first; ///< [L+1]

  KOKKOS_INLINE_FUNCTION Kokkos::View<T*, MemorySpace> part(int l) const {
    return Kokkos::subview(all, Kokkos::make_pair(first(l), first(l + 1)));
  }
};

/// Trees of the local ranks, stored one after the other. When every local tree goes with the
/// travel step (TravelStep::given_trees), only the global indices, the seeds' lookup by global
/// index and the offsets are stored: the trees stay in their own arrays.
template <class MemorySpace>
struct Forest {
  Concatenated<Seed, MemorySpace> seeds; ///< tree order, local rank after local rank
  Concatenated<int, MemorySpace> gids;   ///< global index of each seed
  Concatenated<TreeNode, MemorySpace> nodes;
  Concatenated<GridBlock, MemorySpace> blocks;
  Concatenated<int, MemorySpace> cell_begin;
  Concatenated<double, MemorySpace> row_wmax;
  Concatenated<int, MemorySpace> finest_block;
  Concatenated<TreeNode, MemorySpace> quads;
  Concatenated<int, MemorySpace> quad_first;
  /// Per local rank, the global indices of its seeds in increasing order, and the tree slot
  /// of each: a global index's seed is found by bisection (slot_of_gid).
  Concatenated<int, MemorySpace> sorted_gids, slot_of_sorted;
  Kokkos::View<int*, MemorySpace> depth, finest_block_level; ///< [L]
  Kokkos::View<RingOffset*, MemorySpace> ring;               ///< the same for every tree
  int local_count = 0;

  /// The tree slot of the seed of global index `gid`, which local rank l holds.
  KOKKOS_INLINE_FUNCTION int slot_of_gid(int l, int gid) const {
    int lo = sorted_gids.first(l), hi = sorted_gids.first(l + 1);
    while (hi - lo > 1) {
      int const mid = lo + (hi - lo) / 2;
      if (sorted_gids.all(mid) <= gid)
        lo = mid;
      else
        hi = mid;
    }
    return slot_of_sorted.all(lo);
  }

  /// The tree of local rank l (views into the forest; usable in kernels).
  KOKKOS_INLINE_FUNCTION SeedTree<MemorySpace> tree(int l) const {
    SeedTree<MemorySpace> t;
    t.seeds = seeds.part(l);
    t.index = gids.part(l);
    t.nodes = nodes.part(l);
    t.size = seeds.first(l + 1) - seeds.first(l);
    t.depth = depth(l);
    t.finest_block_level = finest_block_level(l);
    t.blocks = blocks.part(l);
    t.finest_block = finest_block.part(l);
    t.cell_begin = cell_begin.part(l);
    t.row_wmax = row_wmax.part(l);
    t.quads = quads.part(l);
    t.quad_first = quad_first.part(l);
    t.ring = ring;
    return t;
  }
};

/// The rows that move a process's seeds to their boxes, read from its input: row i is
/// (x, y, w, global index) of seed i.
template <class MemorySpace>
struct SeedRows {
  ConstPoints<MemorySpace> positions;
  Kokkos::View<double const*, MemorySpace> weights;
  std::int64_t first_gid = 0;
  KOKKOS_INLINE_FUNCTION double operator()(std::int64_t i, std::int64_t c) const {
    return c < 2 ? positions(i, c) : c == 2 ? weights(i) : static_cast<double>(first_gid + i);
  }
};

/// A node of the tree over the ranks' boxes (the bisection's own tree): a leaf is one rank.
struct RankTreeNode {
  TreeNode box;
  int left, right; ///< children (-1 for a leaf)
  int rank;        ///< the rank of a leaf, -1 otherwise
  int parent = -1; ///< -1 for the root
};

/// The tree over the boxes of ranks [begin, end), children before parents; returns the root.
inline int build_rank_tree(std::vector<TreeNode> const& boxes, int begin, int end,
                           std::vector<RankTreeNode>& nodes) {
  if (end - begin == 1) {
    nodes.push_back({boxes[begin], -1, -1, begin});
    return static_cast<int>(nodes.size()) - 1;
  }
  int const mid = begin + (end - begin) / 2;
  int const left = build_rank_tree(boxes, begin, mid, nodes);
  int const right = build_rank_tree(boxes, mid, end, nodes);
  TreeNode const& a = nodes[left].box;
  TreeNode const& b = nodes[right].box;
  TreeNode box{a.xmin < b.xmin ? a.xmin : b.xmin, a.ymin < b.ymin ? a.ymin : b.ymin,
               a.xmax > b.xmax ? a.xmax : b.xmax, a.ymax > b.ymax ? a.ymax : b.ymax,
               a.wmax > b.wmax ? a.wmax : b.wmax};
  int const node = static_cast<int>(nodes.size());
  nodes.push_back({box, left, right, -1});
  nodes[left].parent = nodes[right].parent = node;
  return node;
}

/// Levels of each rank's tree below its root that every process keeps to judge whether that
/// rank's seeds may cut a cell (TravelStep::rank_may_cut), at most: 2^(levels+1) − 1 nodes
/// per rank. Level 8 leaves N / (256 ranks) seeds per node: at optimal-transport weights on
/// clustered seeds (cells far from their seeds), 2 ranks send 23 % of the cells instead of
/// 83 % with the root alone (docs/parallel.md); deeper levels gain little. The ranks'
/// envelopes, where known, are tested first, and send 0.9 %.
constexpr int max_rank_top_levels = 8;

/// The levels kept for `seeds` seeds over `ranks` ranks: nodes of the last level with 64 seeds
/// or more on average, and 2^16 nodes in all at most (6 MB on every process).
inline int rank_top_levels_for(int ranks, std::int64_t seeds) {
  int levels = max_rank_top_levels;
  while (levels > 0 && (std::int64_t(ranks) * (std::int64_t(2) << levels) > (1 << 16) ||
                        (std::int64_t(ranks) << levels) * 64 > seeds))
    --levels;
  return levels;
}

/// The top `levels` levels of `tree` below its root, in heap order (2^(levels+1) entries, entry
/// 0 unused). A tree of fewer levels repeats its leaves below them; one without seeds gives
/// empty nodes.
template <class MemorySpace>
std::vector<TreeNode> tree_top_nodes(SeedTree<MemorySpace> const& tree, int count, int levels) {
  double const inf = sdot::compat::infinity<double>();
  int const per_rank = 2 << levels;
  std::vector<TreeNode> top(per_rank, TreeNode{inf, inf, -inf, -inf, -inf});
  if (count == 0)
    return top;
  int const kept = tree.depth < levels ? tree.depth : levels;
  auto const host = Kokkos::create_mirror_view_and_copy(
      Kokkos::HostSpace(), Kokkos::subview(tree.nodes, std::make_pair(0, 2 << kept)));
  for (int k = 1; k < per_rank; ++k) {
    int level = 0;
    while ((2 << level) <= k)
      ++level;
    top[k] = host(k >> (level > kept ? level - kept : 0)); // below the tree's leaves: a leaf
  }
  return top;
}

/// Kinds of message.
enum MessageKind : int {
  message_traveller = 1, ///< a cell that moves on: the receiver cuts it and then owns it
  message_probe = 2,     ///< a copy of a cell: the receiver cuts it and answers with its cut
  message_answer = 3     ///< the seeds of the receiver's cut (count −1: it emptied the cell)
};

/// Layout of a message (a row of doubles): a header, then the cell's vertices relative to its
/// seed (x, y, edge label) or, in an answer, the seeds that cut (global index, x, y, w).
struct MessageLayout {
  int body; ///< doubles after the header: 3 per vertex, 4 per answer seed
  enum : int { kind = 0, gid, x, y, w, count, ref, from, header };
  KOKKOS_INLINE_FUNCTION int vertex(int k) const { return header + 3 * k; }
  KOKKOS_INLINE_FUNCTION int cut(int k) const { return header + 4 * k; }
  KOKKOS_INLINE_FUNCTION int cols() const { return header + body; }
  /// The doubles of message row `row` that hold something: what is sent of it.
  template <class Rows>
  KOKKOS_INLINE_FUNCTION static int used(Rows const& rows, int row) {
    int const items = static_cast<int>(rows(row, count));
    if (static_cast<int>(rows(row, kind)) == message_answer)
      return header + 4 * (items > 0 ? items : 0);
    return header + 3 * items;
  }
};

/// The cell of message row `row`, and its seed (not in a tree here).
template <class Rows>
KOKKOS_INLINE_FUNCTION CellSeed read_cell(Rows const& rows, int row, MessageLayout const& layout,
                                          Polygon& cell) {
  cell.size = 0;
  cell.max_radius2 = 0;
  int const nv = static_cast<int>(rows(row, MessageLayout::count));
  for (int v = 0; v < nv; ++v)
    cell.push(rows(row, layout.vertex(v)), rows(row, layout.vertex(v) + 1),
              static_cast<int>(rows(row, layout.vertex(v) + 2)));
  return CellSeed{rows(row, MessageLayout::x), rows(row, MessageLayout::y),
                  rows(row, MessageLayout::w), static_cast<int>(rows(row, MessageLayout::gid)), -1};
}

/// Result row of a cell finished away from its seed's process, sent there: result_cols values
/// without polygons. With polygons, the number of vertices follows, then the offset of its
/// vertices in the VertexHeap (in a row sent home: of its first vertex among those sent).
enum : int {
  result_gid = 0,
  result_area,
  result_cx,
  result_cy,
  result_cols,
  result_nb_vertices = result_cols,
  result_vertices, ///< heap offset, or first vertex (row sent home)
  result_cols_with_polygons
};

/// Columns of TravellingCells' box results: a box cell's area and centroid, by forest item.
enum : int { box_result_area = 0, box_result_cx, box_result_cy, box_result_cols };

/// The vertices of finished cells, appended in any order (each cell's outputs or result row
/// hold its offset): (x, y, edge label) per vertex. `used` counts what was asked for, so it may
/// pass the capacity: the round is then cut again with a heap of the size asked for.
template <class MemorySpace>
struct VertexHeap {
  Kokkos::View<double*, MemorySpace> values;
  Kokkos::View<std::int64_t, MemorySpace> used;

  /// Offset of `count` new values; they fit when offset + count ≤ values.extent(0).
  KOKKOS_INLINE_FUNCTION std::int64_t append(int count) const {
    return Kokkos::atomic_fetch_add(&used(), static_cast<std::int64_t>(count));
  }
};

/// Where the cells finished on this process go. The cell of one of this process's seeds is
/// written into its outputs (`home`, by input index: global index − first_gid); any other
/// cell into a result row (taken in any order), sent to its seed's process after the rounds.
/// With polygons, the vertices go to the heap, and the outputs (vertex count in
/// home.vertex_counts, offset in heap_first) or the row keep where.
template <class MemorySpace>
struct FinishedCells {
  using Rows = Kokkos::View<double**, Kokkos::LayoutRight, MemorySpace>;
  std::int64_t first_gid = 0; ///< of this process's first seed
  CellOutputs<MemorySpace> home;
  Kokkos::View<std::int64_t*, MemorySpace> heap_first; ///< by input index, with polygons
  Rows rows;
  Kokkos::View<int, MemorySpace> row_count; ///< rows written
  VertexHeap<MemorySpace> heap;
  bool polygons = false;

  /// Writes the result of a finished cell (emptied or not).
  KOKKOS_FUNCTION void write(CellSeed const& seed, Polygon const& cell, bool emptied) const {
    double area = 0, cx = seed.x, cy = seed.y;
    if (!emptied)
      cell.area_and_centroid(seed.x, seed.y, area, cx, cy);
    write(seed, cell, emptied, area, cx, cy);
  }

  /// write() with the cell's area and centroid (cx, cy) known.
  KOKKOS_FUNCTION void write(CellSeed const& seed, Polygon const& cell, bool emptied, double area,
                             double cx, double cy) const {
    int const nv = emptied ? 0 : cell.size;
    std::int64_t first = 0;
    if (polygons && nv > 0) {
      first = heap.append(3 * nv);
      // When the heap is too small, the round is cut again with a larger one.
      if (first + 3 * nv <= static_cast<std::int64_t>(heap.values.extent(0)))
        for (int v = 0; v < nv; ++v) {
          heap.values(first + 3 * v) = seed.x + cell.x(v);
          heap.values(first + 3 * v + 1) = seed.y + cell.y(v);
          heap.values(first + 3 * v + 2) = cell.label(v);
        }
    }
    std::int64_t const k = seed.index - first_gid;
    if (k >= 0 && k < static_cast<std::int64_t>(home.measures.extent(0))) {
      home.measures(k) = area;
      home.centroids(k, 0) = cx;
      home.centroids(k, 1) = cy;
      if (polygons) {
        home.vertex_counts(k) = nv;
        heap_first(k) = first;
      }
      return;
    }
    int const row = Kokkos::atomic_fetch_add(&row_count(), 1);
    rows(row, result_gid) = seed.index;
    rows(row, result_area) = area;
    rows(row, result_cx) = cx;
    rows(row, result_cy) = cy;
    if (polygons) {
      rows(row, result_nb_vertices) = nv;
      rows(row, result_vertices) = static_cast<double>(first);
    }
  }
};

/// Cell k's polygon into out's vertices and edge sources (its rows from out.polygon_offsets),
/// from `values` at `from`: (x, y, edge label) per vertex.
template <class MemorySpace, class Values>
KOKKOS_INLINE_FUNCTION void copy_polygon(CellOutputs<MemorySpace> const& out, std::int64_t k,
                                         Values const& values, std::int64_t from) {
  int const first = out.polygon_offsets(k);
  int const nv = out.polygon_offsets(k + 1) - first;
  for (int v = 0; v < nv; ++v) {
    out.polygon_vertices(first + v, 0) = values(from + 3 * v);
    out.polygon_vertices(first + v, 1) = values(from + 3 * v + 1);
    out.polygon_labels(first + v) = static_cast<int>(values(from + 3 * v + 2));
  }
}

template <class MemorySpace>
struct TravelStatistics {
  int rounds = 0;
  long travelled_cells = 0; ///< messages sent by all ranks (cells, copies and answers)
  long bytes_sent = 0;      ///< all ranks: messages (values and lengths), seeds and results that
                            ///< go to another process (PowerDiagramStatistics::bytes_sent)
  /// Over all the processes: the passes that cut again, with larger polygons, the cells that
  /// did not fit theirs (cut_again_until_fit), and the rounds cut again with a larger vertex
  /// heap
  int reruns = 0;
  int msg_capacity = 0, inbox_capacity = 0;
  /// warm_start or coarse_to_fine, all ranks: round-0 cells certified from their neighbours or
  /// their candidates
  long warm_cells = 0;
  int warm_rounds = 0;   ///< most certifications of one box that sent cells to search
  int coarse_levels = 0; ///< coarse_to_fine: most coarser diagrams built for one box
};

/// What an item of a round does once cut.
enum ItemAction : int {
  action_none = 0, ///< an answer (settled with its cell), or a copy that nothing here cuts
  action_finished, ///< its result is written (FinishedCells)
  action_travel,   ///< a rank's own cell moves to the nearest other rank that may cut it
  action_probe,    ///< a cell that moved: copies go to every other rank that may still cut
                   ///< it, and their answers come back here
  action_answer    ///< a copy cut here: the seeds of the cut go back to its sender
};

/// One step of a round: each item (a seed of a local rank at round 0, a received message
/// later) is cut by the seeds of its local rank and decides what to do (ItemAction); the
/// second pass, over the items that send, cuts them again and packs their messages.
template <class MemorySpace>
struct TravelStep {
  using Rows = Kokkos::View<double**, Kokkos::LayoutRight, MemorySpace>;
  Forest<MemorySpace> forest;
  /// The trees of the first local ranks, given with the step: Forest::tree(l) builds a tree's
  /// dozen subviews for each cell (4–5 % of a round at 8 boxes, 3 % at 64). 64 in host memory;
  /// 8 elsewhere, where the step is a kernel argument of bounded size.
  static constexpr int max_given_trees =
      std::is_same<MemorySpace, Kokkos::HostSpace>::value ? 64 : 8;
  SeedTree<MemorySpace> given_trees[max_given_trees];
  int nb_given_trees = 0;
  ConstPoints<MemorySpace> domain_vertices;
  Kokkos::View<int const*, MemorySpace> domain_labels;
  Kokkos::View<RankTreeNode const*, MemorySpace> rank_tree; ///< every rank's box; root last
  Kokkos::View<int const*, MemorySpace> rank_leaves;        ///< each rank's node in rank_tree
  /// The top levels of every rank's tree (rank_top_levels_for()): rank q's node k (heap order,
  /// 1 ≤ k < 2^(levels+1)) at q · 2^(levels+1) + k.
  Kokkos::View<TreeNode const*, MemorySpace> rank_top_nodes;
  int rank_top_levels = 0; ///< levels below the root in rank_top_nodes
  /// The lower envelope of power of every node of rank_tree (a rank, or the ranks of a
  /// subtree together: envelope k is node k's) on a grid, where the boxes' first-round cells
  /// gave them (inactive otherwise): tested before rank_top_nodes.
  RankEnvelopes<MemorySpace> envelopes;
  /// PowerDiagramOptions::abandon_below: every polygon of a cell holds the final cell, so one
  /// of less area, at any round, means a final cell below the threshold.
  AbandonBelow<MemorySpace> abandon;
  /// warm_start: the round-0 cell of each forest item (its box's seeds alone), edges labelled
  /// by box row; `row_gids` gives the global index of forest row first(l) + row. Capacity 0,
  /// or a cell without a slot: round 0 searches.
  SlotPolygons<MemorySpace> box_cells;
  /// Where box_cells holds an item's cell: its area and centroid as its box computed them
  /// (box_result_area, box_result_cx, box_result_cy), which round 0 does not compute again.
  Kokkos::View<double const**, Kokkos::LayoutRight, MemorySpace> box_results;
  Kokkos::View<int const*, MemorySpace> row_gids;
  int first_rank;     ///< global rank of local rank 0
  bool from_messages; ///< items are messages, not seeds
  Kokkos::View<double const**, Kokkos::LayoutRight, MemorySpace> inbox;
  Kokkos::View<int const*, MemorySpace> inbox_first; ///< [L+1]
  MessageLayout layout;                              ///< of the inbox
  // Decision pass outputs, per item.
  Kokkos::View<int*, MemorySpace> action;
  Kokkos::View<int*, MemorySpace> messages; ///< rows the item sends
  Kokkos::View<int*, MemorySpace> needed;   ///< doubles its rows need after the header
  /// By item (decision pass) or by sender (packing pass): 1 if the cell did not fit its
  /// polygon (cut_again_until_fit runs it again).
  Kokkos::View<int*, MemorySpace> overflowed;
  FinishedCells<MemorySpace> finished;
  /// The cells of the items that send, kept by the decision pass for the packing pass (which
  /// otherwise cuts them again): row kept_slot(item) of `kept` (−1: none), written as a message
  /// row; slots are taken in any order, while they last.
  Rows kept;
  Kokkos::View<int, MemorySpace> kept_count;
  Kokkos::View<int*, MemorySpace> kept_slot;
  // Packing pass (when `outbox` is allocated): item senders(k) writes rows
  // [message_first(k), message_first(k + 1)), and its kept cell at pending row
  // pending_index(k) when it sends copies.
  Kokkos::View<int const*, MemorySpace> senders;
  Kokkos::View<int const*, MemorySpace> message_first;
  Kokkos::View<int const*, MemorySpace> pending_index;
  Rows outbox;
  MessageLayout out_layout;
  Kokkos::View<int*, MemorySpace> dest;
  Rows pending;

  KOKKOS_FUNCTION void operator()(Polygon& cell, int k) const {
    if (outbox.extent(0))
      pack(cell, k);
    else
      decide(cell, k);
  }

  /// The item's local rank, its seed and the kind of message it is (0 at round 0); a received
  /// cell is read into `cell`, a round-0 cell is left to own_cut().
  KOKKOS_FUNCTION int load(Polygon& cell, int item, CellSeed& seed, int& kind) const {
    if (!from_messages) {
      int const l = loom::detail::segment_of(forest.seeds.first, forest.local_count, item);
      int const slot = item - forest.seeds.first(l);
      Seed const s = l < nb_given_trees ? given_trees[l].seeds(slot) : forest.seeds.all(item);
      seed = CellSeed{s.x, s.y, s.w, forest.gids.all(item), slot};
      kind = 0;
      return l;
    }
    int const l = loom::detail::segment_of(inbox_first, forest.local_count, item);
    kind = static_cast<int>(inbox(item, MessageLayout::kind));
    if (kind == message_answer)
      return l;
    seed = read_cell(inbox, item, layout, cell);
    return l;
  }

  /// Calls f(rank, squared distance) for the ranks other than `rank` and `visited` whose seeds
  /// may cut the cell, in a fixed order: the subtrees of the tree over the ranks' boxes that
  /// hang off the path from `rank`'s leaf to the root, the lowest first, each walked depth
  /// first, nearest child first, pruned vertex by vertex. Skips the nodes at distance² above
  /// `beyond` (which f may lower); stops when f returns false. The boxes on the path hold the
  /// seed, so their tests would rule nothing out.
  template <class F>
  KOKKOS_FUNCTION void for_each_cutting_rank(Polygon const& cell, CellSeed const& seed, int rank,
                                             int visited, double const& beyond, F const& f) const {
    constexpr int max_stack = 64;
    int stack[max_stack];
    for (int child = rank_leaves(rank), parent = rank_tree(child).parent; parent >= 0;
         child = parent, parent = rank_tree(parent).parent) {
      RankTreeNode const& up = rank_tree(parent);
      int sp = 0;
      stack[sp++] = up.left == child ? up.right : up.left;
      while (sp > 0) {
        int const k = stack[--sp];
        RankTreeNode const& node = rank_tree(k);
        double const d2 = box_distance2(node.box, seed.x, seed.y);
        if (d2 > beyond || !node_may_cut(d2, seed.w, node.box.wmax, cell.max_radius2))
          continue;
        if (node.rank >= 0) {
          if (node.rank != visited && envelopes.may_cut(cell, seed, k) &&
              rank_may_cut(cell, seed, node.rank) && !f(node.rank, d2))
            return;
          continue;
        }
        // The envelope of the subtree's ranks together rules them all out at once (tested
        // from the vertex nearest to the subtree, where a rank that may cut shows first).
        if (!box_may_cut_vertices(cell, seed, node.box) ||
            (envelopes.active() &&
             !envelopes.may_cut(cell, seed, k, vertex_nearest(cell, seed, node.box))))
          continue;
        double const dl = box_distance2(rank_tree(node.left).box, seed.x, seed.y);
        double const dr = box_distance2(rank_tree(node.right).box, seed.x, seed.y);
        bool const left_first = dl <= dr;
        stack[sp++] = left_first ? node.right : node.left;
        stack[sp++] = left_first ? node.left : node.right;
      }
    }
  }

  /// The vertex of the cell nearest to the centre of `box`: where the seeds of the box are
  /// likeliest to cut it.
  KOKKOS_INLINE_FUNCTION static int vertex_nearest(Polygon const& cell, CellSeed const& seed,
                                                   TreeNode const& box) {
    double const cx = (box.xmin + box.xmax) / 2 - seed.x, cy = (box.ymin + box.ymax) / 2 - seed.y;
    int nearest = 0;
    double least = sdot::compat::infinity<double>();
    for (int k = 0; k < cell.size; ++k) {
      double const dx = cell.x(k) - cx, dy = cell.y(k) - cy, d2 = dx * dx + dy * dy;
      nearest = d2 < least ? k : nearest;
      least = d2 < least ? d2 : least;
    }
    return nearest;
  }

  /// Whether a seed of rank q may cut the cell: the top levels of q's tree walked depth first
  /// with the kernel's bounds (each node's bound along the weights' trend, where it has one), a
  /// node that passes them saying yes when it is of the last level or its weights have no
  /// trend. Tighter than q's root alone where q's seeds mix regions of different weights
  /// (clusters at transport weights).
  KOKKOS_FUNCTION bool rank_may_cut(Polygon const& cell, CellSeed const& seed, int q) const {
    int const per_rank = 2 << rank_top_levels;
    int const first = q * per_rank;
    int stack[max_rank_top_levels + 2]; // depth first: one pending sibling per level
    int sp = 0;
    stack[sp++] = 1;
    while (sp > 0) {
      int const k = stack[--sp];
      TreeNode const& box = rank_top_nodes(first + k);
      if (!node_may_cut(box_distance2(box, seed.x, seed.y), seed.w, box.wmax, cell.max_radius2) ||
          !box_may_cut_vertices(cell, seed, box))
        continue;
      // The last level, or a node whose weights do not move its cells (its children's box
      // bounds are barely tighter, and the walk would cost more than the copies it saves).
      if (2 * k >= per_rank || !box.trend)
        return true;
      // The nearer child first: a rank that cuts is found sooner.
      bool const left_first = box_distance2(rank_top_nodes(first + 2 * k), seed.x, seed.y) <=
                              box_distance2(rank_top_nodes(first + 2 * k + 1), seed.x, seed.y);
      stack[sp++] = left_first ? 2 * k + 1 : 2 * k;
      stack[sp++] = left_first ? 2 * k : 2 * k + 1;
    }
    return false;
  }

  /// The ranks that may cut the cell, counted up to limit + 1.
  KOKKOS_FUNCTION int count_cutting_ranks(Polygon const& cell, CellSeed const& seed, int rank,
                                          int visited, int limit) const {
    int count = 0;
    double const everywhere = sdot::compat::infinity<double>();
    for_each_cutting_rank(cell, seed, rank, visited, everywhere, [&](int, double) {
      ++count;
      return count <= limit;
    });
    return count;
  }

  /// The nearest rank that may cut the cell (the lowest among equals).
  KOKKOS_FUNCTION int nearest_cutting_rank(Polygon const& cell, CellSeed const& seed, int rank,
                                           int visited) const {
    int nearest = -1;
    double nearest_d2 = sdot::compat::infinity<double>();
    for_each_cutting_rank(cell, seed, rank, visited, nearest_d2, [&](int q, double d2) {
      if (d2 < nearest_d2 || q < nearest) { // d2 ≤ nearest_d2 here
        nearest = q;
        nearest_d2 = d2;
      }
      return true;
    });
    return nearest;
  }

  /// The number of edges of a received copy, once cut here, that its message did not have:
  /// edges of this rank's seeds (`f(k)` for each, k the vertex that starts it).
  template <class F>
  KOKKOS_FUNCTION int new_edges(Polygon const& cell, int item, F const& f) const {
    int const nv = static_cast<int>(inbox(item, MessageLayout::count));
    int count = 0;
    for (int k = 0; k < cell.size; ++k) {
      int const l = cell.label(k);
      bool known = l < 0;
      for (int v = 0; v < nv && !known; ++v)
        known = static_cast<int>(inbox(item, layout.vertex(v) + 2)) == l;
      if (!known) {
        f(k, count);
        ++count;
      }
    }
    return count;
  }

  KOKKOS_FUNCTION void decide(Polygon& cell, int item) const {
    action(item) = action_none;
    messages(item) = 0;
    needed(item) = 0;
    overflowed(item) = 0;
    kept_slot(item) = -1;
    if (abandon.given_up())
      return;
    CellSeed seed;
    int kind;
    int const l = load(cell, item, seed, kind);
    if (kind == message_answer)
      return;
    int const rank = first_rank + l;
    ClipResult const r = cut_by_rank(cell, seed, l, item, kind);
    if (r == ClipResult::overflow) {
      overflowed(item) = 1;
      return;
    }
    bool const emptied = r == ClipResult::emptied;
    // A round-0 cell from its slot has its area and centroid from its box.
    bool const known =
        kind == 0 && !emptied && box_cells.capacity > 0 && box_cells.counts(item) > 0;
    double area = 0, cx = seed.x, cy = seed.y;
    if (known) {
      area = box_results(item, box_result_area);
      cx = box_results(item, box_result_cx);
      cy = box_results(item, box_result_cy);
    }
    if (abandon.active()) {
      double mx, my;
      if (!emptied && !known)
        cell.integrals(area, mx, my);
      abandon.check(area);
    }
    if (kind == message_probe) {
      int const count = emptied ? 1 : new_edges(cell, item, [](int, int) {});
      if (count > 0) {
        action(item) = action_answer;
        messages(item) = 1;
        needed(item) = emptied ? 0 : 4 * count;
        if (!emptied)
          keep(cell, seed, item);
      }
      return;
    }
    // A rank's own cell only needs to know whether any other rank may cut it.
    int const visited =
        kind == message_traveller ? static_cast<int>(inbox(item, MessageLayout::from)) : -1;
    int const cutting =
        emptied ? 0 : count_cutting_ranks(cell, seed, rank, visited, kind == 0 ? 0 : 1 << 30);
    if (cutting == 0) {
      action(item) = action_finished;
      if (known)
        finished.write(seed, cell, emptied, area, cx, cy);
      else
        finished.write(seed, cell, emptied);
      return;
    }
    action(item) = kind == 0 ? action_travel : action_probe;
    messages(item) = kind == 0 ? 1 : cutting;
    needed(item) = 3 * cell.size;
    keep(cell, seed, item);
  }

  KOKKOS_FUNCTION void keep(Polygon const& cell, CellSeed const& seed, int item) const {
    if (MessageLayout::header + 3 * cell.size > static_cast<int>(kept.extent(1)))
      return;
    int const slot = Kokkos::atomic_fetch_add(&kept_count(), 1);
    if (slot >= static_cast<int>(kept.extent(0)))
      return;
    kept_slot(item) = slot;
    write_cell(kept, slot, 0, seed, cell, -1, -1);
  }

  /// The cell cut by the seeds of local rank l (the search of its tree).
  KOKKOS_FUNCTION ClipResult clip_by_rank_tree(Polygon& cell, CellSeed const& seed, int l) const {
    if (l < nb_given_trees)
      return clip_by_tree(cell, seed, given_trees[l]);
    return clip_by_tree(cell, seed, forest.tree(l));
  }

  /// The tree of local rank l: given with the step, or views into the forest.
  KOKKOS_FUNCTION SeedTree<MemorySpace> local_tree(int l) const {
    return l < nb_given_trees ? given_trees[l] : forest.tree(l);
  }

  /// A round-0 item's cell, the domain cut by its box's seeds: read from its slot in
  /// `box_cells`, or searched.
  KOKKOS_FUNCTION ClipResult own_cut(Polygon& cell, CellSeed const& seed, int l, int item) const {
    int const size = box_cells.capacity > 0 ? box_cells.counts(item) : -1;
    if (size < 0) {
      start_from_domain(cell, seed.x, seed.y, domain_vertices, domain_labels);
      return clip_by_rank_tree(cell, seed, l);
    }
    int const first = forest.seeds.first(l);
    start_from_slot(cell, box_cells, item, [&](int label) { return row_gids(first + label); });
    return size == 0 ? ClipResult::emptied : ClipResult::clipped;
  }

  /// The item's cell cut by the seeds of its local rank: a round-0 item's from `box_cells`
  /// (own_cut), a received cell's by the search.
  KOKKOS_FUNCTION ClipResult cut_by_rank(Polygon& cell, CellSeed const& seed, int l, int item,
                                         int kind) const {
    return kind == 0 ? own_cut(cell, seed, l, item) : clip_by_rank_tree(cell, seed, l);
  }

  /// The item's cut cell: kept by the decision pass, or cut again.
  KOKKOS_FUNCTION ClipResult cut(Polygon& cell, CellSeed const& seed, int l, int item,
                                 int kind) const {
    int const slot = kept_slot(item);
    if (slot < 0)
      return cut_by_rank(cell, seed, l, item, kind);
    read_cell(kept, slot, MessageLayout{static_cast<int>(kept.extent(1)) - MessageLayout::header},
              cell);
    return ClipResult::clipped;
  }

  /// Writes the cell into message row `row` of `rows` (vertex columns do not depend on the
  /// row's width).
  template <class Out>
  KOKKOS_FUNCTION void write_cell(Out const& rows, int row, int kind, CellSeed const& seed,
                                  Polygon const& cell, int ref, int rank) const {
    rows(row, MessageLayout::kind) = kind;
    rows(row, MessageLayout::gid) = seed.index;
    rows(row, MessageLayout::x) = seed.x;
    rows(row, MessageLayout::y) = seed.y;
    rows(row, MessageLayout::w) = seed.w;
    rows(row, MessageLayout::count) = cell.size;
    rows(row, MessageLayout::ref) = ref;
    rows(row, MessageLayout::from) = rank;
    for (int v = 0; v < cell.size; ++v) {
      rows(row, out_layout.vertex(v)) = cell.x(v);
      rows(row, out_layout.vertex(v) + 1) = cell.y(v);
      rows(row, out_layout.vertex(v) + 2) = cell.label(v);
    }
  }

  KOKKOS_FUNCTION void pack(Polygon& cell, int k) const {
    int const item = senders(k);
    CellSeed seed;
    int kind;
    int const l = load(cell, item, seed, kind);
    int const rank = first_rank + l;
    ClipResult const r = cut(cell, seed, l, item, kind);
    overflowed(k) = r == ClipResult::overflow;
    if (r == ClipResult::overflow) // cut again with a larger polygon
      return;
    int const row = message_first(k);
    if (kind == message_probe) { // the answer
      outbox(row, MessageLayout::kind) = message_answer;
      outbox(row, MessageLayout::ref) = inbox(item, MessageLayout::ref);
      dest(row) = static_cast<int>(inbox(item, MessageLayout::from));
      if (r == ClipResult::emptied) {
        outbox(row, MessageLayout::count) = -1;
        return;
      }
      SeedTree<MemorySpace> const tree = local_tree(l);
      int const count = new_edges(cell, item, [&](int v, int c) {
        int const gid = cell.label(v);
        Seed const s = tree.seeds(forest.slot_of_gid(l, gid));
        outbox(row, out_layout.cut(c)) = gid;
        outbox(row, out_layout.cut(c) + 1) = s.x;
        outbox(row, out_layout.cut(c) + 2) = s.y;
        outbox(row, out_layout.cut(c) + 3) = s.w;
      });
      outbox(row, MessageLayout::count) = count;
      return;
    }
    int const visited =
        kind == message_traveller ? static_cast<int>(inbox(item, MessageLayout::from)) : -1;
    if (action(item) == action_travel) {
      write_cell(outbox, row, message_traveller, seed, cell, -1, rank);
      dest(row) = nearest_cutting_rank(cell, seed, rank, visited);
      return;
    }
    int const p = pending_index(k);
    write_cell(pending, p, message_probe, seed, cell, p, rank);
    int copy = row;
    double const everywhere = sdot::compat::infinity<double>();
    for_each_cutting_rank(cell, seed, rank, visited, everywhere, [&](int q, double) {
      write_cell(outbox, copy, message_probe, seed, cell, p, rank);
      dest(copy) = q;
      ++copy;
      return true;
    });
  }
};

/// Finishes the cells that sent copies two rounds ago: each is cut by the seeds of the
/// answers, in the order of the answers (grouped by cell, in arrival order).
template <class MemorySpace>
struct SettleStep {
  using Rows = Kokkos::View<double**, Kokkos::LayoutRight, MemorySpace>;
  Rows pending; ///< the cells, as their copies' messages
  MessageLayout pending_layout;
  Kokkos::View<double const**, Kokkos::LayoutRight, MemorySpace> inbox;
  MessageLayout layout;                               ///< of the inbox
  Kokkos::View<int const*, MemorySpace> answers;      ///< inbox rows of answers, by cell
  Kokkos::View<int const*, MemorySpace> answer_first; ///< [pending + 1]
  Kokkos::View<int*, MemorySpace> overflowed;
  FinishedCells<MemorySpace> finished;

  KOKKOS_FUNCTION void operator()(Polygon& cell, int p) const {
    CellSeed const seed = read_cell(pending, p, pending_layout, cell);
    overflowed(p) = 0;
    ClipResult result = ClipResult::unchanged;
    for (int a = answer_first(p); a < answer_first(p + 1); ++a) {
      int const row = answers(a);
      int const count = static_cast<int>(inbox(row, MessageLayout::count));
      if (count < 0) {
        result = ClipResult::emptied;
        break;
      }
      bool stop = false;
      for (int c = 0; c < count && !stop; ++c) {
        Seed const other{inbox(row, layout.cut(c) + 1), inbox(row, layout.cut(c) + 2),
                         inbox(row, layout.cut(c) + 3)};
        double const dx = other.x - seed.x, dy = other.y - seed.y;
        stop = clip_by_other(cell, seed, static_cast<int>(inbox(row, layout.cut(c))),
                             dx * dx + dy * dy, other, result);
      }
      if (stop)
        break;
    }
    if (result == ClipResult::overflow) {
      overflowed(p) = 1;
      return;
    }
    finished.write(seed, cell, result == ClipResult::emptied);
  }
};

/// The distributed computation of this process's part of the diagram (collective).
template <class ExecutionSpace>
class TravellingCells {
public:
  using memory_space = typename ExecutionSpace::memory_space;
  using Policy = Kokkos::RangePolicy<ExecutionSpace>;
  using Rows = Kokkos::View<double**, Kokkos::LayoutRight, memory_space>;

  TravellingCells(ExecutionSpace const& space, loom::Ranks ranks,
                  ConstPoints<memory_space> positions,
                  Kokkos::View<double const*, memory_space> weights,
                  ConstPoints<memory_space> domain_vertices,
                  Kokkos::View<int const*, memory_space> domain_labels, double domain_area,
                  double domain_length, int leaf_size, int msg_capacity, int inbox_capacity,
                  int kept_vertices_per_seed)
      : space_(space), ranks_(std::move(ranks)), positions_(positions), weights_(weights),
        domain_vertices_(domain_vertices), domain_labels_(domain_labels), domain_area_(domain_area),
        domain_length_(domain_length), leaf_size_(leaf_size), msg_capacity_(msg_capacity),
        inbox_capacity_(inbox_capacity), kept_vertices_per_seed_(kept_vertices_per_seed) {}

  /// Measures and centroids of this process's seeds; `phases` times the boxes, their indexes
  /// ("tree"), the boxes' first-round cells (`warm_start`), the cells and the results.
  /// `warm_start`: the round-0 cells from the neighbours of the last run's
  /// (PowerDiagramOptions::warm_start). `coarse`: where each box's round-0 cells come from
  /// coarser diagrams (PowerDiagramOptions::coarse_to_fine).
  CellOutputs<memory_space> run(PhaseClock& phases, bool with_polygons = false,
                                double abandon_below = -sdot::compat::infinity<double>(),
                                bool warm_start = false, CoarseToFineChoice const& coarse = {}) {
    with_polygons_ = with_polygons;
    abandoned_ = false;
    abandon_ = AbandonBelow<memory_space>{};
    if (abandon_below > -sdot::compat::infinity<double>()) {
      abandon_.raised =
          Kokkos::View<int, memory_space>(Kokkos::view_alloc(space_, "sdot::travel::abandon"));
      abandon_.below = abandon_below;
    }
    sdot::compat::ScopedRegion region("sdot::travelling_cells");
    int const n = static_cast<int>(positions_.extent(0));
    // Global numbering: this process's seeds follow those of the processes before it.
    seed_blocks_ = loom::RowBlocks(ranks_, n);
    std::int64_t const first_gid = seed_blocks_.begin();
    std::int64_t const total = seed_blocks_.global_size();
    if (total >= (std::int64_t(1) << 31) - 1)
      throw std::invalid_argument("sdot: more than 2^31 - 2 seeds are not supported yet");

    if (forest_.local_count == 0) // no boxes yet
      build_boxes_and_trees(phases, first_gid, total);
    else if (reweight_)
      reweight_boxes_and_trees(phases);
    else { // the boxes and their indexes as they are
      phases.end("boxes");
      phases.end("tree");
    }
    reweight_ = false;

    box_cells_ = SlotPolygons<memory_space>{};
    box_warm_cells_ = 0;
    box_warm_rounds_ = 0;
    box_coarse_levels_ = 0;
    envelopes_ = RankEnvelopes<memory_space>{};
    if (build_box_cells(warm_start, coarse) || warm_start) {
      space_.fence();
      phases.end("box_cells");
    }
    statistics_ = TravelStatistics<memory_space>{};
    statistics_.bytes_sent = bytes_sent_seeds_;
    polygon_passes_ = 0;
    // A computation given up in some box is given up everywhere before the rounds: the other
    // processes neither wait for it through round 0 nor compute the bounds and envelopes that
    // only the rounds read.
    Rows results;
    if (given_up_anywhere()) {
      abandoned_ = true;
    } else {
      for (int l = 0; l < ranks_.local_count(); ++l)
        update_box_bounds(l);
      if (rank_trees_stale_)
        build_rank_trees();
      build_rank_envelopes();
      allocate_home_outputs(n);
      results = travel();
    }
    statistics_.warm_cells = box_warm_cells_;
    statistics_.warm_rounds = box_warm_rounds_;
    statistics_.coarse_levels = box_coarse_levels_;
    statistics_.msg_capacity = msg_capacity_.value();
    statistics_.inbox_capacity = inbox_capacity_.value();
    space_.fence();
    phases.end("cells");
    if (abandoned_) { // on every process: no result is sent home
      CellOutputs<memory_space> out;
      out.measures = Kokkos::View<double*, memory_space>(
          Kokkos::view_alloc(space_, "sdot::travel::abandoned_measures"), n);
      out.centroids =
          Points<memory_space>(Kokkos::view_alloc(space_, "sdot::travel::abandoned_centroids"), n);
      return out;
    }

    CellOutputs<memory_space> out = send_results_home(results, n);
    space_.fence();
    phases.end("results");
    // Traffic over all the processes.
    constexpr int entries = 6;
    auto traffic = ranks_.allgather(std::vector<long>{
        statistics_.travelled_cells, statistics_.bytes_sent, statistics_.warm_cells,
        static_cast<long>(statistics_.warm_rounds), static_cast<long>(polygon_passes_),
        static_cast<long>(statistics_.coarse_levels)});
    statistics_.travelled_cells = statistics_.bytes_sent = statistics_.warm_cells = 0;
    for (int p = 0; p < ranks_.process_count(); ++p) {
      statistics_.travelled_cells += traffic[entries * p];
      statistics_.bytes_sent += traffic[entries * p + 1];
      statistics_.warm_cells += traffic[entries * p + 2];
      statistics_.warm_rounds =
          std::max(statistics_.warm_rounds, static_cast<int>(traffic[entries * p + 3]));
      statistics_.reruns += static_cast<int>(traffic[entries * p + 4]);
      statistics_.coarse_levels =
          std::max(statistics_.coarse_levels, static_cast<int>(traffic[entries * p + 5]));
    }
    return out;
  }

  /// New weights for the same seeds (this process's, in its input order): the next run keeps
  /// the boxes, which depend on the positions only, and their indexes, whose weight bounds it
  /// computes again. Its results are those of a new TravellingCells, bit for bit.
  void set_weights(Kokkos::View<double const*, memory_space> weights) {
    weights_ = weights;
    reweight_ = true;
  }
  /// Whether the last run kept the boxes and indexes of the one before (set_weights()).
  bool boxes_kept() const { return boxes_kept_; }

  TravelStatistics<memory_space> const& statistics() const { return statistics_; }
  loom::Capacity const& msg_capacity() const { return msg_capacity_; }
  /// The room per seed for kept vertices, grown to what a round needed.
  int kept_vertices_per_seed() const { return kept_vertices_per_seed_; }
  /// Whether the last run gave up (its abandon_below), on every process alike.
  bool abandoned() const { return abandoned_; }

  // The steps below are public only because CUDA's extended lambdas cannot live in private
  // member functions; TravellingCells is an implementation detail of PowerDiagram.

  /// The boxes (phase "boxes": the bisection and the seeds moved to their boxes), then each
  /// local box's index and the trees over the ranks (phase "tree").
  void build_boxes_and_trees(PhaseClock& phases, std::int64_t first_gid, std::int64_t total) {
    auto const mine = move_seeds_to_boxes(first_gid, total);
    space_.fence();
    phases.end("boxes");
    int const local = ranks_.local_count();
    forest_.local_count = local;
    rank_top_levels_ = rank_top_levels_for(ranks_.size(), total);
    PointBounds const domain =
        point_bounds(space_, "sdot::travel::domain_bounds", domain_vertices_);
    envelope_grid_ =
        envelope_grid_for(ranks_.size(), total, domain.xmin, domain.ymin, domain.xmax, domain.ymax);
    boxes_.assign(local, BoxIndex{});
    box_rows_ = mine.offsets;
    for (int l = 0; l < local; ++l) {
      int const begin = static_cast<int>(mine.offsets[l]),
                count = static_cast<int>(mine.offsets[l + 1] - begin);
      // The cells that leave a box of m uniform seeds at round 0 (about 5 √m: those along its
      // sides), with room to spare: the decision pass keeps them for packing.
      kept_slots_ += std::min(count, 64 + 8 * static_cast<int>(std::ceil(std::sqrt(count))));
      boxes_[l] = build_box_index(mine.rows, begin, count);
    }
    assemble_forest(boxes_);
    box_bounds_stale_.assign(local, 0);
    build_rank_trees();
    boxes_kept_ = false;
    space_.fence();
    phases.end("tree");
  }

  /// The weights of set_weights() moved to the boxes by the seeds' plan (the same
  /// destinations, so the same order; no sort, no exchange of counts), and each box's index
  /// given them (phases "boxes" and "tree"). Their weight bounds, and the trees over the ranks
  /// built from them, wait for the boxes' cells (update_box_bounds(), run()): a computation
  /// that gives up there (abandon_below) never needs them.
  void reweight_boxes_and_trees(PhaseClock& phases) {
    auto const weights = weights_;
    auto const mine = seeds_to_boxes_->template distribute<double>(
        1, KOKKOS_LAMBDA(std::int64_t i, std::int64_t) { return weights(i); });
    bytes_sent_seeds_ = moved_seeds_ * static_cast<long>(sizeof(double));
    space_.fence();
    phases.end("boxes");
    for (int l = 0; l < ranks_.local_count(); ++l) {
      int const begin = static_cast<int>(box_rows_[l]),
                count = static_cast<int>(box_rows_[l + 1] - begin);
      Kokkos::View<double*, memory_space> w(
          Kokkos::view_alloc(space_, Kokkos::WithoutInitializing, "sdot::travel::box_weights"),
          count);
      auto const r = mine.rows;
      Kokkos::parallel_for(
          "sdot::travel::unpack_weights", Policy(space_, 0, count),
          KOKKOS_LAMBDA(int i) { w(i) = r(begin + i, 0); });
      set_seed_weights(space_, boxes_[l].tree, Kokkos::View<double const*, memory_space>(w));
      box_bounds_stale_[l] = 1;
    }
    rank_trees_stale_ = true;
    boxes_kept_ = true;
    space_.fence();
    phases.end("tree");
  }

  /// The round-0 cells of each local box (the domain cut by the box's seeds alone) into
  /// box_cells_, by forest item, each box as one box builds its cells (build_one_box_cells()):
  /// with `warm_start`, from the box's earlier neighbours, certified, or else by the search, each
  /// box keeping its new graph for the next run; without it, only the boxes whose cells come
  /// from coarser diagrams (where `coarse` says so, certified) have cells here: round 0 searches
  /// the others, deciding where each cell goes as it builds it, without slots. Returns whether
  /// a box built cells here or built coarser diagrams for them. A cell below abandon_below stops
  /// the pass (each cell holds its final cell); the first round then gives up on every process, and
  /// the graphs of the last complete pass are kept.
  bool build_box_cells(bool warm_start, CoarseToFineChoice const& coarse) {
    sdot::compat::ScopedRegion region("sdot::travel::box_cells");
    int const local = ranks_.local_count();
    if (box_graphs_.size() != std::size_t(local))
      number_box_rows();
    BoxCellsOptions options;
    options.vertex_capacity = polygon_capacity();
    options.leaf_size = leaf_size_;
    options.coarse = coarse;
    options.warm_start = warm_start;
    options.keep_polygons = true; // round 0 reads them
    options.search_uncertified = warm_start;
    options.domain_area = domain_area_;
    options.domain_length = domain_length_;
    std::vector<SlotPolygons<memory_space>> kept(local);
    if (box_results_.extent(0) != std::size_t(local_seeds()))
      box_results_ = Kokkos::View<double**, Kokkos::LayoutRight, memory_space>(
          Kokkos::view_alloc(space_, Kokkos::WithoutInitializing, "sdot::travel::box_results"),
          local_seeds(), box_result_cols);
    bool worked = false;
    for (int l = 0; l < local; ++l) {
      SeedTree<memory_space> const& tree = boxes_[l].tree;
      if (tree.size == 0)
        continue;
      auto const out = allocate_cell_outputs(space_, tree.size, "sdot::travel::box_cells::");
      // From earlier neighbours, the index's weight bounds only once a cell goes to the search;
      // otherwise (coarse_to_fine's choice, the search) before the cells.
      if (!cells_from_neighbours(warm_start, box_graphs_[l]))
        update_box_bounds(l);
      auto const built = build_one_box_cells(
          space_, tree, domain_vertices_, domain_labels_, options, out, kept[l], box_graphs_[l],
          Kokkos::View<int const*, memory_space>(box_slot_of_[l]), abandon_,
          [this, l] { update_box_bounds(l); });
      worked |= built.built || built.coarse_levels > 0;
      if (kept[l].capacity > 0) { // each slot's area and centroid, as its cell was recorded
        int const first = static_cast<int>(box_rows_[l]);
        auto const index = tree.index;
        auto const results = box_results_;
        Kokkos::parallel_for(
            "sdot::travel::box_results", Policy(space_, 0, tree.size), KOKKOS_LAMBDA(int s) {
              int const row = index(s);
              results(first + s, box_result_area) = out.measures(row);
              results(first + s, box_result_cx) = out.centroids(row, 0);
              results(first + s, box_result_cy) = out.centroids(row, 1);
            });
      }
      if (built.cells.abandoned)
        return worked;
      box_warm_cells_ += built.warm_cells;
      box_warm_rounds_ = std::max(box_warm_rounds_, built.warm_rounds);
      box_coarse_levels_ = std::max(box_coarse_levels_, built.coarse_levels);
    }
    concatenate_box_cells(kept);
    return worked;
  }

  /// The weight bounds of local box l's index for its current weights, where
  /// reweight_boxes_and_trees() left them to be computed (in place: the forest views them).
  void update_box_bounds(int l) {
    if (!box_bounds_stale_[l])
      return;
    sdot::compat::ScopedRegion region("sdot::travel::box_weight_bounds");
    compute_weight_bounds(space_, boxes_[l].tree);
    box_bounds_stale_[l] = 0;
  }

  /// The global index of each box row (row_gids_, at the box's forest offset) and each box's
  /// tree slot by row, once per set of boxes.
  void number_box_rows() {
    int const local = ranks_.local_count();
    box_graphs_.assign(local, NeighbourGraph<memory_space>{});
    box_slot_of_.assign(local, Kokkos::View<int*, memory_space>());
    row_gids_ = Kokkos::View<int*, memory_space>(
        Kokkos::view_alloc(space_, Kokkos::WithoutInitializing, "sdot::travel::row_gids"),
        local_seeds());
    auto const row_gids = row_gids_;
    auto const gids = forest_.gids.all;
    for (int l = 0; l < local; ++l) {
      int const first = static_cast<int>(box_rows_[l]);
      auto const index = boxes_[l].tree.index;
      box_slot_of_[l] = slot_of_index(space_, boxes_[l].tree);
      Kokkos::parallel_for(
          "sdot::travel::row_gids", Policy(space_, 0, boxes_[l].tree.size),
          KOKKOS_LAMBDA(int s) { row_gids(first + index(s)) = gids(first + s); });
    }
  }

  /// The boxes' slots one after the other, by forest item (one box: its slots as they are).
  void concatenate_box_cells(std::vector<SlotPolygons<memory_space>> const& kept) {
    int const local = static_cast<int>(kept.size());
    int capacity = 0;
    for (auto const& k : kept)
      capacity = std::max(capacity, k.capacity);
    if (local == 1 || capacity == 0) {
      box_cells_ = local == 1 ? kept[0] : SlotPolygons<memory_space>{};
      return;
    }
    if (box_cells_storage_.capacity != capacity ||
        box_cells_storage_.counts.extent(0) != std::size_t(local_seeds()))
      box_cells_storage_ = allocate_slot_polygons(space_, local_seeds(), capacity);
    box_cells_ = box_cells_storage_;
    auto const to = box_cells_;
    for (int l = 0; l < local; ++l) {
      auto const from = kept[l];
      int const first = static_cast<int>(box_rows_[l]);
      int const size = static_cast<int>(box_rows_[l + 1] - box_rows_[l]);
      if (size == 0)
        continue;
      Kokkos::parallel_for(
          "sdot::travel::concatenate_box_cells", Policy(space_, 0, size), KOKKOS_LAMBDA(int s) {
            int const count = from.capacity == capacity ? from.counts(s) : -1;
            to.counts(first + s) = count;
            std::size_t const a = std::size_t(s) * capacity, b = std::size_t(first + s) * capacity;
            for (int k = 0; k < count; ++k) {
              to.vertices(b + k, 0) = from.vertices(a + k, 0);
              to.vertices(b + k, 1) = from.vertices(a + k, 1);
              to.labels(b + k) = from.labels(a + k);
            }
          });
    }
  }

  /// The tree over the ranks' boxes and the top nodes of every rank's index (their bounds
  /// depend on the weights), on every process; no longer stale (rank_trees_stale_).
  void build_rank_trees() {
    rank_trees_stale_ = false;
    int const local = ranks_.local_count();
    std::vector<TreeNode> boxes_local(local), top_local;
    for (int l = 0; l < local; ++l) {
      auto const top = tree_top_nodes(boxes_[l].tree, boxes_[l].tree.size, rank_top_levels_);
      boxes_local[l] = top[1]; // the root (empty without seeds)
      top_local.insert(top_local.end(), top.begin(), top.end());
    }
    auto all_boxes = ranks_.allgather(boxes_local);
    rank_tree_nodes_.clear();
    build_rank_tree(all_boxes, 0, ranks_.size(), rank_tree_nodes_);
    rank_tree_ = to_device("sdot::travel::rank_tree", rank_tree_nodes_);
    std::vector<int> leaves(ranks_.size());
    for (std::size_t k = 0; k < rank_tree_nodes_.size(); ++k)
      if (rank_tree_nodes_[k].rank >= 0)
        leaves[rank_tree_nodes_[k].rank] = static_cast<int>(k);
    rank_leaves_ = to_device("sdot::travel::rank_leaves", leaves);
    rank_top_nodes_ = to_device("sdot::travel::rank_top_nodes", ranks_.allgather(top_local));
  }

  /// Every rank's envelope (rank_envelopes.hpp) on envelope_grid_ from the boxes' first-round
  /// cells, and each subtree's of the tree over the ranks' boxes (its ranks' together), by
  /// node of rank_tree_, on every process; none where no process has such cells (collective).
  void build_rank_envelopes() {
    EnvelopeGrid const& grid = envelope_grid_;
    if (grid.side == 0 ||
        !ranks_.process_maxima(std::vector<std::int64_t>{box_cells_.capacity > 0})[0])
      return;
    sdot::compat::ScopedRegion region("sdot::travel::envelopes");
    int const local = ranks_.local_count(), nodes = grid.nodes();
    std::vector<double> mine;
    for (int l = 0; l < local; ++l) {
      int const first = static_cast<int>(box_rows_[l]);
      auto const e = rank_envelope(space_, grid, boxes_[l].tree.seeds, box_cells_, first,
                                   boxes_[l].tree.size, domain_vertices_);
      mine.insert(mine.end(), e.begin(), e.end());
    }
    auto const all = ranks_.allgather(mine);
    // Children before parents: a leaf's is its rank's, a subtree's the union of its children's
    // (a rank without seeds cuts nothing and adds nothing). Each row built in place.
    int const tree_nodes = static_cast<int>(rank_tree_nodes_.size());
    std::vector<double> values(std::size_t(tree_nodes) * nodes), scale(tree_nodes);
    auto const row = [&](int k) { return values.data() + std::ptrdiff_t(k) * nodes; };
    for (int k = 0; k < tree_nodes; ++k) {
      RankTreeNode const& node = rank_tree_nodes_[k];
      if (node.rank >= 0) {
        double const* rank_values = all.data() + std::ptrdiff_t(node.rank) * (nodes + 1);
        std::copy(rank_values, rank_values + nodes, row(k));
        scale[k] = rank_values[nodes];
        continue;
      }
      // A child without seeds: the other one's, copied.
      int const from = rank_tree_nodes_[node.left].box.empty()    ? node.right
                       : rank_tree_nodes_[node.right].box.empty() ? node.left
                                                                  : -1;
      if (from >= 0) {
        std::copy(row(from), row(from) + nodes, row(k));
        scale[k] = scale[from];
        continue;
      }
      envelope_of_union(row(node.left), row(node.right), std::size_t(nodes), row(k));
      envelope_of_union(&scale[node.left], &scale[node.right], 1, &scale[k]);
    }
    envelopes_.grid = grid;
    envelopes_.values = to_device("sdot::travel::envelopes", values);
    envelopes_.scale = to_device("sdot::travel::envelope_scales", scale);
  }

  /// The seeds bisected into boxes, one per rank, and moved to the rank of their box: rows of
  /// x, y, w and global index (the bytes of the seeds that leave this process counted).
  loom::Distributed<double, memory_space> move_seeds_to_boxes(std::int64_t first_gid,
                                                              std::int64_t total) {
    int const n = static_cast<int>(positions_.extent(0));
    auto const box = bisect_into_boxes(space_, ranks_, positions_, first_gid, total);
    seeds_to_boxes_.emplace(space_, ranks_, box);
    auto mine = seeds_to_boxes_->template distribute<double>(
        4, SeedRows<memory_space>{positions_, weights_, first_gid});
    int const local = ranks_.local_count(), process = ranks_.process_rank();
    long moved = 0;
    Kokkos::parallel_reduce(
        "sdot::travel::moved_seeds", Policy(space_, 0, n),
        KOKKOS_LAMBDA(int i, long& c) { c += box(i) / local != process; }, moved);
    moved_seeds_ = moved;
    bytes_sent_seeds_ = moved * 4 * static_cast<long>(sizeof(double));
    return mine;
  }

  /// One local rank's index: the tree of its seeds, their global indices by tree slot, and
  /// the global indices in increasing order with their slots.
  struct BoxIndex {
    SeedTree<memory_space> tree;
    Kokkos::View<int*, memory_space> gids, sorted_gids, slot_of_sorted;
  };

  /// The index of the `count` seeds of rows [begin, begin + count) of `rows` (x, y, w, global
  /// index; in increasing global index: by source process, then in its order).
  BoxIndex build_box_index(Rows const& rows, int begin, int count) {
    Points<memory_space> p(
        Kokkos::view_alloc(space_, Kokkos::WithoutInitializing, "sdot::travel::box_positions"),
        count);
    Kokkos::View<double*, memory_space> w(
        Kokkos::view_alloc(space_, Kokkos::WithoutInitializing, "sdot::travel::box_weights"),
        count);
    auto const r = rows;
    Kokkos::parallel_for(
        "sdot::travel::unpack_seeds", Policy(space_, 0, count), KOKKOS_LAMBDA(int i) {
          p(i, 0) = r(begin + i, 0);
          p(i, 1) = r(begin + i, 1);
          w(i) = r(begin + i, 2);
        });
    BoxIndex box;
    box.tree = build_seed_tree(space_, ConstPoints<memory_space>(p),
                               Kokkos::View<double const*, memory_space>(w), leaf_size_);
    // The tree's index is a position in the rank's rows: make it the global index.
    box.gids = per_item<int>("sdot::travel::gids", count);
    box.sorted_gids = per_item<int>("sdot::travel::sorted_gids", count);
    box.slot_of_sorted = per_item<int>("sdot::travel::slot_of_sorted", count);
    auto const g = box.gids, sg = box.sorted_gids, ss = box.slot_of_sorted;
    auto const index = box.tree.index;
    Kokkos::parallel_for(
        "sdot::travel::global_indices", Policy(space_, 0, count),
        KOKKOS_LAMBDA(int t) { g(t) = static_cast<int>(r(begin + index(t), 3)); });
    Kokkos::parallel_for(
        "sdot::travel::sorted_gids", Policy(space_, 0, count), KOKKOS_LAMBDA(int t) {
          sg(index(t)) = static_cast<int>(r(begin + index(t), 3));
          ss(index(t)) = t;
        });
    return box;
  }

  /// The forest: the local ranks' global indices and seed lookups, each array one after the
  /// other, and, when there are more local ranks than the travel step takes trees
  /// (TravelStep::max_given_trees), their trees too: each index's tree then views its part of
  /// the forest (a reweight writes there). Each index keeps its own input indices (its box's
  /// rows); its global indices live in the forest only.
  void assemble_forest(std::vector<BoxIndex>& indexes) {
    int const local = static_cast<int>(indexes.size());
    // Trees that all go with the travel step keep their own arrays: no copy (only offsets).
    bool const copy_trees = local > TravelStep<memory_space>::max_given_trees;
    auto field = [&](auto member) {
      using View = std::decay_t<decltype(indexes[0].tree.*member)>;
      std::vector<View> parts(local);
      for (int l = 0; l < local; ++l)
        parts[l] = indexes[l].tree.*member;
      return concatenate(parts, copy_trees);
    };
    auto index_field = [&](auto member) {
      std::vector<Kokkos::View<int*, memory_space>> parts(local);
      for (int l = 0; l < local; ++l)
        parts[l] = indexes[l].*member;
      return concatenate(parts);
    };
    std::vector<int> depth(local), finest_block_level(local);
    for (int l = 0; l < local; ++l) {
      depth[l] = indexes[l].tree.depth;
      finest_block_level[l] = indexes[l].tree.finest_block_level;
    }
    forest_.seeds = field(&SeedTree<memory_space>::seeds);
    forest_.gids = index_field(&BoxIndex::gids);
    forest_.sorted_gids = index_field(&BoxIndex::sorted_gids);
    forest_.slot_of_sorted = index_field(&BoxIndex::slot_of_sorted);
    forest_.nodes = field(&SeedTree<memory_space>::nodes);
    forest_.blocks = field(&SeedTree<memory_space>::blocks);
    forest_.cell_begin = field(&SeedTree<memory_space>::cell_begin);
    forest_.row_wmax = field(&SeedTree<memory_space>::row_wmax);
    forest_.quads = field(&SeedTree<memory_space>::quads);
    forest_.quad_first = field(&SeedTree<memory_space>::quad_first);
    forest_.depth = to_device("sdot::travel::depth", depth);
    forest_.finest_block = field(&SeedTree<memory_space>::finest_block);
    forest_.finest_block_level = to_device("sdot::travel::finest_block_level", finest_block_level);
    forest_.ring = local > 0 ? indexes[0].tree.ring : Kokkos::View<RingOffset*, memory_space>();
    auto view_forest = [&](auto member, auto const& concatenated) {
      if (!copy_trees)
        return;
      std::size_t first = 0;
      for (int l = 0; l < local; ++l) {
        auto& part = indexes[l].tree.*member;
        std::size_t const count = part.extent(0);
        part = Kokkos::subview(concatenated.all, Kokkos::make_pair(first, first + count));
        first += count;
      }
    };
    view_forest(&SeedTree<memory_space>::seeds, forest_.seeds);
    view_forest(&SeedTree<memory_space>::nodes, forest_.nodes);
    view_forest(&SeedTree<memory_space>::blocks, forest_.blocks);
    view_forest(&SeedTree<memory_space>::cell_begin, forest_.cell_begin);
    view_forest(&SeedTree<memory_space>::row_wmax, forest_.row_wmax);
    view_forest(&SeedTree<memory_space>::quads, forest_.quads);
    view_forest(&SeedTree<memory_space>::quad_first, forest_.quad_first);
    view_forest(&SeedTree<memory_space>::finest_block, forest_.finest_block);
    for (auto& index : indexes)
      index.gids = index.sorted_gids = index.slot_of_sorted = {};
  }

  /// Seeds of this process's boxes.
  int local_seeds() const { return box_rows_.empty() ? 0 : static_cast<int>(box_rows_.back()); }

  /// The parts one after the other, with their offsets (`copy` false: the offsets only).
  template <class T>
  Concatenated<T, memory_space>
  concatenate(std::vector<Kokkos::View<T*, memory_space>> const& parts, bool copy = true) {
    std::vector<int> first(parts.size() + 1, 0);
    for (std::size_t l = 0; l < parts.size(); ++l)
      first[l + 1] = first[l] + static_cast<int>(parts[l].extent(0));
    Concatenated<T, memory_space> c;
    c.first = to_device("sdot::travel::forest_first", first);
    if (!copy)
      return c;
    if (parts.size() == 1) { // one rank per process: its tree as it is
      c.all = parts[0];
      return c;
    }
    c.all = Kokkos::View<T*, memory_space>(
        Kokkos::view_alloc(space_, Kokkos::WithoutInitializing, "sdot::travel::forest"),
        first.back());
    for (std::size_t l = 0; l < parts.size(); ++l)
      if (parts[l].extent(0))
        Kokkos::deep_copy(space_, Kokkos::subview(c.all, Kokkos::make_pair(first[l], first[l + 1])),
                          parts[l]);
    return c;
  }

  template <class T>
  Kokkos::View<T*, memory_space> to_device(std::string const& label, std::vector<T> const& v) {
    Kokkos::View<T*, memory_space> d(Kokkos::view_alloc(space_, Kokkos::WithoutInitializing, label),
                                     v.size());
    Kokkos::deep_copy(
        space_, d,
        Kokkos::View<T const*, Kokkos::HostSpace, Kokkos::MemoryTraits<Kokkos::Unmanaged>>(
            v.data(), v.size()));
    space_.fence();
    return d;
  }

  int result_width() const { return with_polygons_ ? result_cols_with_polygons : result_cols; }

  /// An empty vertex heap for this call's finished cells (with polygons): its memory is kept
  /// from call to call, first sized for kept_vertices_per_seed vertices per seed of this
  /// process's boxes (what is never written is never touched).
  void reset_vertex_heap() {
    if (!with_polygons_)
      return;
    std::int64_t const wanted = 3 * static_cast<std::int64_t>(kept_vertices_per_seed_) *
                                static_cast<std::int64_t>(local_seeds() + 1);
    if (!vertex_heap_.used.data())
      vertex_heap_.used = Kokkos::View<std::int64_t, memory_space>(
          Kokkos::view_alloc(space_, "sdot::travel::vertex_heap_used"));
    if (static_cast<std::int64_t>(vertex_heap_.values.extent(0)) < wanted)
      vertex_heap_.values = Kokkos::View<double*, memory_space>(
          Kokkos::view_alloc(space_, Kokkos::WithoutInitializing, "sdot::travel::vertex_heap"),
          wanted);
    Kokkos::deep_copy(space_, vertex_heap_.used, std::int64_t(0));
  }

  /// The values the heap was asked for so far (0 without polygons).
  std::int64_t vertex_heap_used() {
    if (!with_polygons_)
      return 0;
    std::int64_t used = 0;
    Kokkos::deep_copy(used, vertex_heap_.used); // fences
    return used;
  }

  /// A heap of `capacity` values holding the first `kept` values of the current one; the room
  /// per seed grows to match.
  void grow_vertex_heap(std::int64_t capacity, std::int64_t kept) {
    std::int64_t const per_seed = 3 * static_cast<std::int64_t>(local_seeds() + 1);
    capacity = (capacity + per_seed - 1) / per_seed * per_seed;
    kept_vertices_per_seed_ = static_cast<int>(capacity / per_seed);
    Kokkos::View<double*, memory_space> values(
        Kokkos::view_alloc(space_, Kokkos::WithoutInitializing, "sdot::travel::vertex_heap"),
        capacity);
    auto const range = Kokkos::make_pair(std::int64_t(0), kept);
    Kokkos::deep_copy(space_, Kokkos::subview(values, range),
                      Kokkos::subview(vertex_heap_.values, range));
    vertex_heap_.values = values;
  }

  /// Kernel-local polygon capacity (≥ 2 × msg_capacity).
  int polygon_capacity() const {
    int c = 32;
    while (c < 2 * msg_capacity_.value() || c < static_cast<int>(domain_vertices_.extent(0)) + 2)
      c *= 2;
    return c;
  }

  template <class T>
  Kokkos::View<T*, memory_space> per_item(char const* label, int count) {
    return uninitialized_view<T*>(space_, label, count);
  }

  /// The answers of the inbox grouped by the cell they answer (arrival order within a cell):
  /// inbox rows and, per pending cell, their range.
  void group_answers(Kokkos::View<double const**, Kokkos::LayoutRight, memory_space> inbox,
                     int pending_count, Kokkos::View<int const*, memory_space>& answers,
                     Kokkos::View<int const*, memory_space>& answer_first) {
    int const items = static_cast<int>(inbox.extent(0));
    auto list = items_where(
        space_, "sdot::travel::answers", items, KOKKOS_LAMBDA(int i) {
          return static_cast<int>(inbox(i, MessageLayout::kind)) == message_answer;
        });
    int const count = static_cast<int>(list.extent(0));
    auto keys = per_item<std::uint32_t>("sdot::travel::answer_keys", count);
    Kokkos::parallel_for(
        "sdot::travel::answer_keys", Policy(space_, 0, count), KOKKOS_LAMBDA(int a) {
          keys(a) = static_cast<std::uint32_t>(inbox(list(a), MessageLayout::ref));
        });
    int bits = 1;
    while ((std::int64_t(1) << bits) < pending_count)
      ++bits;
    auto order = stable_sort_permutation(
        space_, Kokkos::View<std::uint32_t const*, memory_space>(keys), bits);
    auto r = per_item<int>("sdot::travel::answer_rows", count);
    Kokkos::View<int*, memory_space> f(Kokkos::view_alloc(space_, "sdot::travel::answer_first"),
                                       pending_count + 1);
    Kokkos::parallel_for(
        "sdot::travel::answer_rows", Policy(space_, 0, count), KOKKOS_LAMBDA(int a) {
          r(a) = list(order(a));
          Kokkos::atomic_add(&f(keys(a)), 1);
        });
    exclusive_scan(space_, "sdot::travel::answer_first",
                   Kokkos::subview(f, Kokkos::make_pair(0, pending_count)), f);
    answers = r;
    answer_first = f;
  }

  /// The most messages one local rank sends to one rank this round.
  int most_per_pair(Kokkos::View<int const*, memory_space> senders,
                    Kokkos::View<int const*, memory_space> message_first,
                    Kokkos::View<int const*, memory_space> item_first,
                    Kokkos::View<int const*, memory_space> dest) {
    int const rows = static_cast<int>(dest.extent(0));
    int const local = ranks_.local_count(), size = ranks_.size();
    auto keys = per_item<std::uint64_t>("sdot::travel::pair_keys", rows);
    Kokkos::parallel_for(
        "sdot::travel::pair_keys", Policy(space_, 0, static_cast<int>(senders.extent(0))),
        KOKKOS_LAMBDA(int k) {
          int const l = loom::detail::segment_of(item_first, local, senders(k));
          for (int r = message_first(k); r < message_first(k + 1); ++r)
            keys(r) = std::uint64_t(l) * size + dest(r);
        });
    int bits = 1;
    while ((std::uint64_t(1) << bits) < std::uint64_t(local) * size)
      ++bits;
    Kokkos::View<std::uint64_t const*, memory_space> sorted;
    stable_sort_permutation(space_, Kokkos::View<std::uint64_t const*, memory_space>(keys), bits,
                            &sorted);
    int most = 0;
    Kokkos::parallel_reduce(
        "sdot::travel::most_per_pair", Policy(space_, 0, rows),
        KOKKOS_LAMBDA(int k, int& m) {
          if (k > 0 && sorted(k) == sorted(k - 1))
            return;
          int end = k + 1;
          while (end < rows && sorted(end) == sorted(k))
            ++end;
          m = end - k > m ? end - k : m;
        },
        Kokkos::Max<int>(most));
    return most;
  }

  /// The cells that sent copies in one round, as their copies' messages.
  struct Pending {
    Rows rows;
    MessageLayout layout{0};
  };

  /// The rounds of travelling cells. Each rank cuts the cells of its own seeds; a cell that
  /// another rank may cut (by the bound of that rank's seeds at one of its vertices) moves to
  /// the nearest such rank, which cuts it and owns it. That first cut closes a cell that was
  /// open towards other ranks (a box's border cell); if more ranks may still cut it, each gets
  /// a copy, cuts it and answers with the seeds of its cut, and two rounds later the cell is
  /// cut by all the answers (a convex cell is the intersection of its cutters' half-planes,
  /// in any order) and finished. So every cell is finished after at most three rounds of
  /// messages, whatever the cloud and the number of ranks; a size found too small (the
  /// polygons') costs only the round that found it. Returns the result rows of the cells
  /// finished here.
  Rows travel() {
    TravelStep<memory_space> step = first_step();
    std::vector<Rows> finished;
    reset_vertex_heap();
    Pending older, newer; // the cells that sent copies two rounds ago, and one round ago
    Kokkos::View<int const*, memory_space> item_first = forest_.seeds.first;
    int items = local_seeds();
    int most_sent = 0; // the most messages one local rank sent to one rank in the last round
    for (;;) {
      // Answers to the cells that sent copies two rounds ago.
      SettleStep<memory_space> settle = settle_step(step, older);
      if (!cut_and_settle(step, settle, items)) {
        abandoned_ = true;
        return Rows();
      }
      keep_finished(step, settle, finished);

      // Messages of this round: how many, how wide (agreed), and the copies' cells kept here.
      RoundMessages const plan = plan_messages(step, items);
      // One agreement per round: go on?, the message width, the previous round's most
      // messages from one rank to one other (inbox_capacity, a hint), and msg_capacity (the
      // polygons' size, grown where cells did not fit).
      std::vector<std::int64_t> agreed{plan.rows > 0 || newer.rows.extent(0) > 0, plan.widest,
                                       most_sent, msg_capacity_.value()};
      agreed = ranks_.process_maxima(agreed);
      inbox_capacity_.grow_to(agreed[2]);
      msg_capacity_.grow_to(agreed[3]);
      if (!agreed[0])
        break;
      msg_capacity_.grow_to((agreed[1] + 2) / 3);
      MessageLayout const out{static_cast<int>(agreed[1])};
      pack_messages(step, plan, out);
      most_sent = most_per_pair(plan.senders, plan.message_first, item_first, step.dest);
      auto received = send_messages(step.dest, step.outbox);

      older = newer;
      newer = Pending{step.pending, out};
      step.inbox = received.rows;
      step.layout = out;
      step.inbox_first =
          to_device("sdot::travel::inbox_first",
                    std::vector<int>(received.offsets.begin(), received.offsets.end()));
      item_first = step.inbox_first;
      step.from_messages = true;
      items = static_cast<int>(received.rows.extent(0));
    }
    return concatenate_rows(finished);
  }

  /// Collective, on every process whatever its abandon_below: whether a cell fell below
  /// abandon_below in a box of any process.
  bool given_up_anywhere() {
    std::vector<std::int64_t> const mine{detail::abandoned(space_, abandon_) ? 1 : 0};
    return ranks_.process_maxima(mine)[0] != 0;
  }

  /// The step of the first round: the seeds of the local ranks as items.
  TravelStep<memory_space> first_step() {
    TravelStep<memory_space> step;
    step.forest = forest_;
    // Local rank l's tree as Forest::tree(l) gives it: its box's, with global indices.
    step.nb_given_trees = std::min(ranks_.local_count(), TravelStep<memory_space>::max_given_trees);
    for (int l = 0, first = 0; l < step.nb_given_trees; ++l) {
      SeedTree<memory_space> tree = boxes_[l].tree;
      tree.index = Kokkos::subview(forest_.gids.all, Kokkos::make_pair(first, first + tree.size));
      step.given_trees[l] = tree;
      first += tree.size;
    }
    step.domain_vertices = domain_vertices_;
    step.domain_labels = domain_labels_;
    step.rank_tree = rank_tree_;
    step.rank_leaves = rank_leaves_;
    step.rank_top_nodes = rank_top_nodes_;
    step.rank_top_levels = rank_top_levels_;
    step.envelopes = envelopes_;
    step.abandon = abandon_;
    step.box_cells = box_cells_;
    step.box_results = box_results_;
    step.row_gids = row_gids_;
    step.first_rank = ranks_.first_local();
    step.from_messages = false;
    step.layout = MessageLayout{0};
    return step;
  }

  /// The step that finishes the cells of `older` with the answers in the step's inbox.
  SettleStep<memory_space> settle_step(TravelStep<memory_space> const& step, Pending const& older) {
    SettleStep<memory_space> settle;
    settle.pending = older.rows;
    settle.pending_layout = older.layout;
    settle.inbox = step.inbox;
    settle.layout = step.layout;
    if (older.rows.extent(0) > 0)
      group_answers(step.inbox, static_cast<int>(older.rows.extent(0)), settle.answers,
                    settle.answer_first);
    return settle;
  }

  /// Cuts every item of the round, and settles the pending cells; again with larger polygons
  /// while any overflowed anywhere, or with a larger vertex heap while a process's was too
  /// small. Returns false when a cell fell below abandon_below somewhere (the same answer on
  /// every process).
  bool cut_and_settle(TravelStep<memory_space>& step, SettleStep<memory_space>& settle, int items) {
    int const pending_count = static_cast<int>(settle.pending.extent(0));
    std::int64_t const heap_before = vertex_heap_used();
    for (;;) {
      if (with_polygons_)
        Kokkos::deep_copy(space_, vertex_heap_.used, heap_before);
      step.finished = finished_cells("sdot::travel::results", items);
      settle.finished = finished_cells("sdot::travel::settled", pending_count);
      step.outbox = Rows();
      step.action = per_item<int>("sdot::travel::action", items);
      step.messages = per_item<int>("sdot::travel::messages", items);
      step.needed = per_item<int>("sdot::travel::needed", items);
      step.overflowed = per_item<int>("sdot::travel::overflowed", items);
      step.kept_slot = per_item<int>("sdot::travel::kept_slot", items);
      step.kept =
          Rows(Kokkos::view_alloc(space_, Kokkos::WithoutInitializing, "sdot::travel::kept"),
               kept_slots_, MessageLayout::header + 3 * msg_capacity_.value());
      step.kept_count =
          Kokkos::View<int, memory_space>(Kokkos::view_alloc(space_, "sdot::travel::kept_count"));
      cut_again_noted(for_each_cell_until_fit(space_, "sdot::travel::decide", step, step.overflowed,
                                              items, polygon_capacity()));
      settle.overflowed = per_item<int>("sdot::travel::settle_overflowed", pending_count);
      if (pending_count > 0)
        cut_again_noted(for_each_cell_until_fit(space_, "sdot::travel::settle", settle,
                                                settle.overflowed, pending_count,
                                                polygon_capacity()));
      std::int64_t const heap_after = vertex_heap_used();
      bool const heap_full = heap_after > static_cast<std::int64_t>(vertex_heap_.values.extent(0));
      std::vector<std::int64_t> again{heap_full, detail::abandoned(space_, step.abandon)};
      again = ranks_.process_maxima(again);
      if (again[1])
        return false;
      if (!again[0])
        return true;
      if (heap_full)
        grow_vertex_heap(heap_after + heap_after / 4, heap_before);
      ++statistics_.reruns;
    }
  }

  /// Counts the passes that cut cells again with larger polygons, and makes the polygons of
  /// the next passes as large as the last of them (polygon_capacity()).
  void cut_again_noted(PassesAgain const& again) {
    polygon_passes_ += again.passes;
    msg_capacity_.grow_to(again.final_capacity / 2);
  }

  /// Appends the result rows of the cells finished this round away from their seeds' process
  /// to `finished`.
  void keep_finished(TravelStep<memory_space> const& step, SettleStep<memory_space> const& settle,
                     std::vector<Rows>& finished) {
    for (auto const* cells : {&step.finished, &settle.finished}) {
      int count = 0;
      Kokkos::deep_copy(space_, count, cells->row_count);
      space_.fence();
      if (count > 0)
        finished.push_back(Kokkos::subview(cells->rows, Kokkos::make_pair(0, count), Kokkos::ALL));
    }
  }

  /// Where this round's finished cells go (`capacity` rows for those of other processes'
  /// seeds; rows never written are never touched).
  FinishedCells<memory_space> finished_cells(char const* label, int capacity) {
    FinishedCells<memory_space> cells;
    cells.first_gid = seed_blocks_.begin();
    cells.home = home_;
    cells.heap_first = heap_first_;
    cells.rows = Rows(Kokkos::view_alloc(space_, Kokkos::WithoutInitializing, std::string(label)),
                      capacity, result_width());
    cells.row_count =
        Kokkos::View<int, memory_space>(Kokkos::view_alloc(space_, std::string(label) + "_count"));
    cells.heap = vertex_heap_;
    cells.polygons = with_polygons_;
    return cells;
  }

  /// The outputs of this process's n seeds, written as their cells finish (FinishedCells):
  /// measures, centroids and, with polygons, each cell's vertex count and heap offset.
  void allocate_home_outputs(int n) {
    home_ = CellOutputs<memory_space>{};
    home_.measures =
        Kokkos::View<double*, memory_space>(Kokkos::view_alloc(space_, "sdot::measures"), n);
    home_.centroids = Points<memory_space>(Kokkos::view_alloc(space_, "sdot::centroids"), n);
    heap_first_ = Kokkos::View<std::int64_t*, memory_space>();
    if (!with_polygons_)
      return;
    home_.vertex_counts =
        Kokkos::View<int*, memory_space>(Kokkos::view_alloc(space_, "sdot::vertex_counts"), n);
    heap_first_ = Kokkos::View<std::int64_t*, memory_space>(
        Kokkos::view_alloc(space_, Kokkos::WithoutInitializing, "sdot::travel::heap_first"), n);
    Kokkos::deep_copy(space_, heap_first_, std::int64_t(-1)); // −1: finished elsewhere
  }

  /// The messages of a round: the items that send, their first message rows, their rows of
  /// the cells that wait for answers, and the widest message.
  struct RoundMessages {
    Kokkos::View<int*, memory_space> senders, message_first, pending_index;
    int rows = 0, pending = 0, widest = 0;
  };

  RoundMessages plan_messages(TravelStep<memory_space> const& step, int items) {
    RoundMessages plan;
    auto const messages = step.messages;
    auto const action = step.action;
    plan.senders = items_where(
        space_, "sdot::travel::senders", items, KOKKOS_LAMBDA(int i) { return messages(i) > 0; });
    auto const senders = plan.senders;
    int const nb_senders = static_cast<int>(senders.extent(0));
    kept_slots_ = nb_senders > kept_slots_ ? nb_senders : kept_slots_;
    plan.message_first = per_item<int>("sdot::travel::message_first", nb_senders + 1);
    plan.pending_index = per_item<int>("sdot::travel::pending_index", nb_senders + 1);
    auto const message_first = plan.message_first;
    auto const pending_index = plan.pending_index;
    Kokkos::parallel_for(
        "sdot::travel::message_counts", Policy(space_, 0, nb_senders), KOKKOS_LAMBDA(int k) {
          message_first(k) = messages(senders(k));
          pending_index(k) = action(senders(k)) == action_probe ? 1 : 0;
        });
    plan.rows = exclusive_scan(space_, "sdot::travel::message_first",
                               Kokkos::subview(message_first, Kokkos::make_pair(0, nb_senders)),
                               message_first);
    plan.pending = exclusive_scan(space_, "sdot::travel::pending_index",
                                  Kokkos::subview(pending_index, Kokkos::make_pair(0, nb_senders)),
                                  pending_index);
    auto const needed = step.needed;
    Kokkos::parallel_reduce(
        "sdot::travel::widest", Policy(space_, 0, items),
        KOKKOS_LAMBDA(int i, int& m) { m = needed(i) > m ? needed(i) : m; },
        Kokkos::Max<int>(plan.widest));
    return plan;
  }

  /// Packs the round's messages (rows `out` wide) into the step's outbox, with their
  /// destinations, and the cells that wait for answers into its pending rows.
  void pack_messages(TravelStep<memory_space>& step, RoundMessages const& plan,
                     MessageLayout const& out) {
    step.senders = plan.senders;
    step.message_first = plan.message_first;
    step.pending_index = plan.pending_index;
    step.out_layout = out;
    step.outbox =
        Rows(Kokkos::view_alloc(space_, Kokkos::WithoutInitializing, "sdot::travel::outbox"),
             plan.rows, out.cols());
    step.dest = per_item<int>("sdot::travel::destinations", plan.rows);
    step.pending =
        Rows(Kokkos::view_alloc(space_, Kokkos::WithoutInitializing, "sdot::travel::pending"),
             plan.pending, out.cols());
    int const nb_senders = static_cast<int>(plan.senders.extent(0));
    step.overflowed = per_item<int>("sdot::travel::pack_overflowed", nb_senders);
    if (nb_senders > 0)
      cut_again_noted(for_each_cell_until_fit(space_, "sdot::travel::pack", step, step.overflowed,
                                              nb_senders, polygon_capacity()));
  }

  /// Sends each row of `outbox` to rank `dest` of it, with what it holds and its length
  /// (counted in the statistics), and returns what this process's ranks received.
  loom::Distributed<double, memory_space> send_messages(Kokkos::View<int*, memory_space> dest,
                                                        Rows const& outbox) {
    int const rows = static_cast<int>(outbox.extent(0));
    auto lengths = per_item<int>("sdot::travel::message_lengths", rows);
    long values = 0;
    Kokkos::parallel_reduce(
        "sdot::travel::message_lengths", Policy(space_, 0, rows),
        KOKKOS_LAMBDA(int r, long& sum) {
          lengths(r) = MessageLayout::used(outbox, r);
          sum += lengths(r);
        },
        values);
    statistics_.travelled_cells += rows;
    statistics_.bytes_sent +=
        values * static_cast<long>(sizeof(double)) + rows * static_cast<long>(sizeof(std::int64_t));
    auto received = loom::distribute(space_, ranks_, dest, outbox, lengths);
    ++statistics_.rounds;
    return received;
  }

  /// The rows of `parts`, one part after the other (one part: as it is).
  Rows concatenate_rows(std::vector<Rows> const& parts) {
    if (parts.size() == 1)
      return parts[0];
    std::int64_t total = 0;
    for (auto const& part : parts)
      total += part.extent(0);
    int const width = result_width();
    Rows all(Kokkos::view_alloc(space_, Kokkos::WithoutInitializing, "sdot::travel::all_finished"),
             total, width);
    std::int64_t at = 0;
    for (auto const& part : parts) {
      std::int64_t const first = at;
      Kokkos::parallel_for(
          "sdot::travel::gather_finished", Policy(space_, 0, static_cast<int>(part.extent(0))),
          KOKKOS_LAMBDA(int k) {
            for (int c = 0; c < width; ++c)
              all(first + k, c) = part(k, c);
          });
      at += part.extent(0);
    }
    return all;
  }

  /// The results of the cells finished away from their seed's process (`results`) go there
  /// through loom::distribute (with polygons, their vertices follow as rows of their own, in
  /// the order of the cells); with the cells of this process's seeds finished here, written
  /// as they finished, they make the outputs of its n seeds.
  CellOutputs<memory_space> send_results_home(Rows const& results, int n) {
    LeavingResults const leaving = pack_leaving_results(results);
    Rows const received = loom::distribute(space_, ranks_, leaving.dest, results).rows;
    // The vertices arrive in the order of their cells (loom::distribute keeps the order).
    Rows received_vertices;
    if (with_polygons_) {
      received_vertices =
          loom::distribute(space_, ranks_, leaving.vertex_dest, leaving.vertices).rows;
      number_received_vertices(received);
    }
    return scatter_results(received, received_vertices, n);
  }

  /// Where each result row goes (the first local rank of the process that holds its seed)
  /// and, with polygons, its vertices (x, y, edge label) as rows of three with theirs.
  struct LeavingResults {
    Rows vertices;
    Kokkos::View<int*, memory_space> dest, vertex_dest;
  };

  /// The destinations of the result rows and their vertices (the bytes counted).
  LeavingResults pack_leaving_results(Rows const& results) {
    int const count = static_cast<int>(results.extent(0));
    auto const process_first = to_device("sdot::travel::process_first", seed_blocks_.offsets());
    int const processes = ranks_.process_count(), local = ranks_.local_count();
    bool const polygons = with_polygons_;
    LeavingResults out;
    out.dest = per_item<int>("sdot::travel::sent_home", count);
    auto const dest = out.dest;
    int nb_vertices = 0;
    Kokkos::parallel_reduce(
        "sdot::travel::home_rank", Policy(space_, 0, count),
        KOKKOS_LAMBDA(int i, int& v) {
          auto const gid = static_cast<std::int64_t>(results(i, result_gid));
          dest(i) = loom::detail::segment_of(process_first, processes, gid) * local;
          v += polygons ? static_cast<int>(results(i, result_nb_vertices)) : 0;
        },
        nb_vertices);
    statistics_.bytes_sent +=
        (static_cast<long>(count) * result_width() + 3L * nb_vertices) * sizeof(double) +
        static_cast<long>(count) * sizeof(std::int64_t);
    if (!polygons)
      return out;
    out.vertices =
        Rows(Kokkos::view_alloc(space_, Kokkos::WithoutInitializing, "sdot::travel::sent_vertices"),
             nb_vertices, 3);
    out.vertex_dest = per_item<int>("sdot::travel::sent_vertices_home", nb_vertices);
    auto const sent_vertices = out.vertices;
    auto const vertex_dest = out.vertex_dest;
    auto const heap = vertex_heap_.values;
    Kokkos::parallel_scan(
        "sdot::travel::pack_result_vertices", Policy(space_, 0, count),
        KOKKOS_LAMBDA(int i, int& vertex, bool final) {
          int const nv = static_cast<int>(results(i, result_nb_vertices));
          if (final) {
            auto const from = static_cast<std::int64_t>(results(i, result_vertices));
            for (int v = 0; v < nv; ++v) {
              vertex_dest(vertex + v) = dest(i);
              for (int c = 0; c < 3; ++c)
                sent_vertices(vertex + v, c) = heap(from + 3 * v + c);
            }
          }
          vertex += nv;
        });
    return out;
  }

  /// The first value of each received row's vertices among the received vertex values.
  void number_received_vertices(Rows const& received) {
    Kokkos::parallel_scan(
        "sdot::travel::received_vertex_offsets",
        Policy(space_, 0, static_cast<int>(received.extent(0))),
        KOKKOS_LAMBDA(int i, int& first, bool final) {
          int const nv = static_cast<int>(received(i, result_nb_vertices));
          if (final)
            received(i, result_vertices) = 3.0 * first;
          first += nv;
        });
  }

  /// The outputs of this process's n seeds: those written here as the cells finished, and
  /// the received rows, with the polygons' vertices in the vertex heap and in
  /// `received_vertices`.
  CellOutputs<memory_space> scatter_results(Rows const& received, Rows const& received_vertices,
                                            int n) {
    CellOutputs<memory_space> out = home_;
    std::int64_t const first_gid = seed_blocks_.begin();
    int const count = static_cast<int>(received.extent(0));
    Kokkos::View<double const*, memory_space, Kokkos::MemoryTraits<Kokkos::Unmanaged>>
        arrived_values(received_vertices.data(), received_vertices.span());
    Kokkos::parallel_for("sdot::travel::scatter_results", Policy(space_, 0, count),
                         ResultScatter{received, first_gid, out, false, arrived_values});
    if (!with_polygons_)
      return out;
    allocate_polygon_rows(space_, out.vertex_counts, out.polygon_offsets, out.polygon_vertices,
                          out.polygon_labels);
    Kokkos::parallel_for("sdot::travel::scatter_polygons", Policy(space_, 0, count),
                         ResultScatter{received, first_gid, out, true, arrived_values});
    auto const heap = vertex_heap_.values;
    auto const heap_first = heap_first_;
    Kokkos::parallel_for(
        "sdot::travel::home_polygons", Policy(space_, 0, n), KOKKOS_LAMBDA(int k) {
          if (heap_first(k) >= 0) // else finished on another process
            copy_polygon(out, k, heap, heap_first(k));
        });
    return out;
  }

  /// Writes received result rows into the outputs: measures, centroids and, with polygons,
  /// vertex counts; or, with `vertices` (once the offsets are known), the polygons' vertices
  /// and edge sources, read from `values` at the row's offset (result_vertices).
  struct ResultScatter {
    Rows rows;
    std::int64_t first_gid;
    CellOutputs<memory_space> out;
    bool vertices = false;
    Kokkos::View<double const*, memory_space, Kokkos::MemoryTraits<Kokkos::Unmanaged>> values;
    KOKKOS_FUNCTION void operator()(int i) const {
      auto const k = static_cast<std::int64_t>(rows(i, result_gid)) - first_gid;
      if (!vertices) {
        out.measures(k) = rows(i, result_area);
        out.centroids(k, 0) = rows(i, result_cx);
        out.centroids(k, 1) = rows(i, result_cy);
        if (out.vertex_counts.extent(0))
          out.vertex_counts(k) = static_cast<int>(rows(i, result_nb_vertices));
        return;
      }
      copy_polygon(out, k, values, static_cast<std::int64_t>(rows(i, result_vertices)));
    }
  };

private:
  ExecutionSpace space_;
  loom::Ranks ranks_;
  ConstPoints<memory_space> positions_;
  Kokkos::View<double const*, memory_space> weights_;
  ConstPoints<memory_space> domain_vertices_;
  Kokkos::View<int const*, memory_space> domain_labels_;
  double domain_area_, domain_length_; ///< for the certification of warm_start
  int leaf_size_;
  loom::Capacity msg_capacity_, inbox_capacity_;
  int kept_vertices_per_seed_;
  Forest<memory_space> forest_;
  Kokkos::View<RankTreeNode*, memory_space> rank_tree_;
  std::vector<RankTreeNode> rank_tree_nodes_;            ///< rank_tree_ on the host
  Kokkos::View<int*, memory_space> rank_leaves_;         ///< each rank's node in rank_tree_
  Kokkos::View<TreeNode*, memory_space> rank_top_nodes_; ///< see TravelStep::rank_top_nodes
  RankEnvelopes<memory_space> envelopes_;                ///< see TravelStep::envelopes
  /// The envelopes' grid: it depends on the domain, the ranks and the number of seeds only.
  EnvelopeGrid envelope_grid_;
  int rank_top_levels_ = 0;
  loom::RowBlocks seed_blocks_;
  long bytes_sent_seeds_ = 0;
  long moved_seeds_ = 0; ///< seeds of this process whose box is on another process
  /// The plan that moves this process's seeds (and, after set_weights(), their weights) to
  /// their boxes, and each local box's index: its tree (whose arrays are views into forest_
  /// beyond TravelStep::max_given_trees boxes) with the box's rows as input indices; the rows
  /// of local box l are
  /// [box_rows_[l], box_rows_[l + 1]).
  std::optional<loom::Distributor<ExecutionSpace>> seeds_to_boxes_;
  std::vector<BoxIndex> boxes_;
  std::vector<std::int64_t> box_rows_;
  bool reweight_ = false; ///< set_weights() was called since the last run
  /// By local box: its index has new weights but not yet their bounds (update_box_bounds()).
  std::vector<char> box_bounds_stale_;
  bool rank_trees_stale_ = false; ///< the trees over the ranks predate the boxes' weights
  bool boxes_kept_ = false;       ///< the last run kept the boxes (set_weights())
  /// Cells the decision pass keeps for packing (those that leave their box at round 0 on a
  /// uniform cloud, then grown to the most senders of a round); a cell without a slot is cut
  /// again when packed.
  int kept_slots_ = 0;
  bool with_polygons_ = false;
  AbandonBelow<memory_space> abandon_;   ///< of the current run (abandon_below)
  bool abandoned_ = false;               ///< the last run gave up
  VertexHeap<memory_space> vertex_heap_; ///< of the finished cells, with polygons
  /// The outputs of this process's seeds, and with polygons each one's offset in the vertex
  /// heap (−1: finished on another process), written as the cells finish (FinishedCells).
  CellOutputs<memory_space> home_;
  Kokkos::View<std::int64_t*, memory_space> heap_first_;
  TravelStatistics<memory_space> statistics_;
  int polygon_passes_ = 0; ///< this process's, this run (TravelStatistics::reruns)
  // warm_start (build_box_cells()): each box's round-0 cells by forest item, the neighbour
  // graph of each box's last ones (by its tree slots), each box's tree slot by row, and the
  // global index of each forest row.
  SlotPolygons<memory_space> box_cells_;
  /// With several local ranks, the slots that box_cells_ takes, kept from one computation to
  /// the next (no new pages to write each time).
  SlotPolygons<memory_space> box_cells_storage_;
  std::vector<NeighbourGraph<memory_space>> box_graphs_;
  std::vector<Kokkos::View<int*, memory_space>> box_slot_of_;
  Kokkos::View<int*, memory_space> row_gids_;
  /// The area and centroid of each forest item's cell in box_cells_ (box_result_cols).
  Kokkos::View<double**, Kokkos::LayoutRight, memory_space> box_results_;
  long box_warm_cells_ = 0;
  int box_warm_rounds_ = 0;
  int box_coarse_levels_ = 0;
};

} // namespace sdot::detail
