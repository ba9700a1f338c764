#pragma once
// Cells recomputed from what defines them (PowerDiagramOptions::same_bits): the same bits
// whatever the decomposition (one box, boxes, processes) and the order of the cuts.
//
// A clipped cell's vertices depend on the order of its cuts by rounding. Here each vertex is
// recomputed from the two lines that meet there (the bisectors of the cell's seed with the
// seeds of its two edges, or the domain's edges), edges shorter than rounding can make (a
// vertex where more than three cells meet, split by rounding into a tiny edge or not) are
// removed, the polygon starts at its least vertex, and its area and centroid are summed in that
// order. What is left depends on the seeds and the domain only.

#include <sdot/base/radix_sort.hpp>
#include <sdot/base/scan.hpp>
#include <sdot/base/views.hpp>
#include <sdot/geometry/polygon.hpp>
#include <sdot/geometry/polygon_storage.hpp>
#include <sdot/points.hpp>

#include <loom/halo.hpp>
#include <loom/ranks.hpp>
#include <loom/row_blocks.hpp>

#include <Kokkos_Core.hpp>

#include <cstdint>
#include <vector>

namespace sdot::detail {

/// The position and weight of any seed a process's cells refer to, by global index: its own
/// (input rows [first, first + n)) or, for the others, a table fetched once (sorted gids).
template <class MemorySpace>
struct SeedLookup {
  ConstPoints<MemorySpace> positions;
  Kokkos::View<double const*, MemorySpace> weights;
  std::int64_t first = 0;
  Kokkos::View<int*, MemorySpace> remote_gids;                           ///< sorted
  Kokkos::View<double**, Kokkos::LayoutRight, MemorySpace> remote_seeds; ///< x, y, w per gid

  /// Whether cells are to be recomputed at all (a lookup was given).
  KOKKOS_INLINE_FUNCTION bool active() const { return positions.data() != nullptr; }

