#pragma once
/// @file
/// loom::Halo: the plan of the exchange that brings, into a vector whose rows are split over
/// the processes (RowBlocks), the rows of other processes that this process references, for
/// example the columns of its rows of a sparse matrix. Built once, run at every product.

#include <loom/detail/alltoallv.hpp>
#include <loom/detail/segments.hpp>
#include <loom/error.hpp>
#include <loom/ranks.hpp>
#include <loom/row_blocks.hpp>
#include <sdot/base/kokkos_compat.hpp>

#include <Kokkos_Core.hpp>

#include <algorithm>
#include <array>
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

namespace loom {

namespace detail {

/// Writes into `extended_columns` the row of each global column of `global_columns` in an
/// extended vector (see Halo): j − begin for a row [begin, end) of this process, and
/// (end − begin) + its slot in `remote_columns` (sorted) for a halo row. A free function: CUDA
/// forbids device lambdas in constructors.
template <class ExecutionSpace, class MemorySpace>
void number_extended_columns(ExecutionSpace const& space,
                             Kokkos::View<int const*, MemorySpace> global_columns, int begin,
                             int end, Kokkos::View<int const*, MemorySpace> remote_columns,
                             Kokkos::View<int*, MemorySpace> extended_columns) {
  int const local_size = end - begin;
  int const nremote = static_cast<int>(remote_columns.extent(0));
  Kokkos::parallel_for(
      "loom::Halo::extended_columns",
      Kokkos::RangePolicy<ExecutionSpace>(space, 0, global_columns.extent(0)),
      KOKKOS_LAMBDA(int e) {
        int const j = global_columns(e);
        if (j >= begin && j < end) {
          extended_columns(e) = j - begin;
        } else {
          int lo = 0, hi = nremote; // first slot with remote_columns(slot) >= j
          while (lo < hi) {
            int const mid = (lo + hi) / 2;
            if (remote_columns(mid) < j)
              lo = mid + 1;
            else
              hi = mid;
          }
          extended_columns(e) = local_size + lo;
        }
      });
}

/// send(k, ·) = from(rows(k), ·), k < rows.extent(0).
template <class ExecutionSpace, class From, class Buffer, class Rows>
void pack_halo_rows(ExecutionSpace const& space, From const& from, Rows const& rows,
                    Buffer const& send) {
  int const components = static_cast<int>(send.extent(1));
  Kokkos::parallel_for(
      "loom::Halo::pack", Kokkos::RangePolicy<ExecutionSpace>(space, 0, rows.extent(0)),
      KOKKOS_LAMBDA(int k) {
        for (int c = 0; c < components; ++c)
          send(k, c) = detail::row_at(from, rows(k), c);
      });
}

/// to(offset + k, ·) = recv(k, ·), k < recv.extent(0).
template <class ExecutionSpace, class To, class Buffer>
void unpack_halo_rows(ExecutionSpace const& space, Buffer const& recv, To const& to, int offset) {
  int const components = static_cast<int>(recv.extent(1));
  Kokkos::parallel_for(
      "loom::Halo::unpack", Kokkos::RangePolicy<ExecutionSpace>(space, 0, recv.extent(0)),
      KOKKOS_LAMBDA(int k) {
        for (int c = 0; c < components; ++c)
          detail::row_at(to, offset + k, c) = recv(k, c);
      });
}

} // namespace detail

/// The rows owned by other processes that this process's matrix references ("halo"), and how
/// to bring them. A vector with halo (an "extended" vector) has n_local + size() rows: this
/// process's rows, then the halo rows in increasing global order.
///
/// The plan is built once per matrix (collective); update() then moves only the values
/// needed, with one MPI_Alltoallv staged through host memory. With one process there is no
/// halo and update() does nothing.
template <class ExecutionSpace>
class Halo {
public:
  using memory_space = typename ExecutionSpace::memory_space; ///< where the plan's arrays live

  /// An empty plan (one process, no row).
  Halo() = default;

