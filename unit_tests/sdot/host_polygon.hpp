#pragma once
// A cell polygon (detail::Polygon) with host storage, for the clipper's tests and its fuzzer.
#include <sdot/geometry/polygon.hpp>

#include <array>
#include <cstddef>
#include <vector>

namespace sdot_test {

/// A polygon with heap storage of exactly `capacity` vertices per buffer (AddressSanitizer
/// sees a write past it). Not copyable: the polygon points into the buffers.
struct HostPolygon {
  std::array<std::vector<double>, 2> x, y;
  std::array<std::vector<int>, 2> labels;
  sdot::detail::Polygon polygon;

  explicit HostPolygon(int capacity) {
    for (int b = 0; b < 2; ++b) {
      x[b].assign(capacity, 0);
      y[b].assign(capacity, 0);
      labels[b].assign(capacity, 0);
    }
    polygon = sdot::detail::Polygon{{{x[0].data(), y[0].data(), labels[0].data()},
                                     {x[1].data(), y[1].data(), labels[1].data()}},
                                    0,
                                    0,
                                    capacity,
                                    0};
  }

  /// The polygon of `vertices`, labelled −1, −2, … (edges of the domain).
  HostPolygon(int capacity, std::vector<std::array<double, 2>> const& vertices)
      : HostPolygon(capacity) {
    for (std::size_t k = 0; k < vertices.size(); ++k)
      polygon.push(vertices[k][0], vertices[k][1], -1 - static_cast<int>(k));
  }

  /// Edges labelled `label`.
  int edges_labelled(int label) const {
    int count = 0;
    for (int k = 0; k < polygon.size; ++k)
      count += polygon.label(k) == label;
    return count;
  }

  double area() const {
    double a, mx, my;
    polygon.integrals(a, mx, my);
    return a;
  }

  HostPolygon(HostPolygon const&) = delete;
  HostPolygon& operator=(HostPolygon const&) = delete;
};

} // namespace sdot_test
