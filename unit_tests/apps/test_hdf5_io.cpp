// sdot::hdf5, the HDF5 layer, under MPI with 1 to 4 processes (parallel HDF5), or as one
// process without MPI (serial HDF5): blocks written by every process and read back with the
// serial HDF5 API (and the other way round), even and uneven splits, fewer rows than processes,
// collective errors, atomic output; files of one process, which use no MPI-IO.
#include "apps/h5_files.hpp"

#include <sdot/hdf5_io.hpp>
#include <sdot/points.hpp>

#include <loom/ranks.hpp>

#include <gtest/gtest.h>
#ifdef LOOM_ENABLE_MPI
#include <mpi.h>
#endif

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <functional>
#include <limits>
#include <memory>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

using sdot_test::directory_entries;
using sdot_test::h5_has;
using sdot_test::h5_read;
using sdot_test::H5Writer;

namespace {

// The processes of the test: those of MPI_COMM_WORLD, or this one without MPI (first called by
// every process at once).
loom::Ranks const& world() {
#ifdef LOOM_ENABLE_MPI
  static loom::Ranks const ranks = loom::MpiRanks(MPI_COMM_WORLD);
#else
  static loom::Ranks const ranks = loom::BoxRanks(1);
#endif
  return ranks;
}
int world_rank() {
  return world().process_rank();
}
int world_size() {
  return world().process_count();
}
void barrier() {
  world().barrier();
}

// A directory shared by the processes for the whole run (created by process 0, removed at the
// end).
class SharedDirectory : public ::testing::Environment {
public:
  static std::string const& path() { return path_; }
  void SetUp() override {
    std::string name;
    if (world_rank() == 0) {
      std::string pattern = (std::filesystem::temp_directory_path() / "sdot-hdf5-XXXXXX").string();
      if (mkdtemp(pattern.data()))
        name = pattern;
    }
    // Process 0's name, to every process.
    auto const lengths = world().allgather(std::vector<std::int64_t>{std::int64_t(name.size())});
    std::vector<std::int64_t> counts(lengths.size(), 0);
    counts[0] = lengths[0];
    path_.assign(static_cast<std::size_t>(lengths[0]), '\0');
    world().allgatherv_bytes(name.data(), path_.data(), counts, 1);
  }
  void TearDown() override {
    barrier();
    if (world_rank() == 0 && !path_.empty())
      std::filesystem::remove_all(path_);
  }

private:
  static inline std::string path_;
};
::testing::Environment* const shared_directory =
    ::testing::AddGlobalTestEnvironment(new SharedDirectory);

std::string file(std::string const& name) {
  return SharedDirectory::path() + "/" + name;
}

// The test values of global row g.
double value_of(std::int64_t g) {
  return 0.5 * g + 0.25;
}
double x_of(std::int64_t g) {
  return g + 1.0 / 3;
}
double y_of(std::int64_t g) {
  return -2.0 * g - 0.1;
}

sdot::hdf5::HostVector vector_rows(std::int64_t first, std::int64_t count, double shift = 0) {
  sdot::hdf5::HostVector v("test::values", count);
  for (std::int64_t i = 0; i < count; ++i)
    v(i) = value_of(first + i) + shift;
  return v;
}

sdot::hdf5::HostPoints point_rows(std::int64_t first, std::int64_t count) {
  sdot::hdf5::HostPoints p("test::points", count);
  for (std::int64_t i = 0; i < count; ++i) {
    p(i, 0) = x_of(first + i);
    p(i, 1) = y_of(first + i);
  }
  return p;
}

// On process 0: the file holds "values" [n] and "points" [n, 2] of rows 0 .. n-1.
void expect_file_rows(std::string const& path, std::int64_t n, double shift = 0) {
  if (world_rank() != 0)
    return;
  auto const values = h5_read(path, "values");
  ASSERT_EQ(values.dims, (std::vector<hsize_t>{static_cast<hsize_t>(n)})) << path;
  for (std::int64_t g = 0; g < n; ++g)
    EXPECT_EQ(values.values[g], value_of(g) + shift) << path << " row " << g;
  auto const points = h5_read(path, "points");
  ASSERT_EQ(points.dims, (std::vector<hsize_t>{static_cast<hsize_t>(n), 2})) << path;
  for (std::int64_t g = 0; g < n; ++g) {
    EXPECT_EQ(points.values[2 * g], x_of(g)) << path << " row " << g;
    EXPECT_EQ(points.values[2 * g + 1], y_of(g)) << path << " row " << g;
  }
}

// On process 0: no temporary file is left in the shared directory.
void expect_no_temporary() {
  barrier();
  if (world_rank() != 0)
    return;
  for (auto const& name : directory_entries(SharedDirectory::path()))
    EXPECT_EQ(name.find(".tmp-"), std::string::npos) << name << " was left behind";
}

// `action` throws, on every process, a collective loom::Error whose message holds every
// fragment.
void expect_collective_error(std::function<void()> const& action,
                             std::vector<std::string> const& fragments) {
  try {
    action();
    ADD_FAILURE() << "no error; expected one with: " << fragments.front();
  } catch (loom::Error const& e) {
    EXPECT_TRUE(e.collective()) << e.what();
    for (auto const& f : fragments)
      EXPECT_NE(std::string(e.what()).find(f), std::string::npos)
          << "message: " << e.what() << "\nlacks: " << f;
  }
}

// Rows of each process given by `count_of(process)`, in process order.
std::int64_t first_row(std::function<std::int64_t(int)> const& count_of, int process) {
  std::int64_t first = 0;
  for (int p = 0; p < process; ++p)
    first += count_of(p);
  return first;
}

} // namespace

