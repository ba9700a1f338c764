// A C++-only program using the installed sdot: a diagram, and (with HDF5) its measures written
// to a file, which links sdot's HDF5 layer: with MPI by the processes of MPI_COMM_WORLD through
// MPI-IO, without MPI (SDOT_ENABLE_MPI=OFF) by this process alone.
#include <sdot/sdot.hpp>
#ifdef SDOT_ENABLE_HDF5
#include <sdot/hdf5_io.hpp>
#endif

#include <loom/ranks.hpp>

#ifdef LOOM_ENABLE_MPI
#include <mpi.h>
#endif

#include <cmath>
#include <cstdio>

int main(int argc, char* argv[]) {
#ifdef LOOM_ENABLE_MPI
  MPI_Init(&argc, &argv);
#endif
  int status = 1;
  {
    Kokkos::ScopeGuard kokkos(argc, argv);
    int const n = 100;
    Kokkos::View<double* [2]> positions("positions", n);
    Kokkos::View<double*> weights("weights", n);
    auto p = Kokkos::create_mirror_view(positions);
    for (int i = 0; i < n; ++i) {
      p(i, 0) = std::fmod(0.618033988749895 * i, 1.0);
      p(i, 1) = (i + 0.5) / n;
    }
    Kokkos::deep_copy(positions, p);
    sdot::PowerDiagram pd(positions, weights, sdot::box_half_spaces({0, 0}, {1, 1}));
    auto m = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), pd.measures());
    double sum = 0;
    for (int i = 0; i < n; ++i)
      sum += m(i);
#ifdef SDOT_ENABLE_HDF5
    if (argc > 1) {
#ifdef LOOM_ENABLE_MPI
      sdot::hdf5::OutputFile file(MPI_COMM_WORLD, argv[1]);
#else
      sdot::hdf5::OutputFile file(loom::BoxRanks(1), argv[1]);
#endif
      sdot::hdf5::HostVector block("measures", n);
      Kokkos::deep_copy(block, m);
      file.write("measures", block);
      file.commit();
    }
#endif
    if (std::fabs(sum - 1) < 1e-12) {
      std::printf("measures add up to 1\n");
      status = 0;
    }
  }
#ifdef LOOM_ENABLE_MPI
  MPI_Finalize();
#endif
  return status;
}
