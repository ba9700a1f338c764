// libFuzzer target: the polygon clipper (sdot::detail::Polygon).
//
// The input is decoded into a starting convex polygon (the unit square, a box of any aspect
// ratio or a polygon inscribed in a circle; sizes from 2^-40 to 2^40, up to 2^32 sizes from
// the origin), a capacity, and a sequence of half-planes: normals of magnitudes 2^-300 to
// 2^300 (each component on its own scale too), lines through vertices or points of edges,
// nearly parallel to an edge (down to 2^-60 radians), tangent to a circle (many vertices, past
// the 64 of the clipper's bit mask), and repeats of earlier lines, as they are, reversed (a
// polygon of no area) or moved by a few units in the last place. After each clip it checks:
//
//  - the result code: unchanged (nothing moved), clipped, emptied, or overflow (the polygon as
//    it was, exactly when the result needs more than the capacity); never a clip where
//    may_reach() said none could happen;
//  - the convex fast path against the general Sutherland–Hodgman pass on a copy: the same
//    vertices and labels, bit for bit, up to where the cycle starts;
//  - the bookkeeping: size within capacity, the bounding box and the largest squared radius
//    of the vertices, has_edge() against the labels;
//  - the geometry, up to rounding: convex and counter-clockwise, every vertex in every
//    half-plane so far, every edge on the line of its label (a half-plane's label, or the
//    original edge's), area not increasing, and the area of an independent Sutherland–Hodgman
//    clip in long double of the original polygon by every half-plane so far;
//  - integrals() (area and first moments) against a long-double shoelace formula.
//
// Rounding: each clip moves a vertex by at most a few units in the last place of the
// coordinates' magnitude X (the new vertex p + t (q - p), and the sign of a·v - b decided to
// that precision), and a vertex made by a clip comes from vertices made by earlier ones, so
// after k clips every vertex is within delta_k = 16 (k + 1) ε X of what exact arithmetic on the
// same decisions gives. Every geometric check is stated with delta_k, as a distance (to a line)
// or as delta_k times a length (areas, cross products).
//
// A finding prints the polygon and the half-plane, then aborts (libFuzzer saves the input).
// SDOT_FUZZ_VERBOSE=1 prints every step.

#include "sdot/host_polygon.hpp"

#include <sdot/geometry/polygon.hpp>

#include <fuzzer/FuzzedDataProvider.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <limits>
#include <utility>
#include <vector>

namespace {

using sdot::detail::ClipResult;
using sdot::detail::Polygon;
using Real = long double;

constexpr double eps = std::numeric_limits<double>::epsilon();
constexpr double pi = 3.14159265358979323846;
/// Original edge k is labelled original_label(k); half-plane j (in order) gets the label j.
constexpr int original_label(int k) {
  return -1 - k;
}

bool verbose() {
  static bool const v = std::getenv("SDOT_FUZZ_VERBOSE") != nullptr;
  return v;
}

struct HalfPlane {
  double ax, ay, b; // keeps ax·x + ay·y ≤ b
};

struct Point {
  Real x, y;
};

using sdot_test::HostPolygon;

/// The vertices and labels of a polygon, in its order.
struct Snapshot {
  std::vector<double> x, y;
  std::vector<int> label;
  int current = 0;
  double max_radius2 = 0, xmin = 0, xmax = 0, ymin = 0, ymax = 0;

  explicit Snapshot(Polygon const& p)
      : current(p.current), max_radius2(p.max_radius2), xmin(p.xmin), xmax(p.xmax), ymin(p.ymin),
        ymax(p.ymax) {
    for (int k = 0; k < p.size; ++k) {
      x.push_back(p.x(k));
      y.push_back(p.y(k));
      label.push_back(p.label(k));
    }
  }
  int size() const { return static_cast<int>(x.size()); }

