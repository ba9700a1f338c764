#pragma once
// Every rank's lower envelope of power, sampled on a grid over the domain: whether a rank's
// seeds may cut a cell, judged without them and tight where the cells lie far from their seeds.
//
// Relative to a centre c (u = v − c, x'_j = x_j − c), the power of seed j at v is
// |v − x_j|² − w_j = |u|² − L_j(u), with L_j(u) = 2 u·x'_j − |x'_j|² + w_j affine in u. A seed j
// cuts the cell of seed i where L_j(u) > L_i(u), and a half-plane that cuts a convex polygon
// holds one of its vertices; so no seed of rank q cuts the cell when E_q(u) ≤ L_i(u) at every
// vertex, with E_q = max over q's seeds of L_j. E_q is convex: on a triangle of the grid, it lies
// below the linear interpolation of its values at the three nodes, which makes the test exact
// (never rules out a rank whose seeds cut) and as tight as the grid is fine.
//
// E_q at a node inside the domain is L_j of the seed j whose cell of rank q's own diagram (the
// domain cut by q's seeds alone: the boxes' first-round cells) holds the node: each first-round
// cell gives its L_j to the nodes of its bounding box, which keep the largest. A cell whose
// polygon is not known (more vertices than its slot holds) gives its L_j to every node: a node
// keeps the largest L_j it is given, and none exceeds E_q there, so the values are E_q all the
// same. A node outside the domain, or any node of a rank with more than
// max_unknown_envelope_cells such cells, stays +∞: its triangles rule nothing out.
//
// A group of ranks has an envelope too: E_S = max over the group's ranks of E_q is convex, and
// its values at the nodes are the largest of theirs (envelope_of_union()). One test then rules
// out every rank of the group: the travelling cells walk the tree over the ranks' boxes and
// test each subtree's envelope before its ranks'.

#include <sdot/base/kokkos_compat.hpp>
#include <sdot/base/scan.hpp>
#include <sdot/geometry/cell_kernel.hpp>
#include <sdot/geometry/kept_polygons.hpp>
#include <sdot/geometry/polygon.hpp>
#include <sdot/points.hpp>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <vector>

namespace sdot::detail {

/// The grid shared by every rank's envelope: `side` × `side` squares over the domain's bounding
/// box (side 0: no envelopes).
struct EnvelopeGrid {
  int side = 0;
  double cx = 0, cy = 0;                 ///< the centre c (of the bounding box)
  double x0 = 0, y0 = 0, x1 = 0, y1 = 0; ///< the bounding box
  double hx = 0, hy = 0;
  double inv_hx = 0, inv_hy = 0;
  double radius2 = 0; ///< max |u|² over the box (rounding slack)
  /// The largest |x| and |y| of the box: the scale of the rounding of absolute coordinates.
  double coordinates_x = 0, coordinates_y = 0;

