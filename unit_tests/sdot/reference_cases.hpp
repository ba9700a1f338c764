#pragma once
// The reference cases of the power-diagram tests, as data: every distributed configuration
// is checked on each of them.

#include "clouds.hpp"

#include <sdot/half_spaces.hpp>

#include <cmath>
#include <random>
#include <string>
#include <vector>

namespace sdot_test {

struct ReferenceCase {
  std::string name;
  Cloud cloud;
  std::vector<sdot::HalfSpace> domain;
};

inline std::vector<sdot::HalfSpace> triangle_domain() {
  return {{{0, -1}, 0}, {{0.9, 0.7}, 0.9}, {{-0.9, 0.3}, 0}}; // (0,0), (1,0), (0.3,0.9)
}

inline std::vector<sdot::HalfSpace> hexagon_domain() {
  std::vector<sdot::HalfSpace> h;
  double const pi = std::acos(-1.0);
  for (int k = 0; k < 6; ++k)
    h.push_back({{std::cos(k * pi / 3), std::sin(k * pi / 3)}, 0.95});
  return h;
}

/// Uniform, weighted, many empty cells, clusters, cells far from their seeds, a lattice, seeds outside, negative weights,
/// a triangle and a hexagon, 0, 1 and 2 seeds, duplicates.
inline std::vector<ReferenceCase> reference_cases(int n = 300) {
  auto const square = sdot::box_half_spaces({0, 0}, {1, 1});
  std::vector<ReferenceCase> cases;
  cases.push_back({"uniform, zero weights", uniform_cloud(n, 0, 101), square});
  cases.push_back({"uniform, weights U[0,1/N]", uniform_cloud(n, 1.0 / n, 102), square});
  cases.push_back({"uniform, weights U[0,10/N]", uniform_cloud(n, 10.0 / n, 103), square});
  cases.push_back({"clusters", clustered_cloud(n, 104), square});
  cases.push_back({"cells far from their seeds", displaced_cells_cloud(n, 110), square});
  cases.push_back({"lattice", lattice_cloud(17), square});
  cases.push_back({"seeds outside", uniform_cloud(n, 0.01, 105, -0.5, 1.5), square});
  Cloud negative = uniform_cloud(n, 0, 106);
  std::mt19937 rng(106);
  std::uniform_real_distribution<double> u(-0.02, 0.0);
  for (auto& w : negative.w)
    w = u(rng);
  cases.push_back({"negative weights", negative, square});
  cases.push_back({"triangle", uniform_cloud(n, 0.002, 107), triangle_domain()});
  cases.push_back({"hexagon", uniform_cloud(n, 0.002, 108, -1, 1), hexagon_domain()});
  cases.push_back({"no seed", Cloud{}, square});
  cases.push_back({"one seed", Cloud{{{0.3, 0.4}}, {0.5}}, square});
  cases.push_back({"two seeds", Cloud{{{0.25, 0.5}, {0.75, 0.5}}, {0.1, 0}}, square});
  Cloud duplicates = uniform_cloud(n, 0.001, 109);
  duplicates.x.push_back(duplicates.x[7]);
  duplicates.w.push_back(duplicates.w[7]);
  duplicates.x.insert(duplicates.x.begin() + 2, duplicates.x[40]);
  duplicates.w.insert(duplicates.w.begin() + 2, duplicates.w[40]);
  cases.push_back({"duplicates", duplicates, square});
  return cases;
}

} // namespace sdot_test
