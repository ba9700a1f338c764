#pragma once
/// @file
/// loom::distribute: sends rows to ranks, with memory and traffic that follow the rows
/// actually sent (no [size, capacity] padding), for bulk data such as seeds or cells; and
/// loom::Distributor, its plan for destinations that serve many times.

#include <loom/detail/alltoallv.hpp>
#include <loom/detail/segments.hpp>
#include <loom/ranks.hpp>
#include <sdot/base/kokkos_compat.hpp>

#include <Kokkos_Core.hpp>

#include <cstddef>
#include <cstdint>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

namespace loom {

/// Rows received by this process's local ranks: local rank l holds rows
/// [offsets[l], offsets[l+1]), ordered by source process, then by their order there.
template <class T, class MemorySpace>
struct Distributed {
  /// [rows received, cols]: the received rows of all local ranks, back to back.
  Kokkos::View<T**, Kokkos::LayoutRight, MemorySpace> rows;
  std::vector<std::int64_t> offsets; ///< local_count+1 row offsets of the local ranks in rows.
};

namespace detail {

// Rows are processed in chunks, each scanned serially by one thread (a stable counting sort
// without atomics): histogram per chunk, scan over chunks, placement.
template <class Dest, class Hist>
struct DistributeCount {
  Dest dest;
  Hist hist; // [chunks, size]
  std::int64_t n, chunk;
  KOKKOS_FUNCTION void operator()(std::int64_t c) const {
    std::int64_t const end = (c + 1) * chunk < n ? (c + 1) * chunk : n;
    for (std::int64_t i = c * chunk; i < end; ++i)
      if (dest(i) >= 0)
        ++hist(c, dest(i));
  }
};

template <class Hist, class Totals>
struct DistributeScan {
  Hist hist;
  Totals totals; // [size]
  std::int64_t chunks;
  KOKKOS_FUNCTION void operator()(int d) const {
    std::int64_t running = 0;
    for (std::int64_t c = 0; c < chunks; ++c) {
      std::int64_t const t = hist(c, d);
      hist(c, d) = running;
      running += t;
    }
    totals(d) = running;
  }
};

template <class Dest, class Hist, class Starts, class In, class Out, class Lengths>
struct DistributePlace {
  Dest dest;
  Hist hist;
  Starts starts; // [size] first sorted row of each destination
  In in;
  Out out;
  Lengths lengths, sorted_lengths; // empty: every row is whole
  std::int64_t n, chunk, cols;
  KOKKOS_FUNCTION void operator()(std::int64_t c) const {
    std::int64_t const end = (c + 1) * chunk < n ? (c + 1) * chunk : n;
    for (std::int64_t i = c * chunk; i < end; ++i) {
      int const d = dest(i);
      if (d < 0)
        continue;
      std::int64_t const to = starts(d) + hist(c, d)++;
      std::int64_t const used = lengths.extent(0) ? lengths(i) : cols;
      if (lengths.extent(0))
        sorted_lengths(to) = used;
      for (std::int64_t k = 0; k < used; ++k)
        out(to, k) = in(i, k);
    }
  }
};

// Offsets of rows of `lengths` values laid back to back ([m + 1]); values_per[p]: the values of
// the rows_per[p] rows that follow those of p − 1.
template <class ExecSpace, class LengthView>
LengthView compact_offsets(ExecSpace const& space, LengthView const& lengths,
                           std::vector<std::int64_t> const& rows_per,
                           std::vector<std::int64_t>& values_per) {
  std::int64_t const m = static_cast<std::int64_t>(lengths.extent(0));
  LengthView offsets(
      Kokkos::view_alloc(space, Kokkos::WithoutInitializing, "loom::distribute::offsets"), m + 1);
  Kokkos::parallel_scan(
      "loom::distribute::offsets",
      Kokkos::RangePolicy<ExecSpace, Kokkos::IndexType<std::int64_t>>(space, 0, m + 1),
      KOKKOS_LAMBDA(std::int64_t r, std::int64_t & sum, bool final) {
        if (final)
          offsets(r) = sum;
        if (r < m)
          sum += lengths(r);
      });
  auto const offsets_host = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), offsets);
  values_per.assign(rows_per.size(), 0);
  std::int64_t row = 0;
  for (std::size_t p = 0; p < rows_per.size(); ++p) {
    values_per[p] = offsets_host(row + rows_per[p]) - offsets_host(row);
    row += rows_per[p];
  }
  return offsets;
}

