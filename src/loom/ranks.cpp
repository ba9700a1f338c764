// loom::Ranks: communicator handling and the host-side collectives (compiled once).
#include <loom/ranks.hpp>

#include <algorithm>
#include <climits>
#include <cstring>
#include <string>
#include <vector>

namespace loom {

namespace detail {
struct Communicator {
  MPI_Comm comm = MPI_COMM_NULL;
  explicit Communicator(MPI_Comm c) : comm(c) {}
  Communicator(Communicator const&) = delete;
  Communicator& operator=(Communicator const&) = delete;
  ~Communicator() {
    int finalized = 0;
    MPI_Finalized(&finalized);
    if (!finalized && comm != MPI_COMM_NULL)
      MPI_Comm_free(&comm);
  }
};
} // namespace detail

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
} // namespace

MPI_Comm Ranks::comm() const {
  return comm_ ? comm_->comm : MPI_COMM_NULL;
}

Ranks MpiRanks(MPI_Comm comm, int boxes_per_process) {
  if (boxes_per_process < 1)
    throw Error("loom::MpiRanks: boxes_per_process must be at least 1");
  MPI_Comm dup = MPI_COMM_NULL;
  check_mpi(MPI_Comm_dup(comm, &dup), "MPI_Comm_dup");
  auto owner = std::make_shared<detail::Communicator>(dup);
  int rank = 0, count = 1;
  check_mpi(MPI_Comm_rank(dup, &rank), "MPI_Comm_rank");
  check_mpi(MPI_Comm_size(dup, &count), "MPI_Comm_size");
  return Ranks(std::move(owner), rank, count, boxes_per_process);
}

Ranks BoxRanks(int count) {
  if (count < 1)
    throw Error("loom::BoxRanks: at least one box", true);
  return Ranks(nullptr, 0, 1, count);
}

void Ranks::agree(bool local_ok, std::string const& message) const {
  if (!comm_ || process_count_ == 1) {
    if (!local_ok)
      throw Error(message, true);
    return;
  }
  int const ok = local_ok ? 1 : 0;
  std::vector<int> oks(process_count_);
  check_mpi(MPI_Allgather(&ok, 1, MPI_INT, oks.data(), 1, MPI_INT, comm()), "MPI_Allgather");
  auto const bad = std::find(oks.begin(), oks.end(), 0);
  if (bad == oks.end())
    return;
  int const root = static_cast<int>(bad - oks.begin());
  int len = root == process_rank_ ? static_cast<int>(message.size()) : 0;
  check_mpi(MPI_Bcast(&len, 1, MPI_INT, root, comm()), "MPI_Bcast");
  std::string text(static_cast<std::size_t>(len), '\0');
  if (root == process_rank_)
    text = message;
  if (len > 0)
    check_mpi(MPI_Bcast(&text[0], len, MPI_CHAR, root, comm()), "MPI_Bcast");
  throw Error("process " + std::to_string(root) + ": " + text, true);
}

bool Ranks::any(bool local) const {
  if (!comm_ || process_count_ == 1)
    return local;
  int v = local ? 1 : 0;
  check_mpi(MPI_Allreduce(MPI_IN_PLACE, &v, 1, MPI_INT, MPI_MAX, comm()), "MPI_Allreduce");
  return v != 0;
}

void Ranks::max_in_place(std::vector<std::int64_t>& values) const {
  if (!comm_ || process_count_ == 1)
    return;
  check_mpi(MPI_Allreduce(MPI_IN_PLACE, values.data(), to_int(values.size(), "max_in_place"),
                          MPI_INT64_T, MPI_MAX, comm()),
            "MPI_Allreduce");
}

void Ranks::barrier() const {
  if (comm_ && process_count_ > 1)
    check_mpi(MPI_Barrier(comm()), "MPI_Barrier");
}

bool Ranks::copy_if_alone(void const* send, void* recv, std::size_t bytes) const {
  if (comm_ && process_count_ > 1)
    return false;
  if (bytes)
    std::memmove(recv, send, bytes);
  return true;
}

void Ranks::allgather_bytes(void const* send, void* recv, std::size_t bytes) const {
  if (copy_if_alone(send, recv, bytes) || bytes == 0)
    return;
  check_mpi(MPI_Allgather(send, to_int(bytes, "allgather"), MPI_BYTE, recv,
                          to_int(bytes, "allgather"), MPI_BYTE, comm()),
            "MPI_Allgather");
}

void Ranks::allgatherv_bytes(void const* send, void* recv, std::vector<std::int64_t> const& counts,
                             std::size_t elem_bytes) const {
  if (copy_if_alone(send, recv, counts[0] * elem_bytes) || elem_bytes == 0)
    return;
  std::vector<int> n(process_count_), displ(process_count_);
  std::int64_t d = 0;
  for (int p = 0; p < process_count_; ++p) {
    n[p] = to_int(counts[p], "allgatherv");
    displ[p] = to_int(d, "allgatherv");
    d += counts[p];
  }
  ElementType type(elem_bytes);
  check_mpi(MPI_Allgatherv(send, n[process_rank_], type.get(), recv, n.data(), displ.data(),
                           type.get(), comm()),
            "MPI_Allgatherv");
}

void Ranks::alltoall_bytes(void const* send, void* recv, std::size_t bytes) const {
  if (copy_if_alone(send, recv, bytes) || bytes == 0)
    return;
  check_mpi(MPI_Alltoall(send, to_int(bytes, "alltoall"), MPI_BYTE, recv, to_int(bytes, "alltoall"),
                         MPI_BYTE, comm()),
            "MPI_Alltoall");
}

void Ranks::alltoallv_bytes(void const* send, std::vector<std::int64_t> const& send_counts,
                            void* recv, std::vector<std::int64_t> const& recv_counts,
                            std::size_t elem_bytes) const {
  if (copy_if_alone(send, recv, send_counts[0] * elem_bytes) || elem_bytes == 0)
    return;
  std::vector<int> sn(process_count_), sd(process_count_), rn(process_count_), rd(process_count_);
  std::int64_t s = 0, r = 0;
  for (int p = 0; p < process_count_; ++p) {
    sn[p] = to_int(send_counts[p], "alltoallv");
    sd[p] = to_int(s, "alltoallv");
    s += send_counts[p];
    rn[p] = to_int(recv_counts[p], "alltoallv");
    rd[p] = to_int(r, "alltoallv");
    r += recv_counts[p];
  }
  ElementType type(elem_bytes);
  check_mpi(MPI_Alltoallv(send, sn.data(), sd.data(), type.get(), recv, rn.data(), rd.data(),
                          type.get(), comm()),
            "MPI_Alltoallv");
}

} // namespace loom
