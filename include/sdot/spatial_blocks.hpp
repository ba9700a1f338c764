#pragma once
/// @file
/// sdot::SpatialBlocks: moves per-seed data between the processes' input blocks (each process
/// holds a block of rows of the seeds, in any spatial arrangement) and spatial blocks (each
/// process holds the seeds of one region of a bisection of the cloud, balanced by count).
///
/// A distributed computation whose cost depends on locality, such as the transport solver
/// (its preconditioner works on each process's block, and its Jacobian's halo holds the
/// neighbours on other processes), runs much faster on spatial blocks when the input blocks
/// are spread over the domain (rows of a file in random order). Within a spatial block the
/// seeds follow the Z-order curve, so that the seeds of nearby cells are nearby in memory too:
/// a solve on 1e6 seeds read in random order takes 1.3× less time (docs/transport.md). A plan:
/// built once from the positions, then used for any number of arrays, both ways.

#include <loom/detail/segments.hpp>
#include <loom/distribute.hpp>
#include <loom/error.hpp>
#include <loom/ranks.hpp>
#include <loom/row_blocks.hpp>
#include <sdot/base/kokkos_compat.hpp>
#include <sdot/base/morton.hpp>
#include <sdot/distributed/boxes.hpp>
#include <sdot/points.hpp>

#include <Kokkos_Core.hpp>

#include <cstdint>
#include <stdexcept>
#include <string>
#include <vector>

namespace sdot {

namespace detail {

/// dest(i) ← dest(i) × local (a process's box to its local rank 0).
template <class ExecutionSpace, class Dest>
void spatial_process_ranks(ExecutionSpace const& space, Dest const& dest, int local) {
  Kokkos::parallel_for(
      "sdot::SpatialBlocks::process_of_box",
      Kokkos::RangePolicy<ExecutionSpace>(space, 0, static_cast<int>(dest.extent(0))),
      KOKKOS_LAMBDA(int i) { dest(i) = dest(i) * local; });
}

/// For each spatial row k (arrived row order(k), its global index in column 0): the index,
/// and local rank 0 of the process whose input block holds it.
template <class ExecutionSpace, class Rows, class Order, class First, class Gids, class Home>
void spatial_homes(ExecutionSpace const& space, Rows const& arrived, Order const& order,
                   First const& process_first, int processes, int local, Gids const& gids,
                   Home const& home) {
  Kokkos::parallel_for(
      "sdot::SpatialBlocks::homes",
      Kokkos::RangePolicy<ExecutionSpace>(space, 0, static_cast<int>(arrived.extent(0))),
      KOKKOS_LAMBDA(int k) {
        auto const gid = static_cast<std::int64_t>(arrived(order(k), 0));
        gids(k) = gid;
        home(k) = loom::detail::segment_of(process_first, processes, gid) * local;
      });
}

/// positions(k, ·) = columns 1 and 2 of arrived row order(k).
template <class ExecutionSpace, class Rows, class Order, class Positions>
void spatial_positions(ExecutionSpace const& space, Rows const& arrived, Order const& order,
                       Positions const& positions) {
  Kokkos::parallel_for(
      "sdot::SpatialBlocks::positions",
      Kokkos::RangePolicy<ExecutionSpace>(space, 0, static_cast<int>(positions.extent(0))),
      KOKKOS_LAMBDA(int k) {
        positions(k, 0) = arrived(order(k), 1);
        positions(k, 1) = arrived(order(k), 2);
      });
}

/// rows(i, ·) = (first_gid + i, position i).
template <class ExecutionSpace, class Rows, class Positions>
void spatial_indices(ExecutionSpace const& space, Rows const& rows, std::int64_t first_gid,
                     Positions const& positions) {
  Kokkos::parallel_for(
      "sdot::SpatialBlocks::gids",
      Kokkos::RangePolicy<ExecutionSpace>(space, 0, static_cast<int>(rows.extent(0))),
      KOKKOS_LAMBDA(int i) {
        rows(i, 0) = static_cast<double>(first_gid + i);
        rows(i, 1) = positions(i, 0);
        rows(i, 2) = positions(i, 1);
      });
}

/// Row i of `rows`: the values of entry i ([n] or [n, c]), then, when `rows` has one more
/// column, gids(i). (row_at chooses the rank: nvcc refuses a device lambda whose variable is
/// first captured inside `if constexpr`.)
template <class ExecutionSpace, class Rows, class View, class Gids>
void spatial_pack(ExecutionSpace const& space, Rows const& rows, View const& values,
                  Gids const& gids) {
  int const c = View::rank == 1 ? 1 : static_cast<int>(values.extent(1));
  bool const with_gid = static_cast<int>(rows.extent(1)) > c;
  Kokkos::parallel_for(
      "sdot::SpatialBlocks::pack",
      Kokkos::RangePolicy<ExecutionSpace>(space, 0, static_cast<int>(rows.extent(0))),
      KOKKOS_LAMBDA(int i) {
        for (int k = 0; k < c; ++k)
          rows(i, k) = loom::detail::row_at(values, i, k);
        if (with_gid)
          rows(i, c) = static_cast<double>(gids(i));
      });
}

/// Row order(k) of `rows` into entry k of `out` (first_gid < 0), or row k into entry
/// gid − first_gid (the row's last column holding gid).
template <class ExecutionSpace, class Rows, class Order, class Out>
void spatial_unpack(ExecutionSpace const& space, Rows const& rows, Order const& order,
                    Out const& out, std::int64_t first_gid) {
  int const c = Out::rank == 1 ? 1 : static_cast<int>(out.extent(1));
  Kokkos::parallel_for(
      "sdot::SpatialBlocks::unpack",
      Kokkos::RangePolicy<ExecutionSpace>(space, 0, static_cast<int>(out.extent(0))),
      KOKKOS_LAMBDA(int k) {
        int const from = first_gid >= 0 ? k : order(k);
        std::int64_t const i =
            first_gid >= 0 ? static_cast<std::int64_t>(rows(k, c)) - first_gid : std::int64_t(k);
        for (int j = 0; j < c; ++j)
          loom::detail::row_at(out, i, j) = rows(from, j);
      });
}

} // namespace detail

/// Plan that moves per-seed arrays between input blocks and spatial blocks (see the file's
/// comment). Spatial blocks follow the same bisection as the boxes of travelling cells, with
/// one box per process (whatever the ranks per process): a seed's block depends only on the
/// positions and the number of processes. Within a block the seeds follow the Z-order curve
/// over the block's bounding box (ties in arrival order, which depends only on the input
/// blocks).
template <class ExecutionSpace = Kokkos::DefaultExecutionSpace>
class SpatialBlocks {
public:
  using memory_space = typename ExecutionSpace::memory_space;             ///< where the arrays live
  using Rows = Kokkos::View<double**, Kokkos::LayoutRight, memory_space>; ///< rows sent

