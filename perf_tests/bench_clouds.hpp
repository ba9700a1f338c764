#pragma once
// The benchmark clouds, from the unit tests' generators, and the unit square domain.
#include <clouds.hpp>
#include <sdot/power_diagram.hpp>

#include <stdexcept>
#include <string>
#include <vector>

namespace sdot_bench {

/// "uniform": N seeds uniform in the unit square with weights U[0, 1/N];
/// "clustered": clustered_cloud of the unit tests (80 % in three tight Gaussian clusters).
inline sdot_test::Cloud make_cloud(std::string const& kind, int n) {
  if (kind == "uniform")
    return sdot_test::uniform_cloud(n, 1.0 / n, 12345);
  if (kind == "clustered")
    return sdot_test::clustered_cloud(n, 12345);
  throw std::invalid_argument("sdot benchmarks: unknown cloud '" + kind + "'");
}

inline std::vector<sdot::HalfSpace> unit_square() {
  return sdot::box_half_spaces({0, 0}, {1, 1});
}

} // namespace sdot_bench
