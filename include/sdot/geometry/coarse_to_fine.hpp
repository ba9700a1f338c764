#pragma once
// The neighbours of a first computation guessed from a coarser diagram
// (PowerDiagramOptions::coarse_to_fine): the diagram of every fourth seed of the index, at the
// same weights, is built first (itself so, down to a level small enough for the search); each
// seed is located in it, and the seeds located around it are its candidates. The cells are then
// built from the candidates and certified as a warm start's are (warm_cells.hpp): the result is
// exact whatever the guess, which only decides the cost.
//
// Why the guess follows the weights: with c_j = |x_j|² − w_j, the power diagram is dual to the
// lower convex hull of the points (x_j, c_j), two cells sharing an edge where two points share
// a hull edge. A subset's hull lies above the whole set's; the facet of the subset's hull above
// x_i is the diagram vertex v of the subset's cells that maximises f(v) = pow_S(v) − pow_i(v)
// (pow_S: the power of the cell holding v), a concave piecewise-linear function of v, found by a
// walk over the coarser cells (LocateInCoarseCells). The seeds that share a corner of that facet
// (the coarser seeds owning v), and those located at the facets around them, are where the
// seed's neighbours lie: at optimal-transport weights, whose cells lie far from their seeds, as
// at zero weights (uniform and clustered clouds: 99.98 % of the cells get all their neighbours
// among about 67 candidates). Where the seed's lifted point lies above that facet, the owners of
// v alone hide it on the domain (hidden_on_domain()): its cell is empty, built at once.

#include <sdot/base/radix_sort.hpp>
#include <sdot/base/scan.hpp>
#include <sdot/geometry/kept_polygons.hpp>
#include <sdot/geometry/seed_tree.hpp>
#include <sdot/geometry/warm_cells.hpp>
#include <sdot/points.hpp>

#include <Kokkos_Core.hpp>

#include <cstdint>
#include <functional>

namespace sdot::detail {

/// Every `coarse_step`-th seed of the index (its tree slots 0, 4, 8, ...) makes the coarser level.
inline constexpr int coarse_step = 4;
/// The most seeds of a box built from coarser diagrams: the vertex keys (coarser seeds × slot
/// capacity) and the located seeds' records (3 per seed) stay within int's range.
inline constexpr int max_coarse_to_fine_seeds = 400000000;
/// PowerDiagramOptions::coarsest_level_seeds's default.
inline constexpr int default_coarsest_level_seeds = 1024;
/// PowerDiagramOptions::coarse_to_fine as the layers below the diagram read it.
struct CoarseToFineChoice {
  bool always = false;                         ///< from coarser diagrams whatever the weights
  bool never = false;                          ///< by the search alone
  int coarsest = default_coarsest_level_seeds; ///< coarsest_level_seeds
};

/// Coarser seeds a seed's list of places may hold (its owners and their cells' neighbours).
inline constexpr int max_coarse_places = 64;
/// Steps of the walk that locates a seed (it takes 1.3–1.6 on average).
inline constexpr int max_locate_steps = 256;
/// Coarser seeds on either side along the index that the walk may start from, when the nearest
/// one's cell is empty (as many are where the weights empty cells).
inline constexpr int max_start_tries = 8;

/// The cells of a coarser level: its index (input index = coarser seed number k, the seed of
/// tree slot coarse_step × k of the finer level) and its kept polygons.
template <class MemorySpace>
struct CoarseCells {
  SeedTree<MemorySpace> tree;
  SlotPolygons<MemorySpace> kept;
  Kokkos::View<int*, MemorySpace> slot_of; ///< coarser seed number -> its tree slot
  /// The coarser seed numbers whose cells have kept vertices, in increasing order.
  Kokkos::View<int*, MemorySpace> with_vertices;
  /// By tree slot of this level, where its coarser level located the seed: the tree slot of this
  /// level of a coarser seed owning that vertex (itself at its own cell there; -1: nowhere).
  /// Where a seed's cell is empty here, a walk's start near where the finer seeds about it lie.
  Kokkos::View<int*, MemorySpace> near;
  int levels = 1; ///< this level and those built for it

