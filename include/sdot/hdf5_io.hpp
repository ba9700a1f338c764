#pragma once
/// @file
/// sdot::hdf5: HDF5 input and output of row blocks (each process reads and writes its own rows
/// of a dataset), for the command-line programs and any program that reads or writes seeds,
/// weights and measures.
///
/// Available when sdot is built with SDOT_ENABLE_HDF5. With MPI (LOOM_ENABLE_MPI) sdot uses a
/// parallel HDF5, and the processes of a communicator share a file through collective MPI-IO;
/// without MPI, a serial HDF5, and a file belongs to one process. The files are the same either
/// way.
///
/// Datasets are read from floats (IEEE float64, or float32 converted exactly on reading; either
/// byte order) and written as float64, of shape [N] or [N, C], by blocks of rows.
/// Errors are collective: every process of the communicator throws the same loom::Error
/// (`collective()` is true), whose message names the file, the dataset and the problem, so
/// no process is left waiting in a collective call. The objects hold a duplicate of the
/// communicator they are given (directly
/// or in a loom::Ranks), never the caller's own.

#include <loom/detail/segments.hpp>
#include <loom/error.hpp>
#include <loom/ranks.hpp>

#include <Kokkos_Core.hpp>
#ifdef LOOM_ENABLE_MPI
#include <mpi.h>
#endif

#include <cstdint>
#include <exception>
#include <memory>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

namespace sdot::hdf5 {

/// Rows [first, first + count) of a dataset.
struct RowBlock {
  std::int64_t first = 0; ///< Index of the first row.
  std::int64_t count = 0; ///< Number of rows.
};

/// Block of `part` when `rows` rows are split evenly into `parts` blocks in order: the
/// first rows % parts blocks get one row more (blocks are empty when rows < parts).
RowBlock even_block(std::int64_t rows, int parts, int part);

/// A block of a float64 dataset of shape [N], on the host.
using HostVector = Kokkos::View<double*, Kokkos::LayoutRight, Kokkos::HostSpace>;
/// A block of a float64 dataset of shape [N, 2] (one point per row), on the host.
using HostPoints = Kokkos::View<double* [2], Kokkos::LayoutRight, Kokkos::HostSpace>;

/// Offsets of a block of cells into their vertices, on the host.
using HostOffsets = Kokkos::View<std::int64_t*, Kokkos::LayoutRight, Kokkos::HostSpace>;

/// This process's cells, on the host, as write_vtkhdf_cells() writes them: cell i is the
/// polygon of vertices [offsets(i), offsets(i + 1)) (none for an empty cell), and the cells
/// of the processes, in process order, are the seeds in order (as the rows of OutputFile's
/// datasets).
struct HostCells {
  HostOffsets offsets; ///< [cells + 1]: first vertex of each cell, from 0 (empty View: no cell)
  HostPoints vertices; ///< [vertices, 2]: the cells' vertices
  /// Values per cell written as float64 cell data, [cells] each, in this order: the names are
  /// not empty, distinct, without '/', and not "seed_index".
  std::vector<std::pair<std::string, HostVector>> cell_data;
};

/// Shape of a dataset: `rows` and, for a dataset of rank 2, `columns` (0 for rank 1).
struct DatasetShape {
  std::int64_t rows = 0; ///< Number of rows (extent 0).
  int columns = 0;       ///< Extent 1 for a dataset of rank 2, 0 for rank 1.
};

/// An HDF5 file opened read-only by every process of a communicator, or by one process.
class InputFile {
public:
#ifdef LOOM_ENABLE_MPI
  /// Collective over `comm` (which is duplicated): opens `path` read-only with MPI-IO. With
  /// MPI only (LOOM_ENABLE_MPI).
  /// @throws loom::Error (collective) when the file cannot be read or is not an HDF5 file.
  InputFile(MPI_Comm comm, std::string const& path);
#endif
  /// Collective over the processes of `ranks` (whatever their boxes): opens `path` read-only.
  /// The processes of an MPI communicator (loom::MpiRanks) share it through MPI-IO, as with
  /// the communicator itself; one process (loom::BoxRanks, or a process group of one process)
  /// opens it alone, without MPI.
  /// @throws loom::Error (collective) when the file cannot be read or is not an HDF5 file, or
  /// when `ranks` spans several processes that are not an MPI communicator.
  InputFile(loom::Ranks const& ranks, std::string const& path);
  /// Collective: closes the file.
  ~InputFile();
  InputFile(InputFile const&) = delete;
  InputFile& operator=(InputFile const&) = delete;

