// The power diagram for the default execution space, compiled once: with
// SDOT_EXPLICIT_INSTANTIATION, users' code takes it from here instead of compiling it again.
#include <sdot/power_diagram.hpp>

namespace sdot {
template class PowerDiagram<Kokkos::DefaultExecutionSpace, WholeInput>;
template class PowerDiagram<Kokkos::DefaultExecutionSpace, SpreadInput>;
} // namespace sdot
