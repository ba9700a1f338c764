// The sdot-measures program, run as a separate process on files written here with the serial
// HDF5 API: its measures against sdot::PowerDiagram on the same data, its random clouds, and
// its handling of bad input (message, exit status, no output file left behind).
#include "apps/cell_checks.hpp"
#include "apps/h5_files.hpp"
#include "apps/run_program.hpp"
#include "sdot/clouds.hpp"

#include "common/random_cloud.hpp"

#include <sdot/sdot.hpp>

#include <gtest/gtest.h>

#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <functional>
#include <sstream>
#include <string>
#include <vector>

using namespace sdot_test;

namespace {

// ---- running sdot-measures ----------------------------------------------------------------

std::vector<Outcome> run_all(std::vector<std::string> const& args,
                             ScratchDirectory const& scratch) {
  std::vector<Job> jobs;
  for (auto const& a : args)
    jobs.push_back({a, 0});
  return run_all(SDOT_MEASURES_EXE, jobs, scratch);
}

std::vector<Outcome> run_all(std::vector<Job> const& jobs, ScratchDirectory const& scratch) {
  return run_all(SDOT_MEASURES_EXE, jobs, scratch);
}

Outcome run(std::string const& args, ScratchDirectory const& scratch, int processes = 0) {
  return run_all(SDOT_MEASURES_EXE, std::vector<Job>{{args, processes}}, scratch)[0];
}

// ---- the reference -----------------------------------------------------------------------------

struct Reference {
  std::vector<double> measures;
  std::vector<double> centroids; // x0, y0, x1, ...
  sdot::PowerDiagramStatistics statistics;
};

Reference library(Cloud const& c, std::vector<sdot::HalfSpace> const& box,
                  sdot::PowerDiagramOptions options = {}) {
  sdot::PowerDiagram<> pd(positions_view(c), weights_view(c), box, options);
  Reference r;
  r.measures = to_vector(pd.measures());
  auto const centroids = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), pd.centroids());
  for (std::size_t i = 0; i < centroids.extent(0); ++i)
    r.centroids.insert(r.centroids.end(), {centroids(i, 0), centroids(i, 1)});
  r.statistics = pd.statistics();
  return r;
}

void write_cloud(std::string const& path, Cloud const& c) {
  hsize_t const n = c.x.size();
  H5Writer(path).add("positions", {n, 2}, flat_positions(c)).add("weights", {n}, c.w);
}

Cloud cloud_from_file(std::string const& path) {
  auto const p = h5_read(path, "positions");
  auto const w = h5_read(path, "weights");
  Cloud c;
  for (std::size_t i = 0; i < w.values.size(); ++i)
    c.x.push_back({p.values[2 * i], p.values[2 * i + 1]});
  c.w = w.values;
  return c;
}

// Every got[i] within `tolerance` of want[i]; reports the number of misses and the first one.
void expect_near_all(std::vector<double> const& got, std::vector<double> const& want,
                     double tolerance, std::string const& what) {
  ASSERT_EQ(got.size(), want.size()) << what;
  std::size_t misses = 0, first = 0;
  for (std::size_t i = 0; i < got.size(); ++i)
    if (!(std::fabs(got[i] - want[i]) <= tolerance) && misses++ == 0)
      first = i;
  EXPECT_EQ(misses, 0u) << what << " " << first << ": " << got[first] << " instead of "
                        << want[first] << " (and " << misses << " in all)";
}

double sum(std::vector<double> const& v) {
  double s = 0;
  for (double x : v)
    s += x;
  return s;
}

bool has_temporary(std::string const& directory) {
  for (auto const& name : directory_entries(directory))
    if (name.find(".tmp-") != std::string::npos)
      return true;
  return false;
}

} // namespace

