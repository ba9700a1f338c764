#pragma once
// Google Benchmark over the benchmark clouds (bench_clouds.hpp): the cloud of a benchmark, and
// the registration of one benchmark per cloud kind.
#include "bench_clouds.hpp"

#include <benchmark/benchmark.h>

#include <exception>
#include <string>

namespace sdot_bench {

/// The cloud kinds every benchmark runs on.
inline constexpr char const* cloud_kinds[] = {"uniform", "clustered", "uniform@transport",
                                              "clustered@transport"};

/// The transport weights scaled (bench_clouds.hpp): how the cost grows with the spread of the
/// weights, from the solution's tenth to three times it.
inline constexpr char const* spread_kinds[] = {"uniform@transport*0.1",   "uniform@transport*0.3",
                                               "uniform@transport*3",     "clustered@transport*0.1",
                                               "clustered@transport*0.3", "clustered@transport*3"};

/// make_cloud() for a benchmark: a cloud that cannot be made (say, transport weights for a cloud
/// with coincident seeds, which the solver refuses) skips the benchmark with the reason instead
/// of ending the whole run. Returns false when skipped.
inline bool make_cloud_or_skip(benchmark::State& state, std::string const& kind, int n,
                               sdot_test::Cloud& cloud) {
  try {
    cloud = make_cloud(kind, n);
    return true;
  } catch (std::exception const& e) {
    state.SkipWithError(e.what());
    return false;
  }
}

/// Registers `prefix`/<kind> for every kind of `kinds`, N = 1e4, 1e5, … up to `largest`, in
/// milliseconds of real time: `run(state, kind)`. Returns 0, to initialise a namespace-scope
/// constant with.
template <class Kinds, class Run>
int register_benchmarks(std::string const& prefix, Kinds const& kinds, int largest, Run run) {
  for (char const* kind : kinds)
    benchmark::RegisterBenchmark((prefix + "/" + kind).c_str(),
                                 [run, kind](benchmark::State& state) { run(state, kind); })
        ->RangeMultiplier(10)
        ->Range(10000, largest)
        ->Unit(benchmark::kMillisecond)
        ->UseRealTime();
  return 0;
}

/// register_benchmarks() for every cloud kind, N = 1e4, 1e5 and 1e6.
template <class Run>
int register_cloud_benchmarks(std::string const& prefix, Run run) {
  return register_benchmarks(prefix, cloud_kinds, 1000000, run);
}

/// register_benchmarks() for every kind of spread_kinds, N = 1e4 and 1e5.
template <class Run>
int register_spread_benchmarks(std::string const& prefix, Run run) {
  return register_benchmarks(prefix, spread_kinds, 100000, run);
}

} // namespace sdot_bench