  /// Collective. `global_columns`: global row indices referenced by this process (any order,
  /// repeats allowed, all in [0, N)). Writes into `extended_columns` (same length) the row of
  /// each in an extended vector.
  Halo(ExecutionSpace const& space, Ranks const& ranks, RowBlocks const& blocks,
       Kokkos::View<int const*, memory_space> global_columns,
       Kokkos::View<int*, memory_space> extended_columns)
      : ranks_(ranks), local_size_(blocks.local_size()) {
    sdot::compat::ScopedRegion region("loom::Halo::build");
    int const n = static_cast<int>(global_columns.extent(0));
    int const begin = static_cast<int>(blocks.begin()), end = static_cast<int>(blocks.end());
    // Remote columns, unique and sorted: they are grouped by owner since blocks are ordered.
    std::vector<int> remote;
    if (blocks.process_count() > 1) {
      auto host = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), global_columns);
      for (int e = 0; e < n; ++e)
        if (host(e) < begin || host(e) >= end)
          remote.push_back(host(e));
      std::sort(remote.begin(), remote.end());
      remote.erase(std::unique(remote.begin(), remote.end()), remote.end());
    }
    remote_columns_ = Kokkos::View<int*, memory_space>(
        Kokkos::view_alloc(space, Kokkos::WithoutInitializing, "loom::Halo::remote_columns"),
        remote.size());
    {
      Kokkos::View<int*, Kokkos::HostSpace, Kokkos::MemoryTraits<Kokkos::Unmanaged>> h(
          remote.data(), remote.size());
      Kokkos::deep_copy(space, remote_columns_, h);
      space.fence();
    }
    detail::number_extended_columns(space, global_columns, begin, end,
                                    Kokkos::View<int const*, memory_space>(remote_columns_),
                                    extended_columns);
    int const P = blocks.process_count();
    recv_counts_.assign(P, 0);
    send_counts_.assign(P, 0);
    if (P == 1)
      return;
    for (int j : remote)
      ++recv_counts_[blocks.owner(j)];
    ranks.alltoall_bytes(recv_counts_.data(), send_counts_.data(), sizeof(std::int64_t));
    std::int64_t total_send = 0;
    for (auto c : send_counts_)
      total_send += c;
    std::vector<int> wanted(total_send);
    ranks.alltoallv_bytes(remote.data(), recv_counts_, wanted.data(), send_counts_, sizeof(int));
    bool ok = true;
    for (int& j : wanted) {
      ok = ok && j >= begin && j < end;
      j -= begin;
    }
    ranks.agree(ok, "loom::Halo: a process asked for a row another process does not hold");
    send_rows_ = Kokkos::View<int*, memory_space>(
        Kokkos::view_alloc(space, Kokkos::WithoutInitializing, "loom::Halo::send_rows"),
        wanted.size());
    Kokkos::View<int*, Kokkos::HostSpace, Kokkos::MemoryTraits<Kokkos::Unmanaged>> h(wanted.data(),
                                                                                     wanted.size());
    Kokkos::deep_copy(space, send_rows_, h);
    space.fence();
  }

  /// Rows of the halo.
  int size() const { return static_cast<int>(remote_columns_.extent(0)); }
  /// Rows of this process.
  int local_size() const { return static_cast<int>(local_size_); }
  /// Global row of each halo row.
  Kokkos::View<int*, memory_space> remote_columns() const { return remote_columns_; }

  /// Collective: fills the halo rows of the extended vector `extended` (rank 1 or 2, with
  /// local_size() + size() rows) from the processes that own them.
  template <class View>
  void update(ExecutionSpace const& space, View const& extended) const {
    move(space, extended, extended, local_size());
  }

  /// Collective: writes into `remote` (size() rows) the halo rows, read from the `local` rows
  /// (local_size() of them, rank 1 or 2 as `remote`) of the processes that own them.
  template <class Local, class Remote>
  void fetch(ExecutionSpace const& space, Local const& local, Remote const& remote) const {
    move(space, local, remote, 0);
  }

private:
  /// Collective: row `offset` + k of `to` receives, for halo row k, the row of `from` that its
  /// owner holds.
  template <class From, class To>
  void move(ExecutionSpace const& space, From const& from, To const& to, int offset) const {
    static_assert(int(From::rank) == int(To::rank) && (From::rank == 1 || From::rank == 2),
                  "loom::Halo: vectors of rank 1 or 2, the same on both sides");
    static_assert(
        Kokkos::SpaceAccessibility<ExecutionSpace, typename From::memory_space>::accessible &&
            Kokkos::SpaceAccessibility<ExecutionSpace, typename To::memory_space>::accessible,
        "loom::Halo: the vectors must be accessible from the execution space");
    if (ranks_.process_count() == 1)
      return;
    sdot::compat::ScopedRegion region("loom::Halo::update");
    int const components = From::rank == 1 ? 1 : static_cast<int>(from.extent(1));
    int const nsend = static_cast<int>(send_rows_.extent(0));
    int const nrecv = size();
    if (static_cast<int>(send_.extent(1)) != components) { // kept for the next updates
      send_ = Buffer(Kokkos::view_alloc(space, Kokkos::WithoutInitializing, "loom::Halo::send"),
                     nsend, components);
      recv_ = Buffer(Kokkos::view_alloc(space, Kokkos::WithoutInitializing, "loom::Halo::recv"),
                     nrecv, components);
      send_host_ = sdot::compat::host_mirror_no_init(send_);
      recv_host_ = sdot::compat::host_mirror_no_init(recv_);
    }
    detail::pack_halo_rows(space, from, send_rows_, send_);
    detail::alltoallv_views(space, ranks_, send_, send_counts_, recv_, recv_counts_,
                            sizeof(double) * components, send_host_, recv_host_);
    detail::unpack_halo_rows(space, recv_, to, offset);
    space.fence(); // the caller's next kernels may run on another instance
  }

  using Buffer = Kokkos::View<double**, Kokkos::LayoutRight, memory_space>;
  Ranks ranks_;
  std::int64_t local_size_ = 0;
  Kokkos::View<int*, memory_space> remote_columns_;
  Kokkos::View<int*, memory_space> send_rows_;
  std::vector<std::int64_t> send_counts_, recv_counts_;
  // The exchange's buffers, allocated by the first update (and again when the number of
  // components changes), reused by the next ones.
  mutable Buffer send_, recv_;
  using HostBuffer = decltype(sdot::compat::host_mirror_no_init(std::declval<Buffer>()));
  mutable HostBuffer send_host_, recv_host_;
};

} // namespace loom
