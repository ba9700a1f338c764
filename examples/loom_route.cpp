// loom's reference program: each rank sends each of its values to the rank `value % size`,
// which adds up what it receives. 16 values are spread over the ranks; the route starts with
// 2 slots per destination, and loom::spmd doubles them and reruns the program when that is
// too small on any rank.
//
//   mpiexec -n 4 loom_route        # one rank per MPI process   -> sums: 24 28 32 36
//   loom_route --boxes 4           # 4 ranks inside one process -> sums: 24 28 32 36
//   loom_route --boxes 8 --verbose # also prints the capacity and the reruns on stderr
//
// The program below is written once and runs unchanged in both contexts. Against an sdot built
// without MPI (SDOT_ENABLE_MPI=OFF), only --boxes is available.
#include <loom/loom.hpp>

#include <Kokkos_Core.hpp>
#ifdef LOOM_ENABLE_MPI
#include <mpi.h>
#endif

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>

namespace {

using Sums = Kokkos::View<long*>;

// dest(i) = values(i) % size
template <class Values>
struct DestinationOf {
  Values values;
  Kokkos::View<int*> dest;
  int size;
  KOKKOS_FUNCTION void operator()(int i) const { dest(i) = values(i) % size; }
};

// sums(l) = what local rank l received (slots holding -1 are empty)
struct AddReceived {
  Kokkos::View<int****, Kokkos::LayoutRight> got; // [local_count, size, capacity, 1]
  Sums sums;
  KOKKOS_FUNCTION void operator()(int l) const {
    long s = 0;
    for (int j = 0; j < static_cast<int>(got.extent(1)); ++j)
      for (int k = 0; k < static_cast<int>(got.extent(2)); ++k)
        if (got(l, j, k, 0) >= 0)
          s += got(l, j, k, 0);
    sums(l) = s;
  }
};

// The program of one process: handles all of its local ranks at once.
struct Program {
  loom::Capacity slots; // rows per destination: doubled, and the program rerun, if too small

  template <class Values>
  loom::Spread<Sums> operator()(loom::Ranks const& ranks,
                                loom::Spread<Values> const& values) const {
    using Exec = Kokkos::DefaultExecutionSpace;
    Values v = values.value();
    Kokkos::View<int*> dest("dest", v.extent(0));
    Kokkos::parallel_for("loom_route::dest", Kokkos::RangePolicy<Exec>(0, v.extent(0)),
                         DestinationOf<Values>{v, dest, ranks.size()});
    auto out = loom::route(ranks, dest, v, values.offsets(), slots); // [L, size, slots, 1]
    auto got = loom::exchange(ranks, out);                           // what the others sent
    Sums sums("sums", ranks.local_count());
    Kokkos::parallel_for("loom_route::sum", Kokkos::RangePolicy<Exec>(0, ranks.local_count()),
                         AddReceived{got.data, sums});
    return loom::spread(sums, ranks); // one sum per rank
  }
};

int run(loom::Ranks const& ranks, bool verbose) {
  Kokkos::View<int*, Kokkos::HostSpace> whole("whole", 16);
  for (int i = 0; i < 16; ++i)
    whole(i) = i;
  auto values = loom::spread_host(whole, ranks); // 16 / size values per rank
  loom::Capacity slots(2);
  auto program = loom::spmd(Program{slots}, ranks);
  auto sums = program(values); // one sum per rank
  auto all = loom::gather_to_host(sums);
  if (ranks.process_rank() == 0) {
    std::string line = "sums:";
    for (std::size_t r = 0; r < all.extent(0); ++r)
      line += " " + std::to_string(all(r));
    std::printf("%s\n", line.c_str());
    if (verbose)
      std::fprintf(stderr, "ranks: %d, capacity: 2 -> %d, reruns: %d\n", ranks.size(),
                   slots.value(), program.last_reruns());
  }
  return 0;
}

} // namespace

int main(int argc, char* argv[]) {
  int boxes = 0;
  bool verbose = false;
  for (int i = 1; i < argc; ++i) {
    if (std::strcmp(argv[i], "--boxes") == 0 && i + 1 < argc)
      boxes = std::atoi(argv[++i]);
    else if (std::strcmp(argv[i], "--verbose") == 0)
      verbose = true;
  }
#ifdef LOOM_ENABLE_MPI
  if (boxes < 0) {
    std::fprintf(stderr, "usage: loom_route [--boxes K] [--verbose]\n");
    return 2;
  }
  if (boxes == 0)
    MPI_Init(&argc, &argv); // BoxRanks needs no MPI
#else
  if (boxes <= 0) {
    std::fprintf(stderr, "usage: loom_route --boxes K [--verbose] (sdot is built without MPI)\n");
    return 2;
  }
#endif
  int result = 0;
  {
    Kokkos::ScopeGuard kokkos(argc, argv);
    try {
#ifdef LOOM_ENABLE_MPI
      result = run(boxes > 0 ? loom::BoxRanks(boxes) : loom::MpiRanks(MPI_COMM_WORLD), verbose);
#else
      result = run(loom::BoxRanks(boxes), verbose);
#endif
    } catch (std::exception const& e) {
      std::fprintf(stderr, "loom_route: %s\n", e.what());
      result = 1;
    }
  }
#ifdef LOOM_ENABLE_MPI
  if (boxes == 0)
    MPI_Finalize();
#endif
  return result;
}
