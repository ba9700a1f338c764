// sdot::hdf5: HDF5 input and output of row blocks (built with SDOT_ENABLE_HDF5): parallel HDF5
// through MPI-IO for the processes of an MPI communicator (with LOOM_ENABLE_MPI), the default
// file driver for one process.
//
// Every step that may fail on one process is followed by an agreement (loom::Ranks::agree)
// before the next collective call, so that all processes throw together. The processes agree
// through the loom::Ranks of the file (one rank per process), never through MPI directly.
#include <sdot/hdf5_io.hpp>

#include <loom/ranks.hpp>
#include <loom/row_blocks.hpp>

#include <hdf5.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <exception>
#include <limits>
#include <sstream>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

namespace sdot::hdf5 {

RowBlock even_block(std::int64_t rows, int parts, int part) {
  if (rows < 0 || parts < 1 || part < 0 || part >= parts)
    throw std::invalid_argument("sdot::hdf5::even_block: " + std::to_string(rows) +
                                " rows cannot be split into part " + std::to_string(part) + " of " +
                                std::to_string(parts));
  std::int64_t const first = loom::detail::even_split_first(rows, parts, part);
  return {first, loom::detail::even_split_first(rows, parts, part + 1) - first};
}

namespace {

constexpr hid_t invalid_id = -1;

// An HDF5 identifier, closed with its closing function when it goes away.
class Handle {
public:
  using Closer = herr_t (*)(hid_t);
  Handle() = default;
  Handle(hid_t id, Closer closer) : id_(id), closer_(closer) {}
  Handle(Handle&& other) noexcept
      : id_(std::exchange(other.id_, invalid_id)), closer_(other.closer_) {}
  Handle& operator=(Handle&& other) noexcept {
    if (this != &other) {
      close();
      id_ = std::exchange(other.id_, invalid_id);
      closer_ = other.closer_;
    }
    return *this;
  }
  Handle(Handle const&) = delete;
  Handle& operator=(Handle const&) = delete;
  ~Handle() { close(); }

