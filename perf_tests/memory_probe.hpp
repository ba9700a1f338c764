#pragma once
// Peak memory of a piece of code, measured two ways:
// - Kokkos bytes: the high-water mark of live Kokkos allocations (all memory spaces), through
//   the Kokkos Tools allocate/deallocate callbacks; exact and the same on a GPU.
// - Resident bytes: the process's peak resident set (VmHWM of /proc/self/status), reset
//   before the code runs by writing 5 to /proc/self/clear_refs (Linux); counts every
//   allocation (CGAL's too) but only on the host. 0 when /proc is not available.
#include <Kokkos_Core.hpp>

#include <cstdint>
#include <fstream>
#include <string>

#if defined(__GLIBC__)
#include <malloc.h>
#endif

namespace sdot_bench {

class MemoryProbe {
public:
  /// Installs the Kokkos callbacks (once, after Kokkos::initialize) and starts a measurement.
  MemoryProbe() {
    install();
    peak_kokkos() = live_kokkos();
    baseline_kokkos_ = live_kokkos();
#if defined(__GLIBC__)
    malloc_trim(0);
#endif
    std::ofstream("/proc/self/clear_refs") << "5";
    baseline_resident_ = status_bytes("VmRSS:");
  }
  /// Growth of the Kokkos allocations' high-water mark over the baseline.
  double kokkos_bytes() const {
    return double(peak_kokkos() - baseline_kokkos_);
  }
  /// Growth of the resident set's high-water mark over the baseline.
  double resident_bytes() const {
    double const peak = status_bytes("VmHWM:");
    return peak > baseline_resident_ ? peak - baseline_resident_ : 0;
  }

private:
  static std::int64_t& live_kokkos() {
    static std::int64_t bytes = 0;
    return bytes;
  }
  static std::int64_t& peak_kokkos() {
    static std::int64_t bytes = 0;
    return bytes;
  }
  static void on_allocate(Kokkos_Profiling_SpaceHandle, char const*, void const*,
                          std::uint64_t size) {
    live_kokkos() += static_cast<std::int64_t>(size);
    if (live_kokkos() > peak_kokkos())
      peak_kokkos() = live_kokkos();
  }
  static void on_deallocate(Kokkos_Profiling_SpaceHandle, char const*, void const*,
                            std::uint64_t size) {
    live_kokkos() -= static_cast<std::int64_t>(size);
  }
  static void install() {
    static bool const installed = [] {
      Kokkos::Tools::Experimental::set_allocate_data_callback(&on_allocate);
      Kokkos::Tools::Experimental::set_deallocate_data_callback(&on_deallocate);
      return true;
    }();
    (void)installed;
  }
  static double status_bytes(char const* field) {
    std::ifstream status("/proc/self/status");
    std::string key;
    while (status >> key) {
      if (key == field) {
        double kib = 0;
        status >> kib;
        return 1024 * kib;
      }
      std::getline(status, key);
    }
    return 0;
  }
  std::int64_t baseline_kokkos_ = 0;
  double baseline_resident_ = 0;
};

} // namespace sdot_bench
