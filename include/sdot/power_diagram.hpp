#pragma once
/// @file
/// sdot::PowerDiagram: the power (Laguerre) diagram of weighted seeds in a convex domain.

#include <loom/ranks.hpp>
#include <loom/row_blocks.hpp>
#include <loom/spread.hpp>

#include <sdot/base/scan.hpp>
#include <sdot/distributed/travelling_cells.hpp>
#include <sdot/geometry/box_cells.hpp>
#include <sdot/geometry/canonical_cells.hpp>
#include <sdot/geometry/cells.hpp>
#include <sdot/geometry/coarse_to_fine.hpp>
#include <sdot/geometry/kept_polygons.hpp>
#include <sdot/geometry/validate.hpp>
#include <sdot/geometry/warm_cells.hpp>
#include <sdot/half_spaces.hpp>
#include <sdot/points.hpp>

#include <Kokkos_Timer.hpp>

#include <cmath>
#include <cstdint>
#include <functional>
#include <limits>
#include <map>
#include <memory>
#include <optional>
#include <sstream>
#include <stdexcept>
#include <string>
#include <type_traits>
#include <vector>

namespace sdot {

/// How a first computation of a diagram (no earlier neighbours to start from; several ranks:
/// each box's first-round cells) finds the seeds that cut each cell
/// (PowerDiagramOptions::coarse_to_fine).
enum class CoarseToFine {
  /// From a coarser diagram where half of the cells or more are predicted more than a grid step
  /// from their seeds (weights that move most cells far from their seeds, as optimal-transport
  /// weights do on clustered seeds), and by the search elsewhere.
  automatic,
  always, ///< from a coarser diagram
  never   ///< by the search alone
};

/// Options of a PowerDiagram.
struct PowerDiagramOptions {
  /// Ranks emulated in this process (boxes of seeds); 1: a single box.
  int nb_boxes = 1;
  /// Vertices of a travelling cell's message: grown (doubled) to the largest message of a
  /// round; the travelling cells' polygons hold at least twice as many (and 32), and when one
  /// overflows, this doubles and only that round is cut again. Kept for the next call.
  int msg_capacity = 16;
  /// Cells one rank sends to one other rank in a round: a sizing hint, grown (doubled) to the
  /// most sent in a round and kept for the next call; messages are sized by their count, so a
  /// small value never causes a rerun.
  int inbox_capacity = 64;
  /// Vertices a cell may have in the kernel's first pass; cells that need more are rebuilt
  /// with twice as many, as often as needed (16, 32 or 64 are kept in kernel-local memory).
  int vertex_capacity = 32;
  /// Largest number of seeds in a leaf of the spatial index.
  int leaf_size = 8;
  /// Travelling cells with polygons (keep_polygons, same_bits): room, per seed of a process's
  /// boxes, for the vertices of the cells finished there (3 doubles each, appended compactly;
  /// room never written is never touched). A sizing hint: a round that needs more is cut again
  /// with what it needed, and the room is kept for later computations of this diagram (in
  /// options()).
  int kept_vertices_per_seed = 10;
  /// Keep the polygons built with the measures, so that cell_polygons() does not build the
  /// cells again (one box: slots of 16 vertices per cell, 320 bytes per seed, written by the
  /// measures pass; travelling cells: the polygons come back with the measures). The
  /// transport solver sets it.
  bool keep_polygons = false;
  /// Build the cells of a recomputation (set_weights()) from the last complete computation's
  /// neighbours: each cell is the domain clipped by the seeds of its earlier neighbouring cells
  /// and of theirs, then certified against its neighbours' cells; those that fail are built by
  /// the search. The same cells to round-off (not bit for bit) as without it, and the same
  /// bits for the same sequence of computations. Pays off when the weights change little
  /// between computations, as in the transport solver, which sets it. Keeps the polygons (as
  /// keep_polygons) and the neighbours (about 30 bytes per seed). Several ranks: each box's
  /// first-round cells (the domain cut by the box's own seeds) are built so from the neighbours
  /// among the box's seeds, in slots of 16 vertices (320 bytes per seed); the rounds that
  /// follow are unchanged.
  bool warm_start = false;
  /// The same bits whatever the decomposition: measures, centroids and polygons (hence the
  /// Jacobian) are the same at one box, any number of boxes and of processes, and with or
  /// without warm_start. Each cell, once its edges are known, is recomputed from them: every
  /// vertex from the two lines that meet there, edges shorter than rounding can make
  /// (1e-12 × the cell's distance to its seed) removed, the vertices from the least one (by x,
  /// then y) on, the area and centroid summed in that order. One box: in the cell kernel.
  /// Several ranks: the polygons come home with the measures (as with keep_polygons) and are
  /// recomputed there, after one exchange of the seeds that other processes' cells name
  /// (phase "same_bits").
  bool same_bits = false;
  /// Give up as soon as a cell's measure is below this value (measures() then holds only some
  /// of the measures, and statistics().abandoned is true): for callers that reject such a
  /// diagram anyway, as the transport solver's damping does. Several ranks: a cell whose
  /// polygon, at any round, has less area gives up on every process alike (after that
  /// round's cut); −∞: never.
  double abandon_below = -std::numeric_limits<double>::infinity();
  /// A first computation (one box; several ranks: each box's first-round cells, its own
  /// diagram, box by box): the diagram of every fourth seed (along the index), at the
  /// same weights, is built first, itself so down to `coarsest_level_seeds` seeds; each seed is
  /// located in it, and the seeds located around it are the candidates its cell is built from.
  /// The cells are then certified as warm_start certifies them, and those that fail are built
  /// again by the search: exact in every case (to round-off, not bit for bit against the
  /// search). The search's cost grows with how far the weights move the cells from their
  /// seeds; this one does not (power-diagram.md, "First computations from coarser diagrams").
  /// Keeps the polygons as keep_polygons does. A box of more than 4e8 seeds searches.
  CoarseToFine coarse_to_fine = CoarseToFine::automatic;
  /// coarse_to_fine: the coarsest diagram, built by the search, has at most this many seeds
  /// (1 024).
  int coarsest_level_seeds = detail::default_coarsest_level_seeds;
  /// Called on every process as each phase of a computation ends, with the phase's name and
  /// its seconds on this process (the entries of PowerDiagramStatistics::seconds but "total"):
  /// for progress output. Empty: nothing is called.
  std::function<void(std::string const& phase, double seconds)> phase_ended;
};

/// What a computation did, for users and benchmarks.
struct PowerDiagramStatistics {
  int overflowed_cells = 0; ///< cells that needed more than vertex_capacity vertices
  int vertex_reruns = 0;    ///< kernel passes after the first, for those cells
  /// vertices a cell may have in the kernel's last pass (one box)
  int final_vertex_capacity = 0;
  bool abandoned = false;   ///< PowerDiagramOptions::abandon_below was met: measures incomplete
  int ranks = 1;            ///< ranks (boxes) that computed the diagram
  int rounds = 0;           ///< rounds of travelling cells
  long travelled_cells = 0; ///< messages sent by all the ranks (cells, copies and answers)
  /// Bytes sent by all the ranks: the travelling cells' messages between ranks (what each
  /// holds, and its length), and the seeds and results that go to another process.
  long bytes_sent = 0;
  /// Passes that cut again, with larger polygons, the travelling cells that did not fit theirs
  /// (msg_capacity; over all the processes), and rounds cut again because the kept vertices
  /// did not fit (kept_vertices_per_seed)
  int reruns = 0;
  int msg_capacity = 0; ///< final msg_capacity (kept for the next call)
  /// final inbox_capacity (kept for the next call)
  int inbox_capacity = 0;
  /// warm_start: cells kept from their earlier neighbours' clipping (several ranks: first-round
  /// cells, over all the ranks); coarse_to_fine: cells kept from their candidates' clipping
  int warm_cells = 0;
  /// warm_start, coarse_to_fine: certifications that sent cells to be built again, widened or
  /// by the search (several ranks: the most of one box)
  int warm_rounds = 0;
  /// coarse_to_fine: the coarser diagrams built to guess the neighbours (0: the search alone).
  int coarse_levels = 0;
  /// The spatial index (one rank), or the boxes and their indexes (several), kept from the
  /// computation before (set_weights()): only the weights and their bounds were updated.
  bool index_kept = false;
  /// Seconds per phase on this process, and "total": one rank "tree" (the index) and "cells";
  /// several ranks "boxes" (the bisection and the seeds moved to their boxes), "tree" (the
  /// boxes' indexes), "box_cells" (warm_start), "cells" (the rounds) and "results"; with
  /// same_bits, "same_bits".
  std::map<std::string, double> seconds;
};

/// Input placement tags: the seeds given whole to this process, or spread over ranks.
struct WholeInput {};
struct SpreadInput {};

/// The cells as polygons, for inspection. Cell i has the vertices
/// [offsets(i), offsets(i+1)) in counter-clockwise order; the edge from vertex k to the next
/// one was made by `edge_sources(k)`: a seed index (≥ 0), or -1 - h for the boundary
/// half-space h. An empty cell has no vertex.
template <class MemorySpace>
struct CellPolygons {
  Kokkos::View<int*, MemorySpace> offsets;      ///< [cells + 1]: first vertex of each cell
  Points<MemorySpace> vertices;                 ///< [vertices, 2]: the cells' vertices
  Kokkos::View<int*, MemorySpace> edge_sources; ///< [vertices]: what made each vertex's edge
};

namespace detail {
template <class ExecutionSpace, class Input>
class DiagramCells;

/// `polygons` as a CellPolygonReader (cell c is seed c's).
template <class MemorySpace>
CellPolygonReader<MemorySpace> polygon_reader(CellPolygons<MemorySpace> const& polygons) {
  CellPolygonReader<MemorySpace> reader;
  reader.offsets = polygons.offsets;
  reader.vertices = polygons.vertices;
  reader.labels = polygons.edge_sources;
  return reader;
}

} // namespace detail

/// The power diagram of seeds x_i with weights w_i in a convex domain:
/// cell_i = { x in the domain : |x − x_i|² − w_i ≤ |x − x_j|² − w_j for all j }.
///
/// Two seeds with the same position and weight: the lower index keeps the cell. Results are
/// computed on first use, in the execution space's memory, and kept.
///
/// What decides how it is computed is the input: positions given whole (one process) are
/// computed as one box, or by `options.nb_boxes` ranks emulated in this process, with cells
/// travelling between them; positions spread over ranks (`loom::spread(block, ranks)` on each
/// process) are computed by those ranks, and the results are spread the same way.
///
/// @tparam ExecutionSpace where the kernels run (its memory space holds every View).
/// @tparam Input WholeInput or SpreadInput (deduced from the constructor's arguments).
template <class ExecutionSpace = Kokkos::DefaultExecutionSpace, class Input = WholeInput>
class PowerDiagram {
public:
  using execution_space = ExecutionSpace;                     ///< Where the kernels run.
  using memory_space = typename ExecutionSpace::memory_space; ///< Where every View lives.
  using positions_type = Points<memory_space>;                ///< Seeds or centroids, [N, 2].
  using scalars_type = Kokkos::View<double*, memory_space>;   ///< One value per seed, [N].
  /// True for spread input (SpreadInput).
  static constexpr bool is_spread = std::is_same<Input, SpreadInput>::value;
  /// What measures() returns: a View, or a loom::Spread of Views for spread input.
  using measures_type = std::conditional_t<is_spread, loom::Spread<scalars_type>, scalars_type>;
  /// What centroids() returns: a View, or a loom::Spread of Views for spread input.
  using centroids_type =
      std::conditional_t<is_spread, loom::Spread<positions_type>, positions_type>;