  hid_t get() const { return id_; }
  bool valid() const { return id_ >= 0; }
  /// Closes now; the status of the closing function (0 when there was nothing to close).
  herr_t close() {
    herr_t const status = id_ >= 0 ? closer_(id_) : 0;
    id_ = invalid_id;
    return status;
  }

private:
  hid_t id_ = invalid_id;
  Closer closer_ = nullptr;
};

// HDF5 prints its error stack on stderr by default: silenced while sdot calls HDF5 (its
// failures become exceptions), then restored.
class QuietErrors {
public:
  QuietErrors() {
    H5Eget_auto2(H5E_DEFAULT, &function_, &data_);
    H5Eset_auto2(H5E_DEFAULT, nullptr, nullptr);
  }
  ~QuietErrors() { H5Eset_auto2(H5E_DEFAULT, function_, data_); }
  QuietErrors(QuietErrors const&) = delete;
  QuietErrors& operator=(QuietErrors const&) = delete;

private:
  H5E_auto2_t function_ = nullptr;
  void* data_ = nullptr;
};

herr_t keep_innermost(unsigned, H5E_error2_t const* error, void* innermost) {
  if (error->desc && *error->desc)
    *static_cast<std::string*>(innermost) = error->desc;
  return 0;
}

// The innermost message of HDF5's error stack (then cleared), as " (HDF5: ...)", or "".
std::string hdf5_detail() {
  std::string innermost;
  H5Ewalk2(H5E_DEFAULT, H5E_WALK_DOWNWARD, keep_innermost, &innermost);
  H5Eclear2(H5E_DEFAULT);
  return innermost.empty() ? std::string() : " (HDF5: " + innermost + ")";
}

[[noreturn]] void fail(std::string const& message) {
  throw std::runtime_error(message);
}

std::string quoted(std::string const& s) {
  return "'" + s + "'";
}

// The processes of a file: a loom::Ranks of their own, one rank per process, and whether they
// share the file through MPI-IO (the processes of an MPI communicator) or one process has it
// alone (the default file driver).
struct FileProcesses {
  loom::Ranks ranks;
  bool mpio = false;
};

#ifdef LOOM_ENABLE_MPI
void require_mpi(char const* who) {
  int initialized = 0, finalized = 0;
  MPI_Initialized(&initialized);
  MPI_Finalized(&finalized);
  if (!initialized || finalized)
    throw loom::Error(std::string("sdot::hdf5::") + who + ": MPI must be initialised");
}

// The processes of `comm` (collective: duplicates it).
FileProcesses processes_of(MPI_Comm comm, char const* who) {
  require_mpi(who);
  return {loom::MpiRanks(comm), true};
}
#endif

// The processes of `ranks` (collective: duplicates their communicator, if any).
FileProcesses processes_of(loom::Ranks const& ranks, char const* who) {
#ifdef LOOM_ENABLE_MPI
  if (ranks.uses_mpi())
    return processes_of(ranks.comm(), who);
  char const* const why = "parallel HDF5 needs the processes of an MPI communicator, "
                          "loom::MpiRanks";
#else
  char const* const why = "sdot is built without MPI (SDOT_ENABLE_MPI=OFF): a file belongs to "
                          "one process";
#endif
  if (ranks.process_count() != 1) // the same on every process
    throw loom::Error(std::string("sdot::hdf5::") + who + ": the " +
                          std::to_string(ranks.process_count()) +
                          " processes of a process group cannot share a file (" + why + ")",
                      true);
  return {loom::BoxRanks(1), false};
}

// File access: through MPI-IO, metadata read by one process and broadcast (`mpio`), or with
// the default file driver.
Handle file_access(FileProcesses const& processes) {
  Handle fapl(H5Pcreate(H5P_FILE_ACCESS), H5Pclose);
  if (!fapl.valid())
    fail("cannot set up file access" + hdf5_detail());
#ifdef LOOM_ENABLE_MPI
  if (processes.mpio && (H5Pset_fapl_mpio(fapl.get(), processes.ranks.comm(), MPI_INFO_NULL) < 0 ||
                         H5Pset_all_coll_metadata_ops(fapl.get(), true) < 0 ||
                         H5Pset_coll_metadata_write(fapl.get(), true) < 0))
    fail("cannot set up MPI-IO file access" + hdf5_detail());
#endif
  return fapl;
}

// Data transfers: with MPI-IO (`mpio`) collective ones, or independent ones (`collective`
// false); plain ones otherwise.
Handle transfer(bool mpio, bool collective = true) {
  Handle dxpl(H5Pcreate(H5P_DATASET_XFER), H5Pclose);
  bool ok = dxpl.valid();
#ifdef LOOM_ENABLE_MPI
  if (ok && mpio) {
    H5FD_mpio_xfer_t const mode = collective ? H5FD_MPIO_COLLECTIVE : H5FD_MPIO_INDEPENDENT;
    ok = H5Pset_dxpl_mpio(dxpl.get(), mode) >= 0;
  }
#else
  (void)mpio;
  (void)collective;
#endif
  if (!ok)
    fail("cannot set up data transfers" + hdf5_detail());
  return dxpl;
}

// Collective: true when the blocks of two processes share a row.
bool blocks_overlap(loom::Ranks const& ranks, RowBlock block) {
  auto const all = ranks.allgather(std::vector<std::int64_t>{block.first, block.count});
  std::vector<std::pair<std::int64_t, std::int64_t>> spans; // non-empty [first, end)
  for (std::size_t p = 0; p < all.size(); p += 2)
    if (all[p + 1] > 0)
      spans.emplace_back(all[p], all[p] + all[p + 1]);
  std::sort(spans.begin(), spans.end());
  for (std::size_t k = 1; k < spans.size(); ++k)
    if (spans[k].first < spans[k - 1].second)
      return true;
  return false;
}

std::string type_name(hid_t type) {
  std::size_t const bits = 8 * H5Tget_size(type);
  switch (H5Tget_class(type)) {
  case H5T_INTEGER:
    return std::to_string(bits) + "-bit " +
           (H5Tget_sign(type) == H5T_SGN_NONE ? "unsigned integers" : "integers");
  case H5T_FLOAT:
    return std::to_string(bits) + "-bit floats";
  case H5T_STRING:
    return "strings";
  case H5T_COMPOUND:
    return "compound values";
  default:
    return "values of an unsupported type";
  }
}

// IEEE 754 binary64 or binary32, little- or big-endian.
bool ieee_float(hid_t type) {
  // An array, not a braced list in the loop: HDF5's type macros hold a comma expression,
  // which nvcc's front end rewrites into code that the host compiler refuses there.
  hid_t const ieee_types[] = {H5T_IEEE_F64LE, H5T_IEEE_F64BE, H5T_IEEE_F32LE, H5T_IEEE_F32BE};
  for (hid_t ieee : ieee_types)
    if (H5Tequal(type, ieee) > 0)
      return true;
  return false;
}

std::string shape_name(std::vector<hsize_t> const& dims) {
  if (dims.empty())
    return "a scalar";
  std::ostringstream s;
  s << "shape [";
  for (std::size_t d = 0; d < dims.size(); ++d)
    s << (d ? ", " : "") << dims[d];
  s << "]";
  return s.str();
}

std::string expected_shape(int columns) {
  return columns == 0 ? "[N]" : "[N, " + std::to_string(columns) + "]";
}

// An open dataset of floats of rank 1 or 2, with its shape (collective: opens the dataset).
struct OpenDataset {
  Handle dataset;
  std::vector<hsize_t> dims;
  DatasetShape shape;
};

OpenDataset open_dataset(hid_t file, std::string const& path, std::string const& name) {
  std::string const where = quoted(path) + ": ";
  htri_t const exists = name.empty() ? 0 : H5Lexists(file, name.c_str(), H5P_DEFAULT);
  H5Eclear2(H5E_DEFAULT);
  if (exists <= 0)
    fail(where + "no dataset " + quoted(name));
  OpenDataset d;
  d.dataset = Handle(H5Dopen2(file, name.c_str(), H5P_DEFAULT), H5Dclose);
  if (!d.dataset.valid())
    fail(where + quoted(name) + " is not a dataset" + hdf5_detail());
  Handle type(H5Dget_type(d.dataset.get()), H5Tclose);
  if (!type.valid())
    fail(where + "cannot read the type of dataset " + quoted(name) + hdf5_detail());
  // IEEE binary64 and binary32, of either byte order, are read as float64 exactly. A file may
  // describe other float layouts (another exponent bias, precision or size), whose values
  // HDF5 would round or make infinite on conversion, without an error: those are refused.
  if (H5Tget_class(type.get()) != H5T_FLOAT)
    fail(where + "dataset " + quoted(name) + " holds " + type_name(type.get()) +
         "; floats (float64 or float32) are expected");
  if (!ieee_float(type.get()))
    fail(where + "dataset " + quoted(name) + " holds " + type_name(type.get()) +
         " of a layout other than IEEE 754 binary64 or binary32; floats (float64 or float32) "
         "are expected");
  Handle space(H5Dget_space(d.dataset.get()), H5Sclose);
  int const rank = space.valid() ? H5Sget_simple_extent_ndims(space.get()) : -1;
  if (rank < 0)
    fail(where + "cannot read the shape of dataset " + quoted(name) + hdf5_detail());
  d.dims.assign(static_cast<std::size_t>(rank), 0);
  if (rank > 0)
    H5Sget_simple_extent_dims(space.get(), d.dims.data(), nullptr);
  if (rank < 1 || rank > 2)
    fail(where + "dataset " + quoted(name) + " has " + shape_name(d.dims) +
         "; rank 1 or 2 is expected");
  // Extents that DatasetShape holds (a file may declare any, with nothing stored).
  if (d.dims[0] > hsize_t(std::numeric_limits<std::int64_t>::max()) ||
      (rank == 2 && d.dims[1] > hsize_t(std::numeric_limits<int>::max())))
    fail(where + "dataset " + quoted(name) + " has " + shape_name(d.dims) +
         "; at most 2^63 - 1 rows and 2^31 - 1 columns are read");
  d.shape.rows = static_cast<std::int64_t>(d.dims[0]);
  d.shape.columns = rank == 2 ? static_cast<int>(d.dims[1]) : 0;
  return d;
}

void check_columns(OpenDataset const& d, std::string const& path, std::string const& name,
                   int columns) {
  if (d.shape.columns != columns)
    fail(quoted(path) + ": dataset " + quoted(name) + " has " + shape_name(d.dims) + "; " +
         expected_shape(columns) + " is expected");
}

// "[first, first + count)", the end written as a sum where it is beyond 64 bits.
std::string rows_text(RowBlock block) {
  constexpr std::int64_t max = std::numeric_limits<std::int64_t>::max();
  constexpr std::int64_t min = std::numeric_limits<std::int64_t>::min();
  bool const fits =
      block.count >= 0 ? block.first <= max - block.count : block.first >= min - block.count;
  return "[" + std::to_string(block.first) + ", " +
         (fits ? std::to_string(block.first + block.count)
               : std::to_string(block.first) + " + " + std::to_string(block.count)) +
         ")";
}

// Selects rows `block` of a [rows] or [rows, columns] file space, and makes the matching
// memory space (nothing selected for an empty block).
std::pair<Handle, Handle> row_selection(hid_t dataset, RowBlock block, int columns) {
  Handle file_space(H5Dget_space(dataset), H5Sclose);
  int const rank = columns == 0 ? 1 : 2;
  hsize_t const start[2] = {static_cast<hsize_t>(block.first), 0};
  hsize_t const count[2] = {static_cast<hsize_t>(block.count), static_cast<hsize_t>(columns)};
  hsize_t const one[2] = {1, static_cast<hsize_t>(columns ? columns : 1)};
  Handle memory_space(H5Screate_simple(rank, block.count > 0 ? count : one, nullptr), H5Sclose);
  bool ok = file_space.valid() && memory_space.valid();
  if (ok && block.count > 0)
    ok = H5Sselect_hyperslab(file_space.get(), H5S_SELECT_SET, start, nullptr, count, nullptr) >= 0;
  else if (ok)
    ok = H5Sselect_none(file_space.get()) >= 0 && H5Sselect_none(memory_space.get()) >= 0;
  if (!ok)
    fail("cannot select rows" + hdf5_detail());
  return {std::move(file_space), std::move(memory_space)};
}

} // namespace

// ---- InputFile ------------------------------------------------------------------------------

struct InputFile::Impl {
  loom::Ranks ranks;
  bool mpio = false;
  std::string path;
  Handle file;

