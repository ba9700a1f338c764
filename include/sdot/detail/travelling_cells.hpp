#pragma once
// The distributed power diagram: travelling cells.
//
// The seeds are split into one box per rank (boxes.hpp). Each rank builds the cells of its
// seeds from the whole domain, cut by its own seeds. A cell that the seeds of another rank
// could still cut travels there (its seed, its vertices with their edge labels and the
// ranks it visited, in a message of at most msg_capacity vertices), is cut further there, and
// so on; a cell never returns to a rank it visited. When no cell travels any more, each
// measure goes back to its seed's process. No seed is copied between ranks for the cells.

#include <loom/capacity.hpp>
#include <loom/detail/segments.hpp>
#include <loom/distribute.hpp>
#include <loom/ranks.hpp>
#include <loom/spmd.hpp>

#include <sdot/detail/boxes.hpp>
#include <sdot/detail/cell_kernel.hpp>
#include <sdot/detail/polygon_storage.hpp>
#include <sdot/detail/scan.hpp>

#include <map>
#include <string>
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

/// Trees of the local ranks, stored one after the other.
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
  Kokkos::View<int*, MemorySpace> depth, finest_block_level; ///< [L]
  Kokkos::View<RingOffset*, MemorySpace> ring;               ///< the same for every tree
  int local_count = 0;

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

/// A node of the tree over the ranks' boxes (the bisection's own tree): a leaf is one rank.
struct RankTreeNode {
  TreeNode box;
  int left, right; ///< children (-1 for a leaf)
  int rank;        ///< the rank of a leaf, -1 otherwise
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
  nodes.push_back({box, left, right, -1});
  return static_cast<int>(nodes.size()) - 1;
}

/// Layout of a travelling cell's message (a row of doubles).
struct MessageLayout {
  int capacity; // msg_capacity
  enum : int { gid = 0, x, y, w, nb_vertices, nb_visited, header };
  KOKKOS_INLINE_FUNCTION int vertex(int k) const { return header + 3 * k; }
  KOKKOS_INLINE_FUNCTION int visited(int k) const { return header + 3 * capacity + k; }
  KOKKOS_INLINE_FUNCTION int cols() const { return header + 4 * capacity; }
};

/// Final result of a cell, sent to its seed's process.
/// With polygons, nb_vertices then (x, y, edge label) per vertex follow (absolute coordinates).
enum : int {
  result_gid = 0,
  result_area,
  result_cx,
  result_cy,
  result_rank,
  result_cols,
  result_nb_vertices = result_cols,
  result_first_vertex
};

template <class MemorySpace>
struct TravelStatistics {
  int rounds = 0;
  long travelled_cells = 0; ///< messages sent by all ranks (one per hop)
  long bytes_sent = 0;      ///< message and result bytes that left their rank, all ranks
  int reruns = 0;
  int msg_capacity = 0, inbox_capacity = 0;
};

/// One step of the cells of a round: each item (a seed of a local rank at round 0, a received
/// message later) is cut by the seeds of its local rank, then either finished (its result
/// row is written) or sent on to the nearest rank that may still cut it.
template <class MemorySpace>
struct TravelStep {
  Forest<MemorySpace> forest;
  Kokkos::View<double const* [2], MemorySpace> domain_vertices;
  Kokkos::View<int const*, MemorySpace> domain_labels;
  Kokkos::View<RankTreeNode const*, MemorySpace> rank_tree; ///< every rank's box; root last
  int first_rank;                                           ///< global rank of local rank 0
  bool from_messages;                                       ///< items are messages, not seeds
  Kokkos::View<double const**, Kokkos::LayoutRight, MemorySpace> inbox;
  Kokkos::View<int const*, MemorySpace> inbox_first; ///< [L+1]
  MessageLayout layout;
  int capacity; ///< vertices the polygons hold
  // Pass 1 outputs, per item: the next rank (-1: finished) and the result row.
  Kokkos::View<int*, MemorySpace> next_rank;
  Kokkos::View<double**, Kokkos::LayoutRight, MemorySpace> results;
  /// Per item: the message's vertices (or visited ranks + 1) for a traveller, 0 for a finished
  /// cell, 2 × capacity for a cell that overflowed the polygon. Independent of msg_capacity,
  /// so that a pass can be reused after msg_capacity grows.
  Kokkos::View<int*, MemorySpace> overflow;
  // Pass 2 (packing), when `outbox` is allocated: travellers(k) is the item of message k.
  Kokkos::View<int const*, MemorySpace> travellers;
  Kokkos::View<double**, Kokkos::LayoutRight, MemorySpace> outbox;

