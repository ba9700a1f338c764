#pragma once
// A cell polygon during clipping: vertices relative to the seed, in counter-clockwise order,
// edge k (vertex k to k+1) labelled with what made it (a seed index ≥ 0, or -1 - h for the
// boundary half-space h). Storage is borrowed (kernel-local arrays or a workspace row).

#include <sdot/base/kokkos_compat.hpp>

namespace sdot::detail {

enum class ClipResult : int { unchanged = 0, clipped = 1, emptied = 2, overflow = 3 };

/// Boundary half-space h as an edge label.
KOKKOS_INLINE_FUNCTION constexpr int boundary_label(int h) {
  return -1 - h;
}

struct PolygonBuffers {
  double* x;
  double* y;
  int* label;
};

/// Writes the vertices of a clipped polygon into a buffer, keeping their largest squared
/// distance to the seed and their bounding box.
struct PolygonWriter {
  PolygonBuffers out;
  int size = 0;
  double max_radius2 = 0;
  double xmin = sdot::compat::infinity<double>(), xmax = -sdot::compat::infinity<double>();
  double ymin = sdot::compat::infinity<double>(), ymax = -sdot::compat::infinity<double>();

  KOKKOS_INLINE_FUNCTION explicit PolygonWriter(PolygonBuffers const& buffers) : out(buffers) {}

  KOKKOS_INLINE_FUNCTION void emit(double vx, double vy, int l) {
    out.x[size] = vx;
    out.y[size] = vy;
    out.label[size] = l;
    max_radius2 = sdot::compat::max(max_radius2, vx * vx + vy * vy);
    xmin = sdot::compat::min(xmin, vx);
    xmax = sdot::compat::max(xmax, vx);
    ymin = sdot::compat::min(ymin, vy);
    ymax = sdot::compat::max(ymax, vy);
    ++size;
  }
};

/// Fan integrals (area and first moments about the origin) of the polygon of `n` vertices
/// x(k), y(k): triangles from the first vertex, in coordinates relative to it. Never a
/// negative area (a polygon of no area whose rounding came out negative has none). Products
/// relative to the first vertex stay of the polygon's size even far from the origin.
template <class X, class Y>
KOKKOS_INLINE_FUNCTION void fan_integrals(int n, X const& x, Y const& y, double& area, double& mx,
                                          double& my) {
  double a = 0, sx = 0, sy = 0;
  if (n > 0) {
    double const x0 = x(0), y0 = y(0);
    for (int k = 1; k + 1 < n; ++k) {
      double const xk = x(k) - x0, yk = y(k) - y0;
      double const xl = x(k + 1) - x0, yl = y(k + 1) - y0;
      double const cross = xk * yl - xl * yk;
      a += cross;
      sx += (xk + xl) * cross;
      sy += (yk + yl) * cross;
    }
    a /= 2;
    sx = sx / 6 + a * x0;
    sy = sy / 6 + a * y0;
  }
  if (a < 0) {
    a = 0;
    sx = sy = 0;
  }
  area = a;
  mx = sx;
  my = sy;
}

/// Two buffers of `capacity` vertices each; clipping writes into the other one.
struct Polygon {
  PolygonBuffers buffers[2];
  int current = 0;
  int size = 0;
  int capacity = 0;
  double max_radius2 = 0; ///< largest squared distance of a vertex to the seed
  /// Bounding box of the vertices (valid when size > 0; push() on an empty polygon resets it).
  double xmin = 0, xmax = 0, ymin = 0, ymax = 0;

  KOKKOS_INLINE_FUNCTION double x(int k) const { return buffers[current].x[k]; }
  KOKKOS_INLINE_FUNCTION double y(int k) const { return buffers[current].y[k]; }
  KOKKOS_INLINE_FUNCTION int label(int k) const { return buffers[current].label[k]; }

  KOKKOS_INLINE_FUNCTION void push(double px, double py, int l) {
    auto& b = buffers[current];
    b.x[size] = px;
    b.y[size] = py;
    b.label[size] = l;
    if (size == 0) {
      xmin = xmax = px;
      ymin = ymax = py;
    } else {
      xmin = sdot::compat::min(xmin, px);
      xmax = sdot::compat::max(xmax, px);
      ymin = sdot::compat::min(ymin, py);
      ymax = sdot::compat::max(ymax, py);
    }
    ++size;
    max_radius2 = sdot::compat::max(max_radius2, px * px + py * py);
  }

  /// Whether an edge has label `l`.
  KOKKOS_INLINE_FUNCTION bool has_edge(int l) const {
    bool found = false;
    for (int k = 0; k < size; ++k)
      found |= buffers[current].label[k] == l;
    return found;
  }

  /// Whether some vertex may have ax·x + ay·y > b, from the bounding box (false: clip() would
  /// leave the polygon unchanged). Ties pass: a = 0, b = 0 does (a duplicate seed).
  KOKKOS_INLINE_FUNCTION bool may_reach(double ax, double ay, double b) const {
    return sdot::compat::max(ax * xmin, ax * xmax) + sdot::compat::max(ay * ymin, ay * ymax) >= b;
  }