  /// @param positions the seeds, [N, 2]
  /// @param weights one weight per seed, [N]
  /// @param boundaries half-spaces a·x ≤ c whose intersection is the (bounded) domain
  /// @param options how the diagram is computed (see PowerDiagramOptions)
  /// @throws std::invalid_argument on mismatched sizes, a non-finite seed (its index), an
  /// empty or unbounded domain, or a bad option. Nothing is computed then.
  template <class I = Input, class = std::enable_if_t<std::is_same<I, WholeInput>::value>>
  PowerDiagram(positions_type positions, scalars_type weights, std::vector<HalfSpace> boundaries,
               PowerDiagramOptions options = {})
      : PowerDiagram(ExecutionSpace{}, positions, weights, std::move(boundaries), options) {}

  /// The same, with the kernels run on the execution space instance `space`.
  template <class I = Input, class = std::enable_if_t<std::is_same<I, WholeInput>::value>>
  PowerDiagram(ExecutionSpace const& space, positions_type positions, scalars_type weights,
               std::vector<HalfSpace> boundaries, PowerDiagramOptions options = {})
      : space_(space), positions_(positions), weights_(weights), options_(options),
        domain_(domain_polygon(boundaries)) {
    check_options();
    detail::validate_seeds(space_, positions_, weights_, domain_);
    ranks_ = loom::BoxRanks(options_.nb_boxes);
    upload_domain();
  }

