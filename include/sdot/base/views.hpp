#pragma once
// Labelled Views allocated on an execution-space instance.

#include <Kokkos_Core.hpp>

#include <cstddef>
#include <string>

namespace sdot::detail {

/// Kokkos::View<Arguments..., MemorySpace>, or the View type given as the one argument.
template <class MemorySpace, class... Arguments>
struct ViewOf {
  using type = Kokkos::View<Arguments..., MemorySpace>;
};
template <class MemorySpace, class... Properties>
struct ViewOf<MemorySpace, Kokkos::View<Properties...>> {
  using type = Kokkos::View<Properties...>;
};

/// A View labelled `label` with the given extents, allocated on `space` (in its memory space)
/// without initialising its values: the kernel that follows writes every one.
/// `uninitialized_view<int*>(space, "label", n)`,
/// `uninitialized_view<double**, Kokkos::LayoutRight>(space, "label", n, 4)`, or a View type:
/// `uninitialized_view<Points<MemorySpace>>(space, "label", n)`.
template <class... Arguments, class ExecutionSpace, class... Extents>
typename ViewOf<typename ExecutionSpace::memory_space, Arguments...>::type
uninitialized_view(ExecutionSpace const& space, std::string const& label, Extents... extents) {
  using View = typename ViewOf<typename ExecutionSpace::memory_space, Arguments...>::type;
  return View(Kokkos::view_alloc(space, Kokkos::WithoutInitializing, label),
              static_cast<std::size_t>(extents)...);
}

/// out(p) = in(order(p)) for p in [0, order.extent(0)): `in` taken into the numbering `order`
/// (p ↦ index in `in`).
template <class ExecutionSpace, class Out, class In, class Order>
void gather_in_order(ExecutionSpace const& space, std::string const& label, Out const& out,
                     In const& in, Order const& order) {
  Kokkos::parallel_for(
      label, Kokkos::RangePolicy<ExecutionSpace>(space, 0, static_cast<int>(order.extent(0))),
      KOKKOS_LAMBDA(int p) { out(p) = in(order(p)); });
}

/// out(order(p)) = in(p): gather_in_order() undone.
template <class ExecutionSpace, class Out, class In, class Order>
void scatter_from_order(ExecutionSpace const& space, std::string const& label, Out const& out,
                        In const& in, Order const& order) {
  Kokkos::parallel_for(
      label, Kokkos::RangePolicy<ExecutionSpace>(space, 0, static_cast<int>(order.extent(0))),
      KOKKOS_LAMBDA(int p) { out(order(p)) = in(p); });
}

} // namespace sdot::detail
