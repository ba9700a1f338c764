#pragma once
// The seeded fuzzer's cases (test_random_inputs.cpp, and the transport solver's in
// unit_tests/transport): case k draws a domain, a cloud and weights from generators of the
// hard cases, the same on every run.

#include "brute_force.hpp"
#include "clouds.hpp"

#include <loom/loom.hpp>
#include <sdot/half_spaces.hpp>

#include <gtest/gtest.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdlib>
#include <limits>
#include <random>
#include <sstream>
#include <string>
#include <vector>

namespace sdot_test {

struct Case {
  Cloud cloud;
  std::vector<sdot::HalfSpace> domain;
  double lo = 0, size = 1; ///< the domain's offset from the origin (both coordinates), size
  std::string description;
};

/// A convex domain: a box of random size and offset, a triangle, or a random polygon (half-
/// planes tangent to a circle).
inline std::vector<sdot::HalfSpace> random_domain(std::mt19937_64& rng, double& lo, double& size,
                                                  std::ostringstream& what) {
  std::uniform_real_distribution<double> u(0, 1);
  int const kind = static_cast<int>(u(rng) * 4);
  // Down to tiny and up to huge domains (within sdot::smallest_domain_width and
  // sdot::coordinate_limit): the kernel's tests must not form powers of lengths that leave
  // double's range.
  double const scales[] = {1, 1e-4, 1e3, 1e-100, 1e80};
  size = scales[static_cast<int>(u(rng) * 5)];
  double const offsets[] = {0, 0, 1e5, 1e9};
  lo = offsets[static_cast<int>(u(rng) * 4)] * size;
  what << "domain " << kind << " size " << size << " at " << lo;
  if (kind <= 1)
    return sdot::box_half_spaces({lo, lo}, {lo + size, lo + size * (kind == 0 ? 1 : 0.01)});
  if (kind == 2) // x ≥ lo, y ≥ lo, x + y ≤ 2 lo + size
    return {{{-1, 0}, -lo}, {{0, -1}, -lo}, {{1, 1}, 2 * lo + size}};
  // Tangents to the circle of radius size/2 around the square's centre.
  std::vector<sdot::HalfSpace> hs;
  int const sides = 3 + static_cast<int>(u(rng) * 8);
  double const cx = lo + size / 2, cy = lo + size / 2, r = size / 2;
  for (int k = 0; k < sides; ++k) {
    double const a = 2 * M_PI * (k + 0.3 * u(rng)) / sides;
    double const nx = std::cos(a), ny = std::sin(a);
    hs.push_back({{nx, ny}, nx * cx + ny * cy + r});
  }
  return hs;
}

inline Case random_case(unsigned number) {
  std::mt19937_64 rng(1000003u * number + 17);
  std::uniform_real_distribution<double> u(0, 1);
  std::ostringstream what;
  Case c;
  double lo = 0, size = 1;
  c.domain = random_domain(rng, lo, size, what);
  c.lo = lo;
  c.size = size;
  int const n = static_cast<int>(std::pow(u(rng), 2) * 60);
  int const positions = static_cast<int>(u(rng) * 6);
  int const weights = static_cast<int>(u(rng) * 6);
  what << ", " << n << " seeds, positions " << positions << ", weights " << weights;
  c.description = what.str();
  auto point = [&](double x, double y) {
    return std::array<double, 2>{lo + x * size, lo + y * size};
  };
  double const centre_x = u(rng), centre_y = u(rng), radius = std::pow(10, -1 - 5 * u(rng));
  int const side = std::max(1, static_cast<int>(std::sqrt(double(n))));
  for (int i = 0; i < n; ++i) {
    switch (positions) {
    case 0: // uniform
      c.cloud.x.push_back(point(u(rng), u(rng)));
      break;
    case 1: // one tight cluster
      c.cloud.x.push_back(
          point(centre_x + radius * (u(rng) - 0.5), centre_y + radius * (u(rng) - 0.5)));
      break;
    case 2: // a lattice: many equal distances, collinear rows
      c.cloud.x.push_back(point((i % side + 0.5) / side, (i / side + 0.5) / side));
      break;
    case 3: // duplicates of earlier seeds
      c.cloud.x.push_back(i > 0 && u(rng) < 0.5 ? c.cloud.x[static_cast<std::size_t>(u(rng) * i)]
                                                : point(u(rng), u(rng)));
      break;
    case 4: // nearly collinear
      c.cloud.x.push_back(point(u(rng), 0.5 + 1e-10 * (u(rng) - 0.5)));
      break;
    default: // outside the domain too
      c.cloud.x.push_back(point(3 * u(rng) - 1, 3 * u(rng) - 1));
      break;
    }
  }
  double const spacing2 = size * size / std::max(n, 1);
  for (int i = 0; i < n; ++i) {
    double w = 0;
    switch (weights) {
    case 0:
      break;
    case 1: // small
      w = spacing2 * u(rng);
      break;
    case 2: // spanning 1e3 × the squared spacing
      w = 1e3 * spacing2 * u(rng);
      break;
    case 3: // negative
      w = -spacing2 * 10 * u(rng);
      break;
    case 4: // a trend: cells far from their seeds, some empty
      w = 0.5 * size * (c.cloud.x[i][0] - lo);
      break;
    default: // one seed holding most of the domain
      w = i == 0 ? size * size : 0;
      break;
    }
    c.cloud.w.push_back(w);
  }
  return c;
}

/// The brute force's measures of case `c` with `weights`. The brute force works in absolute
/// coordinates, with a frame of fixed size around the domain: it is given the case moved to the
/// origin and scaled to about unit size (the cells move and scale with the seeds and the domain,
/// the weights scale as squared lengths), and its measures are scaled back. The scale is a power
/// of two and the move subtracts numbers of the same magnitude, so that the brute force sees the
/// seeds exactly where sdot does: clustered seeds' cells move by far more than the rounding of
/// their positions.
inline std::vector<double> reference_measures(Case const& c, std::vector<double> const& weights) {
  double const unit = std::ldexp(1.0, std::ilogb(c.size));
  Cloud moved = c.cloud;
  for (std::size_t i = 0; i < weights.size(); ++i) {
    moved.x[i] = {(c.cloud.x[i][0] - c.lo) / unit, (c.cloud.x[i][1] - c.lo) / unit};
    moved.w[i] = weights[i] / (unit * unit);
  }
  auto domain = c.domain;
  for (auto& h : domain)
    h.offset = (h.offset - (h.normal[0] + h.normal[1]) * c.lo) / unit;
  auto measures = brute_force(moved.x, moved.w, domain).measures;
  for (auto& m : measures)
    m *= unit * unit;
  return measures;
}

/// How far a measure of case `c` may stand from the brute force's: 1e-9 of the domain's area
/// and, far from the origin, the round-off of the half-spaces' offsets, which carry the domain's
/// edges only to lo/size × 1e-16 of its size (the inputs themselves are that uncertain).
inline double case_tolerance(Case const& c) {
  return sdot::domain_polygon(c.domain).area *
         (1e-9 + 16 * std::numeric_limits<double>::epsilon() * c.lo / c.size);
}

/// Process `rank`'s block of the seeds of `cloud` over `size` processes: process p holds a
/// share proportional to p + `shift` (with shift 0 the first holds none), in order.
inline Cloud process_block(Cloud const& cloud, int rank, int size, int shift) {
  std::size_t const n = cloud.x.size();
  // The end of process p's block: the shares of processes 0 to p, (p + 1)(p + 2 shift) / 2.
  std::size_t const shares = std::size_t(size) * std::size_t(size - 1 + 2 * shift) / 2;
  auto const end_of = [&](int p) {
    return p + 1 == size ? n : n * (std::size_t(p + 1) * std::size_t(p + 2 * shift) / 2) / shares;
  };
  std::size_t const first = rank > 0 ? end_of(rank - 1) : 0, count = end_of(rank) - first;
  Cloud mine;
  mine.x.assign(cloud.x.begin() + first, cloud.x.begin() + first + count);
  mine.w.assign(cloud.w.begin() + first, cloud.w.begin() + first + count);
  return mine;
}

/// Whether the test runs on several MPI processes (its tests of spread input alone do then).
inline bool several_processes() {
  return loom::WorldRanks().process_count() > 1;
}

/// check(k) for the case SDOT_RANDOM_CASE alone when it is set, else for the first
/// SDOT_RANDOM_CASES (a longer run by hand), or `usual`, cases, until one fails.
template <class Check>
void for_each_case(unsigned usual, Check const& check) {
  if (char const* one = std::getenv("SDOT_RANDOM_CASE")) {
    check(static_cast<unsigned>(std::atoi(one)));
    return;
  }
  char const* count = std::getenv("SDOT_RANDOM_CASES");
  unsigned const cases = count ? static_cast<unsigned>(std::atoi(count)) : usual;
  for (unsigned number = 0; number < cases && !::testing::Test::HasFatalFailure(); ++number)
    check(number);
}

} // namespace sdot_test
