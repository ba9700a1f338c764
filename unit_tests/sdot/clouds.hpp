#pragma once
// Point clouds of the tests (host vectors), their conversion to Views, and their measures by
// the library.

#include <sdot/power_diagram.hpp>

#include <Kokkos_Core.hpp>

#include <array>
#include <cmath>
#include <random>
#include <stdexcept>
#include <string>
#include <vector>

namespace sdot_test {

struct Cloud {
  std::vector<std::array<double, 2>> x;
  std::vector<double> w;
};

inline Cloud uniform_cloud(int n, double max_weight, unsigned seed, double lo = 0, double hi = 1) {
  std::mt19937_64 rng(seed);
  std::uniform_real_distribution<double> u(lo, hi), uw(0, max_weight);
  Cloud c;
  for (int i = 0; i < n; ++i) {
    double px = u(rng), py = u(rng);
    c.x.push_back({px, py});
    c.w.push_back(max_weight > 0 ? uw(rng) : 0.0);
  }
  return c;
}

/// Most seeds in a few tight Gaussian clusters, the rest uniform. Cluster seeds outside the
/// unit square are clamped onto its sides; those clamped onto a corner (both coordinates) step
/// into the square along its diagonal, 1e-9 further each, so that no two seeds coincide.
inline Cloud clustered_cloud(int n, unsigned seed) {
  std::mt19937_64 rng(seed);
  std::uniform_real_distribution<double> u(0, 1);
  std::normal_distribution<double> g(0, 0.02);
  std::array<std::array<double, 2>, 3> centres = {{{0.2, 0.3}, {0.7, 0.75}, {0.05, 0.95}}};
  Cloud c;
  int at_corners = 0;
  for (int i = 0; i < n; ++i) {
    if (i % 5 == 4) {
      c.x.push_back({u(rng), u(rng)});
    } else {
      auto const& m = centres[i % 3];
      double px = std::fmin(1, std::fmax(0, m[0] + g(rng)));
      double py = std::fmin(1, std::fmax(0, m[1] + g(rng)));
      if ((px == 0 || px == 1) && (py == 0 || py == 1)) {
        double const step = 1e-9 * ++at_corners;
        px += px == 0 ? step : -step;
        py += py == 0 ? step : -step;
      }
      c.x.push_back({px, py});
    }
    c.w.push_back(0.1 * u(rng) / n);
  }
  return c;
}

/// Seeds that fill only part of the domain, weights U[0, 0.1/N]:
/// "corner": uniform in [0, 0.1]²; "band": a diagonal band of width 1e-3 (y = x ± 5e-4);
/// "line": nearly collinear seeds, y = 0.5 ± 5e-10; "clusters": two small clusters far apart,
/// half in [0, 0.1]², half in [0.9, 0.95] × [0.45, 0.5] (most of the domain empty, the cells of
/// both hulls reaching across it).
inline Cloud partial_cloud(std::string const& kind, int n, unsigned seed) {
  std::mt19937_64 rng(seed);
  std::uniform_real_distribution<double> u(0, 1);
  Cloud c;
  for (int i = 0; i < n; ++i) {
    double const a = u(rng), b = u(rng) - 0.5;
    if (kind == "corner")
      c.x.push_back({0.1 * a, 0.1 * (b + 0.5)});
    else if (kind == "band")
      c.x.push_back({a, std::fmin(1, std::fmax(0, a + 1e-3 * b))});
    else if (kind == "line")
      c.x.push_back({a, 0.5 + 1e-9 * b});
    else if (kind == "clusters")
      c.x.push_back(2 * i < n ? std::array<double, 2>{0.1 * a, 0.1 * (b + 0.5)}
                              : std::array<double, 2>{0.9 + 0.05 * a, 0.45 + 0.05 * (b + 0.5)});
    else
      throw std::invalid_argument("partial_cloud: unknown kind '" + kind + "'");
    c.w.push_back(0.1 * u(rng) / n);
  }
  return c;
}

/// k × k seeds at the centres of a regular grid of the unit square: every cell a square, four
/// co-circular seeds at every inner vertex.
inline Cloud lattice_cloud(int k) {
  Cloud c;
  for (int j = 0; j < k; ++j)
    for (int i = 0; i < k; ++i) {
      c.x.push_back({(i + 0.5) / k, (j + 0.5) / k});
      c.w.push_back(0);
    }
  return c;
}

/// The cloud with weights spread over 60/N with a smooth trend across the domain (as an
/// optimal transport gives).
inline Cloud with_spread_weights(Cloud c) {
  double const n = double(c.x.size());
  for (std::size_t i = 0; i < c.w.size(); ++i)
    c.w[i] = 60 / n * std::sin(6 * c.x[i][0] + 2 * c.x[i][1]);
  return c;
}

/// Weights that move the cells far from their seeds, as optimal transport's do:
/// w = −β |x − c|² + 2 a·x + noise makes the diagram that of the seeds c + (1 + β)(x − c) + a
/// at the noise's weights: a cluster around c spreads its cells over the domain, seeds far
/// from c get empty cells (their images leave the domain), and the weights span hundreds of
/// squared spacings.
inline Cloud with_displacing_weights(Cloud c, std::array<double, 2> centre, double beta,
                                     std::array<double, 2> shift, unsigned seed) {
  std::mt19937_64 rng(seed);
  double const n = double(c.x.size());
  std::uniform_real_distribution<double> noise(0, 0.1 / n);
  for (std::size_t i = 0; i < c.w.size(); ++i) {
    double const dx = c.x[i][0] - centre[0], dy = c.x[i][1] - centre[1];
    c.w[i] = -beta * (dx * dx + dy * dy) + 2 * (shift[0] * c.x[i][0] + shift[1] * c.x[i][1]) +
             noise(rng);
  }
  return c;
}

/// clustered_cloud's seeds at weights that spread its first cluster (around (0.2, 0.3)) over
/// the domain, with_displacing_weights (β = 9, shift (0.1, −0.05)).
inline Cloud displaced_cells_cloud(int n, unsigned seed) {
  return with_displacing_weights(clustered_cloud(n, seed), {0.2, 0.3}, 9, {0.1, -0.05}, seed);
}

/// The seeds of `c` moved by up to `step` along a smooth field (a time step of a Lagrangian
/// scheme; `phase` turns the field) that vanishes on the unit square's sides: no seed leaves
/// the square or lands on a side.
inline Cloud moved_along_field(Cloud c, double step, int phase) {
  double const pi = 3.141592653589793;
  for (auto& x : c.x) {
    double const vx = std::sin(pi * x[0]) * std::sin(3 * x[1] + phase);
    double const vy = std::sin(pi * x[1]) * std::cos(2 * x[0] + phase);
    x[0] += step * vx;
    x[1] += step * vy;
  }
  return c;
}

template <class MemorySpace = Kokkos::DefaultExecutionSpace::memory_space>
sdot::Points<MemorySpace> positions_view(Cloud const& c) {
  sdot::Points<MemorySpace> v("test::positions", c.x.size());
  auto h = Kokkos::create_mirror_view(v);
  for (std::size_t i = 0; i < c.x.size(); ++i) {
    h(i, 0) = c.x[i][0];
    h(i, 1) = c.x[i][1];
  }
  Kokkos::deep_copy(v, h);
  return v;
}

template <class MemorySpace = Kokkos::DefaultExecutionSpace::memory_space>
Kokkos::View<double*, MemorySpace> weights_view(Cloud const& c) {
  Kokkos::View<double*, MemorySpace> v("test::weights", c.w.size());
  auto h = Kokkos::create_mirror_view(v);
  for (std::size_t i = 0; i < c.w.size(); ++i)
    h(i) = c.w[i];
  Kokkos::deep_copy(v, h);
  return v;
}

template <class View>
std::vector<typename View::non_const_value_type> to_vector(View v) {
  auto h = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), v);
  return std::vector<typename View::non_const_value_type>(h.data(), h.data() + h.size());
}

/// The positions as the rows of an [N, 2] array: x0, y0, x1, y1, ...
inline std::vector<double> flat_positions(Cloud const& c) {
  std::vector<double> p;
  for (auto const& x : c.x)
    p.insert(p.end(), {x[0], x[1]});
  return p;
}

/// The measures of the cells of `c`'s positions at the weights `w`, by the library.
inline std::vector<double> measures_at(Cloud const& c, std::vector<double> const& w,
                                       std::vector<sdot::HalfSpace> const& hs,
                                       sdot::PowerDiagramOptions options = {}) {
  Cloud d = c;
  d.w = w;
  sdot::PowerDiagram<> pd(positions_view(d), weights_view(d), hs, options);
  return to_vector(pd.measures());
}

} // namespace sdot_test
