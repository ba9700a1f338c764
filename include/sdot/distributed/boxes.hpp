#pragma once
// The boxes of the distributed diagram: the seeds are split into one box per rank by
// recursive bisection along the longer side of each box, at the (weighted) median, for any
// number of ranks. The medians are found by a distributed radix selection on
// (coordinate, global index), so that no process ever holds more than its own seeds, and
// ties (lattices) are split deterministically. The coordinate is taken as a 32-bit position
// within the node's extent (monotone in the coordinate; seeds it cannot tell apart are
// ordered by global index), so that one pass over the seeds leaves 1/256 of them.

#include <loom/ranks.hpp>

#include <sdot/geometry/seed_tree.hpp>
#include <sdot/points.hpp>

#include <algorithm>
#include <cstdint>
#include <vector>

namespace sdot::detail {

/// The coordinate's 32-bit position in [lo, lo + 2^32 / scale]: non-decreasing in `value`.
KOKKOS_INLINE_FUNCTION std::uint64_t extent_position(double value, double lo, double scale) {
  double const t = (value - lo) * scale;
  if (!(t > 0))
    return 0;
  return t >= 4294967295.0 ? std::uint64_t(4294967295u) : static_cast<std::uint64_t>(t);
}

/// Whether seed i is in the selection of its node (columns of `selection`: prefix and mask of
/// the coordinate, then of the global index), and its key of `stage`
/// (0: the coordinate's position in the node's extent; 1: the global index, among seeds of
/// the selected position).
template <class MemorySpace>
struct InSelection {
  Kokkos::View<int*, MemorySpace> node_of;
  ConstPoints<MemorySpace> positions;
  Kokkos::View<int*, MemorySpace> axis;
  Kokkos::View<double**, Kokkos::LayoutRight, MemorySpace> extent; ///< lo, scale per node
  Kokkos::View<std::uint64_t**, Kokkos::LayoutRight, MemorySpace> selection;
  std::int64_t first_gid;

  KOKKOS_INLINE_FUNCTION std::uint64_t position(int i, int k) const {
    return extent_position(positions(i, axis(k)), extent(k, 0), extent(k, 1));
  }

  KOKKOS_INLINE_FUNCTION bool operator()(int i, int stage, std::uint64_t& key) const {
    int const k = node_of(i);
    if (k < 0)
      return false;
    std::uint64_t const key1 = position(i, k);
    if ((key1 & selection(k, 1)) != selection(k, 0))
      return false;
    key = key1;
    if (stage == 1) {
      if (key1 != selection(k, 0)) // the coordinate is fully selected in stage 1
        return false;
      key = static_cast<std::uint64_t>(first_gid + i);
      if ((key & selection(k, 3)) != selection(k, 2))
        return false;
    }
    return true;
  }
};

struct BisectionNode {
  int rank_begin, rank_end; // ranks [begin, end) share this box
};

/// The seeds' count and bounding box of each node (a seed with node_of(i) < 0 is in none),
/// over all the processes.
struct NodeBounds {
  std::vector<std::int64_t> counts; ///< per node
  std::vector<double> lows, highs;  ///< per node: −min x, −min y; max x, max y