  /// The seed (coarser seed number, or a negative boundary label) that made edge k of the cell
  /// of tree slot `slot`: from vertex k to vertex k + 1.
  KOKKOS_INLINE_FUNCTION int label(int slot, int k) const {
    return kept.labels(std::size_t(slot) * std::size_t(kept.capacity) + k);
  }
};

/// What the coarser cells say of a seed's own cell (LocateInCoarseCells::hidden).
enum LocatedCell : int {
  located_visible = 0, ///< pow_coarse − pow_s ≥ 0 at its vertex
  located_hidden = 1,  ///< < 0 there, or no vertex found: likely empty, built all the same
  located_empty = 2,   ///< the owners of its vertex hide it on the domain: empty
};
/// Relative margin of hidden_on_domain(): the rounding of the sums it compares.
inline constexpr double hidden_margin = 1e-9;

/// Whether the `count` seeds `by` (at most 3), with multipliers mu ≥ 0 (not all 0), hide `me` on
/// the domain, which empties the cell of `me` whatever the other seeds: with y_i = x_i − x_me,
/// at the point x_me + x,
///   g(x) = Σ μ_i (pow_me − pow_i) = Σ μ_i (w_i − w_me − |y_i|²) + 2 x · Σ μ_i y_i,
/// affine: positive at every vertex of the domain, it is positive on the domain, and one of the
/// seeds is nearer in power than `me` at every point of it. Any μ ≥ 0 makes a valid test; the
/// caller's make it pass where it can (the barycentric weights of x_me in the triangle of three
/// seeds: the lifted point (x_me, |x_me|² − w_me) lies above the plane of theirs).
template <class DomainVertices>
KOKKOS_INLINE_FUNCTION bool hidden_on_domain(Seed const* by, double const* mu, int count,
                                             Seed const& me,
                                             DomainVertices const& domain_vertices) {
  double constant = 0, magnitude = 0, rx = 0, ry = 0, spread = 0;
  bool nonnegative = true;
  for (int i = 0; i < count; ++i) {
    double const yx = by[i].x - me.x, yy = by[i].y - me.y, y2 = yx * yx + yy * yy;
    nonnegative &= mu[i] >= 0;
    constant += mu[i] * (by[i].w - me.w - y2);
    magnitude += mu[i] * (sdot::compat::fabs(by[i].w) + sdot::compat::fabs(me.w) + y2);
    rx += mu[i] * yx;
    ry += mu[i] * yy;
    spread += mu[i] * sdot::compat::sqrt(y2);
  }
  if (!nonnegative || !(magnitude > 0))
    return false;
  double lowest = sdot::compat::infinity<double>(), reach2 = 0;
  for (int v = 0; v < int(domain_vertices.extent(0)); ++v) {
    double const x = domain_vertices(v, 0) - me.x, y = domain_vertices(v, 1) - me.y;
    lowest = sdot::compat::min(lowest, constant + 2 * (x * rx + y * ry));
    reach2 = sdot::compat::max(reach2, x * x + y * y);
  }
  return lowest > hidden_margin * (magnitude + 2 * sdot::compat::sqrt(reach2) * spread);
}

/// Locates each seed of the finer tree in the coarser cells, at the vertex V that maximises
/// pow_coarse − pow_s: vertex_keys(3 s + r), r < 3, are V's place in the polygon of each of its
/// owners (coarser slot × slot capacity + position), -1 where V has fewer owners. A seed of the
/// coarser level whose cell is not empty, or one whose walk finds no vertex, is located nowhere
/// (all -1). hidden(s) (LocatedCell): pow_coarse − pow_s < 0 at V, a hint that the cell of s is
/// empty; located_empty where V's owners hide s on the whole domain (hidden_on_domain()):
/// then the cell of s is empty, and s is nobody's candidate (it cuts no cell).
template <class MemorySpace>
struct LocateInCoarseCells {
  SeedTree<MemorySpace> tree; ///< the finer level
  CoarseCells<MemorySpace> coarse;
  ConstPoints<MemorySpace> domain_vertices;
  Kokkos::View<int*, MemorySpace> vertex_keys;
  Kokkos::View<int*, MemorySpace> hidden;
  /// By tree slot of `tree`: the tree slot of a coarser seed owning the seed's vertex (itself
  /// when it is a coarser seed at its own cell; see CoarseCells::near).
  Kokkos::View<int*, MemorySpace> nearby;
  /// 0: the coarser seeds (slots that are multiples of coarse_step); 1: the others, each walk
  /// starting where the coarser seed before it along the index ended.
  int pass = 0;

