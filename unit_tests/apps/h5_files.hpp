#pragma once
// HDF5 files for the tests, written and read with the plain (serial) HDF5 C API, independently
// of sdot::hdf5.

#include <hdf5.h>

#include <algorithm>
#include <filesystem>
#include <stdexcept>
#include <string>
#include <vector>

namespace sdot_test {

/// A dataset's shape and values (converted to double).
struct H5Data {
  std::vector<hsize_t> dims;
  std::vector<double> values;
};

/// A new HDF5 file (truncated), closed when the object goes away.
class H5Writer {
public:
  explicit H5Writer(std::string const& path)
      : file_(H5Fcreate(path.c_str(), H5F_ACC_TRUNC, H5P_DEFAULT, H5P_DEFAULT)) {
    if (file_ < 0)
      throw std::runtime_error("test: cannot create " + path);
  }
  ~H5Writer() { H5Fclose(file_); }
  H5Writer(H5Writer const&) = delete;
  H5Writer& operator=(H5Writer const&) = delete;

  /// Dataset `name` of shape `dims` and file type `file_type` from doubles (converted).
  H5Writer& add(std::string const& name, std::vector<hsize_t> const& dims,
                std::vector<double> const& values, hid_t file_type = H5T_IEEE_F64LE) {
    hid_t const space = H5Screate_simple(static_cast<int>(dims.size()), dims.data(), nullptr);
    hid_t const set =
        H5Dcreate2(file_, name.c_str(), file_type, space, H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT);
    herr_t const status =
        set < 0 ? -1
                : H5Dwrite(set, H5T_NATIVE_DOUBLE, H5S_ALL, H5S_ALL, H5P_DEFAULT, values.data());
    if (set >= 0)
      H5Dclose(set);
    H5Sclose(space);
    if (status < 0)
      throw std::runtime_error("test: cannot write dataset " + name);
    return *this;
  }
  /// Dataset `name` of shape `dims` and file type `file_type`, chunked, with nothing written
  /// (reading gives the fill value, 0): a small file may declare any shape this way.
  H5Writer& add_unwritten(std::string const& name, std::vector<hsize_t> const& dims,
                          hid_t file_type = H5T_IEEE_F64LE) {
    hid_t const space = H5Screate_simple(static_cast<int>(dims.size()), dims.data(), nullptr);
    hid_t const dcpl = H5Pcreate(H5P_DATASET_CREATE);
    std::vector<hsize_t> const chunk(dims.size(), 1);
    hid_t const set =
        H5Pset_chunk(dcpl, static_cast<int>(chunk.size()), chunk.data()) < 0
            ? -1
            : H5Dcreate2(file_, name.c_str(), file_type, space, H5P_DEFAULT, dcpl, H5P_DEFAULT);
    if (set >= 0)
      H5Dclose(set);
    H5Pclose(dcpl);
    H5Sclose(space);
    if (set < 0)
      throw std::runtime_error("test: cannot create dataset " + name);
    return *this;
  }
  /// A group `name` (not a dataset).
  H5Writer& add_group(std::string const& name) {
    hid_t const group = H5Gcreate2(file_, name.c_str(), H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT);
    if (group < 0)
      throw std::runtime_error("test: cannot create group " + name);
    H5Gclose(group);
    return *this;
  }

private:
  hid_t file_;
};

/// True when `path` is an HDF5 file holding a link `name`.
inline bool h5_has(std::string const& path, std::string const& name) {
  hid_t const file = H5Fopen(path.c_str(), H5F_ACC_RDONLY, H5P_DEFAULT);
  if (file < 0)
    return false;
  bool const has = H5Lexists(file, name.c_str(), H5P_DEFAULT) > 0;
  H5Fclose(file);
  return has;
}

/// Dataset `name` of the HDF5 file `path`, as doubles.
inline H5Data h5_read(std::string const& path, std::string const& name) {
  hid_t const file = H5Fopen(path.c_str(), H5F_ACC_RDONLY, H5P_DEFAULT);
  if (file < 0)
    throw std::runtime_error("test: cannot open " + path);
  hid_t const set = H5Dopen2(file, name.c_str(), H5P_DEFAULT);
  if (set < 0) {
    H5Fclose(file);
    throw std::runtime_error("test: no dataset " + name + " in " + path);
  }
  hid_t const space = H5Dget_space(set);
  H5Data d;
  d.dims.resize(static_cast<std::size_t>(H5Sget_simple_extent_ndims(space)));
  H5Sget_simple_extent_dims(space, d.dims.data(), nullptr);
  d.values.resize(static_cast<std::size_t>(H5Sget_simple_extent_npoints(space)));
  herr_t const status = d.values.empty() ? 0
                                         : H5Dread(set, H5T_NATIVE_DOUBLE, H5S_ALL, H5S_ALL,
                                                   H5P_DEFAULT, d.values.data());
  H5Sclose(space);
  H5Dclose(set);
  H5Fclose(file);
  if (status < 0)
    throw std::runtime_error("test: cannot read dataset " + name + " of " + path);
  return d;
}

/// The names of the entries of a directory, sorted.
inline std::vector<std::string> directory_entries(std::string const& directory) {
  std::vector<std::string> names;
  for (auto const& entry : std::filesystem::directory_iterator(directory))
    names.push_back(entry.path().filename().string());
  std::sort(names.begin(), names.end());
  return names;
}

} // namespace sdot_test
