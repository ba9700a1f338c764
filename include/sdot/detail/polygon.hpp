#pragma once
// A cell polygon during clipping: vertices relative to the seed, in counter-clockwise order,
// edge k (vertex k to k+1) labelled with what made it (a seed index ≥ 0, or -1 - h for the
// boundary half-space h). Storage is borrowed (kernel-local arrays or a workspace row).

#include <loom/kokkos_compat.hpp>

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
      xmin = loom::compat::min(xmin, px);
      xmax = loom::compat::max(xmax, px);
      ymin = loom::compat::min(ymin, py);
      ymax = loom::compat::max(ymax, py);
    }
    ++size;
    max_radius2 = loom::compat::max(max_radius2, px * px + py * py);
  }

  /// Whether some vertex may have ax·x + ay·y > b, from the bounding box (false: clip() would
  /// leave the polygon unchanged).
  KOKKOS_INLINE_FUNCTION bool may_reach(double ax, double ay, double b) const {
    return loom::compat::max(ax * xmin, ax * xmax) + loom::compat::max(ay * ymin, ay * ymax) > b;
  }

  /// Keeps the part where ax·x + ay·y ≤ b (Sutherland–Hodgman; vertices on the line stay).
  /// The new edge, if any, gets `cut_label`. On overflow the polygon is left as it was.
  KOKKOS_INLINE_FUNCTION ClipResult clip(double ax, double ay, double b, int cut_label) {
    PolygonBuffers const& in = buffers[current];
    int nb_out = 0;
    for (int k = 0; k < size; ++k)
      nb_out += ax * in.x[k] + ay * in.y[k] > b;
    if (nb_out == 0)
      return ClipResult::unchanged;
    if (nb_out == size) {
      size = 0;
      max_radius2 = 0;
      return ClipResult::emptied;
    }
    PolygonBuffers const& out = buffers[1 - current];
    int n = 0;
    double r2 = 0;
    double const inf = loom::compat::infinity<double>();
    double bx0 = inf, bx1 = -inf, by0 = inf, by1 = -inf;
    double px = in.x[size - 1], py = in.y[size - 1];
    double sp = ax * px + ay * py - b;
    int pl = in.label[size - 1];
    bool relabel_last = false;
    for (int k = 0; k < size; ++k) {
      double qx = in.x[k], qy = in.y[k];
      double sq = ax * qx + ay * qy - b;
      if ((sp < 0 && sq > 0) || (sp > 0 && sq < 0)) { // p→q crosses the line: its intersection
        if (n == capacity)
          return ClipResult::overflow;
        double t = sp / (sp - sq);
        double ix = px + t * (qx - px), iy = py + t * (qy - py);
        out.x[n] = ix;
        out.y[n] = iy;
        out.label[n] = sp < 0 ? cut_label : pl;
        r2 = loom::compat::max(r2, ix * ix + iy * iy);
        bx0 = loom::compat::min(bx0, ix);
        bx1 = loom::compat::max(bx1, ix);
        by0 = loom::compat::min(by0, iy);
        by1 = loom::compat::max(by1, iy);
        ++n;
      } else if (sp == 0 && sq > 0) {
        // p lies on the line and is kept: the edge leaving it now follows the line.
        if (k == 0)
          relabel_last = true; // p is the last input vertex, emitted last
        else
          out.label[n - 1] = cut_label;
      }
      if (sq <= 0) {
        if (n == capacity)
          return ClipResult::overflow;
        out.x[n] = qx;
        out.y[n] = qy;
        out.label[n] = in.label[k];
        r2 = loom::compat::max(r2, qx * qx + qy * qy);
        bx0 = loom::compat::min(bx0, qx);
        bx1 = loom::compat::max(bx1, qx);
        by0 = loom::compat::min(by0, qy);
        by1 = loom::compat::max(by1, qy);
        ++n;
      }
      px = qx;
      py = qy;
      sp = sq;
      pl = in.label[k];
    }
    if (relabel_last)
      out.label[n - 1] = cut_label;
    current = 1 - current;
    size = n;
    max_radius2 = r2;
    xmin = bx0;
    xmax = bx1;
    ymin = by0;
    ymax = by1;
    return ClipResult::clipped;
  }

  /// Area and first moments (Σ area·centroid, relative to the seed) of the polygon.
  KOKKOS_INLINE_FUNCTION void integrals(double& area, double& mx, double& my) const {
    PolygonBuffers const& b = buffers[current];
    double a = 0, sx = 0, sy = 0;
    for (int k = 0; k < size; ++k) {
      int l = k + 1 == size ? 0 : k + 1;
      double cross = b.x[k] * b.y[l] - b.x[l] * b.y[k];
      a += cross;
      sx += (b.x[k] + b.x[l]) * cross;
      sy += (b.y[k] + b.y[l]) * cross;
    }
    area = a / 2;
    mx = sx / 6;
    my = sy / 6;
  }
};

} // namespace sdot::detail
