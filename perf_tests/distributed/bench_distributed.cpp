// Distributed power diagram benchmarks. Run under MPI with any number of processes:
//   mpiexec -n 1 bench_distributed ; mpiexec -n 2 bench_distributed
// Every process runs the same fixed number of iterations (collectives inside); the time of
// an iteration is the slowest process's (manual time), reported by process 0 only.
#include <bench_clouds.hpp>
#include <clouds.hpp>
#include <loom/loom.hpp>
#include <perf_environment.hpp>
#include <sdot/sdot.hpp>

#include <Kokkos_Core.hpp>
#include <benchmark/benchmark.h>
#include <mpi.h>

#include <cmath>
#include <cstdint>
#include <map>
#include <random>
#include <string>
#include <vector>

namespace {

/// This process's block of a uniform cloud of n seeds (weights U[0, 1/n]), the same cloud
/// whatever the number of processes.
void uniform_block(std::int64_t n, int rank, int size, sdot::Points<>& x,
                   Kokkos::View<double*>& w) {
  std::int64_t const first = n * rank / size, last = n * (rank + 1) / size;
  x = sdot::Points<>("bench::positions", last - first);
  w = Kokkos::View<double*>("bench::weights", last - first);
  auto xh = Kokkos::create_mirror_view(x);
  auto wh = Kokkos::create_mirror_view(w);
  std::mt19937_64 rng(12345);
  std::uniform_real_distribution<double> u(0, 1);
  for (std::int64_t i = 0; i < last; ++i) {
    double a = u(rng), b = u(rng), c = u(rng) / n;
    if (i >= first) {
      xh(i - first, 0) = a;
      xh(i - first, 1) = b;
      wh(i - first) = c;
    }
  }
  Kokkos::deep_copy(x, xh);
  Kokkos::deep_copy(w, wh);
}

template <class Diagram>
void report(benchmark::State& state, Diagram const& pd, std::int64_t n) {
  auto const& st = pd.statistics();
  state.counters["ns_per_cell"] = 0;
  state.counters["ranks"] = st.ranks;
  state.counters["rounds"] = st.rounds;
  state.counters["travelled_per_seed"] = double(st.travelled_cells) / n;
  state.counters["bytes_per_seed"] = double(st.bytes_sent) / n;
  state.counters["reruns"] = st.reruns;
}

double slowest(double seconds) {
  MPI_Allreduce(MPI_IN_PLACE, &seconds, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
  return seconds;
}

// Seeds spread over the MPI processes, range(1) ranks (boxes) per process.
void BM_SpreadOverProcesses(benchmark::State& state) {
  std::int64_t const n = state.range(0);
  auto ranks = loom::MpiRanks(MPI_COMM_WORLD, static_cast<int>(state.range(1)));
  sdot::Points<> x;
  Kokkos::View<double*> w;
  uniform_block(n, ranks.process_rank(), ranks.process_count(), x, w);
  double total = 0;
  for (auto _ : state) {
    MPI_Barrier(MPI_COMM_WORLD);
    Kokkos::Timer timer;
    sdot::PowerDiagram pd(loom::spread(x, ranks), loom::spread(w, ranks),
                          sdot::box_half_spaces({0, 0}, {1, 1}));
    auto m = pd.measures();
    Kokkos::fence();
    double const t = slowest(timer.seconds());
    state.SetIterationTime(t);
    total += t;
    report(state, pd, n);
  }
  state.counters["ns_per_cell"] = 1e9 * total / state.iterations() / n;
  state.counters["processes"] = ranks.process_count();
}
BENCHMARK(BM_SpreadOverProcesses)
    ->ArgsProduct({{100000, 1000000}, {1, 8}})
    ->Iterations(3)
    ->UseManualTime()
    ->Unit(benchmark::kMillisecond);

/// The cloud of a benchmark: "uniform" (the same cloud as uniform_block), "clustered", a
/// cloud that fills part of the domain ("corner", "band", "line": clouds.hpp), or
/// "uniform@transport" and "clustered@transport" (bench_clouds.hpp: the benchmarks' clouds at
/// the weights of their optimal transport towards uniform masses, solved once and kept).
sdot_test::Cloud make_cloud(std::string const& kind, int n) {
  if (kind.find('@') != std::string::npos)
    return sdot_bench::make_cloud(kind, n);
  if (kind == "clustered")
    return sdot_test::clustered_cloud(n, 12345);
  if (kind != "uniform")
    return sdot_test::partial_cloud(kind, n, 12345);
  sdot::Points<> x;
  Kokkos::View<double*> w;
  uniform_block(n, 0, 1, x, w);
  auto xh = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), x);
  auto wh = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), w);
  sdot_test::Cloud c;
  for (int i = 0; i < n; ++i) {
    c.x.push_back({xh(i, 0), xh(i, 1)});
    c.w.push_back(wh(i));
  }
  return c;
}