// Row r's first lengths(r) values to or from a contiguous buffer, at offsets(r).
template <class Rows, class Buffer, class Offsets, class Lengths, bool Pack>
struct DistributeCompact {
  Rows rows;
  Buffer buffer;
  Offsets offsets;
  Lengths lengths;
  KOKKOS_FUNCTION void operator()(std::int64_t r) const {
    for (std::int64_t k = 0; k < static_cast<std::int64_t>(lengths(r)); ++k) {
      if constexpr (Pack)
        buffer(offsets(r) + k) = rows(r, k);
      else
        rows(r, k) = buffer(offsets(r) + k);
    }
  }
};

/// The rows of this process sorted by destination rank (stable), with their lengths (partial
/// rows only); starts[d]: the first row for global rank d (size + 1 values).
template <class T, class MemSpace>
struct SortedRows {
  Kokkos::View<T**, Kokkos::LayoutRight, MemSpace> rows;
  Kokkos::View<std::int64_t*, MemSpace> lengths;
  std::vector<std::int64_t> starts;
};

/// Checks the destinations and the lengths on every process (the same loom::Error everywhere
/// when one is wrong), and returns the lengths as int64 (an empty View for whole rows).
template <class ExecSpace, class DestView, class Lengths>
Kokkos::View<std::int64_t*, typename ExecSpace::memory_space>
checked_lengths(ExecSpace const& space, Ranks const& ranks, DestView const& dest, std::int64_t n,
                std::int64_t cols, Lengths const& lengths) {
  using Policy = Kokkos::RangePolicy<ExecSpace, Kokkos::IndexType<std::int64_t>>;
  using LengthView = Kokkos::View<std::int64_t*, typename ExecSpace::memory_space>;
  constexpr bool partial = !std::is_same_v<Lengths, std::nullptr_t>;
  int const size = ranks.size();
  LengthView given_lengths;
  bool lengths_ok = true;
  if constexpr (partial) {
    lengths_ok = static_cast<std::int64_t>(lengths.extent(0)) == n;
    if (lengths_ok) {
      given_lengths = LengthView(
          Kokkos::view_alloc(space, Kokkos::WithoutInitializing, "loom::distribute::lengths"), n);
      Kokkos::parallel_for(
          "loom::distribute::lengths", Policy(space, 0, n),
          KOKKOS_LAMBDA(std::int64_t i) { given_lengths(i) = lengths(i); });
    }
  }
  int bad = 0;
  Kokkos::parallel_reduce(
      "loom::distribute::check", Policy(space, 0, lengths_ok ? n : 0),
      KOKKOS_LAMBDA(std::int64_t i, int& b) {
        b += dest(i) < -1 || dest(i) >= size ||
             (partial && (given_lengths(i) < 0 || given_lengths(i) > cols));
      },
      bad);
  ranks.agree(bad == 0 && static_cast<std::int64_t>(dest.extent(0)) == n && lengths_ok,
              "loom::distribute: " + std::to_string(bad) +
                  " rows have a destination outside [-1, " + std::to_string(size) +
                  ") or a length outside [0, " + std::to_string(cols) +
                  "], or dest, lengths and rows differ in length");
  return given_lengths;
}