  /// Spread input: every process passes its block of the seeds (collective). The ranks are
  /// those of the spread positions; a problem on any process is reported on every process.
  /// Positions of another layout than sdot::Points' (loom::spread_host makes LayoutRight rows)
  /// are copied into it once.
  template <class V, class W, class I = Input,
            class = std::enable_if_t<std::is_same<I, SpreadInput>::value>>
  PowerDiagram(loom::Spread<V> const& positions, loom::Spread<W> const& weights,
               std::vector<HalfSpace> boundaries, PowerDiagramOptions options = {})
      : PowerDiagram(ExecutionSpace{}, positions, weights, std::move(boundaries), options) {}

  /// The same, with the kernels run on the execution space instance `space`.
  template <class V, class W, class I = Input,
            class = std::enable_if_t<std::is_same<I, SpreadInput>::value>>
  PowerDiagram(ExecutionSpace const& space, loom::Spread<V> const& positions,
               loom::Spread<W> const& weights, std::vector<HalfSpace> boundaries,
               PowerDiagramOptions options = {})
      : space_(space),
        positions_(detail::in_points_layout(space, positions.value(), "sdot::positions")),
        weights_(weights.value()), options_(options), ranks_(positions.ranks()) {
    throw_on_every_process([&] {
      domain_ = domain_polygon(boundaries);
      check_options();
      detail::check_spread_boxes("sdot::PowerDiagram", options_.nb_boxes, ranks_.local_count());
      first_global_index_ = loom::RowBlocks(ranks_, positions_.extent(0)).begin();
      detail::validate_seeds(space_, positions_, weights_, domain_, first_global_index_);
    });
    upload_domain();
  }

  /// Areas of the cells, in the order of the seeds. They add up to the domain's area.
  /// Spread input: this process's block in `value()`, collective reductions.
  measures_type measures() {
    compute();
    if constexpr (is_spread)
      return loom::spread(outputs_.measures, ranks_, local_block_counts());
    else
      return outputs_.measures;
  }

  /// Centroids of the cells (the seed's position for an empty cell).
  centroids_type centroids() {
    compute();
    if constexpr (is_spread)
      return loom::spread(outputs_.centroids, ranks_, local_block_counts());
    else
      return outputs_.centroids;
  }

