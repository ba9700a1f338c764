// The C++ side of the Python tests' bitwise comparison: reads N, then N positions (x, y) and N
// weights as doubles from the file argv[1], computes the measures with argv[3] boxes, and writes
// them as N doubles to argv[2].
#include <sdot/sdot.hpp>

#include <Kokkos_Core.hpp>

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <vector>

int main(int argc, char* argv[]) {
  int status = 0;
  { // one process, boxes emulated as ranks in it: no MPI call, so no MPI_Init
    Kokkos::ScopeGuard kokkos(argc, argv);
    if (argc != 4) {
      std::fprintf(stderr, "usage: %s input.bin output.bin nb_boxes\n", argv[0]);
      status = 2;
    } else {
      std::FILE* in = std::fopen(argv[1], "rb");
      std::int64_t n = 0;
      if (!in || std::fread(&n, sizeof n, 1, in) != 1 || n < 0) {
        std::fprintf(stderr, "cannot read %s\n", argv[1]);
        status = 1;
      } else {
        std::vector<double> data(3 * n);
        bool const read = std::fread(data.data(), sizeof(double), data.size(), in) == data.size();
        std::fclose(in);
        sdot::Points<> positions("positions", n);
        Kokkos::View<double*> weights("weights", n);
        auto p = Kokkos::create_mirror_view(positions);
        auto w = Kokkos::create_mirror_view(weights);
        for (std::int64_t i = 0; i < n; ++i) {
          p(i, 0) = data[2 * i];
          p(i, 1) = data[2 * i + 1];
          w(i) = data[2 * n + i];
        }
        Kokkos::deep_copy(positions, p);
        Kokkos::deep_copy(weights, w);
        sdot::PowerDiagramOptions options;
        options.nb_boxes = std::atoi(argv[3]);
        sdot::PowerDiagram pd(positions, weights, sdot::box_half_spaces({0, 0}, {1, 1}), options);
        auto measures = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), pd.measures());
        std::FILE* out = std::fopen(argv[2], "wb");
        if (!read || !out ||
            std::fwrite(measures.data(), sizeof(double), n, out) != std::size_t(n)) {
          std::fprintf(stderr, "cannot read the input or write %s\n", argv[2]);
          status = 1;
        }
        if (out)
          std::fclose(out);
      }
    }
  }
  return status;
}