// The reference is the library's one-box diagram with the default options: the options change
// how the diagram is computed, never its cells.
TEST(SdotMeasures, MatchesTheLibrary) {
  ScratchDirectory scratch;
  Cloud const uniform = uniform_cloud(500, 1e-3, 11);
  Cloud const clustered = clustered_cloud(400, 12);
  write_cloud(scratch / "uniform.h5", uniform);
  write_cloud(scratch / "clustered.h5", clustered);
  auto const outcomes =
      run_all({quote(scratch / "uniform.h5") + " " + quote(scratch / "uniform_out.h5") +
                   " --centroids --vertex-capacity 4",
               quote(scratch / "clustered.h5") + " " + quote(scratch / "clustered_out.h5") +
                   " --box -0.5 -0.25 1.5 1.25 --nb-boxes 3 --msg-capacity 2 --inbox-capacity 8",
               quote(scratch / "clustered.h5") + " " + quote(scratch / "coarse_out.h5") +
                   " --coarse-to-fine always"},
              scratch);

  { // unit square, one box, centroids; too few vertices at first
    Outcome const& o = outcomes[0];
    ASSERT_EQ(o.status, 0) << o.err;
    EXPECT_EQ(o.err, "");
    expect_one_json_line(o);
    auto const ref = library(uniform, sdot::box_half_spaces({0, 0}, {1, 1}));
    std::string const out = scratch / "uniform_out.h5";
    auto const measures = h5_read(out, "measures");
    EXPECT_EQ(measures.dims, (std::vector<hsize_t>{500}));
    expect_near_all(measures.values, ref.measures, 1e-12, "measure");
    auto const centroids = h5_read(out, "centroids");
    EXPECT_EQ(centroids.dims, (std::vector<hsize_t>{500, 2}));
    expect_near_all(centroids.values, ref.centroids, 1e-12, "centroid coordinate");
    EXPECT_FALSE(h5_has(out, "positions"));
    EXPECT_EQ(json_number(o.out, "n"), 500);
    EXPECT_EQ(json_number(o.out, "ranks"), 1);
    EXPECT_EQ(json_number(o.out, "boxes"), 1);
    EXPECT_EQ(json_number(o.out, "domain_area"), 1);
    EXPECT_NEAR(json_number(o.out, "sum_measures"), 1, 1e-12);
    EXPECT_GE(json_number(o.out, "total"), 0);
    for (auto const& [phase, seconds] : ref.statistics.seconds)
      EXPECT_GE(json_number(o.out, phase), 0)
          << "no entry for the phase " << phase << ": " << o.out;
    // the statistics are the library's with the same options
    sdot::PowerDiagramOptions options;
    options.vertex_capacity = 4;
    auto const same = library(uniform, sdot::box_half_spaces({0, 0}, {1, 1}), options).statistics;
    EXPECT_EQ(json_number(o.out, "vertex_capacity"), 4);
    EXPECT_GT(same.final_vertex_capacity, 4); // 4 vertices are too few for some cells
    EXPECT_EQ(json_number(o.out, "final_vertex_capacity"), same.final_vertex_capacity);
    EXPECT_EQ(json_number(o.out, "overflowed_cells"), same.overflowed_cells);
    EXPECT_EQ(json_number(o.out, "vertex_reruns"), same.vertex_reruns);
  }
  { // another box, 3 boxes, capacities too small at first
    Outcome const& o = outcomes[1];
    ASSERT_EQ(o.status, 0) << o.err;
    expect_one_json_line(o);
    auto const ref = library(clustered, sdot::box_half_spaces({-0.5, -0.25}, {1.5, 1.25}));
    std::string const out = scratch / "clustered_out.h5";
    expect_near_all(h5_read(out, "measures").values, ref.measures, 3e-12, "measure");
    EXPECT_FALSE(h5_has(out, "centroids"));
    EXPECT_NEAR(json_number(o.out, "sum_measures"), 3, 3e-12);
    EXPECT_EQ(json_number(o.out, "domain_area"), 3);
    EXPECT_EQ(json_number(o.out, "boxes"), 3);
    EXPECT_EQ(json_number(o.out, "msg_capacity"), 2);
    EXPECT_EQ(json_number(o.out, "inbox_capacity"), 8);
    EXPECT_EQ(json_number(o.out, "reruns"), 0) << o.out; // polygons hold 32 vertices or more
    EXPECT_GT(json_number(o.out, "final_msg_capacity"), 2) << o.out; // grown to the messages
    EXPECT_GT(json_number(o.out, "travelled_cells"), 0) << o.out;
  }
  { // one box, the cells from coarser diagrams
    Outcome const& o = outcomes[2];
    ASSERT_EQ(o.status, 0) << o.err;
    expect_one_json_line(o);
    auto const ref = library(clustered, sdot::box_half_spaces({0, 0}, {1, 1}));
    expect_near_all(h5_read(scratch / "coarse_out.h5", "measures").values, ref.measures, 1e-12,
                    "measure");
    EXPECT_GE(json_number(o.out, "coarse_levels"), 1) << o.out;
  }
  EXPECT_FALSE(has_temporary(scratch.path()));
}