  // Collective: opens `path` read-only, with the processes `processes`.
  void open(FileProcesses processes, std::string const& name) {
    ranks = std::move(processes.ranks);
    mpio = processes.mpio;
    path = name;
    QuietErrors quiet;
    // Process 0 tries first, for a plain message (and no collective open of a missing file).
    agreed(ranks, [&] {
      if (ranks.process_rank() != 0)
        return;
      std::FILE* f = std::fopen(path.c_str(), "rb");
      if (!f)
        fail("cannot open " + quoted(path) + ": " + std::strerror(errno));
      std::fclose(f);
    });
    agreed(ranks, [&] {
      Handle fapl = file_access({ranks, mpio});
      file = Handle(H5Fopen(path.c_str(), H5F_ACC_RDONLY, fapl.get()), H5Fclose);
      if (!file.valid())
        fail(quoted(path) + " is not an HDF5 file, or is damaged" + hdf5_detail());
    });
  }

  // Collective: this process's rows `block` of `name` ([N] or [N, columns]) as a new View
  // (HostVector or HostPoints), allocated once the block is known to fit the dataset.
  template <class View>
  View read_rows(std::string const& name, RowBlock block, int columns) const {
    QuietErrors quiet;
    OpenDataset d;
    std::pair<Handle, Handle> spaces;
    Handle dxpl;
    View out;
    agreed(ranks, [&] {
      d = open_dataset(file.get(), path, name);
      check_columns(d, path, name, columns);
      if (block.first < 0 || block.count < 0 || block.first > d.shape.rows ||
          block.count > d.shape.rows - block.first) // no sum that may overflow
        fail(quoted(path) + ": rows " + rows_text(block) + " are out of the " +
             std::to_string(d.shape.rows) + " rows of dataset " + quoted(name));
      spaces = row_selection(d.dataset.get(), block, columns);
      out =
          View(Kokkos::view_alloc(Kokkos::WithoutInitializing, "sdot::hdf5::" + name), block.count);
    });
    if (d.shape.rows == 0) // nothing stored (every process knows)
      return out;
    // Open MPI's OMPIO (4.1) reads wrong data in collective reads of overlapping blocks:
    // those are read independently.
    bool const overlap = blocks_overlap(ranks, block);
    agreed(ranks, [&] { dxpl = transfer(mpio, !overlap); });
    double unused[2];
    herr_t const status =
        H5Dread(d.dataset.get(), H5T_NATIVE_DOUBLE, spaces.second.get(), spaces.first.get(),
                dxpl.get(), block.count > 0 ? out.data() : unused);
    agreed(ranks, [&] {
      if (status < 0)
        fail(quoted(path) + ": cannot read dataset " + quoted(name) + hdf5_detail());
    });
    return out;
  }
};

#ifdef LOOM_ENABLE_MPI
InputFile::InputFile(MPI_Comm comm, std::string const& path) : impl_(std::make_unique<Impl>()) {
  impl_->open(processes_of(comm, "InputFile"), path);
}
#endif

InputFile::InputFile(loom::Ranks const& ranks, std::string const& path)
    : impl_(std::make_unique<Impl>()) {
  impl_->open(processes_of(ranks, "InputFile"), path);
}

InputFile::~InputFile() {
  QuietErrors quiet;
  impl_->file.close();
}

std::string const& InputFile::path() const {
  return impl_->path;
}
int InputFile::process_rank() const {
  return impl_->ranks.process_rank();
}
int InputFile::process_count() const {
  return impl_->ranks.process_count();
}

bool InputFile::has(std::string const& dataset) const {
  QuietErrors quiet;
  bool found = false;
  agreed(impl_->ranks, [&] {
    htri_t const exists =
        dataset.empty() ? 0 : H5Lexists(impl_->file.get(), dataset.c_str(), H5P_DEFAULT);
    H5Eclear2(H5E_DEFAULT);
    found = exists > 0;
  });
  return found;
}

DatasetShape InputFile::shape(std::string const& dataset) const {
  QuietErrors quiet;
  DatasetShape shape;
  agreed(impl_->ranks,
         [&] { shape = open_dataset(impl_->file.get(), impl_->path, dataset).shape; });
  return shape;
}

std::int64_t InputFile::rows(std::string const& dataset, int columns) const {
  QuietErrors quiet;
  std::int64_t rows = 0;
  agreed(impl_->ranks, [&] {
    OpenDataset d = open_dataset(impl_->file.get(), impl_->path, dataset);
    check_columns(d, impl_->path, dataset, columns);
    rows = d.shape.rows;
  });
  return rows;
}

RowBlock InputFile::even_block(std::int64_t rows) const {
  return hdf5::even_block(rows, process_count(), process_rank());
}

HostVector InputFile::read_vector(std::string const& dataset, RowBlock block) const {
  return impl_->read_rows<HostVector>(dataset, block, 0);
}

HostPoints InputFile::read_points(std::string const& dataset, RowBlock block) const {
  return impl_->read_rows<HostPoints>(dataset, block, 2);
}

// ---- OutputFile -----------------------------------------------------------------------------

struct OutputFile::Impl {
  enum class State { open, committed, discarded };
  loom::Ranks ranks;
  bool mpio = false;
  std::string path;
  std::string temporary;
  Handle file;
  State state = State::open;

