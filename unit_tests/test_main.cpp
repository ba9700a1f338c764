// GoogleTest main shared by every unit test: MPI (when sdot is built with it) and Kokkos are
// initialised once; MPI rank 0 prints the usual progress, the other ranks print only their
// failures.
#include <Kokkos_Core.hpp>
#include <cstdio>
#include <gtest/gtest.h>
#ifdef LOOM_ENABLE_MPI
#include <mpi.h>
#endif

namespace {
class FailurePrinter : public ::testing::EmptyTestEventListener {
public:
  explicit FailurePrinter(int rank) : rank_(rank) {}
  void OnTestPartResult(::testing::TestPartResult const& result) override {
    if (result.failed())
      std::fprintf(stderr, "[rank %d] %s:%d: failure\n%s\n", rank_,
                   result.file_name() ? result.file_name() : "?", result.line_number(),
                   result.summary());
  }

private:
  int rank_;
};
} // namespace

int main(int argc, char* argv[]) {
  int rank = 0;
#ifdef LOOM_ENABLE_MPI
  MPI_Init(&argc, &argv);
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
#endif
  int result = 0;
  {
    Kokkos::ScopeGuard kokkos(argc, argv);
    ::testing::InitGoogleTest(&argc, argv);
    if (rank != 0) {
      auto& listeners = ::testing::UnitTest::GetInstance()->listeners();
      delete listeners.Release(listeners.default_result_printer());
      listeners.Append(new FailurePrinter(rank));
    }
    result = RUN_ALL_TESTS();
#ifdef LOOM_ENABLE_MPI
    // Every rank must agree on the outcome, or ctest would see only rank 0's.
    MPI_Allreduce(MPI_IN_PLACE, &result, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
#endif
  }
#ifdef LOOM_ENABLE_MPI
  MPI_Finalize();
#endif
  return result;
}
