#pragma once
/// @file
/// loom::Ranks: who the ranks are (MPI processes, boxes emulated inside one process, or
/// several boxes per MPI process) and the host-side collectives between them.
///
/// The MPI entry points (MpiRanks, the communicator accessors) exist when loom is built with
/// MPI (CMake option SDOT_ENABLE_MPI, which defines LOOM_ENABLE_MPI for the users of
/// sdot::loom); without it loom includes no MPI header, and BoxRanks and ProcessGroupRanks
/// remain.

#include <loom/error.hpp>
#include <sdot/base/kokkos_compat.hpp>

#include <Kokkos_Core.hpp>
#ifdef LOOM_ENABLE_MPI
#include <mpi.h>
#endif

#include <algorithm>
#include <array>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <memory>
#include <string>
#include <type_traits>
#include <vector>

namespace loom {

/// The processes a Ranks spans and the byte-level collectives between them: an MPI
/// communicator (MpiRanks), or any other runtime's process group (for example
/// torch.distributed, through the Python module), given to ProcessGroupRanks.
///
/// Every call is collective over the group's processes, made by all of them in the same
/// order. Counts are in elements of `elem_bytes` bytes; buffers are host memory, one part per
/// process, contiguous in process order. A failure throws on the process that sees it.
class ProcessGroup {
public:
  virtual ~ProcessGroup() = default;
  /// This process's rank in the group, in [0, size()).
  virtual int rank() const = 0;
  /// Number of processes.
  virtual int size() const = 0;
  /// Every process receives the parts of all, in process order: `counts[p]` elements from
  /// process p (`counts` is the same on every process; this process sends `counts[rank()]`).
  virtual void allgatherv(void const* send, void* recv, std::vector<std::int64_t> const& counts,
                          std::size_t elem_bytes) const = 0;
  /// `send_counts[q]` elements go to process q, `recv_counts[p]` come from process p.
  virtual void alltoallv(void const* send, std::vector<std::int64_t> const& send_counts, void* recv,
                         std::vector<std::int64_t> const& recv_counts,
                         std::size_t elem_bytes) const = 0;
  /// Returns once every process has called it.
  virtual void barrier() const = 0;
  /// Ends every process of the group, after a failure that some processes cannot see (they
  /// would wait forever in the next collective). The default ends this process only.
  [[noreturn]] virtual void abort() const;
#ifdef LOOM_ENABLE_MPI
  /// The MPI communicator of the group, or MPI_COMM_NULL when it is not an MPI one (parallel
  /// HDF5 needs one). With MPI only (LOOM_ENABLE_MPI).
  virtual MPI_Comm comm() const {
    return MPI_COMM_NULL;
  }
#endif
};

/// The ranks of a distributed computation.
///
/// There are `size()` ranks in all, numbered 0 .. size()-1. Each process holds
/// `local_count()` consecutive ranks, `first_local()` .. `first_local() + local_count() - 1`:
/// one under `MpiRanks(comm)` or `ProcessGroupRanks(group)`, K under `BoxRanks(K)` (one
/// process, no MPI) and K per process under `MpiRanks(comm, K)`. The data of the local ranks of a
/// process are stored together (concatenated with offsets, or with a leading [local_count]
/// dimension) so that one kernel launch processes every local rank.
///
/// Ranks is a cheap copyable handle. Every member documented as *collective* must be called
/// by every process of the communicator, in the same order.
class Ranks {
public:
  /// One rank in one process, no MPI (the same as BoxRanks(1)).
  Ranks() = default;
  /// Total number of ranks.
  int size() const { return process_count_ * local_count_; }
  /// Number of ranks held by this process.
  int local_count() const { return local_count_; }
  /// Global rank of this process's local rank 0.
  int first_local() const { return process_rank_ * local_count_; }
  /// Global rank of local rank `l`.
  int rank(int l = 0) const { return first_local() + l; }
  /// Process holding global rank `g`.
  int process_of(int g) const { return g / local_count_; }
  /// Rank of this process in the communicator (0 without MPI).
  int process_rank() const { return process_rank_; }
  /// Number of processes (1 without MPI).
  int process_count() const { return process_count_; }
  /// True for MpiRanks (even with one process), false for BoxRanks and for process groups
  /// that are not MPI communicators (always false when loom is built without MPI).
  bool uses_mpi() const {
#ifdef LOOM_ENABLE_MPI
    return comm() != MPI_COMM_NULL;
#else
    return false;
#endif
  }
#ifdef LOOM_ENABLE_MPI
  /// The (duplicated) communicator, MPI_COMM_NULL for BoxRanks and non-MPI process groups.
  /// With MPI only (LOOM_ENABLE_MPI).
  MPI_Comm comm() const;
#endif
  /// The process group, null for BoxRanks.
  std::shared_ptr<ProcessGroup const> const& group() const {
    return group_;
  }

