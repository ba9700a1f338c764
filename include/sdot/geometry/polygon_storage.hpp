#pragma once
// Where a kernel's cell polygons live: kernel-local arrays of a compile-time capacity, or
// rows of a workspace in the execution space's memory (for cells that need more). A "cell
// step" functor provides `void operator()(Polygon& cell, int k) const`; these wrappers give it
// a polygon of the right storage for work item k.

#include <sdot/base/scan.hpp>
#include <sdot/geometry/polygon.hpp>
#include <sdot/points.hpp>

#include <stdexcept>
#include <string>

namespace sdot::detail {

/// Two buffers of Capacity vertices in kernel-local memory.
template <class Step, int Capacity>
struct WithInlinePolygon {
  Step step;
  KOKKOS_FUNCTION void operator()(int k) const {
    double x[2][Capacity], y[2][Capacity];
    int l[2][Capacity];
    Polygon cell{{{x[0], y[0], l[0]}, {x[1], y[1], l[1]}}, 0, 0, Capacity, 0};
    step(cell, k);
  }
};

/// Two buffers of `capacity` vertices in row k of the workspace (LayoutRight: a row is one
/// item's contiguous storage).
template <class Step, class MemorySpace>
struct WithWorkspacePolygon {
  Step step;
  Kokkos::View<double**, Kokkos::LayoutRight, MemorySpace> x, y;
  Kokkos::View<int**, Kokkos::LayoutRight, MemorySpace> labels;
  int capacity;
  KOKKOS_FUNCTION void operator()(int k) const {
    Polygon cell{{{&x(k, 0), &y(k, 0), &labels(k, 0)},
                  {&x(k, capacity), &y(k, capacity), &labels(k, capacity)}},
                 0,
                 0,
                 capacity,
                 0};
    step(cell, k);
  }
};

/// Runs `step` over items [0, count) with polygons of at least `capacity` vertices: in
/// kernel-local arrays for 16, 32 or 64, else in a workspace allocated here.
template <class ExecutionSpace, class Step>
void for_each_cell(ExecutionSpace const& space, std::string const& label, Step const& step,
                   int count, int capacity) {
  using MemorySpace = typename ExecutionSpace::memory_space;
  using Policy = Kokkos::RangePolicy<ExecutionSpace>;
  if (capacity <= 16)
    Kokkos::parallel_for(label, Policy(space, 0, count), WithInlinePolygon<Step, 16>{step});
  else if (capacity <= 32)
    Kokkos::parallel_for(label, Policy(space, 0, count), WithInlinePolygon<Step, 32>{step});
  else if (capacity <= 64)
    Kokkos::parallel_for(label, Policy(space, 0, count), WithInlinePolygon<Step, 64>{step});
  else {
    using Rows = Kokkos::View<double**, Kokkos::LayoutRight, MemorySpace>;
    WithWorkspacePolygon<Step, MemorySpace> kernel{
        step,
        Rows(Kokkos::view_alloc(space, Kokkos::WithoutInitializing, label + "::work_x"), count,
             2 * capacity),
        Rows(Kokkos::view_alloc(space, Kokkos::WithoutInitializing, label + "::work_y"), count,
             2 * capacity),
        Kokkos::View<int**, Kokkos::LayoutRight, MemorySpace>(
            Kokkos::view_alloc(space, Kokkos::WithoutInitializing, label + "::work_labels"), count,
            2 * capacity),
        capacity};
    Kokkos::parallel_for(label, Policy(space, 0, count), kernel);
  }
}

/// A cell step over a list of its items: work item k runs the step's item items(k).
template <class Step, class MemorySpace>
struct OnListedItems {
  Step step;
  Kokkos::View<int const*, MemorySpace> items;
  KOKKOS_FUNCTION void operator()(Polygon& cell, int k) const { step(cell, items(k)); }
};

/// What cut_again_until_fit() did.
struct PassesAgain {
  int overflowed_cells = 0; ///< cells that did not fit the pass before it
  int passes = 0;           ///< passes it ran
  int final_capacity = 0;   ///< polygon capacity of the last of them (0: none)
};

/// The one way a cell kernel meets a polygon too small for a cell. After a pass of `step` over
/// items [0, count), runs it again over the items whose cell did not fit (`overflowed(item)`
/// ≠ 0: the step sets or clears it for every item it runs), with polygons of `capacity`
/// vertices, then twice as many, until every cell fits. Only those items run again, and the
/// step's outputs stay indexed by item: a size found too small costs only the cells that
/// needed more.
template <class ExecutionSpace, class Step>
PassesAgain
cut_again_until_fit(ExecutionSpace const& space, std::string const& label, Step const& step,
                    Kokkos::View<int*, typename ExecutionSpace::memory_space> overflowed, int count,
                    int capacity) {
  using MemorySpace = typename ExecutionSpace::memory_space;
  PassesAgain report;
  Kokkos::View<int const*, MemorySpace> items; // empty: the items [0, count)
  while (true) {
    auto const again = items_where(
        space, label + "::overflowed", count,
        KOKKOS_LAMBDA(int k) { return overflowed(items.extent(0) ? items(k) : k) != 0; }, -1,
        items);
    int const flagged = static_cast<int>(again.extent(0));
    if (report.passes == 0)
      report.overflowed_cells = flagged;
    if (flagged == 0)
      return report;
    if (capacity > (1 << 24))
      throw std::runtime_error("sdot: a cell needs more than 2^24 vertices");
    items = again;
    count = flagged;
    for_each_cell(space, label + "::again", OnListedItems<Step, MemorySpace>{step, items}, count,
                  capacity);
    report.final_capacity = capacity;
    ++report.passes;
    capacity *= 2;
  }
}

/// for_each_cell() then cut_again_until_fit() with twice the capacity.
template <class ExecutionSpace, class Step>
PassesAgain
for_each_cell_until_fit(ExecutionSpace const& space, std::string const& label, Step const& step,
                        Kokkos::View<int*, typename ExecutionSpace::memory_space> overflowed,
                        int count, int capacity) {
  for_each_cell(space, label, step, count, capacity);
  return cut_again_until_fit(space, label, step, overflowed, count, 2 * capacity);
}

/// Rows for polygons of `counts` vertices each (labels "sdot::polygons::…"): cell i has the
/// rows [offsets(i), offsets(i + 1)). Returns the number of rows.
template <class ExecutionSpace, class Counts>
int allocate_polygon_rows(ExecutionSpace const& space, Counts const& counts,
                          Kokkos::View<int*, typename ExecutionSpace::memory_space>& offsets,
                          Points<typename ExecutionSpace::memory_space>& vertices,
                          Kokkos::View<int*, typename ExecutionSpace::memory_space>& labels) {
  using MemorySpace = typename ExecutionSpace::memory_space;
  int const n = static_cast<int>(counts.extent(0));
  offsets = Kokkos::View<int*, MemorySpace>(
      Kokkos::view_alloc(space, Kokkos::WithoutInitializing, "sdot::polygons::offsets"), n + 1);
  int const total = exclusive_scan(space, "sdot::polygons::offsets", counts, offsets);
  vertices = Points<MemorySpace>(
      Kokkos::view_alloc(space, Kokkos::WithoutInitializing, "sdot::polygons::vertices"), total);
  labels = Kokkos::View<int*, MemorySpace>(
      Kokkos::view_alloc(space, Kokkos::WithoutInitializing, "sdot::polygons::edge_sources"),
      total);
  return total;
}

} // namespace sdot::detail
