// The reference document's one-device script in C++: 8 boxes of seeds emulated as ranks in
// this process, cells travelling between them.
//
//   one_device_boxes               -> 1 (the area of the unit square)
#include <sdot/sdot.hpp>

#include <Kokkos_Core.hpp>

#include <cstdio>
#include <random>

int main(int argc, char* argv[]) {
  { // one process, boxes emulated as ranks in it: no MPI call, so no MPI_Init
    Kokkos::ScopeGuard kokkos(argc, argv);
    int const n = 10000;
    std::mt19937_64 rng(0);
    std::uniform_real_distribution<double> u(0, 1);
    sdot::Points<> positions("positions", n);
    Kokkos::View<double*> weights("weights", n);
    auto p = Kokkos::create_mirror_view(positions);
    auto q = Kokkos::create_mirror_view(weights);
    for (int i = 0; i < n; ++i) {
      p(i, 0) = u(rng);
      p(i, 1) = u(rng);
    }
    for (int i = 0; i < n; ++i)
      q(i) = u(rng) * 1e-3;
    Kokkos::deep_copy(positions, p);
    Kokkos::deep_copy(weights, q);

    sdot::PowerDiagramOptions options;
    options.nb_boxes = 8;
    sdot::PowerDiagram pd(positions, weights, sdot::box_half_spaces({0, 0}, {1, 1}), options);
    auto m = pd.measures();
    double sum = 0;
    Kokkos::parallel_reduce(
        "one_device_boxes::sum", m.extent(0), KOKKOS_LAMBDA(int i, double& s) { s += m(i); }, sum);
    std::printf("%.15g\n", sum);
  }
  return 0;
}