  double low(int k, int axis) const { return -lows[2 * k + axis]; }
  double high(int k, int axis) const { return highs[2 * k + axis]; }
  double width(int k, int axis) const { return highs[2 * k + axis] + lows[2 * k + axis]; }
};

/// Collective: the NodeBounds of the `nb_nodes` nodes. Each team of threads gathers the bounds
/// of its seeds' nodes in its scratch memory, then adds them to the nodes' with one atomic per
/// node and value: atomics straight from every seed onto the few nodes of the first levels
/// would serialise on a GPU. (Minima, maxima and counts: the same result in any order.)
template <class ExecutionSpace, class MemorySpace>
NodeBounds node_bounds(ExecutionSpace const& space, loom::Ranks const& ranks,
                       ConstPoints<MemorySpace> positions, Kokkos::View<int*, MemorySpace> node_of,
                       int nb_nodes) {
  using Policy = Kokkos::RangePolicy<ExecutionSpace>;
  using TeamPolicy = Kokkos::TeamPolicy<ExecutionSpace>;
  using Scratch = typename ExecutionSpace::scratch_memory_space;
  using ScratchBounds =
      Kokkos::View<double* [4], Kokkos::LayoutRight, Scratch, Kokkos::MemoryUnmanaged>;
  using ScratchCounts = Kokkos::View<std::int64_t*, Scratch, Kokkos::MemoryUnmanaged>;
  int const n = static_cast<int>(positions.extent(0));
  Kokkos::View<double**, Kokkos::LayoutRight, MemorySpace> bounds(
      Kokkos::view_alloc(space, Kokkos::WithoutInitializing, "sdot::boxes::bounds"), nb_nodes, 4);
  Kokkos::View<std::int64_t*, MemorySpace> counts(Kokkos::view_alloc(space, "sdot::boxes::counts"),
                                                  nb_nodes);
  double const inf = sdot::compat::infinity<double>();
  Kokkos::parallel_for(
      "sdot::boxes::init_bounds", Policy(space, 0, nb_nodes), KOKKOS_LAMBDA(int k) {
        bounds(k, 0) = inf;
        bounds(k, 1) = inf;
        bounds(k, 2) = -inf;
        bounds(k, 3) = -inf;
      });
  constexpr int seeds_per_team = 4096;
  int const teams = (n + seeds_per_team - 1) / seeds_per_team;
  std::size_t const bytes =
      ScratchBounds::shmem_size(nb_nodes) + ScratchCounts::shmem_size(nb_nodes);
  int const level = bytes <= 16384 ? 0 : 1; // beyond: scratch in the device's global memory
  Kokkos::parallel_for(
      "sdot::boxes::bounds",
      TeamPolicy(space, teams, Kokkos::AUTO).set_scratch_size(level, Kokkos::PerTeam(bytes)),
      KOKKOS_LAMBDA(typename TeamPolicy::member_type const& team) {
        ScratchBounds box(team.team_scratch(level), nb_nodes);
        ScratchCounts count(team.team_scratch(level), nb_nodes);
        Kokkos::parallel_for(Kokkos::TeamThreadRange(team, nb_nodes), [&](int k) {
          box(k, 0) = inf;
          box(k, 1) = inf;
          box(k, 2) = -inf;
          box(k, 3) = -inf;
          count(k) = 0;
        });
        team.team_barrier();
        int const begin = team.league_rank() * seeds_per_team;
        int const end = sdot::compat::min(n, begin + seeds_per_team);
        Kokkos::parallel_for(Kokkos::TeamThreadRange(team, begin, end), [&](int i) {
          int const k = node_of(i);
          if (k < 0)
            return;
          Kokkos::atomic_add(&count(k), std::int64_t(1));
          sdot::compat::atomic_min(&box(k, 0), positions(i, 0));
          sdot::compat::atomic_min(&box(k, 1), positions(i, 1));
          sdot::compat::atomic_max(&box(k, 2), positions(i, 0));
          sdot::compat::atomic_max(&box(k, 3), positions(i, 1));
        });
        team.team_barrier();
        Kokkos::parallel_for(Kokkos::TeamThreadRange(team, nb_nodes), [&](int k) {
          if (count(k) == 0)
            return;
          Kokkos::atomic_add(&counts(k), count(k));
          sdot::compat::atomic_min(&bounds(k, 0), box(k, 0));
          sdot::compat::atomic_min(&bounds(k, 1), box(k, 1));
          sdot::compat::atomic_max(&bounds(k, 2), box(k, 2));
          sdot::compat::atomic_max(&bounds(k, 3), box(k, 3));
        });
      });
  auto bounds_host = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), bounds);
  auto counts_host = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), counts);
  NodeBounds out;
  out.lows.resize(2 * nb_nodes);
  out.highs.resize(2 * nb_nodes);
  out.counts.resize(nb_nodes);
  for (int k = 0; k < nb_nodes; ++k) {
    out.lows[2 * k] = -bounds_host(k, 0); // max of -x = -min x
    out.lows[2 * k + 1] = -bounds_host(k, 1);
    out.highs[2 * k] = bounds_host(k, 2);
    out.highs[2 * k + 1] = bounds_host(k, 3);
    out.counts[k] = counts_host(k);
  }
  out.lows = ranks.process_maxima(out.lows);
  out.highs = ranks.process_maxima(out.highs);
  out.counts = ranks.process_sums(out.counts);
  return out;
}

