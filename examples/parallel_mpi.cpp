// The reference document's MPI script in C++: each process holds its block of the seeds and
// says so with loom::spread; the measures come back spread the same way.
//
//   mpiexec -n 4 parallel_mpi      -> 1 (the area of the unit square), printed by process 0
#include <loom/loom.hpp>
#include <sdot/sdot.hpp>

#include <Kokkos_Core.hpp>
#include <mpi.h>

#include <cstdio>
#include <random>

int main(int argc, char* argv[]) {
  MPI_Init(&argc, &argv);
  {
    Kokkos::ScopeGuard kokkos(argc, argv);
    auto ranks = loom::MpiRanks(MPI_COMM_WORLD);
    int const rank = ranks.process_rank(), size = ranks.process_count();

    // Every process draws the same cloud and keeps its block of it.
    int const n = 10000;
    std::mt19937_64 rng(0);
    std::uniform_real_distribution<double> u(0, 1);
    std::vector<double> x(2 * n), w(n);
    for (int i = 0; i < n; ++i) {
      x[2 * i] = u(rng);
      x[2 * i + 1] = u(rng);
    }
    for (int i = 0; i < n; ++i)
      w[i] = u(rng) * 1e-3;
    int const first = n / size * rank, count = rank + 1 == size ? n - first : n / size;
    sdot::Points<> positions("positions", count);
    Kokkos::View<double*> weights("weights", count);
    auto p = Kokkos::create_mirror_view(positions);
    auto q = Kokkos::create_mirror_view(weights);
    for (int i = 0; i < count; ++i) {
      p(i, 0) = x[2 * (first + i)];
      p(i, 1) = x[2 * (first + i) + 1];
      q(i) = w[first + i];
    }
    Kokkos::deep_copy(positions, p);
    Kokkos::deep_copy(weights, q);

    sdot::PowerDiagram pd(loom::spread(positions, ranks), loom::spread(weights, ranks),
                          sdot::box_half_spaces({0, 0}, {1, 1}));
    auto m = pd.measures();       // spread like the positions: m.value() holds this process's block
    double const total = m.sum(); // over all the processes: every one gets it
    if (rank == 0)
      std::printf("%.15g\n", total);
  }
  MPI_Finalize();
  return 0;
}
