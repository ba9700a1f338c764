// loom under BoxRanks: K ranks emulated inside one process (no MPI used by loom).
#include "loom_checks.hpp"

namespace {

class Boxes : public ::testing::TestWithParam<int> {
protected:
  loom::Ranks ranks() const { return loom::BoxRanks(GetParam()); }
};

TEST_P(Boxes, Basics) {
  auto r = ranks();
  EXPECT_EQ(r.size(), GetParam());
  EXPECT_EQ(r.local_count(), GetParam());
  EXPECT_EQ(r.first_local(), 0);
  EXPECT_EQ(r.rank(GetParam() - 1), GetParam() - 1);
  EXPECT_EQ(r.process_count(), 1);
  EXPECT_FALSE(r.uses_mpi());
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

INSTANTIATE_TEST_SUITE_P(Loom, Boxes, ::testing::Values(1, 2, 3, 8, 64, 100));

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
