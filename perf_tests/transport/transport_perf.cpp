// Optimal transport from zero weights to uniform target masses, on uniform and clustered
// clouds (those of the benchmarks): Newton iterations, CG iterations, seconds, and the ratio
// of the whole solve to one measures() call on the same seeds, measured in the same run.
//
//   sdot_transport_perf [N ...]            (default: 10000 100000)
//   sdot_transport_perf --verbose [N ...]  (also every Newton step, on stderr)
//   --cloud uniform|clustered: one cloud only; --max-cg-tol X: the loosest forcing term;
//   --fixed-cg-tol: the fixed cg_tol of earlier versions instead of forcing terms;
//   --cg-tol X: the tightest forcing term (cg_tol)
//   --jacobi: the Jacobi preconditioner instead of the multilevel aggregation;
//   --matched-levels L, --aggregate-size K, --sweeps S, --omega W, --coarse-scale A,
//   --coarsest-size M, --cycle C (1: V-cycle, 2: W-cycle): its settings;
//   --nb-boxes K: the diagrams computed by K boxes (travelling cells) in this process
//   --time-steps K: after the solve, K time steps: the seeds move by up to 0.05 spacings
//   along a smooth field that vanishes on the square's sides (moved_along_field), and the
//   transport is solved again from the last weights, by the same solver given the new
//   positions (set_positions) and, in the same step, by a new solver (a second JSON line: the
//   median seconds of a step each way)
//
// One JSON line per case on stdout. Not a pass/fail test: docs/transport.md gives the current
// figures.
#include <bench_clouds.hpp>
#include <perf_environment.hpp>

#include <sdot/optimal_transport.hpp>

#include <Kokkos_Core.hpp>
#include <Kokkos_Timer.hpp>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <string>
#include <vector>

namespace {

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}

/// Time steps after a solve: each step the seeds of `cloud` move by up to 0.05 spacings
/// (moved_along_field), and the transport is solved again from the last weights by `ot` given
/// the new positions, then by a new solver on them (from the same weights). One JSON line.
void run_time_steps(sdot_test::Cloud cloud, Kokkos::View<double*> weights,
                    sdot::OptimalTransport<>& ot, int steps,
                    sdot::OptimalTransportOptions const& options,
                    sdot::PowerDiagramOptions const& diagram_options, std::string const& kind) {
  int const n = static_cast<int>(cloud.x.size());
  double const step = 0.05 / std::sqrt(double(n));
  Kokkos::View<double*> targets("perf::targets", n);
  Kokkos::deep_copy(targets, 1.0 / n);
  std::vector<double> moved_seconds, new_seconds;
  int moved_newton = 0, new_newton = 0;
  for (int k = 1; k <= steps; ++k) {
    cloud = sdot_test::moved_along_field(cloud, step, k);
    auto const positions = sdot_test::positions_view(cloud);
    Kokkos::Timer timer;
    ot.set_positions(positions);
    auto const moved = ot.solve(weights);
    Kokkos::fence();
    moved_seconds.push_back(timer.seconds());
    moved_newton += moved.statistics.newton_iterations;
    Kokkos::Timer new_timer;
    sdot::OptimalTransport<> fresh(positions, targets, sdot_bench::unit_square(), diagram_options,
                                   options);
    auto const again = fresh.solve(weights);
    Kokkos::fence();
    new_seconds.push_back(new_timer.seconds());
    new_newton += again.statistics.newton_iterations;
    weights = moved.weights;
  }
  std::printf("{\"cloud\": \"%s\", \"n\": %d, \"time_steps\": %d, "
              "\"step_seconds_set_positions\": %.4f, \"step_seconds_new_solver\": %.4f, "
              "\"newton_iterations_set_positions\": %d, \"newton_iterations_new_solver\": %d}\n",
              kind.c_str(), n, steps, median(moved_seconds), median(new_seconds), moved_newton,
              new_newton);
  std::fflush(stdout);
}

