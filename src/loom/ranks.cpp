// loom::Ranks: the MPI process group (with LOOM_ENABLE_MPI) and the host-side collectives
// (compiled once).
#include <loom/ranks.hpp>

#include <algorithm>
#include <climits>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

namespace loom {

#ifdef LOOM_ENABLE_MPI
namespace {
void check_mpi(int code, char const* what) {
  if (code != MPI_SUCCESS) {
    char text[MPI_MAX_ERROR_STRING];
    int len = 0;
    MPI_Error_string(code, text, &len);
    throw Error(std::string("loom: ") + what + " failed: " + std::string(text, len));
  }
}

// A contiguous datatype of `elem_bytes` bytes, freed at scope exit, so that MPI counts stay
// in elements (rows) rather than bytes.
class ElementType {
public:
  explicit ElementType(std::size_t elem_bytes) {
    check_mpi(MPI_Type_contiguous(static_cast<int>(elem_bytes), MPI_BYTE, &type_),
              "MPI_Type_contiguous");
    check_mpi(MPI_Type_commit(&type_), "MPI_Type_commit");
  }
  ~ElementType() { MPI_Type_free(&type_); }
  ElementType(ElementType const&) = delete;
  ElementType& operator=(ElementType const&) = delete;
  MPI_Datatype get() const { return type_; }

private:
  MPI_Datatype type_ = MPI_DATATYPE_NULL;
};

int to_int(std::int64_t n, char const* what) {
  if (n < 0 || n > INT_MAX)
    throw Error(std::string("loom: ") + what + ": count exceeds INT_MAX");
  return static_cast<int>(n);
}

/// Counts and displacements in elements, as MPI takes them.
struct MpiCounts {
  std::vector<int> counts, displacements;
  MpiCounts(std::vector<std::int64_t> const& n, char const* what)
      : counts(n.size()), displacements(n.size()) {
    std::int64_t d = 0;
    for (std::size_t p = 0; p < n.size(); ++p) {
      counts[p] = to_int(n[p], what);
      displacements[p] = to_int(d, what);
      d += n[p];
    }
  }
};

/// A duplicate of the user's communicator, freed with the last Ranks that holds it (unless
/// MPI is finalized by then).
class MpiProcessGroup final : public ProcessGroup {
public:
  explicit MpiProcessGroup(MPI_Comm comm) {
    check_mpi(MPI_Comm_dup(comm, &comm_), "MPI_Comm_dup");
    check_mpi(MPI_Comm_rank(comm_, &rank_), "MPI_Comm_rank");
    check_mpi(MPI_Comm_size(comm_, &size_), "MPI_Comm_size");
  }
  MpiProcessGroup(MpiProcessGroup const&) = delete;
  MpiProcessGroup& operator=(MpiProcessGroup const&) = delete;
  ~MpiProcessGroup() override {
    int finalized = 0;
    MPI_Finalized(&finalized);
    if (!finalized)
      MPI_Comm_free(&comm_);
  }
  int rank() const override { return rank_; }
  int size() const override { return size_; }
  MPI_Comm comm() const override { return comm_; }
  void allgatherv(void const* send, void* recv, std::vector<std::int64_t> const& counts,
                  std::size_t elem_bytes) const override {
    MpiCounts const n(counts, "allgatherv");
    ElementType type(elem_bytes);
    check_mpi(MPI_Allgatherv(send, n.counts[rank_], type.get(), recv, n.counts.data(),
                             n.displacements.data(), type.get(), comm_),
              "MPI_Allgatherv");
  }
  void alltoallv(void const* send, std::vector<std::int64_t> const& send_counts, void* recv,
                 std::vector<std::int64_t> const& recv_counts,
                 std::size_t elem_bytes) const override {
    MpiCounts const s(send_counts, "alltoallv"), r(recv_counts, "alltoallv");
    ElementType type(elem_bytes);
    check_mpi(MPI_Alltoallv(send, s.counts.data(), s.displacements.data(), type.get(), recv,
                            r.counts.data(), r.displacements.data(), type.get(), comm_),
              "MPI_Alltoallv");
  }
  void barrier() const override { check_mpi(MPI_Barrier(comm_), "MPI_Barrier"); }
  [[noreturn]] void abort() const override {
    MPI_Abort(comm_, 1);
    std::abort(); // MPI_Abort does not return
  }

private:
  MPI_Comm comm_ = MPI_COMM_NULL;
  int rank_ = 0, size_ = 1;
};
} // namespace

MPI_Comm Ranks::comm() const {
  return group_ ? group_->comm() : MPI_COMM_NULL;
}

Ranks MpiRanks(MPI_Comm comm, int boxes_per_process) {
  if (boxes_per_process < 1)
    throw Error("loom::MpiRanks: boxes_per_process must be at least 1");
  return Ranks(std::make_shared<MpiProcessGroup>(comm), boxes_per_process);
}
#endif // LOOM_ENABLE_MPI

void ProcessGroup::abort() const {
  std::abort();
}

Ranks ProcessGroupRanks(std::shared_ptr<ProcessGroup const> group, int boxes_per_process) {
  if (!group)
    throw Error("loom::ProcessGroupRanks: no process group");
  if (boxes_per_process < 1)
    throw Error("loom::ProcessGroupRanks: boxes_per_process must be at least 1");
  if (group->size() < 1 || group->rank() < 0 || group->rank() >= group->size())
    throw Error("loom::ProcessGroupRanks: rank " + std::to_string(group->rank()) +
                " of a group of " + std::to_string(group->size()) + " processes");
  return Ranks(std::move(group), boxes_per_process);
}

Ranks BoxRanks(int count) {
  if (count < 1)
    throw Error("loom::BoxRanks: at least one box", true);
  return Ranks(nullptr, count);
}

Ranks WorldRanks(int boxes_per_process) {
#ifdef LOOM_ENABLE_MPI
  return MpiRanks(MPI_COMM_WORLD, boxes_per_process);
#else
  return BoxRanks(boxes_per_process);
#endif
}

void Ranks::agree(bool local_ok, std::string const& message) const {
  if (!group_ || process_count_ == 1) {
    if (!local_ok)
      throw Error(message, true);
    return;
  }
  // Each process's verdict and the length of its message, then the lowest failing one's text.
  std::int64_t const mine[2] = {local_ok ? 1 : 0,
                                local_ok ? 0 : static_cast<std::int64_t>(message.size())};
  std::vector<std::int64_t> all(2 * static_cast<std::size_t>(process_count_));
  allgather_bytes(mine, all.data(), sizeof mine);
  int root = 0;
  while (root < process_count_ && all[2 * root] == 1)
    ++root;
  if (root == process_count_)
    return;
  std::vector<std::int64_t> lengths(process_count_, 0);
  lengths[root] = all[2 * root + 1];
  std::string text(static_cast<std::size_t>(lengths[root]), '\0');
  if (lengths[root] > 0)
    group_->allgatherv(root == process_rank_ ? message.data() : nullptr, &text[0], lengths, 1);
  throw Error("process " + std::to_string(root) + ": " + text, true);
}

bool Ranks::any(bool local) const {
  return process_maxima(std::vector<std::int64_t>{local ? 1 : 0})[0] != 0;
}

void Ranks::barrier() const {
  if (group_ && process_count_ > 1)
    group_->barrier();
}

bool Ranks::copy_if_alone(void const* send, void* recv, std::size_t bytes) const {
  if (group_ && process_count_ > 1)
    return false;
  if (bytes)
    std::memmove(recv, send, bytes);
  return true;
}

void Ranks::allgather_bytes(void const* send, void* recv, std::size_t bytes) const {
  if (copy_if_alone(send, recv, bytes) || bytes == 0)
    return;
  group_->allgatherv(send, recv, std::vector<std::int64_t>(process_count_, 1), bytes);
}

void Ranks::allgatherv_bytes(void const* send, void* recv, std::vector<std::int64_t> const& counts,
                             std::size_t elem_bytes) const {
  if (copy_if_alone(send, recv, counts[0] * elem_bytes) || elem_bytes == 0)
    return;
  group_->allgatherv(send, recv, counts, elem_bytes);
}

void Ranks::alltoall_bytes(void const* send, void* recv, std::size_t bytes) const {
  if (copy_if_alone(send, recv, bytes) || bytes == 0)
    return;
  std::vector<std::int64_t> const ones(process_count_, 1);
  group_->alltoallv(send, ones, recv, ones, bytes);
}

void Ranks::alltoallv_bytes(void const* send, std::vector<std::int64_t> const& send_counts,
                            void* recv, std::vector<std::int64_t> const& recv_counts,
                            std::size_t elem_bytes) const {
  if (copy_if_alone(send, recv, send_counts[0] * elem_bytes) || elem_bytes == 0)
    return;
  group_->alltoallv(send, send_counts, recv, recv_counts, elem_bytes);
}

} // namespace loom
