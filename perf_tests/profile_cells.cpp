// Builds one power diagram and prints its time per cell and its checksum; meant for
//   valgrind --tool=callgrind --toggle-collect='*CellsFunctor*' sdot_profile_cells N cloud
// (instruction counts per cell are stable on a loaded machine, wall times are not).
//   N      number of seeds (default 1e5)
//   cloud  uniform (weights U[0, 1/N]) or clustered (default uniform)
#include "bench_clouds.hpp"

#include <Kokkos_Timer.hpp>
#include <mpi.h>

#include <cstdio>
#include <cstdlib>
#include <string>

int main(int argc, char* argv[]) {
  MPI_Init(&argc, &argv);
  {
    Kokkos::ScopeGuard kokkos(argc, argv);
    int const n = argc > 1 ? std::atoi(argv[1]) : 100000;
    std::string const kind = argc > 2 ? argv[2] : "uniform";
    auto const cloud = sdot_bench::make_cloud(kind, n);
    auto positions = sdot_test::positions_view(cloud);
    auto weights = sdot_test::weights_view(cloud);
    Kokkos::Timer timer;
    sdot::PowerDiagram<> diagram(positions, weights, sdot_bench::unit_square());
    auto measures = diagram.measures();
    double const seconds = timer.seconds();
    double sum = 0;
    Kokkos::parallel_reduce(
        "profile::sum", Kokkos::RangePolicy<>(0, n),
        KOKKOS_LAMBDA(int i, double& s) { s += measures(i); }, sum);
    std::printf("%s N=%d: %.1f ns/cell (tree %.1f, cells %.1f), sum of measures - 1 = %.3e\n",
                kind.c_str(), n, 1e9 * seconds / n,
                1e9 * diagram.statistics().seconds.at("tree") / n,
                1e9 * diagram.statistics().seconds.at("cells") / n, sum - 1);
  }
  MPI_Finalize();
  return 0;
}
