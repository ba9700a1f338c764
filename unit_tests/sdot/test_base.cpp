// The parallel primitives of sdot/base: detail::sum against exact and long-double sums, and on
// a host backend against the order it documents (the same bits at any number of threads).
#include <sdot/base/scan.hpp>

#include <Kokkos_Core.hpp>
#include <gtest/gtest.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <random>
#include <vector>

namespace {

using Space = Kokkos::DefaultExecutionSpace;
using Memory = Space::memory_space;

Kokkos::View<double*, Memory> device_copy(std::vector<double> const& values) {
  Kokkos::View<double*, Memory> v("test::values", values.size());
  auto host = Kokkos::create_mirror_view(v);
  for (std::size_t i = 0; i < values.size(); ++i)
    host(i) = values[i];
  Kokkos::deep_copy(v, host);
  return v;
}

// The kernels live in free functions: nvcc refuses device lambdas in TEST bodies (private
// member functions).
double sum_of(Kokkos::View<double*, Memory> const& v) {
  return sdot::detail::sum(
      Space(), "test::sum", static_cast<int>(v.extent(0)), KOKKOS_LAMBDA(int i) { return v(i); });
}

/// Σ v(i) and Σ v(i)² at once.
std::array<double, 2> sum_and_squares(Kokkos::View<double*, Memory> const& v) {
  return sdot::detail::sums<2>(
      Space(), "test::sums", static_cast<int>(v.extent(0)), KOKKOS_LAMBDA(int i) {
        return sdot::detail::Terms<2>{{v(i), v(i) * v(i)}};
      });
}

/// Σ v(i) and Σ v(i)² by the path sums() takes on a device backend (Kokkos' reduction), run
/// here on whatever backend the tests use.
std::array<double, 2> device_path_sums(Kokkos::View<double*, Memory> const& v) {
  return sdot::detail::sums_detail::lane_sums<2>(
      Space(), "test::lane_sums", static_cast<int>(v.extent(0)), KOKKOS_LAMBDA(int i) {
        return sdot::detail::Terms<2>{{v(i), v(i) * v(i)}};
      });
}

/// The order sum() documents on a host backend, written out on the host: blocks of
/// sum_block consecutive terms; in a block, term i in lane (i − first) mod 8, the lanes added
/// as ((l0 + l1) + (l2 + l3)) + ((l4 + l5) + (l6 + l7)); the blocks' sums added in order.
template <class Term>
double documented_order(int n, Term const& term) {
  using sdot::detail::sum_block;
  double total = 0;
  for (int first = 0; first < n; first += sum_block) {
    double lanes[8] = {0, 0, 0, 0, 0, 0, 0, 0};
    for (int i = first; i < std::min(n, first + sum_block); ++i)
      lanes[(i - first) % 8] += term(i);
    total += ((lanes[0] + lanes[1]) + (lanes[2] + lanes[3])) +
             ((lanes[4] + lanes[5]) + (lanes[6] + lanes[7]));
  }
  return total;
}

/// x(i) = 2 i and visits(i) += 1 for every i, each term 1.
double sum_with_writes(Kokkos::View<double*, Memory> const& x,
                       Kokkos::View<int*, Memory> const& visits) {
  return sdot::detail::sum(
      Space(), "test::update", static_cast<int>(x.extent(0)), KOKKOS_LAMBDA(int i) {
        x(i) = 2.0 * i;
        visits(i) += 1;
        return 1.0;
      });
}

// Integer-valued terms add up exactly in any order: every length around a multiple of the
// lanes, and lengths that leave the last work item partly empty.
TEST(Sum, ExactOnIntegerTermsOfEveryLength) {
  for (int n : {0, 1, 2, 7, 8, 9, 15, 16, 17, 1000, 100003}) {
    std::vector<double> values(n);
    double expected = 0;
    for (int i = 0; i < n; ++i) {
      values[i] = double(i % 1000) - 300;
      expected += values[i];
    }
    EXPECT_EQ(sum_of(device_copy(values)), expected) << "n = " << n;
  }
}

// A term that writes (a vector update returning its contribution) runs once per index.
TEST(Sum, TermThatWritesRunsOncePerIndex) {
  int const n = 12347;
  Kokkos::View<double*, Memory> x("test::x", n);
  Kokkos::View<int*, Memory> visits("test::visits", n);
  EXPECT_EQ(sum_with_writes(x, visits), double(n));
  auto const x_host = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), x);
  auto const visits_host = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), visits);
  for (int i = 0; i < n; ++i) {
    ASSERT_EQ(visits_host(i), 1) << "index " << i;
    ASSERT_EQ(x_host(i), 2.0 * i) << "index " << i;
  }
}

// Random terms of mixed signs and magnitudes: within a few rounding errors of a long-double
// sum, and the same bits run after run.
TEST(Sum, CloseToLongDoubleAndDeterministic) {
  std::mt19937_64 rng(7);
  std::uniform_real_distribution<double> unit(-1, 1);
  int const n = 54321;
  std::vector<double> values(n);
  long double reference = 0, magnitude = 0;
  for (int i = 0; i < n; ++i) {
    values[i] = unit(rng) * std::ldexp(1.0, int(unit(rng) * 20));
    reference += values[i];
    magnitude += std::fabs(values[i]);
  }
  auto const v = device_copy(values);
  double const first = sum_of(v);
  EXPECT_LE(std::fabs(double(first - reference)), 1e-14 * double(magnitude));
  for (int run = 0; run < 3; ++run)
    EXPECT_EQ(sum_of(v), first);
}

// The device backends' path: integer-valued terms exactly, for lengths around the lane count.
TEST(Sum, DevicePathExactOnIntegerTerms) {
  for (int n : {1, 2, 7, 8, 9, 17, 100003}) {
    std::vector<double> values(n);
    double expected = 0, squares = 0;
    for (int i = 0; i < n; ++i) {
      values[i] = double(i % 100) - 30;
      expected += values[i];
      squares += values[i] * values[i];
    }
    auto const both = device_path_sums(device_copy(values));
    EXPECT_EQ(both[0], expected) << "n = " << n;
    EXPECT_EQ(both[1], squares) << "n = " << n;
  }
}

// On a host backend the additions follow the documented order whatever the number of threads
// (OpenMP, Threads): bit for bit, for lengths around the block and lane sizes, one sum or two.
TEST(Sum, HostBackendFollowsItsDocumentedOrder) {
  if (!Kokkos::SpaceAccessibility<Space, Kokkos::HostSpace>::accessible)
    GTEST_SKIP() << "a device backend: Kokkos' own reduction";
  std::mt19937_64 rng(11);
  std::uniform_real_distribution<double> unit(-1, 1);
  int const block = sdot::detail::sum_block;
  for (int n : {1, 5, 8, 13, block - 1, block, block + 3, 3 * block + 7, 100003}) {
    std::vector<double> values(n);
    for (int i = 0; i < n; ++i)
      values[i] = unit(rng) * std::ldexp(1.0, int(unit(rng) * 30));
    auto const v = device_copy(values);
    double const expected = documented_order(n, [&](int i) { return values[i]; });
    double const expected_squares =
        documented_order(n, [&](int i) { return values[i] * values[i]; });
    EXPECT_EQ(sum_of(v), expected) << "n = " << n;
    auto const both = sum_and_squares(v);
    EXPECT_EQ(both[0], expected) << "n = " << n;
    EXPECT_EQ(both[1], expected_squares) << "n = " << n;
  }
}

} // namespace