  /// The cells as polygons (computed on each call, unless options().keep_polygons). With
  /// spread input, the cells of this process's seeds, in its input order; edge sources are
  /// global seed indices (this process's seed i is global seed first_global_index() + i).
  /// Collective when spread (unless the polygons were kept).
  /// @throws std::logic_error when the computation was abandoned (options().abandon_below)
  CellPolygons<memory_space> cell_polygons();

  /// New weights for the same seeds (whole input; one per seed; the positions' values must be
  /// those given to the constructor). The next computation gives
  /// what a new PowerDiagram would (bit for bit; to round-off with options().warm_start, which
  /// starts from this computation's neighbours), and keeps the spatial index (its order and
  /// grids depend on the positions only: the weight bounds are updated, ~10 % of a diagram,
  /// and with warm_start only once a cell goes to the search);
  /// with several boxes, the boxes and their indexes (statistics().index_kept).
  /// @throws std::invalid_argument for a size mismatch or a non-finite weight (its index);
  /// nothing changes then
  template <class I = Input, class = std::enable_if_t<std::is_same<I, WholeInput>::value>>
  void set_weights(scalars_type weights) {
    detail::validate_seeds(space_, positions_, weights, domain_);
    replace_weights(weights);
  }

  /// New positions and weights for the same seeds (whole input; one of each per seed), as a
  /// Lagrangian scheme gives at each time step. The spatial index (with several boxes: the
  /// boxes and their indexes) is built again. With options().warm_start and one box, the
  /// cells of the next computation start from the neighbours of the last complete one, as
  /// after set_weights(): seeds that moved a little keep most of their neighbours, and the
  /// certification makes the result what a new PowerDiagram gives (to round-off) however far
  /// they moved.
  /// @throws std::invalid_argument for a size mismatch or a bad seed (its index); nothing
  /// changes then
  template <class I = Input, class = std::enable_if_t<std::is_same<I, WholeInput>::value>>
  void set_positions(positions_type positions, scalars_type weights) {
    if (positions.extent(0) != positions_.extent(0)) {
      std::ostringstream msg;
      msg << "sdot::PowerDiagram::set_positions: " << positions.extent(0)
          << " positions given for a diagram of " << positions_.extent(0) << " seeds";
      throw std::invalid_argument(msg.str());
    }
    detail::validate_seeds(space_, positions, weights, domain_);
    // The neighbours by input index, until the new index numbers them by its slots.
    if (tree_built_ && !neighbours_.empty() && slot_of_index_.extent(0) == positions_.extent(0))
      moved_neighbours_ =
          detail::renumbered_graph(space_, neighbours_, size(), slot_of_index_, tree_.index);
    positions_ = positions;
    neighbours_ = {};
    slot_of_index_ = {};
    tree_ = {};
    tree_built_ = false;
    weight_bounds_stale_ = false;
    finest_quad_sums_ = {};
    travelling_.reset(); // several boxes: their bisection depends on the positions
    replace_weights(weights);
  }

  /// Spread input: new weights for the same seeds (collective; this process's block in
  /// `weights.value()`), as set_weights() for whole input: the spatial index, or the boxes and
  /// their indexes, are kept; with one rank (one process of one box) and options().warm_start,
  /// the neighbours too.
  /// @throws std::invalid_argument (on every process) for a size mismatch or a non-finite
  /// weight on any process (its global index); nothing changes then
  template <class W, class I = Input, class = std::enable_if_t<std::is_same<I, SpreadInput>::value>>
  void set_weights(loom::Spread<W> const& weights) {
    throw_on_every_process([&] {
      detail::validate_seeds(space_, positions_, weights.value(), domain_, first_global_index_);
    });
    replace_weights(weights.value());
  }

  /// Sets options().abandon_below for the next computation (see PowerDiagramOptions).
  void set_abandon_below(double value) {
    options_.abandon_below = value;
    computed_ = false;
  }

  /// Seeds of this process (all of them for whole input).
  int size() const { return static_cast<int>(positions_.extent(0)); }
  /// Global index of this process's first seed (0 for whole input).
  std::int64_t first_global_index() const { return first_global_index_; }
  /// The ranks that compute the diagram.
  loom::Ranks const& ranks() const { return ranks_; }
  /// The domain, as a polygon.
  DomainPolygon const& domain() const { return domain_; }
  /// The options, msg_capacity and inbox_capacity as grown by the computations.
  PowerDiagramOptions const& options() const { return options_; }
  /// What the last computation did.
  PowerDiagramStatistics const& statistics() const { return statistics_; }
  /// The execution space instance the kernels run on.
  ExecutionSpace const& execution_space_instance() const { return space_; }

private:
  template <class E, class I>
  friend class detail::DiagramCells; // polygon_reader()

  /// The polygons of cell_polygons() as the Jacobian reads them: the slots of a one-box
  /// computation (not compacted: cell_polygons() still can), with the polygons of the cells
  /// without a slot built again apart, else cell_polygons()'s.
  detail::CellPolygonReader<memory_space> polygon_reader();
  /// Frees the slots polygon_reader() reads (one box): a later cell_polygons() computes the
  /// polygons again.
  void release_kept_slots() { kept_ = {}; }

