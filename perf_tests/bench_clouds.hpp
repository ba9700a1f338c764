#pragma once
// The benchmark clouds, from the unit tests' generators, and the unit square domain.
//
// A kind is a cloud ("uniform", "clustered") optionally followed by "@transport": the same
// positions with the weights that solve the optimal transport problem towards uniform target
// masses (each cell 1/N of the square); "@transport*s": those weights times s (s = 0: zero
// weights, s = 1: the solution; s > 1 spreads them further, emptying cells). Those weights are
// solved once and kept in SDOT_BENCHMARK_WEIGHTS_DIR (a folder of the build tree; the environment
// variable of that name overrides it), as <cloud>-<N>-<hash of the positions>.bin: N doubles in the
// input order.
#include <clouds.hpp>
#include <sdot/power_diagram.hpp>
#ifdef SDOT_ENABLE_KOKKOS_KERNELS
#include <sdot/optimal_transport.hpp>
#endif

#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <stdexcept>
#include <string>
#include <vector>

namespace sdot_bench {

inline std::vector<sdot::HalfSpace> unit_square() {
  return sdot::box_half_spaces({0, 0}, {1, 1});
}

/// "uniform": N seeds uniform in the unit square with weights U[0, 1/N];
/// "clustered": clustered_cloud of the unit tests (80 % in three tight Gaussian clusters).
inline sdot_test::Cloud make_base_cloud(std::string const& kind, int n) {
  if (kind == "uniform")
    return sdot_test::uniform_cloud(n, 1.0 / n, 12345);
  if (kind == "clustered")
    return sdot_test::clustered_cloud(n, 12345);
  throw std::invalid_argument("sdot benchmarks: unknown cloud '" + kind + "'");
}

inline std::string weights_folder() {
  if (char const* dir = std::getenv("SDOT_BENCHMARK_WEIGHTS_DIR"))
    return dir;
#ifdef SDOT_BENCHMARK_WEIGHTS_DIR
  return SDOT_BENCHMARK_WEIGHTS_DIR;
#else
  return ".";
#endif
}

/// A 64-bit FNV-1a hash of the positions' bytes, in hexadecimal: kept weights name the positions
/// they solve, so that a changed cloud generator never reads another cloud's weights.
inline std::string positions_hash(sdot_test::Cloud const& cloud) {
  std::uint64_t h = 14695981039346656037ull;
  auto const* bytes = reinterpret_cast<unsigned char const*>(cloud.x.data());
  for (std::size_t k = 0; k < cloud.x.size() * sizeof(cloud.x[0]); ++k)
    h = (h ^ bytes[k]) * 1099511628211ull;
  char text[17];
  std::snprintf(text, sizeof text, "%016llx", static_cast<unsigned long long>(h));
  return text;
}

/// The weights of the optimal transport from `cloud` (its positions) to uniform masses on the
/// unit square: read from the folder of weights, else solved from zero weights and kept there.
inline std::vector<double> transport_weights(std::string const& kind, sdot_test::Cloud cloud) {
  int const n = static_cast<int>(cloud.x.size());
  std::string const path = weights_folder() + "/" + kind + "-" + std::to_string(n) + "-" +
                           positions_hash(cloud) + ".bin";
  std::vector<double> w(n);
  if (std::FILE* file = std::fopen(path.c_str(), "rb")) {
    bool const read = std::fread(w.data(), sizeof(double), n, file) == std::size_t(n);
    std::fclose(file);
    if (read)
      return w;
  }
#ifdef SDOT_ENABLE_KOKKOS_KERNELS
  std::fprintf(stderr, "sdot benchmarks: solving the transport weights of %s (N = %d) for %s\n",
               kind.c_str(), n, path.c_str());
  for (auto& x : cloud.w)
    x = 0;
  Kokkos::View<double*> targets("bench::targets", n);
  Kokkos::deep_copy(targets, 1.0 / n);
  sdot::OptimalTransport<> ot(sdot_test::positions_view(cloud), targets, unit_square());
  w = sdot_test::to_vector(ot.solve().weights);
  std::filesystem::create_directories(weights_folder());
  std::string const partial = path + ".partial";
  std::FILE* file = std::fopen(partial.c_str(), "wb");
  bool const written = file && std::fwrite(w.data(), sizeof(double), n, file) == std::size_t(n);
  if (file)
    std::fclose(file);
  if (written)
    std::filesystem::rename(partial, path);
  return w;
#else
  throw std::runtime_error("sdot benchmarks: no file " + path +
                           " and no transport solver (SDOT_ENABLE_KOKKOS_KERNELS=OFF)");
#endif
}

/// The cloud of `kind` ("uniform", "clustered", each optionally followed by "@transport" or
/// "@transport*s").
inline sdot_test::Cloud make_cloud(std::string const& kind, int n) {
  auto const at = kind.find('@');
  auto cloud = make_base_cloud(kind.substr(0, at), n);
  if (at == std::string::npos)
    return cloud;
  std::string const weights = kind.substr(at);
  std::string const transport = "@transport";
  double scale = 1;
  bool known = weights.compare(0, transport.size(), transport) == 0;
  if (known && weights.size() > transport.size()) {
    std::string const factor = weights.substr(transport.size());
    char* end = nullptr;
    scale = factor[0] == '*' ? std::strtod(factor.c_str() + 1, &end) : 0;
    known = factor[0] == '*' && factor.size() > 1 && end == factor.c_str() + factor.size() &&
            std::isfinite(scale) && scale >= 0;
  }
  if (!known)
    throw std::invalid_argument("sdot benchmarks: unknown weights '" + weights + "'");
  cloud.w = transport_weights(kind.substr(0, at), cloud);
  for (auto& w : cloud.w)
    w *= scale;
  return cloud;
}

} // namespace sdot_bench