TEST(SdotMeasures, RandomClouds) {
  ScratchDirectory scratch;
  auto const outcomes = run_all({"--random 3000 --seed 7 " + quote(scratch / "a.h5"),
                                 "--seed 7 --random 3000 " + quote(scratch / "b.h5"),
                                 "--random 3000 --seed 8 " + quote(scratch / "c.h5"),
                                 "--random 1000 --box 0 0 2 3 " + quote(scratch / "d.h5"),
                                 "--random 500 --centroids", "--help"},
                                scratch);
  for (std::size_t i = 0; i + 1 < outcomes.size(); ++i) {
    ASSERT_EQ(outcomes[i].status, 0) << i << ": " << outcomes[i].err;
    EXPECT_EQ(outcomes[i].err, "");
    expect_one_json_line(outcomes[i]);
  }
  { // uniform in the unit square, weights in [0, 1/N); areas add up to 1
    Cloud const a = cloud_from_file(scratch / "a.h5");
    ASSERT_EQ(a.w.size(), 3000u);
    for (std::size_t i = 0; i < a.w.size(); ++i) {
      EXPECT_TRUE(a.x[i][0] >= 0 && a.x[i][0] < 1 && a.x[i][1] >= 0 && a.x[i][1] < 1) << i;
      EXPECT_TRUE(a.w[i] >= 0 && a.w[i] < 1.0 / 3000) << i;
    }
    auto const measures = h5_read(scratch / "a.h5", "measures").values;
    EXPECT_NEAR(sum(measures), 1, 1e-12);
    EXPECT_NEAR(json_number(outcomes[0].out, "sum_measures"), 1, 1e-12);
    EXPECT_EQ(json_number(outcomes[0].out, "n"), 3000);
    expect_near_all(measures, library(a, sdot::box_half_spaces({0, 0}, {1, 1})).measures, 1e-12,
                    "measure");
    // the same seed gives the same cloud, another seed another one
    EXPECT_EQ(flat_positions(cloud_from_file(scratch / "b.h5")), flat_positions(a));
    EXPECT_EQ(h5_read(scratch / "b.h5", "measures").values, measures);
    EXPECT_NE(flat_positions(cloud_from_file(scratch / "c.h5")), flat_positions(a));
  }
  { // in the box [0, 2] x [0, 3]
    Cloud const d = cloud_from_file(scratch / "d.h5");
    for (auto const& x : d.x)
      EXPECT_TRUE(x[0] >= 0 && x[0] <= 2 && x[1] >= 0 && x[1] <= 3);
    EXPECT_NEAR(sum(h5_read(scratch / "d.h5", "measures").values), 6, 6e-12);
    EXPECT_NEAR(json_number(outcomes[3].out, "sum_measures"), 6, 6e-12);
  }
  { // no output file: the report only
    EXPECT_NE(outcomes[4].out.find("\"output\":null"), std::string::npos) << outcomes[4].out;
    EXPECT_NEAR(json_number(outcomes[4].out, "sum_measures"), 1, 1e-12);
  }
  { // --help
    EXPECT_EQ(outcomes[5].status, 0);
    EXPECT_EQ(outcomes[5].out.rfind("usage: sdot-measures", 0), 0u) << outcomes[5].out;
    for (char const* option :
         {"--box", "--random", "--seed", "--centroids", "--nb-boxes", "--msg-capacity",
          "--inbox-capacity", "--vertex-capacity", "--coarse-to-fine"})
      EXPECT_NE(outcomes[5].out.find(option), std::string::npos) << option;
  }
  EXPECT_FALSE(has_temporary(scratch.path()));
}