  /// The vertex of the cell of coarser slot `slot` where pow_owner − pow_s is largest: its
  /// position in the slot (-1: no vertex kept), and the value.
  KOKKOS_INLINE_FUNCTION int best_vertex(int slot, Seed const& me, double& value) const {
    int const size = coarse.kept.counts(slot);
    Seed const owner = coarse.tree.seeds(slot);
    std::size_t const begin = std::size_t(slot) * std::size_t(coarse.kept.capacity);
    double const constant =
        owner.x * owner.x + owner.y * owner.y - owner.w - me.x * me.x - me.y * me.y + me.w;
    int best = -1;
    value = 0;
    for (int k = 0; k < size; ++k) {
      // pow_owner(v) − pow_s(v), linear in v
      double const f = 2 * (coarse.kept.absolute(begin + k, 0, owner) * (me.x - owner.x) +
                            coarse.kept.absolute(begin + k, 1, owner) * (me.y - owner.y)) +
                       constant;
      if (best < 0 || f > value) {
        best = k;
        value = f;
      }
    }
    return best;
  }

  KOKKOS_FUNCTION void operator()(int s) const {
    if ((s % coarse_step != 0) != (pass == 1))
      return;
    for (int r = 0; r < 3; ++r)
      vertex_keys(3 * s + r) = -1;
    hidden(s) = located_visible;
    nearby(s) = -1;
    int const k0 = s / coarse_step;
    if (s % coarse_step == 0 && coarse.kept.counts(coarse.slot_of(k0)) > 0) {
      nearby(s) = s; // a coarser seed whose cell is not empty: at its own cell
      return;
    }
    // The walk starts where the coarser seed before it along the index ended (pass 1), or from
    // the coarser seed nearest along the index whose cell has vertices.
    Seed const me = tree.seeds(s);
    int const m = coarse.tree.size;
    int slot = -1, vertex = -1;
    double value = 0;
    if (pass == 1 && nearby(coarse_step * k0) >= 0) {
      slot = coarse.slot_of(nearby(coarse_step * k0) / coarse_step);
      vertex = best_vertex(slot, me, value);
    }
    for (int d = 0; d < 2 * max_start_tries && vertex < 0; ++d) {
      int const k = k0 + (d % 2 == 0 ? d / 2 : -(d / 2 + 1));
      if (k < 0 || k >= m)
        continue;
      slot = coarse.slot_of(k);
      vertex = best_vertex(slot, me, value);
    }
    // Where the coarser level located the coarser seed k0 (its own cell being empty here).
    if (vertex < 0 && coarse.near.extent(0) && coarse.near(coarse.slot_of(k0)) >= 0) {
      slot = coarse.near(coarse.slot_of(k0));
      vertex = best_vertex(slot, me, value);
    }
    if (vertex < 0) { // farther: the nearest ones on either side whose cells have vertices
      int const count = static_cast<int>(coarse.with_vertices.extent(0));
      int low = 0, high = count; // the first position of a number above k0
      while (low < high) {
        int const middle = (low + high) / 2;
        if (coarse.with_vertices(middle) <= k0)
          low = middle + 1;
        else
          high = middle;
      }
      for (int p = low - 1; p <= low; ++p) {
        if (p < 0 || p >= count)
          continue;
        int const p_slot = coarse.slot_of(coarse.with_vertices(p));
        double v;
        int const k = best_vertex(p_slot, me, v);
        if (k >= 0 && (vertex < 0 || v > value)) {
          slot = p_slot;
          vertex = k;
          value = v;
        }
      }
    }
    if (vertex < 0) { // no coarser cell has kept vertices
      hidden(s) = located_hidden;
      return;
    }
    // f is linear on each cell and concave: move to the neighbouring cell at the best vertex
    // whose own best vertex is higher, until none is.
    for (int step = 0; step < max_locate_steps; ++step) {
      int const size = coarse.kept.counts(slot);
      int const others[2] = {coarse.label(slot, (vertex + size - 1) % size),
                             coarse.label(slot, vertex)};
      int next = -1, next_vertex = -1;
      double next_value = value;
      for (int b : others) {
        if (b < 0)
          continue;
        int const b_slot = coarse.slot_of(b);
        double v;
        int const k = best_vertex(b_slot, me, v);
        if (k >= 0 && v > next_value) {
          next = b_slot;
          next_vertex = k;
          next_value = v;
        }
      }
      if (next < 0)
        break;
      slot = next;
      vertex = next_vertex;
      value = next_value;
    }
    // V in each owner's polygon: there, its edges are made by the other two (or the domain).
    int const size = coarse.kept.counts(slot);
    int const capacity = coarse.kept.capacity;
    int const a = coarse.tree.index(slot);
    int const before = coarse.label(slot, (vertex + size - 1) % size),
              after = coarse.label(slot, vertex);
    vertex_keys(3 * s) = slot * capacity + vertex;
    nearby(s) = coarse_step * a;
    int r = 1;
    for (int b : {before, after}) {
      if (b < 0)
        continue;
      int const third = b == before ? after : before;
      int const b_slot = coarse.slot_of(b);
      int const b_size = coarse.kept.counts(b_slot);
      for (int k = 0; k < b_size; ++k) {
        int const l0 = coarse.label(b_slot, (k + b_size - 1) % b_size),
                  l1 = coarse.label(b_slot, k);
        if ((l0 == a && l1 == third) || (l0 == third && l1 == a)) {
          vertex_keys(3 * s + r) = b_slot * capacity + k;
          break;
        }
      }
      ++r;
    }
    hidden(s) = value < 0 ? located_hidden : located_visible;
    if (value < 0 && hidden_by_owners(slot, vertex, before, after, me)) {
      hidden(s) = located_empty;
      for (int q = 0; q < 3; ++q)
        vertex_keys(3 * s + q) = -1;
    }
  }