  KOKKOS_FUNCTION void operator()(Polygon& cell, int k) const {
    step(cell, outbox.extent(0) ? travellers(k) : k, k);
  }

  KOKKOS_FUNCTION void step(Polygon& cell, int item, int k) const {
    int l;
    CellSeed seed;
    if (from_messages) {
      l = loom::detail::segment_of(inbox_first, forest.local_count, item);
      seed = CellSeed{inbox(item, MessageLayout::x), inbox(item, MessageLayout::y),
                      inbox(item, MessageLayout::w),
                      static_cast<int>(inbox(item, MessageLayout::gid)), -1};
      cell.size = 0;
      cell.max_radius2 = 0;
      int const nv = static_cast<int>(inbox(item, MessageLayout::nb_vertices));
      for (int v = 0; v < nv; ++v)
        cell.push(inbox(item, layout.vertex(v)), inbox(item, layout.vertex(v) + 1),
                  static_cast<int>(inbox(item, layout.vertex(v) + 2)));
    } else {
      l = loom::detail::segment_of(forest.seeds.first, forest.local_count, item);
      Seed const s = forest.seeds.all(item);
      seed = CellSeed{s.x, s.y, s.w, forest.gids.all(item), item - forest.seeds.first(l)};
      start_from_domain(cell, s.x, s.y, domain_vertices, domain_labels);
    }
    int const rank = first_rank + l;
    ClipResult const r = clip_by_tree(cell, seed, forest.tree(l));
    if (!outbox.extent(0)) {
      overflow(item) = r == ClipResult::overflow ? 2 * capacity : 0;
      next_rank(item) = -1;
      results(item, result_gid) = seed.index;
      results(item, result_rank) = rank;
      if (r == ClipResult::overflow)
        return;
    }
    // The nearest rank, not visited yet, whose seeds may cut the cell: a depth-first walk of
    // the tree over the ranks' boxes, nearest child first, pruned by the stopping rule.
    int best = -1;
    double best_d2 = 0;
    if (r != ClipResult::emptied) {
      int const nb_visited =
          from_messages ? static_cast<int>(inbox(item, MessageLayout::nb_visited)) : 0;
      constexpr int max_stack = 64;
      int stack[max_stack];
      int sp = 0;
      stack[sp++] = static_cast<int>(rank_tree.extent(0)) - 1;
      while (sp > 0) {
        RankTreeNode const node = rank_tree(stack[--sp]);
        double const d2 = box_distance2(node.box, seed.x, seed.y);
        if ((best >= 0 && d2 >= best_d2) ||
            !node_may_cut(d2, seed.w, node.box.wmax, cell.max_radius2) ||
            !box_may_cut_vertices(cell, seed, node.box))
          continue;
        if (node.rank >= 0) {
          bool skip = node.rank == rank;
          for (int v = 0; v < nb_visited && !skip; ++v)
            skip = static_cast<int>(inbox(item, layout.visited(v))) == node.rank;
          if (!skip) {
            best = node.rank;
            best_d2 = d2;
          }
          continue;
        }
        double const dl = box_distance2(rank_tree(node.left).box, seed.x, seed.y);
        double const dr = box_distance2(rank_tree(node.right).box, seed.x, seed.y);
        bool const left_first = dl <= dr;
        stack[sp++] = left_first ? node.right : node.left;
        stack[sp++] = left_first ? node.left : node.right;
      }
    }
    if (!outbox.extent(0)) {
      next_rank(item) = best;
      if (best < 0) {
        double area = 0, mx = 0, my = 0;
        if (r != ClipResult::emptied)
          cell.integrals(area, mx, my);
        results(item, result_area) = area;
        results(item, result_cx) = area > 0 ? seed.x + mx / area : seed.x;
        results(item, result_cy) = area > 0 ? seed.y + my / area : seed.y;
        if (results.extent(1) > result_cols) {
          int const nv = r == ClipResult::emptied ? 0 : cell.size;
          results(item, result_nb_vertices) = nv;
          for (int v = 0; v < nv; ++v) {
            results(item, result_first_vertex + 3 * v) = seed.x + cell.x(v);
            results(item, result_first_vertex + 3 * v + 1) = seed.y + cell.y(v);
            results(item, result_first_vertex + 3 * v + 2) = cell.label(v);
          }
        }
      } else {
        int const nb_visited =
            from_messages ? static_cast<int>(inbox(item, MessageLayout::nb_visited)) : 0;
        int const needed = cell.size > nb_visited + 1 ? cell.size : nb_visited + 1;
        overflow(item) = needed;
      }
      return;
    }
    // Pack the message (its size was checked in the first pass).
    outbox(k, MessageLayout::gid) = seed.index;
    outbox(k, MessageLayout::x) = seed.x;
    outbox(k, MessageLayout::y) = seed.y;
    outbox(k, MessageLayout::w) = seed.w;
    outbox(k, MessageLayout::nb_vertices) = cell.size;
    for (int v = 0; v < cell.size; ++v) {
      outbox(k, layout.vertex(v)) = cell.x(v);
      outbox(k, layout.vertex(v) + 1) = cell.y(v);
      outbox(k, layout.vertex(v) + 2) = cell.label(v);
    }
    int nb_visited = 0;
    if (from_messages) {
      nb_visited = static_cast<int>(inbox(item, MessageLayout::nb_visited));
      for (int v = 0; v < nb_visited; ++v)
        outbox(k, layout.visited(v)) = inbox(item, layout.visited(v));
    }
    outbox(k, layout.visited(nb_visited)) = rank;
    outbox(k, MessageLayout::nb_visited) = nb_visited + 1;
  }
};