  /// Runs `check` (collective: every process calls it); an std::invalid_argument it throws on
  /// any process is thrown on every process (the first process's message).
  template <class Check>
  void throw_on_every_process(Check&& check) const {
    std::string problem;
    try {
      check();
    } catch (std::invalid_argument const& e) {
      problem = e.what();
    }
    try {
      ranks_.agree(problem.empty(), problem);
    } catch (loom::Error const& e) {
      throw std::invalid_argument(e.what());
    }
  }

  /// The weights of the next computation: what depends on the positions only is kept.
  void replace_weights(scalars_type weights) {
    weights_ = weights;
    if (travelling_) // the boxes and indexes depend on the positions only
      travelling_->set_weights(weights_);
    outputs_ = {};
    kept_ = {};
    kept_polygons_ = {};
    statistics_ = {};
    reweight_tree_ = tree_built_;
    computed_ = false;
  }

  /// PowerDiagramOptions::coarse_to_fine for the layers below.
  detail::CoarseToFineChoice coarse_to_fine_choice() const {
    return {options_.coarse_to_fine == CoarseToFine::always,
            options_.coarse_to_fine == CoarseToFine::never, options_.coarsest_level_seeds};
  }

  /// tree_.index inverted, computed once per index (set_positions() empties it).
  Kokkos::View<int const*, memory_space> tree_slot_of_index() {
    if (slot_of_index_.extent(0) != std::size_t(size()))
      slot_of_index_ = detail::slot_of_index(space_, tree_);
    return slot_of_index_;
  }

  /// The one-box index's weight bounds for its current weights (set_seed_weights() leaves
  /// them to be computed here, before a search reads them).
  void update_weight_bounds() {
    if (!weight_bounds_stale_)
      return;
    detail::compute_weight_bounds(space_, tree_, finest_quad_sums_);
    weight_bounds_stale_ = false;
    finest_quad_sums_ = {};
  }

  /// This process's rows per local rank (the whole block on local rank 0).
  std::vector<std::int64_t> local_block_counts() const {
    std::vector<std::int64_t> counts(ranks_.local_count(), 0);
    counts[0] = positions_.extent(0);
    return counts;
  }

  /// The domain polygon into the memory space, through host mirrors of the device Views (their
  /// layout, whatever the backend's default: LayoutLeft on CUDA).
  void upload_domain() {
    std::size_t const n = domain_.vertices.size();
    domain_vertices_ = decltype(domain_vertices_)(
        Kokkos::view_alloc(space_, Kokkos::WithoutInitializing, "sdot::domain::vertices"), n);
    domain_labels_ = decltype(domain_labels_)(
        Kokkos::view_alloc(space_, Kokkos::WithoutInitializing, "sdot::domain::labels"), n);
    auto vertices_host = Kokkos::create_mirror_view(domain_vertices_);
    auto labels_host = Kokkos::create_mirror_view(domain_labels_);
    for (std::size_t k = 0; k < n; ++k) {
      vertices_host(k, 0) = domain_.vertices[k][0];
      vertices_host(k, 1) = domain_.vertices[k][1];
      labels_host(k) = detail::boundary_label(domain_.edge_half_space[k]);
    }
    Kokkos::deep_copy(space_, domain_vertices_, vertices_host);
    Kokkos::deep_copy(space_, domain_labels_, labels_host);
    space_.fence();
  }

  void check_options() const {
    auto positive = [](int value, char const* name) {
      if (value < 1)
        throw std::invalid_argument(std::string("sdot::PowerDiagram: option ") + name + " = " +
                                    std::to_string(value) + " must be at least 1");
    };
    positive(options_.nb_boxes, "nb_boxes");
    positive(options_.msg_capacity, "msg_capacity");
    positive(options_.inbox_capacity, "inbox_capacity");
    positive(options_.vertex_capacity, "vertex_capacity");
    positive(options_.kept_vertices_per_seed, "kept_vertices_per_seed");
    positive(options_.coarsest_level_seeds, "coarsest_level_seeds");
    if (options_.leaf_size < 2)
      throw std::invalid_argument("sdot::PowerDiagram: option leaf_size = " +
                                  std::to_string(options_.leaf_size) + " must be at least 2");
  }

  ConstPoints<memory_space> const_domain_vertices() const { return domain_vertices_; }
  Kokkos::View<int const*, memory_space> const_domain_labels() const { return domain_labels_; }
  /// The diagonal of the domain's bounding box (the certification of warm_start).
  double domain_length() const {
    return std::hypot(domain_.hi[0] - domain_.lo[0], domain_.hi[1] - domain_.lo[1]);
  }

  void compute();
  /// The polygons of the computation done (kept, or built again).
  CellPolygons<memory_space> computed_polygons();
  /// Never a silent wrong result (collective): a measure or centroid that is not finite, or
  /// measures that do not add up to the domain's area (seeds or weights beyond what double
  /// precision resolves at the domain's scale), throw std::runtime_error on every process. A
  /// diagram abandoned early (abandon_below), or one without seeds, is not checked.
  void check_cells();
  void compute_one_box();
  void compute_travelling();

