// Builds one power diagram and prints its time per cell and its checksum; meant for
//   valgrind --tool=callgrind --toggle-collect='*detail::build_cells<*' sdot_profile_cells N cloud
// (instruction counts per cell are stable on a loaded machine, wall times are not).
//   N      number of seeds (default 1e5)
//   cloud  uniform (weights U[0, 1/N]) or clustered (default uniform), optionally followed by
//          @transport: the optimal-transport weights of those positions (bench_clouds.hpp)
//   weights.bin  optional: N doubles replacing the cloud's weights (say, weights that solve
//                an optimal transport problem, whose spread makes cells cost more)
// SDOT_PROFILE_REPEAT=R computes the diagram R times (default 1) and prints each time; the
// first run pays the device's first touches (allocations, loading the kernels on a GPU).
// SDOT_PROFILE_SAME_BITS set: with PowerDiagramOptions::same_bits.
// SDOT_PROFILE_COARSE_TO_FINE=always|never: PowerDiagramOptions::coarse_to_fine (default
// automatic); SDOT_PROFILE_COARSEST=M: PowerDiagramOptions::coarsest_level_seeds.
#include "bench_clouds.hpp"
#include "perf_environment.hpp"

#include <Kokkos_Timer.hpp>

#include <cstdio>
#include <cstdlib>
#include <string>

int main(int argc, char* argv[]) {
  {
    sdot_bench::PerfEnvironment environment(argc, argv);
    int const n = argc > 1 ? std::atoi(argv[1]) : 100000;
    std::string const kind = argc > 2 ? argv[2] : "uniform";
    auto cloud = sdot_bench::make_cloud(kind, n);
    if (argc > 3) {
      std::FILE* file = std::fopen(argv[3], "rb");
      bool const read =
          file && std::fread(cloud.w.data(), sizeof(double), n, file) == std::size_t(n);
      if (file)
        std::fclose(file);
      if (!read) {
        std::fprintf(stderr, "cannot read %d weights from %s\n", n, argv[3]);
        std::exit(1);
      }
    }
    auto positions = sdot_test::positions_view(cloud);
    auto weights = sdot_test::weights_view(cloud);
    char const* repeat_env = std::getenv("SDOT_PROFILE_REPEAT");
    int const repeat = repeat_env ? std::atoi(repeat_env) : 1;
    bool const same_bits = std::getenv("SDOT_PROFILE_SAME_BITS") != nullptr;
    char const* coarse_env = std::getenv("SDOT_PROFILE_COARSE_TO_FINE");
    std::string const coarse = coarse_env ? coarse_env : "automatic";
    char const* coarsest_env = std::getenv("SDOT_PROFILE_COARSEST");
    for (int run = 0; run < repeat; ++run) {
      Kokkos::fence();
      Kokkos::Timer timer;
      sdot::PowerDiagramOptions options;
      options.same_bits = same_bits;
      options.coarse_to_fine = coarse == "always"  ? sdot::CoarseToFine::always
                               : coarse == "never" ? sdot::CoarseToFine::never
                                                   : sdot::CoarseToFine::automatic;
      if (coarsest_env)
        options.coarsest_level_seeds = std::atoi(coarsest_env);
      sdot::PowerDiagram<> diagram(positions, weights, sdot_bench::unit_square(), options);
      auto measures = diagram.measures();
      Kokkos::fence();
      double const seconds = timer.seconds();
      double sum = 0;
      Kokkos::parallel_reduce(
          "profile::sum", Kokkos::RangePolicy<>(0, n),
          KOKKOS_LAMBDA(int i, double& s) { s += measures(i); }, sum);
      auto const& phases = diagram.statistics().seconds;
      auto const& statistics = diagram.statistics();
      std::printf("%s N=%d: %.1f ns/cell (tree %.1f, cells %.1f, same_bits %.1f), sum of "
                  "measures - 1 = %.3e, coarse levels %d, cells certified %d in %d rounds\n",
                  kind.c_str(), n, 1e9 * seconds / n, 1e9 * phases.at("tree") / n,
                  1e9 * phases.at("cells") / n,
                  phases.count("same_bits") ? 1e9 * phases.at("same_bits") / n : 0.0, sum - 1,
                  statistics.coarse_levels, statistics.warm_cells, statistics.warm_rounds);
    }
  }
  return 0;
}
