// libFuzzer targets: sdot::hdf5::InputFile, the reader of the programs' input files.
//
// sdot_fuzz_hdf5_reader writes the input bytes to a file (mutated HDF5 files: HDF5's own parser
// meets them first); sdot_fuzz_hdf5_datasets (SDOT_FUZZ_BUILD_FILES) has HDF5 write a file
// from the input (datasets of drawn names, types, shapes, layouts and bytes), so that every
// file is well formed and only the reader's own logic is tried. Either file is opened as the
// programs open theirs (one MPI process, MPI-IO); the datasets the programs read ("positions" [N,
// 2], "weights" and "masses" [N]) are looked up, their shapes asked, and those of at most 2^20
// values read, whole, in part, and by blocks the reader must refuse. Every answer is compared with
// an independent look at the same file through plain serial HDF5 (the default driver):
//
//  - a refusal is a collective loom::Error whose message names the file (and the dataset);
//    any other exception, a crash, a hang (-timeout) or a leak (AddressSanitizer's) is a
//    finding;
//  - has() is whether the name exists; a shape given is the dataset's, extents as stored
//    (rank 1 or 2, floats); rows(name, columns) accepts exactly that shape;
//  - values read are the stored ones, bit for bit, converted exactly: a value HDF5 reports out
//    of double's range or rounded on conversion, returned without an error, is a finding (a
//    non-finite value is returned only where the file stores one);
//  - blocks out of a dataset's rows are refused;
//  - every HDF5 identifier the reader opened is closed once the InputFile is gone.
//
// A finding prints what differs, then aborts (libFuzzer saves the input).

#include <sdot/hdf5_io.hpp>

#include <loom/error.hpp>

#include <Kokkos_Core.hpp>
#include <hdf5.h>
#ifdef SDOT_FUZZ_BUILD_FILES
#include <fuzzer/FuzzedDataProvider.h>
#endif
#include <mpi.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <limits>
#include <optional>
#include <string>
#include <vector>