  ExecutionSpace space_;
  positions_type positions_;
  scalars_type weights_;
  PowerDiagramOptions options_;
  DomainPolygon domain_;
  Points<memory_space> domain_vertices_;
  Kokkos::View<int*, memory_space> domain_labels_;
  loom::Ranks ranks_;
  std::shared_ptr<detail::TravellingCells<ExecutionSpace>> travelling_;
  detail::SeedTree<memory_space> tree_;
  detail::CellOutputs<memory_space> outputs_;
  detail::SlotPolygons<memory_space> kept_;         ///< keep_polygons, one box: until compacted
  CellPolygons<memory_space> kept_polygons_;        ///< keep_polygons: the polygons, once known
  detail::NeighbourGraph<memory_space> neighbours_; ///< warm_start: of the last complete one
  /// set_positions() with warm_start: neighbours_ by input index, for the next index built
  detail::NeighbourGraph<memory_space> moved_neighbours_;
  /// set_positions() starts from the last neighbours when at least 1/moved_start_fraction of
  /// the cells are predicted more than a grid step from their seeds (detail::predicted_far)
  static constexpr int moved_start_fraction = 10;
  Kokkos::View<int*, memory_space> slot_of_index_; ///< warm_start: tree_.index inverted
  PowerDiagramStatistics statistics_;
  std::int64_t first_global_index_ = 0;
  bool computed_ = false;
  bool tree_built_ = false;    ///< tree_ holds the index of these positions (one box)
  bool reweight_tree_ = false; ///< the weights changed since tree_ was built
  /// tree_ holds the current weights, but its bounds are of earlier ones or none (a
  /// computation that sent no cell to the search, or was abandoned before one)
  bool weight_bounds_stale_ = false;
  /// While the bounds are stale: the finest quads' sums for the current weights, when their
  /// bounds are computed (detail::compute_finest_quad_bounds()), else empty.
  Kokkos::View<detail::QuadSums*, memory_space> finest_quad_sums_;
};

// ---- the computation (out of the class: compiled once in the library for the default
// execution space, see SDOT_ENABLE_EXPLICIT_INSTANTIATION) ----

template <class ExecutionSpace, class Input>
auto PowerDiagram<ExecutionSpace, Input>::cell_polygons() -> CellPolygons<memory_space> {
  compute();
  if (statistics_.abandoned)
    throw std::logic_error("sdot::PowerDiagram::cell_polygons: the computation was abandoned "
                           "(a cell fell below options().abandon_below)");
  return computed_polygons();
}

template <class ExecutionSpace, class Input>
auto PowerDiagram<ExecutionSpace, Input>::polygon_reader()
    -> detail::CellPolygonReader<memory_space> {
  compute();
  if (statistics_.abandoned || kept_polygons_.offsets.extent(0) > 0 || ranks_.size() > 1 ||
      kept_.capacity == 0)
    return detail::polygon_reader(cell_polygons());
  detail::CellPolygonReader<memory_space> reader;
  reader.slots = kept_;
  reader.slot_seed = tree_.index;
  reader.seeds = tree_.seeds;
  if (kept_.overflow_items.extent(0) > 0) { // those cells' polygons, searched again
    update_weight_bounds();
    Kokkos::View<int*, memory_space> offsets, labels;
    Points<memory_space> vertices;
    detail::overflowed_cell_polygons(space_, tree_, const_domain_vertices(), const_domain_labels(),
                                     Kokkos::View<int const*, memory_space>(outputs_.vertex_counts),
                                     kept_, offsets, vertices, labels, outputs_.same_bits);
    reader.offsets = offsets;
    reader.vertices = vertices;
    reader.labels = labels;
  }
  return reader;
}

template <class ExecutionSpace, class Input>
auto PowerDiagram<ExecutionSpace, Input>::computed_polygons() -> CellPolygons<memory_space> {
  if (kept_polygons_.offsets.extent(0))
    return kept_polygons_;
  // One box: the cells without a slot, or all of them without slots, are searched again.
  if (ranks_.size() == 1 && (kept_.capacity == 0 || kept_.overflow_items.extent(0) > 0))
    update_weight_bounds();
  if (ranks_.size() == 1 && kept_.capacity > 0) {
    detail::kept_cell_polygons(space_, tree_, const_domain_vertices(), const_domain_labels(),
                               outputs_.vertex_counts, kept_, kept_polygons_.offsets,
                               kept_polygons_.vertices, kept_polygons_.edge_sources,
                               outputs_.same_bits);
    kept_ = {};
    return kept_polygons_;
  }
  if (ranks_.size() > 1) {
    std::map<std::string, double> seconds; // the polygons' own computation: not reported
    detail::PhaseClock phases(seconds, detail::PhaseEnded());
    auto out = travelling_->run(phases, true, -std::numeric_limits<double>::infinity(),
                                options_.warm_start, coarse_to_fine_choice());
    return {out.polygon_offsets, out.polygon_vertices, out.polygon_labels};
  }
  CellPolygons<memory_space> polygons;
  detail::allocate_polygon_rows(space_, outputs_.vertex_counts, polygons.offsets, polygons.vertices,
                                polygons.edge_sources);
  detail::CellOutputs<memory_space> out =
      detail::allocate_cell_outputs(space_, size(), "sdot::scratch::");
  out.polygon_offsets = polygons.offsets;
  out.polygon_vertices = polygons.vertices;
  out.polygon_labels = polygons.edge_sources;
  out.same_bits = outputs_.same_bits;
  detail::build_cells(space_, tree_, const_domain_vertices(), const_domain_labels(),
                      options_.vertex_capacity, out);
  return polygons;
}

template <class ExecutionSpace, class Input>
void PowerDiagram<ExecutionSpace, Input>::compute() {
  if (computed_)
    return;
  sdot::compat::ScopedRegion region("sdot::PowerDiagram::compute");
  Kokkos::Timer total;
  statistics_.seconds.clear();
  statistics_.ranks = ranks_.size();
  if (ranks_.size() == 1)
    compute_one_box();
  else
    compute_travelling();
  // One box: in the cell kernel.
  if (options_.same_bits && ranks_.size() > 1 && !statistics_.abandoned) {
    // Travelling cells end on any rank: their polygons, back home, are recomputed there.
    detail::PhaseClock phases(statistics_.seconds, options_.phase_ended);
    kept_polygons_ =
        detail::canonical_cells(space_, ranks_, ConstPoints<memory_space>(positions_),
                                Kokkos::View<double const*, memory_space>(weights_),
                                first_global_index_, const_domain_vertices(), const_domain_labels(),
                                computed_polygons(), outputs_.measures, outputs_.centroids);
    space_.fence();
    phases.end("same_bits");
  }
  check_cells();
  statistics_.seconds["total"] = total.seconds();
  computed_ = true;
}

template <class ExecutionSpace, class Input>
void PowerDiagram<ExecutionSpace, Input>::check_cells() {
  if (statistics_.abandoned)
    return;
  auto const check = detail::check_cells(space_, outputs_.measures, outputs_.centroids);
  bool const bad = check.first_non_finite < static_cast<int>(outputs_.measures.extent(0));
  auto const all = ranks_.allgather(std::vector<double>{
      check.sum, bad ? double(first_global_index_ + check.first_non_finite) : -1.0, check.value,
      double(outputs_.measures.extent(0))});
  double sum = 0, seeds = 0; // in process order: the same bits on every process
  for (int p = 0; p < ranks_.process_count(); ++p) {
    sum += all[4 * p];
    seeds += all[4 * p + 3];
    if (all[4 * p + 1] >= 0) {
      std::ostringstream msg;
      msg << "sdot::PowerDiagram: the cell of seed " << std::int64_t(all[4 * p + 1])
          << " has a measure or centroid that is not finite (measure " << all[4 * p + 2]
          << "): its seed or weight is beyond what double precision can compute at this "
             "domain's scale";
      throw std::runtime_error(msg.str());
    }
  }
  if (seeds > 0 && !(std::fabs(sum - domain_.area) <= 1e-6 * domain_.area)) {
    std::ostringstream msg;
    msg.precision(17);
    msg << "sdot::PowerDiagram: the cells' measures add up to " << sum
        << " instead of the domain's area " << domain_.area
        << ": the seeds' coordinates or weights are beyond what double precision resolves at "
           "this domain's scale";
    throw std::runtime_error(msg.str());
  }
}

template <class ExecutionSpace, class Input>
void PowerDiagram<ExecutionSpace, Input>::compute_one_box() {
  detail::PhaseClock phases(statistics_.seconds, options_.phase_ended);
  int const n = size();
  statistics_.index_kept = tree_built_;
  // A new index, new weights in the index built, or (a recomputation) the index as it is.
  if (!tree_built_) {
    tree_ = detail::build_seed_tree_without_bounds(
        space_, ConstPoints<memory_space>(positions_),
        Kokkos::View<double const*, memory_space>(weights_), options_.leaf_size);
    weight_bounds_stale_ = true;
    finest_quad_sums_ = detail::compute_finest_quad_bounds(space_, tree_);
    // set_positions(): the last neighbours in the new index's slots, where the weights move
    // the cells away from their seeds; otherwise the search is faster than the certification.
    if (!moved_neighbours_.empty() &&
        detail::cells_predicted_far(space_, tree_) >= n / moved_start_fraction)
      neighbours_ =
          detail::renumbered_graph(space_, moved_neighbours_, n, tree_.index, tree_slot_of_index());
    moved_neighbours_ = {};
  }
  // The weights' bounds are computed only if a cell goes to the search, which alone reads
  // them; coarse_to_fine's choice (no warm start) reads the finest quads', computed here.
  if (tree_built_ && reweight_tree_) {
    detail::set_seed_weights(space_, tree_, Kokkos::View<double const*, memory_space>(weights_));
    weight_bounds_stale_ = true;
    finest_quad_sums_ = detail::cells_from_neighbours(options_.warm_start, neighbours_)
                            ? Kokkos::View<detail::QuadSums*, memory_space>()
                            : detail::compute_finest_quad_bounds(space_, tree_);
  }
  tree_built_ = true;
  reweight_tree_ = false;
  space_.fence();
  phases.end("tree");
  outputs_ = detail::allocate_cell_outputs(space_, n, "sdot::");
  if (options_.same_bits) // every seed is here
    outputs_.same_bits = {ConstPoints<memory_space>(positions_),
                          Kokkos::View<double const*, memory_space>(weights_),
                          0,
                          {},
                          {}};
  detail::AbandonBelow<memory_space> abandon;
  if (options_.abandon_below > -std::numeric_limits<double>::infinity()) {
    abandon.raised =
        Kokkos::View<int, memory_space>(Kokkos::view_alloc(space_, "sdot::abandon_below"));
    abandon.below = options_.abandon_below;
  }
  detail::BoxCellsOptions box;
  box.vertex_capacity = options_.vertex_capacity;
  box.leaf_size = options_.leaf_size;
  box.coarse = coarse_to_fine_choice();
  box.warm_start = options_.warm_start;
  box.keep_polygons = options_.keep_polygons;
  box.domain_area = domain_.area;
  box.domain_length = domain_length();
  auto const built = detail::build_one_box_cells(
      space_, tree_, const_domain_vertices(), const_domain_labels(), box, outputs_, kept_,
      neighbours_, tree_slot_of_index(), abandon, [this] { update_weight_bounds(); });
  detail::CellsReport const& report = built.cells;
  statistics_.coarse_levels = built.coarse_levels;
  statistics_.warm_cells = built.warm_cells;
  statistics_.warm_rounds = built.warm_rounds;
  statistics_.abandoned = report.abandoned;
  space_.fence();
  phases.end("cells");
  statistics_.overflowed_cells = report.overflowed_cells;
  statistics_.vertex_reruns = report.reruns;
  statistics_.final_vertex_capacity = report.final_capacity;
}

template <class ExecutionSpace, class Input>
void PowerDiagram<ExecutionSpace, Input>::compute_travelling() {
  if (!travelling_)
    travelling_ = std::make_shared<detail::TravellingCells<ExecutionSpace>>(
        space_, ranks_, positions_, weights_, const_domain_vertices(), const_domain_labels(),
        domain_.area, domain_length(), options_.leaf_size, options_.msg_capacity,
        options_.inbox_capacity, options_.kept_vertices_per_seed);
  detail::PhaseClock phases(statistics_.seconds, options_.phase_ended);
  bool const keep = options_.keep_polygons || options_.same_bits;
  auto out = travelling_->run(phases, keep, options_.abandon_below, options_.warm_start,
                              coarse_to_fine_choice());
  statistics_.abandoned = travelling_->abandoned();
  statistics_.index_kept = travelling_->boxes_kept();
  if (keep && !statistics_.abandoned)
    kept_polygons_ = {out.polygon_offsets, out.polygon_vertices, out.polygon_labels};
  outputs_.measures = out.measures;
  outputs_.centroids = out.centroids;
  auto const& t = travelling_->statistics();
  statistics_.rounds = t.rounds;
  statistics_.travelled_cells = t.travelled_cells;
  statistics_.bytes_sent = t.bytes_sent;
  statistics_.reruns = t.reruns;
  statistics_.warm_cells = static_cast<int>(t.warm_cells);
  statistics_.warm_rounds = t.warm_rounds;
  statistics_.coarse_levels = t.coarse_levels;
  statistics_.msg_capacity = t.msg_capacity;
  statistics_.inbox_capacity = t.inbox_capacity;
  // The capacities found are kept for later computations of this diagram.
  options_.msg_capacity = t.msg_capacity;
  options_.inbox_capacity = t.inbox_capacity;
  options_.kept_vertices_per_seed = travelling_->kept_vertices_per_seed();
}

/// Whole input: PowerDiagram(positions, weights, boundaries[, options]).
template <class... P, class... Q>
PowerDiagram(Kokkos::View<double* [2], P...>, Kokkos::View<double*, Q...>, std::vector<HalfSpace>,
             PowerDiagramOptions = {})
    -> PowerDiagram<typename Kokkos::View<double* [2], P...>::execution_space, WholeInput>;

/// Spread input: PowerDiagram(loom::spread(positions, ranks), loom::spread(weights, ranks), ...).
template <class V, class W>
PowerDiagram(loom::Spread<V>, loom::Spread<W>, std::vector<HalfSpace>, PowerDiagramOptions = {})
    -> PowerDiagram<typename V::execution_space, SpreadInput>;

/// Spread input, with the execution space instance first.
template <class ExecutionSpace, class V, class W>
PowerDiagram(ExecutionSpace, loom::Spread<V>, loom::Spread<W>, std::vector<HalfSpace>,
             PowerDiagramOptions = {}) -> PowerDiagram<ExecutionSpace, SpreadInput>;

#ifdef SDOT_EXPLICIT_INSTANTIATION
// Compiled in the sdot library (src/sdot/power_diagram.cpp).
extern template class PowerDiagram<Kokkos::DefaultExecutionSpace, WholeInput>;
extern template class PowerDiagram<Kokkos::DefaultExecutionSpace, SpreadInput>;
#endif

} // namespace sdot