/// Per node: the axis of its longer side, and how many of its seeds go to the left child
/// (ranks [begin, begin + parts / 2)): `target`, the 0-based rank of the first seed going right.
struct NodeSplits {
  std::vector<int> axis;
  std::vector<std::int64_t> target;
};

inline NodeSplits choose_splits(std::vector<BisectionNode> const& nodes, NodeBounds const& bounds) {
  int const nb_nodes = static_cast<int>(nodes.size());
  NodeSplits splits{std::vector<int>(nb_nodes), std::vector<std::int64_t>(nb_nodes)};
  for (int k = 0; k < nb_nodes; ++k) {
    splits.axis[k] = bounds.width(k, 0) >= bounds.width(k, 1) ? 0 : 1;
    std::int64_t const parts = nodes[k].rank_end - nodes[k].rank_begin;
    splits.target[k] = bounds.counts[k] * (parts / 2) / parts;
  }
  return splits;
}

/// The selection test of the nodes, its selection cleared: each node's axis, and its extent
/// along it as 2^32 positions.
template <class ExecutionSpace, class MemorySpace>
InSelection<MemorySpace> selection_of(ExecutionSpace const& space,
                                      Kokkos::View<int*, MemorySpace> node_of,
                                      ConstPoints<MemorySpace> positions, std::int64_t first_gid,
                                      NodeBounds const& bounds, NodeSplits const& splits) {
  int const nb_nodes = static_cast<int>(splits.axis.size());
  Kokkos::View<double**, Kokkos::LayoutRight, MemorySpace> extent(
      Kokkos::view_alloc(space, Kokkos::WithoutInitializing, "sdot::boxes::extent"), nb_nodes, 2);
  auto h = Kokkos::create_mirror_view(extent);
  for (int k = 0; k < nb_nodes; ++k) {
    int const axis = splits.axis[k];
    double const lo = bounds.low(k, axis), width = bounds.high(k, axis) - lo;
    h(k, 0) = lo;
    h(k, 1) = width > 0 ? 4294967296.0 / width : 0.0;
  }
  Kokkos::deep_copy(space, extent, h);
  Kokkos::View<int*, MemorySpace> axis(Kokkos::view_alloc(space, "sdot::boxes::axis"), nb_nodes);
  Kokkos::deep_copy(
      space, axis,
      Kokkos::View<int const*, Kokkos::HostSpace, Kokkos::MemoryTraits<Kokkos::Unmanaged>>(
          splits.axis.data(), nb_nodes));
  Kokkos::View<std::uint64_t**, Kokkos::LayoutRight, MemorySpace> selection(
      Kokkos::view_alloc(space, "sdot::boxes::selection"), nb_nodes,
      4); // prefix1 mask1 prefix2 mask2
  return {node_of, positions, axis, extent, selection, first_gid};
}