/// Per-process outputs of the distributed computation, in this process's input order.
template <class MemorySpace>
struct DistributedOutputs {
  Kokkos::View<double*, MemorySpace> measures;
  Kokkos::View<double* [2], MemorySpace> centroids;
  // With polygons: cell i has vertices [polygon_offsets(i), polygon_offsets(i+1)).
  Kokkos::View<int*, MemorySpace> polygon_offsets;
  Kokkos::View<double* [2], MemorySpace> polygon_vertices;
  Kokkos::View<int*, MemorySpace> polygon_labels;
};

/// The distributed computation of this process's part of the diagram (collective).
template <class ExecutionSpace>
class TravellingCells {
public:
  using memory_space = typename ExecutionSpace::memory_space;
  using Policy = Kokkos::RangePolicy<ExecutionSpace>;
  using Rows = Kokkos::View<double**, Kokkos::LayoutRight, memory_space>;

  TravellingCells(ExecutionSpace const& space, loom::Ranks ranks,
                  Kokkos::View<double const* [2], memory_space> positions,
                  Kokkos::View<double const*, memory_space> weights,
                  Kokkos::View<double const* [2], memory_space> domain_vertices,
                  Kokkos::View<int const*, memory_space> domain_labels, int leaf_size,
                  int msg_capacity, int inbox_capacity)
      : space_(space), ranks_(std::move(ranks)), positions_(positions), weights_(weights),
        domain_vertices_(domain_vertices), domain_labels_(domain_labels), leaf_size_(leaf_size),
        msg_capacity_(msg_capacity), inbox_capacity_(inbox_capacity) {}