  /// Same vertices and labels, bit for bit (not the bookkeeping).
  bool same_cycle_as(Snapshot const& o, bool any_start) const {
    int const n = size();
    if (o.size() != n)
      return false;
    for (int s = 0; s < (any_start ? std::max(n, 1) : 1); ++s) {
      bool same = true;
      for (int k = 0; k < n && same; ++k) {
        int const m = (k + s) % n;
        same = std::memcmp(&x[k], &o.x[m], sizeof(double)) == 0 &&
               std::memcmp(&y[k], &o.y[m], sizeof(double)) == 0 && label[k] == o.label[m];
      }
      if (same)
        return true;
    }
    return false;
  }
};

struct Fuzz {
  // The original polygon.
  std::vector<std::array<double, 2>> start;
  double X = 0; // largest coordinate magnitude of the original polygon
  double perimeter0 = 0;
  int capacity = 0;
  std::vector<HalfPlane> planes; // the half-planes applied (not the ones that overflowed)
  int clips = 0;                 // results "clipped" so far

  [[noreturn]] void finding(Polygon const& p, HalfPlane const& h, char const* what, double value,
                            double tolerance) const {
    std::fprintf(stderr, "sdot fuzz polygon: FINDING: %s (%.17g, tolerance %.17g)\n", what, value,
                 tolerance);
    std::fprintf(stderr, "  half-plane %zu: %.17g x + %.17g y <= %.17g, capacity %d, X %.17g\n",
                 planes.size(), h.ax, h.ay, h.b, capacity, X);
    std::fprintf(stderr, "  polygon (%d vertices):\n", p.size);
    for (int k = 0; k < p.size; ++k)
      std::fprintf(stderr, "    %.17g %.17g  label %d\n", p.x(k), p.y(k), p.label(k));
    std::abort();
  }

  /// Distance tolerance after `clips` clips.
  double delta() const { return 16 * (clips + 1) * eps * X; }

  /// The brute force: the original polygon clipped by every half-plane so far, one after the
  /// other (Sutherland–Hodgman in long double).
  std::vector<Point> exact;

  /// Applies `h` to the polygon, and to the brute force.
  void apply(HalfPlane const& h) {
    planes.push_back(h);
    std::vector<Point> out;
    std::size_t const n = exact.size();
    for (std::size_t k = 0; k < n; ++k) {
      Point const p = exact[(k + n - 1) % n], q = exact[k];
      Real const sp = h.ax * p.x + h.ay * p.y - h.b;
      Real const sq = h.ax * q.x + h.ay * q.y - h.b;
      if ((sp < 0 && sq > 0) || (sp > 0 && sq < 0)) {
        Real const t = sp / (sp - sq);
        out.push_back({p.x + t * (q.x - p.x), p.y + t * (q.y - p.y)});
      }
      if (sq <= 0)
        out.push_back(q);
    }
    exact.swap(out);
  }

  /// Shoelace formula in coordinates relative to the first vertex (products of the polygon's
  /// extent, not of its distance to the origin).
  static Real area_of(std::vector<Point> const& poly) {
    Real a = 0;
    std::size_t const n = poly.size();
    for (std::size_t k = 1; k + 1 < n; ++k) {
      Real const px = poly[k].x - poly[0].x, py = poly[k].y - poly[0].y;
      Real const qx = poly[k + 1].x - poly[0].x, qy = poly[k + 1].y - poly[0].y;
      a += px * qy - qx * py;
    }
    return a / 2;
  }

  static std::vector<Point> points_of(Polygon const& p) {
    std::vector<Point> v;
    for (int k = 0; k < p.size; ++k)
      v.push_back({p.x(k), p.y(k)});
    return v;
  }

  static Real perimeter_of(std::vector<Point> const& poly) {
    Real s = 0;
    std::size_t const n = poly.size();
    for (std::size_t k = 0; k < n; ++k) {
      Point const p = poly[k], q = poly[(k + 1) % n];
      s += std::hypot(q.x - p.x, q.y - p.y);
    }
    return s;
  }