  KOKKOS_INLINE_FUNCTION int nodes() const { return (side + 1) * (side + 1); }
  KOKKOS_INLINE_FUNCTION double node_x(int a) const { return a == side ? x1 : x0 + a * hx; }
  KOKKOS_INLINE_FUNCTION double node_y(int b) const { return b == side ? y1 : y0 + b * hy; }
};

/// The grid nodes of all the ranks together, at most: every process holds every rank's
/// envelope and those of the groups of ranks above them (2 MB).
constexpr std::int64_t max_envelope_nodes = std::int64_t(1) << 17;
/// A rank's first-round cells without a known polygon that its envelope takes, each at every
/// node (beyond: the envelope rules nothing out).
constexpr int max_unknown_envelope_cells = 256;

/// The grid for `ranks` ranks and `seeds` seeds over a domain of bounding box [x0, x1] ×
/// [y0, y1]: about one node per 2 seeds of a rank (256 at least), max_envelope_nodes in all;
/// none below 8 × 8 squares (over 1 600 ranks).
inline EnvelopeGrid envelope_grid_for(int ranks, std::int64_t seeds, double x0, double y0,
                                      double x1, double y1) {
  EnvelopeGrid g;
  if (ranks < 2 || !(x1 > x0) || !(y1 > y0))
    return g;
  std::int64_t const nodes =
      std::min(max_envelope_nodes / ranks, std::max<std::int64_t>(256, seeds / (2 * ranks)));
  int const side = static_cast<int>(std::floor(std::sqrt(static_cast<double>(nodes)))) - 1;
  if (side < 8)
    return g;
  g.side = side;
  g.x0 = x0;
  g.y0 = y0;
  g.x1 = x1;
  g.y1 = y1;
  g.cx = (x0 + x1) / 2;
  g.cy = (y0 + y1) / 2;
  g.hx = (x1 - x0) / side;
  g.hy = (y1 - y0) / side;
  g.inv_hx = 1 / g.hx;
  g.inv_hy = 1 / g.hy;
  double const rx = (x1 - x0) / 2, ry = (y1 - y0) / 2;
  g.radius2 = rx * rx + ry * ry;
  g.coordinates_x = std::max(std::fabs(x0), std::fabs(x1));
  g.coordinates_y = std::max(std::fabs(y0), std::fabs(y1));
  return g;
}

/// Envelopes of ranks, or of groups of ranks, on one grid.
template <class MemorySpace>
struct RankEnvelopes {
  EnvelopeGrid grid;
  /// Envelope q's node (a, b) at q · grid.nodes() + a · (side + 1) + b.
  Kokkos::View<double const*, MemorySpace> values;
  /// Per envelope, the largest |value| of its finite nodes (for the rounding slack).
  Kokkos::View<double const*, MemorySpace> scale;

  KOKKOS_INLINE_FUNCTION bool active() const { return grid.side > 0; }