/// Boxes on one device are measured in one process: false (the benchmark skipped) under
/// several.
bool one_process(benchmark::State& state) {
  int processes = 1;
  MPI_Comm_size(MPI_COMM_WORLD, &processes);
  if (processes > 1)
    state.SkipWithError("boxes on one device: run with one process");
  return processes == 1;
}

// nb_boxes ranks emulated in one process (run it with one process): range(0) seeds,
// range(1) boxes.
void BM_BoxesOnOneDevice(benchmark::State& state, std::string const& kind) {
  if (!one_process(state))
    return;
  int const n = static_cast<int>(state.range(0));
  auto const cloud = make_cloud(kind, n);
  auto const x = sdot_test::positions_view(cloud);
  auto const w = sdot_test::weights_view(cloud);
  sdot::PowerDiagramOptions options;
  options.nb_boxes = static_cast<int>(state.range(1));
  double total = 0;
  for (auto _ : state) {
    Kokkos::Timer timer;
    sdot::PowerDiagram pd(x, w, sdot::box_half_spaces({0, 0}, {1, 1}), options);
    auto m = pd.measures();
    Kokkos::fence();
    double const t = timer.seconds();
    state.SetIterationTime(t);
    total += t;
    report(state, pd, n);
  }
  state.counters["ns_per_cell"] = 1e9 * total / state.iterations() / n;
}

// A recomputation at new weights (set_weights(), which keeps the boxes and their indexes)
// against a new diagram of the same weights, timed in the same iteration: range(0) seeds,
// range(1) boxes in one process. The weights alternate between the cloud's and the cloud's
// moved by 10 % (0.1 w sin(7x + 3y); at transport weights, which change sign, by
// 0.1 sin(7x + 3y) / N, as a Newton step near the solution moves them). `warm`: the
// recomputation with warm_start (each box's first-round cells from their earlier neighbours;
// warm_fraction: those certified), the new diagram without. <phase>_ms: the recomputation's
// phases (boxes, box_cells with warm_start, cells: the rounds, results).
void BM_NewWeightsOnBoxes(benchmark::State& state, std::string const& kind, bool warm) {
  if (!one_process(state))
    return;
  int const n = static_cast<int>(state.range(0));
  auto const cloud = make_cloud(kind, n);
  auto moved = cloud;
  bool const at_transport = kind.find("@transport") != std::string::npos;
  for (int i = 0; i < n; ++i) {
    double const wave = 0.1 * std::sin(7 * cloud.x[i][0] + 3 * cloud.x[i][1]);
    moved.w[i] = at_transport ? moved.w[i] + wave / n : moved.w[i] * (1 + wave);
  }
  auto const x = sdot_test::positions_view(cloud);
  Kokkos::View<double*> const weights[2] = {sdot_test::weights_view(cloud),
                                            sdot_test::weights_view(moved)};
  sdot::PowerDiagramOptions options;
  options.nb_boxes = static_cast<int>(state.range(1));
  auto const domain = sdot::box_half_spaces({0, 0}, {1, 1});
  sdot::PowerDiagramOptions recomputed_options = options;
  recomputed_options.warm_start = warm;
  sdot::PowerDiagram pd(x, weights[0], domain, recomputed_options);
  pd.measures();
  double recomputed = 0, fresh = 0, warm_cells = 0;
  std::map<std::string, double> phases; // of the recomputations, summed
  int k = 0;
  for (auto _ : state) {
    auto const& w = weights[++k % 2];
    Kokkos::Timer timer;
    pd.set_weights(w);
    pd.measures();
    Kokkos::fence();
    double const t = timer.seconds();
    state.SetIterationTime(t);
    recomputed += t;
    timer.reset();
    sdot::PowerDiagram other(x, w, domain, options);
    other.measures();
    Kokkos::fence();
    fresh += timer.seconds();
    warm_cells += pd.statistics().warm_cells;
    for (auto const& [phase, seconds] : pd.statistics().seconds)
      phases[phase] += seconds;
    report(state, pd, n);
  }
  if (warm)
    state.counters["warm_fraction"] = warm_cells / state.iterations() / n;
  state.counters["ns_per_cell"] = 1e9 * recomputed / state.iterations() / n;
  state.counters["new_diagram_ns_per_cell"] = 1e9 * fresh / state.iterations() / n;
  state.counters["ratio_to_new_diagram"] = recomputed / fresh;
  for (auto const& [phase, seconds] : phases) // boxes, tree, box_cells (warm), cells, results
    if (phase != "total")
      state.counters[phase + "_ms"] = 1e3 * seconds / state.iterations();
}