  /// Collective: every process throws the same loom::Error (collective()) when `local_ok` is
  /// false on any process; the message is the one of the lowest failing process, prefixed by
  /// its rank. Returns normally on every process otherwise.
  void agree(bool local_ok, std::string const& message) const;
  /// Collective: true on every process when `local` is true on any process.
  bool any(bool local) const;
  /// Collective barrier (nothing under BoxRanks).
  void barrier() const;

  /// Collective: the values of every process, in process order (element p*count + i is
  /// value i of process p).
  template <class T>
  std::vector<T> allgather(std::vector<T> const& local) const {
    static_assert(std::is_trivially_copyable<T>::value, "loom::allgather: trivially copyable T");
    std::vector<std::size_t> n(process_count_);
    std::size_t const mine = local.size();
    allgather_bytes(&mine, n.data(), sizeof(std::size_t));
    for (std::size_t c : n)
      if (c != mine)
        throw Error("loom::Ranks::allgather: processes passed different lengths", true);
    std::vector<T> all(mine * process_count_);
    allgather_bytes(local.data(), all.data(), mine * sizeof(T));
    return all;
  }

  /// Collective: sum over all ranks of one value per local rank (`local` has local_count()
  /// values, in any memory space). Every process gets the same, bitwise identical, value:
  /// the values of all the ranks are gathered and added in global rank order.
  template <class View>
  typename View::non_const_value_type all_sum(View const& local) const {
    return fold(local, [](auto a, auto b) { return a + b; });
  }
  /// Collective: maximum over all ranks (see all_sum).
  template <class View>
  typename View::non_const_value_type all_max(View const& local) const {
    return fold(local, [](auto a, auto b) { return a < b ? b : a; });
  }
  /// Collective: minimum over all ranks (see all_sum).
  template <class View>
  typename View::non_const_value_type all_min(View const& local) const {
    return fold(local, [](auto a, auto b) { return b < a ? b : a; });
  }
  /// Collective: element-wise sums over the processes of one vector per process (not per
  /// rank; the same length on every process), added in process order: the same bits on every
  /// process, whatever the reduction order of the MPI library.
  template <class T>
  std::vector<T> process_sums(std::vector<T> const& partial) const {
    return process_fold(partial, [](T a, T b) { return a + b; });
  }
  /// Collective: process_sums of K values.
  template <std::size_t K>
  std::array<double, K> process_sums(std::array<double, K> const& partial) const {
    auto const sums = process_sums(std::vector<double>(partial.begin(), partial.end()));
    std::array<double, K> out;
    std::copy(sums.begin(), sums.end(), out.begin());
    return out;
  }
  /// Collective: element-wise maxima over the processes of one vector per process.
  template <class T>
  std::vector<T> process_maxima(std::vector<T> const& partial) const {
    return process_fold(partial, [](T a, T b) { return a < b ? b : a; });
  }
  /// Collective: element-wise minima over the processes of one vector per process.
  template <class T>
  std::vector<T> process_minima(std::vector<T> const& partial) const {
    return process_fold(partial, [](T a, T b) { return b < a ? b : a; });
  }
  /// Collective: the sum over the processes of one value per process (see process_sums).
  double process_sum(double partial) const {
    return process_sums<1>({partial})[0];
  }
  /// Collective: the maximum over the processes of one value per process.
  double process_max(double partial) const {
    return process_maxima(std::vector{partial})[0];
  }
  /// Collective: the minimum over the processes of one value per process.
  double process_min(double partial) const {
    return process_minima(std::vector{partial})[0];
  }