  /// Signed distance of (x, y) beyond the line of label `l` (positive: outside), long double.
  Real beyond(int l, Real x, Real y) const {
    if (l >= 0) {
      HalfPlane const& h = planes[l];
      return (h.ax * x + h.ay * y - h.b) / std::hypot(Real(h.ax), Real(h.ay));
    }
    int const k = -1 - l, n = static_cast<int>(start.size());
    Real const x0 = start[k][0], y0 = start[k][1];
    Real const dx = start[(k + 1) % n][0] - x0, dy = start[(k + 1) % n][1] - y0;
    return (dx * (y0 - y) - dy * (x0 - x)) / std::hypot(dx, dy); // right of the edge: outside
  }

  /// Every check of a polygon after a clip that changed it (`h` applied, `before` the area
  /// and perimeter of the polygon it was).
  void check_geometry(Polygon const& p, HalfPlane const& h, Snapshot const& before,
                      Real area_before, Real perimeter_before) const {
    int const n = p.size;
    double const d = delta();
    std::vector<Point> const v = points_of(p);
    // Bookkeeping.
    double xmin = v[0].x, xmax = xmin, ymin = v[0].y, ymax = ymin, r2 = 0;
    for (int k = 0; k < n; ++k) {
      xmin = std::min(xmin, p.x(k));
      xmax = std::max(xmax, p.x(k));
      ymin = std::min(ymin, p.y(k));
      ymax = std::max(ymax, p.y(k));
      r2 = std::max(r2, p.x(k) * p.x(k) + p.y(k) * p.y(k));
    }
    if (xmin != p.xmin || xmax != p.xmax || ymin != p.ymin || ymax != p.ymax)
      finding(p, h, "bounding box differs from the vertices'", p.xmin, xmin);
    if (r2 != p.max_radius2)
      finding(p, h, "max_radius2 differs from the vertices'", p.max_radius2, r2);
    if (!p.has_edge(static_cast<int>(planes.size()) - 1))
      finding(p, h, "clipped, but no edge has the new label", 0, 0);
    // Labels, and every edge on the line of its label.
    for (int k = 0; k < n; ++k) {
      int const l = p.label(k);
      if (!(l >= 0 ? l < static_cast<int>(planes.size()) : -1 - l < static_cast<int>(start.size())))
        finding(p, h, "unknown edge label", l, 0);
      Point const a = v[k], b = v[(k + 1) % n];
      Real const off = std::max(std::fabs(beyond(l, a.x, a.y)), std::fabs(beyond(l, b.x, b.y)));
      if (off > d)
        finding(p, h, "an edge is off the line of its label", static_cast<double>(off), d);
    }
    // Every vertex in every half-plane so far (and in the original polygon): the new ones
    // against all, those kept (checked before) against the last.
    std::vector<std::pair<double, double>> kept;
    for (int k = 0; k < before.size(); ++k)
      kept.emplace_back(before.x[k], before.y[k]);
    std::sort(kept.begin(), kept.end());
    for (int k = 0; k < n; ++k) {
      bool const old = std::binary_search(kept.begin(), kept.end(), std::make_pair(p.x(k), p.y(k)));
      for (std::size_t j = old ? planes.size() - 1 : 0; j < planes.size(); ++j)
        if (Real const s = beyond(static_cast<int>(j), v[k].x, v[k].y); s > d)
          finding(p, h, "a vertex is outside a half-plane", static_cast<double>(s), d);
      for (std::size_t e = 0; e < start.size(); ++e)
        if (Real const s = beyond(original_label(static_cast<int>(e)), v[k].x, v[k].y); s > d)
          finding(p, h, "a vertex is outside the original polygon", static_cast<double>(s), d);
    }
    // Convex and counter-clockwise: no right turn beyond what moving each vertex by delta
    // allows (a cross product of edges e1, e2 changes by at most 2 delta (|e1| + |e2|)).
    for (int k = 0; k < n; ++k) {
      Point const a = v[(k + n - 1) % n], b = v[k], c = v[(k + 1) % n];
      Real const e1x = b.x - a.x, e1y = b.y - a.y, e2x = c.x - b.x, e2y = c.y - b.y;
      Real const cross = e1x * e2y - e1y * e2x;
      Real const tol = 2 * d * (std::hypot(e1x, e1y) + std::hypot(e2x, e2y));
      if (cross < -tol)
        finding(p, h, "a right turn (not convex, or clockwise)", static_cast<double>(cross),
                static_cast<double>(tol));
    }
    Real const area = area_of(v), perimeter = perimeter_of(v);
    // Counter-clockwise as a whole; with the right turns refused above, a polygon that winds
    // twice has twice the area of the brute force and fails below.
    if (area < -d * perimeter)
      finding(p, h, "clockwise", static_cast<double>(area), d * perimeter);
    // The area never grows: the new vertices lie on edges of the old polygon, up to the
    // rounding of one clip.
    Real const grow_tol = 2 * 16 * eps * X * perimeter_before;
    if (area > area_before + grow_tol)
      finding(p, h, "the area grew", static_cast<double>(area - area_before),
              static_cast<double>(grow_tol));
    // The area of the brute force: every vertex within delta of its exact place changes the
    // area by at most delta times the perimeter (the original one bounds every later one),
    // twice over for the two polygons' roundings.
    Real const exact_area = area_of(exact);
    Real const tol = 2 * d * perimeter0 + 4 * Real(d) * d * n;
    if (std::fabs(area - exact_area) > tol)
      finding(p, h, "the area differs from the brute force", static_cast<double>(area - exact_area),
              static_cast<double>(tol));
    // integrals(): a fan of triangles from the first vertex in double; each product is of the
    // polygon's extent D, so the area is within n ε D² (a few times) of the long-double
    // shoelace, and the moments (area times the first vertex, plus the fan) within that times
    // D + X.
    double a = 0, mx = 0, my = 0;
    p.integrals(a, mx, my);
    Real lx = 0, ly = 0; // about the first vertex, then moved to the origin
    for (int k = 1; k + 1 < n; ++k) {
      Real const qx = v[k].x - v[0].x, qy = v[k].y - v[0].y;
      Real const rx = v[k + 1].x - v[0].x, ry = v[k + 1].y - v[0].y;
      Real const cross = qx * ry - rx * qy;
      lx += (qx + rx) * cross;
      ly += (qy + ry) * cross;
    }
    lx = lx / 6 + area * v[0].x;
    ly = ly / 6 + area * v[0].y;
    Real const extent = std::hypot(Real(xmax) - xmin, Real(ymax) - ymin);
    Real const fan_tol = 8 * (n + 1) * eps * extent * extent;
    Real const expected_area = std::max(area, Real(0));
    if (std::fabs(a - expected_area) > fan_tol + (area < 0 ? -area : 0))
      finding(p, h, "integrals(): area differs from the shoelace formula",
              static_cast<double>(a - expected_area), static_cast<double>(fan_tol));
    if (a > 0) {
      Real const moment_tol = fan_tol * (extent + X) + std::fabs(area) * 4 * eps * X;
      if (std::fabs(mx - lx) > moment_tol || std::fabs(my - ly) > moment_tol)
        finding(p, h, "integrals(): moments differ from the shoelace formula",
                static_cast<double>(std::max(std::fabs(mx - lx), std::fabs(my - ly))),
                static_cast<double>(moment_tol));
    }
  }

