#pragma once
/// @file
/// The one place where sdot and loom deal with differences between Kokkos versions
/// (3.4 as shipped by Debian 12, 4.x and 5.x as brought by users). Everything that
/// changed name or namespace between versions goes through `sdot::compat`.

#include <Kokkos_Core.hpp>
#include <Kokkos_NumericTraits.hpp>

#if __has_include(<KokkosKernels_config.h>)
#include <KokkosKernels_config.h>
#endif

#include <cstdint>
#include <string>

/// Whether Kokkos-Kernels' spmv and dot take an execution space instance (4.2 and later; 3.x
/// has no KOKKOSKERNELS_VERSION).
#if defined(KOKKOSKERNELS_VERSION) && KOKKOSKERNELS_VERSION >= 40200
#define SDOT_COMPAT_KERNELS_TAKE_INSTANCES 1
#else
#define SDOT_COMPAT_KERNELS_TAKE_INSTANCES 0
#endif

/// Inside a reduction functor whose value type T is a struct with a member
/// `void join(T& dst, T const& src) const`: Kokkos 3.x also calls join on volatile
/// references, which Kokkos 4 refuses; this adds that overload where it is needed.
#if KOKKOS_VERSION < 40000
#define SDOT_COMPAT_VOLATILE_JOIN(T)                                                               \
  KOKKOS_INLINE_FUNCTION void join(volatile T& dst, volatile T const& src) const {                 \
    T d = const_cast<T const&>(dst);                                                               \
    join(d, const_cast<T const&>(src));                                                            \
    const_cast<T&>(dst) = d;                                                                       \
  }
#else
#define SDOT_COMPAT_VOLATILE_JOIN(T)
#endif

namespace sdot::compat {

#if KOKKOS_VERSION >= 30700
using Kokkos::fabs;
using Kokkos::fmax;
using Kokkos::fmin;
using Kokkos::isfinite;
using Kokkos::sqrt;
#else
using Kokkos::Experimental::fabs;
using Kokkos::Experimental::fmax;
using Kokkos::Experimental::fmin;
using Kokkos::Experimental::isfinite;
using Kokkos::Experimental::sqrt;
#endif

/// Smaller of two values, usable in kernels (by value: compilers make it a select, not a
/// branch).
template <class T>
KOKKOS_INLINE_FUNCTION constexpr T min(T a, T b) {
  return b < a ? b : a;
}
/// Larger of two values, usable in kernels.
template <class T>
KOKKOS_INLINE_FUNCTION constexpr T max(T a, T b) {
  return a < b ? b : a;
}

/// Number of trailing zero bits of x ≠ 0 (a builtin instruction on every backend;
/// Kokkos::countr_zero is a portable loop).
KOKKOS_INLINE_FUNCTION int countr_zero(unsigned long long x) {
#if KOKKOS_VERSION >= 40100
  return Kokkos::Experimental::countr_zero_builtin(x);
#elif defined(__CUDA_ARCH__) || defined(__HIP_DEVICE_COMPILE__)
  return __ffsll(static_cast<long long>(x)) - 1;
#else
  return __builtin_ctzll(x);
#endif
}

/// Atomic minimum / maximum of a value in memory (any arithmetic type).
template <class T>
KOKKOS_INLINE_FUNCTION void atomic_min(T* address, T value) {
  Kokkos::atomic_fetch_min(address, value);
}
template <class T>
KOKKOS_INLINE_FUNCTION void atomic_max(T* address, T value) {
  Kokkos::atomic_fetch_max(address, value);
}

/// +infinity for a floating-point type.
template <class T>
KOKKOS_INLINE_FUNCTION constexpr T infinity() {
  return Kokkos::Experimental::infinity<T>::value;
}
/// Largest finite value of an arithmetic type.
template <class T>
KOKKOS_INLINE_FUNCTION constexpr T finite_max() {
  return Kokkos::Experimental::finite_max<T>::value;
}
/// Machine epsilon of a floating-point type.
template <class T>
KOKKOS_INLINE_FUNCTION constexpr T epsilon() {
  return Kokkos::Experimental::epsilon<T>::value;
}

/// Profiling region for the lifetime of the object (Kokkos::Profiling::ScopedRegion from 4.1).
class ScopedRegion {
public:
  explicit ScopedRegion(std::string const& name) { Kokkos::Profiling::pushRegion(name); }
  ~ScopedRegion() { Kokkos::Profiling::popRegion(); }
  ScopedRegion(ScopedRegion const&) = delete;
  ScopedRegion& operator=(ScopedRegion const&) = delete;
};

/// Number of threads of an execution space instance (static in 3.x, a member from 4.0).
template <class ExecutionSpace>
int concurrency(ExecutionSpace const& space) {
#if KOKKOS_VERSION >= 40000
  return space.concurrency();
#else
  (void)space;
  return ExecutionSpace::concurrency();
#endif
}

/// Host mirror type of a View (`HostMirror` is deprecated in 5.x).
template <class View>
using host_mirror_t = typename View::host_mirror_type;

/// A host View to copy `src` to or from without initialising it: `src` itself when the host
/// can access it, else a new host_mirror_type allocation (the argument order of
/// create_mirror_view with WithoutInitializing changed between 3.x and 4.x).
template <class View>
auto host_mirror_no_init(View const& src) {
  if constexpr (Kokkos::SpaceAccessibility<Kokkos::HostSpace,
                                           typename View::memory_space>::accessible) {
    return src;
  } else {
    return host_mirror_t<View>(Kokkos::view_alloc(Kokkos::WithoutInitializing, src.label()),
                               src.layout());
  }
}

/// A Kokkos-Kernels call on the instance `space`: `with_instance(space)` where the library
/// takes one (SDOT_COMPAT_KERNELS_TAKE_INSTANCES), else `without_instance()` on the default
/// instance, between a fence of `space` and one of the default instance, so that it keeps its
/// place among the kernels of `space`. `with_instance` is a generic lambda, compiled only where
/// it is called.
template <class ExecutionSpace, class WithInstance, class WithoutInstance>
void kernels_on(ExecutionSpace const& space, WithInstance&& with_instance,
                WithoutInstance&& without_instance) {
#if SDOT_COMPAT_KERNELS_TAKE_INSTANCES
  (void)without_instance;
  with_instance(space);
#else
  (void)with_instance;
  space.fence();
  without_instance();
  Kokkos::fence();
#endif
}

} // namespace sdot::compat