  /// Whether the seeds owning vertex k of the coarser cell of `slot` (its owner, and the seeds
  /// `before` and `after` of the edges that meet there, or boundary labels) hide `me` on the
  /// domain (hidden_on_domain()). Three: with the barycentric weights of x_me in their triangle
  /// (where k is the highest vertex of pow_coarse − pow_me, their triangle holds x_me). Two, k
  /// on a side of the domain: with the weights that make Σ μ_i y_i normal to that side (g is
  /// then constant along it, and grows inwards if it grows at all). One, k at a corner: itself.
  KOKKOS_INLINE_FUNCTION bool hidden_by_owners(int slot, int k, int before, int after,
                                               Seed const& me) const {
    int const size = coarse.kept.counts(slot);
    Seed by[3] = {coarse.tree.seeds(slot), {}, {}};
    double mu[3] = {1, 0, 0};
    int count = 1;
    for (int b : {before, after})
      if (b >= 0)
        by[count++] = coarse.tree.seeds(coarse.slot_of(b));
    double yx[3], yy[3];
    for (int i = 0; i < count; ++i) {
      yx[i] = by[i].x - me.x;
      yy[i] = by[i].y - me.y;
    }
    if (count == 3) {
      for (int i = 0; i < 3; ++i) {
        int const j = (i + 1) % 3, l = (i + 2) % 3;
        mu[i] = yx[j] * yy[l] - yy[j] * yx[l]; // twice the signed area of (me, j, l)
      }
    } else if (count == 2) {
      // The side: the edge of the domain at k (from k − 1 to k, or from k to k + 1).
      int const from = before < 0 ? (k + size - 1) % size : k;
      int const to = before < 0 ? k : (k + 1) % size;
      std::size_t const row = std::size_t(slot) * std::size_t(coarse.kept.capacity);
      double const dx = coarse.kept.vertices(row + to, 0) - coarse.kept.vertices(row + from, 0);
      double const dy = coarse.kept.vertices(row + to, 1) - coarse.kept.vertices(row + from, 1);
      mu[0] = yx[1] * dx + yy[1] * dy;
      mu[1] = -(yx[0] * dx + yy[0] * dy);
    }
    double const sign = mu[0] + mu[1] + mu[2] >= 0 ? 1.0 : -1.0;
    for (int i = 0; i < count; ++i)
      mu[i] *= sign;
    return hidden_on_domain(by, mu, count, me, domain_vertices);
  }
};

/// A seed located at a vertex of the coarser cells, as the cells read it (the buckets of a
/// coarser cell's vertices follow each other in the order of its vertices).
struct LocatedSeed {
  Seed seed;
  int slot;  ///< in the finer tree
  int index; ///< its input index
};

/// The places of a seed: the coarser seeds whose cells its candidates come from, by coarser
/// seed number, with their order of arrival. Looked up without a branch on the answer (which is
/// unpredictable): a direct-mapped table, and a list of the places whose entry was taken,
/// scanned only by a seed that has such places.
struct CoarsePlaces {
  static constexpr int table_size = 2 * max_coarse_places;
  int keys[table_size];
  int order[table_size];
  int list[max_coarse_places];
  int size = 0;
  int collided[max_coarse_places]; ///< orders of arrival of the places not in the table
  int nb_collided = 0;

