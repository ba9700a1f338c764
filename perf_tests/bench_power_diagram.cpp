// sdot's power diagram on one process: N = 1e4, 1e5, 1e6 uniform seeds (weights U[0, 1/N])
// and a clustered cloud, in the unit square, and the same positions at optimal-transport
// weights ("@transport", see bench_clouds.hpp), also scaled by 0.1, 0.3 and 3
// ("@transport*s", N = 1e4 and 1e5). Counters: ns_per_cell (the whole diagram:
// index and cells), cells_ns_per_cell (the cell kernel alone), the diagram's statistics, and
// the peak memory per seed (see memory_probe.hpp). At transport weights, the diagram of the
// same positions at zero weights is timed in the same loop, alternately:
// zero_weights_ns_per_cell and ratio_to_zero_weights. sdot_recomputed/...: the diagram
// recomputed from the neighbours of the one before (warm_start), as the transport solver does;
// sdot_moved/...: the same after the seeds moved a little (set_positions()). sdot_search/...
// and sdot_coarse/...: sdot/... with PowerDiagramOptions::coarse_to_fine never and always
// (sdot/... chooses by itself), for A/B runs in one process.
#include "cloud_benchmarks.hpp"
#include "memory_probe.hpp"

#include <benchmark/benchmark.h>

#include <Kokkos_Timer.hpp>

#include <cmath>
#include <string>

namespace {

using Space = Kokkos::DefaultExecutionSpace;

/// Statistics of a diagram that the timed loop does not compute: vertices per cell, empty
/// cells, and how far the sum of the areas is from the domain's.
void diagram_counters(benchmark::State& state, sdot::PowerDiagram<Space>& diagram) {
  int const n = diagram.size();
  auto const polygons = diagram.cell_polygons();
  auto const offsets = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), polygons.offsets);
  auto const measures =
      Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), diagram.measures());
  double sum = 0;
  int empty = 0;
  for (int i = 0; i < n; ++i) {
    sum += measures(i);
    empty += offsets(i + 1) == offsets(i);
  }
  state.counters["vertices_per_cell"] = double(offsets(n)) / (n - empty);
  state.counters["empty_cells"] = empty;
  state.counters["area_error"] = sum - 1;
  state.counters["overflowed_cells"] = diagram.statistics().overflowed_cells;
}

void sdot_power_diagram_with(benchmark::State& state, std::string const& kind,
                             sdot::PowerDiagramOptions const& options) {
  int const n = static_cast<int>(state.range(0));
  sdot_test::Cloud cloud;
  if (!sdot_bench::make_cloud_or_skip(state, kind, n, cloud))
    return;
  auto const positions = sdot_test::positions_view<Space::memory_space>(cloud);
  auto const weights = sdot_test::weights_view<Space::memory_space>(cloud);
  auto const domain = sdot_bench::unit_square();
  {
    sdot::PowerDiagram<Space> diagram(positions, weights, domain, options);
    diagram_counters(state, diagram);
    state.counters["coarse_levels"] = diagram.statistics().coarse_levels;
  }
  double kokkos_bytes = 0, resident_bytes = 0;
  {
    sdot_bench::MemoryProbe probe;
    sdot::PowerDiagram<Space> diagram(positions, weights, domain, options);
    diagram.measures();
    Space().fence();
    kokkos_bytes = probe.kokkos_bytes();
    resident_bytes = probe.resident_bytes();
  }
  bool const at_transport = kind.find('@') != std::string::npos;
  Kokkos::View<double*, Space::memory_space> zero("bench::zero_weights", at_transport ? n : 0);
  double seconds = 0, cell_seconds = 0, zero_seconds = 0;
  for (auto _ : state) {
    Kokkos::Timer timer;
    sdot::PowerDiagram<Space> diagram(positions, weights, domain, options);
    benchmark::DoNotOptimize(diagram.measures().data());
    Space().fence();
    seconds += timer.seconds();
    cell_seconds += diagram.statistics().seconds.at("cells");
    if (at_transport) {
      Kokkos::Timer zero_timer;
      sdot::PowerDiagram<Space> zero_diagram(positions, zero, domain, options);
      benchmark::DoNotOptimize(zero_diagram.measures().data());
      Space().fence();
      zero_seconds += zero_timer.seconds();
    }
  }
  double const cells = double(n) * state.iterations();
  state.counters["ns_per_cell"] = 1e9 * seconds / cells;
  state.counters["cells_ns_per_cell"] = 1e9 * cell_seconds / cells;
  if (at_transport) {
    state.counters["zero_weights_ns_per_cell"] = 1e9 * zero_seconds / cells;
    state.counters["ratio_to_zero_weights"] = seconds / zero_seconds;
  }
  state.counters["kokkos_bytes_per_seed"] = kokkos_bytes / n;
  state.counters["resident_bytes_per_seed"] = resident_bytes / n;
}

void sdot_power_diagram(benchmark::State& state, std::string const& kind) {
  sdot_power_diagram_with(state, kind, {});
}

/// sdot_power_diagram() with coarse_to_fine set to `mode`.
template <sdot::CoarseToFine mode>
void sdot_power_diagram_coarse_to_fine(benchmark::State& state, std::string const& kind) {
  sdot::PowerDiagramOptions options;
  options.coarse_to_fine = mode;
  sdot_power_diagram_with(state, kind, options);
}