  void require_open(char const* what) const {
    if (state != State::open) // the same on every process
      throw loom::Error("sdot::hdf5::OutputFile::" + std::string(what) + ": " + quoted(path) +
                            " was already " +
                            (state == State::committed ? "committed" : "discarded"),
                        true);
  }

  // Process 0 removes the temporary, then everyone waits for it.
  void remove_temporary() {
    if (ranks.process_rank() == 0)
      std::remove(temporary.c_str());
    ranks.barrier();
  }

  // Collective: the blocks of the processes, in process order, as dataset `name` of shape
  // [N] (columns = 0) or [N, columns], of `file_type`, from values of `memory_type`.
  void write_rows(std::string const& name, int columns, std::int64_t count, void const* data,
                  hid_t memory_type, hid_t file_type) {
    require_open("write");
    QuietErrors quiet;
    loom::RowBlocks const rows(ranks, count);
    RowBlock const block{rows.begin(), count};
    std::int64_t const total = rows.global_size();
    Handle dataset, dxpl;
    std::pair<Handle, Handle> spaces;
    agreed(ranks, [&] {
      htri_t const exists = H5Lexists(file.get(), name.c_str(), H5P_DEFAULT);
      H5Eclear2(H5E_DEFAULT);
      if (exists > 0)
        fail(quoted(path) + ": dataset " + quoted(name) + " was already written");
      hsize_t const dims[2] = {static_cast<hsize_t>(total), static_cast<hsize_t>(columns)};
      Handle space(H5Screate_simple(columns == 0 ? 1 : 2, dims, nullptr), H5Sclose);
      Handle dcpl(H5Pcreate(H5P_DATASET_CREATE), H5Pclose);
      if (!space.valid() || !dcpl.valid() || H5Pset_fill_time(dcpl.get(), H5D_FILL_TIME_NEVER) < 0)
        fail(quoted(path) + ": cannot describe dataset " + quoted(name) + hdf5_detail());
      dataset = Handle(H5Dcreate2(file.get(), name.c_str(), file_type, space.get(), H5P_DEFAULT,
                                  dcpl.get(), H5P_DEFAULT),
                       H5Dclose);
      if (!dataset.valid())
        fail(quoted(path) + ": cannot create dataset " + quoted(name) + hdf5_detail());
      spaces = row_selection(dataset.get(), block, columns);
      dxpl = transfer(mpio);
    });
    if (total == 0) // nothing to store (every process knows)
      return;
    double const unused[2] = {0, 0};
    herr_t const status = H5Dwrite(dataset.get(), memory_type, spaces.second.get(),
                                   spaces.first.get(), dxpl.get(), count > 0 ? data : unused);
    agreed(ranks, [&] {
      if (status < 0)
        fail(quoted(path) + ": cannot write dataset " + quoted(name) + hdf5_detail());
    });
  }

