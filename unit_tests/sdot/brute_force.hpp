#pragma once
// Independent reference for the tests: every cell clipped by every bisector, O(N²), on the
// host in long double, in absolute coordinates, with a domain built from its half-spaces by
// its own code.

#include <sdot/half_spaces.hpp>

#include <array>
#include <cmath>
#include <random>
#include <vector>

namespace sdot_test {

using Real = long double;
struct Vertex {
  Real x, y;
};

// Keeps { p : a·p ≤ b } of a convex polygon.
inline std::vector<Vertex> clip(std::vector<Vertex> const& poly, Real ax, Real ay, Real b) {
  std::vector<Vertex> out;
  std::size_t n = poly.size();
  for (std::size_t k = 0; k < n; ++k) {
    Vertex p = poly[k], q = poly[(k + 1) % n];
    Real sp = ax * p.x + ay * p.y - b, sq = ax * q.x + ay * q.y - b;
    if (sp <= 0)
      out.push_back(p);
    if ((sp < 0 && sq > 0) || (sp > 0 && sq < 0)) {
      Real t = sp / (sp - sq);
      out.push_back({p.x + t * (q.x - p.x), p.y + t * (q.y - p.y)});
    }
  }
  return out;
}

inline Real area(std::vector<Vertex> const& poly) {
  Real a = 0;
  for (std::size_t k = 0; k < poly.size(); ++k) {
    auto const& p = poly[k];
    auto const& q = poly[(k + 1) % poly.size()];
    a += p.x * q.y - p.y * q.x;
  }
  return a / 2;
}

inline std::vector<Vertex> domain(std::vector<sdot::HalfSpace> const& half_spaces) {
  Real const big = 1e6;
  std::vector<Vertex> poly = {{-big, -big}, {big, -big}, {big, big}, {-big, big}};
  for (auto const& h : half_spaces)
    poly = clip(poly, h.normal[0], h.normal[1], h.offset);
  return poly;
}

struct Reference {
  std::vector<double> measures;
  std::vector<std::array<double, 2>> centroids;
};

inline Reference brute_force(std::vector<std::array<double, 2>> const& x,
                             std::vector<double> const& w,
                             std::vector<sdot::HalfSpace> const& half_spaces) {
  auto const dom = domain(half_spaces);
  Reference ref;
  std::size_t n = x.size();
  for (std::size_t i = 0; i < n; ++i) {
    auto cell = dom;
    for (std::size_t j = 0; j < n && !cell.empty(); ++j) {
      if (j == i)
        continue;
      Real xi = x[i][0], yi = x[i][1], xj = x[j][0], yj = x[j][1];
      if (xi == xj && yi == yj && w[i] == w[j]) {
        if (j < i)
          cell.clear();
        continue;
      }
      // |p − xi|² − wi ≤ |p − xj|² − wj  ⟺  2 p·(xj − xi) ≤ |xj|² − |xi|² + wi − wj
      cell = clip(cell, 2 * (xj - xi), 2 * (yj - yi),
                  xj * xj + yj * yj - xi * xi - yi * yi + Real(w[i]) - Real(w[j]));
    }
    // Integrals relative to the first vertex: absolute coordinates far from the origin would
    // cancel catastrophically.
    Real a = 0, mx = 0, my = 0;
    for (std::size_t k = 0; cell.size() >= 3 && k < cell.size(); ++k) {
      Vertex p = cell[k], q = cell[(k + 1) % cell.size()];
      p.x -= cell[0].x, p.y -= cell[0].y, q.x -= cell[0].x, q.y -= cell[0].y;
      Real c = p.x * q.y - p.y * q.x;
      a += c;
      mx += (p.x + q.x) * c;
      my += (p.y + q.y) * c;
    }
    a /= 2;
    if (a > 0) {
      mx = cell[0].x + mx / (6 * a);
      my = cell[0].y + my / (6 * a);
    }
    ref.measures.push_back(static_cast<double>(a));
    ref.centroids.push_back(a > 0 ? std::array<double, 2>{double(mx), double(my)} : x[i]);
  }
  return ref;
}

} // namespace sdot_test
