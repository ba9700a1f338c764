// loom under MPI: one rank per process, and 3 boxes per process (hybrid); and the same
// through loom::ProcessGroupRanks over a process group of the test's own, whose collectives
// are point-to-point messages (as another runtime's process group would be).
#include "loom_checks.hpp"

#include <mpi.h>

#include <memory>
#include <tuple>
#include <vector>

namespace {

/// A loom::ProcessGroup that is not an MPI communicator for loom (comm() is MPI_COMM_NULL):
/// every collective is a set of MPI_Isend / MPI_Irecv of bytes between all pairs.
class PointToPointGroup final : public loom::ProcessGroup {
public:
  PointToPointGroup() {
    MPI_Comm_dup(MPI_COMM_WORLD, &comm_);
    MPI_Comm_rank(comm_, &rank_);
    MPI_Comm_size(comm_, &size_);
  }
  ~PointToPointGroup() override { MPI_Comm_free(&comm_); }
  int rank() const override { return rank_; }
  int size() const override { return size_; }
  void allgatherv(void const* send, void* recv, std::vector<std::int64_t> const& counts,
                  std::size_t elem_bytes) const override {
    exchange(send, std::vector<std::int64_t>(size_, counts[rank_]), false, recv, counts,
             elem_bytes);
  }
  void alltoallv(void const* send, std::vector<std::int64_t> const& send_counts, void* recv,
                 std::vector<std::int64_t> const& recv_counts,
                 std::size_t elem_bytes) const override {
    exchange(send, send_counts, true, recv, recv_counts, elem_bytes);
  }
  void barrier() const override { MPI_Barrier(comm_); }

private:
  /// Part q of `send` to process q (or all of it to everyone when not `parts`), part p of
  /// `recv` from process p.
  void exchange(void const* send, std::vector<std::int64_t> const& send_counts, bool parts,
                void* recv, std::vector<std::int64_t> const& recv_counts,
                std::size_t elem_bytes) const {
    std::vector<MPI_Request> requests;
    auto const* out = static_cast<char const*>(send);
    auto* in = static_cast<char*>(recv);
    for (int p = 0; p < size_; ++p) {
      requests.emplace_back();
      MPI_Irecv(in, static_cast<int>(recv_counts[p] * elem_bytes), MPI_BYTE, p, 0, comm_,
                &requests.back());
      in += recv_counts[p] * elem_bytes;
    }
    for (int q = 0; q < size_; ++q) {
      requests.emplace_back();
      MPI_Isend(out, static_cast<int>(send_counts[q] * elem_bytes), MPI_BYTE, q, 0, comm_,
                &requests.back());
      if (parts)
        out += send_counts[q] * elem_bytes;
    }
    MPI_Waitall(static_cast<int>(requests.size()), requests.data(), MPI_STATUSES_IGNORE);
  }
  MPI_Comm comm_ = MPI_COMM_NULL;
  int rank_ = 0, size_ = 1;
};

/// Boxes per process, and whether the ranks go through PointToPointGroup.
class Mpi : public ::testing::TestWithParam<std::tuple<int, bool>> {
protected:
  int boxes() const { return std::get<0>(GetParam()); }
  bool through_group() const { return std::get<1>(GetParam()); }
  loom::Ranks ranks() const {
    if (through_group())
      return loom::ProcessGroupRanks(std::make_shared<PointToPointGroup>(), boxes());
    return loom::MpiRanks(MPI_COMM_WORLD, boxes());
  }
};

TEST_P(Mpi, Basics) {
  auto r = ranks();
  int p = 0, n = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &p);
  MPI_Comm_size(MPI_COMM_WORLD, &n);
  EXPECT_EQ(r.process_rank(), p);
  EXPECT_EQ(r.process_count(), n);
  EXPECT_EQ(r.local_count(), boxes());
  EXPECT_EQ(r.size(), n * boxes());
  EXPECT_EQ(r.first_local(), p * boxes());
  EXPECT_EQ(r.uses_mpi(), !through_group());
  EXPECT_EQ(r.comm() == MPI_COMM_NULL, through_group());
}
TEST_P(Mpi, RouteInt) {
  loom_test::check_route<int>(ranks(), 64);
}
TEST_P(Mpi, RouteLongOverflow) {
  loom_test::check_route<long>(ranks(), 4);
}
TEST_P(Mpi, DistributeWholeRows) {
  loom_test::check_distribute<double>(ranks(), false);
}
TEST_P(Mpi, DistributeRowsOfVaryingLength) {
  loom_test::check_distribute<double>(ranks(), true);
}
TEST_P(Mpi, DistributeLongRowsOfVaryingLength) {
  loom_test::check_distribute<long>(ranks(), true);
}
TEST_P(Mpi, DistributorPlanGivesWhatDistributeGives) {
  loom_test::check_distributor<double>(ranks());
  loom_test::check_distributor<long>(ranks());
}
TEST_P(Mpi, ExchangeLong) {
  loom_test::check_exchange<long>(ranks(), 64);
}
TEST_P(Mpi, ExchangeDoubleTruncated) {
  loom_test::check_exchange<double>(ranks(), 3);
}
TEST_P(Mpi, ExchangeEmpty) {
  loom_test::check_exchange_empty(ranks());
}
TEST_P(Mpi, ExchangeDense) {
  loom_test::check_exchange_dense(ranks());
}
TEST_P(Mpi, SpmdCapacity) {
  loom_test::check_spmd_capacity(ranks());
}
TEST_P(Mpi, Reductions) {
  auto r = ranks();
  double const got = loom_test::check_all_reductions(r);
  // Bitwise the same on every process.
  std::vector<double> all(r.process_count());
  MPI_Allgather(&got, 1, MPI_DOUBLE, all.data(), 1, MPI_DOUBLE, MPI_COMM_WORLD);
  for (double v : all)
    EXPECT_EQ(std::memcmp(&v, &got, sizeof v), 0);
}
TEST_P(Mpi, RowBlocksAndHalo) {
  loom_test::check_row_blocks_and_halo(ranks());
}
TEST_P(Mpi, ScatterAdd) {
  loom_test::check_scatter_add(ranks());
}
TEST_P(Mpi, WhileLoop) {
  loom_test::check_while_loop(ranks());
}
TEST_P(Mpi, Spread) {
  loom_test::check_spread(ranks());
}
TEST_P(Mpi, Errors) {
  loom_test::check_errors(ranks());
}

INSTANTIATE_TEST_SUITE_P(Loom, Mpi, ::testing::Combine(::testing::Values(1, 3), ::testing::Bool()));

TEST(ProcessGroupRanks, RefusesNoGroupAndNoBoxes) {
  EXPECT_THROW(loom::ProcessGroupRanks(nullptr), loom::Error);
  EXPECT_THROW(loom::ProcessGroupRanks(std::make_shared<PointToPointGroup>(), 0), loom::Error);
}

} // namespace
