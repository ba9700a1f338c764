// The sdot-ot program, run as a separate process on files written here with the serial HDF5
// API, directly and under mpiexec (with MPI): the weights it writes give the prescribed masses
// (checked with sdot::PowerDiagram on the same positions; also with --block-jacobi), its
// progress lines and --quiet, bad masses (message, exit status, no output file left behind),
// and the files of the cells (--cells, --svg).
#include "apps/cell_checks.hpp"
#include "apps/h5_files.hpp"
#include "apps/run_program.hpp"
#include "sdot/clouds.hpp"

#include <sdot/sdot.hpp>

#include <gtest/gtest.h>

#include <cmath>
#include <filesystem>
#include <regex>
#include <sstream>
#include <string>
#include <vector>

using namespace sdot_test;

namespace {

std::vector<Outcome> run_all(std::vector<Job> const& jobs, ScratchDirectory const& scratch) {
  return run_all(SDOT_OT_EXE, jobs, scratch);
}

// Masses 1 ± 0.5 varying across the square, adding up to its area.
std::vector<double> varying_masses(Cloud const& c) {
  std::vector<double> m;
  double sum = 0;
  for (auto const& x : c.x)
    sum += m.emplace_back(1 + 0.5 * std::sin(4 * x[0] + 2 * x[1]));
  for (auto& v : m)
    v /= sum;
  return m;
}

// An input of sdot-ot: the positions of `c` and their masses.
void write_input(std::string const& path, Cloud const& c, std::vector<double> const& masses) {
  hsize_t const n = c.x.size();
  H5Writer(path).add("positions", {n, 2}, flat_positions(c)).add("masses", {n}, masses);
}

// The progress lines of a run: the relative error of each.
std::vector<double> progress_errors(std::string const& err) {
  std::vector<double> errors;
  std::regex const line(R"(^sdot-ot: newton ([0-9]+): max \|m - mass\| / mass ([0-9.eE+-]+), )"
                        R"(step [0-9.eE+-]+, [0-9]+ CG iterations, [0-9.]+ s$)");
  std::istringstream in(err);
  std::string text;
  while (std::getline(in, text)) {
    std::smatch m;
    if (std::regex_match(text, m, line)) {
      EXPECT_EQ(std::stoi(m[1]), static_cast<int>(errors.size())) << text;
      errors.push_back(std::stod(m[2]));
    }
  }
  return errors;
}

} // namespace

TEST(SdotOt, WeightsGiveTheMassesAtAnyProcessCount) {
  ScratchDirectory scratch;
  Cloud const c = clustered_cloud(500, 13);
  hsize_t const n = c.x.size();
  auto const masses = varying_masses(c);
  write_input(scratch / "in.h5", c, masses);
  H5Writer(scratch / "uniform.h5").add("positions", {n, 2}, flat_positions(c));
  auto file = [&](std::string const& name) { return quote(scratch / name); };
  auto const outcomes = run_all(
      std::vector<Job>{
          {file("in.h5") + " " + file("out_1.h5"), 0},
          {file("in.h5") + " " + file("out_3.h5"), processes_or_alone(3)},
          {file("uniform.h5") + " " + file("uniform_out.h5") + " --quiet", processes_or_alone(2)},
          {file("in.h5") + " " + file("out_block.h5") + " --block-jacobi", processes_or_alone(3)}},
      scratch);
  std::vector<std::string> const outputs{"out_1.h5", "out_3.h5", "uniform_out.h5", "out_block.h5"};
  for (std::size_t k = 0; k < outcomes.size(); ++k) {
    auto const& o = outcomes[k];
    ASSERT_EQ(o.status, 0) << outputs[k] << ": " << o.err;
    expect_one_json_line(o);
    // seconds as in sdot-measures: an object whose total covers the rest.
    EXPECT_NE(o.out.find("\"seconds\":{\"total\":"), std::string::npos) << o.out;
    EXPECT_LE(json_number(o.out, "linear"), json_number(o.out, "solve")) << o.out;
    EXPECT_LE(json_number(o.out, "solve"), json_number(o.out, "total")) << o.out;
    bool const quiet = k == 2;
    std::vector<double> const want =
        quiet ? std::vector<double>(n, 1.0 / static_cast<double>(n)) : masses;
    auto const weights = h5_read(scratch / outputs[k], "weights").values;
    auto const measures = h5_read(scratch / outputs[k], "measures").values;
    auto const library = measures_at(c, weights, sdot::box_half_spaces({0, 0}, {1, 1}));
    ASSERT_EQ(measures.size(), n);
    for (std::size_t i = 0; i < n; ++i) {
      ASSERT_NEAR(library[i], want[i], 1e-10) << outputs[k] << ", cell " << i;
      ASSERT_NEAR(measures[i], want[i], 1e-10) << outputs[k] << ", cell " << i;
    }
    // One progress line per Newton step and one for the initial weights, the last within
    // the tolerance; none with --quiet.
    auto const errors = progress_errors(o.err);
    if (!quiet) {
      ASSERT_EQ(static_cast<double>(errors.size()), json_number(o.out, "newton_iterations") + 1)
          << o.err;
      EXPECT_GT(errors.front(), 0.5) << o.err; // cells of a cluster start far below their mass
      EXPECT_LE(errors.back(), 1e-10 / (0.5 / static_cast<double>(n))) << o.err;
    } else {
      EXPECT_TRUE(o.err.empty()) << o.err;
    }
  }
}