  /// Only the keys start empty: order[h] is written with keys[h] and read only where it
  /// matches.
  KOKKOS_INLINE_FUNCTION CoarsePlaces() {
    for (int h = 0; h < table_size; ++h)
      keys[h] = -1;
  }
  KOKKOS_INLINE_FUNCTION static int entry(int q) {
    return static_cast<int>((static_cast<unsigned>(q) * 2654435761u) >> 25) % table_size;
  }
  /// The order of arrival of q (size when q is not a place).
  KOKKOS_INLINE_FUNCTION int index(int q) const {
    int const h = entry(q);
    int found = (q >= 0) & (keys[h] == q) ? order[h] : size;
    for (int c = 0; c < nb_collided; ++c) // nearly always none
      found = list[collided[c]] == q ? collided[c] : found;
    return found;
  }
  KOKKOS_INLINE_FUNCTION void add(int q) {
    if (q < 0 || size == max_coarse_places || index(q) < size)
      return;
    int const h = entry(q);
    if (keys[h] < 0) {
      keys[h] = q;
      order[h] = size;
    } else
      collided[nb_collided++] = size;
    list[size++] = q;
  }
};

/// Builds the cell of each tree slot from the candidates of its places in the coarser cells: the
/// coarser seeds of its places (the coarser seeds owning the vertex it is located at, or itself
/// at the coarser level, then the neighbours of their cells), and the seeds located at a vertex
/// of their cells, each once (a vertex from the first of its owners among the places): the
/// owners' seeds first, then the places in order. A cell that overflows, or has more vertices
/// than a slot holds, is left to the search (as WarmCellsStep).
template <class MemorySpace>
struct CoarseCellsStep {
  /// Bucket records tested against the cell's bounding box at once (clip_by_candidates()).
  static constexpr int bucket_chunk = 32;

  CellsFunctor<MemorySpace> cells; ///< the outputs (no polygon output) and `abandon`
  SlotPolygons<MemorySpace> kept;
  Kokkos::View<int*, MemorySpace> state; ///< by tree slot (WarmState)
  CoarseCells<MemorySpace> coarse;
  Kokkos::View<int const*, MemorySpace> vertex_keys;
  Kokkos::View<int const*, MemorySpace> hidden;
  Kokkos::View<int const*, MemorySpace> bucket_offsets;  ///< by vertex key
  Kokkos::View<LocatedSeed const*, MemorySpace> buckets; ///< the seeds located at each vertex

  KOKKOS_FUNCTION void operator()(Polygon& cell, int s) const {
    Seed const me = cells.tree.seeds(s);
    CellSeed const seed{me.x, me.y, me.w, cells.tree.index(s), s};
    kept.counts(s) = -1;
    if (cells.abandon.given_up()) {
      state(s) = cell_to_search;
      return;
    }
    if (hidden(s) == located_empty) {
      cell.size = 0;
      cell.max_radius2 = 0;
    } else if (!clip_by_candidates(cell, seed)) {
      state(s) = cell_to_search;
      return;
    }
    // An empty cell (found so, or emptied by its candidates) is final: the true cell, inside
    // it, is empty too.
    cells.finish(cell, seed);
    keep_in_slot(kept, s, cell);
    state(s) = warm_cell;
  }