TEST(Hdf5EvenBlock, TilesTheRowsInOrder) {
  for (std::int64_t rows = 0; rows <= 20; ++rows)
    for (int parts = 1; parts <= 6; ++parts) {
      std::int64_t next = 0;
      for (int p = 0; p < parts; ++p) {
        auto const b = sdot::hdf5::even_block(rows, parts, p);
        EXPECT_EQ(b.first, next) << rows << " rows, part " << p << " of " << parts;
        EXPECT_EQ(b.count, rows / parts + (p < rows % parts ? 1 : 0));
        next += b.count;
      }
      EXPECT_EQ(next, rows);
    }
  EXPECT_THROW(sdot::hdf5::even_block(10, 0, 0), std::invalid_argument);
  EXPECT_THROW(sdot::hdf5::even_block(10, 3, 3), std::invalid_argument);
  EXPECT_THROW(sdot::hdf5::even_block(-1, 3, 0), std::invalid_argument);
}

TEST(Hdf5Output, EvenBlocksOfEveryProcessMakeTheDataset) {
  int const rank = world_rank(), size = world_size();
  for (std::int64_t n : {0, 1, 2, 3, 5, 17, 1000}) {
    std::string const path = file("even_" + std::to_string(n) + ".h5");
    auto const b = sdot::hdf5::even_block(n, size, rank);
    {
      sdot::hdf5::OutputFile out(world(), path);
      EXPECT_EQ(out.path(), path);
      EXPECT_EQ(out.temporary_path().rfind(path + ".tmp-", 0), 0u) << out.temporary_path();
      EXPECT_EQ(out.process_count(), size);
      out.write("values", vector_rows(b.first, b.count));
      out.write("points", point_rows(b.first, b.count));
      barrier();
      if (rank == 0) { // nothing at the destination until the commit
        EXPECT_FALSE(std::filesystem::exists(path));
        EXPECT_TRUE(std::filesystem::exists(out.temporary_path()));
      }
      barrier();
      out.commit();
      EXPECT_TRUE(std::filesystem::exists(path)); // on every process, once commit returned
    }
    expect_file_rows(path, n);
  }
  expect_no_temporary();
}

