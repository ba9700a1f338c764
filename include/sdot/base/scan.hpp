#pragma once
// Counts to offsets; sums; the items whose flag is set; the first item for which a test fails.

#include <Kokkos_Core.hpp>

#include <string>

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

/// Σ term(i) over i in [0, n). Each work item adds `sum_lanes` terms (i = c, c + m, c + 2m, …
/// with m = ⌈n / sum_lanes⌉, adjacent for adjacent work items) in a local variable, then adds
/// that to the reduction: a host backend keeps the reduction's value in memory and adds to it
/// one term at a time, a chain of stores and loads 3–5× slower than a register. `term` may
/// also write (a vector update that returns its contribution), each i once. The order of the
/// additions depends only on n and the backend's partition of the work items: the same bits
/// on every run.
inline constexpr int sum_lanes = 8;
template <class ExecutionSpace, class Term>
double sum(ExecutionSpace const& space, std::string const& label, int n, Term const& term) {
  int const stride = (n + sum_lanes - 1) / sum_lanes;
  double total = 0;
  Kokkos::parallel_reduce(
      label, Kokkos::RangePolicy<ExecutionSpace>(space, 0, stride),
      KOKKOS_LAMBDA(int c, double& s) {
        double lanes = 0;
        for (int k = 0; k < sum_lanes; ++k) {
          int const i = c + k * stride;
          if (i < n)
            lanes += term(i);
        }
        s += lanes;
      },
      total);
  return total;
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