TEST(SdotMeasures, RandomCloudIsTheSameWhateverTheSplit) {
  // What each process draws for its block, against the cloud drawn as a whole.
  std::int64_t const n = 1001;
  using Points = sdot::Points<Kokkos::HostSpace>;
  using Values = Kokkos::View<double*, Kokkos::HostSpace>;
  Kokkos::DefaultHostExecutionSpace const host;
  Points whole_x("whole_x", n);
  Values whole_w("whole_w", n);
  sdot::apps::fill_uniform_cloud(host, whole_x, whole_w, 0, n, 5, {-1, 2}, {3, 2.5});
  host.fence();
  double mean = 0;
  for (std::int64_t i = 0; i < n; ++i) {
    EXPECT_TRUE(whole_x(i, 0) >= -1 && whole_x(i, 0) <= 3 && whole_x(i, 1) >= 2 &&
                whole_x(i, 1) <= 2.5)
        << i;
    EXPECT_TRUE(whole_w(i) >= 0 && whole_w(i) < 1.0 / n) << i;
    mean += whole_x(i, 0) / n;
  }
  EXPECT_NEAR(mean, 1, 0.15); // uniform on [-1, 3]: mean 1, standard error 0.036
  for (int parts = 1; parts <= 6; ++parts)
    for (int p = 0; p < parts; ++p) {
      std::int64_t const first = n * p / parts, count = n * (p + 1) / parts - first;
      Points x("x", count);
      Values w("w", count);
      sdot::apps::fill_uniform_cloud(host, x, w, first, n, 5, {-1, 2}, {3, 2.5});
      host.fence();
      for (std::int64_t i = 0; i < count; ++i) {
        EXPECT_EQ(x(i, 0), whole_x(first + i, 0));
        EXPECT_EQ(x(i, 1), whole_x(first + i, 1));
        EXPECT_EQ(w(i), whole_w(first + i));
      }
    }
}

TEST(SdotMeasures, ProgressLines) {
  ScratchDirectory scratch;
  int const two = processes_or_alone(2);
  auto const outcomes = run_all(std::vector<Job>{{"--random 500 --progress", 0},
                                                 {"--random 500 --progress --nb-boxes 2", two},
                                                 {"--random 500 --quiet", two},
                                                 {"--random 500", two}},
                                scratch);
  auto const lines = [](std::string const& err) {
    std::vector<std::string> phases;
    std::istringstream in(err);
    for (std::string line; std::getline(in, line);) {
      std::istringstream words(line);
      std::string program, phase, unit;
      double seconds = -1;
      words >> program >> phase >> seconds >> unit;
      EXPECT_EQ(program, "sdot-measures:") << line;
      EXPECT_GE(seconds, 0) << line;
      EXPECT_EQ(unit, "s") << line;
      phases.push_back(phase);
    }
    return phases;
  };
  for (auto const& o : outcomes)
    ASSERT_EQ(o.status, 0) << o.err;
  // Process 0's phases, in order, once each.
  EXPECT_EQ(lines(outcomes[0].err),
            (std::vector<std::string>{"input", "tree", "cells", "diagram", "output"}))
      << outcomes[0].err;
  EXPECT_EQ(lines(outcomes[1].err), (std::vector<std::string>{"input", "boxes", "tree", "cells",
                                                              "results", "diagram", "output"}))
      << outcomes[1].err;
  EXPECT_EQ(outcomes[2].err, "");
  EXPECT_EQ(outcomes[3].err, ""); // a short run: no line by default
}