  /// Collective over the processes of `ranks`.
  /// @param space the execution space instance of the kernels
  /// @param ranks the processes (with any number of ranks per process)
  /// @param positions this process's input block
  SpatialBlocks(ExecutionSpace const& space, loom::Ranks ranks, ConstPoints<memory_space> positions)
      : space_(space), ranks_(std::move(ranks)) {
    sdot::compat::ScopedRegion region("sdot::SpatialBlocks");
    input_count_ = static_cast<int>(positions.extent(0));
    loom::RowBlocks const input_blocks(ranks_, input_count_);
    std::vector<std::int64_t> const& first = input_blocks.offsets();
    if (input_blocks.global_size() >= (std::int64_t(1) << 53))
      throw std::invalid_argument("sdot::SpatialBlocks: more than 2^53 seeds");
    first_gid_ = input_blocks.begin();
    Kokkos::View<std::int64_t*, memory_space> const process_first(
        Kokkos::view_alloc(space_, Kokkos::WithoutInitializing, "sdot::SpatialBlocks::first"),
        first.size());
    Kokkos::deep_copy(
        space_, process_first,
        Kokkos::View<std::int64_t const*, Kokkos::HostSpace,
                     Kokkos::MemoryTraits<Kokkos::Unmanaged>>(first.data(), first.size()));
    // One box per process (whatever the ranks per process); each seed goes to local rank 0 of
    // the process of its box.
    loom::Ranks const one_box_per_process(ranks_.group(), 1);
    to_spatial_dest_ = detail::bisect_into_boxes(space_, one_box_per_process, positions, first_gid_,
                                                 input_blocks.global_size());
    int const local = ranks_.local_count();
    detail::spatial_process_ranks(space_, to_spatial_dest_, local);
    // The global index and the position of each seed, to its spatial block; there, the seeds
    // in Z order (spatial_order_: the arrived row of each spatial row), which every move
    // keeps.
    Rows seeds(
        Kokkos::view_alloc(space_, Kokkos::WithoutInitializing, "sdot::SpatialBlocks::seeds"),
        input_count_, 3);
    detail::spatial_indices(space_, seeds, first_gid_, positions);
    Rows const arrived = loom::distribute(space_, ranks_, to_spatial_dest_, seeds).rows;
    spatial_count_ = static_cast<int>(arrived.extent(0));
    spatial_order_ = detail::morton_order(
        space_, Kokkos::subview(arrived, Kokkos::ALL, Kokkos::make_pair(1, 3)));
    spatial_gids_ = Kokkos::View<std::int64_t*, memory_space>(
        Kokkos::view_alloc(space_, Kokkos::WithoutInitializing, "sdot::SpatialBlocks::gids"),
        spatial_count_);
    to_input_dest_ = Kokkos::View<int*, memory_space>(
        Kokkos::view_alloc(space_, Kokkos::WithoutInitializing, "sdot::SpatialBlocks::home"),
        spatial_count_);
    detail::spatial_homes(space_, arrived, spatial_order_, process_first, ranks_.process_count(),
                          local, spatial_gids_, to_input_dest_);
    spatial_positions_ = Points<memory_space>(
        Kokkos::view_alloc(space_, Kokkos::WithoutInitializing, "sdot::SpatialBlocks::positions"),
        spatial_count_);
    detail::spatial_positions(space_, arrived, spatial_order_, spatial_positions_);
    space_.fence();
  }

