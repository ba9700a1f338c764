// loom under BoxRanks: K ranks emulated inside one process (no MPI used by loom); and the same
// through loom::ProcessGroupRanks over a process group of one process that is not MPI, as in a
// build without MPI.
#include "loom_checks.hpp"

#include <cstring>
#include <memory>
#include <stdexcept>
#include <tuple>
#include <vector>

namespace {

/// A loom::ProcessGroup of this process alone, not an MPI communicator. Its collectives are
/// copies, counted: loom copies by itself for one process and never calls them.
class LoneGroup final : public loom::ProcessGroup {
public:
  int rank() const override { return 0; }
  int size() const override { return 1; }
  void allgatherv(void const* send, void* recv, std::vector<std::int64_t> const& counts,
                  std::size_t elem_bytes) const override {
    ++calls;
    std::memmove(recv, send, counts.at(0) * elem_bytes);
  }
  void alltoallv(void const* send, std::vector<std::int64_t> const& send_counts, void* recv,
                 std::vector<std::int64_t> const&, std::size_t elem_bytes) const override {
    ++calls;
    std::memmove(recv, send, send_counts.at(0) * elem_bytes);
  }
  void barrier() const override { ++calls; }
  mutable int calls = 0;
};

/// Boxes in this process, and whether the ranks go through LoneGroup.
class Boxes : public ::testing::TestWithParam<std::tuple<int, bool>> {
protected:
  int boxes() const { return std::get<0>(GetParam()); }
  bool through_group() const { return std::get<1>(GetParam()); }
  loom::Ranks ranks() const {
    if (through_group())
      return loom::ProcessGroupRanks(std::make_shared<LoneGroup>(), boxes());
    return loom::BoxRanks(boxes());
  }
};

TEST_P(Boxes, Basics) {
  auto r = ranks();
  EXPECT_EQ(r.size(), boxes());
  EXPECT_EQ(r.local_count(), boxes());
  EXPECT_EQ(r.first_local(), 0);
  EXPECT_EQ(r.rank(boxes() - 1), boxes() - 1);
  EXPECT_EQ(r.process_count(), 1);
  EXPECT_FALSE(r.uses_mpi());
  EXPECT_EQ(r.group() != nullptr, through_group());
}
TEST_P(Boxes, RouteInt) {
  loom_test::check_route<int>(ranks(), 64);
}
TEST_P(Boxes, RouteLongOverflow) {
  loom_test::check_route<long>(ranks(), 4);
}
TEST_P(Boxes, RouteDouble) {
  loom_test::check_route<double>(ranks(), 2);
}
TEST_P(Boxes, DistributeWholeRows) {
  loom_test::check_distribute<double>(ranks(), false);
}
TEST_P(Boxes, DistributeRowsOfVaryingLength) {
  loom_test::check_distribute<double>(ranks(), true);
}
TEST_P(Boxes, DistributeLongRowsOfVaryingLength) {
  loom_test::check_distribute<long>(ranks(), true);
}
TEST_P(Boxes, DistributorPlanGivesWhatDistributeGives) {
  loom_test::check_distributor<double>(ranks());
  loom_test::check_distributor<long>(ranks());
}
TEST_P(Boxes, ExchangeLong) {
  loom_test::check_exchange<long>(ranks(), 64);
}
TEST_P(Boxes, ExchangeDoubleTruncated) {
  loom_test::check_exchange<double>(ranks(), 3);
}
TEST_P(Boxes, ExchangeEmpty) {
  loom_test::check_exchange_empty(ranks());
}
TEST_P(Boxes, ExchangeDense) {
  loom_test::check_exchange_dense(ranks());
}
TEST_P(Boxes, SpmdCapacity) {
  loom_test::check_spmd_capacity(ranks());
}
TEST_P(Boxes, Reductions) {
  loom_test::check_all_reductions(ranks());
}
TEST_P(Boxes, RowBlocksAndHalo) {
  loom_test::check_row_blocks_and_halo(ranks());
}
TEST_P(Boxes, ScatterAdd) {
  loom_test::check_scatter_add(ranks());
}
TEST_P(Boxes, WhileLoop) {
  loom_test::check_while_loop(ranks());
}
TEST_P(Boxes, Spread) {
  loom_test::check_spread(ranks());
}
TEST_P(Boxes, Errors) {
  loom_test::check_errors(ranks());
}

INSTANTIATE_TEST_SUITE_P(Loom, Boxes,
                         ::testing::Combine(::testing::Values(1, 2, 3, 8, 64, 100),
                                            ::testing::Values(false)));
INSTANTIATE_TEST_SUITE_P(LoomOneProcessGroup, Boxes,
                         ::testing::Combine(::testing::Values(1, 3, 64), ::testing::Values(true)));

// A process group of one process: loom's collectives are local copies, the group's are never
// called.
TEST(ProcessGroupRanks, OneProcessNeedsNoCollective) {
  auto const group = std::make_shared<LoneGroup>();
  auto const r = loom::ProcessGroupRanks(group, 4);
  loom_test::check_route<int>(r, 64);
  loom_test::check_exchange<long>(r, 64);
  loom_test::check_all_reductions(r);
  r.barrier();
  EXPECT_EQ(group->calls, 0);
}

TEST(ProcessGroupRanks, RefusesNoGroupAndNoBoxes) {
  EXPECT_THROW(loom::ProcessGroupRanks(nullptr), loom::Error);
  EXPECT_THROW(loom::ProcessGroupRanks(std::make_shared<LoneGroup>(), 0), loom::Error);
}

TEST(LoomCapacity, GrowsByDoubling) {
  loom::Capacity c(3);
  EXPECT_FALSE(c.grow_to(3));
  EXPECT_TRUE(c.grow_to(13));
  EXPECT_EQ(c.value(), 24);
  loom::Capacity copy = c; // a handle: copies share the size
  copy.set(5);
  EXPECT_EQ(c.value(), 5);
  EXPECT_THROW(loom::Capacity(0), loom::Error);
}

TEST(LoomSpmd, NonCollectiveErrorPropagatesInOneProcess) {
  auto failing = loom::spmd([](loom::Ranks const&) -> int { throw std::runtime_error("boom"); },
                            loom::BoxRanks(4));
  EXPECT_THROW(failing(), std::runtime_error);
}

} // namespace
