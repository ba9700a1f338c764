// sdot-measures: the areas of the power-diagram cells of seeds read from an HDF5 file (or
// drawn at random), written to an HDF5 file, under MPI with any number of processes (one process
// when sdot is built without MPI). See docs/command-line.md.
#include "common/cell_files.hpp"
#include "common/command_line.hpp"
#include "common/random_cloud.hpp"

#include "common/json.hpp"
#include <sdot/hdf5_io.hpp>
#include <sdot/sdot.hpp>

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
/// The diagram of seeds spread over the processes (each passes its block).
using Diagram = sdot::PowerDiagram<ExecutionSpace, sdot::SpreadInput>;

char const* const usage =
    R"(usage: sdot-measures INPUT.h5 OUTPUT.h5 [options]
       sdot-measures --random N [--seed S] [OUTPUT.h5] [options]

The areas of the cells of the power (Laguerre) diagram of weighted seeds in a box. Run it
under MPI with any number of processes: each process reads and writes its own block of rows.

INPUT.h5 holds the datasets `positions` ([N, 2]) and `weights` ([N]), float64 or float32
(read as float64).
OUTPUT.h5 gets the dataset `measures` (float64, [N], in the order of the seeds); it is
written under a temporary name and renamed only once everything succeeded.

options:
  --box X0 Y0 X1 Y1      the domain [X0, X1] x [Y0, Y1] (default: the unit square)
  --random N             N seeds drawn uniformly in the box, weights uniform in [0, 1/N)
                         (the same cloud whatever the number of processes; OUTPUT.h5 then
                         also gets `positions` and `weights`)
  --seed S               seed of the random cloud (default 0)
  --centroids            also write the dataset `centroids` (float64, [N, 2])
  --cells FILE           also write the cells to FILE in the VTKHDF format, which ParaView
                         opens (one partition per process; cell data measure, seed_index,
                         weight)
  --svg FILE             also write a picture of the cells to FILE (SVG, 10000 seeds at most)
  --nb-boxes K           boxes of seeds per process (default 1)
  --msg-capacity C       vertices of a travelling cell's message (default 16)
  --inbox-capacity C     cells one rank sends to one other per round: a sizing hint,
                         grown to what was sent (default 64)
  --vertex-capacity C    vertices of a cell in the kernel's first pass (default 32)
  --same-bits            the same bits whatever the number of processes and boxes (each cell
                         recomputed from its edges once they are known; see docs/power-diagram.md)
  --coarse-to-fine M     automatic, always or never: how one box finds the seeds that cut each
                         cell (PowerDiagramOptions::coarse_to_fine; default automatic)
  --progress             a line on stderr as each phase ends (default: only once the run
                         has lasted 5 s)
  --quiet                no progress lines
  --help                 this help

Progress: process 0 prints "sdot-measures: <phase> <seconds> s" on stderr as each phase ends
(its own seconds): input (reading or drawing the seeds), then the diagram's phases (tree; or
boxes, cells and results), then output (writing the files).

It prints one JSON object on one line to stdout: n, ranks, boxes, sum_measures,
seconds {total, and one entry per phase}, and the diagram's statistics.
)";

struct Options {
  std::string input;  // empty with --random
  std::string output; // may be empty with --random
  std::int64_t random = 0;
  std::uint64_t seed = 0;
  bool seed_given = false;
  std::array<double, 2> lo{0, 0}, hi{1, 1};
  bool centroids = false;
  sdot::apps::CellFileOptions cell_files;
  sdot::PowerDiagramOptions diagram;
  enum class ProgressMode { long_runs, always, never } progress = ProgressMode::long_runs;
};

/// The progress lines on stderr, from process 0.
class Progress {
public:
  /// A run is long, and prints its phases by default, once it has lasted this long.
  static constexpr double long_run_seconds = 5;

  Progress(Options::ProgressMode mode, bool process_0) : mode_(mode), process_0_(process_0) {}
  /// Phase `phase` ended after `seconds` (on this process).
  void ended(std::string const& phase, double seconds) const {
    if (!process_0_ || mode_ == Options::ProgressMode::never ||
        (mode_ == Options::ProgressMode::long_runs && since_start_.seconds() < long_run_seconds))
      return;
    std::fprintf(stderr, "sdot-measures: %s %.3f s\n", phase.c_str(), seconds);
    std::fflush(stderr);
  }
  /// Ends phase `phase`, timed from the previous call (or the start).
  void end(std::string const& phase) {
    ended(phase, phase_.seconds());
    phase_.reset();
  }

private:
  Options::ProgressMode mode_;
  bool process_0_;
  Kokkos::Timer since_start_, phase_;
};

