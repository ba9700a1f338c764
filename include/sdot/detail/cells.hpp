#pragma once
// Runs the cell kernel over all seeds of a tree: a first pass with kernel-local polygon
// storage of a fixed capacity, then, for the cells that overflowed it, passes with a
// workspace of twice the capacity, until every cell fits. Never truncates a cell.

#include <sdot/detail/cell_kernel.hpp>

#include <stdexcept>
#include <string>

namespace sdot::detail {

template <class MemorySpace>
struct CellOutputs {
  Kokkos::View<double*, MemorySpace> measures;      ///< by input index
  Kokkos::View<double* [2], MemorySpace> centroids; ///< by input index
  Kokkos::View<int*, MemorySpace> vertex_counts;    ///< by input index
  // Optional polygon output (when offsets is allocated), by input index.
  Kokkos::View<int const*, MemorySpace> polygon_offsets;
  Kokkos::View<double* [2], MemorySpace> polygon_vertices;
  Kokkos::View<int*, MemorySpace> polygon_labels;
};

/// One cell per item. InlineCapacity > 0: vertices in kernel-local arrays of that size;
/// InlineCapacity == 0: in rows of the workspace views, of `capacity` vertices per buffer.
template <class MemorySpace, int InlineCapacity>
struct CellsFunctor {
  SeedTree<MemorySpace> tree;
  Kokkos::View<double const* [2], MemorySpace> domain_vertices;
  Kokkos::View<int const*, MemorySpace> domain_labels;
  Kokkos::View<int const*, MemorySpace> items; ///< tree slots to build (empty: item = slot)
  // LayoutRight: a row is one cell's contiguous storage.
  Kokkos::View<double**, Kokkos::LayoutRight, MemorySpace> work_x, work_y;
  Kokkos::View<int**, Kokkos::LayoutRight, MemorySpace> work_labels;
  int capacity;
  CellOutputs<MemorySpace> out;
  Kokkos::View<int*, MemorySpace> overflowed; ///< by item: 1 if the cell did not fit

  KOKKOS_FUNCTION void operator()(int item) const {
    int const slot = items.extent(0) ? items(item) : item;
    Seed const s = tree.seeds(slot);
    int const index = tree.index(slot);
    CellSeed const seed{s.x, s.y, s.w, index, slot};
    if constexpr (InlineCapacity > 0) {
      double x[2][InlineCapacity], y[2][InlineCapacity];
      int l[2][InlineCapacity];
      Polygon cell{{{x[0], y[0], l[0]}, {x[1], y[1], l[1]}}, 0, 0, InlineCapacity, 0};
      build(cell, seed, item);
    } else {
      Polygon cell{{{&work_x(item, 0), &work_y(item, 0), &work_labels(item, 0)},
                    {&work_x(item, capacity), &work_y(item, capacity), &work_labels(item, capacity)}},
                   0,
                   0,
                   capacity,
                   0};
      build(cell, seed, item);
    }
  }

