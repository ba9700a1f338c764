#pragma once
// Counts to offsets; sums whose bits do not depend on the number of threads; the items whose flag
// is set; the first item for which a test fails.

#include <sdot/base/kokkos_compat.hpp>

#include <Kokkos_Core.hpp>

#include <array>
#include <cstddef>
#include <string>
#include <vector>

namespace sdot::detail {

/// offsets(i) = counts(0) + … + counts(i−1) for i ≤ n (offsets has n + 1 entries); returns the
/// total. `counts` may be the first n entries of `offsets` itself (each count is read before
/// its offset is written).
template <class ExecutionSpace, class Counts, class Offsets>
int exclusive_scan(ExecutionSpace const& space, char const* label, Counts const& counts,
                   Offsets const& offsets) {
  int const n = static_cast<int>(counts.extent(0));
  int total = 0;
  Kokkos::parallel_scan(
      label, Kokkos::RangePolicy<ExecutionSpace>(space, 0, n + 1),
      KOKKOS_LAMBDA(int i, int& partial, bool final) {
        int const count = i < n ? counts(i) : 0;
        if (final)
          offsets(i) = partial;
        partial += count;
      },
      total);
  return total;
}

/// K sums computed together by sums(): what a term returns (K = 1: a double will do).
template <int K>
struct Terms {
  double value[K];
};

inline constexpr int sum_lanes = 8;
/// Consecutive terms per block of sums() on a host backend.
inline constexpr int sum_block = 512;

namespace sums_detail {

template <int K>
KOKKOS_INLINE_FUNCTION void add(double (&to)[K], Terms<K> const& t) {
  for (int k = 0; k < K; ++k)
    to[k] += t.value[k];
}
KOKKOS_INLINE_FUNCTION void add(double (&to)[1], double t) {
  to[0] += t;
}

/// ((l0 + l1) + (l2 + l3)) + ((l4 + l5) + (l6 + l7)) for each of the K sums.
template <int K>
KOKKOS_INLINE_FUNCTION void add_lanes(double const (&lanes)[sum_lanes][K], double (&to)[K]) {
  static_assert(sum_lanes == 8, "the lanes added as a tree of 8");
  for (int k = 0; k < K; ++k)
    to[k] = ((lanes[0][k] + lanes[1][k]) + (lanes[2][k] + lanes[3][k])) +
            ((lanes[4][k] + lanes[5][k]) + (lanes[6][k] + lanes[7][k]));
}

/// A device backend: Kokkos' reduction, each work item adding `sum_lanes` terms (i = c,
/// c + m, c + 2m, … with m = ⌈n / sum_lanes⌉: adjacent work items read adjacent terms). The
/// bits depend on n and the backend's partition of the work.
template <int K, class Term>
struct LaneSums {
  using value_type = Terms<K>;
  Term term;
  int n, stride;
  KOKKOS_INLINE_FUNCTION void init(value_type& s) const {
    for (int k = 0; k < K; ++k)
      s.value[k] = 0;
  }
  KOKKOS_INLINE_FUNCTION void join(value_type& dst, value_type const& src) const {
    for (int k = 0; k < K; ++k)
      dst.value[k] += src.value[k];
  }
  SDOT_COMPAT_VOLATILE_JOIN(value_type)
  KOKKOS_INLINE_FUNCTION void operator()(int c, value_type& s) const {
    double lanes[sum_lanes][K] = {};
    for (int l = 0; l < sum_lanes; ++l) {
      int const i = c + l * stride;
      if (i < n)
        add(lanes[l], term(i));
    }
    double block[K];
    add_lanes(lanes, block);
    for (int k = 0; k < K; ++k)
      s.value[k] += block[k];
  }
};

template <int K, class ExecutionSpace, class Term>
std::array<double, K> lane_sums(ExecutionSpace const& space, std::string const& label, int n,
                                Term const& term) {
  int const stride = n / sum_lanes + (n % sum_lanes != 0);
  Terms<K> total{};
  Kokkos::parallel_reduce(label, Kokkos::RangePolicy<ExecutionSpace>(space, 0, stride),
                          LaneSums<K, Term>{term, n, stride}, total);
  std::array<double, K> result;
  for (int k = 0; k < K; ++k)
    result[k] = total.value[k];
  return result;
}

/// A host backend: blocks of `sum_block` consecutive terms, one work item each (term i in
/// lane (i − first) mod sum_lanes, the lanes added as a tree), then the blocks' sums added in
/// their order: the bits depend on n alone, not on the number of threads.
/// The bounds are computed without overflow up to n = INT_MAX.
template <int K, class ExecutionSpace, class Term>
std::array<double, K> block_sums(ExecutionSpace const& space, std::string const& label, int n,
                                 Term const& term) {
  int const blocks = n / sum_block + (n % sum_block != 0);
  std::vector<double> partial(std::size_t(blocks) * K);
  double* const out = partial.data();
  Kokkos::parallel_for(
      label, Kokkos::RangePolicy<ExecutionSpace>(space, 0, blocks), KOKKOS_LAMBDA(int b) {
        int const first = b * sum_block;
        int const last = n - first > sum_block ? first + sum_block : n;
        double lanes[sum_lanes][K] = {};
        int i = first;
        for (; last - i >= sum_lanes; i += sum_lanes)
          for (int l = 0; l < sum_lanes; ++l)
            add(lanes[l], term(i + l));
        for (int l = 0; i < last; ++i, ++l)
          add(lanes[l], term(i));
        double block[K];
        add_lanes(lanes, block);
        for (int k = 0; k < K; ++k)
          out[std::size_t(b) * K + k] = block[k];
      });
  space.fence();
  std::array<double, K> result{};
  for (int b = 0; b < blocks; ++b)
    for (int k = 0; k < K; ++k)
      result[k] += partial[std::size_t(b) * K + k];
  return result;
}

} // namespace sums_detail

/// K sums Σ term(i) over i in [0, n) at once: term(i) returns Terms<K> (or a double for K = 1).
/// `term` may also write (a vector update that returns its contributions), each i once.
/// On a host backend (Serial, OpenMP, Threads) the order of the additions depends on n alone:
/// the same bits at any number of threads and on every run. On a device backend, Kokkos'
/// reduction: the same bits on every run of one device and n.
template <int K, class ExecutionSpace, class Term>
std::array<double, K> sums(ExecutionSpace const& space, std::string const& label, int n,
                           Term const& term) {
  if (n <= 0)
    return std::array<double, K>{};
  constexpr bool host = Kokkos::SpaceAccessibility<ExecutionSpace, Kokkos::HostSpace>::accessible;
  if constexpr (host)
    return sums_detail::block_sums<K>(space, label, n, term);
  else
    return sums_detail::lane_sums<K>(space, label, n, term);
}

/// Σ term(i) over i in [0, n) (sums() with one sum).
template <class ExecutionSpace, class Term>
double sum(ExecutionSpace const& space, std::string const& label, int n, Term const& term) {
  return sums<1>(space, label, n, term)[0];
}

/// The first k in [0, n) for which holds(k) is false, or n (the first bad input, cell or
/// mass, for an error message).
template <class ExecutionSpace, class Holds>
int first_failing(ExecutionSpace const& space, std::string const& label, int n,
                  Holds const& holds) {
  int first = n;
  Kokkos::parallel_reduce(
      label, Kokkos::RangePolicy<ExecutionSpace>(space, 0, n),
      KOKKOS_LAMBDA(int k, int& f) {
        if (!holds(k) && k < f)
          f = k;
      },
      Kokkos::Min<int>(first));
  return first;
}

/// The items k in [0, n) for which flag(k) holds, in order: k itself, or items(k) when `items`
/// is not empty. `count` is their number when the caller knows it (−1: counted here).
template <class ExecutionSpace, class Flag>
Kokkos::View<int*, typename ExecutionSpace::memory_space>
items_where(ExecutionSpace const& space, std::string const& label, int n, Flag const& flag,
            int count = -1,
            Kokkos::View<int const*, typename ExecutionSpace::memory_space> items = {}) {
  using Policy = Kokkos::RangePolicy<ExecutionSpace>;
  if (count < 0) {
    count = 0;
    Kokkos::parallel_reduce(
        label + "_count", Policy(space, 0, n),
        KOKKOS_LAMBDA(int k, int& c) { c += flag(k) ? 1 : 0; }, count);
  }
  Kokkos::View<int*, typename ExecutionSpace::memory_space> list(
      Kokkos::view_alloc(space, Kokkos::WithoutInitializing, label), count);
  if (count == 0)
    return list;
  Kokkos::parallel_scan(
      label, Policy(space, 0, n), KOKKOS_LAMBDA(int k, int& position, bool final) {
        if (flag(k)) {
          if (final)
            list(position) = items.extent(0) ? items(k) : k;
          ++position;
        }
      });
  return list;
}

/// The items k with flags(k) ≠ 0, in order (`count` of them, counted by the caller): k itself,
/// or items(k) when `items` is not empty.
template <class ExecutionSpace, class Flags>
Kokkos::View<int*, typename ExecutionSpace::memory_space>
flagged_items(ExecutionSpace const& space, std::string const& label, Flags const& flags, int count,
              Kokkos::View<int const*, typename ExecutionSpace::memory_space> items = {}) {
  return items_where(
      space, label, static_cast<int>(flags.extent(0)),
      KOKKOS_LAMBDA(int k) { return flags(k) != 0; }, count, items);
}

} // namespace sdot::detail