TEST(Hdf5Output, UnevenAndEmptyBlocks) {
  int const rank = world_rank(), size = world_size();
  std::vector<std::function<std::int64_t(int)>> splits = {
      [](int p) { return (3 * p + 1) % 4; }, // 1, 0, 3, 2 rows
      [](int p) { return p; },               // process 0 empty
      [size](int p) { return p == size - 1 ? 7 : 0; }};
  for (std::size_t s = 0; s < splits.size(); ++s) {
    std::string const path = file("uneven_" + std::to_string(s) + ".h5");
    std::int64_t const first = first_row(splits[s], rank), count = splits[s](rank);
    {
      sdot::hdf5::OutputFile out(world(), path);
      out.write("values", vector_rows(first, count));
      out.write("points", point_rows(first, count));
      out.commit();
    }
    expect_file_rows(path, first_row(splits[s], size));
  }
  expect_no_temporary();
}

#ifdef LOOM_ENABLE_MPI
TEST(Hdf5Output, CommunicatorIsDuplicated) {
  // Each half of the processes writes its own file; the caller frees its communicator right
  // after giving it.
  int const rank = world_rank(), size = world_size();
  int const color = rank % 2;
  MPI_Comm half = MPI_COMM_NULL;
  MPI_Comm_split(MPI_COMM_WORLD, color, rank, &half);
  int half_rank = 0, half_size = 1;
  MPI_Comm_rank(half, &half_rank);
  MPI_Comm_size(half, &half_size);
  std::int64_t const n = 11;
  {
    sdot::hdf5::OutputFile out(half, file("half_" + std::to_string(color) + ".h5"));
    MPI_Comm_free(&half);
    auto const b = sdot::hdf5::even_block(n, half_size, half_rank);
    EXPECT_EQ(out.process_rank(), half_rank);
    out.write("values", vector_rows(b.first, b.count, 1000.0 * color));
    out.write("points", point_rows(b.first, b.count));
    out.commit();
  }
  barrier();
  expect_file_rows(file("half_0.h5"), n, 0);
  if (size > 1)
    expect_file_rows(file("half_1.h5"), n, 1000);
  expect_no_temporary();
}
#endif

TEST(Hdf5Output, DiscardLeavesTheDestinationAlone) {
  int const rank = world_rank();
  std::string const keep = file("keep.h5");
  if (rank == 0)
    H5Writer(keep).add("old", {3}, {1, 2, 3});
  barrier();
  { // destroyed without commit
    sdot::hdf5::OutputFile out(world(), keep);
    out.write("values", vector_rows(rank, 1));
  }
  if (rank == 0) {
    EXPECT_TRUE(h5_has(keep, "old"));
    EXPECT_FALSE(h5_has(keep, "values"));
  }
  expect_no_temporary();
  { // discarded explicitly; nothing more can be done then
    sdot::hdf5::OutputFile out(world(), keep);
    out.discard();
    expect_no_temporary();
    expect_collective_error([&] { out.commit(); }, {"was already discarded"});
    expect_collective_error([&] { out.write("values", vector_rows(0, 1)); },
                            {"was already discarded"});
  }
  { // a dataset written twice: a collective error, then discarded
    sdot::hdf5::OutputFile out(world(), keep);
    out.write("twice", vector_rows(rank, 2));
    expect_collective_error([&] { out.write("twice", vector_rows(rank, 2)); },
                            {"dataset 'twice' was already written"});
  }
  if (rank == 0) {
    EXPECT_TRUE(h5_has(keep, "old"));
    EXPECT_FALSE(h5_has(keep, "twice"));
  }
  expect_no_temporary();
  { // committed: replaces the old file
    sdot::hdf5::OutputFile out(world(), keep);
    out.write("values", vector_rows(rank, 1));
    out.commit();
    expect_collective_error([&] { out.commit(); }, {"was already committed"});
  }
  if (rank == 0) {
    EXPECT_FALSE(h5_has(keep, "old"));
    EXPECT_TRUE(h5_has(keep, "values"));
  }
  expect_no_temporary();
}

TEST(Hdf5Output, UncreatableFile) {
  std::string const path = file("no_such_directory/out.h5");
  expect_collective_error([&] { sdot::hdf5::OutputFile out(world(), path); },
                          {"cannot create", "no_such_directory/out.h5.tmp-"});
  expect_collective_error([&] { sdot::hdf5::OutputFile out(world(), ""); }, {"empty"});
  expect_no_temporary();
}