/// Stable counting sort of `rows` by destination rank, in chunks each scanned by one thread
/// (no atomics): histogram per chunk, scan over chunks, placement.
template <class ExecSpace, class T, class DestView>
SortedRows<T, typename ExecSpace::memory_space> sort_by_destination(
    ExecSpace const& space, int size, DestView const& dest,
    Kokkos::View<T**, Kokkos::LayoutRight, typename ExecSpace::memory_space> const& rows,
    Kokkos::View<std::int64_t*, typename ExecSpace::memory_space> const& lengths) {
  using MemSpace = typename ExecSpace::memory_space;
  using Policy = Kokkos::RangePolicy<ExecSpace, Kokkos::IndexType<std::int64_t>>;
  using RowsView = Kokkos::View<T**, Kokkos::LayoutRight, MemSpace>;
  using LengthView = Kokkos::View<std::int64_t*, MemSpace>;
  std::int64_t const n = static_cast<std::int64_t>(rows.extent(0));
  std::int64_t const cols = static_cast<std::int64_t>(rows.extent(1));
  int const threads = sdot::compat::concurrency(space);
  std::int64_t const chunk =
      sdot::compat::max<std::int64_t>(256, n / (4 * static_cast<std::int64_t>(threads)) + 1);
  std::int64_t const chunks = (n + chunk - 1) / chunk;
  Kokkos::View<std::int64_t**, Kokkos::LayoutRight, MemSpace> hist(
      Kokkos::view_alloc(space, "loom::distribute::histogram"), chunks, size);
  LengthView totals(Kokkos::view_alloc(space, "loom::distribute::totals"), size);
  Kokkos::parallel_for("loom::distribute::count", Policy(space, 0, chunks),
                       DistributeCount<DestView, decltype(hist)>{dest, hist, n, chunk});
  Kokkos::parallel_for("loom::distribute::scan", Kokkos::RangePolicy<ExecSpace>(space, 0, size),
                       DistributeScan<decltype(hist), LengthView>{hist, totals, chunks});
  auto totals_host = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), totals);
  SortedRows<T, MemSpace> sorted;
  sorted.starts.assign(size + 1, 0);
  for (int d = 0; d < size; ++d)
    sorted.starts[d + 1] = sorted.starts[d] + totals_host(d);
  LengthView starts_view(
      Kokkos::view_alloc(space, Kokkos::WithoutInitializing, "loom::distribute::starts"), size);
  Kokkos::deep_copy(
      space, starts_view,
      Kokkos::View<std::int64_t*, Kokkos::HostSpace, Kokkos::MemoryTraits<Kokkos::Unmanaged>>(
          sorted.starts.data(), size));
  std::int64_t const total = sorted.starts[size];
  sorted.rows =
      RowsView(Kokkos::view_alloc(space, Kokkos::WithoutInitializing, "loom::distribute::sorted"),
               total, cols);
  if (lengths.extent(0) > 0) // partial rows
    sorted.lengths = LengthView(
        Kokkos::view_alloc(space, Kokkos::WithoutInitializing, "loom::distribute::sorted_lengths"),
        total);
  Kokkos::parallel_for(
      "loom::distribute::place", Policy(space, 0, chunks),
      DistributePlace<DestView, decltype(hist), LengthView, RowsView, RowsView, LengthView>{
          dest, hist, starts_view, rows, sorted.rows, lengths, sorted.lengths, n, chunk, cols});
  space.fence();
  return sorted;
}

/// Collective: the sorted rows of every process to their destination processes, each
/// process's rows in process order (`send_counts[q]` rows to process q, `recv_counts[p]` from
/// p, `received` in all). Partial rows (sorted.lengths) send their lengths, then only the
/// values they cover.
template <class ExecSpace, class T, bool Partial>
Kokkos::View<T**, Kokkos::LayoutRight, typename ExecSpace::memory_space>
exchange_sorted_rows(ExecSpace const& space, Ranks const& ranks,
                     SortedRows<T, typename ExecSpace::memory_space> const& sorted,
                     std::vector<std::int64_t> const& send_counts,
                     std::vector<std::int64_t> const& recv_counts, std::int64_t received) {
  using MemSpace = typename ExecSpace::memory_space;
  using Policy = Kokkos::RangePolicy<ExecSpace, Kokkos::IndexType<std::int64_t>>;
  using RowsView = Kokkos::View<T**, Kokkos::LayoutRight, MemSpace>;
  using LengthView = Kokkos::View<std::int64_t*, MemSpace>;
  std::int64_t const cols = static_cast<std::int64_t>(sorted.rows.extent(1));
  RowsView incoming(
      Kokkos::view_alloc(space, Kokkos::WithoutInitializing, "loom::distribute::incoming"),
      received, cols);
  if constexpr (!Partial) {
    alltoallv_views(space, ranks, sorted.rows, send_counts, incoming, recv_counts,
                    cols * sizeof(T));
  } else {
    // The lengths first, then the values they cover, back to back.
    LengthView incoming_lengths(Kokkos::view_alloc(space, Kokkos::WithoutInitializing,
                                                   "loom::distribute::incoming_lengths"),
                                received);
    alltoallv_views(space, ranks, sorted.lengths, send_counts, incoming_lengths, recv_counts,
                    sizeof(std::int64_t));
    std::vector<std::int64_t> send_values, recv_values;
    auto const send_offsets = compact_offsets(space, sorted.lengths, send_counts, send_values);
    auto const recv_offsets = compact_offsets(space, incoming_lengths, recv_counts, recv_values);
    std::int64_t send_total = 0, recv_total = 0;
    for (auto v : send_values)
      send_total += v;
    for (auto v : recv_values)
      recv_total += v;
    using Buffer = Kokkos::View<T*, MemSpace>;
    Buffer send_buffer(
        Kokkos::view_alloc(space, Kokkos::WithoutInitializing, "loom::distribute::send_values"),
        send_total);
    Buffer recv_buffer(
        Kokkos::view_alloc(space, Kokkos::WithoutInitializing, "loom::distribute::recv_values"),
        recv_total);
    Kokkos::parallel_for("loom::distribute::pack",
                         Policy(space, 0, static_cast<std::int64_t>(sorted.rows.extent(0))),
                         DistributeCompact<RowsView, Buffer, LengthView, LengthView, true>{
                             sorted.rows, send_buffer, send_offsets, sorted.lengths});
    alltoallv_views(space, ranks, send_buffer, send_values, recv_buffer, recv_values, sizeof(T));
    Kokkos::parallel_for("loom::distribute::unpack", Policy(space, 0, received),
                         DistributeCompact<RowsView, Buffer, LengthView, LengthView, false>{
                             incoming, recv_buffer, recv_offsets, incoming_lengths});
  }
  return incoming;
}