TEST(SdotOt, BadMassesAreRefused) {
  ScratchDirectory scratch;
  Cloud const c = uniform_cloud(300, 0, 14);
  auto masses = varying_masses(c);
  auto doubled = masses;
  for (auto& m : doubled)
    m *= 2;
  masses[217] = -1e-3;
  write_input(scratch / "negative.h5", c, masses);
  write_input(scratch / "doubled.h5", c, doubled);
  auto file = [&](std::string const& name) { return quote(scratch / name); };
  auto const outcomes = run_all(
      std::vector<Job>{
          {file("negative.h5") + " " + file("negative_out.h5"), 0},
          {file("negative.h5") + " " + file("negative_out_3.h5"), processes_or_alone(3)},
          {file("doubled.h5") + " " + file("doubled_out.h5"), processes_or_alone(2)}},
      scratch);
  for (auto const& o : outcomes) {
    EXPECT_EQ(o.status, 1) << o.err;
    EXPECT_TRUE(o.out.empty()) << o.out;
  }
  EXPECT_NE(outcomes[0].err.find("target mass 217"), std::string::npos) << outcomes[0].err;
  EXPECT_NE(outcomes[1].err.find("target mass 217"), std::string::npos) << outcomes[1].err;
  EXPECT_NE(outcomes[2].err.find("add up to"), std::string::npos) << outcomes[2].err;
  for (auto const& name : directory_entries(scratch.path()))
    EXPECT_EQ(name.find("_out"), std::string::npos) << "left behind: " << name;
}

TEST(SdotOt, AnEmptyInitialCellIsNamedByItsRow) {
  // Seed 251 repeats seed 40: one of the two cells is empty at zero weights, whatever the
  // number of processes (the solve runs on spatial blocks; the message names the file's row).
  ScratchDirectory scratch;
  Cloud c = uniform_cloud(300, 0, 15);
  c.x[251] = c.x[40];
  write_input(scratch / "twins.h5", c, std::vector<double>(c.x.size(), 1.0 / 300));
  auto file = [&](std::string const& name) { return quote(scratch / name); };
  auto const outcomes =
      run_all(std::vector<Job>{{file("twins.h5") + " " + file("out_1.h5"), 0},
                               {file("twins.h5") + " " + file("out_2.h5"), processes_or_alone(2)},
                               {file("twins.h5") + " " + file("out_4.h5"), processes_or_alone(4)}},
              scratch);
  std::smatch m;
  std::regex const named("cell ([0-9]+) is empty with the initial weights");
  for (auto const& o : outcomes) {
    EXPECT_EQ(o.status, 1) << o.err;
    ASSERT_TRUE(std::regex_search(o.err, m, named)) << o.err;
    int const row = std::stoi(m[1]);
    EXPECT_TRUE(row == 40 || row == 251) << o.err;
  }
  for (auto const& name : directory_entries(scratch.path()))
    EXPECT_EQ(name.find("out_"), std::string::npos) << "left behind: " << name;
}

// The cells at the weights found: the picture, and the --cells file as VTK's own reader reads
// it (cell_checks.hpp: one partition per process, VTK's areas are the measures), with the
// cell data target_mass and weight. --svg is refused beyond write_svg's limit before solving.
TEST(SdotOt, CellFiles) {
  ScratchDirectory scratch;
  Cloud const c = clustered_cloud(300, 15);
  auto const masses = varying_masses(c);
  write_input(scratch / "in.h5", c, masses);
  H5Writer(scratch / "large.h5").add("positions", {10001, 2}, std::vector<double>(20002, 0.5));
  auto file = [&](std::string const& name) { return quote(scratch / name); };
  int const processes = processes_or_alone(2);
  auto const outcomes = run_all(
      std::vector<Job>{
          {file("in.h5") + " " + file("out.h5") + " --quiet --cells " + file("cells.vtkhdf") +
               " --svg " + file("cells.svg"),
           processes},
          {file("large.h5") + " " + file("large_out.h5") + " --svg " + file("large.svg"), 0}},
      scratch);
  ASSERT_EQ(outcomes[0].status, 0) << outcomes[0].err;
  auto const measures = h5_read(scratch / "out.h5", "measures").values;
  expect_picture(scratch / "cells.svg", measures);
#ifdef SDOT_VTK_READER
  auto vtk = expect_cells_read_by_vtk(scratch / "cells.vtkhdf", processes, measures, 1, scratch);
  EXPECT_EQ(vtk["target_mass"], masses);
  EXPECT_EQ(vtk["weight"], h5_read(scratch / "out.h5", "weights").values);
#endif
  Outcome const& large = outcomes[1];
  EXPECT_EQ(large.status, 2) << large.err;
  EXPECT_NE(large.err.find("sdot-ot: error: --svg draws at most 10000 seeds, not 10001"),
            std::string::npos)
      << large.err;
  EXPECT_FALSE(std::filesystem::exists(scratch / "large_out.h5"));
  EXPECT_FALSE(std::filesystem::exists(scratch / "large.svg"));
}
