#pragma once
// Where a kernel's cell polygons live: kernel-local arrays of a compile-time capacity, or
// rows of a workspace in the execution space's memory (for cells that need more). A "cell
// step" functor provides `void operator()(Polygon& cell, int k) const`; these wrappers give it
// a polygon of the right storage for work item k.

#include <sdot/base/scan.hpp>
#include <sdot/geometry/polygon.hpp>
#include <sdot/points.hpp>

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