namespace {
// The cells of process p in Hdf5Output.VtkhdfCells: none on process 1, else p + 2, the second
// one empty; cell g (global) is the triangle (g, 0), (g + 1, 0), (g, 1) of measure g / 2.
std::int64_t cells_of(int p) {
  return p == 1 ? 0 : p + 2;
}
sdot::hdf5::HostCells test_cells(int p) {
  std::int64_t const n = cells_of(p), first = first_row(cells_of, p);
  sdot::hdf5::HostCells cells;
  cells.offsets = sdot::hdf5::HostOffsets("test::offsets", n + 1);
  cells.vertices = sdot::hdf5::HostPoints("test::vertices", 3 * (n > 1 ? n - 1 : n));
  sdot::hdf5::HostVector measure("test::measure", n);
  std::int64_t k = 0;
  for (std::int64_t i = 0; i < n; ++i) {
    double const g = static_cast<double>(first + i);
    if (i != 1)
      for (auto [x, y] : {std::pair<double, double>{g, 0}, {g + 1, 0}, {g, 1}})
        cells.vertices(k, 0) = x, cells.vertices(k, 1) = y, ++k;
    cells.offsets(i + 1) = k;
    measure(i) = g / 2;
  }
  cells.cell_data = {{"measure", measure}};
  return cells;
}
} // namespace

// The VTKHDF layout, one partition per process (test_sdot_measures.cpp reads such
// files with VTK itself), and its collective errors.
TEST(Hdf5Output, VtkhdfCells) {
  int const rank = world_rank(), size = world_size();
  std::string const path = file("cells.vtkhdf");
  {
    sdot::hdf5::OutputFile out(world(), path);
    out.write_vtkhdf_cells(test_cells(rank));
    expect_collective_error([&] { out.write_vtkhdf_cells(test_cells(rank)); },
                            {"cells.vtkhdf': the cells (group 'VTKHDF') were already written"});
    out.commit();
  }
  if (rank == 0) {
    std::vector<double> cells, points, offsets, types, connectivity, seeds, measures, xyz;
    for (int p = 0; p < size; ++p) {
      std::int64_t const n = cells_of(p), first = first_row(cells_of, p);
      std::int64_t const v = 3 * (n > 1 ? n - 1 : n);
      cells.push_back(static_cast<double>(n));
      points.push_back(static_cast<double>(v));
      offsets.push_back(0);
      for (std::int64_t i = 0; i < n; ++i) {
        double const g = static_cast<double>(first + i);
        offsets.push_back(offsets.back() + (i == 1 ? 0 : 3));
        types.push_back(i == 1 ? 0 : 7); // VTK_EMPTY_CELL, VTK_POLYGON
        seeds.push_back(g);
        measures.push_back(g / 2);
        if (i != 1)
          xyz.insert(xyz.end(), {g, 0, 0, g + 1, 0, 0, g, 1, 0});
      }
      for (std::int64_t k = 0; k < v; ++k)
        connectivity.push_back(static_cast<double>(k));
    }
    EXPECT_EQ(h5_read(path, "VTKHDF/NumberOfCells").values, cells);
    EXPECT_EQ(h5_read(path, "VTKHDF/NumberOfPoints").values, points);
    EXPECT_EQ(h5_read(path, "VTKHDF/NumberOfConnectivityIds").values, points);
    EXPECT_EQ(h5_read(path, "VTKHDF/Offsets").values, offsets);
    EXPECT_EQ(h5_read(path, "VTKHDF/Types").values, types);
    EXPECT_EQ(h5_read(path, "VTKHDF/Connectivity").values, connectivity);
    EXPECT_EQ(h5_read(path, "VTKHDF/Points").values, xyz);
    EXPECT_EQ(h5_read(path, "VTKHDF/CellData/seed_index").values, seeds);
    EXPECT_EQ(h5_read(path, "VTKHDF/CellData/measure").values, measures);
  }
  // Inconsistent cells on one process (the last one with cells): every process throws.
  int const spoilt = cells_of(size - 1) > 0 ? size - 1 : 0;
  auto const bad = [&](std::function<void(sdot::hdf5::HostCells&)> const& spoil) {
    sdot::hdf5::OutputFile out(world(), file("bad.vtkhdf"));
    sdot::hdf5::HostCells cells = test_cells(rank);
    if (rank == spoilt)
      spoil(cells);
    out.write_vtkhdf_cells(cells);
  };
  std::string const where = "bad.vtkhdf': cannot write the cells: ";
  expect_collective_error(
      [&] { bad([](sdot::hdf5::HostCells& c) { c.offsets(c.offsets.extent(0) - 1) += 1; }); },
      {where + "the offsets go from 0 to"});
  expect_collective_error(
      [&] { bad([](sdot::hdf5::HostCells& c) { c.offsets(1) = c.offsets(2) + 1; }); },
      {where + "the offsets decrease at cell 1"});
  expect_collective_error(
      [&] { bad([](sdot::hdf5::HostCells& c) { c.cell_data[0].second = {}; }); },
      {where + "cell data 'measure' has 0 values for"});
  expect_collective_error(
      [&] { bad([](sdot::hdf5::HostCells& c) { c.cell_data.push_back(c.cell_data[0]); }); },
      {size > 1 ? "the processes give different cell data" : "repeated cell data name 'measure'"});
  if (rank == 0)
    EXPECT_FALSE(std::filesystem::exists(file("bad.vtkhdf")));
  expect_no_temporary();
}

