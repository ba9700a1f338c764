#pragma once
// The Jacobi preconditioners' inverse of a diagonal entry, shared by the conjugate gradient's
// Jacobi and the multigrid's sweeps.

#include <Kokkos_Core.hpp>

namespace sdot::detail {

/// 1 / d, or 1 where d is not positive (a row without couplings).
KOKKOS_INLINE_FUNCTION double inverse_of_diagonal(double d) {
  return d > 0 ? 1 / d : 1.0;
}

} // namespace sdot::detail