// Uniform 1e6 up to 1024 boxes; every cloud kind at 1e5 up to 64 boxes; 1000 collinear seeds
// at 257 boxes (a cell per box, each long and thin).
int const registered = [] {
  auto add = [](std::string const& kind) {
    return benchmark::RegisterBenchmark(("BM_BoxesOnOneDevice/" + kind).c_str(),
                                        BM_BoxesOnOneDevice, kind)
        ->Iterations(3)
        ->UseManualTime()
        ->Unit(benchmark::kMillisecond);
  };
  add("uniform")->ArgsProduct({{1000000}, {1, 8, 64, 256, 1024}});
  for (char const* kind : {"uniform", "clustered", "corner", "band", "line"})
    add(kind)->ArgsProduct({{100000}, {1, 8, 64}});
  add("line")->Args({1000, 1})->Args({1000, 257});
  // At transport weights 1e5 seeds only: the clustered cloud has none at 1e6 (its clamped seeds
  // coincide: docs/performance.md), and solving uniform 1e6 the first time takes minutes.
  for (std::string const kind :
       {"uniform", "clustered", "uniform@transport", "clustered@transport"})
    for (bool warm : {false, true})
      benchmark::RegisterBenchmark(("BM_NewWeightsOnBoxes/" + kind + (warm ? "/warm" : "")).c_str(),
                                   BM_NewWeightsOnBoxes, kind, warm)
          ->ArgsProduct({kind.find('@') == std::string::npos
                             ? std::vector<std::int64_t>{100000, 1000000}
                             : std::vector<std::int64_t>{100000},
                         {1, 2, 8, 64}})
          ->Iterations(4)
          ->UseManualTime()
          ->Unit(benchmark::kMillisecond);
  return 0;
}();

} // namespace

int main(int argc, char** argv) {
  {
    sdot_bench::PerfEnvironment environment(argc, argv);
    int rank = 0;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    benchmark::Initialize(&argc, argv);
    if (rank == 0) {
      benchmark::RunSpecifiedBenchmarks();
    } else {
      struct Silent : benchmark::BenchmarkReporter {
        bool ReportContext(Context const&) override { return true; }
        void ReportRuns(std::vector<Run> const&) override {}
      } silent;
      benchmark::RunSpecifiedBenchmarks(&silent);
    }
    benchmark::Shutdown();
  }
  return 0;
}
