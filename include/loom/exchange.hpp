#pragma once
/// @file
/// loom::exchange: sends rows packed by loom::route to their ranks; a dense all-to-all.

#include <loom/detail/alltoallv.hpp>
#include <loom/detail/segments.hpp>
#include <loom/ranks.hpp>
#include <loom/route.hpp>
#include <sdot/base/kokkos_compat.hpp>

#include <Kokkos_Core.hpp>

#include <cstdint>
#include <string>
#include <vector>

namespace loom {

namespace detail {

// Between two local ranks of this process: recv(m, first+l, s, c) = sent(l, first+m, s, c).
template <class Data>
struct ExchangeLocal {
  Data sent, recv;
  int local_count, first;
  KOKKOS_FUNCTION void operator()(std::int64_t p) const {
    int const cap = static_cast<int>(sent.extent(2)), cols = static_cast<int>(sent.extent(3));
    std::int64_t const per_pair = std::int64_t(cap) * cols;
    std::int64_t const pair = p / per_pair, e = p % per_pair;
    int const m = static_cast<int>(pair / local_count), l = static_cast<int>(pair % local_count);
    int const s = static_cast<int>(e / cols), c = static_cast<int>(e % cols);
    recv(m, first + l, s, c) = sent(l, first + m, s, c);
  }
};

// Copies rows between a [L, size, cap, cols] View and a contiguous [rows, cols] buffer, the
// rows of segment k (local rank seg_l(k), rank seg_j(k)) being seg_first(k) .. seg_first(k+1)-1.
template <class Data, class Buffer, class Index, bool Pack>
struct ExchangeCopy {
  Data data;
  Buffer buffer;
  Index seg_first, seg_l, seg_j;
  int segments;
  KOKKOS_FUNCTION void operator()(std::int64_t r) const {
    int const k = segment_of(seg_first, segments, r);
    int const s = static_cast<int>(r - seg_first(k));
    int const l = static_cast<int>(seg_l(k)), j = static_cast<int>(seg_j(k));
    for (std::int64_t c = 0; c < static_cast<std::int64_t>(data.extent(3)); ++c) {
      if constexpr (Pack)
        buffer(r, c) = data(l, j, s, c);
      else
        data(l, j, s, c) = buffer(r, c);
    }
  }
};

template <class ExecSpace, class Data, class Buffer, class Index, bool Pack>
void exchange_copy(ExecSpace const& space, char const* label, Data const& data,
                   Buffer const& buffer, std::vector<std::int64_t> const& first,
                   std::vector<std::int64_t> const& seg_l, std::vector<std::int64_t> const& seg_j) {
  std::int64_t const rows = first.back();
  if (rows == 0 || data.extent(3) == 0)
    return;
  auto first_d = to_device(space, first, "loom::exchange::seg_first");
  auto l_d = to_device(space, seg_l, "loom::exchange::seg_l");
  auto j_d = to_device(space, seg_j, "loom::exchange::seg_j");
  Kokkos::parallel_for(label, Kokkos::RangePolicy<ExecSpace>(space, 0, rows),
                       ExchangeCopy<Data, Buffer, Index, Pack>{data, buffer, first_d, l_d, j_d,
                                                               static_cast<int>(seg_l.size())});
}

/// The counts first: to each process q, a header (shape ok, capacity, columns) and the counts
/// [l][m] of local rank l to q's local rank m; returns every process's header for this one.
/// Every process checks every header, so each throws the same loom::Error on a mismatch.
template <class Counts>
std::vector<std::int64_t> exchange_headers(Ranks const& ranks, Counts const& sent_counts,
                                           bool shape_ok, std::int64_t cap, std::int64_t cols) {
  int const L = ranks.local_count(), P = ranks.process_count();
  std::int64_t const block = 3 + std::int64_t(L) * L;
  std::vector<std::int64_t> head_out(block * P), head_in(block * P);
  for (int q = 0; q < P; ++q) {
    std::int64_t* h = &head_out[block * q];
    h[0] = shape_ok, h[1] = cap, h[2] = cols;
    for (int l = 0; l < L; ++l)
      for (int m = 0; m < L; ++m)
        h[3 + l * L + m] = shape_ok ? sent_counts(l, q * L + m) : 0;
  }
  ranks.alltoall_bytes(head_out.data(), head_in.data(), sizeof(std::int64_t) * block);
  for (int p = 0; p < P; ++p) {
    std::int64_t const* h = &head_in[block * p];
    if (!h[0])
      throw Error("loom::exchange: process " + std::to_string(p) +
                      " passed data that is not [local_count, size, capacity, cols]",
                  true);
    if (h[1] != cap || h[2] != cols)
      throw Error("loom::exchange: the processes passed different capacities or columns", true);
  }
  return head_in;
}

/// The non-empty segments between this process and the others: sent in the order (process
/// q, local rank l, q's local rank m), received in the order (process p, p's local rank l,
/// local rank m); each with its first row in the buffer, its local rank and its other rank,
/// and the rows per process.
struct ExchangeSegments {
  std::vector<std::int64_t> send_first{0}, send_l, send_j, recv_first{0}, recv_l, recv_j;
  std::vector<std::int64_t> send_n, recv_n;
};

/// The segments of an exchange from the counts sent and the headers received (which also give
/// the counts received from other processes, written into `recv_counts`).
template <class Counts, class RecvCounts>
ExchangeSegments plan_segments(Ranks const& ranks, Counts const& sent_counts,
                               std::vector<std::int64_t> const& head_in,
                               RecvCounts const& recv_counts) {
  int const L = ranks.local_count(), P = ranks.process_count(), me = ranks.process_rank();
  std::int64_t const block = 3 + std::int64_t(L) * L;
  ExchangeSegments seg;
  seg.send_n.assign(P, 0);
  seg.recv_n.assign(P, 0);
  for (int q = 0; q < P; ++q) {
    if (q == me)
      continue;
    for (int l = 0; l < L; ++l)
      for (int m = 0; m < L; ++m) {
        std::int64_t const ns = sent_counts(l, q * L + m);
        if (ns > 0) {
          seg.send_l.push_back(l), seg.send_j.push_back(q * L + m);
          seg.send_first.push_back(seg.send_first.back() + ns), seg.send_n[q] += ns;
        }
        std::int64_t const nr = head_in[block * q + 3 + l * L + m];
        recv_counts(m, q * L + l) = static_cast<int>(nr);
        if (nr > 0) {
          seg.recv_l.push_back(m), seg.recv_j.push_back(q * L + l);
          seg.recv_first.push_back(seg.recv_first.back() + nr), seg.recv_n[q] += nr;
        }
      }
  }
  return seg;
}

} // namespace detail

/// Sends what loom::route packed: returns data [local_count, size, capacity, cols] and counts
/// [local_count, size] where `data(l, j, ...)` holds the rows rank j sent to local rank l
/// (-1 beyond `counts(l, j)`). Collective.
///
/// Counts travel first (an all-to-all of local_count^2 integers per process pair), then only
/// the rows that exist: the rows for other processes are packed by a kernel into one
/// contiguous buffer and sent with MPI_Alltoallv (staged through host memory, or handed to
/// MPI directly when built with LOOM_ENABLE_GPU_AWARE_MPI); rows between two local ranks of
/// one process (all of them under BoxRanks, self-sends under MPI) never go through MPI: a
/// device copy kernel moves them. Every process must pass the same capacity and columns,
/// otherwise every process throws the same collective loom::Error.
template <class ExecSpace, class T, class MemSpace>
Routed<T, MemSpace> exchange(ExecSpace const& space, Ranks const& ranks,
                             Routed<T, MemSpace> const& sent) {
  static_assert(Kokkos::SpaceAccessibility<ExecSpace, MemSpace>::accessible,
                "loom::exchange: the data must be accessible from the execution space");
  sdot::compat::ScopedRegion region("loom::exchange");
  int const L = ranks.local_count(), S = ranks.size(), P = ranks.process_count();
  int const first = ranks.first_local();
  std::int64_t const cap = sent.data.extent(2), cols = sent.data.extent(3);

  bool const shape_ok =
      static_cast<int>(sent.data.extent(0)) == L && static_cast<int>(sent.data.extent(1)) == S &&
      static_cast<int>(sent.counts.extent(0)) == L && static_cast<int>(sent.counts.extent(1)) == S;
  if (P == 1 && !shape_ok)
    throw Error("loom::exchange: data is not [local_count, size, capacity, cols]", true);

  Routed<T, MemSpace> recv;
  recv.data = decltype(recv.data)(
      Kokkos::view_alloc(space, Kokkos::WithoutInitializing, "loom::exchange::data"), L, S, cap,
      cols);
  recv.counts = decltype(recv.counts)(
      Kokkos::view_alloc(space, Kokkos::WithoutInitializing, "loom::exchange::counts"), L, S);
  Kokkos::deep_copy(space, recv.data, T(-1));

  // Rows between local ranks of this process.
  if (shape_ok)
    Kokkos::parallel_for(
        "loom::exchange::local",
        Kokkos::RangePolicy<ExecSpace>(space, 0, std::int64_t(L) * L * cap * cols),
        detail::ExchangeLocal<decltype(recv.data)>{sent.data, recv.data, L, first});

  auto sent_counts = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), sent.counts);
  auto recv_counts = sdot::compat::host_mirror_no_init(recv.counts);
  for (int m = 0; m < L; ++m)
    for (int j = 0; j < S; ++j)
      recv_counts(m, j) = 0;
  for (int l = 0; l < L; ++l)
    for (int m = 0; m < L; ++m)
      recv_counts(m, first + l) = shape_ok ? sent_counts(l, first + m) : 0;

  if (P > 1) {
    auto const head_in = detail::exchange_headers(ranks, sent_counts, shape_ok, cap, cols);
    auto const seg = detail::plan_segments(ranks, sent_counts, head_in, recv_counts);
    using Buffer = Kokkos::View<T**, Kokkos::LayoutRight, MemSpace>;
    using Index = Kokkos::View<std::int64_t*, MemSpace>;
    Buffer send_buf(Kokkos::view_alloc(space, Kokkos::WithoutInitializing, "loom::exchange::send"),
                    seg.send_first.back(), cols);
    Buffer recv_buf(Kokkos::view_alloc(space, Kokkos::WithoutInitializing, "loom::exchange::recv"),
                    seg.recv_first.back(), cols);
    detail::exchange_copy<ExecSpace, decltype(sent.data), Buffer, Index, true>(
        space, "loom::exchange::pack", sent.data, send_buf, seg.send_first, seg.send_l, seg.send_j);
    detail::alltoallv_views(space, ranks, send_buf, seg.send_n, recv_buf, seg.recv_n,
                            sizeof(T) * cols);
    detail::exchange_copy<ExecSpace, decltype(recv.data), Buffer, Index, false>(
        space, "loom::exchange::unpack", recv.data, recv_buf, seg.recv_first, seg.recv_l,
        seg.recv_j);
  }
  Kokkos::deep_copy(space, recv.counts, recv_counts);
  space.fence(); // recv_counts (a host mirror) may go away once we return
  return recv;
}