TEST(SdotMeasures, BadInputIsReportedAndLeavesNoFile) {
  ScratchDirectory scratch;
  struct BadCase {
    std::string name;
    std::function<void(std::string const&)> setup; // writes the input files in the directory
    std::string args;                              // '@' stands for the case's directory
    std::string fragment;                          // in the message
    int status;
  };
  Cloud const c = uniform_cloud(10, 1e-3, 3);
  hsize_t const n = 10;
  auto const good = [&](std::string const& d) { write_cloud(d + "/in.h5", c); };
  auto const with_bad_weight = [&](std::size_t i, double w) {
    return [&c, i, w](std::string const& d) {
      Cloud bad = c;
      bad.w[i] = w;
      write_cloud(d + "/in.h5", bad);
    };
  };
  std::string const io = "@/in.h5 @/out.h5";
  std::vector<BadCase> const cases = {
      {"missing_file", [](std::string const&) {}, io, "cannot open '@/in.h5'", 1},
      {"not_hdf5", [](std::string const& d) { std::ofstream(d + "/in.h5") << "positions\n"; }, io,
       "'@/in.h5' is not an HDF5 file", 1},
      {"no_weights",
       [&](std::string const& d) {
         H5Writer(d + "/in.h5").add("positions", {n, 2}, flat_positions(c));
       },
       io, "no dataset 'weights'", 1},
      {"weights_not_a_dataset",
       [&](std::string const& d) {
         H5Writer(d + "/in.h5").add("positions", {n, 2}, flat_positions(c)).add_group("weights");
       },
       io, "'weights' is not a dataset", 1},
      {"positions_3_columns",
       [&](std::string const& d) {
         H5Writer(d + "/in.h5")
             .add("positions", {n, 3}, std::vector<double>(30, 0.5))
             .add("weights", {n}, c.w);
       },
       io, "dataset 'positions' has shape [10, 3]; [N, 2] is expected", 1},
      {"positions_flat",
       [&](std::string const& d) {
         H5Writer(d + "/in.h5")
             .add("positions", {2 * n}, flat_positions(c))
             .add("weights", {n}, c.w);
       },
       io, "dataset 'positions' has shape [20]; [N, 2] is expected", 1},
      {"weights_2d",
       [&](std::string const& d) {
         H5Writer(d + "/in.h5")
             .add("positions", {n, 2}, flat_positions(c))
             .add("weights", {n, 1}, c.w);
       },
       io, "dataset 'weights' has shape [10, 1]; [N] is expected", 1},
      {"weights_int",
       [&](std::string const& d) {
         H5Writer(d + "/in.h5")
             .add("positions", {n, 2}, flat_positions(c))
             .add("weights", {n}, std::vector<double>(10, 0), H5T_STD_I32LE);
       },
       io, "dataset 'weights' holds 32-bit integers; floats (float64 or float32) are expected", 1},
      {"too_few_weights",
       [&](std::string const& d) {
         H5Writer(d + "/in.h5")
             .add("positions", {n, 2}, flat_positions(c))
             .add("weights", {n - 1}, std::vector<double>(c.w.begin(), c.w.end() - 1));
       },
       io, "dataset 'weights' has 9 rows but 'positions' has 10", 1},
      {"nan_weight", with_bad_weight(7, std::nan("")), io, "seed 7 is not finite", 1},
      {"infinite_weight", with_bad_weight(3, -INFINITY), io, "seed 3 is not finite", 1},
      {"unknown_option", good, io + " --frobnicate", "unknown option '--frobnicate'", 2},
      {"bad_integer", good, io + " --nb-boxes 0", "bad number '0' for --nb-boxes", 2},
      {"bad_coarse_to_fine", good, io + " --coarse-to-fine sometimes",
       "--coarse-to-fine takes automatic, always or never, not 'sometimes'", 2},
      {"bad_capacity", good, io + " --vertex-capacity 12x",
       "bad number '12x' for --vertex-capacity", 2},
      {"bad_random", good, "--random -5 @/out.h5", "bad number '-5' for --random", 2},
      {"bad_seed", good, "--random 5 --seed 1.5 @/out.h5", "bad number '1.5' for --seed", 2},
      {"bad_box_number", good, io + " --box 0 0 1 nan", "bad number 'nan' for --box Y1", 2},
      {"empty_box", good, io + " --box 1 0 0 1", "needs X0 < X1 and Y0 < Y1", 2},
      {"missing_value", good, io + " --msg-capacity", "option --msg-capacity needs a value", 2},
      {"one_file", good, "@/in.h5", "INPUT.h5 and OUTPUT.h5 are expected", 2},
      {"three_files", good, io + " @/more.h5", "INPUT.h5 and OUTPUT.h5 are expected", 2},
      {"uncreatable_output", good, "@/in.h5 @/no/out.h5", "cannot create '@/no/out.h5.tmp-", 1},
      {"uncreatable_cells", good, io + " --cells @/no/cells.vtkhdf",
       "cannot create '@/no/cells.vtkhdf.tmp-", 1},
      {"uncreatable_picture", good, io + " --svg @/no/cells.svg",
       "sdot::write_svg: cannot write @/no/cells.svg.tmp", 1},
      {"cells_are_the_output", good, io + " --cells @/out.h5",
       "--cells @/out.h5 names another output too", 2},
      {"picture_too_large", good, "--random 10001 --svg @/cells.svg",
       "--svg draws at most 10000 seeds, not 10001", 2},
      {"missing_cells", good, io + " --cells", "option --cells needs a value", 2},
  };
  std::vector<std::string> args;
  std::vector<std::vector<std::string>> before;
  auto in_directory = [](std::string s, std::string const& d) {
    for (std::size_t at = s.find('@'); at != std::string::npos; at = s.find('@', at + d.size()))
      s.replace(at, 1, d);
    return s;
  };
  for (auto const& bad : cases) {
    std::string const d = scratch.sub(bad.name);
    bad.setup(d);
    before.push_back(directory_entries(d));
    args.push_back(in_directory(bad.args, d));
  }
  auto const outcomes = run_all(args, scratch);
  for (std::size_t k = 0; k < cases.size(); ++k) {
    BadCase const& bad = cases[k];
    Outcome const& o = outcomes[k];
    std::string const d = scratch / bad.name;
    EXPECT_EQ(o.status, bad.status) << bad.name << ": " << o.err;
    EXPECT_EQ(o.out, "") << bad.name;
    EXPECT_EQ(o.err.rfind("sdot-measures: error: ", 0), 0u) << bad.name << ": " << o.err;
    EXPECT_EQ(std::count(o.err.begin(), o.err.end(), '\n'), 1) << bad.name << ": " << o.err;
    EXPECT_NE(o.err.find(in_directory(bad.fragment, d)), std::string::npos)
        << bad.name << ": " << o.err;
    EXPECT_EQ(directory_entries(d), before[k]) << bad.name << ": a file was left behind";
  }
}

