// The Jacobian and the transport solver for the default execution space, compiled once: with
// SDOT_EXPLICIT_INSTANTIATION, users' code takes them from here instead of compiling them again.
#include <sdot/jacobian.hpp>
#include <sdot/optimal_transport.hpp>

namespace sdot {
using Space = Kokkos::DefaultExecutionSpace;
using Scalars = Kokkos::View<double const*, Space::memory_space>;

template MeasureJacobian<Space>
detail::assemble_jacobian(Space const&, loom::Ranks const&, ConstPoints<Space::memory_space>,
                          CellPolygonReader<Space::memory_space> const&,
                          Kokkos::View<int const*, Space::memory_space>);
template MeasureJacobian<Space> measure_jacobian(Space const&, loom::Ranks const&,
                                                 ConstPoints<Space::memory_space>,
                                                 CellPolygons<Space::memory_space> const&);
template OptimalTransportResult<Space::memory_space>
solve_optimal_transport(OneProcessCells<Space>&, Scalars, Scalars, OptimalTransportOptions const&);
template OptimalTransportResult<Space::memory_space>
solve_optimal_transport(SpreadCells<Space>&, Scalars, Scalars, OptimalTransportOptions const&);
} // namespace sdot