/// The received rows regrouped by local rank: local rank l gets, for each source process p in
/// order, p's rows for l (`recv_rank_counts[p * local + l]` of them, in `incoming` in process
/// order, then local rank order).
template <class ExecSpace, class T>
Distributed<T, typename ExecSpace::memory_space> group_by_local_rank(
    ExecSpace const& space,
    Kokkos::View<T**, Kokkos::LayoutRight, typename ExecSpace::memory_space> const& incoming,
    std::vector<std::int64_t> const& recv_rank_counts, int processes, int local) {
  using RowsView = Kokkos::View<T**, Kokkos::LayoutRight, typename ExecSpace::memory_space>;
  Distributed<T, typename ExecSpace::memory_space> result;
  result.offsets.assign(local + 1, 0);
  for (int l = 0; l < local; ++l) {
    result.offsets[l + 1] = result.offsets[l];
    for (int p = 0; p < processes; ++p)
      result.offsets[l + 1] += recv_rank_counts[p * local + l];
  }
  if (local == 1) {
    result.rows = incoming;
    return result;
  }
  result.rows =
      RowsView(Kokkos::view_alloc(space, Kokkos::WithoutInitializing, "loom::distribute::rows"),
               incoming.extent(0), incoming.extent(1));
  std::int64_t from = 0;
  std::vector<std::int64_t> cursor(result.offsets.begin(), result.offsets.end() - 1);
  for (int p = 0; p < processes; ++p)
    for (int l = 0; l < local; ++l) {
      std::int64_t const count = recv_rank_counts[p * local + l];
      if (count) {
        auto src = Kokkos::subview(incoming, Kokkos::make_pair(from, from + count), Kokkos::ALL);
        auto dst = Kokkos::subview(result.rows, Kokkos::make_pair(cursor[l], cursor[l] + count),
                                   Kokkos::ALL);
        Kokkos::deep_copy(space, dst, src);
      }
      from += count;
      cursor[l] += count;
    }
  return result;
}

/// What a distribute's exchange needs besides the rows: the rows to and from each process,
/// and from each (process, local rank).
struct ExchangeCounts {
  std::vector<std::int64_t> send_counts, recv_counts, recv_rank_counts;
  std::int64_t received = 0; ///< rows this process receives
};

/// Collective (several processes): the counts of rows sorted by destination rank (`starts`:
/// the first row of each of the `size` ranks, then the end), exchanged with the other
/// processes.
inline ExchangeCounts exchange_counts(Ranks const& ranks, std::vector<std::int64_t> const& starts) {
  int const size = ranks.size(), local = ranks.local_count();
  int const processes = ranks.process_count();
  std::vector<std::int64_t> send_rank_counts(size);
  ExchangeCounts counts;
  counts.recv_rank_counts.assign(size, 0);
  for (int d = 0; d < size; ++d)
    send_rank_counts[d] = starts[d + 1] - starts[d];
  ranks.alltoall_bytes(send_rank_counts.data(), counts.recv_rank_counts.data(),
                       local * sizeof(std::int64_t));
  counts.send_counts.assign(processes, 0);
  counts.recv_counts.assign(processes, 0);
  for (int p = 0; p < processes; ++p)
    for (int l = 0; l < local; ++l) {
      counts.send_counts[p] += send_rank_counts[p * local + l];
      counts.recv_counts[p] += counts.recv_rank_counts[p * local + l];
      counts.received += counts.recv_rank_counts[p * local + l];
    }
  return counts;
}