  KOKKOS_FUNCTION void build(Polygon& cell, CellSeed const& seed, int item) const {
    start_from_domain(cell, seed.x, seed.y, domain_vertices, domain_labels);
    ClipResult r = clip_by_tree(cell, seed, tree);
    overflowed(item) = r == ClipResult::overflow;
    if (r == ClipResult::overflow)
      return;
    double area, mx, my;
    cell.integrals(area, mx, my);
    out.measures(seed.index) = area;
    out.centroids(seed.index, 0) = area > 0 ? seed.x + mx / area : seed.x;
    out.centroids(seed.index, 1) = area > 0 ? seed.y + my / area : seed.y;
    out.vertex_counts(seed.index) = cell.size;
    if (out.polygon_offsets.extent(0)) {
      int const begin = out.polygon_offsets(seed.index);
      for (int k = 0; k < cell.size; ++k) {
        out.polygon_vertices(begin + k, 0) = seed.x + cell.x(k);
        out.polygon_vertices(begin + k, 1) = seed.y + cell.y(k);
        out.polygon_labels(begin + k) = cell.label(k);
      }
    }
  }
};

struct CellsReport {
  int overflowed_cells = 0; ///< cells that did not fit the first capacity
  int reruns = 0;           ///< passes after the first one
  int final_capacity = 0;   ///< capacity of the last pass
};

/// Builds every cell of `tree` into `out`. `capacity` is the first pass's vertex capacity.
template <class ExecutionSpace, class MemorySpace>
CellsReport build_cells(ExecutionSpace const& space, SeedTree<MemorySpace> const& tree,
                        Kokkos::View<double const* [2], MemorySpace> domain_vertices,
                        Kokkos::View<int const*, MemorySpace> domain_labels, int capacity,
                        CellOutputs<MemorySpace> const& out) {
  using Policy = Kokkos::RangePolicy<ExecutionSpace>;
  loom::compat::ScopedRegion region("sdot::build_cells");
  int const n = tree.size;
  CellsReport report;
  Kokkos::View<int*, MemorySpace> overflowed(
      Kokkos::view_alloc(space, Kokkos::WithoutInitializing, "sdot::cells::overflowed"), n);
  int const domain_size = static_cast<int>(domain_vertices.extent(0));
  int inline_capacity = capacity <= 16 ? 16 : capacity <= 32 ? 32 : capacity <= 64 ? 64 : 0;
  if (inline_capacity < domain_size + 2)
    inline_capacity = 0;
  Kokkos::View<int*, MemorySpace> items;
  int nb_items = n;
  int next_capacity = capacity;
  if (inline_capacity > 0) {
    auto run = [&](auto functor) {
      functor.tree = tree;
      functor.domain_vertices = domain_vertices;
      functor.domain_labels = domain_labels;
      functor.capacity = inline_capacity;
      functor.out = out;
      functor.overflowed = overflowed;
      Kokkos::parallel_for("sdot::cells::inline", Policy(space, 0, n), functor);
    };
    if (inline_capacity == 16)
      run(CellsFunctor<MemorySpace, 16>{});
    else if (inline_capacity == 32)
      run(CellsFunctor<MemorySpace, 32>{});
    else
      run(CellsFunctor<MemorySpace, 64>{});
    next_capacity = 2 * inline_capacity;
  } else {
    Kokkos::deep_copy(space, overflowed, 1);
    next_capacity = loom::compat::max(capacity, domain_size + 2);
  }
  report.final_capacity = inline_capacity;
  bool first = true;
  while (true) {
    // The items that overflowed, in order.
    int count = 0;
    Kokkos::parallel_reduce(
        "sdot::cells::count_overflowed", Policy(space, 0, nb_items),
        KOKKOS_LAMBDA(int k, int& c) { c += overflowed(k); }, count);
    if (first) {
      report.overflowed_cells = inline_capacity > 0 ? count : 0;
      first = false;
    }
    if (count == 0)
      break;
    Kokkos::View<int*, MemorySpace> next_items(
        Kokkos::view_alloc(space, Kokkos::WithoutInitializing, "sdot::cells::overflow_items"),
        count);
    auto const previous_items = items;
    Kokkos::parallel_scan(
        "sdot::cells::list_overflowed", Policy(space, 0, nb_items),
        KOKKOS_LAMBDA(int k, int& position, bool final) {
          if (overflowed(k)) {
            if (final)
              next_items(position) = previous_items.extent(0) ? previous_items(k) : k;
            ++position;
          }
        });
    items = next_items;
    nb_items = count;
    if (next_capacity > (1 << 24))
      throw std::runtime_error("sdot: a cell needs more than 2^24 vertices");
    CellsFunctor<MemorySpace, 0> functor;
    functor.tree = tree;
    functor.domain_vertices = domain_vertices;
    functor.domain_labels = domain_labels;
    functor.items = items;
    functor.capacity = next_capacity;
    functor.work_x = Kokkos::View<double**, Kokkos::LayoutRight, MemorySpace>(
        Kokkos::view_alloc(space, Kokkos::WithoutInitializing, "sdot::cells::work_x"), count,
        2 * next_capacity);
    functor.work_y = Kokkos::View<double**, Kokkos::LayoutRight, MemorySpace>(
        Kokkos::view_alloc(space, Kokkos::WithoutInitializing, "sdot::cells::work_y"), count,
        2 * next_capacity);
    functor.work_labels = Kokkos::View<int**, Kokkos::LayoutRight, MemorySpace>(
        Kokkos::view_alloc(space, Kokkos::WithoutInitializing, "sdot::cells::work_labels"), count,
        2 * next_capacity);
    functor.out = out;
    overflowed = Kokkos::View<int*, MemorySpace>(
        Kokkos::view_alloc(space, Kokkos::WithoutInitializing, "sdot::cells::overflowed"), count);
    functor.overflowed = overflowed;
    Kokkos::parallel_for("sdot::cells::workspace", Policy(space, 0, count), functor);
    report.final_capacity = next_capacity;
    ++report.reruns;
    next_capacity *= 2;
  }
  return report;
}

} // namespace sdot::detail
