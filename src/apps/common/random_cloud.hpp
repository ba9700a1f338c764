#pragma once
// The random clouds of the command-line programs (--random N --seed S): counter-based, so
// that each process draws its own block of seeds, and the cloud is the same whatever the
// number of processes and the execution space.

#include <sdot/base/kokkos_compat.hpp>

#include <Kokkos_Core.hpp>

#include <array>
#include <cstdint>

namespace sdot::apps {

/// SplitMix64's output function: a bijective mix of the 64 bits.
KOKKOS_INLINE_FUNCTION std::uint64_t mix64(std::uint64_t z) {
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
  return z ^ (z >> 31);
}

/// Number `counter` of the SplitMix64 stream of `seed`, as a double uniform in [0, 1).
KOKKOS_INLINE_FUNCTION double uniform01(std::uint64_t seed, std::uint64_t counter) {
  std::uint64_t const h = mix64(mix64(seed) + (counter + 1) * 0x9e3779b97f4a7c15ULL);
  return static_cast<double>(h >> 11) * (1.0 / 9007199254740992.0); // 53 bits / 2^53
}

/// Seed g of the cloud (global index): position uniform in the box, weight uniform in
/// [0, 1/N), from the numbers 3g, 3g+1 and 3g+2 of the stream.
template <class Positions, class Weights>
struct UniformCloudBlock {
  Positions positions;
  Weights weights;
  std::int64_t first; // global index of row 0
  std::int64_t total; // N
  std::uint64_t seed;
  double lo0, lo1, width0, width1;

  KOKKOS_FUNCTION void operator()(std::int64_t i) const {
    std::uint64_t const g = static_cast<std::uint64_t>(first + i);
    positions(i, 0) = lo0 + width0 * uniform01(seed, 3 * g);
    positions(i, 1) = lo1 + width1 * uniform01(seed, 3 * g + 1);
    weights(i) = uniform01(seed, 3 * g + 2) / static_cast<double>(total);
  }
};

/// Fills `positions` [n, 2] and `weights` [n] with the seeds first .. first+n-1 of the
/// uniform cloud of `total` seeds drawn with `seed` in the box [lo, hi].
template <class ExecutionSpace, class Positions, class Weights>
void fill_uniform_cloud(ExecutionSpace const& space, Positions const& positions,
                        Weights const& weights, std::int64_t first, std::int64_t total,
                        std::uint64_t seed, std::array<double, 2> lo, std::array<double, 2> hi) {
  static_assert(
      Kokkos::SpaceAccessibility<ExecutionSpace, typename Positions::memory_space>::accessible &&
          Kokkos::SpaceAccessibility<ExecutionSpace, typename Weights::memory_space>::accessible,
      "sdot::apps::fill_uniform_cloud: Views the execution space can access");
  sdot::compat::ScopedRegion region("sdot::apps::fill_uniform_cloud");
  std::int64_t const n = static_cast<std::int64_t>(positions.extent(0));
  Kokkos::parallel_for(
      "sdot::apps::fill_uniform_cloud",
      Kokkos::RangePolicy<ExecutionSpace, Kokkos::IndexType<std::int64_t>>(space, 0, n),
      UniformCloudBlock<Positions, Weights>{positions, weights, first, total, seed, lo[0], lo[1],
                                            hi[0] - lo[0], hi[1] - lo[1]});
}

} // namespace sdot::apps
