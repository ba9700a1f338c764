#include <sdot/half_spaces.hpp>

#include <algorithm>
#include <cmath>
#include <limits>
#include <sstream>
#include <stdexcept>

namespace sdot {

std::vector<HalfSpace> box_half_spaces(std::array<double, 2> lo, std::array<double, 2> hi) {
  for (int d = 0; d < 2; ++d) {
    if (!std::isfinite(lo[d]) || !std::isfinite(hi[d]) || !(lo[d] < hi[d])) {
      std::ostringstream msg;
      msg << "sdot::box_half_spaces: axis " << d << " has bounds [" << lo[d] << ", " << hi[d]
          << "]: they must be finite with lo < hi";
      throw std::invalid_argument(msg.str());
    }
  }
  return {HalfSpace{{-1, 0}, -lo[0]}, HalfSpace{{0, -1}, -lo[1]}, HalfSpace{{1, 0}, hi[0]},
          HalfSpace{{0, 1}, hi[1]}};
}

namespace {

using Point = std::array<double, 2>;

// Intersection of the lines of two half-spaces (Cramer's rule); false when parallel.
bool line_intersection(HalfSpace const& a, HalfSpace const& b, Point& p) {
  double det = a.normal[0] * b.normal[1] - a.normal[1] * b.normal[0];
  if (det == 0)
    return false;
  p = {(a.offset * b.normal[1] - a.normal[1] * b.offset) / det,
       (a.normal[0] * b.offset - a.offset * b.normal[0]) / det};
  return true;
}

// Every half-space has a finite, non-zero normal and a finite offset.
void check_half_spaces(std::vector<HalfSpace> const& half_spaces) {
  for (std::size_t h = 0; h < half_spaces.size(); ++h) {
    auto const& hs = half_spaces[h];
    if (!std::isfinite(hs.normal[0]) || !std::isfinite(hs.normal[1]) || !std::isfinite(hs.offset) ||
        (hs.normal[0] == 0 && hs.normal[1] == 0)) {
      std::ostringstream msg;
      msg << "sdot: boundary half-space " << h << " (normal (" << hs.normal[0] << ", "
          << hs.normal[1] << "), offset " << hs.offset
          << ") is invalid: it needs a finite, non-zero normal and a finite offset";
      throw std::invalid_argument(msg.str());
    }
  }
}

// Bounded iff the normals leave no angular gap of π or more.
void check_bounded(std::vector<HalfSpace> const& half_spaces) {
  int const n = static_cast<int>(half_spaces.size());
  std::vector<double> angles;
  for (auto const& hs : half_spaces)
    angles.push_back(std::atan2(hs.normal[1], hs.normal[0]));
  std::sort(angles.begin(), angles.end());
  double const pi = std::acos(-1.0);
  bool bounded = n >= 3;
  for (int k = 0; bounded && k < n; ++k) {
    double gap = k + 1 < n ? angles[k + 1] - angles[k] : angles[0] + 2 * pi - angles[k];
    if (gap >= pi * (1 - 1e-12))
      bounded = false;
  }
  if (!bounded) {
    std::ostringstream msg;
    msg << "sdot: the domain given by " << n
        << " boundary half-spaces is unbounded: their normals must surround the origin "
           "(at least 3, no angular gap of 180 degrees or more)";
    throw std::invalid_argument(msg.str());
  }
}

// The bounding box {xmin, xmax, ymin, ymax} of the corners of a bounded polygon: the pairwise
// intersections of the half-spaces' lines that every half-space keeps. Throws when there is
// none (an empty domain).
std::array<double, 4> corners_box(std::vector<HalfSpace> const& half_spaces) {
  int const n = static_cast<int>(half_spaces.size());
  double xmin = std::numeric_limits<double>::infinity(), xmax = -xmin, ymin = xmin, ymax = -xmin;
  bool feasible_corner = false;
  for (int a = 0; a < n; ++a)
    for (int b = a + 1; b < n; ++b) {
      Point p;
      if (!line_intersection(half_spaces[a], half_spaces[b], p) || !std::isfinite(p[0]) ||
          !std::isfinite(p[1]))
        continue;
      bool kept = true;
      for (auto const& hs : half_spaces) {
        double scale =
            std::hypot(hs.normal[0], hs.normal[1]) * std::hypot(p[0], p[1]) + std::abs(hs.offset);
        kept = kept && hs.normal[0] * p[0] + hs.normal[1] * p[1] - hs.offset <= 1e-9 * scale;
      }
      if (kept) {
        feasible_corner = true;
        xmin = std::min(xmin, p[0]);
        xmax = std::max(xmax, p[0]);
        ymin = std::min(ymin, p[1]);
        ymax = std::max(ymax, p[1]);
      }
    }
  if (!feasible_corner) {
    std::ostringstream msg;
    msg << "sdot: the domain given by " << n << " boundary half-spaces is empty";
    throw std::invalid_argument(msg.str());
  }
  return {xmin, xmax, ymin, ymax};
}

// A square about `box`, clipped by each half-space in turn: its vertices, and the half-space
// whose line each edge follows (label[k]: the edge from vertex k; −1, the square's own).
// Sized from the corners, not from the origin: a square much larger than the domain would
// leave its vertices only to round-off of the square's size.
void clip_square(std::array<double, 4> const& box, std::vector<HalfSpace> const& half_spaces,
                 std::vector<Point>& poly, std::vector<int>& label) {
  double const cx = (box[0] + box[1]) / 2, cy = (box[2] + box[3]) / 2;
  double const half =
      std::max(box[1] - box[0], box[3] - box[2]) + 1e-12 * (std::abs(cx) + std::abs(cy));
  poly = {{cx - half, cy - half},
          {cx + half, cy - half},
          {cx + half, cy + half},
          {cx - half, cy + half}};
  label = {-1, -1, -1, -1};
  int const n = static_cast<int>(half_spaces.size());
  for (int h = 0; h < n && !poly.empty(); ++h) {
    auto const& hs = half_spaces[h];
    auto side = [&](Point const& p) {
      return hs.normal[0] * p[0] + hs.normal[1] * p[1] - hs.offset;
    };
    std::vector<Point> out;
    std::vector<int> out_label;
    std::size_t m = poly.size();
    for (std::size_t k = 0; k < m; ++k) {
      Point const& p = poly[k];
      Point const& q = poly[(k + 1) % m];
      double sp = side(p), sq = side(q);
      if (sp <= 0) {
        out.push_back(p);
        out_label.push_back(label[k]);
      }
      if ((sp < 0 && sq > 0) || (sp > 0 && sq < 0)) {
        double t = sp / (sp - sq);
        out.push_back({p[0] + t * (q[0] - p[0]), p[1] + t * (q[1] - p[1])});
        out_label.push_back(sp < 0 ? h : label[k]);
      } else if (sp == 0 && sq > 0) {
        out_label.back() = h; // p is on the line: the edge leaving it follows the line
      }
    }
    poly.swap(out);
    label.swap(out_label);
  }
}

// The area of a polygon, relative to its first vertex: exact to round-off of the polygon's
// size wherever it lies (products of absolute coordinates would lose it far from the origin).
double polygon_area(std::vector<Point> const& vertices) {
  double area = 0;
  std::size_t const nv = vertices.size();
  for (std::size_t k = 1; k + 1 < nv; ++k) {
    auto const& o = vertices[0];
    auto const& p = vertices[k];
    auto const& q = vertices[k + 1];
    area += (p[0] - o[0]) * (q[1] - o[1]) - (p[1] - o[1]) * (q[0] - o[0]);
  }
  return area / 2;
}

// The domain's bounding box, checked against the widths double precision can compute.
void set_extent(DomainPolygon& domain) {
  domain.lo = domain.hi = domain.vertices[0];
  for (auto const& p : domain.vertices)
    for (int d = 0; d < 2; ++d) {
      domain.lo[d] = std::min(domain.lo[d], p[d]);
      domain.hi[d] = std::max(domain.hi[d], p[d]);
    }
  for (int d = 0; d < 2; ++d) {
    double const width = domain.hi[d] - domain.lo[d];
    if (!(width <= 2 * coordinate_limit && width >= smallest_domain_width)) {
      std::ostringstream msg;
      msg << "sdot: the domain spans [" << domain.lo[d] << ", " << domain.hi[d] << "] on axis " << d
          << ": its width must lie between " << smallest_domain_width
          << " (sdot::smallest_domain_width) and 2 x " << coordinate_limit
          << " (sdot::coordinate_limit), within what double precision can compute";
      throw std::invalid_argument(msg.str());
    }
  }
}

} // namespace

DomainPolygon domain_polygon(std::vector<HalfSpace> const& half_spaces) {
  check_half_spaces(half_spaces);
  check_bounded(half_spaces);
  std::vector<Point> poly;
  std::vector<int> label;
  clip_square(corners_box(half_spaces), half_spaces, poly, label);
  // Snap each vertex to the exact intersection of its two edges' lines.
  DomainPolygon domain;
  std::size_t const m = poly.size();
  for (std::size_t k = 0; k < m; ++k) {
    int before = label[(k + m - 1) % m], after = label[k];
    if (before == after)
      continue; // a vertex in the middle of an edge (from a redundant clip)
    Point p = poly[k];
    if (before >= 0 && after >= 0)
      line_intersection(half_spaces[before], half_spaces[after], p);
    domain.vertices.push_back(p);
    domain.edge_half_space.push_back(after);
  }
  double const area = polygon_area(domain.vertices);
  bool const touches_frame = std::find(domain.edge_half_space.begin(), domain.edge_half_space.end(),
                                       -1) != domain.edge_half_space.end();
  if (domain.vertices.size() < 3 || !(area > 0) || touches_frame) {
    std::ostringstream msg;
    msg << "sdot: the domain given by " << half_spaces.size()
        << " boundary half-spaces is empty (area " << area << ")";
    throw std::invalid_argument(msg.str());
  }
  domain.area = area;
  set_extent(domain);
  return domain;
}

} // namespace sdot