/// Collective: the median of each node by radix selection, one byte per pass, first on the
/// coordinate, then on the global index among seeds with the selected coordinate; written into
/// `in.selection`. `target`: see NodeSplits; `gid_bytes`: bytes of the largest global index.
template <class ExecutionSpace, class MemorySpace>
void select_medians(ExecutionSpace const& space, loom::Ranks const& ranks,
                    InSelection<MemorySpace> const& in, std::vector<std::int64_t> target,
                    int gid_bytes) {
  using Policy = Kokkos::RangePolicy<ExecutionSpace>;
  int const n = static_cast<int>(in.positions.extent(0));
  int const nb_nodes = static_cast<int>(target.size());
  auto const node_of = in.node_of;
  std::vector<std::uint64_t> prefix(2 * nb_nodes, 0), mask(2 * nb_nodes, 0);
  Kokkos::View<std::int64_t**, Kokkos::LayoutRight, MemorySpace> histogram(
      Kokkos::view_alloc(space, "sdot::boxes::histogram"), nb_nodes, 256);
  auto upload_selection = [&]() {
    auto h = Kokkos::create_mirror_view(in.selection);
    for (int k = 0; k < nb_nodes; ++k) {
      h(k, 0) = prefix[2 * k];
      h(k, 1) = mask[2 * k];
      h(k, 2) = prefix[2 * k + 1];
      h(k, 3) = mask[2 * k + 1];
    }
    Kokkos::deep_copy(space, in.selection, h);
  };
  // The seeds still in the selection of their node: each pass sweeps only them, and they
  // shrink by about 256 per byte once the bytes that the whole node shares are passed.
  Kokkos::View<int*, MemorySpace> candidates[2] = {
      Kokkos::View<int*, MemorySpace>(
          Kokkos::view_alloc(space, Kokkos::WithoutInitializing, "sdot::boxes::candidates"), n),
      Kokkos::View<int*, MemorySpace>(
          Kokkos::view_alloc(space, Kokkos::WithoutInitializing, "sdot::boxes::candidates_next"),
          n)};
  int current = 0;
  int nb_candidates = n;
  // Keeps the candidates (every seed when `from_all`) that are in the selection of `stage`.
  auto keep_candidates = [&](int stage, bool from_all) {
    auto const from = candidates[current];
    auto const to = candidates[1 - current];
    int kept = 0;
    Kokkos::parallel_scan(
        "sdot::boxes::candidates", Policy(space, 0, nb_candidates),
        KOKKOS_LAMBDA(int c, int& at, bool final) {
          int const i = from_all ? c : from(c);
          std::uint64_t key;
          if (in(i, stage, key)) {
            if (final)
              to(at) = i;
            ++at;
          }
        },
        kept);
    current = 1 - current;
    nb_candidates = kept;
  };
  upload_selection();
  bool all_seeds = true; // the first pass sweeps every seed, the next ones the candidates
  for (int stage = 0; stage < 2; ++stage) {
    // After the coordinate, the global index only matters where seeds of equal coordinate
    // must be split (target > 0 among them): lattices, duplicates.
    if (stage == 1 &&
        std::all_of(target.begin(), target.end(), [](std::int64_t t) { return t == 0; }))
      break;
    int const bytes = stage == 0 ? 4 : gid_bytes;
    for (int b = bytes - 1; b >= 0; --b) {
      int const shift = 8 * b;
      Kokkos::deep_copy(space, histogram, 0);
      auto const list = candidates[current];
      bool const from_all = all_seeds;
      Kokkos::parallel_for(
          "sdot::boxes::digit_histogram", Policy(space, 0, nb_candidates), KOKKOS_LAMBDA(int c) {
            int const i = from_all ? c : list(c);
            std::uint64_t key = 0;
            if (in(i, stage, key))
              Kokkos::atomic_add(&histogram(node_of(i), (key >> shift) & 255), std::int64_t(1));
          });
      auto h = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), histogram);
      std::vector<std::int64_t> sums(std::size_t(nb_nodes) * 256);
      for (int k = 0; k < nb_nodes; ++k)
        for (int d = 0; d < 256; ++d)
          sums[k * 256 + d] = h(k, d);
      sums = ranks.process_sums(sums);
      for (int k = 0; k < nb_nodes; ++k) {
        std::int64_t in_node = 0;
        for (int d = 0; d < 256; ++d)
          in_node += sums[k * 256 + d];
        if (in_node == 0)
          continue; // empty node, or nothing left to select
        int d = 0;
        while (d < 255 && target[k] >= sums[k * 256 + d]) {
          target[k] -= sums[k * 256 + d];
          ++d;
        }
        prefix[2 * k + stage] |= std::uint64_t(d) << shift;
        mask[2 * k + stage] |= std::uint64_t(255) << shift;
      }
      upload_selection();
      // The next pass sweeps only the seeds still selected (after the last byte of the
      // coordinate: those of the selected coordinate, for the global index).
      keep_candidates(b > 0 ? stage : 1, all_seeds);
      all_seeds = false;
    }
  }
}