  KOKKOS_INLINE_FUNCTION void operator()(int gid, double& x, double& y, double& w) const {
    std::int64_t const local = gid - first;
    if (local >= 0 && local < std::int64_t(positions.extent(0))) {
      x = positions(local, 0);
      y = positions(local, 1);
      w = weights(local);
      return;
    }
    int lo = 0, hi = static_cast<int>(remote_gids.extent(0));
    while (hi - lo > 1) {
      int const mid = lo + (hi - lo) / 2;
      if (remote_gids(mid) <= gid)
        lo = mid;
      else
        hi = mid;
    }
    x = remote_seeds(lo, 0);
    y = remote_seeds(lo, 1);
    w = remote_seeds(lo, 2);
  }
};

/// The line n·u = c (u relative to the seed) of edge label `label` of the cell of the seed
/// (sx, sy, sw): the bisector with the seed `label` ≥ 0, or the domain's edge of that label.
template <class MemorySpace>
KOKKOS_INLINE_FUNCTION void edge_line(int label, double sx, double sy, double sw,
                                      SeedLookup<MemorySpace> const& seeds,
                                      ConstPoints<MemorySpace> const& domain_vertices,
                                      Kokkos::View<int const*, MemorySpace> const& domain_labels,
                                      double& nx, double& ny, double& c) {
  if (label >= 0) {
    double x, y, w;
    seeds(label, x, y, w);
    nx = x - sx;
    ny = y - sy;
    c = (nx * nx + ny * ny + (sw - w)) / 2; // as the clip: the weight difference first
    return;
  }
  int const m = static_cast<int>(domain_labels.extent(0));
  int k = 0;
  while (k + 1 < m && domain_labels(k) != label)
    ++k;
  int const next = k + 1 == m ? 0 : k + 1;
  double const ax = domain_vertices(k, 0) - sx, ay = domain_vertices(k, 1) - sy;
  double const bx = domain_vertices(next, 0) - sx, by = domain_vertices(next, 1) - sy;
  nx = ay - by;
  ny = bx - ax;
  c = nx * ax + ny * ay;
}

/// Rewrites the cell of the seed (sx, sy, sw) held in rows 0 … m − 1 of `rows` (rows.x(k),
/// rows.y(k): vertex k relative to the seed; rows.label(k): the label of the edge from vertex k
/// to k + 1) as recomputed from its edges' lines (see the top of this file). Returns its new
/// number of vertices (0: no area left).
template <class Rows, class MemorySpace>
KOKKOS_INLINE_FUNCTION int
canonical_polygon(Rows const& rows, int m, double sx, double sy, double sw,
                  SeedLookup<MemorySpace> const& seeds,
                  ConstPoints<MemorySpace> const& domain_vertices,
                  Kokkos::View<int const*, MemorySpace> const& domain_labels) {
  auto line = [&](int k, double& nx, double& ny, double& c) {
    edge_line(rows.label(k), sx, sy, sw, seeds, domain_vertices, domain_labels, nx, ny, c);
  };
  // Consecutive edges on parallel lines are on the same line (a convex polygon): made by two
  // seeds at the same place with the same weight, one after the other. The higher label goes.
  bool merged = true;
  while (merged && m >= 2) {
    merged = false;
    for (int k = 0; k < m && !merged; ++k) {
      int const next = k + 1 == m ? 0 : k + 1;
      double nax, nay, ca, nbx, nby, cb;
      line(k, nax, nay, ca);
      line(next, nbx, nby, cb);
      if (nax * nby - nay * nbx != 0)
        continue;
      int const gone = rows.label(k) > rows.label(next) ? k : next;
      for (int q = gone; q + 1 < m; ++q) {
        rows.label(q) = rows.label(q + 1);
        rows.x(q) = rows.x(q + 1);
        rows.y(q) = rows.y(q + 1);
      }
      --m;
      merged = true;
    }
  }
  // Vertex k where the edges k − 1 and k meet, recomputed in place (the clipped vertex kept
  // where that overflows).
  double size = 0;
  auto recompute = [&] {
    for (int k = 0; k < m; ++k) {
      double nax, nay, ca, nbx, nby, cb;
      line(k == 0 ? m - 1 : k - 1, nax, nay, ca);
      line(k, nbx, nby, cb);
      double const det = nax * nby - nay * nbx;
      double const ux = (ca * nby - cb * nay) / det, uy = (nax * cb - nbx * ca) / det;
      if (sdot::compat::fabs(ux) + sdot::compat::fabs(uy) < sdot::compat::infinity<double>()) {
        rows.x(k) = ux;
        rows.y(k) = uy;
      }
      size = sdot::compat::max(size, sdot::compat::fabs(rows.x(k)) + sdot::compat::fabs(rows.y(k)));
    }
  };
  recompute();
  // Edges shorter than rounding can make: the first one removed (its label), the vertices
  // recomputed, until none is left.
  double const tolerance = 1e-12 * size;
  bool removed = true;
  while (removed && m >= 3) {
    removed = false;
    for (int k = 0; k < m && !removed; ++k) {
      int const next = k + 1 == m ? 0 : k + 1;
      if (sdot::compat::fabs(rows.x(next) - rows.x(k)) +
              sdot::compat::fabs(rows.y(next) - rows.y(k)) >
          tolerance)
        continue;
      for (int q = k; q + 1 < m; ++q)
        rows.label(q) = rows.label(q + 1);
      --m;
      removed = true;
    }
    if (removed)
      recompute();
  }
  if (m < 3)
    return 0;
  // Start at the least vertex (by x, then y): where the cell's lines are, whatever made them
  // (two seeds at the same place with the same weight make the same edge). Three reversals.
  int start = 0;
  for (int k = 1; k < m; ++k)
    if (rows.x(k) < rows.x(start) || (rows.x(k) == rows.x(start) && rows.y(k) < rows.y(start)))
      start = k;
  auto reverse = [&](int from, int to) {
    for (--to; from < to; ++from, --to) {
      double const x = rows.x(from), y = rows.y(from);
      int const l = rows.label(from);
      rows.x(from) = rows.x(to);
      rows.y(from) = rows.y(to);
      rows.label(from) = rows.label(to);
      rows.x(to) = x;
      rows.y(to) = y;
      rows.label(to) = l;
    }
  };
  if (start > 0) {
    reverse(0, start);
    reverse(start, m);
    reverse(0, m);
  }
  return m;
}

/// A cell's rows in a Polygon (relative to the seed already).
struct PolygonRows {
  PolygonBuffers buffers;
  KOKKOS_INLINE_FUNCTION double& x(int k) const { return buffers.x[k]; }
  KOKKOS_INLINE_FUNCTION double& y(int k) const { return buffers.y[k]; }
  KOKKOS_INLINE_FUNCTION int& label(int k) const { return buffers.label[k]; }
};

/// Recomputes `cell` (of the seed seed_x, seed_y, seed_w) from its edges (canonical_polygon).
template <class MemorySpace>
KOKKOS_INLINE_FUNCTION void
make_canonical(Polygon& cell, double sx, double sy, double sw, SeedLookup<MemorySpace> const& seeds,
               ConstPoints<MemorySpace> const& domain_vertices,
               Kokkos::View<int const*, MemorySpace> const& domain_labels) {
  cell.size = canonical_polygon(PolygonRows{cell.buffers[cell.current]}, cell.size, sx, sy, sw,
                                seeds, domain_vertices, domain_labels);
}

/// The rows [begin, …) of polygons in Views (relative to the seed while recomputed).
template <class MemorySpace>
struct ViewRows {
  Points<MemorySpace> vertices;
  Kokkos::View<int*, MemorySpace> labels;
  int begin;
  KOKKOS_INLINE_FUNCTION double& x(int k) const { return vertices(begin + k, 0); }
  KOKKOS_INLINE_FUNCTION double& y(int k) const { return vertices(begin + k, 1); }
  KOKKOS_INLINE_FUNCTION int& label(int k) const { return labels(begin + k); }
};

/// Rewrites each cell of `polygons` (absolute vertices, edge labels) as recomputed from its
/// edges' lines, in place: cell i keeps the rows [offsets(i), offsets(i) + counts(i)) of its
/// range. Writes the cell's measure and centroid.
template <class MemorySpace>
struct CanonicalCells {
  ConstPoints<MemorySpace> positions; ///< the cells' seeds, by local index
  Kokkos::View<double const*, MemorySpace> weights;
  SeedLookup<MemorySpace> seeds;
  ConstPoints<MemorySpace> domain_vertices;
  Kokkos::View<int const*, MemorySpace> domain_labels;
  Kokkos::View<int const*, MemorySpace> offsets;
  Points<MemorySpace> vertices;
  Kokkos::View<int*, MemorySpace> labels;
  Kokkos::View<int*, MemorySpace> counts;
  Kokkos::View<double*, MemorySpace> measures;
  Points<MemorySpace> centroids;