/// loom::exchange on the default execution space of the data's memory space.
template <class T, class MemSpace>
Routed<T, MemSpace> exchange(Ranks const& ranks, Routed<T, MemSpace> const& sent) {
  return exchange(typename MemSpace::execution_space(), ranks, sent);
}

namespace detail {
template <class Dense, class Data, bool ToData>
struct DenseCopy {
  Dense dense; // [L, size, m]
  Data data;   // [L, size, m, 1]
  KOKKOS_FUNCTION void operator()(std::int64_t p) const {
    std::int64_t const m = dense.extent(2), S = dense.extent(1);
    int const l = static_cast<int>(p / (S * m)), j = static_cast<int>(p / m % S);
    int const k = static_cast<int>(p % m);
    if constexpr (ToData)
      data(l, j, k, 0) = dense(l, j, k);
    else
      dense(l, j, k) = data(l, j, k, 0);
  }
};
} // namespace detail

/// Dense all-to-all: `buf` is [local_count, size, m] (buf(l, j, ...) goes to rank j); returns
/// [local_count, size, m] where out(l, j, ...) is what rank j sent to local rank l. Collective.
template <class ExecSpace, class View>
Kokkos::View<typename View::non_const_value_type***, Kokkos::LayoutRight,
             typename ExecSpace::memory_space>