namespace {

/// The most values of a dataset the target reads: a small file may declare any shape, and
/// reading it takes the memory its shape says.
constexpr std::int64_t max_values = std::int64_t(1) << 20;

std::string path; // where each input is written

[[noreturn]] void finding(std::string const& what) {
  std::fprintf(stderr, "sdot fuzz hdf5: FINDING: %s\n", what.c_str());
  std::remove(path.c_str()); // libFuzzer keeps the input
  std::abort();
}

std::string quoted(std::string const& s) {
  return "'" + s + "'";
}

/// The input file opened with plain serial HDF5 (the default driver), for comparison; not
/// open (-1) when it does not open that way.
class Serial {
public:
  Serial() : file_(H5Fopen(path.c_str(), H5F_ACC_RDONLY, H5P_DEFAULT)) {}
  ~Serial() {
    if (file_ >= 0)
      H5Fclose(file_);
    H5Eclear2(H5E_DEFAULT);
  }
  Serial(Serial const&) = delete;
  Serial& operator=(Serial const&) = delete;
  hid_t get() const { return file_; }

private:
  hid_t file_;
};

/// What plain serial HDF5 says about a dataset.
struct Stored {
  bool exists = false;  // the link exists
  bool dataset = false; // it opens as a dataset, with a type and a simple dataspace
  bool floats = false;
  int rank = -1;
  std::vector<hsize_t> dims;
};

Stored look(hid_t file, std::string const& name) {
  Stored s;
  s.exists = H5Lexists(file, name.c_str(), H5P_DEFAULT) > 0;
  hid_t const set = s.exists ? H5Dopen2(file, name.c_str(), H5P_DEFAULT) : -1;
  hid_t const type = set >= 0 ? H5Dget_type(set) : -1;
  hid_t const space = set >= 0 ? H5Dget_space(set) : -1;
  s.dataset = type >= 0 && space >= 0;
  if (s.dataset) {
    s.floats = H5Tget_class(type) == H5T_FLOAT;
    s.rank = H5Sget_simple_extent_ndims(space);
    if (s.rank >= 0) {
      s.dims.assign(s.rank, 0);
      if (s.rank > 0 && H5Sget_simple_extent_dims(space, s.dims.data(), nullptr) < 0)
        s.rank = -1;
    }
  }
  if (space >= 0)
    H5Sclose(space);
  if (type >= 0)
    H5Tclose(type);
  if (set >= 0)
    H5Dclose(set);
  H5Eclear2(H5E_DEFAULT);
  return s;
}

H5T_conv_ret_t record_exception(H5T_conv_except_t kind, hid_t, hid_t, void*, void*, void* inexact) {
  if (kind != H5T_CONV_EXCEPT_PINF && kind != H5T_CONV_EXCEPT_NINF && kind != H5T_CONV_EXCEPT_NAN)
    *static_cast<bool*>(inexact) = true;
  return H5T_CONV_UNHANDLED; // HDF5 converts as it would without the callback
}

/// Rows `block` of dataset `name` ([N] when columns = 0, else [N, columns]) as plain HDF5
/// reads them into doubles; nullopt when it cannot. `inexact`: HDF5 reported a value out of
/// double's range or rounded on conversion.
std::optional<std::vector<double>> stored_rows(hid_t file, std::string const& name, int columns,
                                               sdot::hdf5::RowBlock block, bool& inexact) {
  std::size_t const width = columns == 0 ? 1 : columns;
  std::vector<double> values(block.count * width);
  hid_t const set = H5Dopen2(file, name.c_str(), H5P_DEFAULT);
  hid_t const space = set >= 0 ? H5Dget_space(set) : -1;
  hsize_t const start[2] = {hsize_t(block.first), 0};
  hsize_t const count[2] = {hsize_t(block.count), hsize_t(columns)};
  hid_t const memory = H5Screate_simple(columns == 0 ? 1 : 2, count, nullptr);
  hid_t const dxpl = H5Pcreate(H5P_DATASET_XFER);
  H5Pset_type_conv_cb(dxpl, record_exception, &inexact);
  bool const ok = space >= 0 &&
                  H5Sselect_hyperslab(space, H5S_SELECT_SET, start, nullptr, count, nullptr) >= 0 &&
                  H5Dread(set, H5T_NATIVE_DOUBLE, memory, space, dxpl, values.data()) >= 0;
  H5Pclose(dxpl);
  H5Sclose(memory);
  if (space >= 0)
    H5Sclose(space);
  if (set >= 0)
    H5Dclose(set);
  H5Eclear2(H5E_DEFAULT);
  if (!ok)
    return std::nullopt;
  return values;
}

/// Runs `call` on the reader: true when it returned; a refusal must be a collective
/// loom::Error naming the file and `dataset` (if any).
template <class Call>
bool answered(char const* what, std::string const& dataset, Call&& call) {
  try {
    call();
    return true;
  } catch (loom::Error const& e) {
    std::string const message = e.what();
    if (!e.collective())
      finding(std::string(what) + ": a loom::Error that is not collective: " + message);
    if (message.find(quoted(path)) == std::string::npos ||
        (!dataset.empty() && message.find(quoted(dataset)) == std::string::npos))
      finding(std::string(what) + ": the message does not name the file and the dataset " +
              quoted(dataset) + ": " + message);
  } catch (std::exception const& e) {
    finding(std::string(what) + ": an exception other than loom::Error: " + e.what());
  }
  return false;
}

/// Open HDF5 identifiers of the kinds the reader makes.
std::vector<int> open_identifiers() {
  std::vector<int> counts;
  for (H5I_type_t type :
       {H5I_FILE, H5I_GROUP, H5I_DATATYPE, H5I_DATASPACE, H5I_DATASET, H5I_ATTR, H5I_GENPROP_LST}) {
    hsize_t n = 0;
    H5Inmembers(type, &n);
    counts.push_back(static_cast<int>(n));
  }
  return counts;
}

bool same_bits(double a, double b) {
  return std::memcmp(&a, &b, sizeof a) == 0;
}

/// Reads `block` of `name` ([N] when columns = 0, else [N, 2]) and compares it with what
/// plain HDF5 reads (`serial` not -1); false when refused.
bool read_and_compare(sdot::hdf5::InputFile const& file, hid_t serial, std::string const& name,
                      int columns, sdot::hdf5::RowBlock block) {
  std::vector<double> got;
  bool const ok = answered("read", name, [&] {
    if (columns == 0) {
      auto v = file.read_vector(name, block);
      if (std::int64_t(v.extent(0)) != block.count)
        finding("read_vector(" + quoted(name) + "): " + std::to_string(v.extent(0)) +
                " values for a block of " + std::to_string(block.count));
      got.assign(v.data(), v.data() + v.extent(0));
    } else {
      auto v = file.read_points(name, block);
      if (std::int64_t(v.extent(0)) != block.count)
        finding("read_points(" + quoted(name) + "): " + std::to_string(v.extent(0)) +
                " points for a block of " + std::to_string(block.count));
      got.assign(v.data(), v.data() + 2 * v.extent(0));
    }
  });
  if (!ok || serial < 0 || block.count == 0)
    return ok;
  bool inexact = false;
  auto const stored = stored_rows(serial, name, columns, block, inexact);
  std::string const rows = quoted(name) + " rows " + std::to_string(block.first) + " to " +
                           std::to_string(block.first + block.count);
  if (!stored)
    finding("read " + rows + ": the reader returned values that plain HDF5 cannot read");
  if (inexact)
    finding("read " + rows + ": values returned, but HDF5 converted some out of range or rounded");
  for (std::size_t k = 0; k < got.size(); ++k)
    if (!same_bits(got[k], (*stored)[k]))
      finding("read " + rows + ": value " + std::to_string(k) + " is " + std::to_string(got[k]) +
              ", stored " + std::to_string((*stored)[k]));
  return true;
}

/// Every question about dataset `name`, expected of shape [N] (columns = 0) or [N, 2].
void exercise(sdot::hdf5::InputFile const& file, hid_t serial, std::string const& name,
              int columns) {
  std::optional<Stored> const stored =
      serial >= 0 ? std::optional<Stored>(look(serial, name)) : std::nullopt;
  bool has = false;
  answered("has", "", [&] { has = file.has(name); });
  if (stored && has != stored->exists)
    finding("has(" + quoted(name) + ") is " + (has ? "true" : "false") +
            " but plain HDF5 says otherwise");

  sdot::hdf5::DatasetShape shape;
  bool const shaped = answered("shape", name, [&] { shape = file.shape(name); });
  if (shaped && stored) {
    if (!stored->dataset || !stored->floats || (stored->rank != 1 && stored->rank != 2))
      finding("shape(" + quoted(name) + ") answered for what is not floats of rank 1 or 2");
    if (shape.rows < 0 || hsize_t(shape.rows) != stored->dims[0] ||
        (stored->rank == 2 ? shape.columns < 0 || hsize_t(shape.columns) != stored->dims[1]
                           : shape.columns != 0))
      finding("shape(" + quoted(name) + ") is [" + std::to_string(shape.rows) + ", " +
              std::to_string(shape.columns) + "] but the stored extents are [" +
              std::to_string(stored->dims[0]) + ", " +
              (stored->rank == 2 ? std::to_string(stored->dims[1]) : "-") + "]");
  }
  std::int64_t rows = 0;
  bool const fits = answered("rows", name, [&] { rows = file.rows(name, columns); });
  if (fits && !(shaped && shape.rows == rows && shape.columns == columns))
    finding("rows(" + quoted(name) + ", " + std::to_string(columns) +
            ") accepts what shape() does not describe");
  if (!fits || rows > max_values / std::max(columns, 1))
    return;
  read_and_compare(file, serial, name, columns, file.even_block(rows));
  if (rows >= 2)
    read_and_compare(file, serial, name, columns, {1, rows - 2});
  read_and_compare(file, serial, name, columns, {rows, 0});
  // Blocks the reader must refuse.
  std::int64_t const big = std::numeric_limits<std::int64_t>::max();
  for (sdot::hdf5::RowBlock const bad :
       {sdot::hdf5::RowBlock{-1, 1}, {0, rows + 1}, {rows, 1}, {big, 1}, {1, big}})
    if (read_and_compare(file, -1, name, columns, bad))
      finding("read " + quoted(name) + ": rows [" + std::to_string(bad.first) + ", +" +
              std::to_string(bad.count) + ") of " + std::to_string(rows) + " were not refused");
}

#ifdef SDOT_FUZZ_BUILD_FILES
/// A datatype of the file: IEEE floats of either size and byte order, a float of another
/// layout (its fields, bias, precision and size drawn), integers, or a string.
hid_t drawn_type(FuzzedDataProvider& in) {
  switch (in.ConsumeIntegralInRange(0, 7)) {
  case 0:
    return H5Tcopy(H5T_IEEE_F64LE);
  case 1:
    return H5Tcopy(H5T_IEEE_F64BE);
  case 2:
    return H5Tcopy(H5T_IEEE_F32LE);
  case 3:
    return H5Tcopy(H5T_IEEE_F32BE);
  case 4:
    return H5Tcopy(in.ConsumeBool() ? H5T_STD_I32LE : H5T_STD_U64BE);
  case 5: {
    hid_t const t = H5Tcopy(H5T_C_S1);
    H5Tset_size(t, in.ConsumeIntegralInRange<std::size_t>(1, 16));
    return t;
  }
  default: { // another float layout: within a 2, 4 or 8-byte float
    hid_t const t = H5Tcopy(in.ConsumeBool() ? H5T_IEEE_F64LE : H5T_IEEE_F32BE);
    std::size_t const bits = 8 * H5Tget_size(t);
    // Often double's 11 exponent bits under another bias: values beyond double's range.
    std::size_t const esize = !in.ConsumeBool() ? std::min<std::size_t>(11, bits / 2)
                                                : in.ConsumeIntegralInRange<std::size_t>(2, 11);
    std::size_t const msize = in.ConsumeIntegralInRange<std::size_t>(1, bits - esize - 1);
    std::size_t const epos = msize, spos = msize + esize;
    if (H5Tset_fields(t, spos, epos, esize, 0, msize) < 0 ||
        H5Tset_ebias(t, in.ConsumeIntegralInRange<std::size_t>(1, 2000)) < 0) {
      H5Tclose(t);
      return H5Tcopy(H5T_IEEE_F64LE);
    }
    return t;
  }
  }
}

/// The input as a file that HDF5 writes itself (so that HDF5's parser reads only what it
/// writes): up to 4 datasets named as the programs' or not, of drawn types, ranks (0 to 3,
/// mostly 1 and 2), extents (small, often [N, 2], or up to 2^63 with nothing stored), layouts
/// (contiguous, chunked, compact; old or latest file format) and stored bytes.
void build_file(std::uint8_t const* data, std::size_t size) {
  FuzzedDataProvider in(data, size);
  hid_t const fapl = H5Pcreate(H5P_FILE_ACCESS);
  if (in.ConsumeBool())
    H5Pset_libver_bounds(fapl, H5F_LIBVER_LATEST, H5F_LIBVER_LATEST);
  hid_t const file = H5Fcreate(path.c_str(), H5F_ACC_TRUNC, H5P_DEFAULT, fapl);
  H5Pclose(fapl);
  if (file < 0)
    finding("cannot create " + path);
  static char const* const names[] = {"positions", "weights", "masses", "other"};
  // Draws from an exhausted input give 0 and false: those pick the most common cases (one
  // dataset, rank 1 or 2, the programs' [N, 2], some rows, values stored).
  int const datasets = (in.ConsumeIntegralInRange(0, 4) + 1) % 5;
  for (int k = 0; k < datasets; ++k) {
    char const* const name = names[in.ConsumeIntegralInRange(0, 3)];
    if (H5Lexists(file, name, H5P_DEFAULT) > 0)
      continue;
    hid_t const type = drawn_type(in);
    int const rank = std::array<int, 8>{2, 1, 2, 1, 2, 1, 0, 3}[in.ConsumeIntegralInRange(0, 7)];
    bool const huge = in.ConsumeIntegralInRange(0, 7) == 7;
    hsize_t dims[3] = {0, 0, 0}, chunk[3] = {1, 1, 1};
    hsize_t elements = 1;
    for (int d = 0; d < rank; ++d) {
      dims[d] = huge ? in.ConsumeIntegralInRange<hsize_t>(0, (hsize_t(1) << 63) - 1)
                : d == 1 && !in.ConsumeBool() ? 2 // the programs' [N, 2]
                                              : (in.ConsumeIntegralInRange<hsize_t>(0, 9) + 3) % 10;
      chunk[d] = std::max<hsize_t>(1, std::min<hsize_t>(dims[d], 4));
      elements = dims[d] != 0 && elements > (hsize_t(1) << 62) / dims[d] ? hsize_t(1) << 62
                                                                         : elements * dims[d];
    }
    hid_t const space = rank == 0 ? H5Screate(H5S_SCALAR) : H5Screate_simple(rank, dims, nullptr);
    hid_t const dcpl = H5Pcreate(H5P_DATASET_CREATE);
    int const layout = huge ? 1 : in.ConsumeIntegralInRange(0, 2);
    if (layout == 1 && rank > 0)
      H5Pset_chunk(dcpl, rank, chunk);
    else if (layout == 2)
      H5Pset_layout(dcpl, H5D_COMPACT);
    hid_t const set = H5Dcreate2(file, name, type, space, H5P_DEFAULT, dcpl, H5P_DEFAULT);
    if (set >= 0 && !huge && !in.ConsumeBool()) { // the stored bytes, drawn
      std::vector<std::uint8_t> bytes = in.ConsumeBytes<std::uint8_t>(elements * H5Tget_size(type));
      bytes.resize(elements * H5Tget_size(type), 0xfe); // large exponents in most layouts
      H5Dwrite(set, type, H5S_ALL, H5S_ALL, H5P_DEFAULT, bytes.data());
    }
    if (set >= 0)
      H5Dclose(set);
    H5Pclose(dcpl);
    H5Sclose(space);
    H5Tclose(type);
  }
  H5Fclose(file);
  H5Eclear2(H5E_DEFAULT);
}
#endif

/// Writes a small valid file and reads it once: MPI-IO and HDF5 set themselves up on the
/// first file they open, which is then not mistaken for a leak of the first input.
void warm_up() {
  hid_t const file = H5Fcreate(path.c_str(), H5F_ACC_TRUNC, H5P_DEFAULT, H5P_DEFAULT);
  hsize_t const dims[2] = {2, 2};
  hid_t const space = H5Screate_simple(2, dims, nullptr);
  hid_t const set =
      H5Dcreate2(file, "positions", H5T_IEEE_F64LE, space, H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT);
  double const values[4] = {0.25, 0.5, 0.75, 0.125};
  H5Dwrite(set, H5T_NATIVE_DOUBLE, H5S_ALL, H5S_ALL, H5P_DEFAULT, values);
  H5Dclose(set);
  H5Sclose(space);
  H5Fclose(file);
  sdot::hdf5::InputFile input(MPI_COMM_WORLD, path);
  Serial serial;
  exercise(input, serial.get(), "positions", 2);
}

} // namespace

