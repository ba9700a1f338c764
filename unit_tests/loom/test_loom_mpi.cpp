// loom under MPI: one rank per process, and 3 boxes per process (hybrid).
#include "loom_checks.hpp"

#include <mpi.h>

namespace {

class Mpi : public ::testing::TestWithParam<int> {
protected:
  loom::Ranks ranks() const { return loom::MpiRanks(MPI_COMM_WORLD, GetParam()); }
};

TEST_P(Mpi, Basics) {
  auto r = ranks();
  int p = 0, n = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &p);
  MPI_Comm_size(MPI_COMM_WORLD, &n);
  EXPECT_EQ(r.process_rank(), p);
  EXPECT_EQ(r.process_count(), n);
  EXPECT_EQ(r.local_count(), GetParam());
  EXPECT_EQ(r.size(), n * GetParam());
  EXPECT_EQ(r.first_local(), p * GetParam());
  EXPECT_TRUE(r.uses_mpi());
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

INSTANTIATE_TEST_SUITE_P(Loom, Mpi, ::testing::Values(1, 3));

} // namespace
