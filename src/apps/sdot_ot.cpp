// sdot-ot: semi-discrete optimal transport from the uniform measure on a box to prescribed
// masses at seeds read from an HDF5 file, under MPI (one process when sdot is built without
// MPI). See docs/transport.md.
#include "common/cell_files.hpp"
#include "common/command_line.hpp"

#include "common/json.hpp"
#include <sdot/hdf5_io.hpp>
#include <sdot/optimal_transport.hpp>

#include <loom/loom.hpp>

#include <Kokkos_Timer.hpp>

#include <array>
#include <cstdint>
#include <cstdio>
#include <optional>
#include <string>
#include <tuple>
#include <vector>

namespace {

using sdot::apps::UsageError;
using sdot::detail::JsonObject;
using ExecutionSpace = Kokkos::DefaultExecutionSpace;
using Cells = sdot::SpreadCells<ExecutionSpace>;

char const* const usage =
    R"(usage: sdot-ot INPUT.h5 OUTPUT.h5 [options]

The weights for which every cell of the power diagram of the seeds, in a box, holds its
prescribed mass (semi-discrete optimal transport; damped Newton, conjugate gradient). Run it
under MPI with any number of processes: each process reads and writes its own block of rows.

INPUT.h5 holds `positions` (float64, [N, 2]) and optionally `masses` (float64, [N]: positive,
adding up to the box's area; default: the area / N each) and `weights` (float64, [N]: initial
weights; default: zeros). OUTPUT.h5 gets `weights` and `measures` (float64, [N]); it is
written under a temporary name and renamed only once everything succeeded.

options:
  --box X0 Y0 X1 Y1      the domain [X0, X1] x [Y0, Y1] (default: the unit square)
  --tol T                stop when |m_i - mass_i| <= T x area for every i (default 1e-10)
  --max-newton K         Newton steps at most (default 100)
  --cg-tol T             relative residual of the linear solves (default 1e-3)
  --block-jacobi         on several processes, precondition each process's rows alone
                         (block Jacobi) instead of with levels that couple the processes
  --cells FILE           also write the cells at the weights found to FILE in the VTKHDF
                         format, which ParaView opens (one partition per process; cell data
                         measure, seed_index, target_mass, weight)
  --svg FILE             also write a picture of the cells to FILE (SVG, 10000 seeds at most)
  --quiet                no progress lines on stderr
  --help                 this help

Progress: process 0 prints one line per Newton step on stderr (the initial weights as step
0): the step, max_i |m_i - mass_i| / mass_i, the damping taken, the conjugate-gradient
iterations and the seconds since the start of the solve.
It prints one JSON object on one line to stdout: n, ranks, newton_iterations,
cg_iterations, diagram_evaluations, max_error (max |m_i - mass_i|), tol, domain_area, and
seconds {total (the whole run on the slowest process), solve, linear (Jacobians and CG)}.
)";

struct Options {
  std::string input, output;
  std::array<double, 2> lo{0, 0}, hi{1, 1};
  sdot::OptimalTransportOptions transport;
  sdot::apps::CellFileOptions cell_files;
  bool quiet = false;
};

Options parse(std::vector<std::string> const& args) {
  using sdot::apps::parse_integer;
  using sdot::apps::parse_real;
  Options o;
  sdot::apps::Arguments a(args);
  while (!a.done()) {
    std::string const arg = a.take();
    if (arg == "--box") {
      sdot::apps::parse_box(a, o.lo, o.hi);
    } else if (arg == "--tol") {
      o.transport.tol = parse_real(a.value_of(arg), arg);
      if (!(o.transport.tol > 0))
        throw UsageError("--tol must be positive");
    } else if (arg == "--max-newton") {
      o.transport.max_newton = static_cast<int>(parse_integer(a.value_of(arg), arg, 0, 1 << 20));
    } else if (arg == "--cg-tol") {
      o.transport.cg_tol = parse_real(a.value_of(arg), arg);
      if (!(o.transport.cg_tol > 0 && o.transport.cg_tol < 1))
        throw UsageError("--cg-tol must be in (0, 1)");
    } else if (arg == "--block-jacobi") {
      o.transport.aggregation.couple_processes = false;
    } else if (o.cell_files.take(arg, a)) {
    } else if (arg == "--quiet") {
      o.quiet = true;
    } else if (arg == "--verbose") { // the progress lines, the default
      o.quiet = false;
    } else {
      a.take_file_name(arg);
    }
  }
  std::tie(o.input, o.output) =
      sdot::apps::input_and_output(a.files(), "INPUT.h5 and OUTPUT.h5 are expected");
  return o;
}

struct Input {
  std::int64_t total = 0;
  Cells::positions_type positions;
  Cells::scalars_type masses, weights; // weights: empty when not given
  bool has_weights = false;            // the file has `weights` (the same on every process)
};