  /// Applies `h` and checks the result; false when nothing more can follow (emptied).
  bool step(HostPolygon& host, HalfPlane const& h) {
    // A normal of no length (an edge of no length), or one too large or small for its
    // products with the coordinates to stay normal doubles, is no half-plane.
    double const na = std::hypot(h.ax, h.ay);
    if (!std::isfinite(h.b) || !(na >= 0x1p-400) || !(na <= 0x1p400))
      return true;
    Polygon& p = host.polygon;
    Snapshot const before(p);
    std::vector<Point> const before_points = points_of(p);
    Real const area_before = area_of(before_points);
    Real const perimeter_before = perimeter_of(before_points);
    bool const reach = p.may_reach(h.ax, h.ay, h.b);
    int const label = static_cast<int>(planes.size());
    // The general pass on a copy, for the differential check.
    HostPolygon copy(capacity);
    for (int k = 0; k < p.size; ++k)
      copy.polygon.push(p.x(k), p.y(k), p.label(k));

    ClipResult const result = p.clip(h.ax, h.ay, h.b, label);
    if (verbose())
      std::fprintf(stderr, "clip %zu: %.17g x + %.17g y <= %.17g: %d, %d -> %d vertices\n",
                   planes.size(), h.ax, h.ay, h.b, static_cast<int>(result), before.size(), p.size);
    int outside = 0;
    for (int k = 0; k < before.size(); ++k)
      outside += h.ax * before.x[k] + h.ay * before.y[k] > h.b;
    if (!reach && result != ClipResult::unchanged)
      finding(p, h, "may_reach() is false, yet the clip changed the polygon", 0, 0);
    switch (result) {
    case ClipResult::unchanged:
    case ClipResult::overflow: {
      Snapshot const after(p);
      if (!after.same_cycle_as(before, false) || after.current != before.current ||
          after.xmin != before.xmin || after.xmax != before.xmax || after.ymin != before.ymin ||
          after.ymax != before.ymax || after.max_radius2 != before.max_radius2)
        finding(p, h, "unchanged or overflow, yet the polygon changed", 0, 0);
      if (result == ClipResult::unchanged && outside != 0)
        finding(p, h, "unchanged, yet a vertex is outside", outside, 0);
      if (result == ClipResult::overflow) {
        if (outside == 0 || outside == before.size())
          finding(p, h, "overflow on a clip that keeps or empties the polygon", outside, 0);
        if (copy.polygon.clip_general(h.ax, h.ay, h.b, label) != ClipResult::overflow)
          finding(p, h, "overflow, but the general pass fits", capacity, 0);
        return true; // the half-plane is not applied
      }
      apply(h);
      return true;
    }
    case ClipResult::emptied: {
      apply(h);
      if (p.size != 0 || p.max_radius2 != 0)
        finding(p, h, "emptied, yet vertices are left", p.size, 0);
      if (outside != before.size())
        finding(p, h, "emptied, yet a vertex was inside", before.size() - outside, 0);
      // The exact clip has at most a sliver of what rounding decided.
      Real const exact_area = area_of(exact);
      Real const tol = 2 * delta() * perimeter0;
      if (exact_area > tol)
        finding(p, h, "emptied, but the brute force keeps an area", static_cast<double>(exact_area),
                static_cast<double>(tol));
      return false;
    }
    case ClipResult::clipped:
      break;
    default:
      finding(p, h, "unknown result", static_cast<int>(result), 0);
    }
    apply(h);
    ++clips;
    if (outside == 0 || outside == before.size())
      finding(p, h, "clipped, yet no vertex or every vertex was outside", outside, 0);
    if (p.size < 1 || p.size > capacity)
      finding(p, h, "size out of [1, capacity]", p.size, capacity);
    // The fast path and the general pass make the same polygon.
    if (copy.polygon.clip_general(h.ax, h.ay, h.b, label) != ClipResult::clipped ||
        !Snapshot(p).same_cycle_as(Snapshot(copy.polygon), true))
      finding(p, h, "the fast path and the general pass differ", copy.polygon.size, p.size);
    check_geometry(p, h, before, area_before, perimeter_before);
    return true;
  }
};

/// 2^e times a value in [1, 2).
double scaled(FuzzedDataProvider& in, int lo, int hi) {
  return std::ldexp(1 + in.ConsumeProbability<double>(), in.ConsumeIntegralInRange(lo, hi));
}

/// A unit direction: one of the eight multiples of 45 degrees exactly, or any angle.
std::array<double, 2> direction(FuzzedDataProvider& in) {
  auto const code = in.ConsumeIntegral<std::uint16_t>();
  if (code < 8 * 256) {
    static constexpr double r = 0.70710678118654752440;
    static constexpr double d[8][2] = {{1, 0},  {r, r},   {0, 1},  {-r, r},
                                       {-1, 0}, {-r, -r}, {0, -1}, {r, -r}};
    return {d[code % 8][0], d[code % 8][1]};
  }
  double const angle = 2 * pi * (code / 65536.0);
  return {std::cos(angle), std::sin(angle)};
}

/// A normal: a direction times 2^e, e in [-300, 300].
std::array<double, 2> normal(FuzzedDataProvider& in) {
  auto const u = direction(in);
  int const e = in.ConsumeIntegralInRange(-300, 300);
  return {std::ldexp(u[0], e), std::ldexp(u[1], e)};
}

} // namespace

