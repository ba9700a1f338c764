// CGAL's power cells (cgal_areas.hpp). No Kokkos here: in a CUDA build this file is compiled
// by the host compiler alone (nvcc's front end rejects Boost.Multiprecision's constants).
#include "cgal_areas.hpp"

#include <CGAL/Exact_predicates_inexact_constructions_kernel.h>
#include <CGAL/Regular_triangulation_2.h>
#include <CGAL/Regular_triangulation_face_base_2.h>
#include <CGAL/Regular_triangulation_vertex_base_2.h>
#include <CGAL/Triangulation_face_base_with_info_2.h>
#include <CGAL/Triangulation_vertex_base_with_info_2.h>

#include <cstddef>
#include <utility>

namespace sdot_bench {
namespace {

using K = CGAL::Exact_predicates_inexact_constructions_kernel;
using VertexBase =
    CGAL::Triangulation_vertex_base_with_info_2<int, K,
                                                CGAL::Regular_triangulation_vertex_base_2<K>>;
using FaceBase =
    CGAL::Triangulation_face_base_with_info_2<int, K, CGAL::Regular_triangulation_face_base_2<K>>;
using Regular =
    CGAL::Regular_triangulation_2<K, CGAL::Triangulation_data_structure_2<VertexBase, FaceBase>>;
using WeightedPoint = Regular::Weighted_point;

/// A small polygon clipped by half-planes a·x ≤ b (Sutherland–Hodgman).
struct Clipper {
  std::vector<std::array<double, 2>> p, q;

  void clip(double ax, double ay, double b) {
    q.clear();
    std::size_t const n = p.size();
    for (std::size_t k = 0; k < n; ++k) {
      auto const& s = p[(k + n - 1) % n];
      auto const& e = p[k];
      double const fs = ax * s[0] + ay * s[1] - b, fe = ax * e[0] + ay * e[1] - b;
      if ((fs < 0 && fe > 0) || (fs > 0 && fe < 0)) {
        double const t = fs / (fs - fe);
        q.push_back({s[0] + t * (e[0] - s[0]), s[1] + t * (e[1] - s[1])});
      }
      if (fe <= 0)
        q.push_back(e);
    }
    std::swap(p, q);
  }
  void clip_by_unit_square() {
    clip(-1, 0, 0);
    clip(1, 0, 1);
    clip(0, -1, 0);
    clip(0, 1, 1);
  }
  double area() const {
    double a = 0;
    for (std::size_t k = 0; k < p.size(); ++k) {
      auto const& s = p[k];
      auto const& e = p[(k + 1) % p.size()];
      a += s[0] * e[1] - e[0] * s[1];
    }
    return a / 2;
  }
};

} // namespace

std::vector<double> cgal_areas(std::vector<std::array<double, 2>> const& x,
                               std::vector<double> const& w) {
  std::size_t const n = x.size();
  std::vector<std::pair<WeightedPoint, int>> points;
  points.reserve(n);
  for (std::size_t i = 0; i < n; ++i)
    points.emplace_back(WeightedPoint(K::Point_2(x[i][0], x[i][1]), w[i]), int(i));
  Regular rt;
  rt.insert(points.begin(), points.end());

  std::vector<std::array<double, 2>> centres;
  centres.reserve(2 * n);
  for (auto f = rt.finite_faces_begin(); f != rt.finite_faces_end(); ++f) {
    f->info() = int(centres.size());
    auto const c = rt.weighted_circumcenter(f);
    centres.push_back({c.x(), c.y()});
  }

  std::vector<double> areas(n, 0.0);
  Clipper cell;
  for (auto v = rt.finite_vertices_begin(); v != rt.finite_vertices_end(); ++v) {
    cell.p.clear();
    bool on_hull = false;
    auto f = rt.incident_faces(v), end = f;
    do {
      if (rt.is_infinite(f)) {
        on_hull = true;
        break;
      }
      cell.p.push_back(centres[f->info()]);
    } while (++f != end);
    if (on_hull) {
      // Unbounded cell: the square, clipped by the bisector of each neighbour.
      double const vx = v->point().x(), vy = v->point().y(), vw = v->point().weight();
      cell.p = {{0, 0}, {1, 0}, {1, 1}, {0, 1}};
      auto u = rt.incident_vertices(v), u_end = u;
      do {
        if (rt.is_infinite(u))
          continue;
        double const ux = u->point().x(), uy = u->point().y(), uw = u->point().weight();
        cell.clip(2 * (ux - vx), 2 * (uy - vy), ux * ux + uy * uy - uw - (vx * vx + vy * vy - vw));
      } while (++u != u_end);
    } else {
      cell.clip_by_unit_square();
    }
    areas[v->info()] = cell.area();
  }
  return areas;
}

} // namespace sdot_bench