/// index(i, 0) = i.
template <class ExecSpace, class Index>
void fill_row_indices(ExecSpace const& space, Index const& index) {
  Kokkos::parallel_for(
      "loom::Distributor::row_indices",
      Kokkos::RangePolicy<ExecSpace, Kokkos::IndexType<std::int64_t>>(space, 0, index.extent(0)),
      KOKKOS_LAMBDA(std::int64_t i) { index(i, 0) = i; });
}

/// Row i of a rows view as a row function (Distributor::distribute).
template <class Rows>
struct RowsOf {
  Rows rows;
  KOKKOS_INLINE_FUNCTION typename Rows::value_type operator()(std::int64_t i,
                                                              std::int64_t c) const {
    return rows(i, c);
  }
};

/// The rows source(k) of the row function `row` (`cols` columns), in that order.
template <class T, class ExecSpace, class RowFunction, class Source>
Kokkos::View<T**, Kokkos::LayoutRight, typename ExecSpace::memory_space>
gather_rows(ExecSpace const& space, std::int64_t cols, RowFunction const& row,
            Source const& source) {
  std::int64_t const count = static_cast<std::int64_t>(source.extent(0));
  Kokkos::View<T**, Kokkos::LayoutRight, typename ExecSpace::memory_space> out(
      Kokkos::view_alloc(space, Kokkos::WithoutInitializing, "loom::Distributor::sorted"), count,
      cols);
  Kokkos::parallel_for(
      "loom::Distributor::gather",
      Kokkos::RangePolicy<ExecSpace, Kokkos::IndexType<std::int64_t>>(space, 0, count),
      KOKKOS_LAMBDA(std::int64_t k) {
        std::int64_t const from = source(k);
        for (std::int64_t c = 0; c < cols; ++c)
          out(k, c) = row(from, c);
      });
  return out;
}

} // namespace detail

/// Sends row i of `rows` ([n, cols], this process's rows) to global rank `dest(i)` (-1: drop
/// it). Collective over the processes of `ranks`; a destination outside [-1, size) on any
/// process makes every process throw the same loom::Error. Rows between local ranks of one
/// process never go through MPI. Deterministic: the order of the result depends only on the
/// inputs.
///
/// With `lengths` (one per row, in [0, cols]), only the first lengths(i) values of row i are
/// sent: a received row holds them, and what follows them is unspecified. Rows of varying
/// length then cost what they hold, not the widest row, in memory traffic and over MPI (the
/// lengths travel with them: one more integer per row).
template <class ExecSpace, class T, class DestView, class Lengths = std::nullptr_t>
Distributed<T, typename ExecSpace::memory_space>
distribute(ExecSpace const& space, Ranks const& ranks, DestView const& dest,
           Kokkos::View<T**, Kokkos::LayoutRight, typename ExecSpace::memory_space> const& rows,
           Lengths const& lengths = nullptr) {
  static_assert(Kokkos::SpaceAccessibility<ExecSpace, typename DestView::memory_space>::accessible,
                "loom::distribute: dest must be accessible from the execution space");
  sdot::compat::ScopedRegion region("loom::distribute");
  int const size = ranks.size();
  int const local = ranks.local_count();
  int const processes = ranks.process_count();
  auto const given_lengths =
      detail::checked_lengths(space, ranks, dest, static_cast<std::int64_t>(rows.extent(0)),
                              static_cast<std::int64_t>(rows.extent(1)), lengths);
  auto const sorted = detail::sort_by_destination(space, size, dest, rows, given_lengths);
  if (processes == 1) { // every destination is a local rank: sorted is the answer
    Distributed<T, typename ExecSpace::memory_space> result;
    result.rows = sorted.rows;
    result.offsets.assign(sorted.starts.begin(), sorted.starts.begin() + local + 1);
    return result;
  }
  // Rows per (destination process, its local rank), then the rows themselves.
  auto const counts = detail::exchange_counts(ranks, sorted.starts);
  constexpr bool partial = !std::is_same_v<Lengths, std::nullptr_t>;
  auto const incoming = detail::exchange_sorted_rows<ExecSpace, T, partial>(
      space, ranks, sorted, counts.send_counts, counts.recv_counts, counts.received);
  return detail::group_by_local_rank(space, incoming, counts.recv_rank_counts, processes, local);
}