extern "C" int LLVMFuzzerTestOneInput(std::uint8_t const* data, std::size_t size) {
  FuzzedDataProvider in(data, size);
  Fuzz f;
  // The original polygon: its size s, and its centre up to 2^32 sizes from the origin.
  double const s = scaled(in, -40, 40);
  double const cx =
      s * in.ConsumeIntegralInRange(-4, 4) * std::ldexp(1.0, in.ConsumeIntegralInRange(0, 30));
  double const cy =
      s * in.ConsumeIntegralInRange(-4, 4) * std::ldexp(1.0, in.ConsumeIntegralInRange(0, 30));
  switch (in.ConsumeIntegralInRange(0, 2)) {
  case 0: // the square [0, s]² moved
    f.start = {{cx, cy}, {cx + s, cy}, {cx + s, cy + s}, {cx, cy + s}};
    break;
  case 1: { // a box of aspect ratio up to 2^20 either way
    double const h = std::ldexp(s, in.ConsumeIntegralInRange(-20, 20));
    f.start = {{cx - s, cy - h}, {cx + s, cy - h}, {cx + s, cy + h}, {cx - s, cy + h}};
    break;
  }
  default: { // 3 to 100 vertices on a circle, at increasing angles
    int const n = in.ConsumeIntegralInRange(3, 100);
    std::vector<double> angle(n + 1, 0);
    for (int k = 1; k <= n; ++k)
      angle[k] = angle[k - 1] + in.ConsumeIntegralInRange(1, 255);
    for (int k = 0; k < n; ++k) {
      double const t = 2 * pi * angle[k] / angle[n];
      f.start.push_back({cx + s * std::cos(t), cy + s * std::sin(t)});
    }
  }
  }
  int const n0 = static_cast<int>(f.start.size());
  f.capacity = std::max(n0, in.ConsumeIntegralInRange(3, 160));
  for (auto const& v : f.start)
    f.X = std::max({f.X, std::fabs(v[0]), std::fabs(v[1])});
  for (int k = 0; k < n0; ++k)
    f.perimeter0 += std::hypot(f.start[(k + 1) % n0][0] - f.start[k][0],
                               f.start[(k + 1) % n0][1] - f.start[k][1]);
  HostPolygon host(f.capacity);
  Polygon& p = host.polygon;
  for (int k = 0; k < n0; ++k) {
    p.push(f.start[k][0], f.start[k][1], original_label(k));
    f.exact.push_back({f.start[k][0], f.start[k][1]});
  }

  while (in.remaining_bytes() > 0 && f.planes.size() < 300) {
    HalfPlane h{0, 0, 0};
    int const n = p.size;
    int const k = in.ConsumeIntegralInRange(0, n - 1);
    double const vx = p.x(k), vy = p.y(k);
    double const wx = p.x((k + 1) % n), wy = p.y((k + 1) % n);
    int const mode = in.ConsumeIntegralInRange(0, 6);
    switch (mode) {
    case 0: { // any line near the polygon, each component of the normal on its own scale
      h.ax = (in.ConsumeBool() ? 1 : -1) * scaled(in, -300, 300);
      h.ay = (in.ConsumeBool() ? 1 : -1) * scaled(in, -300, 300);
      double const r = 4 * in.ConsumeProbability<double>() - 2;
      h.b = r * (std::fabs(h.ax) + std::fabs(h.ay)) * f.X;
      break;
    }
    case 1: { // through vertex k
      auto const a = normal(in);
      h = {a[0], a[1], a[0] * vx + a[1] * vy};
      break;
    }
    case 2: { // through a point of edge k
      auto const a = normal(in);
      double const t = in.ConsumeProbability<double>();
      double const px = vx + t * (wx - vx), py = vy + t * (wy - vy);
      h = {a[0], a[1], a[0] * px + a[1] * py};
      break;
    }
    case 3: { // nearly parallel to edge k, its outward normal turned by ±2^-m, or inward
      double const phi =
          (in.ConsumeBool() ? 1 : -1) * std::ldexp(1.0, -in.ConsumeIntegralInRange(0, 60));
      double const sign = in.ConsumeBool() ? 1 : -1;
      double const nx = sign * (wy - vy), ny = sign * (vx - wx);
      double const e = std::ldexp(1.0, in.ConsumeIntegralInRange(-300, 300)) / std::hypot(nx, ny);
      h.ax = e * (nx * std::cos(phi) - ny * std::sin(phi));
      h.ay = e * (nx * std::sin(phi) + ny * std::cos(phi));
      double const t = in.ConsumeProbability<double>();
      double const px = vx + t * (wx - vx), py = vy + t * (wy - vy);
      double const shift = in.ConsumeBool() ? 0
                                            : (in.ConsumeBool() ? 1 : -1) *
                                                  std::ldexp(s, -in.ConsumeIntegralInRange(0, 60));
      h.b = h.ax * px + h.ay * py + shift * std::hypot(h.ax, h.ay);
      break;
    }
    case 4:   // tangent to a circle about the vertices' mean: cuts a corner
    case 5: { // the same for m evenly turned directions: up to m more vertices
      double mx = 0, my = 0, r = 0;
      for (int j = 0; j < n; ++j) {
        mx += p.x(j) / n;
        my += p.y(j) / n;
      }
      for (int j = 0; j < n; ++j)
        r = std::max(r, std::hypot(p.x(j) - mx, p.y(j) - my));
      r *= 0.5 + 0.5 * in.ConsumeProbability<double>();
      auto const a = normal(in);
      int const m = mode == 4 ? 1 : in.ConsumeIntegralInRange(2, 120);
      for (int j = 0; j < m; ++j) {
        double const c = std::cos(2 * pi * j / m), sn = std::sin(2 * pi * j / m);
        h = {a[0] * c - a[1] * sn, a[0] * sn + a[1] * c, 0};
        h.b = h.ax * mx + h.ay * my + r * std::hypot(h.ax, h.ay);
        if (j + 1 < m && !f.step(host, h))
          return 0;
      }
      break;
    }
    default: { // an earlier line: the same, reversed, scaled, or moved by a few ulps
      if (f.planes.empty())
        continue;
      h = f.planes[in.ConsumeIntegralInRange<std::size_t>(0, f.planes.size() - 1)];
      switch (in.ConsumeIntegralInRange(0, 3)) {
      case 0:
        break;
      case 1:
        h = {-h.ax, -h.ay, -h.b};
        break;
      case 2: {
        int const e = in.ConsumeIntegralInRange(-8, 8);
        h = {std::ldexp(h.ax, e), std::ldexp(h.ay, e), std::ldexp(h.b, e)};
        break;
      }
      default:
        for (int u = in.ConsumeIntegralInRange(-4, 4); u != 0; u += u > 0 ? -1 : 1)
          h.b = std::nextafter(h.b, u > 0 ? HUGE_VAL : -HUGE_VAL);
      }
    }
    }
    if (!f.step(host, h))
      break;
  }
  return 0;
}
