#pragma once
// The files of the command-line programs beyond their main input and output: --cells FILE (the
// polygons in the VTKHDF format, for ParaView), --svg FILE (a picture of a small diagram), and
// the check of the input's datasets of one row per seed.
#include "command_line.hpp"

#include <sdot/hdf5_io.hpp>
#include <sdot/picture.hpp>

#include <loom/loom.hpp>

#include <cstdint>
#include <optional>
#include <string>
#include <utility>

namespace sdot::apps {

/// Collective: throws the same loom::Error on every process unless dataset `dataset` of
/// `file` (at `path`) has `seeds` rows, one per seed (the rows of 'positions').
inline void check_rows_per_seed(sdot::hdf5::InputFile const& file, std::string const& path,
                                std::string const& dataset, std::int64_t seeds) {
  std::int64_t const rows = file.rows(dataset, 0);
  if (rows != seeds) // the same on every process
    throw loom::Error("'" + path + "': dataset '" + dataset + "' has " + std::to_string(rows) +
                          " rows but 'positions' has " + std::to_string(seeds) +
                          ": one value per seed is expected",
                      true);
}

/// The options --cells FILE and --svg FILE.
struct CellFileOptions {
  std::string cells, svg; ///< the files, or ""

  /// Takes `arg` and its value when it is --cells or --svg; false for any other argument.
  bool take(std::string const& arg, Arguments& a) {
    if (arg != "--cells" && arg != "--svg")
      return false;
    (arg == "--cells" ? cells : svg) = a.value_of(arg);
    return true;
  }
};

/// The files of the cells that CellFileOptions name.
class CellFiles {
public:
  /// Collective, once the number of seeds is known and before the computation: refuses --svg
  /// for more seeds than sdot::write_svg draws, and file names that clash with `output` (the
  /// program's OUTPUT.h5, or ""); then creates the temporary of the --cells file, so that a
  /// bad path fails early.
  /// @throws UsageError, or a collective loom::Error when the file cannot be created
  CellFiles(loom::Ranks const& ranks, CellFileOptions options, std::int64_t seeds,
            std::string const& output)
      : cells_(std::move(options.cells)), svg_(std::move(options.svg)) {
    int const limit = PictureOptions{}.max_cells;
    if (!svg_.empty() && seeds > limit)
      throw UsageError("--svg draws at most " + std::to_string(limit) + " seeds, not " +
                       std::to_string(seeds) + " (use --cells and ParaView)");
    if (!cells_.empty() && (cells_ == output || cells_ == svg_))
      throw UsageError("--cells " + cells_ + " names another output too");
    if (!svg_.empty() && svg_ == output)
      throw UsageError("--svg " + svg_ + " names OUTPUT.h5 too");
    if (!cells_.empty())
      file_.emplace(ranks, cells_);
  }

  /// Whether the cells' polygons are needed.
  bool wanted() const { return !cells_.empty() || !svg_.empty(); }

  /// Collective: writes this process's cells (`cells.cell_data` first holds the values that
  /// colour the picture) into the --cells file's temporary, and the picture of the cells of all
  /// the processes, gathered, on process 0. `positions` are this process's seeds.
  void write(loom::Ranks const& ranks, hdf5::HostCells const& cells,
             hdf5::HostPoints const& positions, DomainPolygon const& domain) {
    if (file_)
      file_->write_vtkhdf_cells(cells);
    if (svg_.empty())
      return;
    std::int64_t const n = positions.extent(0);
    Kokkos::View<int*, Kokkos::HostSpace> sizes("sdot::apps::cell_sizes", n);
    for (std::int64_t i = 0; i < n; ++i)
      sizes(i) = static_cast<int>(cells.offsets(i + 1) - cells.offsets(i));
    auto const all_sizes = loom::gather_to_host(loom::spread(sizes, ranks));
    auto const all_vertices = loom::gather_to_host(loom::spread(cells.vertices, ranks));
    auto const all_seeds = loom::gather_to_host(loom::spread(positions, ranks));
    auto const all_values = loom::gather_to_host(loom::spread(cells.cell_data.at(0).second, ranks));
    hdf5::agreed(ranks, [&] {
      if (ranks.process_rank() != 0)
        return;
      CellPolygons<Kokkos::HostSpace> all;
      all.offsets =
          Kokkos::View<int*, Kokkos::HostSpace>("sdot::apps::offsets", all_sizes.extent(0) + 1);
      for (std::size_t i = 0; i < all_sizes.extent(0); ++i)
        all.offsets(i + 1) = all.offsets(i) + all_sizes(i);
      all.vertices = detail::in_points_layout(Kokkos::DefaultHostExecutionSpace(), all_vertices,
                                              "sdot::apps::vertices");
      write_svg(svg_, all, all_seeds, domain, all_values);
    });
  }

  /// Collective: renames the --cells file's temporary to its name (see
  /// sdot::hdf5::OutputFile::commit).
  void commit() {
    if (file_)
      file_->commit();
  }

private:
  std::string cells_, svg_;
  std::optional<hdf5::OutputFile> file_;
};

} // namespace sdot::apps
