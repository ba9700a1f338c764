#pragma once
/// @file
/// loom::Spread: an array spread over the ranks (each process holds the block of its local
/// ranks); spread, spread_host, gather_to_host.

#include <loom/detail/segments.hpp>
#include <loom/error.hpp>
#include <loom/ranks.hpp>
#include <sdot/base/kokkos_compat.hpp>

#include <Kokkos_Core.hpp>

#include <cstdint>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

namespace loom {

namespace detail {
enum class ReduceOp { sum, max, min };

template <class ExecSpace, class View, class Offsets, class Partials, ReduceOp Op>
struct SegmentReduce {
  using T = typename View::non_const_value_type;
  using member_type = typename Kokkos::TeamPolicy<ExecSpace>::member_type;
  View v;
  Offsets first;
  Partials out;
  std::int64_t cols;
  KOKKOS_FUNCTION void operator()(member_type const& team) const {
    int const l = team.league_rank();
    std::int64_t const a = first(l) * cols, b = first(l + 1) * cols;
    View const vv = v;
    std::int64_t const nc = cols;
    using Reducer =
        std::conditional_t<Op == ReduceOp::sum, Kokkos::Sum<T>,
                           std::conditional_t<Op == ReduceOp::max, Kokkos::Max<T>, Kokkos::Min<T>>>;
    T r{};
    Reducer const reducer(r);
    Kokkos::parallel_reduce(
        Kokkos::TeamThreadRange(team, a, b),
        [&](std::int64_t k, T& acc) { reducer.join(acc, row_at(vv, k / nc, k % nc)); }, reducer);
    Kokkos::single(Kokkos::PerTeam(team), [&]() { out(l) = r; });
  }
};

template <class T>
struct Partial {
  T value;
  std::int64_t count;
};
} // namespace detail

/// An array spread over the ranks: this process holds `value()`, the rows of its local ranks
/// concatenated (local rank l owns rows offsets()[l] .. offsets()[l+1]-1), and the whole
/// array is the concatenation of the blocks of all the ranks in global rank order.
///
/// The reductions (sum, max, min, mean) are collective: every process must call them, and
/// every process gets the same, bitwise identical, value (a partial per rank, then the
/// partials combined in global rank order). For a rank-2 View they reduce every element.
template <class View>
class Spread {
public:
  using view_type = View;                                 ///< Type of the local block.
  using value_type = typename View::non_const_value_type; ///< Type of an element.
  using execution_space = typename View::execution_space; ///< Where the reductions run.

  Spread() = default;
  /// `offsets` has ranks.local_count()+1 entries, from 0 to value.extent(0).
  Spread(View value, std::vector<std::int64_t> offsets, Ranks ranks)
      : value_(std::move(value)), offsets_(std::move(offsets)), ranks_(std::move(ranks)) {
    std::string const problem =
        detail::check_offsets(offsets_, ranks_.local_count(), value_.extent(0));
    if (!problem.empty())
      throw Error("loom::Spread: " + problem);
  }

  /// This process's block (the rows of its local ranks, concatenated).
  View const& value() const { return value_; }
  /// local_count()+1 row offsets of the local ranks in value().
  std::vector<std::int64_t> const& offsets() const { return offsets_; }
  /// Rows of local rank l.
  std::int64_t local_rows(int l) const { return offsets_[l + 1] - offsets_[l]; }
  /// The ranks the array is spread over.
  Ranks const& ranks() const { return ranks_; }