TEST(SdotMeasures, Float32InputIsReadAsFloat64) {
  // NumPy and h5py write float32 when given float32: read exactly, as the rounded values.
  ScratchDirectory scratch;
  Cloud c = uniform_cloud(300, 1e-3, 14);
  for (auto& x : c.x)
    x = {static_cast<float>(x[0]), static_cast<float>(x[1])};
  for (auto& w : c.w)
    w = static_cast<float>(w);
  auto const n = static_cast<hsize_t>(c.x.size());
  H5Writer(scratch / "in32.h5")
      .add("positions", {n, 2}, flat_positions(c), H5T_IEEE_F32LE)
      .add("weights", {n}, c.w, H5T_IEEE_F32LE);
  Outcome const o = run(quote(scratch / "in32.h5") + " " + quote(scratch / "out.h5"), scratch);
  ASSERT_EQ(o.status, 0) << o.err;
  auto const ref = library(c, sdot::box_half_spaces({0, 0}, {1, 1}));
  expect_near_all(h5_read(scratch / "out.h5", "measures").values, ref.measures, 1e-12, "measure");
}

TEST(SdotMeasures, FailureLeavesAnExistingOutputAlone) {
  ScratchDirectory scratch;
  Cloud c = uniform_cloud(50, 1e-3, 4);
  write_cloud(scratch / "in.h5", c);
  c.w[49] = std::nan("");
  write_cloud(scratch / "nan.h5", c);
  H5Writer(scratch / "out.h5").add("old", {2}, {1, 2});
  Outcome const failed = run(quote(scratch / "nan.h5") + " " + quote(scratch / "out.h5"), scratch);
  EXPECT_EQ(failed.status, 1);
  EXPECT_NE(failed.err.find("seed 49 is not finite"), std::string::npos) << failed.err;
  EXPECT_TRUE(h5_has(scratch / "out.h5", "old"));
  EXPECT_FALSE(h5_has(scratch / "out.h5", "measures"));
  EXPECT_FALSE(has_temporary(scratch.path()));
  Outcome const replaced = run(quote(scratch / "in.h5") + " " + quote(scratch / "out.h5"), scratch);
  EXPECT_EQ(replaced.status, 0) << replaced.err;
  EXPECT_FALSE(h5_has(scratch / "out.h5", "old"));
  EXPECT_TRUE(h5_has(scratch / "out.h5", "measures"));
  EXPECT_FALSE(has_temporary(scratch.path()));
}

