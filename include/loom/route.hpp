#pragma once
/// @file
/// loom::route: packs rows by destination rank, for loom::exchange.

#include <loom/capacity.hpp>
#include <loom/detail/segments.hpp>
#include <loom/ranks.hpp>
#include <sdot/base/kokkos_compat.hpp>

#include <Kokkos_Core.hpp>

#include <cstdint>
#include <string>
#include <vector>

namespace loom {

/// Rows packed by destination: what loom::route makes and loom::exchange sends and returns.
///
/// `data(l, j, s, c)` is column c of slot s of the rows between local rank l and global rank
/// j (sent to j by route, received from j by exchange); slots at and beyond `counts(l, j)`
/// hold -1 (converted to T).
template <class T, class MemorySpace = Kokkos::DefaultExecutionSpace::memory_space>
struct Routed {
  using value_type = T;             ///< Type of the values in a row.
  using memory_space = MemorySpace; ///< Memory space of data and counts.
  /// [local_count, size, capacity, cols]
  Kokkos::View<T****, Kokkos::LayoutRight, MemorySpace> data;
  /// [local_count, size]: rows stored per (local rank, rank) pair (at most capacity).
  Kokkos::View<int**, Kokkos::LayoutRight, MemorySpace> counts;
  /// route: the largest number of rows for one (local rank, destination) pair on this process,
  /// including those dropped for lack of capacity. exchange: 0.
  std::int64_t needed = 0;

  /// Number of local ranks (extent 0 of data).
  int local_count() const { return static_cast<int>(data.extent(0)); }
  /// Number of global ranks (extent 1 of data).
  int size() const { return static_cast<int>(data.extent(1)); }
  /// Row slots per (local rank, rank) pair (extent 2 of data).
  int capacity() const { return static_cast<int>(data.extent(2)); }
  /// Values per row (extent 3 of data).
  int cols() const { return static_cast<int>(data.extent(3)); }
};

namespace detail {

// Rows are cut into chunks that never straddle two local ranks; chunk c belongs to the local
// rank found in `chunk_first` and covers rows [first, last) of that rank.
template <class Offsets>
struct Chunks {
  Offsets row_first;   // [L+1] first row of each local rank
  Offsets chunk_first; // [L+1] first chunk of each local rank
  int local_count;
  std::int64_t chunk_rows;