  /// The domain clipped by the candidates of `seed`: the owners of its vertex, then the places
  /// in order. False where the cell goes to the search: it overflowed or has more vertices than
  /// a slot holds, no candidate cut it (the whole domain, which no edge certifies), or the
  /// coarser cells hide its seed and its candidates left it (they missed those that empty it,
  /// and its cell would make its neighbours fail their certification).
  KOKKOS_FUNCTION bool clip_by_candidates(Polygon& cell, CellSeed const& seed) const {
    SeedTree<MemorySpace> const& tree = cells.tree;
    int const s = seed.tree_slot;
    int const capacity = coarse.kept.capacity;
    CoarsePlaces places;
    for (int r = 0; r < 3; ++r) {
      int const key = vertex_keys(3 * s + r);
      if (key >= 0)
        places.add(coarse.tree.index(key / capacity));
    }
    if (places.size == 0) // a coarser seed at its own cell, or located nowhere
      places.add(s / coarse_step);
    int const nb_owners = places.size;
    for (int p = 0; p < nb_owners; ++p) {
      int const slot = coarse.slot_of(places.list[p]);
      int const size = coarse.kept.counts(slot);
      for (int k = 0; k < size; ++k)
        places.add(coarse.label(slot, k));
    }
    start_from_domain(cell, seed.x, seed.y, cells.domain_vertices, cells.domain_labels);
    ClipResult result = ClipResult::unchanged;
    bool stop = false;
    // The coarser seed of place q (not the seed itself, at the coarser level).
    auto const clip_by_place_seed = [&](int q) {
      if (coarse_step * q != s)
        stop = clip_by_slots(cell, seed, tree, coarse_step * q, coarse_step * q + 1, result);
    };
    // The owners of the seed's vertex first: the cell is then near that vertex, and more of the
    // records' bisectors miss its bounding box.
    for (int p = 0; p < nb_owners && !stop; ++p)
      clip_by_place_seed(places.list[p]);
    for (int p = 0; p < places.size && !stop; ++p) {
      int const q = places.list[p];
      if (p >= nb_owners)
        clip_by_place_seed(q);
      int const slot = coarse.slot_of(q);
      // A coarser cell without a slot (more vertices than a slot holds: count −1) gives its
      // coarser seed alone.
      int const size = sdot::compat::max(coarse.kept.counts(slot), 0);
      // The vertices visited from an earlier place already (bit k: vertex k, between the edges
      // k − 1 and k): those with an edge whose other seed is an earlier place (bit e of
      // `earlier`: edge e).
      unsigned earlier = 0;
      for (int e = 0; e < size; ++e)
        earlier |= unsigned(places.index(coarse.label(slot, e)) < p) << e;
      unsigned const seen =
          earlier | (earlier << 1) | (size > 0 ? (earlier >> (size - 1)) & 1u : 0u);
      // The vertices not seen yet, by runs of consecutive ones: their records only are read.
      static_assert(kept_slot_capacity < 32, "a slot's vertices as the bits of an unsigned");
      unsigned unseen = ~seen & ((1u << size) - 1u);
      // The bisector of record b: ax·x + ay·y ≤ offset about the seed, d2 = |a|².
      struct Bisector {
        double dx, dy, d2, offset;
      };
      auto const bisector = [&](int b) {
        Seed const& other = buckets(b).seed;
        double const dx = other.x - seed.x, dy = other.y - seed.y, d2 = dx * dx + dy * dy;
        return Bisector{dx, dy, d2, bisector_offset(d2, seed.w, other.w)};
      };
      // By chunks: the records that the cell's bounding box may reach (the bounding box alone:
      // a radius about the seed rules out few more, and none where the cells lie far from
      // their seeds), listed without a branch, then clipped by in order, each tested again
      // against the box as the clips before left it (a box only shrinks: the same clips as one
      // pass testing each record once).
      while (unseen != 0 && !stop) {
        int const first = sdot::compat::countr_zero(unseen);
        int const length = sdot::compat::countr_zero(~(unseen >> first));
        unseen &= ~(((1u << length) - 1u) << first);
        int const end = bucket_offsets(slot * capacity + first + length);
        for (int chunk = bucket_offsets(slot * capacity + first); chunk < end && !stop;
             chunk += bucket_chunk) {
          int const chunk_end = chunk + bucket_chunk < end ? chunk + bucket_chunk : end;
          int reaching[bucket_chunk];
          int count = 0;
          for (int b = chunk; b < chunk_end; ++b) {
            Bisector const line = bisector(b);
            reaching[count] = b;
            count += (buckets(b).slot != s) & cell.may_reach(line.dx, line.dy, line.offset);
          }
          for (int r = 0; r < count && !stop; ++r) {
            LocatedSeed const& other = buckets(reaching[r]);
            Bisector const line = bisector(reaching[r]);
            if (cell.may_reach(line.dx, line.dy, line.offset))
              stop = clip_tested(cell, seed, other.index, line.d2, other.seed, line.dx, line.dy,
                                 line.offset, result, false);
          }
        }
      }
    }
    return !(result == ClipResult::overflow || cell.size > kept.capacity ||
             (result == ClipResult::unchanged && tree.size > 1) ||
             (hidden(s) == located_hidden && cell.size > 0));
  }
};

/// Builds the cells of `tree` from the candidates of their places in `coarse` (CoarseCellsStep),
/// certified as a warm start's (certified_cells(): the cells that fail are widened by the
/// neighbours of the cells built, then searched).
template <class ExecutionSpace, class MemorySpace>
WarmReport build_cells_from_coarse_cells(
    ExecutionSpace const& space, SeedTree<MemorySpace> const& tree,
    ConstPoints<MemorySpace> domain_vertices, Kokkos::View<int const*, MemorySpace> domain_labels,
    int capacity, CellOutputs<MemorySpace> const& out, SlotPolygons<MemorySpace>& kept,
    CoarseCells<MemorySpace> const& coarse, Kokkos::View<int const*, MemorySpace> slot_of,
    double domain_area, double domain_length, AbandonBelow<MemorySpace> const& abandon = {},
    Kokkos::View<int*, MemorySpace> nearby = {}, std::function<void()> const& before_search = {}) {
  using Policy = Kokkos::RangePolicy<ExecutionSpace>;
  sdot::compat::ScopedRegion region("sdot::build_cells_from_coarse_cells");
  int const n = tree.size;
  if (nearby.extent(0) != std::size_t(n))
    nearby = Kokkos::View<int*, MemorySpace>(
        Kokkos::view_alloc(space, Kokkos::WithoutInitializing, "sdot::coarse::nearby"), n);
  int const nb_keys = coarse.tree.size * coarse.kept.capacity;
  Kokkos::View<int*, MemorySpace> vertex_keys(
      Kokkos::view_alloc(space, Kokkos::WithoutInitializing, "sdot::coarse::vertex_keys"), 3 * n);
  Kokkos::View<int*, MemorySpace> hidden(
      Kokkos::view_alloc(space, Kokkos::WithoutInitializing, "sdot::coarse::hidden"), n);
  LocateInCoarseCells<MemorySpace> locate{tree,        coarse, domain_vertices,
                                          vertex_keys, hidden, nearby};
  Kokkos::parallel_for("sdot::coarse::locate_coarser_seeds", Policy(space, 0, n), locate);
  locate.pass = 1;
  Kokkos::parallel_for("sdot::coarse::locate", Policy(space, 0, n), locate);
  // Buckets: the finer slots located at each vertex of the coarser cells, in slot order.
  Kokkos::View<unsigned*, MemorySpace> keys(
      Kokkos::view_alloc(space, Kokkos::WithoutInitializing, "sdot::coarse::sort_keys"), 3 * n);
  Kokkos::parallel_for(
      "sdot::coarse::sort_keys", Policy(space, 0, 3 * n), KOKKOS_LAMBDA(int p) {
        int const key = vertex_keys(p);
        keys(p) = key >= 0 ? unsigned(key) : unsigned(nb_keys);
      });
  int key_bits = 1;
  while ((std::int64_t(1) << key_bits) <= std::int64_t(nb_keys))
    ++key_bits;
  auto const order =
      stable_sort_permutation(space, Kokkos::View<unsigned const*, MemorySpace>(keys), key_bits);
  Kokkos::View<int*, MemorySpace> bucket_offsets(
      Kokkos::view_alloc(space, "sdot::coarse::bucket_offsets"), nb_keys + 1);
  Kokkos::parallel_for(
      "sdot::coarse::bucket_counts", Policy(space, 0, 3 * n), KOKKOS_LAMBDA(int p) {
        int const key = vertex_keys(p);
        if (key >= 0)
          Kokkos::atomic_add(&bucket_offsets(key), 1);
      });
  int const located = exclusive_scan(space, "sdot::coarse::bucket_offsets",
                                     Kokkos::subview(bucket_offsets, Kokkos::make_pair(0, nb_keys)),
                                     bucket_offsets);
  Kokkos::View<LocatedSeed*, MemorySpace> buckets(
      Kokkos::view_alloc(space, Kokkos::WithoutInitializing, "sdot::coarse::buckets"), located);
  auto const seeds = tree.seeds;
  auto const index = tree.index;
  Kokkos::parallel_for(
      "sdot::coarse::buckets", Policy(space, 0, located), KOKKOS_LAMBDA(int p) {
        int const entry = order(p), t = entry / 3;
        buckets(p) = LocatedSeed{seeds(t), t, index(t)};
      });
  return certified_cells(
      space, tree, domain_vertices, domain_labels, capacity, out, kept, slot_of, domain_area,
      domain_length, abandon, before_search,
      FirstPass<MemorySpace>([&](FirstPassArguments<MemorySpace> const& first) {
        for_each_cell(space, "sdot::coarse::cells",
                      CoarseCellsStep<MemorySpace>{first.step, first.kept, first.state, coarse,
                                                   vertex_keys, hidden, bucket_offsets, buckets},
                      n, first.inline_capacity);
        return neighbour_graph(space, tree, first.kept, slot_of);
      }));
}

/// Whether the first cells of `tree` (n seeds, nothing to start from) are built from coarser
/// diagrams (`choice`): never beyond max_coarse_to_fine_seeds or without kept polygons (a
/// kernel-local capacity for `domain_size` vertices); with `automatic`, where at least half of
/// the cells are predicted more than a grid step from their seeds (needs the tree's weight
/// bounds).
template <class ExecutionSpace, class MemorySpace>
bool coarse_to_fine_pays(ExecutionSpace const& space, SeedTree<MemorySpace> const& tree,
                         CoarseToFineChoice const& choice, int capacity, int domain_size) {
  int const n = tree.size;
  if (choice.never || n == 0 || n > max_coarse_to_fine_seeds ||
      inline_polygon_capacity(capacity, domain_size) == 0)
    return false;
  return choice.always || 2 * std::int64_t(cells_predicted_far(space, tree)) >= n;
}

/// The diagram of every coarse_step-th seed of `tree` (by tree slot), at the same weights, with
/// its polygons kept: by the search when it has at most `coarsest` seeds, else from the
/// candidates of a coarser level of its own, and by the search when those cells fail to
/// certify.
template <class ExecutionSpace, class MemorySpace>
CoarseCells<MemorySpace>
coarse_cells(ExecutionSpace const& space, SeedTree<MemorySpace> const& tree,
             ConstPoints<MemorySpace> domain_vertices,
             Kokkos::View<int const*, MemorySpace> domain_labels, int capacity, int leaf_size,
             int coarsest, double domain_area, double domain_length) {
  using Policy = Kokkos::RangePolicy<ExecutionSpace>;
  sdot::compat::ScopedRegion region("sdot::coarse_cells");
  int const n = tree.size;
  int const m = (n + coarse_step - 1) / coarse_step;
  Points<MemorySpace> positions(
      Kokkos::view_alloc(space, Kokkos::WithoutInitializing, "sdot::coarse::positions"), m);
  Kokkos::View<double*, MemorySpace> weights(
      Kokkos::view_alloc(space, Kokkos::WithoutInitializing, "sdot::coarse::weights"), m);
  auto const seeds = tree.seeds;
  Kokkos::parallel_for(
      "sdot::coarse::seeds", Policy(space, 0, m), KOKKOS_LAMBDA(int k) {
        Seed const s = seeds(coarse_step * k);
        positions(k, 0) = s.x;
        positions(k, 1) = s.y;
        weights(k) = s.w;
      });
  // The weight bounds only where a cell goes to the search: the coarsest level, a cell that
  // fails its certification.
  CoarseCells<MemorySpace> coarse;
  coarse.tree =
      build_seed_tree_without_bounds(space, ConstPoints<MemorySpace>(positions),
                                     Kokkos::View<double const*, MemorySpace>(weights), leaf_size);
  bool bounds = false;
  auto const compute_bounds = [&] {
    if (!bounds)
      compute_weight_bounds(space, coarse.tree);
    bounds = true;
  };
  coarse.slot_of = slot_of_index(space, coarse.tree);
  auto const out = allocate_cell_outputs(space, m, "sdot::coarse::");
  bool built = false;
  if (m > coarsest) {
    auto const coarser = coarse_cells(space, coarse.tree, domain_vertices, domain_labels, capacity,
                                      leaf_size, coarsest, domain_area, domain_length);
    coarse.levels = coarser.levels + 1;
    coarse.near = Kokkos::View<int*, MemorySpace>(
        Kokkos::view_alloc(space, Kokkos::WithoutInitializing, "sdot::coarse::near"), m);
    built = build_cells_from_coarse_cells(
                space, coarse.tree, domain_vertices, domain_labels, capacity, out, coarse.kept,
                coarser, Kokkos::View<int const*, MemorySpace>(coarse.slot_of), domain_area,
                domain_length, {}, coarse.near, compute_bounds)
                .certified;
  }
  if (!built) {
    compute_bounds();
    build_cells_keeping_polygons(space, coarse.tree, domain_vertices, domain_labels, capacity, out,
                                 coarse.kept);
  }
  auto const counts = coarse.kept.counts;
  auto const slot_of = coarse.slot_of;
  coarse.with_vertices = items_where(
      space, "sdot::coarse::with_vertices", m,
      KOKKOS_LAMBDA(int k) { return counts(slot_of(k)) > 0; });
  return coarse;
}

} // namespace sdot::detail