  KOKKOS_FUNCTION void operator()(int i) const {
    double const sx = positions(i, 0), sy = positions(i, 1), sw = weights(i);
    ViewRows<MemorySpace> const rows{vertices, labels, offsets(i)};
    int m = offsets(i + 1) - offsets(i);
    for (int k = 0; k < m; ++k) {
      rows.x(k) -= sx;
      rows.y(k) -= sy;
    }
    m = canonical_polygon(rows, m, sx, sy, sw, seeds, domain_vertices, domain_labels);
    double area, mx, my;
    fan_integrals(
        m, [&](int k) { return rows.x(k); }, [&](int k) { return rows.y(k); }, area, mx, my);
    measures(i) = area;
    centroids(i, 0) = area > 0 ? sx + mx / area : sx;
    centroids(i, 1) = area > 0 ? sy + my / area : sy;
    for (int k = 0; k < m; ++k) {
      rows.x(k) += sx;
      rows.y(k) += sy;
    }
    counts(i) = m;
  }
};

/// The seeds of other processes that the labels of this process's cells name: fetched from
/// their processes (collective; the input is spread in process order, `first` this process's
/// first global index).
template <class ExecutionSpace>
SeedLookup<typename ExecutionSpace::memory_space>
seed_lookup(ExecutionSpace const& space, loom::Ranks const& ranks,
            ConstPoints<typename ExecutionSpace::memory_space> positions,
            Kokkos::View<double const*, typename ExecutionSpace::memory_space> weights,
            std::int64_t first,
            Kokkos::View<int const*, typename ExecutionSpace::memory_space> labels) {
  using MemorySpace = typename ExecutionSpace::memory_space;
  SeedLookup<MemorySpace> lookup{positions, weights, first, {}, {}};
  lookup.remote_gids = Kokkos::View<int*, MemorySpace>("sdot::canonical::remote_gids", 0);
  lookup.remote_seeds = Kokkos::View<double**, Kokkos::LayoutRight, MemorySpace>(
      "sdot::canonical::remote_seeds", 0, 3);
  if (ranks.process_count() == 1)
    return lookup;
  // The labels naming seeds (the domain's edges have negative labels), as the columns of a
  // halo whose rows are the seeds of every process.
  auto const host_labels = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace{}, labels);
  std::vector<int> seeds;
  for (std::size_t k = 0; k < host_labels.extent(0); ++k)
    if (host_labels(k) >= 0)
      seeds.push_back(host_labels(k));
  auto columns = uninitialized_view<int*>(space, "sdot::canonical::columns", seeds.size());
  Kokkos::deep_copy(
      space, columns,
      Kokkos::View<int const*, Kokkos::HostSpace, Kokkos::MemoryTraits<Kokkos::Unmanaged>>(
          seeds.data(), seeds.size()));
  auto extended = uninitialized_view<int*>(space, "sdot::canonical::extended", seeds.size());
  loom::Halo<ExecutionSpace> const halo(space, ranks, loom::RowBlocks(ranks, positions.extent(0)),
                                        columns, extended);
  lookup.remote_gids = halo.remote_columns();
  lookup.remote_seeds = uninitialized_view<double**, Kokkos::LayoutRight>(
      space, "sdot::canonical::remote_seeds", halo.size(), 3);
  halo.fetch(space, positions,
             Kokkos::subview(lookup.remote_seeds, Kokkos::ALL, Kokkos::pair<int, int>(0, 2)));
  halo.fetch(space, weights, Kokkos::subview(lookup.remote_seeds, Kokkos::ALL, 2));
  return lookup;
}