  /// Collective: sum of every element over all ranks.
  value_type sum() const {
    auto all = partials<detail::ReduceOp::sum>();
    value_type s = all[0].value;
    for (std::size_t i = 1; i < all.size(); ++i)
      s += all[i].value;
    return s;
  }
  /// Collective: largest element over all ranks (throws a collective Error when empty).
  value_type max() const { return extremum<detail::ReduceOp::max>("max"); }
  /// Collective: smallest element over all ranks (throws a collective Error when empty).
  value_type min() const { return extremum<detail::ReduceOp::min>("min"); }
  /// Collective: mean of every element over all ranks (as double; NaN when empty).
  double mean() const {
    auto all = partials<detail::ReduceOp::sum>();
    value_type s = all[0].value;
    std::int64_t n = all[0].count;
    for (std::size_t i = 1; i < all.size(); ++i)
      s += all[i].value, n += all[i].count;
    return static_cast<double>(s) / static_cast<double>(n);
  }

private:
  template <detail::ReduceOp Op>
  value_type extremum(char const* what) const {
    auto all = partials<Op>();
    bool found = false;
    value_type s{};
    for (auto const& p : all)
      if (p.count > 0) {
        if (!found || (Op == detail::ReduceOp::max ? s < p.value : p.value < s))
          s = p.value;
        found = true;
      }
    if (!found)
      throw Error(std::string("loom::Spread::") + what + ": the array is empty", true);
    return s;
  }

  /// Collective: per-rank partials (value, elements) of all the ranks, in global rank order.
  template <detail::ReduceOp Op>
  std::vector<detail::Partial<value_type>> partials() const {
    static_assert(View::rank == 1 || View::rank == 2, "loom::Spread: rank-1 or rank-2 Views");
    sdot::compat::ScopedRegion region("loom::Spread::reduce");
    execution_space space;
    int const L = ranks_.local_count();
    std::int64_t const cols = detail::cols_of(value_);
    auto first = detail::to_device(space, offsets_, "loom::Spread::offsets");
    Kokkos::View<value_type*, typename execution_space::memory_space> out(
        Kokkos::view_alloc(space, Kokkos::WithoutInitializing, "loom::Spread::partials"), L);
    Kokkos::parallel_for(
        "loom::Spread::reduce", Kokkos::TeamPolicy<execution_space>(space, L, Kokkos::AUTO),
        detail::SegmentReduce<execution_space, View, decltype(first), decltype(out), Op>{
            value_, first, out, cols});
    auto host = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), out);
    std::vector<detail::Partial<value_type>> mine(L);
    for (int l = 0; l < L; ++l)
      mine[l] = {host(l), local_rows(l) * cols};
    return ranks_.allgather(mine);
  }

  View value_;
  std::vector<std::int64_t> offsets_{0, 0};
  Ranks ranks_;
};

/// Declares `block` as this process's block: under one local rank (MpiRanks(comm)) it is that
/// rank's; with several local ranks it is split evenly between them (the first ones get one
/// row more). Local (no communication).
template <class View>
Spread<View> spread(View block, Ranks const& ranks) {
  int const L = ranks.local_count();
  std::int64_t const n = block.extent(0);
  std::vector<std::int64_t> offsets(L + 1);
  for (int l = 0; l <= L; ++l)
    offsets[l] = detail::even_split_first(n, L, l);
  return Spread<View>(std::move(block), std::move(offsets), ranks);
}

/// Declares `block` as this process's block, local rank l holding `counts[l]` rows
/// (local_count() entries summing to block.extent(0)). Local.
template <class View>
Spread<View> spread(View block, Ranks const& ranks, std::vector<std::int64_t> const& counts) {
  if (static_cast<int>(counts.size()) != ranks.local_count())
    throw Error("loom::spread: counts must have local_count() entries");
  std::vector<std::int64_t> offsets(counts.size() + 1, 0);
  for (std::size_t l = 0; l < counts.size(); ++l)
    offsets[l + 1] = offsets[l] + counts[l];
  return Spread<View>(std::move(block), std::move(offsets), ranks);
}

/// The View type spread_host and gather_to_host make: the data type of `View`, LayoutRight,
/// in `MemSpace`.
template <class View, class MemSpace>
using rows_view_t =
    Kokkos::View<typename View::traits::non_const_data_type, Kokkos::LayoutRight, MemSpace>;