Options parse(std::vector<std::string> const& args) {
  using sdot::apps::parse_integer;
  Options o;
  sdot::apps::Arguments a(args);
  auto capacity = [&](std::string const& option) {
    return static_cast<int>(parse_integer(a.value_of(option), option, 1, 1 << 30));
  };
  while (!a.done()) {
    std::string const arg = a.take();
    if (arg == "--box") {
      sdot::apps::parse_box(a, o.lo, o.hi);
    } else if (arg == "--random") {
      o.random = parse_integer(a.value_of(arg), arg, 1);
    } else if (arg == "--seed") {
      o.seed = sdot::apps::parse_unsigned(a.value_of(arg), arg);
      o.seed_given = true;
    } else if (arg == "--centroids") {
      o.centroids = true;
    } else if (arg == "--progress") {
      o.progress = Options::ProgressMode::always;
    } else if (arg == "--quiet") {
      o.progress = Options::ProgressMode::never;
    } else if (o.cell_files.take(arg, a)) {
    } else if (arg == "--same-bits") {
      o.diagram.same_bits = true;
    } else if (arg == "--coarse-to-fine") {
      std::string const mode = a.value_of(arg);
      if (mode == "automatic")
        o.diagram.coarse_to_fine = sdot::CoarseToFine::automatic;
      else if (mode == "always")
        o.diagram.coarse_to_fine = sdot::CoarseToFine::always;
      else if (mode == "never")
        o.diagram.coarse_to_fine = sdot::CoarseToFine::never;
      else
        throw UsageError("--coarse-to-fine takes automatic, always or never, not '" + mode + "'");
    } else if (arg == "--nb-boxes") {
      o.diagram.nb_boxes = capacity(arg);
    } else if (arg == "--msg-capacity") {
      o.diagram.msg_capacity = capacity(arg);
    } else if (arg == "--inbox-capacity") {
      o.diagram.inbox_capacity = capacity(arg);
    } else if (arg == "--vertex-capacity") {
      o.diagram.vertex_capacity = capacity(arg);
    } else {
      a.take_file_name(arg);
    }
  }
  if (o.random > 0) {
    if (a.files().size() > 1)
      throw UsageError("--random takes at most one file, OUTPUT.h5");
    if (!a.files().empty())
      o.output = a.files()[0];
  } else {
    if (o.seed_given)
      throw UsageError("--seed goes with --random");
    std::tie(o.input, o.output) = sdot::apps::input_and_output(
        a.files(), "INPUT.h5 and OUTPUT.h5 are expected (or --random N)");
  }
  return o;
}

/// This process's block of the seeds, in the execution space's memory.
struct Seeds {
  std::int64_t total = 0; // N
  sdot::hdf5::RowBlock block;
  Diagram::positions_type positions;
  Diagram::scalars_type weights;
};

Seeds read_seeds(loom::Ranks const& ranks, std::string const& path) {
  sdot::hdf5::InputFile file(ranks, path);
  Seeds s;
  s.total = file.rows("positions", 2);
  sdot::apps::check_rows_per_seed(file, path, "weights", s.total);
  s.block = file.even_block(s.total);
  auto positions = file.read_points("positions", s.block);
  auto weights_block = file.read_vector("weights", s.block);
  sdot::hdf5::agreed(ranks, [&] {
    ExecutionSpace space;
    s.positions =
        sdot::hdf5::to_space<Diagram::positions_type>(space, positions, "sdot-measures::positions");
    s.weights =
        sdot::hdf5::to_space<Diagram::scalars_type>(space, weights_block, "sdot-measures::weights");
  });
  return s;
}

Seeds random_seeds(loom::Ranks const& ranks, Options const& o) {
  Seeds s;
  s.total = o.random;
  s.block = sdot::hdf5::even_block(s.total, ranks.process_count(), ranks.process_rank());
  sdot::hdf5::agreed(ranks, [&] {
    ExecutionSpace space;
    s.positions = Diagram::positions_type(
        Kokkos::view_alloc(space, Kokkos::WithoutInitializing, "sdot-measures::positions"),
        s.block.count);
    s.weights = Diagram::scalars_type(
        Kokkos::view_alloc(space, Kokkos::WithoutInitializing, "sdot-measures::weights"),
        s.block.count);
    sdot::apps::fill_uniform_cloud(space, s.positions, s.weights, s.block.first, s.total, o.seed,
                                   o.lo, o.hi);
    space.fence();
  });
  return s;
}

/// What the diagram gives for this process's block of seeds.
struct DiagramResult {
  Diagram::scalars_type measures;                     // in the order of the seeds
  Diagram::positions_type centroids;                  // when asked for
  sdot::CellPolygons<Diagram::memory_space> polygons; // when asked for
  double sum_measures = 0;                            // over all the processes
  int boxes = 0;                                      // over all the processes
  double seconds = 0;       // the slowest process: constructing and computing
  JsonObject phase_seconds; // PowerDiagram::statistics().seconds of process 0
  JsonObject statistics;    // the diagram's statistics (of all the ranks)
};

