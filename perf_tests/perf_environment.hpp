#pragma once
// MPI (when sdot is built with it) and Kokkos, initialised for the lifetime of a performance
// program's main.

#include <Kokkos_Core.hpp>
#ifdef LOOM_ENABLE_MPI
#include <mpi.h>
#endif

namespace sdot_bench {

/// MPI_Init (when sdot is built with MPI), then Kokkos; finalised in the reverse order.
class PerfEnvironment {
public:
  PerfEnvironment(int& argc, char**& argv) : mpi_(argc, argv), kokkos_(argc, argv) {}

private:
  struct Mpi {
    Mpi(int& argc, char**& argv) {
#ifdef LOOM_ENABLE_MPI
      MPI_Init(&argc, &argv);
#else
      (void)argc;
      (void)argv;
#endif
    }
    ~Mpi() {
#ifdef LOOM_ENABLE_MPI
      MPI_Finalize();
#endif
    }
    Mpi(Mpi const&) = delete;
    Mpi& operator=(Mpi const&) = delete;
  } mpi_;
  Kokkos::ScopeGuard kokkos_;
};

} // namespace sdot_bench