namespace {
// On process 0: "input.h5" with the datasets the reading tests use.
std::string const& input_file() {
  static std::string const path = [] {
    std::string const p = file("input.h5");
    if (world_rank() == 0) {
      std::int64_t const n = 23;
      std::vector<double> values, points, wide, ints;
      for (std::int64_t g = 0; g < n; ++g) {
        values.push_back(value_of(g));
        points.insert(points.end(), {x_of(g), y_of(g)});
        wide.insert(wide.end(), {1.0 * g, 2.0 * g, 3.0 * g});
        ints.push_back(static_cast<double>(g));
      }
      // float64 with an exponent bias of 1 instead of 1023: a float layout other than IEEE.
      hid_t const biased = H5Tcopy(H5T_IEEE_F64LE);
      H5Tset_ebias(biased, 1);
      H5Writer(p)
          .add("values", {23}, values)
          .add("points", {23, 2}, points)
          .add("tiny", {2}, {value_of(0), value_of(1)})
          .add("empty", {0}, {})
          .add("ints", {23}, ints, H5T_STD_I32LE)
          .add("floats", {23}, values, H5T_IEEE_F32LE)
          .add("floats_be", {23}, values, H5T_IEEE_F32BE)
          .add("biased", {2}, {0.5, 1.5}, biased)
          .add_unwritten("columns_2_plus_2_32", {2, (hsize_t(1) << 32) + 2})
          .add("wide", {23, 3}, wide)
          .add("cube", {2, 2, 2}, std::vector<double>(8, 1.0))
          .add_group("group");
      H5Tclose(biased);
    }
    barrier();
    return p;
  }();
  return path;
}
} // namespace