  /// The path of the file.
  std::string const& path() const;
  /// Rank of this process in the communicator (0 for a file of one process).
  int process_rank() const;
  /// Number of processes in the communicator (1 for a file of one process).
  int process_count() const;

  /// Collective: true when the file holds something named `dataset` (a dataset or not; the
  /// other calls check what it is).
  bool has(std::string const& dataset) const;
  /// Collective: the shape of a dataset of floats of rank 1 or 2.
  /// @throws loom::Error (collective) naming the dataset when it is missing, not IEEE float64
  /// or float32 (with the type found), of another rank, or of extents beyond DatasetShape's
  /// (2^63 - 1 rows, 2^31 - 1 columns).
  DatasetShape shape(std::string const& dataset) const;
  /// Collective: the number of rows of `dataset`, checked to be floats of shape [N]
  /// (`columns` = 0) or [N, columns].
  /// @throws loom::Error (collective) naming the dataset and the shape or type found.
  std::int64_t rows(std::string const& dataset, int columns) const;
  /// This process's block of `rows` rows split evenly over the processes (see even_block).
  RowBlock even_block(std::int64_t rows) const;

  /// Collective: rows `block` of a dataset of floats of shape [N], as float64 (each process its own
  /// block; blocks may overlap or be empty).
  /// @throws loom::Error (collective) naming the dataset when its type or shape is wrong or
  /// the block is out of [0, N) on some process.
  HostVector read_vector(std::string const& dataset, RowBlock block) const;
  /// Collective: rows `block` of a dataset of floats of shape [N, 2], as float64 (see read_vector).
  HostPoints read_points(std::string const& dataset, RowBlock block) const;

private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

/// An HDF5 file written by every process of a communicator (or by one process), atomically:
/// the datasets go to a temporary file next to the destination, `<path>.tmp-<pid of process
/// 0>`, which commit() renames to `path` once every process succeeded. Until then `path` is
/// untouched (an existing file stays as it was); discard(), or destroying the object before
/// commit(), removes the temporary.
class OutputFile {
public:
#ifdef LOOM_ENABLE_MPI
  /// Collective over `comm` (which is duplicated): creates the temporary file (truncating
  /// one with the same name), written with MPI-IO. With MPI only (LOOM_ENABLE_MPI).
  /// @throws loom::Error (collective) when it cannot be created.
  OutputFile(MPI_Comm comm, std::string const& path);
#endif
  /// Collective over the processes of `ranks` (whatever their boxes): creates the temporary
  /// file, as InputFile(ranks, path) opens one: through MPI-IO for the processes of an MPI
  /// communicator, by one process alone otherwise.
  /// @throws loom::Error (collective) when it cannot be created, or when `ranks` spans several
  /// processes that are not an MPI communicator.
  OutputFile(loom::Ranks const& ranks, std::string const& path);
  /// Collective unless commit() or discard() was called: closes and removes the temporary.
  /// Never throws.
  ~OutputFile();
  OutputFile(OutputFile const&) = delete;
  OutputFile& operator=(OutputFile const&) = delete;

  /// The destination.
  std::string const& path() const;
  /// The temporary file written until commit().
  std::string const& temporary_path() const;
  /// Rank of this process in the communicator (0 for a file of one process).
  int process_rank() const;
  /// Number of processes in the communicator (1 for a file of one process).
  int process_count() const;

  /// Collective: writes the float64 dataset `dataset` of shape [N]: the blocks of the
  /// processes, in process order, make its rows (N is the sum of their sizes; any split,
  /// empty blocks included).
  /// @throws loom::Error (collective) naming the dataset when it cannot be written (e.g. it
  /// was already written).
  void write(std::string const& dataset, HostVector const& block);
  /// Collective: writes the float64 dataset `dataset` of shape [N, 2] (see above).
  void write(std::string const& dataset, HostPoints const& block);

  /// Collective: writes this process's cells as the partition of the process in the
  /// VTKHDF 1.0 format (an UnstructuredGrid of polygons, which VTK's vtkHDFReader and
  /// ParaView read, one partition per process): the group `VTKHDF` with `NumberOfPoints`,
  /// `NumberOfCells`, `NumberOfConnectivityIds` (int64, one entry per process), `Points`
  /// ([vertices, 3] float64, z = 0: each cell has its own copy of its vertices), `Types`
  /// (uint8: VTK_POLYGON = 7, or VTK_EMPTY_CELL = 0 for an empty cell, which has no point),
  /// `Connectivity` (int64, point ids from 0 in each partition), `Offsets` (int64, cells + 1
  /// per process, from 0 in each), and the group `CellData` with `seed_index` (int64: the
  /// global index of each cell's seed, its row in the datasets of the seeds) and
  /// `cells.cell_data` (float64). Every seed has its cell, empty ones included.
  /// @throws loom::Error (collective) when the cells are inconsistent (offsets, cell data) on
  /// some process, or `VTKHDF` cannot be written (e.g. it was already written).
  void write_vtkhdf_cells(HostCells const& cells);

