// Writes the seed files of the HDF5 reader's fuzz target (fuzz/corpus/hdf5_reader/) with the
// serial HDF5 C API: small files (no timestamps, so the same bytes on every run) of the
// datasets the programs read, in the layouts, types and shapes a reader meets, in the earliest
// file format unless marked "latest":
//
//   seeds_f64         positions [3, 2], weights [3]: float64, contiguous
//   seeds_f32_be      positions [2, 2], weights [2], masses [2]: big-endian float32, compact
//                     (latest)
//   seeds_chunked     positions [4, 2], weights [4]: chunked, shuffled and deflated (latest)
//   seeds_empty       positions [0, 2], weights [0]
//   seeds_non_finite  positions and weights holding NaN and infinities
//   seeds_wrong       positions of integers, weights a group, masses of rank 3
//   seeds_huge_shape  chunked, nothing stored: positions [2, 2^32 + 2], weights [2^40]
//   seeds_wide_floats positions and weights of a float64 layout whose exponent bias is 1
//                     (values up to 2^2045, beyond double's range)
//
//   make_hdf5_corpus DIRECTORY
#include <hdf5.h>

#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <limits>
#include <string>
#include <vector>

namespace {

void check(bool ok, char const* what) {
  if (!ok) {
    std::fprintf(stderr, "make_hdf5_corpus: %s failed\n", what);
    std::exit(1);
  }
}

struct File {
  hid_t id;
  /// The earliest file format (as h5py writes by default: no checksums, so that a mutated
  /// byte reaches HDF5's decoding), or the latest one (checksummed, new chunk indexes).
  explicit File(std::string const& path, bool latest = false) {
    hid_t const fapl = H5Pcreate(H5P_FILE_ACCESS);
    if (latest)
      check(H5Pset_libver_bounds(fapl, H5F_LIBVER_LATEST, H5F_LIBVER_LATEST) >= 0, "libver");
    // No 2 KiB blocks for metadata and small data: files of a few hundred bytes.
    check(H5Pset_meta_block_size(fapl, 0) >= 0 && H5Pset_small_data_block_size(fapl, 0) >= 0,
          "block sizes");
    hid_t const fcpl = H5Pcreate(H5P_FILE_CREATE); // the root group's, no timestamps either
    check(H5Pset_obj_track_times(fcpl, false) >= 0, "track times");
    if (!latest) // small group B-tree and symbol table nodes (the latest format has neither)
      check(H5Pset_sym_k(fcpl, 1, 1) >= 0, "sym_k");
    id = H5Fcreate(path.c_str(), H5F_ACC_TRUNC, fcpl, fapl);
    check(id >= 0, path.c_str());
    H5Pclose(fcpl);
    H5Pclose(fapl);
  }
  ~File() { H5Fclose(id); }

  enum class Layout { contiguous, compact, chunked, deflated };

  /// Dataset `name` of `dims`, of `file_type`, from `values` of `memory_type` (none: nothing
  /// is written).
  void add(char const* name, std::vector<hsize_t> const& dims, hid_t file_type,
           Layout layout = Layout::contiguous, void const* values = nullptr,
           hid_t memory_type = H5T_NATIVE_DOUBLE) {
    hid_t const space = H5Screate_simple(static_cast<int>(dims.size()), dims.data(), nullptr);
    hid_t const dcpl = H5Pcreate(H5P_DATASET_CREATE);
    check(H5Pset_obj_track_times(dcpl, false) >= 0, "track times");
    std::vector<hsize_t> chunk(dims.size(), 2);
    if (layout == Layout::compact)
      check(H5Pset_layout(dcpl, H5D_COMPACT) >= 0, "compact");
    if (layout == Layout::chunked || layout == Layout::deflated)
      check(H5Pset_chunk(dcpl, static_cast<int>(chunk.size()), chunk.data()) >= 0, "chunk");
    if (layout == Layout::deflated)
      check(H5Pset_shuffle(dcpl) >= 0 && H5Pset_deflate(dcpl, 6) >= 0, "deflate");
    hid_t const set = H5Dcreate2(id, name, file_type, space, H5P_DEFAULT, dcpl, H5P_DEFAULT);
    check(set >= 0, name);
    if (values)
      check(H5Dwrite(set, memory_type, H5S_ALL, H5S_ALL, H5P_DEFAULT, values) >= 0, name);
    H5Dclose(set);
    H5Pclose(dcpl);
    H5Sclose(space);
  }
};

} // namespace

