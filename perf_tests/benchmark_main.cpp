// Benchmark main: MPI (when sdot is built with it) and Kokkos are initialised once around Google
// Benchmark.
#include "perf_environment.hpp"

#include <benchmark/benchmark.h>

#if defined(__GLIBC__)
#include <malloc.h>
#endif

int main(int argc, char* argv[]) {
#if defined(__GLIBC__)
  // Large blocks straight from mmap and freed memory handed back, so that the resident-set
  // deltas of memory_probe.hpp see each benchmark's own peak.
  mallopt(M_MMAP_THRESHOLD, 64 * 1024);
  mallopt(M_TRIM_THRESHOLD, 0);
#endif
  int result = 0;
  {
    sdot_bench::PerfEnvironment environment(argc, argv);
    benchmark::Initialize(&argc, argv);
    if (benchmark::ReportUnrecognizedArguments(argc, argv)) {
      result = 1;
    } else {
      benchmark::RunSpecifiedBenchmarks();
      benchmark::Shutdown();
    }
  }
  return result;
}
