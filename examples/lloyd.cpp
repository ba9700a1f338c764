// Lloyd's algorithm toward a centroidal power diagram with prescribed masses: between optimal
// transport solves, every seed moves to the centroid of its cell. Writes lloyd.svg.
//
//   lloyd [N=400] [iterations=20] [picture=lloyd.svg]
//
// The masses grow from left to right (cells on the right hold three times the mass of those
// on the left); the seeds start in a cluster in a corner.
#include <sdot/optimal_transport.hpp>
#include <sdot/picture.hpp>

#include <Kokkos_Core.hpp>

#include <cmath>
#include <cstdio>
#include <random>
#include <stdexcept>
#include <string>

int main(int argc, char* argv[]) {
  int status = 0;
  { // one process: no MPI call, so no MPI_Init
    Kokkos::ScopeGuard kokkos(argc, argv);
    try {
      int const n = argc > 1 ? std::stoi(argv[1]) : 400;
      int const iterations = argc > 2 ? std::stoi(argv[2]) : 20;
      std::string const picture = argc > 3 ? argv[3] : "lloyd.svg";
      auto const domain = sdot::box_half_spaces({0, 0}, {1, 1});

      using Space = Kokkos::DefaultExecutionSpace;
      sdot::Points<> positions("lloyd::positions", n);
      Kokkos::View<double*> masses("lloyd::masses", n);
      auto x = Kokkos::create_mirror_view(positions);
      auto m = Kokkos::create_mirror_view(masses);
      std::mt19937_64 rng(1);
      std::uniform_real_distribution<double> u(0, 0.3);
      double sum = 0;
      for (int i = 0; i < n; ++i) {
        x(i, 0) = 0.05 + u(rng);
        x(i, 1) = 0.05 + u(rng);
        m(i) = 1 + 2.0 * i / n; // assigned by seed; Lloyd sorts them out
        sum += m(i);
      }
      for (int i = 0; i < n; ++i)
        m(i) /= sum; // the unit square's area
      Kokkos::deep_copy(positions, x);
      Kokkos::deep_copy(masses, m);

      Kokkos::View<double*> weights("lloyd::weights", n);
      sdot::OptimalTransport<Space> ot(positions, masses, domain);
      for (int it = 1; it <= iterations; ++it) {
        if (it > 1)
          ot.set_positions(positions); // the seeds moved
        sdot::OptimalTransportResult<Space::memory_space> result;
        try {
          result = ot.solve(weights); // warm start from the previous weights
        } catch (std::invalid_argument const&) {
          result = ot.solve(); // a cell emptied as seeds moved: restart from zero weights
        }
        weights = result.weights;
        // Move every seed to its cell's centroid.
        auto centroids =
            Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), ot.diagram().centroids());
        Kokkos::deep_copy(x, positions);
        double moved = 0;
        for (int i = 0; i < n; ++i) {
          moved =
              std::fmax(moved, std::hypot(centroids(i, 0) - x(i, 0), centroids(i, 1) - x(i, 1)));
          x(i, 0) = centroids(i, 0);
          x(i, 1) = centroids(i, 1);
        }
        Kokkos::deep_copy(positions, x);
        std::printf("iteration %2d: %2d Newton steps, %5d CG iterations, max error %.2e, seeds "
                    "moved up to %.2e\n",
                    it, result.statistics.newton_iterations, result.statistics.cg_iterations,
                    result.statistics.max_error, moved);
      }
      // The final diagram, coloured by the prescribed masses.
      ot.set_positions(positions);
      auto result = ot.solve(weights);
      auto& diagram = ot.diagram();
      sdot::write_svg(picture, diagram.cell_polygons(), positions, diagram.domain(), masses);
      std::printf("wrote %s (%d cells, max error %.2e)\n", picture.c_str(), n,
                  result.statistics.max_error);
    } catch (std::exception const& e) {
      std::fprintf(stderr, "lloyd: %s\n", e.what());
      status = 1;
    }
  }
  return status;
}