/// Every process passes the same whole array (in any memory space) and keeps the part of its
/// local ranks: the rows are split evenly over the size() ranks, the first n % size() ranks
/// getting one more (n < size() leaves the last ranks empty). The block is copied to the
/// memory space of `space`. Local (no communication).
template <class ExecSpace, class View>
Spread<rows_view_t<View, typename ExecSpace::memory_space>>
spread_host(ExecSpace const& space, View const& whole, Ranks const& ranks) {
  static_assert(View::rank == 1 || View::rank == 2, "loom::spread_host: rank-1 or rank-2 Views");
  using Out = rows_view_t<View, typename ExecSpace::memory_space>;
  using HostOut = rows_view_t<View, Kokkos::HostSpace>;
  sdot::compat::ScopedRegion region("loom::spread_host");
  int const L = ranks.local_count(), S = ranks.size(), first = ranks.first_local();
  std::int64_t const n = whole.extent(0), cols = detail::cols_of(whole);
  std::int64_t const a = detail::even_split_first(n, S, first);
  std::int64_t const b = detail::even_split_first(n, S, first + L);
  auto src = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), whole);
  auto host = detail::make_rows_view<HostOut>("loom::spread_host::host", b - a, cols,
                                              Kokkos::WithoutInitializing);
  for (std::int64_t i = a; i < b; ++i)
    for (std::int64_t c = 0; c < cols; ++c)
      detail::row_at(host, i - a, c) = detail::row_at(src, i, c);
  auto out = detail::make_rows_view<Out>("loom::spread_host", b - a, cols, space,
                                         Kokkos::WithoutInitializing);
  Kokkos::deep_copy(space, out, host);
  space.fence(); // `host` goes away
  std::vector<std::int64_t> offsets(L + 1);
  for (int l = 0; l <= L; ++l)
    offsets[l] = detail::even_split_first(n, S, first + l) - a;
  return Spread<Out>(out, std::move(offsets), ranks);
}

/// loom::spread_host onto the default execution space.
template <class View>
auto spread_host(View const& whole, Ranks const& ranks) {
  return spread_host(Kokkos::DefaultExecutionSpace(), whole, ranks);
}

/// The whole of a spread array, on the host of every process (blocks in global rank order).
/// Collective (MPI_Allgatherv).
template <class View>
rows_view_t<View, Kokkos::HostSpace> gather_to_host(Spread<View> const& spread) {
  using T = typename View::non_const_value_type;
  using Out = rows_view_t<View, Kokkos::HostSpace>;
  sdot::compat::ScopedRegion region("loom::gather_to_host");
  Ranks const& ranks = spread.ranks();
  std::int64_t const rows = spread.value().extent(0), cols = detail::cols_of(spread.value());
  auto shapes = ranks.allgather(std::vector<std::int64_t>{rows, cols});
  std::vector<std::int64_t> counts(ranks.process_count());
  std::int64_t total = 0;
  for (int p = 0; p < ranks.process_count(); ++p) {
    if (shapes[2 * p + 1] != cols)
      throw Error("loom::gather_to_host: the processes hold different numbers of columns", true);
    counts[p] = shapes[2 * p];
    total += counts[p];
  }
  auto src = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), spread.value());
  auto mine = detail::make_rows_view<Out>("loom::gather_to_host::mine", rows, cols,
                                          Kokkos::WithoutInitializing);
  for (std::int64_t i = 0; i < rows; ++i)
    for (std::int64_t c = 0; c < cols; ++c)
      detail::row_at(mine, i, c) = detail::row_at(src, i, c);
  auto out =
      detail::make_rows_view<Out>("loom::gather_to_host", total, cols, Kokkos::WithoutInitializing);
  ranks.allgatherv_bytes(mine.data(), out.data(), counts, sizeof(T) * cols);
  return out;
}

} // namespace loom