  /// Measures and centroids of this process's seeds; `seconds` gets one entry per phase.
  DistributedOutputs<memory_space> run(std::map<std::string, double>& seconds,
                                       bool with_polygons = false) {
    with_polygons_ = with_polygons;
    loom::compat::ScopedRegion region("sdot::travelling_cells");
    Kokkos::Timer phase;
    int const n = static_cast<int>(positions_.extent(0));
    // Global numbering: this process's seeds follow those of the processes before it.
    std::vector<std::int64_t> block_sizes = ranks_.allgather(std::vector<std::int64_t>{n});
    process_first_.assign(ranks_.process_count() + 1, 0);
    for (int p = 0; p < ranks_.process_count(); ++p)
      process_first_[p + 1] = process_first_[p] + block_sizes[p];
    std::int64_t const first_gid = process_first_[ranks_.process_rank()];
    std::int64_t const total = process_first_.back();
    if (total >= (std::int64_t(1) << 31) - 1)
      throw std::invalid_argument("sdot: more than 2^31 - 2 seeds are not supported yet");

    if (!forest_.seeds.all.extent(0) && forest_.local_count == 0)
      build_boxes_and_trees(first_gid, total);
    space_.fence();
    seconds["boxes"] = phase.seconds();
    phase.reset();

    auto program = [this](loom::Ranks const&) {
      incomplete_ = false;
      return travel();
    };
    auto runner = loom::spmd(program, ranks_);
    Rows results = runner();
    if (incomplete_) // a run stopped for a size that spmd did not grow: never return partial
                     // results
      throw std::logic_error("sdot: travelling cells stopped without a capacity to grow");
    statistics_.reruns = runner.last_reruns();
    statistics_.msg_capacity = msg_capacity_.value();
    statistics_.inbox_capacity = inbox_capacity_.value();
    space_.fence();
    seconds["cells"] = phase.seconds();
    phase.reset();

    DistributedOutputs<memory_space> out = send_results_home(results, first_gid, n);
    space_.fence();
    seconds["results"] = phase.seconds();
    // Traffic over all the processes.
    auto traffic =
        ranks_.allgather(std::vector<long>{statistics_.travelled_cells, statistics_.bytes_sent});
    statistics_.travelled_cells = statistics_.bytes_sent = 0;
    for (int p = 0; p < ranks_.process_count(); ++p) {
      statistics_.travelled_cells += traffic[2 * p];
      statistics_.bytes_sent += traffic[2 * p + 1];
    }
    return out;
  }

  TravelStatistics<memory_space> const& statistics() const { return statistics_; }
  loom::Capacity const& msg_capacity() const { return msg_capacity_; }

  // The steps below are public only because CUDA's extended lambdas cannot live in private
  // member functions; TravellingCells is an implementation detail of PowerDiagram.