/// Recomputes the cells of `polygons` from their edges' lines (see the top of this file):
/// returns the new polygons, and writes the measures and centroids (collective: fetches the
/// seeds of other processes the cells name).
template <class ExecutionSpace, class Polygons>
Polygons canonical_cells(
    ExecutionSpace const& space, loom::Ranks const& ranks,
    ConstPoints<typename ExecutionSpace::memory_space> positions,
    Kokkos::View<double const*, typename ExecutionSpace::memory_space> weights, std::int64_t first,
    ConstPoints<typename ExecutionSpace::memory_space> domain_vertices,
    Kokkos::View<int const*, typename ExecutionSpace::memory_space> domain_labels,
    Polygons const& polygons, Kokkos::View<double*, typename ExecutionSpace::memory_space> measures,
    Points<typename ExecutionSpace::memory_space> centroids) {
  using MemorySpace = typename ExecutionSpace::memory_space;
  using Policy = Kokkos::RangePolicy<ExecutionSpace>;
  sdot::compat::ScopedRegion region("sdot::canonical_cells");
  int const n = static_cast<int>(positions.extent(0));
  auto const lookup = seed_lookup(space, ranks, positions, weights, first,
                                  Kokkos::View<int const*, MemorySpace>(polygons.edge_sources));
  auto counts = uninitialized_view<int*>(space, "sdot::canonical::counts", n);
  Kokkos::parallel_for("sdot::canonical::cells", Policy(space, 0, n),
                       CanonicalCells<MemorySpace>{positions, weights, lookup, domain_vertices,
                                                   domain_labels, polygons.offsets,
                                                   polygons.vertices, polygons.edge_sources, counts,
                                                   measures, centroids});
  // Compacted.
  Polygons out;
  allocate_polygon_rows(space, counts, out.offsets, out.vertices, out.edge_sources);
  auto const from = polygons.offsets;
  auto const to = out.offsets;
  auto const old_vertices = polygons.vertices;
  auto const old_labels = polygons.edge_sources;
  auto const new_vertices = out.vertices;
  auto const new_labels = out.edge_sources;
  Kokkos::parallel_for(
      "sdot::canonical::compact", Policy(space, 0, n), KOKKOS_LAMBDA(int i) {
        int const a = from(i), b = to(i);
        for (int k = 0; k < counts(i); ++k) {
          new_vertices(b + k, 0) = old_vertices(a + k, 0);
          new_vertices(b + k, 1) = old_vertices(a + k, 1);
          new_labels(b + k) = old_labels(a + k);
        }
      });
  return out;
}

} // namespace sdot::detail