TEST(Hdf5Input, BlocksOfEveryProcess) {
  int const rank = world_rank(), size = world_size();
#ifdef LOOM_ENABLE_MPI
  MPI_Comm comm = MPI_COMM_NULL;
  MPI_Comm_dup(MPI_COMM_WORLD, &comm);
  sdot::hdf5::InputFile in(comm, input_file());
  MPI_Comm_free(&comm); // the file keeps its own duplicate
#else
  sdot::hdf5::InputFile in(world(), input_file());
#endif
  EXPECT_EQ(in.path(), input_file());
  EXPECT_EQ(in.process_rank(), rank);
  EXPECT_EQ(in.process_count(), size);

  EXPECT_TRUE(in.has("values"));
  EXPECT_TRUE(in.has("group"));
  EXPECT_FALSE(in.has("absent"));
  EXPECT_FALSE(in.has("group/absent"));
  EXPECT_EQ(in.shape("values").rows, 23);
  EXPECT_EQ(in.shape("values").columns, 0);
  EXPECT_EQ(in.shape("points").rows, 23);
  EXPECT_EQ(in.shape("points").columns, 2);
  EXPECT_EQ(in.rows("values", 0), 23);
  EXPECT_EQ(in.rows("points", 2), 23);

  // even blocks
  auto const b = in.even_block(23);
  EXPECT_EQ(b.first, sdot::hdf5::even_block(23, size, rank).first);
  auto const values = in.read_vector("values", b);
  auto const points = in.read_points("points", b);
  ASSERT_EQ(values.extent(0), static_cast<std::size_t>(b.count));
  ASSERT_EQ(points.extent(0), static_cast<std::size_t>(b.count));
  for (std::int64_t i = 0; i < b.count; ++i) {
    EXPECT_EQ(values(i), value_of(b.first + i));
    EXPECT_EQ(points(i, 0), x_of(b.first + i));
    EXPECT_EQ(points(i, 1), y_of(b.first + i));
  }

  // overlapping blocks of any size, and empty ones
  sdot::hdf5::RowBlock const any{rank, 23 - 3 * rank};
  auto const overlapping = in.read_points("points", any);
  ASSERT_EQ(overlapping.extent(0), static_cast<std::size_t>(any.count));
  for (std::int64_t i = 0; i < any.count; ++i)
    EXPECT_EQ(overlapping(i, 1), y_of(any.first + i));
  EXPECT_EQ(in.read_vector("values", {rank % 2 ? 23 : 4, 0}).extent(0), 0u);
  // disjoint blocks in reverse process order
  auto const reversed = sdot::hdf5::even_block(23, size, size - 1 - rank);
  auto const reversed_values = in.read_vector("values", reversed);
  for (std::int64_t i = 0; i < reversed.count; ++i)
    EXPECT_EQ(reversed_values(i), value_of(reversed.first + i));

  // fewer rows than processes
  auto const t = in.even_block(in.rows("tiny", 0));
  auto const tiny = in.read_vector("tiny", t);
  EXPECT_EQ(t.count, sdot::hdf5::even_block(2, size, rank).count);
  EXPECT_EQ(t.count, size == 1 ? 2 : rank < 2 ? 1 : 0);
  for (std::int64_t i = 0; i < t.count; ++i)
    EXPECT_EQ(tiny(i), value_of(t.first + i));
  EXPECT_EQ(in.rows("empty", 0), 0);
  EXPECT_EQ(in.read_vector("empty", in.even_block(0)).extent(0), 0u);

  // float32, converted on reading: the values rounded to float, exactly; big-endian too
  for (char const* name : {"floats", "floats_be"}) {
    auto const floats = in.read_vector(name, b);
    ASSERT_EQ(floats.extent(0), static_cast<std::size_t>(b.count));
    for (std::int64_t i = 0; i < b.count; ++i)
      EXPECT_EQ(floats(i), static_cast<double>(static_cast<float>(value_of(b.first + i)))) << name;
  }
}