/// The plan of a distribute() that runs again and again with the same destinations (Cabana's
/// Distributor): built once from `dest`, it keeps each sent row's source row, the counts per
/// rank and their exchange, and distribute(rows) then sends any payload of whole rows with
/// one gather and one all-to-all, no sort and no exchange of counts. The result is that of
/// loom::distribute(space, ranks, dest, rows), bit for bit.
template <class ExecSpace>
class Distributor {
public:
  using memory_space = typename ExecSpace::memory_space; ///< where the rows live

  /// Collective over the processes of `ranks`: a destination outside [-1, size) on any process
  /// makes every process throw the same loom::Error. `dest` may change after: the plan keeps
  /// what it needs.
  template <class DestView>
  Distributor(ExecSpace const& space, Ranks ranks, DestView const& dest)
      : space_(space), ranks_(std::move(ranks)) {
    static_assert(
        Kokkos::SpaceAccessibility<ExecSpace, typename DestView::memory_space>::accessible,
        "loom::Distributor: dest must be accessible from the execution space");
    sdot::compat::ScopedRegion region("loom::Distributor");
    std::int64_t const n = static_cast<std::int64_t>(dest.extent(0));
    rows_ = n;
    detail::checked_lengths(space, ranks_, dest, n, 1, nullptr);
    // The source row of each sent row: the stable sort of the row indices by destination.
    Kokkos::View<std::int64_t**, Kokkos::LayoutRight, memory_space> index(
        Kokkos::view_alloc(space, Kokkos::WithoutInitializing, "loom::Distributor::index"), n, 1);
    detail::fill_row_indices(space, index);
    auto const sorted = detail::sort_by_destination(space, ranks_.size(), dest, index,
                                                    Kokkos::View<std::int64_t*, memory_space>());
    source_ = Kokkos::subview(sorted.rows, Kokkos::ALL, 0);
    if (ranks_.process_count() == 1)
      offsets_.assign(sorted.starts.begin(), sorted.starts.begin() + ranks_.local_count() + 1);
    else
      counts_ = detail::exchange_counts(ranks_, sorted.starts);
  }

  /// Collective: row i of `rows` ([n, cols], n the plan's rows) to global rank dest(i), as
  /// loom::distribute does.
  template <class T>
  Distributed<T, memory_space>
  distribute(Kokkos::View<T**, Kokkos::LayoutRight, memory_space> const& rows) const {
    ranks_.agree(static_cast<std::int64_t>(rows.extent(0)) == rows_,
                 "loom::Distributor::distribute: the rows differ in number from the plan's "
                 "destinations");
    return distribute<T>(
        static_cast<std::int64_t>(rows.extent(1)),
        detail::RowsOf<Kokkos::View<T**, Kokkos::LayoutRight, memory_space>>{rows});
  }

  /// Collective: the same for rows given by a function, `row(i, c)` the value of column c
  /// (of `cols`) of this process's row i, called in kernels: the rows are read where they lie
  /// (several arrays, say) and written once, in the order they are sent. Bit for bit
  /// distribute() of the rows the function gives.
  template <class T, class RowFunction>
  Distributed<T, memory_space> distribute(std::int64_t cols, RowFunction const& row) const {
    sdot::compat::ScopedRegion region("loom::Distributor::distribute");
    detail::SortedRows<T, memory_space> sorted;
    sorted.rows = detail::gather_rows<T>(space_, cols, row, source_);
    if (ranks_.process_count() == 1)
      return {sorted.rows, offsets_};
    auto const incoming = detail::exchange_sorted_rows<ExecSpace, T, false>(
        space_, ranks_, sorted, counts_.send_counts, counts_.recv_counts, counts_.received);
    return detail::group_by_local_rank(space_, incoming, counts_.recv_rank_counts,
                                       ranks_.process_count(), ranks_.local_count());
  }

private:
  ExecSpace space_;
  Ranks ranks_;
  std::int64_t rows_ = 0; ///< rows of the plan's destinations
  /// The source row of each sent row, in the order of the sent rows.
  Kokkos::View<std::int64_t*, Kokkos::LayoutStride, memory_space> source_;
  std::vector<std::int64_t> offsets_; ///< one process: the local ranks' rows
  detail::ExchangeCounts counts_;     ///< several processes
};

} // namespace loom