// Open MPI (with PMIx and hwloc) keeps memory until exit, and MPI is never finalised here;
// HDF5 1.10 loses some on the error paths of damaged files: what they allocate is not the
// reader's. Open MPI's formatted strings (vasprintf) too; the reader has none.
extern "C" char const* __lsan_default_suppressions() {
  return "leak:libmpi.so\nleak:libopen-pal.so\nleak:libopen-rte.so\nleak:mca_\n"
         "leak:libpmix.so\nleak:libhdf5_openmpi.so\nleak:libhwloc.so\nleak:libevent\n"
         "leak:__vasprintf_internal\n";
}

// The table of suppressions used, printed by every leak check, is left out of the log.
extern "C" char const* __lsan_default_options() {
  return "print_suppressions=0";
}

// Leaks are looked for after each input (libFuzzer), not at exit, when Open MPI has unloaded
// components whose allocations could no longer be attributed; and with the full stack of each
// allocation (Open MPI is built without frame pointers, so the fast unwinder loses the
// library an allocation came from, and the suppressions above with it).
extern "C" char const* __asan_default_options() {
  return "leak_check_at_exit=0:fast_unwind_on_malloc=0";
}

extern "C" int LLVMFuzzerInitialize(int*, char***) {
  // Open MPI's handlers of fatal signals would report a finding in libFuzzer's place (and
  // without the input): none (an environment variable set by the caller wins).
  setenv("OMPI_MCA_opal_signal", "", 0);
  int provided = 0;
  MPI_Init_thread(nullptr, nullptr, MPI_THREAD_SINGLE, &provided);
  Kokkos::initialize();
  char const* dir = std::getenv("TMPDIR");
  path = std::string(dir && *dir ? dir : "/tmp") + "/sdot-fuzz-hdf5-" + std::to_string(getpid()) +
         ".h5";
  std::atexit([] { std::remove(path.c_str()); });
  H5Eset_auto2(H5E_DEFAULT, nullptr, nullptr); // the serial looks' failures are expected
  warm_up();
  return 0;
}

extern "C" int LLVMFuzzerTestOneInput(std::uint8_t const* data, std::size_t size) {
#ifdef SDOT_FUZZ_BUILD_FILES
  build_file(data, size);
#else
  std::FILE* f = std::fopen(path.c_str(), "wb");
  if (!f || std::fwrite(data, 1, size, f) != size || std::fclose(f) != 0)
    finding("cannot write " + path);
#endif
  std::vector<int> const identifiers = open_identifiers();
  {
    std::optional<sdot::hdf5::InputFile> file;
    bool const opened = answered("open", "", [&] { file.emplace(MPI_COMM_WORLD, path); });
    if (opened) {
      Serial serial;
      exercise(*file, serial.get(), "positions", 2);
      exercise(*file, serial.get(), "weights", 0);
      exercise(*file, serial.get(), "masses", 0);
    }
  }
  if (open_identifiers() != identifiers)
    finding("HDF5 identifiers left open after the InputFile is gone");
  return 0;
}