TEST(Hdf5Input, CollectiveErrorsNameTheProblem) {
  int const rank = world_rank(), size = world_size();
  std::string const missing = file("missing.h5");
  expect_collective_error([&] { sdot::hdf5::InputFile in(world(), missing); },
                          {"cannot open '" + missing + "'", "No such file"});
  std::string const text = file("text.h5");
  if (rank == 0)
    std::ofstream(text) << "not HDF5\n";
  barrier();
  expect_collective_error([&] { sdot::hdf5::InputFile in(world(), text); },
                          {"'" + text + "' is not an HDF5 file"});

  sdot::hdf5::InputFile in(world(), input_file());
  expect_collective_error([&] { in.rows("absent", 0); }, {"no dataset 'absent'", input_file()});
  expect_collective_error(
      [&] { in.rows("ints", 0); },
      {"dataset 'ints' holds 32-bit integers; floats (float64 or float32) are expected"});
  expect_collective_error([&] { in.rows("wide", 2); },
                          {"dataset 'wide' has shape [23, 3]; [N, 2] is expected"});
  expect_collective_error(
      [&] {
        in.read_points("values", {0, 1});
      },
      {"dataset 'values' has shape [23]; [N, 2] is expected"});
  expect_collective_error(
      [&] {
        in.read_vector("points", {0, 1});
      },
      {"dataset 'points' has shape [23, 2]; [N] is expected"});
  expect_collective_error([&] { in.shape("cube"); },
                          {"dataset 'cube' has shape [2, 2, 2]; rank 1 or 2 is expected"});
  expect_collective_error([&] { in.rows("group", 0); }, {"'group' is not a dataset"});
  // a bad block on the last process only: every process throws
  bool const last = rank == size - 1;
  expect_collective_error(
      [&] {
        in.read_vector("values", {last ? 20 : 0, last ? 5 : 1});
      },
      {"rows [20, 25) are out of the 23 rows of dataset 'values'"});
  expect_collective_error(
      [&] {
        in.read_vector("values", {last ? -1 : 0, 1});
      },
      {"rows [-1, 0) are out of"});
  // blocks whose end is beyond 64 bits: refused before anything is allocated for them
  std::int64_t const huge = std::numeric_limits<std::int64_t>::max();
  expect_collective_error(
      [&] {
        in.read_points("points", {1, last ? huge : 1});
      },
      {"rows [1, 1 + 9223372036854775807) are out of the 23 rows of dataset 'points'"});
  expect_collective_error(
      [&] {
        in.read_vector("values", {last ? huge : 0, 1});
      },
      {"rows [9223372036854775807, 9223372036854775807 + 1) are out of"});
  // floats HDF5 would round or make infinite on conversion, and extents beyond DatasetShape
  // (the fuzz target's seeds seeds_wide_floats and seeds_huge_shape)
  expect_collective_error(
      [&] { in.rows("biased", 0); },
      {"dataset 'biased' holds 64-bit floats of a layout other than IEEE 754 binary64 or "
       "binary32"});
  expect_collective_error([&] { in.shape("columns_2_plus_2_32"); },
                          {"dataset 'columns_2_plus_2_32' has shape [2, 4294967298]; at most "
                           "2^63 - 1 rows and 2^31 - 1 columns are read"});
  expect_collective_error(
      [&] {
        in.read_points("columns_2_plus_2_32", {0, 1});
      },
      {"has shape [2, 4294967298]"});
  // still usable afterwards
  EXPECT_EQ(in.read_vector("values", {22, 1})(0), value_of(22));
}

TEST(Hdf5Agreed, OneFailingProcessMakesEveryProcessThrow) {
  int const rank = world_rank(), size = world_size();
  auto const& ranks = world();
  expect_collective_error(
      [&] {
        sdot::hdf5::agreed(ranks, [&] {
          if (rank == size - 1)
            throw std::invalid_argument("boom on the last process");
        });
      },
      {size > 1 ? "process " + std::to_string(size - 1) + ": boom on the last process"
                : "boom on the last process"});
  // a collective error goes through unchanged
  expect_collective_error(
      [&] { sdot::hdf5::agreed(ranks, [] { throw loom::Error("everywhere", true); }); },
      {"everywhere"});
  EXPECT_NO_THROW(sdot::hdf5::agreed(ranks, [] {}));
}

TEST(Hdf5Copies, HostAndDevice) {
  auto const points = point_rows(5, 9);
  using Device = sdot::Points<Kokkos::DefaultExecutionSpace::memory_space>;
  auto const device =
      sdot::hdf5::to_space<Device>(Kokkos::DefaultExecutionSpace(), points, "test::device_points");
  ASSERT_EQ(device.extent(0), 9u);
  auto const back = sdot::hdf5::to_host(device);
  static_assert(std::is_same<decltype(back)::array_layout, Kokkos::LayoutRight>::value, "");
  auto const left = Kokkos::View<double* [2], Kokkos::LayoutLeft, Kokkos::HostSpace>("left", 9);
  Kokkos::deep_copy(left, back);
  auto const from_left = sdot::hdf5::to_host(left);
  for (int i = 0; i < 9; ++i)
    for (int c = 0; c < 2; ++c) {
      EXPECT_EQ(back(i, c), points(i, c));
      EXPECT_EQ(from_left(i, c), points(i, c));
    }
}

