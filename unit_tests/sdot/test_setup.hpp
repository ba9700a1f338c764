#pragma once
// The setup that the power-diagram and transport tests share: the unit square as a domain, and
// the ranks of the test's processes.

#include <loom/ranks.hpp>
#include <sdot/half_spaces.hpp>

#ifdef LOOM_ENABLE_MPI
#include <mpi.h>
#endif

#include <vector>

namespace sdot_test {

/// The domain [0, 1]².
inline std::vector<sdot::HalfSpace> unit_square() {
  return sdot::box_half_spaces({0, 0}, {1, 1});
}

/// The processes of MPI_COMM_WORLD (this process alone without MPI), `boxes_per_process` ranks
/// each.
inline loom::Ranks world_ranks(int boxes_per_process = 1) {
#ifdef LOOM_ENABLE_MPI
  return loom::MpiRanks(MPI_COMM_WORLD, boxes_per_process);
#else
  return loom::BoxRanks(boxes_per_process);
#endif
}

} // namespace sdot_test