void run(std::string const& kind, int n, bool verbose, sdot::OptimalTransportOptions options,
         sdot::PowerDiagramOptions diagram_options, int time_steps) {
  auto cloud = sdot_bench::make_cloud(kind, n);
  for (auto& w : cloud.w)
    w = 0;
  auto positions = sdot_test::positions_view(cloud);
  auto zero = sdot_test::weights_view(cloud);
  auto const domain = sdot_bench::unit_square();

  // One measures() call on the same seeds (zero weights), median of 3.
  std::vector<double> measure_seconds;
  for (int k = 0; k < 3; ++k) {
    Kokkos::Timer timer;
    sdot::PowerDiagram<> pd(positions, zero, domain);
    pd.measures();
    Kokkos::fence();
    measure_seconds.push_back(timer.seconds());
  }
  double const one_measure = median(measure_seconds);
  // The same with the polygons kept (what the solver's evaluations do).
  std::vector<double> keep_seconds;
  for (int k = 0; k < 3; ++k) {
    Kokkos::Timer timer;
    sdot::PowerDiagramOptions keep;
    keep.keep_polygons = true;
    sdot::PowerDiagram<> pd(positions, zero, domain, keep);
    pd.measures();
    Kokkos::fence();
    keep_seconds.push_back(timer.seconds());
  }

  Kokkos::View<double*> targets("perf::targets", n);
  Kokkos::deep_copy(targets, 1.0 / n);
  if (verbose)
    options.progress = [](sdot::NewtonProgress const& p) {
      std::fprintf(stderr,
                   "  newton %2d: max error %.3e, step %.4g, %d halvings, %d CG iterations "
                   "(tol %.1e), %.2f s\n",
                   p.newton_iteration, p.max_error, p.step, p.halvings, p.cg_iterations, p.cg_tol,
                   p.seconds);
    };
  sdot::OptimalTransport<> ot(positions, targets, domain, diagram_options, options);
  Kokkos::Timer timer;
  auto result = ot.solve();
  Kokkos::fence();
  double const seconds = timer.seconds();
  auto const& s = result.statistics;
  // One measures() call at the weights found: cells of transport weights cost more to build.
  std::vector<double> solution_seconds;
  for (int k = 0; k < 3; ++k) {
    Kokkos::Timer t;
    sdot::PowerDiagram<> pd(positions, result.weights, domain);
    pd.measures();
    Kokkos::fence();
    solution_seconds.push_back(t.seconds());
  }
  std::printf("{\"cloud\": \"%s\", \"preconditioner\": \"%s\", \"n\": %d, \"newton_iterations\": "
              "%d, \"cg_iterations\": %d, "
              "\"diagram_evaluations\": %d, \"max_error\": %.3e, \"seconds\": %.3f, "
              "\"linear_seconds\": %.3f, "
              "\"measures_seconds\": %.4f, \"ratio_to_measures\": %.2f, "
              "\"measures_seconds_keeping_polygons\": %.4f, "
              "\"measures_seconds_at_solution\": %.4f}\n",
              kind.c_str(),
              options.preconditioner == sdot::CgPreconditioner::jacobi ? "jacobi" : "aggregation",
              n, s.newton_iterations, s.cg_iterations, s.diagram_evaluations, s.max_error, seconds,
              s.linear_seconds, one_measure, seconds / one_measure, median(keep_seconds),
              median(solution_seconds));
  std::fflush(stdout);
  if (time_steps > 0)
    run_time_steps(cloud, result.weights, ot, time_steps, options, diagram_options, kind);
}

} // namespace

int main(int argc, char* argv[]) {
  {
    sdot_bench::PerfEnvironment environment(argc, argv);
    bool verbose = false;
    sdot::OptimalTransportOptions options;
    sdot::PowerDiagramOptions diagram_options;
    std::vector<int> sizes;
    std::vector<std::string> kinds{"uniform", "clustered"};
    int time_steps = 0;
    for (int a = 1; a < argc; ++a) {
      std::string const arg = argv[a];
      if (arg == "--verbose")
        verbose = true;
      else if (arg == "--max-cg-tol" && a + 1 < argc)
        options.max_cg_tol = std::stod(argv[++a]);
      else if (arg == "--fixed-cg-tol")
        options.adaptive_cg_tol = false;
      else if (arg == "--norm-only-cg")
        options.linear_model_keeps_cells = false;
      else if (arg == "--cg-tol" && a + 1 < argc)
        options.cg_tol = std::stod(argv[++a]);
      else if (arg == "--jacobi")
        options.preconditioner = sdot::CgPreconditioner::jacobi;
      else if (arg == "--matched-levels" && a + 1 < argc)
        options.aggregation.matched_levels = std::stoi(argv[++a]);
      else if (arg == "--aggregate-size" && a + 1 < argc)
        options.aggregation.aggregate_size = std::stoi(argv[++a]);
      else if (arg == "--sweeps" && a + 1 < argc)
        options.aggregation.sweeps = std::stoi(argv[++a]);
      else if (arg == "--omega" && a + 1 < argc)
        options.aggregation.omega = std::stod(argv[++a]);
      else if (arg == "--coarse-scale" && a + 1 < argc)
        options.aggregation.coarse_scale = std::stod(argv[++a]);
      else if (arg == "--cycle" && a + 1 < argc)
        options.aggregation.cycle = std::stoi(argv[++a]);
      else if (arg == "--coarsest-size" && a + 1 < argc)
        options.aggregation.coarsest_size = std::stoi(argv[++a]);
      else if (arg == "--nb-boxes" && a + 1 < argc)
        diagram_options.nb_boxes = std::stoi(argv[++a]);
      else if (arg == "--cloud" && a + 1 < argc)
        kinds = {argv[++a]};
      else if (arg == "--time-steps" && a + 1 < argc)
        time_steps = std::stoi(argv[++a]);
      else if (!arg.empty() && arg.find_first_not_of("0123456789") == std::string::npos)
        sizes.push_back(std::stoi(arg));
      else {
        std::fprintf(stderr,
                     "usage: sdot_transport_perf [N...] [--cloud uniform|clustered] [--verbose] "
                     "[--max-cg-tol T] [--cg-tol T] [--fixed-cg-tol] [--norm-only-cg] [--jacobi] "
                     "[--matched-levels L] [--aggregate-size K] [--sweeps K] [--omega W] "
                     "[--coarse-scale S] [--cycle "
                     "C] [--coarsest-size K] [--nb-boxes K] [--time-steps K]\n");
        return arg == "--help" ? 0 : 1;
      }
    }
    if (sizes.empty())
      sizes = {10000, 100000};
    for (int n : sizes)
      for (auto const& kind : kinds)
        run(kind, n, verbose, options, diagram_options, time_steps);
  }
  return 0;
}