// Files of one process (loom::BoxRanks, any boxes): each process has its own, written and read
// without MPI-IO (the default file driver, also in a build with MPI), in the same format.
TEST(Hdf5OneProcess, FilesOfOneProcess) {
  int const rank = world_rank();
  std::string const path = file("alone_" + std::to_string(rank) + ".h5");
  std::string const cells_path = file("alone_" + std::to_string(rank) + ".vtkhdf");
  std::int64_t const n = 13 + rank;
  {
    sdot::hdf5::OutputFile out(loom::BoxRanks(3), path);
    EXPECT_EQ(out.process_rank(), 0);
    EXPECT_EQ(out.process_count(), 1);
    out.write("values", vector_rows(0, n));
    out.write("points", point_rows(0, n));
    expect_collective_error([&] { out.write("values", vector_rows(0, 1)); },
                            {"dataset 'values' was already written"});
    out.commit();
    sdot::hdf5::OutputFile cells(loom::BoxRanks(1), cells_path);
    cells.write_vtkhdf_cells(test_cells(0));
    cells.commit();
  }
  auto const values = h5_read(path, "values");
  ASSERT_EQ(values.dims, (std::vector<hsize_t>{static_cast<hsize_t>(n)}));
  for (std::int64_t g = 0; g < n; ++g)
    EXPECT_EQ(values.values[g], value_of(g));
  EXPECT_EQ(h5_read(cells_path, "VTKHDF/NumberOfCells").values, std::vector<double>{2});
  EXPECT_EQ(h5_read(cells_path, "VTKHDF/Offsets").values, (std::vector<double>{0, 3, 3}));
  EXPECT_EQ(h5_read(cells_path, "VTKHDF/CellData/seed_index").values, (std::vector<double>{0, 1}));

  sdot::hdf5::InputFile in(loom::BoxRanks(2), path);
  EXPECT_EQ(in.process_count(), 1);
  EXPECT_EQ(in.rows("points", 2), n);
  auto const points = in.read_points("points", in.even_block(n));
  ASSERT_EQ(points.extent(0), static_cast<std::size_t>(n));
  for (std::int64_t g = 0; g < n; ++g)
    EXPECT_EQ(points(g, 1), y_of(g));
  expect_collective_error(
      [&] {
        in.read_vector("values", {n - 1, 2});
      },
      {"rows [" + std::to_string(n - 1) + ", " + std::to_string(n + 1) + ") are out of the " +
       std::to_string(n) + " rows"});
  std::string const missing = file("alone_missing_" + std::to_string(rank) + ".h5");
  expect_collective_error([&] { sdot::hdf5::InputFile m(loom::BoxRanks(1), missing); },
                          {"cannot open '" + missing + "'", "No such file"});
  expect_no_temporary();
}

namespace {
// A process group of two processes that is not an MPI communicator (this process is its first
// one); its collectives are never reached.
class TwoProcesses final : public loom::ProcessGroup {
public:
  int rank() const override { return 0; }
  int size() const override { return 2; }
  void allgatherv(void const*, void*, std::vector<std::int64_t> const&,
                  std::size_t) const override {
    throw std::logic_error("test: no collective expected");
  }
  void alltoallv(void const*, std::vector<std::int64_t> const&, void*,
                 std::vector<std::int64_t> const&, std::size_t) const override {
    throw std::logic_error("test: no collective expected");
  }
  void barrier() const override { throw std::logic_error("test: no collective expected"); }
};
} // namespace

// The processes of a group that is not an MPI communicator cannot share a file: a collective
// error, before anything is created.
TEST(Hdf5Ranks, SeveralProcessesOfANonMpiGroupAreRefused) {
  auto const ranks = loom::ProcessGroupRanks(std::make_shared<TwoProcesses>());
  std::string const path = file("group_" + std::to_string(world_rank()) + ".h5");
  expect_collective_error([&] { sdot::hdf5::OutputFile out(ranks, path); },
                          {"sdot::hdf5::OutputFile: the 2 processes of a process group cannot "
                           "share a file"});
  expect_collective_error([&] { sdot::hdf5::InputFile in(ranks, input_file()); },
                          {"sdot::hdf5::InputFile: the 2 processes of a process group cannot "
                           "share a file"});
  EXPECT_FALSE(std::filesystem::exists(path));
  expect_no_temporary();
}