/// The diagram of the seeds spread over the processes, options.nb_boxes boxes each
/// (collective); the centroids and the polygons when asked for.
DiagramResult compute_diagram(Seeds const& seeds, std::vector<sdot::HalfSpace> const& boundaries,
                              sdot::PowerDiagramOptions options, bool centroids, bool polygons) {
  loom::Ranks const ranks = loom::WorldRanks(options.nb_boxes);
  options.keep_polygons = polygons; // built with the measures rather than once more
  ExecutionSpace space;
  Kokkos::Timer timer;
  std::optional<Diagram> diagram;
  try {
    diagram.emplace(space, loom::spread(seeds.positions, ranks), loom::spread(seeds.weights, ranks),
                    boundaries, options);
  } catch (std::invalid_argument const& e) {
    throw loom::Error(e.what(), true); // the constructor reports a problem on every process
  }
  DiagramResult r;
  sdot::hdf5::agreed(ranks, [&] {
    r.measures = diagram->measures().value();
    if (centroids)
      r.centroids = diagram->centroids().value();
    if (polygons)
      r.polygons = diagram->cell_polygons();
    space.fence();
  });
  Kokkos::View<double*, Kokkos::HostSpace> seconds("sdot-measures::seconds", ranks.local_count());
  Kokkos::deep_copy(seconds, timer.seconds());
  r.seconds = ranks.all_max(seconds);
  r.sum_measures = diagram->measures().sum();

  auto const& st = diagram->statistics();
  for (auto const& [phase, phase_seconds] : st.seconds)
    if (phase != "total")
      r.phase_seconds.add(phase, phase_seconds);
  bool const travelling = st.ranks > 1;
  r.boxes = st.ranks;
  r.statistics.add("overflowed_cells", st.overflowed_cells)
      .add("vertex_reruns", st.vertex_reruns)
      .add("final_vertex_capacity", st.final_vertex_capacity)
      .add("coarse_levels", st.coarse_levels)
      .add("rounds", st.rounds)
      .add("travelled_cells", st.travelled_cells)
      .add("bytes_sent", st.bytes_sent)
      .add("reruns", st.reruns)
      .add("vertex_capacity", options.vertex_capacity)
      .add("msg_capacity", options.msg_capacity)
      .add("inbox_capacity", options.inbox_capacity)
      .add("final_msg_capacity", travelling ? st.msg_capacity : options.msg_capacity)
      .add("final_inbox_capacity", travelling ? st.inbox_capacity : options.inbox_capacity);
  return r;
}

int run(std::vector<std::string> const& args) {
  Options const o = parse(args);
  std::vector<sdot::HalfSpace> const boundaries = sdot::box_half_spaces(o.lo, o.hi);
  sdot::DomainPolygon const domain = sdot::domain_polygon(boundaries);
  loom::Ranks const ranks = loom::WorldRanks();
  Progress progress(o.progress, ranks.process_rank() == 0);

  Seeds const seeds = o.random > 0 ? random_seeds(ranks, o) : read_seeds(ranks, o.input);
  // Created before the computation, so that a bad OUTPUT fails early.
  sdot::apps::CellFiles cell_files(ranks, o.cell_files, seeds.total, o.output);
  std::optional<sdot::hdf5::OutputFile> output;
  if (!o.output.empty())
    output.emplace(ranks, o.output);

  progress.end("input");

  sdot::PowerDiagramOptions diagram = o.diagram;
  diagram.phase_ended = [&progress](std::string const& phase, double seconds) {
    progress.ended(phase, seconds);
  };
  DiagramResult const result =
      compute_diagram(seeds, boundaries, diagram, o.centroids, cell_files.wanted());
  progress.end("diagram");

  sdot::hdf5::HostVector measures, weights;
  sdot::hdf5::HostPoints centroids, positions;
  sdot::hdf5::HostCells cells;
  sdot::hdf5::agreed(ranks, [&] {
    measures = sdot::hdf5::to_host(result.measures);
    if (o.centroids)
      centroids = sdot::hdf5::to_host(result.centroids);
    if (o.random > 0 || cell_files.wanted()) {
      positions = sdot::hdf5::to_host(seeds.positions);
      weights = sdot::hdf5::to_host(seeds.weights);
    }
    if (cell_files.wanted()) {
      cells = sdot::hdf5::to_host_cells(result.polygons);
      cells.cell_data = {{"measure", measures}, {"weight", weights}};
    }
  });
  if (output) {
    if (o.random > 0) {
      output->write("positions", positions);
      output->write("weights", weights);
    }
    output->write("measures", measures);
    if (o.centroids)
      output->write("centroids", centroids);
  }
  cell_files.write(ranks, cells, positions, domain);
  if (output)
    output->commit();
  cell_files.commit();
  progress.end("output");

  if (ranks.process_rank() == 0) {
    JsonObject times;
    times.add("total", result.seconds).append(result.phase_seconds);
    JsonObject report;
    report.add("n", seeds.total)
        .add("ranks", ranks.process_count())
        .add("boxes", result.boxes)
        .add("domain_area", domain.area)
        .add("sum_measures", result.sum_measures)
        .add("seconds", times)
        .append(result.statistics);
    if (o.random > 0)
      report.add("random", o.random).add("seed", o.seed);
    else
      report.add("input", o.input);
    if (o.output.empty())
      report.add_null("output");
    else
      report.add("output", o.output);
    std::printf("%s\n", report.str().c_str());
  }
  return 0;
}

} // namespace

int main(int argc, char* argv[]) {
  return sdot::apps::command_main(argc, argv, "sdot-measures", usage, run);
}
