#pragma once
/// @file
/// sdot::Points: the View type of [n, 2] points (seeds, polygon vertices, centroids).

#include <Kokkos_Core.hpp>

#include <string>
#include <type_traits>

namespace sdot {

/// Layout of sdot's [n, 2] point Views in a memory space: the layout Kokkos gives Views there
/// by default (LayoutRight on host backends, LayoutLeft on CUDA and HIP).
///
/// Built with `SDOT_POINTS_LAYOUT_LEFT` defined (the CMake option of that name, a test
/// configuration), it is LayoutLeft on every backend, so that a host build meets the layouts
/// of a GPU build: code that assumes the host's layout fails to compile, or its tests fail,
/// on the host as it would on a GPU (docs/gpu.md, "The host guard").
template <class MemorySpace>
using points_layout =
#if defined(SDOT_POINTS_LAYOUT_LEFT)
    Kokkos::LayoutLeft;
#else
    typename MemorySpace::execution_space::array_layout;
#endif

/// [n, 2] points in a memory space (by default, that of the default execution space).
template <class MemorySpace = Kokkos::DefaultExecutionSpace::memory_space>
using Points = Kokkos::View<double* [2], points_layout<MemorySpace>, MemorySpace>;

/// Read-only [n, 2] points in a memory space.
template <class MemorySpace = Kokkos::DefaultExecutionSpace::memory_space>
using ConstPoints = Kokkos::View<double const* [2], points_layout<MemorySpace>, MemorySpace>;

namespace detail {

/// `points`, an [n, 2] View of any layout, as sdot::Points of its memory space: the same View
/// when the layouts agree, else a copy in sdot's layout (labelled `label`, made by `space`). loom
/// returns rows in LayoutRight, which a GPU's point Views are not.
template <class ExecutionSpace, class View>
Points<typename View::memory_space> in_points_layout(ExecutionSpace const& space,
                                                     View const& points, std::string const& label) {
  using Out = Points<typename View::memory_space>;
  if constexpr (std::is_same<typename View::array_layout, typename Out::array_layout>::value) {
    return points;
  } else {
    Out out(Kokkos::view_alloc(space, Kokkos::WithoutInitializing, label), points.extent(0));
    Kokkos::deep_copy(space, out, points);
    return out;
  }
}

} // namespace detail
} // namespace sdot