  /// Collective: the input index (see spatial_gids()) of the seed at `spatial_index` in the
  /// concatenated spatial blocks; −1 outside them.
  std::int64_t input_index(std::int64_t spatial_index) const {
    std::int64_t const first = loom::RowBlocks(ranks_, spatial_count_).begin();
    std::int64_t found = -1;
    if (spatial_index >= first && spatial_index < first + spatial_count_) {
      auto const entry = Kokkos::create_mirror_view_and_copy(
          Kokkos::HostSpace(), Kokkos::subview(spatial_gids_, spatial_index - first));
      found = entry();
    }
    std::vector<std::int64_t> agreed{found};
    agreed = ranks_.process_maxima(agreed);
    return agreed[0];
  }

  /// Seeds of this process's input block.
  int input_count() const { return input_count_; }
  /// Seeds of this process's spatial block.
  int spatial_count() const { return spatial_count_; }
  /// The global input index (position in the concatenated input blocks) of each seed of this
  /// process's spatial block.
  Kokkos::View<std::int64_t const*, memory_space> spatial_gids() const { return spatial_gids_; }
  /// The positions of this process's spatial block, as to_spatial() of the positions given to
  /// the constructor gives them, without moving them again: the constructor moved them to
  /// order the blocks. The plan keeps this View (16 bytes per seed) but never reads it.
  Points<memory_space> spatial_positions() const { return spatial_positions_; }

  /// Collective: `values` (this process's input block, [input_count()] or [input_count(), 2])
  /// in the spatial block ([spatial_count()] or [spatial_count(), 2]).
  /// @throws loom::Error (on every process) when a process gives another number of rows
  template <class View>
  auto to_spatial(View const& values) const {
    return move("to_spatial", values, false);
  }

  /// Collective: `values` (this process's spatial block) back in the input block.
  /// @throws loom::Error (on every process) when a process gives another number of rows
  template <class View>
  auto to_input(View const& values) const {
    return move("to_input", values, true);
  }

private:
  // Collective: every process throws the same loom::Error when one was given a wrong size.
  template <class View>
  void check(char const* what, View const& values, int expected) const {
    static_assert(View::rank == 1 || View::rank == 2, "sdot::SpatialBlocks: [n] or [n, 2]");
    bool const ok = static_cast<int>(values.extent(0)) == expected &&
                    (View::rank == 1 || values.extent(1) == 2);
    ranks_.agree(ok, std::string("sdot::SpatialBlocks::") + what + ": " +
                         std::to_string(values.extent(0)) + " rows given, " +
                         std::to_string(expected) + " expected");
  }

  // Collective: `values` to the spatial blocks, or back to the input blocks (`home`): the
  // way back sends each row's global index along, and places the row by it.
  template <class View>
  auto move(char const* what, View const& values, bool home) const {
    check(what, values, home ? spatial_count_ : input_count_);
    Rows const rows = pack(values, home);
    Rows const arrived =
        loom::distribute(space_, ranks_, home ? to_input_dest_ : to_spatial_dest_, rows).rows;
    auto out = make_like(values, home ? input_count_ : spatial_count_,
                         std::string("sdot::SpatialBlocks::") + what);
    detail::spatial_unpack(space_, arrived, spatial_order_, out, home ? first_gid_ : -1);
    space_.fence();
    return out;
  }

  // Rows of the values' columns, then, `with_gid`, the global index of the spatial block's
  // seeds (the same width on every process, as loom::distribute needs).
  template <class View>
  Rows pack(View const& values, bool with_gid) const {
    int const c = View::rank == 1 ? 1 : static_cast<int>(values.extent(1));
    Rows rows(Kokkos::view_alloc(space_, Kokkos::WithoutInitializing, "sdot::SpatialBlocks::rows"),
              values.extent(0), c + (with_gid ? 1 : 0));
    detail::spatial_pack(space_, rows, values, spatial_gids_);
    return rows;
  }

  template <class View>
  static auto make_like(View const& values, int n, std::string const& label) {
    using Out =
        Kokkos::View<typename View::non_const_data_type, typename View::array_layout, memory_space>;
    if constexpr (Out::rank_dynamic == 1)
      return Out(Kokkos::view_alloc(Kokkos::WithoutInitializing, label), n);
    else
      return Out(Kokkos::view_alloc(Kokkos::WithoutInitializing, label), n, values.extent(1));
  }

  ExecutionSpace space_;
  loom::Ranks ranks_;
  int input_count_ = 0, spatial_count_ = 0;
  std::int64_t first_gid_ = 0;
  Kokkos::View<int*, memory_space> to_spatial_dest_, to_input_dest_;
  /// The arrived row (loom::distribute's order) of each row of the spatial block.
  Kokkos::View<int*, memory_space> spatial_order_;
  Kokkos::View<std::int64_t*, memory_space> spatial_gids_;
  Points<memory_space> spatial_positions_;
};

} // namespace sdot