  // Collective: creates the temporary of `name`, with the processes `processes`.
  void create(FileProcesses processes, std::string const& name) {
    ranks = std::move(processes.ranks);
    mpio = processes.mpio;
    path = name;
    auto const pids =
        ranks.allgather(std::vector<std::int64_t>{static_cast<std::int64_t>(getpid())});
    temporary = path + ".tmp-" + std::to_string(pids[0]);
    QuietErrors quiet;
    try {
      agreed(ranks, [&] {
        if (path.empty())
          fail("an output file name is empty");
        Handle fapl = file_access({ranks, mpio});
        file =
            Handle(H5Fcreate(temporary.c_str(), H5F_ACC_TRUNC, H5P_DEFAULT, fapl.get()), H5Fclose);
        if (!file.valid())
          fail("cannot create " + quoted(temporary) + " (the temporary file of " + quoted(path) +
               ")" + hdf5_detail());
      });
    } catch (...) {
      file.close();
      remove_temporary();
      state = State::discarded;
      throw;
    }
  }
};

#ifdef LOOM_ENABLE_MPI
OutputFile::OutputFile(MPI_Comm comm, std::string const& path) : impl_(std::make_unique<Impl>()) {
  impl_->create(processes_of(comm, "OutputFile"), path);
}
#endif

OutputFile::OutputFile(loom::Ranks const& ranks, std::string const& path)
    : impl_(std::make_unique<Impl>()) {
  impl_->create(processes_of(ranks, "OutputFile"), path);
}

OutputFile::~OutputFile() {
  if (impl_ && impl_->state == Impl::State::open)
    discard();
}

std::string const& OutputFile::path() const {
  return impl_->path;
}
std::string const& OutputFile::temporary_path() const {
  return impl_->temporary;
}
int OutputFile::process_rank() const {
  return impl_->ranks.process_rank();
}
int OutputFile::process_count() const {
  return impl_->ranks.process_count();
}

void OutputFile::write(std::string const& dataset, HostVector const& block) {
  impl_->write_rows(dataset, 0, static_cast<std::int64_t>(block.extent(0)), block.data(),
                    H5T_NATIVE_DOUBLE, H5T_IEEE_F64LE);
}

void OutputFile::write(std::string const& dataset, HostPoints const& block) {
  impl_->write_rows(dataset, 2, static_cast<std::int64_t>(block.extent(0)), block.data(),
                    H5T_NATIVE_DOUBLE, H5T_IEEE_F64LE);
}

namespace {

// The problem with `cells` (offsets, cell data), or "".
std::string cells_problem(HostCells const& cells) {
  std::int64_t const n = cells.offsets.extent(0) > 0 ? cells.offsets.extent(0) - 1 : 0;
  std::int64_t const vertices = cells.vertices.extent(0);
  std::int64_t const first = cells.offsets.extent(0) > 0 ? cells.offsets(0) : 0;
  std::int64_t const end = cells.offsets.extent(0) > 0 ? cells.offsets(n) : 0;
  if (first != 0 || end != vertices)
    return "the offsets go from " + std::to_string(first) + " to " + std::to_string(end) +
           " instead of 0 to the " + std::to_string(vertices) + " vertices";
  for (std::int64_t i = 0; i < n; ++i)
    if (cells.offsets(i + 1) < cells.offsets(i))
      return "the offsets decrease at cell " + std::to_string(i);
  for (std::size_t k = 0; k < cells.cell_data.size(); ++k) {
    auto const& [name, values] = cells.cell_data[k];
    bool repeated = name == "seed_index";
    for (std::size_t j = 0; j < k; ++j)
      repeated = repeated || cells.cell_data[j].first == name;
    if (name.empty() || name.find('/') != std::string::npos || repeated)
      return "bad or repeated cell data name " + quoted(name);
    if (static_cast<std::int64_t>(values.extent(0)) != n)
      return "cell data " + quoted(name) + " has " + std::to_string(values.extent(0)) +
             " values for " + std::to_string(n) + " cells";
  }
  return "";
}

// Collective: true when `text` is the same on every process.
bool same_everywhere(loom::Ranks const& ranks, std::string const& text) {
  auto const lengths =
      ranks.allgather(std::vector<std::int64_t>{static_cast<std::int64_t>(text.size())});
  for (std::int64_t length : lengths)
    if (length != lengths[0])
      return false;
  auto const all = ranks.allgather(std::vector<char>(text.begin(), text.end()));
  for (std::size_t p = 0; p < lengths.size(); ++p)
    if (!std::equal(text.begin(), text.end(), all.begin() + p * text.size()))
      return false;
  return true;
}

// An attribute of `object` from `values` of `memory_type`, stored as `file_type` in `space`
// (`where`: the file, for the message).
void write_attribute(hid_t object, char const* name, hid_t file_type, hid_t memory_type,
                     hid_t space, void const* values, std::string const& where) {
  Handle attribute(H5Acreate2(object, name, file_type, space, H5P_DEFAULT, H5P_DEFAULT), H5Aclose);
  if (!attribute.valid() || H5Awrite(attribute.get(), memory_type, values) < 0)
    fail(where + ": cannot write the attribute " + quoted(name) + hdf5_detail());
}

// The attributes of the group VTKHDF for an unstructured grid: Version [1, 0] and Type (a
// fixed-length ASCII string, as vtkHDFReader reads it).
void write_vtkhdf_attributes(hid_t group, std::string const& where) {
  int const version[2] = {1, 0};
  hsize_t const two = 2;
  Handle pair(H5Screate_simple(1, &two, nullptr), H5Sclose);
  write_attribute(group, "Version", H5T_STD_I32LE, H5T_NATIVE_INT, pair.get(), version, where);
  char const type[] = "UnstructuredGrid";
  Handle string_type(H5Tcopy(H5T_C_S1), H5Tclose);
  Handle scalar(H5Screate(H5S_SCALAR), H5Sclose);
  if (!string_type.valid() || H5Tset_size(string_type.get(), sizeof type - 1) < 0 ||
      H5Tset_strpad(string_type.get(), H5T_STR_NULLPAD) < 0 ||
      H5Tset_cset(string_type.get(), H5T_CSET_ASCII) < 0)
    fail(where + ": cannot describe the attribute 'Type'" + hdf5_detail());
  write_attribute(group, "Type", string_type.get(), string_type.get(), scalar.get(), type, where);
}

} // namespace

void OutputFile::write_vtkhdf_cells(HostCells const& cells) {
  impl_->require_open("write_vtkhdf_cells");
  loom::Ranks const& ranks = impl_->ranks;
  std::string const& path = impl_->path;
  std::int64_t const n = cells.offsets.extent(0) > 0 ? cells.offsets.extent(0) - 1 : 0;
  std::int64_t const vertices = cells.vertices.extent(0);
  std::int64_t const first_seed = loom::RowBlocks(ranks, n).begin();
  // What the partition holds beyond the caller's arrays.
  std::vector<std::int64_t> offsets, connectivity, seed_index;
  std::vector<double> points;
  std::vector<std::uint8_t> types;
  std::string names; // the cell data's, which every process must give alike
  for (auto const& data : cells.cell_data)
    names += data.first + '\n';
  if (!same_everywhere(ranks, names))
    throw loom::Error(quoted(path) + ": cannot write the cells: the processes give different "
                                     "cell data",
                      true);
  agreed(ranks, [&] {
    std::string const problem = cells_problem(cells);
    if (!problem.empty())
      fail(quoted(path) + ": cannot write the cells: " + problem);
    offsets.assign(n + 1, 0);
    for (std::int64_t i = 0; i < n; ++i)
      offsets[i + 1] = cells.offsets(i + 1);
    connectivity.resize(vertices);
    points.resize(3 * vertices);
    for (std::int64_t k = 0; k < vertices; ++k) {
      connectivity[k] = k;
      points[3 * k] = cells.vertices(k, 0);
      points[3 * k + 1] = cells.vertices(k, 1);
      points[3 * k + 2] = 0;
    }
    // VTK_POLYGON, or VTK_EMPTY_CELL for an empty cell: VTK 9.1's vtkCellSizeFilter and
    // vtkIntegrateAttributes crash on polygons without points.
    types.resize(n);
    for (std::int64_t i = 0; i < n; ++i)
      types[i] = offsets[i + 1] > offsets[i] ? 7 : 0;
    seed_index.resize(n);
    for (std::int64_t i = 0; i < n; ++i)
      seed_index[i] = first_seed + i;
  });
  {
    QuietErrors quiet;
    agreed(ranks, [&] {
      htri_t const exists = H5Lexists(impl_->file.get(), "VTKHDF", H5P_DEFAULT);
      H5Eclear2(H5E_DEFAULT);
      if (exists > 0)
        fail(quoted(path) + ": the cells (group 'VTKHDF') were already written");
      Handle group(H5Gcreate2(impl_->file.get(), "VTKHDF", H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT),
                   H5Gclose);
      Handle cell_data(
          group.valid() ? H5Gcreate2(group.get(), "CellData", H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT)
                        : invalid_id,
          H5Gclose);
      if (!cell_data.valid())
        fail(quoted(path) + ": cannot create the group 'VTKHDF'" + hdf5_detail());
      write_vtkhdf_attributes(group.get(), quoted(path));
    });
  }
  auto const integers = [&](char const* name, std::int64_t count, std::int64_t const* data) {
    impl_->write_rows(std::string("VTKHDF/") + name, 0, count, data, H5T_NATIVE_INT64,
                      H5T_STD_I64LE);
  };
  integers("NumberOfPoints", 1, &vertices);
  integers("NumberOfCells", 1, &n);
  integers("NumberOfConnectivityIds", 1, &vertices);
  impl_->write_rows("VTKHDF/Points", 3, vertices, points.data(), H5T_NATIVE_DOUBLE, H5T_IEEE_F64LE);
  impl_->write_rows("VTKHDF/Types", 0, n, types.data(), H5T_NATIVE_UINT8, H5T_STD_U8LE);
  integers("Connectivity", vertices, connectivity.data());
  integers("Offsets", n + 1, offsets.data());
  integers("CellData/seed_index", n, seed_index.data());
  for (auto const& [name, values] : cells.cell_data)
    impl_->write_rows("VTKHDF/CellData/" + name, 0, n, values.data(), H5T_NATIVE_DOUBLE,
                      H5T_IEEE_F64LE);
}

void OutputFile::commit() {
  impl_->require_open("commit");
  loom::Ranks const& ranks = impl_->ranks;
  QuietErrors quiet;
  try {
    agreed(ranks, [&] {
      if (impl_->file.close() < 0)
        fail("cannot finish writing " + quoted(impl_->temporary) + hdf5_detail());
    });
    agreed(ranks, [&] {
      if (ranks.process_rank() == 0 &&
          std::rename(impl_->temporary.c_str(), impl_->path.c_str()) != 0)
        fail("cannot rename " + quoted(impl_->temporary) + " to " + quoted(impl_->path) + ": " +
             std::strerror(errno));
    });
  } catch (...) {
    impl_->remove_temporary();
    impl_->state = Impl::State::discarded;
    throw;
  }
  impl_->state = Impl::State::committed;
}

void OutputFile::discard() noexcept {
  if (impl_->state != Impl::State::open)
    return;
  impl_->state = Impl::State::discarded;
  try {
    QuietErrors quiet;
    impl_->file.close();
    H5Eclear2(H5E_DEFAULT);
    impl_->remove_temporary();
  } catch (...) {
    // Nothing more can be done: the temporary may be left behind, `path` is untouched.
  }
}

} // namespace sdot::hdf5