  KOKKOS_INLINE_FUNCTION void range(std::int64_t c, int& l, std::int64_t& first,
                                    std::int64_t& last) const {
    l = segment_of(chunk_first, local_count, c);
    first = row_first(l) + (c - chunk_first(l)) * chunk_rows;
    last = first + chunk_rows;
    if (last > row_first(l + 1))
      last = row_first(l + 1);
  }
};

// Pass 1: per chunk, rows per destination (serial within a chunk: no atomics); counts the
// destinations outside [-1, size).
template <class Dest, class Hist, class Offsets>
struct RouteCount {
  Dest dest;
  Hist hist; // [chunks, size]
  Chunks<Offsets> chunks;
  int size;
  KOKKOS_FUNCTION void operator()(std::int64_t c, std::int64_t& invalid) const {
    int l;
    std::int64_t first, last;
    chunks.range(c, l, first, last);
    for (std::int64_t i = first; i < last; ++i) {
      int const d = dest(i);
      if (d == -1)
        continue;
      if (d < 0 || d >= size)
        ++invalid;
      else
        ++hist(c, d);
    }
  }
};

// Pass 2: for each (local rank, destination), exclusive scan over the chunks of that local
// rank, in place; stores the stored count and reduces the largest total.
template <class Hist, class Counts, class Offsets>
struct RouteScan {
  Hist hist;
  Counts counts; // [L, size]
  Offsets chunk_first;
  int size;
  int capacity;
  KOKKOS_FUNCTION void operator()(std::int64_t p, std::int64_t& needed) const {
    int const l = static_cast<int>(p / size), d = static_cast<int>(p % size);
    int running = 0;
    for (std::int64_t c = chunk_first(l); c < chunk_first(l + 1); ++c) {
      int const t = hist(c, d);
      hist(c, d) = running;
      running += t;
    }
    counts(l, d) = running < capacity ? running : capacity;
    if (running > needed)
      needed = running;
  }
};

// Pass 3: places each row at its slot (input order within each destination); rows beyond
// the capacity are dropped.
template <class Dest, class Rows, class Hist, class Data, class Offsets>
struct RoutePlace {
  Dest dest;
  Rows rows;
  Hist hist;
  Data data; // [L, size, capacity, cols]
  Chunks<Offsets> chunks;
  int size;
  int capacity;
  std::int64_t cols;
  KOKKOS_FUNCTION void operator()(std::int64_t c) const {
    int l;
    std::int64_t first, last;
    chunks.range(c, l, first, last);
    for (std::int64_t i = first; i < last; ++i) {
      int const d = dest(i);
      if (d < 0 || d >= size)
        continue;
      int const s = hist(c, d)++;
      if (s < capacity)
        for (std::int64_t k = 0; k < cols; ++k)
          data(l, d, s, k) = row_at(rows, i, k);
    }
  }
};

} // namespace detail

/// Packs rows by destination rank (a kernel: the same code for every ranks type).
///
/// `rows` ([n] or [n, cols]) holds the rows of this process's local ranks, concatenated:
/// local rank l owns rows offsets[l] .. offsets[l+1]-1 (`offsets` has local_count()+1
/// entries; {0, n} under MpiRanks(comm)). `dest(i)` is the global rank row i goes to, -1 to
/// drop it. Returns data [local_count, size, capacity.value(), cols], -1 where empty, and
/// counts [local_count, size]. Rows keep their input order within each destination (a
/// counting sort: per-chunk counts, a scan over the chunks, then placement; no atomics).
/// Rows beyond the capacity are dropped, and the largest number of rows for one destination
/// is reported to `capacity` (see loom::spmd, which grows it and reruns).
///
/// Collective (one small agreement): a bad argument on any process (extents, offsets, a
/// destination outside [-1, size)) makes every process throw the same collective loom::Error.
template <class ExecSpace, class Dest, class Rows>
Routed<typename Rows::non_const_value_type, typename ExecSpace::memory_space>
route(ExecSpace const& space, Ranks const& ranks, Dest const& dest, Rows const& rows,
      std::vector<std::int64_t> const& offsets, Capacity const& capacity) {
  using T = typename Rows::non_const_value_type;
  using MemSpace = typename ExecSpace::memory_space;
  static_assert(Dest::rank == 1 && std::is_integral<typename Dest::non_const_value_type>::value,
                "loom::route: dest is a rank-1 View of integers");
  static_assert(Rows::rank == 1 || Rows::rank == 2, "loom::route: rows is [n] or [n, cols]");
  static_assert(Kokkos::SpaceAccessibility<ExecSpace, typename Dest::memory_space>::accessible &&
                    Kokkos::SpaceAccessibility<ExecSpace, typename Rows::memory_space>::accessible,
                "loom::route: dest and rows must be accessible from the execution space");
  sdot::compat::ScopedRegion region("loom::route");

  int const L = ranks.local_count(), S = ranks.size(), cap = capacity.value();
  std::int64_t const n = static_cast<std::int64_t>(rows.extent(0));
  std::int64_t const cols = detail::cols_of(rows);
  std::string problem;
  if (static_cast<std::int64_t>(dest.extent(0)) != n)
    problem = "dest has " + std::to_string(dest.extent(0)) + " entries for " + std::to_string(n) +
              " rows";
  else
    problem = detail::check_offsets(offsets, L, n);

  Routed<T, MemSpace> out;
  out.data = decltype(out.data)(
      Kokkos::view_alloc(space, Kokkos::WithoutInitializing, "loom::route::data"), L, S, cap,
      problem.empty() ? cols : 0);
  out.counts = decltype(out.counts)(Kokkos::view_alloc(space, "loom::route::counts"), L, S);

  std::int64_t invalid = 0;
  if (problem.empty()) {
    // Chunks of at most chunk_rows rows, never straddling two local ranks; the chunk size
    // bounds the per-chunk histogram to about 2^24 entries.
    std::int64_t chunk_rows = 256;
    while (chunk_rows * (std::int64_t(1) << 24) < n * S)
      chunk_rows *= 2;
    std::vector<std::int64_t> chunk_first(L + 1, 0);
    for (int l = 0; l < L; ++l)
      chunk_first[l + 1] =
          chunk_first[l] + (offsets[l + 1] - offsets[l] + chunk_rows - 1) / chunk_rows;
    std::int64_t const nchunks = chunk_first[L];
    auto row_first_d = detail::to_device(space, offsets, "loom::route::row_first");
    auto chunk_first_d = detail::to_device(space, chunk_first, "loom::route::chunk_first");
    using Offsets = decltype(row_first_d);
    detail::Chunks<Offsets> chunks{row_first_d, chunk_first_d, L, chunk_rows};
    Kokkos::View<int**, Kokkos::LayoutRight, MemSpace> hist(
        Kokkos::view_alloc(space, "loom::route::hist"), nchunks, S);

    Kokkos::parallel_reduce(
        "loom::route::count", Kokkos::RangePolicy<ExecSpace>(space, 0, nchunks),
        detail::RouteCount<Dest, decltype(hist), Offsets>{dest, hist, chunks, S}, invalid);
    if (invalid == 0) {
      Kokkos::deep_copy(space, out.data, T(-1));
      std::int64_t needed = 0;
      Kokkos::parallel_reduce("loom::route::scan",
                              Kokkos::RangePolicy<ExecSpace>(space, 0, std::int64_t(L) * S),
                              detail::RouteScan<decltype(hist), decltype(out.counts), Offsets>{
                                  hist, out.counts, chunk_first_d, S, cap},
                              Kokkos::Max<std::int64_t>(needed));
      Kokkos::parallel_for(
          "loom::route::place", Kokkos::RangePolicy<ExecSpace>(space, 0, nchunks),
          detail::RoutePlace<Dest, Rows, decltype(hist), decltype(out.data), Offsets>{
              dest, rows, hist, out.data, chunks, S, cap, cols});
      out.needed = needed;
    } else {
      problem = std::to_string(invalid) +
                " destinations outside [-1, size() = " + std::to_string(S) + ")";
    }
  }
  ranks.agree(problem.empty(), "loom::route: " + problem);
  capacity.report(out.needed);
  return out;
}

/// loom::route on the execution space of `rows`.
template <class Dest, class Rows>
Routed<typename Rows::non_const_value_type, typename Rows::execution_space::memory_space>
route(Ranks const& ranks, Dest const& dest, Rows const& rows,
      std::vector<std::int64_t> const& offsets, Capacity const& capacity) {
  return route(typename Rows::execution_space(), ranks, dest, rows, offsets, capacity);
}

} // namespace loom