int main(int argc, char** argv) {
  if (argc != 2) {
    std::fprintf(stderr, "usage: make_hdf5_corpus DIRECTORY\n");
    return 2;
  }
  std::string const dir = std::string(argv[1]) + "/";
  using Layout = File::Layout;
  double const inf = std::numeric_limits<double>::infinity();
  double const nan = std::numeric_limits<double>::quiet_NaN();
  {
    File f(dir + "seeds_f64");
    double const p[6] = {0.25, 0.5, 0.75, 0.125, 0.5, 0.875}, w[3] = {0, 0.01, -0.02};
    f.add("positions", {3, 2}, H5T_IEEE_F64LE, Layout::contiguous, p);
    f.add("weights", {3}, H5T_IEEE_F64LE, Layout::contiguous, w);
  }
  {
    File f(dir + "seeds_f32_be", true);
    double const p[4] = {0.1, 0.2, 0.3, 0.4}, w[2] = {1e-3, 0}, m[2] = {0.5, 0.5};
    f.add("positions", {2, 2}, H5T_IEEE_F32BE, Layout::compact, p);
    f.add("weights", {2}, H5T_IEEE_F32BE, Layout::compact, w);
    f.add("masses", {2}, H5T_IEEE_F32BE, Layout::compact, m);
  }
  {
    File f(dir + "seeds_chunked", true);
    double const p[8] = {0, 0, 1, 0, 1, 1, 0, 1}, w[4] = {0, 0, 0, 0};
    f.add("positions", {4, 2}, H5T_IEEE_F64LE, Layout::deflated, p);
    f.add("weights", {4}, H5T_IEEE_F64LE, Layout::chunked, w);
  }
  {
    File f(dir + "seeds_empty");
    f.add("positions", {0, 2}, H5T_IEEE_F64LE);
    f.add("weights", {0}, H5T_IEEE_F64LE);
  }
  {
    File f(dir + "seeds_non_finite");
    double const p[4] = {nan, 0.5, inf, -inf}, w[2] = {-inf, nan};
    f.add("positions", {2, 2}, H5T_IEEE_F64LE, Layout::compact, p);
    f.add("weights", {2}, H5T_IEEE_F64LE, Layout::compact, w);
  }
  {
    File f(dir + "seeds_wrong");
    int const p[4] = {1, 2, 3, 4};
    f.add("positions", {2, 2}, H5T_STD_I32LE, Layout::compact, p, H5T_NATIVE_INT);
    hid_t const group = H5Gcreate2(f.id, "weights", H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT);
    check(group >= 0, "group");
    H5Gclose(group);
    double const m[8] = {};
    f.add("masses", {2, 2, 2}, H5T_IEEE_F64LE, Layout::compact, m);
  }
  {
    File f(dir + "seeds_huge_shape");
    f.add("positions", {2, (hsize_t(1) << 32) + 2}, H5T_IEEE_F64LE, Layout::chunked);
    f.add("weights", {hsize_t(1) << 40}, H5T_IEEE_F64LE, Layout::chunked);
  }
  {
    File f(dir + "seeds_wide_floats");
    hid_t const wide = H5Tcopy(H5T_IEEE_F64LE);
    check(H5Tset_ebias(wide, 1) >= 0, "ebias");
    // Stored bits: exponent fields 1023 (2^1022, within range), 2046 (2^2045: beyond it).
    std::uint64_t const p[4] = {0x3FF0000000000000u, 0x7FE0000000000000u, 0x3FF8000000000000u,
                                0x4000000000000000u};
    f.add("positions", {2, 2}, wide, Layout::compact, p, wide);
    f.add("weights", {2}, wide, Layout::compact, p + 2, wide);
    H5Tclose(wide);
  }
  return 0;
}