#ifdef SDOT_MPIEXEC
// Under mpiexec: every process reads and writes its own block; the results are those of the
// library on one process, whatever the number of processes (fewer seeds than processes too).
TEST(SdotMeasures, SeveralProcesses) {
  ScratchDirectory scratch;
  Cloud const c = uniform_cloud(301, 1e-3, 6);
  write_cloud(scratch / "in.h5", c);
  Cloud const tiny = uniform_cloud(3, 1e-3, 7);
  write_cloud(scratch / "tiny.h5", tiny);
  Cloud with_nan = c;
  with_nan.x[250][1] = std::nan(""); // read by the last of 3 processes
  write_cloud(scratch / "nan.h5", with_nan);
  H5Writer(scratch / "no_weights.h5").add("positions", {301, 2}, flat_positions(c));
  auto out = [&](std::string const& name) { return quote(scratch / name); };
  auto const outcomes = run_all(
      std::vector<Job>{
          {out("in.h5") + " " + out("out_2.h5") + " --centroids", 2},
          {out("in.h5") + " " + out("out_3.h5") + " --centroids --nb-boxes 2", 3},
          {out("tiny.h5") + " " + out("tiny_4.h5"), 4},
          {"--random 999 --seed 3 " + out("random_3.h5"), 3},
          {"--random 999 --seed 3 " + out("random_1.h5"), 0},
          {out("nan.h5") + " " + out("nan_out.h5"), 3},
          {out("no_weights.h5") + " " + out("no_weights_out.h5"), 2},
      },
      scratch);
  auto const ref = library(c, sdot::box_half_spaces({0, 0}, {1, 1}));
  for (int k : {0, 1}) {
    Outcome const& o = outcomes[k];
    int const processes = k + 2;
    std::string const file = scratch / ("out_" + std::to_string(processes) + ".h5");
    ASSERT_EQ(o.status, 0) << processes << " processes: " << o.err;
    EXPECT_EQ(o.err.find("error"), std::string::npos) << o.err; // Kokkos may warn, though
    expect_one_json_line(o);
    EXPECT_EQ(json_number(o.out, "ranks"), processes);
    EXPECT_EQ(json_number(o.out, "boxes"), processes * (k + 1));
    EXPECT_EQ(json_number(o.out, "n"), 301);
    EXPECT_NEAR(json_number(o.out, "sum_measures"), 1, 1e-12);
    EXPECT_GT(json_number(o.out, "travelled_cells"), 0) << o.out;
    EXPECT_GT(json_number(o.out, "bytes_sent"), 0) << o.out;
    EXPECT_GT(json_number(o.out, "rounds"), 0) << o.out;
    expect_near_all(h5_read(file, "measures").values, ref.measures, 1e-12, "measure");
    expect_near_all(h5_read(file, "centroids").values, ref.centroids, 1e-12, "centroid");
  }
  { // fewer seeds than processes
    Outcome const& o = outcomes[2];
    ASSERT_EQ(o.status, 0) << o.err;
    expect_one_json_line(o);
    expect_near_all(h5_read(scratch / "tiny_4.h5", "measures").values,
                    library(tiny, sdot::box_half_spaces({0, 0}, {1, 1})).measures, 1e-12,
                    "measure");
  }
  { // the same random cloud whatever the number of processes
    ASSERT_EQ(outcomes[3].status, 0) << outcomes[3].err;
    ASSERT_EQ(outcomes[4].status, 0) << outcomes[4].err;
    Cloud const three = cloud_from_file(scratch / "random_3.h5");
    EXPECT_EQ(flat_positions(three), flat_positions(cloud_from_file(scratch / "random_1.h5")));
    EXPECT_EQ(three.w, cloud_from_file(scratch / "random_1.h5").w);
    auto const measures = h5_read(scratch / "random_3.h5", "measures").values;
    EXPECT_NEAR(sum(measures), 1, 1e-12);
    expect_near_all(measures, h5_read(scratch / "random_1.h5", "measures").values, 1e-12,
                    "measure");
  }
  // errors: every process stops, process 0 reports once, no output is left
  for (auto [k, fragment] : {std::pair<int, std::string>{5, "seed 250 is not finite"},
                             std::pair<int, std::string>{6, "no dataset 'weights'"}}) {
    Outcome const& o = outcomes[k];
    EXPECT_NE(o.status, 0) << fragment;
    EXPECT_EQ(o.out, "");
    std::string const prefix = "sdot-measures: error: ";
    EXPECT_NE(o.err.find(prefix), std::string::npos) << o.err;
    EXPECT_EQ(o.err.find(prefix), o.err.rfind(prefix)) << "reported more than once: " << o.err;
    EXPECT_NE(o.err.find(fragment), std::string::npos) << o.err;
  }
  EXPECT_FALSE(std::filesystem::exists(scratch / "nan_out.h5"));
  EXPECT_FALSE(std::filesystem::exists(scratch / "no_weights_out.h5"));
  EXPECT_FALSE(has_temporary(scratch.path()));
}
#endif

