#pragma once
// Stable least-significant-digit radix sort of unsigned keys (32 or 64 bits), returning the
// permutation.
// Written with plain parallel_for / parallel_scan so it behaves the same on every Kokkos
// version and backend (Kokkos::sort's interface changed between 3.4 and 4.x). Stability
// makes the order of equal keys the order of their indices: the result is deterministic.

#include <sdot/base/kokkos_compat.hpp>

#include <cstdint>
#include <type_traits>
#include <utility>

namespace sdot::detail {

/// The permutation that sorts `keys` (whose values are below 2^key_bits), equal keys in the
/// order of their indices; the keys in that order go to `sorted_keys` when it is given.
template <class ExecutionSpace, class MemorySpace, class Key>
Kokkos::View<int*, MemorySpace>
stable_sort_permutation(ExecutionSpace const& space, Kokkos::View<Key const*, MemorySpace> keys,
                        int key_bits,
                        Kokkos::View<Key const*, MemorySpace>* sorted_keys = nullptr) {
  static_assert(Kokkos::SpaceAccessibility<ExecutionSpace, MemorySpace>::accessible,
                "stable_sort_permutation: the keys must be accessible from the execution space");
  static_assert(std::is_unsigned<Key>::value, "stable_sort_permutation: unsigned keys");
  using Policy = Kokkos::RangePolicy<ExecutionSpace>;
  // Digits of about 11 bits: 3 passes for 32-bit keys. The keys travel with the permutation,
  // so that every pass reads them in order.
  int const nb_passes = key_bits <= 0 ? 0 : (key_bits + 10) / 11;
  int const digit_bits = nb_passes > 0 ? (key_bits + nb_passes - 1) / nb_passes : 1;
  int const radix = 1 << digit_bits;
  int const n = static_cast<int>(keys.extent(0));
  Kokkos::View<int*, MemorySpace> perm(
      Kokkos::view_alloc(space, Kokkos::WithoutInitializing, "sdot::sort::permutation"), n);
  Kokkos::parallel_for(
      "sdot::sort::iota", Policy(space, 0, n), KOKKOS_LAMBDA(int i) { perm(i) = i; });
  if (sorted_keys)
    *sorted_keys = keys;
  if (n <= 1 || nb_passes == 0)
    return perm;
  Kokkos::View<int*, MemorySpace> perm_next(
      Kokkos::view_alloc(space, Kokkos::WithoutInitializing, "sdot::sort::permutation_next"), n);
  // Each pass reads `key` (the input at first) and writes `key_next`, one of two buffers.
  Kokkos::View<Key*, MemorySpace> buffers[2] = {
      Kokkos::View<Key*, MemorySpace>(
          Kokkos::view_alloc(space, Kokkos::WithoutInitializing, "sdot::sort::keys"), n),
      Kokkos::View<Key*, MemorySpace>(
          Kokkos::view_alloc(space, Kokkos::WithoutInitializing, "sdot::sort::keys_next"), n)};
  Kokkos::View<Key const*, MemorySpace> key = keys;

  // Each block is scanned serially by one thread, so that equal digits keep their order.
  int const threads = sdot::compat::concurrency(space);
  int const block = sdot::compat::max(radix, sdot::compat::min(1 << 16, n / (4 * threads) + 1));
  int const nb_blocks = (n + block - 1) / block;
  Kokkos::View<int*, MemorySpace> offsets(Kokkos::view_alloc(space, "sdot::sort::digit_offsets"),
                                          std::size_t(radix) * nb_blocks);

  for (int pass = 0; pass < nb_passes; ++pass) {
    int const shift = pass * digit_bits;
    Key const mask = Key(radix - 1);
    if (pass > 0)
      Kokkos::deep_copy(space, offsets, 0);
    Kokkos::parallel_for(
        "sdot::sort::count_digits", Policy(space, 0, nb_blocks), KOKKOS_LAMBDA(int b) {
          int end = sdot::compat::min(n, (b + 1) * block);
          for (int i = b * block; i < end; ++i)
            ++offsets(static_cast<int>((key(i) >> shift) & mask) * nb_blocks + b);
        });
    Kokkos::parallel_scan(
        "sdot::sort::digit_offsets", Policy(space, 0, radix * nb_blocks),
        KOKKOS_LAMBDA(int k, int& partial, bool final) {
          int count = offsets(k);
          if (final)
            offsets(k) = partial;
          partial += count;
        });
    auto const key_next = buffers[pass % 2];
    Kokkos::parallel_for(
        "sdot::sort::scatter", Policy(space, 0, nb_blocks), KOKKOS_LAMBDA(int b) {
          int end = sdot::compat::min(n, (b + 1) * block);
          for (int i = b * block; i < end; ++i) {
            Key const k = key(i);
            int const to = offsets(static_cast<int>((k >> shift) & mask) * nb_blocks + b)++;
            key_next(to) = k;
            perm_next(to) = perm(i);
          }
        });
    std::swap(perm, perm_next);
    key = key_next;
  }
  if (sorted_keys)
    *sorted_keys = key;
  return perm;
}

} // namespace sdot::detail
