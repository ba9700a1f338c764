#pragma once
// Rows of a vector spread over processes in consecutive blocks, deterministic global sums,
// and the halo exchange that brings the rows owned by other processes that a sparse matrix
// of this process references.

#include <loom/error.hpp>
#include <loom/ranks.hpp>
#include <sdot/base/kokkos_compat.hpp>

#include <Kokkos_Core.hpp>

#include <algorithm>
#include <array>
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

namespace sdot::detail {

/// How N rows are split over the processes: process p holds the global rows
/// [offsets[p], offsets[p+1]), in order.
struct RowBlocks {
  std::vector<std::int64_t> offsets{0, 0};
  int process = 0;

  std::int64_t begin() const { return offsets[process]; }
  std::int64_t end() const { return offsets[process + 1]; }
  std::int64_t local_size() const { return end() - begin(); }
  std::int64_t global_size() const { return offsets.back(); }
  int process_count() const { return static_cast<int>(offsets.size()) - 1; }
  /// Process holding global row j (0 ≤ j < global_size()).
  int owner(std::int64_t j) const {
    auto it = std::upper_bound(offsets.begin(), offsets.end(), j);
    return static_cast<int>(it - offsets.begin()) - 1;
  }

  /// Collective: the blocks of every process, this one holding `local_size` rows.
  static RowBlocks gather(loom::Ranks const& ranks, std::int64_t local_size) {
    RowBlocks blocks;
    auto sizes = ranks.allgather(std::vector<std::int64_t>{local_size});
    blocks.offsets.assign(1, 0);
    for (auto s : sizes)
      blocks.offsets.push_back(blocks.offsets.back() + s);
    blocks.process = ranks.process_rank();
    return blocks;
  }
};

/// Collective: element-wise sums over the processes of `partial`, added in process order on
/// every process, so that every process gets the same bits whatever the reduction order of MPI.
template <std::size_t K>
std::array<double, K> global_sums(loom::Ranks const& ranks, std::array<double, K> const& partial) {
  if (ranks.process_count() == 1)
    return partial;
  auto all = ranks.allgather(std::vector<double>(partial.begin(), partial.end()));
  std::array<double, K> sums{};
  for (int p = 0; p < ranks.process_count(); ++p)
    for (std::size_t k = 0; k < K; ++k)
      sums[k] += all[p * K + k];
  return sums;
}

inline double global_sum(loom::Ranks const& ranks, double partial) {
  return global_sums<1>(ranks, {partial})[0];
}

inline double global_max(loom::Ranks const& ranks, double partial) {
  if (ranks.process_count() == 1)
    return partial;
  auto all = ranks.allgather(std::vector<double>{partial});
  return *std::max_element(all.begin(), all.end());
}

inline double global_min(loom::Ranks const& ranks, double partial) {
  if (ranks.process_count() == 1)
    return partial;
  auto all = ranks.allgather(std::vector<double>{partial});
  return *std::min_element(all.begin(), all.end());
}

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
      "sdot::Halo::extended_columns",
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
  using memory_space = typename ExecutionSpace::memory_space;

  Halo() = default;

  /// Collective. `global_columns`: global row indices referenced by this process (any order,
  /// repeats allowed, all in [0, N)). Writes into `extended_columns` (same length) the row of
  /// each in an extended vector.
  Halo(ExecutionSpace const& space, loom::Ranks const& ranks, RowBlocks const& blocks,
       Kokkos::View<int const*, memory_space> global_columns,
       Kokkos::View<int*, memory_space> extended_columns)
      : ranks_(ranks), local_size_(blocks.local_size()) {
    sdot::compat::ScopedRegion region("sdot::Halo::build");
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
        Kokkos::view_alloc(space, Kokkos::WithoutInitializing, "sdot::Halo::remote_columns"),
        remote.size());
    {
      Kokkos::View<int*, Kokkos::HostSpace, Kokkos::MemoryTraits<Kokkos::Unmanaged>> h(
          remote.data(), remote.size());
      Kokkos::deep_copy(space, remote_columns_, h);
      space.fence();
    }
    number_extended_columns(space, global_columns, begin, end,
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
    ranks.agree(ok, "sdot::Halo: a process asked for a row another process does not hold");
    send_rows_ = Kokkos::View<int*, memory_space>(
        Kokkos::view_alloc(space, Kokkos::WithoutInitializing, "sdot::Halo::send_rows"),
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
    static_assert(
        Kokkos::SpaceAccessibility<ExecutionSpace, typename View::memory_space>::accessible,
        "sdot::Halo: the vector must be accessible from the execution space");
    if (ranks_.process_count() == 1)
      return;
    sdot::compat::ScopedRegion region("sdot::Halo::update");
    using Policy = Kokkos::RangePolicy<ExecutionSpace>;
    int const components = View::rank == 1 ? 1 : static_cast<int>(extended.extent(1));
    int const nsend = static_cast<int>(send_rows_.extent(0));
    int const nrecv = size();
    int const offset = local_size();
    if (static_cast<int>(send_.extent(1)) != components) { // kept for the next updates
      send_ = Buffer(Kokkos::view_alloc(space, Kokkos::WithoutInitializing, "sdot::Halo::send"),
                     nsend, components);
      recv_ = Buffer(Kokkos::view_alloc(space, Kokkos::WithoutInitializing, "sdot::Halo::recv"),
                     nrecv, components);
      send_host_ = sdot::compat::host_mirror_no_init(send_);
      recv_host_ = sdot::compat::host_mirror_no_init(recv_);
    }
    auto const send = send_, recv = recv_;
    auto const send_host = send_host_, recv_host = recv_host_;
    auto rows = send_rows_;
    Kokkos::parallel_for(
        "sdot::Halo::pack", Policy(space, 0, nsend), KOKKOS_LAMBDA(int k) {
          for (int c = 0; c < components; ++c)
            send(k, c) = element(extended, rows(k), c);
        });
    Kokkos::deep_copy(space, send_host, send);
    space.fence();
    ranks_.alltoallv_bytes(send_host.data(), send_counts_, recv_host.data(), recv_counts_,
                           sizeof(double) * components);
    Kokkos::deep_copy(space, recv, recv_host);
    Kokkos::parallel_for(
        "sdot::Halo::unpack", Policy(space, 0, nrecv), KOKKOS_LAMBDA(int k) {
          for (int c = 0; c < components; ++c)
            element(extended, offset + k, c) = recv(k, c);
        });
    space.fence(); // Kokkos-Kernels calls that follow run on the default instance
  }

private:
  template <class View>
  KOKKOS_INLINE_FUNCTION static auto& element(View const& v, int i, int c) {
    if constexpr (View::rank == 1) {
      (void)c;
      return v(i);
    } else {
      return v(i, c);
    }
  }

  using Buffer = Kokkos::View<double**, Kokkos::LayoutRight, memory_space>;
  loom::Ranks ranks_;
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

} // namespace sdot::detail