Input read_input(loom::Ranks const& ranks, std::string const& path, double area) {
  sdot::hdf5::InputFile file(ranks, path);
  Input in;
  in.total = file.rows("positions", 2);
  auto const block = file.even_block(in.total);
  auto positions = file.read_points("positions", block);
  std::optional<sdot::hdf5::HostVector> masses, weights;
  if (file.has("masses")) {
    sdot::apps::check_rows_per_seed(file, path, "masses", in.total);
    masses = file.read_vector("masses", block);
  }
  if (file.has("weights")) {
    sdot::apps::check_rows_per_seed(file, path, "weights", in.total);
    weights = file.read_vector("weights", block);
    in.has_weights = true;
  }
  sdot::hdf5::agreed(ranks, [&] {
    ExecutionSpace space;
    in.positions =
        sdot::hdf5::to_space<Cells::positions_type>(space, positions, "sdot-ot::positions");
    if (masses) {
      in.masses = sdot::hdf5::to_space<Cells::scalars_type>(space, *masses, "sdot-ot::masses");
    } else {
      in.masses = Cells::scalars_type("sdot-ot::masses", block.count);
      Kokkos::deep_copy(space, in.masses, area / static_cast<double>(in.total));
    }
    if (weights)
      in.weights = sdot::hdf5::to_space<Cells::scalars_type>(space, *weights, "sdot-ot::weights");
    space.fence();
  });
  return in;
}

int run(std::vector<std::string> const& args) {
  Options o = parse(args);
  std::vector<sdot::HalfSpace> const boundaries = sdot::box_half_spaces(o.lo, o.hi);
  sdot::DomainPolygon const domain = sdot::domain_polygon(boundaries);
  double const area = domain.area;
  loom::Ranks const ranks = loom::WorldRanks();
  Kokkos::Timer timer;

  Input const in = read_input(ranks, o.input, area);
  // Created before the solve, so that a bad OUTPUT fails early.
  sdot::apps::CellFiles cell_files(ranks, o.cell_files, in.total, o.output);
  sdot::hdf5::OutputFile output(ranks, o.output);

  if (!o.quiet && ranks.process_rank() == 0)
    o.transport.progress = [](sdot::NewtonProgress const& p) {
      std::fprintf(stderr,
                   "sdot-ot: newton %d: max |m - mass| / mass %.3e, step %.4g, %d CG iterations, "
                   "%.2f s\n",
                   p.newton_iteration, p.max_relative_error, p.step, p.cg_iterations, p.seconds);
      std::fflush(stderr);
    };
  // The solver moves the seeds to spatial blocks (each process the seeds of one region) and
  // its results back to the rows read: its errors name those rows.
  ExecutionSpace space;
  using Transport = sdot::OptimalTransport<ExecutionSpace, sdot::SpreadInput>;
  sdot::OptimalTransportResult<Cells::memory_space> result;
  try {
    Transport transport(space, loom::spread(in.positions, ranks), loom::spread(in.masses, ranks),
                        boundaries, {}, o.transport);
    result = in.has_weights ? transport.solve(loom::spread(in.weights, ranks)) : transport.solve();
  } catch (std::exception const& e) {
    // The solver's errors are decided from values every process shares: all throw the same.
    throw loom::Error(e.what(), true);
  }
  Cells::scalars_type const found = result.weights;
  Cells::scalars_type const found_measures = result.measures;

  sdot::hdf5::HostVector weights, measures;
  sdot::hdf5::HostPoints positions;
  sdot::hdf5::HostCells polygons;
  std::optional<Cells> input_cells; // the cells of the rows read, for the cells' files
  if (cell_files.wanted()) {
    input_cells.emplace(ranks, in.positions, boundaries);
    input_cells->set_weights(found);
    input_cells->measures();
  }
  sdot::hdf5::agreed(ranks, [&] {
    weights = sdot::hdf5::to_host(found);
    measures = sdot::hdf5::to_host(found_measures);
    if (cell_files.wanted()) {
      polygons = sdot::hdf5::to_host_cells(input_cells->cell_polygons());
      polygons.cell_data = {{"measure", measures},
                            {"target_mass", sdot::hdf5::to_host(in.masses)},
                            {"weight", weights}};
      positions = sdot::hdf5::to_host(in.positions);
    }
  });
  output.write("weights", weights);
  output.write("measures", measures);
  cell_files.write(ranks, polygons, positions, domain);
  output.commit();
  cell_files.commit();

  Kokkos::View<double*, Kokkos::HostSpace> seconds("sdot-ot::seconds", ranks.local_count());
  Kokkos::deep_copy(seconds, timer.seconds());
  double const slowest = ranks.all_max(seconds);
  if (ranks.process_rank() == 0) {
    auto const& s = result.statistics;
    JsonObject report;
    report.add("n", in.total)
        .add("ranks", ranks.process_count())
        .add("newton_iterations", s.newton_iterations)
        .add("cg_iterations", s.cg_iterations)
        .add("diagram_evaluations", s.diagram_evaluations)
        .add("max_error", s.max_error)
        .add("tol", o.transport.tol)
        .add("domain_area", area)
        .add("seconds", JsonObject()
                            .add("total", slowest)
                            .add("solve", s.seconds)
                            .add("linear", s.linear_seconds))
        .add("input", o.input)
        .add("output", o.output);
    std::printf("%s\n", report.str().c_str());
  }
  return 0;
}

} // namespace

int main(int argc, char* argv[]) {
  return sdot::apps::command_main(argc, argv, "sdot-ot", usage, run);
}