exchange_dense(ExecSpace const& space, Ranks const& ranks, View const& buf) {
  using T = typename View::non_const_value_type;
  using MemSpace = typename ExecSpace::memory_space;
  static_assert(View::rank == 3, "loom::exchange_dense: buf is [local_count, size, m]");
  static_assert(Kokkos::SpaceAccessibility<ExecSpace, typename View::memory_space>::accessible,
                "loom::exchange_dense: buf must be accessible from the execution space");
  sdot::compat::ScopedRegion region("loom::exchange_dense");
  int const L = ranks.local_count(), S = ranks.size();
  std::int64_t const m = buf.extent(2);
  bool const ok = static_cast<int>(buf.extent(0)) == L && static_cast<int>(buf.extent(1)) == S;
  ranks.agree(ok, "loom::exchange_dense: buf is not [local_count, size, m]");
  Routed<T, MemSpace> sent;
  sent.data = decltype(sent.data)(
      Kokkos::view_alloc(space, Kokkos::WithoutInitializing, "loom::exchange_dense::sent"), L, S, m,
      1);
  sent.counts = decltype(sent.counts)(
      Kokkos::view_alloc(space, Kokkos::WithoutInitializing, "loom::exchange_dense::counts"), L, S);
  Kokkos::deep_copy(space, sent.counts, static_cast<int>(m));
  std::int64_t const total = std::int64_t(L) * S * m;
  Kokkos::parallel_for("loom::exchange_dense::in", Kokkos::RangePolicy<ExecSpace>(space, 0, total),
                       detail::DenseCopy<View, decltype(sent.data), true>{buf, sent.data});
  auto recv = exchange(space, ranks, sent);
  Kokkos::View<T***, Kokkos::LayoutRight, MemSpace> out(
      Kokkos::view_alloc(space, Kokkos::WithoutInitializing, "loom::exchange_dense::out"), L, S, m);
  Kokkos::parallel_for(
      "loom::exchange_dense::out", Kokkos::RangePolicy<ExecSpace>(space, 0, total),
      detail::DenseCopy<decltype(out), decltype(recv.data), false>{out, recv.data});
  return out;
}

/// loom::exchange_dense on the execution space of `buf`.
template <class View>
auto exchange_dense(Ranks const& ranks, View const& buf) {
  return exchange_dense(typename View::execution_space(), ranks, buf);
}

} // namespace loom