  void build_boxes_and_trees(std::int64_t first_gid, std::int64_t total) {
    int const n = static_cast<int>(positions_.extent(0));
    auto box = bisect_into_boxes(space_, ranks_, positions_, first_gid, total);
    // Seeds move to the rank of their box: x, y, w, global index.
    Rows rows(Kokkos::view_alloc(space_, Kokkos::WithoutInitializing, "sdot::travel::seed_rows"), n,
              4);
    auto positions = positions_;
    auto weights = weights_;
    Kokkos::parallel_for(
        "sdot::travel::pack_seeds", Policy(space_, 0, n), KOKKOS_LAMBDA(int i) {
          rows(i, 0) = positions(i, 0);
          rows(i, 1) = positions(i, 1);
          rows(i, 2) = weights(i);
          rows(i, 3) = static_cast<double>(first_gid + i);
        });
    auto mine = loom::distribute(space_, ranks_, box, rows);
    bytes_sent_seeds_ = 0;

    // One tree per local rank, stored one after the other.
    int const local = ranks_.local_count();
    forest_.local_count = local;
    std::vector<SeedTree<memory_space>> trees(local);
    std::vector<Kokkos::View<int*, memory_space>> gids(local);
    std::vector<int> depth(local), finest_block_level(local);
    std::vector<TreeNode> boxes_local(local);
    for (int l = 0; l < local; ++l) {
      int const begin = static_cast<int>(mine.offsets[l]),
                count = static_cast<int>(mine.offsets[l + 1] - begin);
      Kokkos::View<double* [2], memory_space> p(
          Kokkos::view_alloc(space_, Kokkos::WithoutInitializing, "sdot::travel::box_positions"),
          count);
      Kokkos::View<double*, memory_space> w(
          Kokkos::view_alloc(space_, Kokkos::WithoutInitializing, "sdot::travel::box_weights"),
          count);
      auto r = mine.rows;
      Kokkos::parallel_for(
          "sdot::travel::unpack_seeds", Policy(space_, 0, count), KOKKOS_LAMBDA(int i) {
            p(i, 0) = r(begin + i, 0);
            p(i, 1) = r(begin + i, 1);
            w(i) = r(begin + i, 2);
          });
      trees[l] = build_seed_tree(space_, Kokkos::View<double const* [2], memory_space>(p),
                                 Kokkos::View<double const*, memory_space>(w), leaf_size_);
      // The tree's index is a position in the rank's rows: make it the global index.
      gids[l] = Kokkos::View<int*, memory_space>(
          Kokkos::view_alloc(space_, Kokkos::WithoutInitializing, "sdot::travel::gids"), count);
      auto g = gids[l];
      auto index = trees[l].index;
      Kokkos::parallel_for(
          "sdot::travel::global_indices", Policy(space_, 0, count),
          KOKKOS_LAMBDA(int t) { g(t) = static_cast<int>(r(begin + index(t), 3)); });
      depth[l] = trees[l].depth;
      finest_block_level[l] = trees[l].finest_block_level;
      double const inf = loom::compat::infinity<double>();
      boxes_local[l] = TreeNode{inf, inf, -inf, -inf, -inf};
      if (count > 0) {
        auto root = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(),
                                                        Kokkos::subview(trees[l].nodes, 1));
        boxes_local[l] = root();
      }
    }
    auto field = [&](auto member) {
      using View = std::decay_t<decltype(trees[0].*member)>;
      std::vector<View> parts(local);
      for (int l = 0; l < local; ++l)
        parts[l] = trees[l].*member;
      return concatenate(parts);
    };
    forest_.seeds = field(&SeedTree<memory_space>::seeds);
    forest_.gids = concatenate(gids);
    forest_.nodes = field(&SeedTree<memory_space>::nodes);
    forest_.blocks = field(&SeedTree<memory_space>::blocks);
    forest_.cell_begin = field(&SeedTree<memory_space>::cell_begin);
    forest_.row_wmax = field(&SeedTree<memory_space>::row_wmax);
    forest_.quads = field(&SeedTree<memory_space>::quads);
    forest_.quad_first = field(&SeedTree<memory_space>::quad_first);
    forest_.depth = to_device("sdot::travel::depth", depth);
    forest_.finest_block = field(&SeedTree<memory_space>::finest_block);
    forest_.finest_block_level = to_device("sdot::travel::finest_block_level", finest_block_level);
    forest_.ring = local > 0 ? trees[0].ring : Kokkos::View<RingOffset*, memory_space>();
    // Every rank's box, on every process.
    auto all_boxes = ranks_.allgather(boxes_local);
    std::vector<RankTreeNode> rank_tree;
    build_rank_tree(all_boxes, 0, ranks_.size(), rank_tree);
    rank_tree_ = to_device("sdot::travel::rank_tree", rank_tree);
  }

  /// The parts one after the other, with their offsets.
  template <class T>
  Concatenated<T, memory_space>
  concatenate(std::vector<Kokkos::View<T*, memory_space>> const& parts) {
    std::vector<int> first(parts.size() + 1, 0);
    for (std::size_t l = 0; l < parts.size(); ++l)
      first[l + 1] = first[l] + static_cast<int>(parts[l].extent(0));
    Concatenated<T, memory_space> c;
    c.first = to_device("sdot::travel::forest_first", first);
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

  int result_width() const {
    return with_polygons_ ? result_first_vertex + 3 * polygon_capacity() : result_cols;
  }

  /// Kernel-local polygon capacity for a message capacity (≥ 2 × msg_capacity).
  int polygon_capacity() const {
    int c = 32;
    while (c < 2 * msg_capacity_.value() || c < static_cast<int>(domain_vertices_.extent(0)) + 2)
      c *= 2;
    return c;
  }

  /// Runs one pass (decide, or pack when step.outbox is set) over `count` work items.
  void run_step(TravelStep<memory_space> step, int count, char const* label) {
    step.capacity = polygon_capacity();
    for_each_cell(space_, label, step, count, step.capacity);
  }

  /// The program of one run (one rank per local rank): rounds until no cell travels.
  /// Returns the result rows of the cells that finished on this process's ranks.
  Rows travel() {
    MessageLayout const layout{msg_capacity_.value()};
    int const local = ranks_.local_count();
    int const size = ranks_.size();
    TravelStep<memory_space> step;
    step.forest = forest_;
    step.domain_vertices = domain_vertices_;
    step.domain_labels = domain_labels_;
    step.rank_tree = rank_tree_;
    step.first_rank = ranks_.first_local();
    step.layout = layout;
    step.from_messages = false;
    std::vector<Rows> finished;
    std::int64_t finished_count = 0;
    statistics_.rounds = 0;
    statistics_.travelled_cells = 0;
    statistics_.bytes_sent = bytes_sent_seeds_;
    Rows inbox;
    std::vector<std::int64_t> inbox_first;
    int items = static_cast<int>(forest_.seeds.all.extent(0));
    for (;;) {
      step.next_rank = Kokkos::View<int*, memory_space>(
          Kokkos::view_alloc(space_, Kokkos::WithoutInitializing, "sdot::travel::next_rank"),
          items);
      step.results =
          Rows(Kokkos::view_alloc(space_, Kokkos::WithoutInitializing, "sdot::travel::results"),
               items, result_width());
      step.overflow = Kokkos::View<int*, memory_space>(
          Kokkos::view_alloc(space_, Kokkos::WithoutInitializing, "sdot::travel::overflow"), items);
      step.outbox = Rows();
      step.travellers = Kokkos::View<int const*, memory_space>();
      // The first round depends on neither capacity, unless a polygon overflowed (then on the
      // polygon capacity) or polygons are kept (the rows' width): after a rerun, reuse it.
      bool const first_round = !step.from_messages;
      int most_vertices = 0; // the largest message of the pass (or 2 × polygon capacity)
      if (first_round && first_round_.valid &&
          (first_round_.polygon_capacity == polygon_capacity() ||
           first_round_.most_vertices <= first_round_.polygon_capacity) &&
          static_cast<int>(first_round_.results.extent(1)) == result_width()) {
        step.next_rank = first_round_.next_rank;
        step.results = first_round_.results;
        step.overflow = first_round_.overflow;
        most_vertices = first_round_.most_vertices;
      } else {
        run_step(step, items, "sdot::travel::decide");
        auto overflow = step.overflow;
        Kokkos::parallel_reduce(
            "sdot::travel::most_vertices", Policy(space_, 0, items),
            KOKKOS_LAMBDA(int i, int& m) { m = overflow(i) > m ? overflow(i) : m; },
            Kokkos::Max<int>(most_vertices));
        if (first_round)
          first_round_ = {true,           polygon_capacity(), most_vertices,
                          step.next_rank, step.results,       step.overflow};
      }

      // Sizes found too small anywhere stop the run everywhere (spmd reruns it).
      auto next_rank = step.next_rank;
      int const needed_vertices = most_vertices > layout.capacity ? most_vertices : 0;
      // Messages per (local rank, destination) this round.
      Kokkos::View<int*, memory_space> per_pair(
          Kokkos::view_alloc(space_, "sdot::travel::per_pair"), std::size_t(local) * size);
      Kokkos::View<int const*, memory_space> item_first =
          step.from_messages ? step.inbox_first
                             : Kokkos::View<int const*, memory_space>(forest_.seeds.first);
      Kokkos::parallel_for(
          "sdot::travel::count_pairs", Policy(space_, 0, items), KOKKOS_LAMBDA(int i) {
            if (next_rank(i) >= 0) {
              int const l = loom::detail::segment_of(item_first, local, i);
              Kokkos::atomic_add(&per_pair(l * size + next_rank(i)), 1);
            }
          });
      int most_per_pair = 0, travellers = 0;
      Kokkos::parallel_reduce(
          "sdot::travel::most_per_pair", Policy(space_, 0, local * size),
          KOKKOS_LAMBDA(int k, int& m) { m = per_pair(k) > m ? per_pair(k) : m; },
          Kokkos::Max<int>(most_per_pair));
      Kokkos::parallel_reduce(
          "sdot::travel::count_travellers", Policy(space_, 0, items),
          KOKKOS_LAMBDA(int i, int& c) { c += next_rank(i) >= 0; }, travellers);
      // Reported on every process, overflowing or not: the capacities of a run must be the
      // same everywhere for spmd to agree on them.
      msg_capacity_.report(needed_vertices);
      inbox_capacity_.report(most_per_pair);
      if (ranks_.any(needed_vertices > 0 || most_per_pair > inbox_capacity_.value())) {
        incomplete_ = true; // spmd grows the capacities and runs again
        return Rows();
      }

      // Finished cells: keep their result rows.
      int done = items - travellers;
      if (done > 0) {
        int const width = result_width();
        Rows kept(Kokkos::view_alloc(space_, Kokkos::WithoutInitializing, "sdot::travel::finished"),
                  done, width);
        auto results = step.results;
        Kokkos::parallel_scan(
            "sdot::travel::keep_finished", Policy(space_, 0, items),
            KOKKOS_LAMBDA(int i, int& k, bool final) {
              if (next_rank(i) < 0) {
                if (final)
                  for (int c = 0; c < width; ++c)
                    kept(k, c) = results(i, c);
                ++k;
              }
            });
        finished.push_back(kept);
        finished_count += done;
      }
      if (!ranks_.any(travellers > 0))
        break;

      // Travellers: pack their messages and send them on.
      Kokkos::View<int*, memory_space> list(
          Kokkos::view_alloc(space_, Kokkos::WithoutInitializing, "sdot::travel::travellers"),
          travellers);
      Kokkos::View<int*, memory_space> dest(
          Kokkos::view_alloc(space_, Kokkos::WithoutInitializing, "sdot::travel::destinations"),
          travellers);
      Kokkos::parallel_scan(
          "sdot::travel::list_travellers", Policy(space_, 0, items),
          KOKKOS_LAMBDA(int i, int& k, bool final) {
            if (next_rank(i) >= 0) {
              if (final) {
                list(k) = i;
                dest(k) = next_rank(i);
              }
              ++k;
            }
          });
      step.travellers = list;
      step.outbox =
          Rows(Kokkos::view_alloc(space_, Kokkos::WithoutInitializing, "sdot::travel::outbox"),
               travellers, layout.cols());
      run_step(step, travellers, "sdot::travel::pack");
      statistics_.travelled_cells += travellers;
      statistics_.bytes_sent += static_cast<long>(travellers) * layout.cols() * sizeof(double);
      auto received = loom::distribute(space_, ranks_, dest, step.outbox);
      ++statistics_.rounds;

      inbox = received.rows;
      step.inbox = inbox;
      step.inbox_first =
          to_device("sdot::travel::inbox_first",
                    std::vector<int>(received.offsets.begin(), received.offsets.end()));
      step.from_messages = true;
      items = static_cast<int>(inbox.extent(0));
    }
    Rows all(Kokkos::view_alloc(space_, Kokkos::WithoutInitializing, "sdot::travel::all_finished"),
             finished_count, result_width());
    std::int64_t at = 0;
    for (auto const& part : finished) {
      std::int64_t const c = part.extent(0);
      Kokkos::deep_copy(space_, Kokkos::subview(all, Kokkos::make_pair(at, at + c), Kokkos::ALL),
                        part);
      at += c;
    }
    return all;
  }

  /// Each result goes to the process that holds its seed in its input block: those of this
  /// process's seeds are written directly, the others go through loom::distribute.
  DistributedOutputs<memory_space> send_results_home(Rows const& results, std::int64_t first_gid,
                                                     int n) {
    int const count = static_cast<int>(results.extent(0));
    auto process_first = to_device("sdot::travel::process_first", process_first_);
    int const processes = ranks_.process_count(), local = ranks_.local_count();
    int const process = ranks_.process_rank();
    Kokkos::View<int*, memory_space> dest(
        Kokkos::view_alloc(space_, Kokkos::WithoutInitializing, "sdot::travel::home"), count);
    long leaving = 0; // results that leave the rank where their cell finished
    Kokkos::parallel_reduce(
        "sdot::travel::home_rank", Policy(space_, 0, count),
        KOKKOS_LAMBDA(int i, long& c) {
          auto const gid = static_cast<std::int64_t>(results(i, result_gid));
          int const home = loom::detail::segment_of(process_first, processes, gid);
          c += home * local != static_cast<int>(results(i, result_rank));
          dest(i) = home == process ? -1 : home * local; // -1: written here
        },
        leaving);
    statistics_.bytes_sent += leaving * static_cast<long>(results.extent(1) * sizeof(double));
    Rows const received = loom::distribute(space_, ranks_, dest, results).rows;

    DistributedOutputs<memory_space> out;
    out.measures =
        Kokkos::View<double*, memory_space>(Kokkos::view_alloc(space_, "sdot::measures"), n);
    out.centroids =
        Kokkos::View<double* [2], memory_space>(Kokkos::view_alloc(space_, "sdot::centroids"), n);
    if (with_polygons_)
      out.polygon_offsets = Kokkos::View<int*, memory_space>(
          Kokkos::view_alloc(space_, "sdot::polygons::offsets"), n + 1);
    // The rows of this process's seeds: those kept here (dest −1), then those received.
    auto scatter = [&](char const* label, bool vertices) {
      ResultScatter kept{results, dest, first_gid, out, vertices};
      Kokkos::parallel_for(std::string(label) + "_kept", Policy(space_, 0, count), kept);
      ResultScatter arrived{received, {}, first_gid, out, vertices};
      Kokkos::parallel_for(std::string(label) + "_received",
                           Policy(space_, 0, static_cast<int>(received.extent(0))), arrived);
    };
    scatter("sdot::travel::scatter_results", false);
    if (!with_polygons_)
      return out;
    auto offsets = out.polygon_offsets;
    int const total = exclusive_scan(space_, "sdot::travel::polygon_offsets",
                                     Kokkos::subview(offsets, Kokkos::make_pair(0, n)), offsets);
    out.polygon_vertices = Kokkos::View<double* [2], memory_space>(
        Kokkos::view_alloc(space_, Kokkos::WithoutInitializing, "sdot::polygons::vertices"), total);
    out.polygon_labels = Kokkos::View<int*, memory_space>(
        Kokkos::view_alloc(space_, Kokkos::WithoutInitializing, "sdot::polygons::edge_sources"),
        total);
    scatter("sdot::travel::scatter_polygons", true);
    return out;
  }

  /// Writes result rows into the outputs, skipping the rows with dest(i) ≥ 0 when dest is
  /// given: measures, centroids and, with polygons, vertex counts; or, with `vertices` (once
  /// the offsets are known), the polygons' vertices and edge sources.
  struct ResultScatter {
    Rows rows;
    Kokkos::View<int const*, memory_space> dest;
    std::int64_t first_gid;
    DistributedOutputs<memory_space> out;
    bool vertices = false;
    KOKKOS_FUNCTION void operator()(int i) const {
      if (dest.extent(0) && dest(i) >= 0)
        return;
      auto const k = static_cast<std::int64_t>(rows(i, result_gid)) - first_gid;
      if (!vertices) {
        out.measures(k) = rows(i, result_area);
        out.centroids(k, 0) = rows(i, result_cx);
        out.centroids(k, 1) = rows(i, result_cy);
        if (out.polygon_offsets.extent(0))
          out.polygon_offsets(k) = static_cast<int>(rows(i, result_nb_vertices));
        return;
      }
      int const first = out.polygon_offsets(k);
      int const nv = static_cast<int>(rows(i, result_nb_vertices));
      for (int v = 0; v < nv; ++v) {
        out.polygon_vertices(first + v, 0) = rows(i, result_first_vertex + 3 * v);
        out.polygon_vertices(first + v, 1) = rows(i, result_first_vertex + 3 * v + 1);
        out.polygon_labels(first + v) = static_cast<int>(rows(i, result_first_vertex + 3 * v + 2));
      }
    }
  };

private:
  ExecutionSpace space_;
  loom::Ranks ranks_;
  Kokkos::View<double const* [2], memory_space> positions_;
  Kokkos::View<double const*, memory_space> weights_;
  Kokkos::View<double const* [2], memory_space> domain_vertices_;
  Kokkos::View<int const*, memory_space> domain_labels_;
  int leaf_size_;
  loom::Capacity msg_capacity_, inbox_capacity_;
  Forest<memory_space> forest_;
  Kokkos::View<RankTreeNode*, memory_space> rank_tree_;
  std::vector<std::int64_t> process_first_;
  struct FirstRound {
    bool valid = false;
    int polygon_capacity = 0; // of the pass
    int most_vertices = 0;    // its largest message (> polygon_capacity: a polygon overflowed)
    Kokkos::View<int*, memory_space> next_rank;
    Rows results;
    Kokkos::View<int*, memory_space> overflow;
  } first_round_;
  long bytes_sent_seeds_ = 0;
  bool with_polygons_ = false;
  bool incomplete_ = false;
  TravelStatistics<memory_space> statistics_;
};

} // namespace sdot::detail