  /// Collective: closes the temporary and renames it to path(), after every process
  /// succeeded. Afterwards nothing else may be written.
  /// @throws loom::Error (collective) when closing or renaming failed (the temporary is
  /// removed then, and path() is untouched).
  void commit();
  /// Collective: closes and removes the temporary; path() is untouched. Never throws.
  void discard() noexcept;

private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

/// Runs `step()` on every process of `ranks`, then agrees on the outcome (collective): when
/// it threw on some process, every process throws the same collective loom::Error (the
/// message of the lowest failing process, see loom::Ranks::agree). A collective loom::Error
/// thrown by `step` itself (so by every process) is rethrown as it is. Call it around local
/// work that may fail on some processes only, before the next collective call.
template <class Step>
void agreed(loom::Ranks const& ranks, Step&& step) {
  bool ok = true;
  std::string problem;
  try {
    step();
  } catch (loom::Error const& e) {
    if (e.collective())
      throw;
    ok = false;
    problem = e.what();
  } catch (std::exception const& e) {
    ok = false;
    problem = *e.what() ? e.what() : "unknown error";
  }
  ranks.agree(ok, problem);
}

/// A LayoutRight host copy of a rank-1 or rank-2 View of double (any memory space and
/// layout): HostVector, HostPoints, or Kokkos::View<double**, LayoutRight, HostSpace>.
template <class View>
auto to_host(View const& view) {
  static_assert(Kokkos::is_view<View>::value && (View::rank == 1 || View::rank == 2),
                "sdot::hdf5::to_host: a rank-1 or rank-2 View");
  using HostOut = Kokkos::View<typename View::traits::non_const_data_type, Kokkos::LayoutRight,
                               Kokkos::HostSpace>;
  auto mirror = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), view);
  if constexpr (std::is_same<typename decltype(mirror)::array_layout, Kokkos::LayoutRight>::value) {
    return HostOut(mirror);
  } else {
    auto out = loom::detail::make_rows_view<HostOut>(
        view.label(), view.extent(0), loom::detail::cols_of(view), Kokkos::WithoutInitializing);
    Kokkos::deep_copy(out, mirror); // host to host, between layouts
    return out;
  }
}

/// The polygons of a sdot::CellPolygons (any memory space and layout) as HostCells, without
/// cell data.
template <class Polygons>
HostCells to_host_cells(Polygons const& polygons) {
  auto offsets = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), polygons.offsets);
  HostCells cells;
  cells.offsets = HostOffsets(
      Kokkos::view_alloc(Kokkos::WithoutInitializing, "sdot::hdf5::offsets"), offsets.extent(0));
  for (std::size_t i = 0; i < offsets.extent(0); ++i)
    cells.offsets(i) = offsets(i);
  cells.vertices = to_host(polygons.vertices);
  return cells;
}

/// A copy of a host block (any layout) in a new View of type `View` in the memory space of
/// `space` (e.g. the positions or weights a PowerDiagram takes), labelled `label`.
template <class View, class ExecutionSpace, class HostView>
View to_space(ExecutionSpace const& space, HostView const& host, std::string const& label) {
  static_assert(
      Kokkos::SpaceAccessibility<Kokkos::HostSpace, typename HostView::memory_space>::accessible,
      "sdot::hdf5::to_space: the source must be a host View");
  static_assert(static_cast<int>(View::rank) == static_cast<int>(HostView::rank),
                "sdot::hdf5::to_space: ranks differ");
  auto out = loom::detail::make_rows_view<View>(label, host.extent(0), loom::detail::cols_of(host),
                                                space, Kokkos::WithoutInitializing);
  auto mirror = Kokkos::create_mirror_view(out); // out itself when the host can access it
  Kokkos::deep_copy(mirror, host);               // host to host, between layouts
  Kokkos::deep_copy(space, out, mirror);
  space.fence(); // `mirror` may go away
  return out;
}

} // namespace sdot::hdf5