  /// Whether a seed of the rank (or group of ranks) of envelope q may cut `cell` (vertices
  /// relative to `seed`). Ties kept (duplicates decide by index), and a slack for rounding.
  /// The vertices are tested from `first` on (the answer does not depend on it; a vertex where
  /// the rank may cut ends the test).
  KOKKOS_INLINE_FUNCTION bool may_cut(Polygon const& cell, CellSeed const& seed, int q,
                                      int first = 0) const {
    if (!active())
      return true;
    int const side = grid.side, stride = side + 1;
    double const* e = values.data() + std::size_t(q) * std::size_t(grid.nodes());
    // The seed's own lifted plane, relative to the centre: L_i(u) = 2 v·x'_i + |x'_i|² + w_i
    // with v the vertex relative to the seed.
    double const sx = seed.x - grid.cx, sy = seed.y - grid.cy;
    double const own = sx * sx + sy * sy + seed.w;
    double const slack =
        1e-12 * (scale(q) + 4 * grid.radius2 + 4 * cell.max_radius2 + sdot::compat::fabs(own));
    for (int step = 0, k = first; step < cell.size; ++step, k = k + 1 < cell.size ? k + 1 : 0) {
      double const vx = cell.x(k), vy = cell.y(k);
      // The vertex's place in the grid is rounded to the precision of its absolute coordinates
      // (so are the nodes' places): by up to `dx`, `dy`, which far from the origin (at 1e9
      // times the domain's size) is no longer small against the grid step.
      double const dx = 4 * sdot::compat::epsilon<double>() *
                        (sdot::compat::fabs(seed.x) + sdot::compat::fabs(vx) + grid.coordinates_x);
      double const dy = 4 * sdot::compat::epsilon<double>() *
                        (sdot::compat::fabs(seed.y) + sdot::compat::fabs(vy) + grid.coordinates_y);
      double s = (seed.x + vx - grid.x0) * grid.inv_hx, t = (seed.y + vy - grid.y0) * grid.inv_hy;
      // A vertex on the domain lies in the box up to rounding; one clearly outside rules
      // nothing out.
      if (!(s > -1e-6 && s < side + 1e-6 && t > -1e-6 && t < side + 1e-6))
        return true;
      s = sdot::compat::min(sdot::compat::max(s, 0.0), double(side));
      t = sdot::compat::min(sdot::compat::max(t, 0.0), double(side));
      int const a = sdot::compat::min(static_cast<int>(s), side - 1);
      int const b = sdot::compat::min(static_cast<int>(t), side - 1);
      double const fu = s - a, fv = t - b;
      double const* n = e + a * stride + b;
      // The triangle of the square that holds the point: below its diagonal, or above.
      double const bound = fu + fv <= 1 ? n[0] + fu * (n[stride] - n[0]) + fv * (n[1] - n[0])
                                        : n[stride + 1] + (1 - fu) * (n[1] - n[stride + 1]) +
                                              (1 - fv) * (n[stride] - n[stride + 1]);
      // What those displacements can change: the square's slopes and the seed's, times them.
      double const slope_x = sdot::compat::max(sdot::compat::fabs(n[stride] - n[0]),
                                               sdot::compat::fabs(n[stride + 1] - n[1])) *
                             grid.inv_hx;
      double const slope_y = sdot::compat::max(sdot::compat::fabs(n[1] - n[0]),
                                               sdot::compat::fabs(n[stride + 1] - n[stride])) *
                             grid.inv_hy;
      double const moved =
          (slope_x + 2 * sdot::compat::fabs(sx)) * dx + (slope_y + 2 * sdot::compat::fabs(sy)) * dy;
      // Not ruled out unless clearly below (a node at +∞ gives ∞ or NaN: not ruled out).
      if (!(bound + slack + moved < 2 * (vx * sx + vy * sy) + own))
        return true;
    }
    return false;
  }
};

/// A rank's envelope (its grid.nodes() values, then its scale) from its first-round cells:
/// the cell of seeds(i) in slot first + i of `cells` (vertices relative to the seed; a
/// count of −1: not known, its L_j then given to every node), i < count. Nodes outside the
/// domain (`domain_vertices`, a convex polygon), and every node when more than
/// max_unknown_envelope_cells cells are not known, are +∞.
template <class ExecutionSpace, class MemorySpace>
std::vector<double> rank_envelope(ExecutionSpace const& space, EnvelopeGrid const& grid,
                                  Kokkos::View<Seed*, MemorySpace> seeds,
                                  SlotPolygons<MemorySpace> const& cells, int first, int count,
                                  ConstPoints<MemorySpace> domain_vertices) {
  using Policy = Kokkos::RangePolicy<ExecutionSpace>;
  double const inf = sdot::compat::infinity<double>();
  int const nodes = grid.nodes(), stride = grid.side + 1;
  std::vector<double> out(std::size_t(nodes) + 1, inf);
  out[nodes] = 0;
  if (count == 0 || cells.capacity == 0)
    return out;
  auto const unknown = items_where(
      space, "sdot::travel::envelope_unknown", count,
      KOKKOS_LAMBDA(int i) { return cells.counts(first + i) < 0; });
  int const nb_unknown = static_cast<int>(unknown.extent(0));
  if (nb_unknown > max_unknown_envelope_cells)
    return out;
  Kokkos::View<double*, MemorySpace> values(
      Kokkos::view_alloc(space, Kokkos::WithoutInitializing, "sdot::travel::envelope"), nodes);
  Kokkos::deep_copy(space, values, -inf);
  // L_j of seed s at node (a, b).
  auto const node_value = KOKKOS_LAMBDA(Seed const& s, int a, int b) {
    double const sx = s.x - grid.cx, sy = s.y - grid.cy;
    double const ux = grid.node_x(a) - grid.cx, uy = grid.node_y(b) - grid.cy;
    return 2 * (ux * sx + uy * sy) + (s.w - (sx * sx + sy * sy));
  };
  std::size_t const capacity = std::size_t(cells.capacity);
  // Each cell's bounding box, widened for rounding (the cells cover the domain up to it): the
  // cells' vertices are rounded to the precision of their absolute coordinates, a part of the
  // grid step that grows with the domain's distance from the origin.
  double const margin = 1e-9 * (grid.hx + grid.hy) + 4 * sdot::compat::epsilon<double>() *
                                                         (grid.coordinates_x + grid.coordinates_y);
  Kokkos::parallel_for(
      "sdot::travel::envelope_cells", Policy(space, 0, count), KOKKOS_LAMBDA(int i) {
        int const item = first + i, size = cells.counts(item);
        if (size <= 0)
          return;
        std::size_t const begin = std::size_t(item) * capacity;
        Seed const s = seeds(i);
        double xmin = inf, ymin = inf, xmax = -inf, ymax = -inf;
        for (int k = 0; k < size; ++k) {
          double const x = cells.absolute(begin + k, 0, s), y = cells.absolute(begin + k, 1, s);
          xmin = sdot::compat::min(xmin, x);
          xmax = sdot::compat::max(xmax, x);
          ymin = sdot::compat::min(ymin, y);
          ymax = sdot::compat::max(ymax, y);
        }
        // The first node at or after lo, the last at or before hi (clamped to the grid).
        auto const first_node = [&](double lo, double origin, double h) {
          double const t = (lo - origin) / h;
          if (!(t > 0))
            return 0;
          if (!(t < grid.side))
            return grid.side + 1;
          int const a = static_cast<int>(t);
          return a < t ? a + 1 : a;
        };
        auto const last_node = [&](double hi, double origin, double h) {
          double const t = (hi - origin) / h;
          if (!(t >= 0))
            return -1;
          return t < grid.side ? static_cast<int>(t) : grid.side;
        };
        int const a0 = first_node(xmin - margin, grid.x0, grid.hx);
        int const a1 = last_node(xmax + margin, grid.x0, grid.hx);
        int const b0 = first_node(ymin - margin, grid.y0, grid.hy);
        int const b1 = last_node(ymax + margin, grid.y0, grid.hy);
        for (int a = a0; a <= a1; ++a)
          for (int b = b0; b <= b1; ++b)
            sdot::compat::atomic_max(&values(a * stride + b), node_value(s, a, b));
      });
  if (nb_unknown > 0)
    Kokkos::parallel_for(
        "sdot::travel::envelope_unknown_cells", Policy(space, 0, nodes), KOKKOS_LAMBDA(int p) {
          double value = values(p);
          for (int u = 0; u < nb_unknown; ++u)
            value = sdot::compat::max(value, node_value(seeds(unknown(u)), p / stride, p % stride));
          values(p) = value;
        });
  // Nodes outside the domain, or that no cell reached: +∞.
  int const domain_size = static_cast<int>(domain_vertices.extent(0));
  Kokkos::parallel_for(
      "sdot::travel::envelope_domain", Policy(space, 0, nodes), KOKKOS_LAMBDA(int p) {
        double const x = grid.node_x(p / stride), y = grid.node_y(p % stride);
        // Inside a convex polygon: on one side of every edge (either orientation).
        bool left = true, right = true;
        for (int k = 0; k < domain_size; ++k) {
          int const next = k + 1 < domain_size ? k + 1 : 0;
          double const ex = domain_vertices(next, 0) - domain_vertices(k, 0);
          double const ey = domain_vertices(next, 1) - domain_vertices(k, 1);
          double const side = ex * (y - domain_vertices(k, 1)) - ey * (x - domain_vertices(k, 0));
          left = left && side >= 0;
          right = right && side <= 0;
        }
        if (!(values(p) > -inf) || !(left || right))
          values(p) = inf;
      });
  double scale = 0;
  Kokkos::parallel_reduce(
      "sdot::travel::envelope_scale", Policy(space, 0, nodes),
      KOKKOS_LAMBDA(int p, double& m) {
        if (values(p) < inf)
          m = sdot::compat::max(m, sdot::compat::fabs(values(p)));
      },
      Kokkos::Max<double>(scale));
  Kokkos::deep_copy(
      space,
      Kokkos::View<double*, Kokkos::HostSpace, Kokkos::MemoryTraits<Kokkos::Unmanaged>>(out.data(),
                                                                                        nodes),
      values);
  space.fence();
  out[nodes] = scale;
  return out;
}

/// The envelope of two ranks, or groups of ranks, together: out[k] = the larger of a[k] and
/// b[k], k < count (node values, or scales). The maximum of two convex functions is convex, so
/// the test stays exact; +∞ stays +∞. `out` may be `a` or `b`.
inline void envelope_of_union(double const* a, double const* b, std::size_t count, double* out) {
  for (std::size_t k = 0; k < count; ++k)
    out[k] = std::max(a[k], b[k]);
}

} // namespace sdot::detail