// --cells and --svg: the files of the cells, written under any number of processes; VTK's own
// reader finds in the --cells file one partition per process, the cells' areas (with VTK's
// computation) and the cell data (cell_checks.hpp). The clouds have empty cells (very low
// weights), and under 3 processes one process holds no seed (the runs "two" and "tiny", with
// MPI only).
TEST(SdotMeasures, CellFiles) {
  ScratchDirectory scratch;
  Cloud c = uniform_cloud(200, 1e-3, 21);
  c.w[5] = c.w[150] = -1; // empty cells, on both processes of 2
  write_cloud(scratch / "in.h5", c);
  auto file = [&](std::string const& name) { return quote(scratch / name); };
  struct Run {
    std::string name, args;
    int processes;
  };
  std::vector<Run> const runs{
      {"one", file("in.h5"), 0},
#ifdef SDOT_MPIEXEC
      {"two", file("in.h5"), 2},
      {"tiny", "--random 2", 3},
#endif
      {"boxes", file("in.h5") + " --nb-boxes 2 --msg-capacity 2", processes_or_alone(2)},
      {"random", "--random 80", processes_or_alone(2)},
  };
  std::vector<Job> jobs;
  for (auto const& r : runs)
    jobs.push_back({r.args + " " + file(r.name + ".h5") + " --cells " + file(r.name + ".vtkhdf") +
                        " --svg " + file(r.name + ".svg"),
                    r.processes});
  auto const outcomes = run_all(jobs, scratch);
  for (std::size_t k = 0; k < runs.size(); ++k) {
    Outcome const& o = outcomes[k];
    std::string const prefix = scratch / runs[k].name;
    ASSERT_EQ(o.status, 0) << runs[k].name << ": " << o.err;
    expect_one_json_line(o);
    auto const measures = h5_read(prefix + ".h5", "measures").values;
    if (runs[k].args.rfind("--random", 0) != 0)
      EXPECT_EQ(measures[5] + measures[150], 0) << "not empty";
    expect_picture(prefix + ".svg", measures);
#ifdef SDOT_VTK_READER
    auto vtk =
        expect_cells_read_by_vtk(prefix + ".vtkhdf", runs[k].processes, measures, 1, scratch);
    EXPECT_EQ(vtk["weight"], runs[k].args.rfind("--random", 0) == 0
                                 ? h5_read(prefix + ".h5", "weights").values
                                 : c.w);
#endif
  }
  EXPECT_FALSE(has_temporary(scratch.path()));
}

#ifdef SDOT_MPIEXEC
// Under several processes, a bad --cells path or an unwritable picture (written by process 0
// alone) stops every process with one message, and leaves no file.
TEST(SdotMeasures, CellFilesErrorsUnderSeveralProcesses) {
  ScratchDirectory scratch;
  auto file = [&](std::string const& name) { return quote(scratch / name); };
  auto const outcomes = run_all(
      std::vector<Job>{{"--random 50 " + file("a.h5") + " --cells " + file("no/cells.vtkhdf"), 2},
                       {"--random 50 " + file("b.h5") + " --svg " + file("no/cells.svg") +
                            " --cells " + file("b.vtkhdf"),
                        2}},
      scratch);
  for (auto [k, fragment] :
       {std::pair<int, std::string>{0, "cannot create '" + scratch / "no/cells.vtkhdf.tmp-"},
        std::pair<int, std::string>{1, "cannot write " + scratch / "no/cells.svg.tmp"}}) {
    Outcome const& o = outcomes[k];
    EXPECT_EQ(o.status, 1) << o.err;
    EXPECT_EQ(o.out, "");
    EXPECT_EQ(occurrences(o.err, "sdot-measures: error: "), 1u) << o.err;
    EXPECT_NE(o.err.find(fragment), std::string::npos) << o.err;
  }
  EXPECT_EQ(directory_entries(scratch.path()), std::vector<std::string>{}) << "left behind";
}
#endif
