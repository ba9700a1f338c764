#pragma once
// Checks of the cells' files of the programs (--svg, --cells). The --cells files are read back
// with VTK's own reader: read_vtkhdf_cells.py run by the Python that has VTK (SDOT_PYTHON,
// SDOT_VTK_READER, defined by CMake when it found them).
#include "apps/h5_files.hpp"
#include "apps/run_program.hpp"

#include <sdot/hdf5_io.hpp>

#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <map>
#include <sstream>
#include <string>
#include <vector>

namespace sdot_test {

/// Occurrences of `what` in `text`.
inline std::size_t occurrences(std::string const& text, std::string const& what) {
  std::size_t count = 0;
  for (std::size_t at = text.find(what); at != std::string::npos; at = text.find(what, at + 1))
    ++count;
  return count;
}

/// Checks the --svg picture `file` of cells of `measures` (the dataset of the program's
/// OUTPUT.h5): an SVG with one polygon per non-empty cell and one dot per seed.
inline void expect_picture(std::string const& file, std::vector<double> const& measures) {
  std::string const svg = read_text(file);
  EXPECT_EQ(svg.rfind("<svg xmlns=\"http://www.w3.org/2000/svg\"", 0), 0u) << file;
  EXPECT_EQ(svg.substr(svg.size() < 7 ? 0 : svg.size() - 7), "</svg>\n") << file;
  std::size_t cells = 0;
  for (double m : measures)
    cells += m > 0;
  EXPECT_EQ(occurrences(svg, "<polygon "), cells) << file;
  EXPECT_EQ(occurrences(svg, "<circle "), measures.size()) << file;
}

#ifdef SDOT_VTK_READER

/// What read_vtkhdf_cells.py printed: its items (cells, pieces, empty, area, and the cell data
/// arrays) by name.
using VtkItems = std::map<std::string, std::vector<double>>;

/// `file` read by VTK, as `pieces` pieces too.
inline VtkItems read_with_vtk(std::string const& file, int pieces,
                              ScratchDirectory const& scratch) {
  std::string const args =
      quote(SDOT_VTK_READER) + " " + quote(file) + " " + std::to_string(pieces);
  Outcome const o = run_all(SDOT_PYTHON, std::vector<Job>{{args, 0}}, scratch)[0];
  EXPECT_EQ(o.status, 0) << o.err;
  VtkItems items;
  std::istringstream lines(o.out);
  std::string line, name;
  while (std::getline(lines, line)) {
    std::istringstream values(line);
    values >> name;
    for (double v; values >> v;)
      items[name].push_back(v);
  }
  return items;
}

/// Checks the --cells file of a program run by `processes` processes (0: without mpiexec)
/// that wrote the cells' `measures` (the dataset of its OUTPUT.h5) in a domain of area
/// `area`: VTK reads one partition per process, each the process's block of seeds; its cells'
/// areas are the measures and add up to the area; the cell data `measure` is the measures and
/// `seed_index` numbers the seeds in order; the empty cells are those of measure 0. Returns
/// what VTK read.
inline VtkItems expect_cells_read_by_vtk(std::string const& file, int processes,
                                         std::vector<double> const& measures, double area,
                                         ScratchDirectory const& scratch) {
  int const parts = processes > 0 ? processes : 1;
  auto const n = static_cast<std::int64_t>(measures.size());
  VtkItems vtk = read_with_vtk(file, parts, scratch);
  EXPECT_EQ(vtk["cells"], std::vector<double>{static_cast<double>(n)}) << file;
  std::vector<double> blocks, seeds;
  for (int p = 0; p < parts; ++p)
    blocks.push_back(static_cast<double>(sdot::hdf5::even_block(n, parts, p).count));
  for (std::int64_t i = 0; i < n; ++i)
    seeds.push_back(static_cast<double>(i));
  EXPECT_EQ(vtk["pieces"], blocks) << file << ": one partition per process, its seeds";
  EXPECT_EQ(h5_read(file, "VTKHDF/NumberOfCells").values, blocks) << file;
  EXPECT_EQ(vtk["seed_index"], seeds) << file;
  EXPECT_EQ(vtk["measure"], measures) << file;
  std::vector<double> const& areas = vtk["area"];
  EXPECT_EQ(areas.size(), measures.size()) << file;
  double sum = 0;
  std::size_t empty = 0, misses = 0;
  for (std::size_t i = 0; i < areas.size() && i < measures.size(); ++i) {
    sum += areas[i];
    empty += measures[i] == 0;
    if (!(std::fabs(areas[i] - measures[i]) <= 1e-12 * area) && misses++ == 0)
      ADD_FAILURE() << file << ": cell " << i << " has the area " << areas[i] << " for VTK but "
                    << measures[i] << " in the measures";
  }
  EXPECT_EQ(misses, 0u) << file;
  EXPECT_NEAR(sum, area, 1e-12 * area) << file;
  EXPECT_EQ(vtk["empty"], std::vector<double>{static_cast<double>(empty)}) << file;
  return vtk;
}

#endif // SDOT_VTK_READER

} // namespace sdot_test
