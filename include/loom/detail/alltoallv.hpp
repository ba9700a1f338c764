#pragma once
// The all-to-all of device buffers that loom's exchanges share: straight from device memory
// with a GPU-aware MPI (LOOM_ENABLE_GPU_AWARE_MPI), else staged through host buffers.

#include <loom/ranks.hpp>
#include <sdot/base/kokkos_compat.hpp>

#include <Kokkos_Core.hpp>

#include <cstddef>
#include <cstdint>
#include <vector>

namespace loom::detail {

/// Collective: `send_counts[q]` elements of `elem_bytes` bytes of `send` (contiguous, in
/// process order) go to process q; `recv_counts[p]` arrive in `recv` from process p. Without
/// a GPU-aware MPI the bytes go through `send_host` and `recv_host`, host Views as large as
/// `send` and `recv` (the Views themselves when the host can access them). Fences `space`.
template <class ExecSpace, class Send, class Recv, class SendHost, class RecvHost>
void alltoallv_views(ExecSpace const& space, Ranks const& ranks, Send const& send,
                     std::vector<std::int64_t> const& send_counts, Recv const& recv,
                     std::vector<std::int64_t> const& recv_counts, std::size_t elem_bytes,
                     SendHost const& send_host, RecvHost const& recv_host) {
#ifdef LOOM_ENABLE_GPU_AWARE_MPI
  (void)send_host;
  (void)recv_host;
  space.fence();
  ranks.alltoallv_bytes(send.data(), send_counts, recv.data(), recv_counts, elem_bytes);
#else
  Kokkos::deep_copy(space, send_host, send);
  space.fence();
  ranks.alltoallv_bytes(send_host.data(), send_counts, recv_host.data(), recv_counts, elem_bytes);
  Kokkos::deep_copy(space, recv, recv_host);
  space.fence();
#endif
}

/// alltoallv_views() with host buffers allocated for this call only (none with a GPU-aware
/// MPI, or when the host can access the Views).
template <class ExecSpace, class Send, class Recv>
void alltoallv_views(ExecSpace const& space, Ranks const& ranks, Send const& send,
                     std::vector<std::int64_t> const& send_counts, Recv const& recv,
                     std::vector<std::int64_t> const& recv_counts, std::size_t elem_bytes) {
#ifdef LOOM_ENABLE_GPU_AWARE_MPI
  alltoallv_views(space, ranks, send, send_counts, recv, recv_counts, elem_bytes, send, recv);
#else
  alltoallv_views(space, ranks, send, send_counts, recv, recv_counts, elem_bytes,
                  sdot::compat::host_mirror_no_init(send), sdot::compat::host_mirror_no_init(recv));
#endif
}

} // namespace loom::detail