/// Alternately changes `diagram` (change(k), k = 1, 0, 1, …) and times its measures, and those
/// of a new diagram of the same seeds (new_diagram(k)), in the same loop. Counters:
/// ns_per_cell, new_diagram_ns_per_cell, ratio_to_new_diagram, warm_fraction (the cells
/// certified from their earlier neighbours).
template <class Change, class NewDiagram>
void time_against_new_diagrams(benchmark::State& state, int n, sdot::PowerDiagram<Space>& diagram,
                               Change const& change, NewDiagram const& new_diagram) {
  double seconds = 0, new_seconds = 0, warm = 0;
  int k = 0;
  for (auto _ : state) {
    k = 1 - k;
    Kokkos::Timer timer;
    change(k);
    benchmark::DoNotOptimize(diagram.measures().data());
    Space().fence();
    seconds += timer.seconds();
    warm += diagram.statistics().warm_cells;
    Kokkos::Timer new_timer;
    auto fresh = new_diagram(k);
    benchmark::DoNotOptimize(fresh.measures().data());
    Space().fence();
    new_seconds += new_timer.seconds();
  }
  double const cells = double(n) * state.iterations();
  state.counters["ns_per_cell"] = 1e9 * seconds / cells;
  state.counters["new_diagram_ns_per_cell"] = 1e9 * new_seconds / cells;
  state.counters["ratio_to_new_diagram"] = seconds / new_seconds;
  state.counters["warm_fraction"] = warm / cells;
}

/// A recomputation as the transport solver makes them (PowerDiagramOptions::warm_start): the
/// diagram of the cloud's weights, then, alternately, of weights moved by a smooth tenth of
/// the squared seed spacing (w_i + 0.1/N sin(7 x_i + 3 y_i)) and back, each from the
/// neighbours of the one before. A new diagram of the same weights is timed in the same loop:
/// new_diagram_ns_per_cell and ratio_to_new_diagram. warm_fraction: the cells certified from
/// their earlier neighbours.
void sdot_recomputed_diagram(benchmark::State& state, std::string const& kind) {
  int const n = static_cast<int>(state.range(0));
  sdot_test::Cloud cloud;
  if (!sdot_bench::make_cloud_or_skip(state, kind, n, cloud))
    return;
  auto const positions = sdot_test::positions_view<Space::memory_space>(cloud);
  auto moved = cloud;
  for (int i = 0; i < n; ++i)
    moved.w[i] += 0.1 / n * std::sin(7 * cloud.x[i][0] + 3 * cloud.x[i][1]);
  Kokkos::View<double*, Space::memory_space> weights[2] = {
      sdot_test::weights_view<Space::memory_space>(cloud),
      sdot_test::weights_view<Space::memory_space>(moved)};
  auto const domain = sdot_bench::unit_square();
  sdot::PowerDiagramOptions options;
  options.warm_start = true;
  sdot::PowerDiagram<Space> diagram(positions, weights[0], domain, options);
  diagram.measures();
  time_against_new_diagrams(
      state, n, diagram, [&](int k) { diagram.set_weights(weights[k]); },
      [&](int k) { return sdot::PowerDiagram<Space>(positions, weights[k], domain); });
}

/// sdot_moved/<cloud>/N: the diagram of the cloud at its weights, then, alternately, of its
/// seeds moved by up to 0.05 seed spacings along a smooth field (moved_along_field) and back (a
/// time step of a Lagrangian scheme), through set_positions() with warm_start: each from the
/// neighbours of the one before. A new diagram of the same positions is timed in the same loop:
/// new_diagram_ns_per_cell and ratio_to_new_diagram. warm_fraction: the cells certified from
/// their earlier neighbours.
void sdot_moved_diagram(benchmark::State& state, std::string const& kind) {
  int const n = static_cast<int>(state.range(0));
  sdot_test::Cloud cloud;
  if (!sdot_bench::make_cloud_or_skip(state, kind, n, cloud))
    return;
  auto const moved = sdot_test::moved_along_field(cloud, 0.05 / std::sqrt(double(n)), 1);
  sdot::Points<Space::memory_space> positions[2] = {
      sdot_test::positions_view<Space::memory_space>(cloud),
      sdot_test::positions_view<Space::memory_space>(moved)};
  auto const weights = sdot_test::weights_view<Space::memory_space>(cloud);
  auto const domain = sdot_bench::unit_square();
  sdot::PowerDiagramOptions options;
  options.warm_start = true;
  sdot::PowerDiagram<Space> diagram(positions[0], weights, domain, options);
  diagram.measures();
  time_against_new_diagrams(
      state, n, diagram, [&](int k) { diagram.set_positions(positions[k], weights); },
      [&](int k) { return sdot::PowerDiagram<Space>(positions[k], weights, domain); });
}

[[maybe_unused]] int const registered =
    sdot_bench::register_cloud_benchmarks("sdot", sdot_power_diagram);
[[maybe_unused]] int const registered_spread =
    sdot_bench::register_spread_benchmarks("sdot", sdot_power_diagram);
[[maybe_unused]] int const registered_search = sdot_bench::register_cloud_benchmarks(
    "sdot_search", sdot_power_diagram_coarse_to_fine<sdot::CoarseToFine::never>);
[[maybe_unused]] int const registered_spread_search = sdot_bench::register_spread_benchmarks(
    "sdot_search", sdot_power_diagram_coarse_to_fine<sdot::CoarseToFine::never>);
[[maybe_unused]] int const registered_coarse = sdot_bench::register_cloud_benchmarks(
    "sdot_coarse", sdot_power_diagram_coarse_to_fine<sdot::CoarseToFine::always>);
[[maybe_unused]] int const registered_spread_coarse = sdot_bench::register_spread_benchmarks(
    "sdot_coarse", sdot_power_diagram_coarse_to_fine<sdot::CoarseToFine::always>);
[[maybe_unused]] int const registered_moved =
    sdot_bench::register_cloud_benchmarks("sdot_moved", sdot_moved_diagram);
[[maybe_unused]] int const registered_recomputed =
    sdot_bench::register_cloud_benchmarks("sdot_recomputed", sdot_recomputed_diagram);

} // namespace