/// Splits each node at its selected median: the seeds at or before it go to the left child
/// (ranks [begin, begin + parts/2)), the others to the right one; a seed whose child holds
/// one rank gets that rank in `box`. Returns the children of more than one rank, numbered as
/// the seeds' node_of now says.
template <class ExecutionSpace, class MemorySpace>
std::vector<BisectionNode>
split_nodes(ExecutionSpace const& space, std::vector<BisectionNode> const& nodes,
            InSelection<MemorySpace> const& in, Kokkos::View<int*, MemorySpace> box) {
  using Policy = Kokkos::RangePolicy<ExecutionSpace>;
  int const n = static_cast<int>(in.positions.extent(0));
  int const nb_nodes = static_cast<int>(nodes.size());
  std::vector<BisectionNode> next;
  Kokkos::View<int**, Kokkos::LayoutRight, MemorySpace> children(
      Kokkos::view_alloc(space, "sdot::boxes::children"), nb_nodes, 4);
  auto h = Kokkos::create_mirror_view(children);
  for (int k = 0; k < nb_nodes; ++k) {
    int const begin = nodes[k].rank_begin, end = nodes[k].rank_end, mid = begin + (end - begin) / 2;
    BisectionNode const halves[2] = {{begin, mid}, {mid, end}};
    for (int c = 0; c < 2; ++c) {
      h(k, c) = -1; // node index of the child, or −1 when it holds one rank
      h(k, 2 + c) = halves[c].rank_begin;
      if (halves[c].rank_end - halves[c].rank_begin > 1) {
        h(k, c) = static_cast<int>(next.size());
        next.push_back(halves[c]);
      }
    }
  }
  Kokkos::deep_copy(space, children, h);
  auto const node_of = in.node_of;
  auto const selection = in.selection;
  std::int64_t const first_gid = in.first_gid;
  Kokkos::parallel_for(
      "sdot::boxes::assign", Policy(space, 0, n), KOKKOS_LAMBDA(int i) {
        int const k = node_of(i);
        if (k < 0)
          return;
        std::uint64_t const key1 = in.position(i, k);
        std::uint64_t const gid = static_cast<std::uint64_t>(first_gid + i);
        std::uint64_t const median = selection(k, 0);
        // Without branches: which side is as random as the seeds' order.
        int const c = 1 - ((key1 < median) | ((key1 == median) & (gid < selection(k, 2))));
        int const child = children(k, c);
        node_of(i) = child;
        if (child < 0)
          box(i) = children(k, 2 + c);
      });
  return next;
}

/// The global rank of the box of each of this process's seeds (gid(i) = first_gid + i).
/// Collective: every process bisects all the nodes of a level together.
template <class ExecutionSpace, class MemorySpace>
Kokkos::View<int*, MemorySpace>
bisect_into_boxes(ExecutionSpace const& space, loom::Ranks const& ranks,
                  ConstPoints<MemorySpace> positions, std::int64_t first_gid, std::int64_t total) {
  sdot::compat::ScopedRegion region("sdot::bisect_into_boxes");
  int const n = static_cast<int>(positions.extent(0));
  Kokkos::View<int*, MemorySpace> box(Kokkos::view_alloc(space, "sdot::boxes::rank"), n);
  Kokkos::View<int*, MemorySpace> node_of(Kokkos::view_alloc(space, "sdot::boxes::node"), n);
  if (ranks.size() == 1)
    return box; // one rank: every seed in box 0
  int gid_bytes = 1;
  while (gid_bytes < 8 && (total >> (8 * gid_bytes)) > 0)
    ++gid_bytes;
  std::vector<BisectionNode> nodes{{0, ranks.size()}};
  while (!nodes.empty()) {
    int const nb_nodes = static_cast<int>(nodes.size());
    NodeBounds const bounds = node_bounds(space, ranks, positions, node_of, nb_nodes);
    NodeSplits const splits = choose_splits(nodes, bounds);
    auto const in = selection_of(space, node_of, positions, first_gid, bounds, splits);
    select_medians(space, ranks, in, splits.target, gid_bytes);
    nodes = split_nodes(space, nodes, in, box);
  }
  space.fence();
  return box;
}

} // namespace sdot::detail
