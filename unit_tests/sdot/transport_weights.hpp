#pragma once
// A cloud at the weights of its optimal transport, for the tests of cells far from their seeds
// (apart from clouds.hpp, which most tests include: the solver is a heavy header).

#include "clouds.hpp"

#include <sdot/optimal_transport.hpp>

namespace sdot_test {

/// `c` at the weights that solve its transport towards uniform masses on the unit square, by
/// the library (on a clustered cloud, cells far from their seeds).
inline Cloud at_transport_weights(Cloud c) {
  Kokkos::View<double*> masses("test::masses", c.x.size());
  Kokkos::deep_copy(masses, 1.0 / double(c.x.size()));
  sdot::OptimalTransport<> ot(positions_view(c), masses, sdot::box_half_spaces({0, 0}, {1, 1}));
  c.w = to_vector(ot.solve().weights);
  return c;
}

} // namespace sdot_test
