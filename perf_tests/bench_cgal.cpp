// The same clouds through CGAL's Regular_triangulation_2 plus clipping (cgal_areas.hpp), for
// the ratio sdot / CGAL out of one run. The setup checks that CGAL's areas agree with sdot's on
// a small cloud and stops the benchmark with an error if they do not.
#include "cgal_areas.hpp"
#include "cloud_benchmarks.hpp"
#include "memory_probe.hpp"

#include <benchmark/benchmark.h>

#include <Kokkos_Timer.hpp>

#include <cmath>
#include <string>
#include <vector>

namespace {

std::vector<double> sdot_areas(sdot_test::Cloud const& cloud) {
  sdot::PowerDiagram<> diagram(sdot_test::positions_view(cloud), sdot_test::weights_view(cloud),
                               sdot_bench::unit_square());
  return sdot_test::to_vector(diagram.measures());
}

void cgal_regular_triangulation(benchmark::State& state, std::string const& kind) {
  int const n = static_cast<int>(state.range(0));
  {
    // The two must compute the same thing: checked on a small cloud of the same kind.
    sdot_test::Cloud small;
    if (!sdot_bench::make_cloud_or_skip(state, kind, 3000, small))
      return;
    auto const a = sdot_bench::cgal_areas(small.x, small.w), b = sdot_areas(small);
    for (std::size_t i = 0; i < a.size(); ++i)
      if (!(std::fabs(a[i] - b[i]) <= 1e-9)) {
        state.SkipWithError(("CGAL and sdot disagree on cell " + std::to_string(i) + ": " +
                             std::to_string(a[i]) + " vs " + std::to_string(b[i]))
                                .c_str());
        return;
      }
  }
  sdot_test::Cloud cloud;
  if (!sdot_bench::make_cloud_or_skip(state, kind, n, cloud))
    return;
  {
    sdot_bench::MemoryProbe probe;
    benchmark::DoNotOptimize(sdot_bench::cgal_areas(cloud.x, cloud.w).data());
    state.counters["resident_bytes_per_seed"] = probe.resident_bytes() / n;
  }
  double seconds = 0;
  for (auto _ : state) {
    Kokkos::Timer timer;
    auto const areas = sdot_bench::cgal_areas(cloud.x, cloud.w);
    benchmark::DoNotOptimize(areas.data());
    seconds += timer.seconds();
  }
  state.counters["ns_per_cell"] = 1e9 * seconds / (double(n) * state.iterations());
}

[[maybe_unused]] int const registered =
    sdot_bench::register_cloud_benchmarks("cgal", cgal_regular_triangulation);
[[maybe_unused]] int const registered_spread =
    sdot_bench::register_spread_benchmarks("cgal", cgal_regular_triangulation);

} // namespace