  /// Collective: the local_count() values of every process, in global rank order (size()
  /// values), on the host.
  template <class View>
  std::vector<typename View::non_const_value_type> gather_rank_values(View const& local) const {
    static_assert(Kokkos::is_view<View>::value && View::rank == 1,
                  "loom::Ranks: one value per local rank in a rank-1 View");
    using T = typename View::non_const_value_type;
    static_assert(std::is_trivially_copyable<T>::value, "loom::Ranks: trivially copyable values");
    // One collective: a header (the extent this process passed) and its local_count values.
    auto host = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), local);
    std::size_t const stride = sizeof(std::int64_t) + sizeof(T) * local_count_;
    std::vector<unsigned char> mine(stride, 0), all(stride * process_count_);
    std::int64_t const extent = static_cast<std::int64_t>(local.extent(0));
    std::memcpy(mine.data(), &extent, sizeof extent);
    if (extent == local_count_)
      for (int l = 0; l < local_count_; ++l) {
        T const v = host(l);
        std::memcpy(mine.data() + sizeof(std::int64_t) + sizeof(T) * l, &v, sizeof(T));
      }
    allgather_bytes(mine.data(), all.data(), stride);
    std::vector<T> values(size());
    for (int p = 0; p < process_count_; ++p) {
      std::int64_t e = 0;
      std::memcpy(&e, all.data() + stride * p, sizeof e);
      if (e != local_count_)
        throw Error("loom::Ranks::all_sum/max/min: process " + std::to_string(p) + " passed " +
                        std::to_string(e) +
                        " values instead of local_count() = " + std::to_string(local_count_),
                    true);
      std::memcpy(values.data() + static_cast<std::size_t>(p) * local_count_,
                  all.data() + stride * p + sizeof(std::int64_t), sizeof(T) * local_count_);
    }
    return values;
  }

  // ---- byte-level collectives (used by the loom operations) ----------------------------------
  /// Collective: `bytes` bytes from every process, concatenated in process order into `recv`.
  void allgather_bytes(void const* send, void* recv, std::size_t bytes) const;
  /// Collective: variable-size gather to every process; `counts[p]` elements of `elem_bytes`
  /// bytes from process p, stored contiguously in process order.
  void allgatherv_bytes(void const* send, void* recv, std::vector<std::int64_t> const& counts,
                        std::size_t elem_bytes) const;
  /// Collective: all-to-all of fixed size, `bytes` bytes per process pair.
  void alltoall_bytes(void const* send, void* recv, std::size_t bytes) const;
  /// Collective: all-to-all of variable size; `send_counts[q]` elements of `elem_bytes` bytes
  /// go to process q (contiguous in process order in `send`), `recv_counts[p]` come from p.
  /// With one process (or no group) the buffer is copied with memmove: host pointers only
  /// then.
  void alltoallv_bytes(void const* send, std::vector<std::int64_t> const& send_counts, void* recv,
                       std::vector<std::int64_t> const& recv_counts, std::size_t elem_bytes) const;

  /// Internal: builds Ranks (use MpiRanks, ProcessGroupRanks or BoxRanks).
  Ranks(std::shared_ptr<ProcessGroup const> group, int local_count)
      : group_(std::move(group)), process_rank_(group_ ? group_->rank() : 0),
        process_count_(group_ ? group_->size() : 1), local_count_(local_count) {}

private:
  /// Element-wise over the processes: process 0's vector combined by `op` with process 1's,
  /// then 2's, and so on (the same bits on every process).
  template <class T, class Op>
  std::vector<T> process_fold(std::vector<T> const& partial, Op op) const {
    if (process_count_ == 1)
      return partial;
    auto const all = allgather(partial);
    std::size_t const n = partial.size();
    std::vector<T> folded(all.begin(), all.begin() + n);
    for (int p = 1; p < process_count_; ++p)
      for (std::size_t k = 0; k < n; ++k)
        folded[k] = op(folded[k], all[p * n + k]);
    return folded;
  }
  /// The values of all the ranks, combined by `op` in global rank order.
  template <class View, class Op>
  typename View::non_const_value_type fold(View const& local, Op op) const {
    auto all = gather_rank_values(local);
    auto s = all[0];
    for (std::size_t i = 1; i < all.size(); ++i)
      s = op(s, all[i]);
    return s;
  }
  /// One process (or no group): a collective is a copy of `bytes` bytes, done here.
  /// Returns whether it was.
  bool copy_if_alone(void const* send, void* recv, std::size_t bytes) const;
  std::shared_ptr<ProcessGroup const> group_;
  int process_rank_ = 0;
  int process_count_ = 1;
  int local_count_ = 1;
};

#ifdef LOOM_ENABLE_MPI
/// One rank per process of `comm` (duplicated; the duplicate is freed with the last copy of
/// the Ranks, unless MPI is finalized by then), or `boxes_per_process` ranks per process.
/// Collective over `comm`. With MPI only (LOOM_ENABLE_MPI).
Ranks MpiRanks(MPI_Comm comm, int boxes_per_process = 1);
#endif

/// One rank per process of `group` (kept alive by the Ranks and its copies), or
/// `boxes_per_process` ranks per process. Collective over the group's processes.
Ranks ProcessGroupRanks(std::shared_ptr<ProcessGroup const> group, int boxes_per_process = 1);

/// `count` ranks emulated inside this process, on its device. Uses no MPI at all (works
/// without MPI_Init).
Ranks BoxRanks(int count);

/// The processes of the program, `boxes_per_process` ranks each: MpiRanks(MPI_COMM_WORLD,
/// boxes_per_process) when loom is built with MPI (LOOM_ENABLE_MPI; MPI must be initialised),
/// else BoxRanks(boxes_per_process), this process alone. Collective.
Ranks WorldRanks(int boxes_per_process = 1);

} // namespace loom