  /// Keeps the part where ax·x + ay·y ≤ b (vertices on the line stay). The new edge, if any,
  /// gets `cut_label`. On overflow the polygon is left as it was.
  ///
  /// One pass marks the vertices outside in a bit mask; a convex polygon has them in one run
  /// (one bit of the mask starts a run), replaced by the one or two points where the line
  /// crosses its edges, the others copied without a test. Several runs (a polygon made nearly
  /// flat by rounding), or more vertices than the mask has bits, take the general
  /// Sutherland–Hodgman pass.
  KOKKOS_INLINE_FUNCTION ClipResult clip(double ax, double ay, double b, int cut_label) {
    using Mask = unsigned long long;
    PolygonBuffers const& in = buffers[current];
    int const n = size;
    Mask outside = 0; // vertices beyond the 64th: not marked, the general pass follows
    int nb_out = 0;
    for (int k = 0; k < n; ++k) {
      int const out = ax * in.x[k] + ay * in.y[k] > b;
      nb_out += out;
      outside |= Mask(out) << (k & 63);
    }
    if (nb_out == 0)
      return ClipResult::unchanged;
    if (nb_out == n) {
      size = 0;
      max_radius2 = 0;
      return ClipResult::emptied;
    }
    if (n > 64)
      return clip_general(ax, ay, b, cut_label);
    // Bit k of `after_inside`: vertex k is outside and vertex k − 1 (cyclic) inside.
    Mask const previous_outside = (outside << 1) | (outside >> (n - 1));
    Mask const after_inside = outside & ~previous_outside;
    if (after_inside & (after_inside - 1))
      return clip_general(ax, ay, b, cut_label); // several runs
    // Vertices [first, last] (cyclic) are outside.
    int const first = sdot::compat::countr_zero(after_inside);
    int const last = first + nb_out - 1 - n * (first + nb_out - 1 >= n);
    int const p = first - 1 + n * (first == 0);   // inside, before the run
    int const q = last + 1 - n * (last + 1 == n); // inside, after it
    double const sp = ax * in.x[p] + ay * in.y[p] - b;
    double const sq = ax * in.x[q] + ay * in.y[q] - b;
    int const new_size = n - nb_out + (sp < 0) + (sq < 0);
    if (new_size > capacity)
      return ClipResult::overflow;
    // The vertices kept, q to p, then the crossing on p→first, then the one on last→q.
    PolygonWriter out(buffers[1 - current]);
    for (int m = 0; m < n - nb_out; ++m) {
      int const k = q + m - n * (q + m >= n); // cyclic, without a branch
      out.emit(in.x[k], in.y[k], in.label[k]);
    }
    // The edge leaving p now follows the line up to the crossing of last→q (or to q).
    if (sp < 0) {
      double const sf = ax * in.x[first] + ay * in.y[first] - b;
      double const t = sp / (sp - sf);
      out.emit(in.x[p] + t * (in.x[first] - in.x[p]), in.y[p] + t * (in.y[first] - in.y[p]),
               cut_label);
    } else {
      out.out.label[out.size - 1] = cut_label; // p is on the line
    }
    if (sq < 0) {
      double const sl = ax * in.x[last] + ay * in.y[last] - b;
      double const t = sl / (sl - sq);
      out.emit(in.x[last] + t * (in.x[q] - in.x[last]), in.y[last] + t * (in.y[q] - in.y[last]),
               in.label[last]);
    }
    return commit(out);
  }

  /// Makes the polygon written by `out` (into the other buffer) the current one.
  KOKKOS_INLINE_FUNCTION ClipResult commit(PolygonWriter const& out) {
    current = 1 - current;
    size = out.size;
    max_radius2 = out.max_radius2;
    xmin = out.xmin;
    xmax = out.xmax;
    ymin = out.ymin;
    ymax = out.ymax;
    return ClipResult::clipped;
  }

  /// Sutherland–Hodgman pass for any pattern of vertices outside (at least one inside).
  KOKKOS_FUNCTION ClipResult clip_general(double ax, double ay, double b, int cut_label) {
    PolygonBuffers const& in = buffers[current];
    PolygonWriter out(buffers[1 - current]);
    double px = in.x[size - 1], py = in.y[size - 1];
    double sp = ax * px + ay * py - b;
    int pl = in.label[size - 1];
    bool relabel_last = false;
    for (int k = 0; k < size; ++k) {
      double qx = in.x[k], qy = in.y[k];
      double sq = ax * qx + ay * qy - b;
      if ((sp < 0 && sq > 0) || (sp > 0 && sq < 0)) { // p→q crosses the line: its intersection
        if (out.size == capacity)
          return ClipResult::overflow;
        double t = sp / (sp - sq);
        out.emit(px + t * (qx - px), py + t * (qy - py), sp < 0 ? cut_label : pl);
      } else if (sp == 0 && sq > 0) {
        // p lies on the line and is kept: the edge leaving it now follows the line.
        if (k == 0)
          relabel_last = true; // p is the last input vertex, emitted last
        else
          out.out.label[out.size - 1] = cut_label;
      }
      if (sq <= 0) {
        if (out.size == capacity)
          return ClipResult::overflow;
        out.emit(qx, qy, in.label[k]);
      }
      px = qx;
      py = qy;
      sp = sq;
      pl = in.label[k];
    }
    if (relabel_last)
      out.out.label[out.size - 1] = cut_label;
    return commit(out);
  }

  /// The polygon's area and its centroid, its vertices being relative to (x0, y0) (the seed):
  /// (x0, y0) itself when the area is 0.
  KOKKOS_INLINE_FUNCTION void area_and_centroid(double x0, double y0, double& area, double& cx,
                                                double& cy) const {
    double mx, my;
    integrals(area, mx, my);
    cx = area > 0 ? x0 + mx / area : x0;
    cy = area > 0 ? y0 + my / area : y0;
  }

  /// Area and first moments (Σ area·centroid, relative to the seed) of the polygon; never a
  /// negative area.
  KOKKOS_INLINE_FUNCTION void integrals(double& area, double& mx, double& my) const {
    PolygonBuffers const& b = buffers[current];
    fan_integrals(
        size, [&](int k) { return b.x[k]; }, [&](int k) { return b.y[k]; }, area, mx, my);
  }
};

} // namespace sdot::detail
