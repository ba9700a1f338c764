#pragma once
// Checks of every loom operation, written once for any loom::Ranks (BoxRanks, MpiRanks,
// several boxes per process). Expectations are computed on the host from formulas of the
// global rank, never by loom itself. Only EXPECT_* (no early return): a check failing on one
// process must not leave the others waiting in a collective.
#include <loom/loom.hpp>

#include <Kokkos_Core.hpp>
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <string>
#include <vector>

namespace loom_test {

using Exec = Kokkos::DefaultExecutionSpace;
using Mem = Exec::memory_space;

// ---- the rows each rank sends --------------------------------------------------------------
// Rank 1 is empty; rank 0 has 20 extra rows, all for the last rank (the only rank whose
// sends overflow a capacity of 4); the others send to every rank, themselves included, and
// drop some rows (dest -1).
inline int rows_of(int g, int size) {
  if (size > 1 && g == 1)
    return 0;
  return (g * 7 + 3) % 11 + (g == 0 ? 20 : 0);
}
inline int dest_of(int g, int i, int size) {
  if (g == 0 && i < 20)
    return size - 1;
  return (g + 3 * i) % (size + 1) - 1;
}
template <class T>
T value_of(int g, int i, int c) {
  return static_cast<T>(g * 1000 + i) + static_cast<T>(c) / 2; // c = 1 gives a non-integer
}
constexpr int cols = 2;

// The rows of rank g with their destinations, in input order: (dest, i).
inline std::vector<int> rows_to(int g, int to, int size) {
  std::vector<int> out;
  for (int i = 0; i < rows_of(g, size); ++i)
    if (dest_of(g, i, size) == to)
      out.push_back(i);
  return out;
}

// dest and rows of this process's local ranks, concatenated, and their offsets.
template <class T>
struct Input {
  Kokkos::View<int*, Mem> dest;
  Kokkos::View<T**, Kokkos::LayoutRight, Mem> rows;
  std::vector<std::int64_t> offsets;
};
template <class T>
Input<T> make_input(loom::Ranks const& r) {
  Input<T> in;
  in.offsets.push_back(0);
  for (int l = 0; l < r.local_count(); ++l)
    in.offsets.push_back(in.offsets.back() + rows_of(r.rank(l), r.size()));
  std::int64_t const n = in.offsets.back();
  in.dest = Kokkos::View<int*, Mem>("dest", n);
  in.rows = Kokkos::View<T**, Kokkos::LayoutRight, Mem>("rows", n, cols);
  auto hd = Kokkos::create_mirror_view(in.dest);
  auto hr = Kokkos::create_mirror_view(in.rows);
  for (int l = 0; l < r.local_count(); ++l)
    for (int i = 0; i < rows_of(r.rank(l), r.size()); ++i) {
      std::int64_t const k = in.offsets[l] + i;
      hd(k) = dest_of(r.rank(l), i, r.size());
      for (int c = 0; c < cols; ++c)
        hr(k, c) = value_of<T>(r.rank(l), i, c);
    }
  Kokkos::deep_copy(in.dest, hd);
  Kokkos::deep_copy(in.rows, hr);
  return in;
}

inline std::int64_t needed_by(int g, int size) {
  std::int64_t m = 0;
  for (int j = 0; j < size; ++j)
    m = std::max<std::int64_t>(m, rows_to(g, j, size).size());
  return m;
}

// ---- route ---------------------------------------------------------------------------------
template <class T>
void check_route(loom::Ranks const& r, int capacity) {
  auto in = make_input<T>(r);
  loom::Capacity cap(capacity);
  auto out = loom::route(r, in.dest, in.rows, in.offsets, cap);
  EXPECT_EQ(out.local_count(), r.local_count());
  EXPECT_EQ(out.size(), r.size());
  EXPECT_EQ(out.capacity(), capacity);
  EXPECT_EQ(out.cols(), cols);
  auto data = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), out.data);
  auto counts = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), out.counts);
  std::int64_t needed = 0;
  for (int l = 0; l < r.local_count(); ++l) {
    int const g = r.rank(l);
    needed = std::max(needed, needed_by(g, r.size()));
    for (int j = 0; j < r.size(); ++j) {
      auto const expected = rows_to(g, j, r.size());
      int const stored = std::min<int>(expected.size(), capacity);
      EXPECT_EQ(counts(l, j), stored) << "rank " << g << " to " << j;
      for (int s = 0; s < capacity; ++s)
        for (int c = 0; c < cols; ++c) {
          T const want = s < stored ? value_of<T>(g, expected[s], c) : T(-1);
          EXPECT_EQ(data(l, j, s, c), want) << "rank " << g << " to " << j << " slot " << s;
        }
    }
  }
  EXPECT_EQ(out.needed, needed);
  EXPECT_EQ(cap.needed(), needed);
  EXPECT_EQ(cap.overflowed(), needed > capacity);
  EXPECT_EQ(cap.value(), capacity); // route alone never grows it
}

// ---- exchange ------------------------------------------------------------------------------
template <class T>
void check_exchange(loom::Ranks const& r, int capacity) {
  auto in = make_input<T>(r);
  loom::Capacity cap(capacity);
  auto got = loom::exchange(r, loom::route(r, in.dest, in.rows, in.offsets, cap));
  EXPECT_EQ(got.capacity(), capacity);
  EXPECT_EQ(got.cols(), cols);
  auto data = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), got.data);
  auto counts = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), got.counts);
  for (int l = 0; l < r.local_count(); ++l)
    for (int j = 0; j < r.size(); ++j) {
      auto const expected = rows_to(j, r.rank(l), r.size()); // what j sent to this rank
      int const stored = std::min<int>(expected.size(), capacity);
      EXPECT_EQ(counts(l, j), stored) << "rank " << r.rank(l) << " from " << j;
      for (int s = 0; s < capacity; ++s)
        for (int c = 0; c < cols; ++c) {
          T const want = s < stored ? value_of<T>(j, expected[s], c) : T(-1);
          EXPECT_EQ(data(l, j, s, c), want) << "rank " << r.rank(l) << " from " << j;
        }
    }
}

// ---- distribute ----------------------------------------------------------------------------
// Rows of `wide` columns; with `partial`, row i of rank g holds (g + i) % (wide + 1) values
// and what follows them is junk, which must not matter. Local rank l receives, from each rank
// in increasing order, the rows it sent to l in their order. A length outside [0, wide] on
// one rank makes every process throw.
template <class T>
struct DistributeInput {
  Kokkos::View<int*, Mem> dest, lengths;
  Kokkos::View<T**, Kokkos::LayoutRight, Mem> rows;
};

inline int distributed_length(int g, int i, int wide, bool partial) {
  return partial ? (g + i) % (wide + 1) : wide;
}

/// This process's rows: row i of rank g to dest_of(g, i), its values value_of(g, i, c) + shift.
template <class T>
DistributeInput<T> distribute_input(loom::Ranks const& r, int wide, bool partial, T shift = 0) {
  std::vector<std::int64_t> offsets{0};
  for (int l = 0; l < r.local_count(); ++l)
    offsets.push_back(offsets.back() + rows_of(r.rank(l), r.size()));
  std::int64_t const n = offsets.back();
  DistributeInput<T> in{Kokkos::View<int*, Mem>("dest", n), Kokkos::View<int*, Mem>("lengths", n),
                        Kokkos::View<T**, Kokkos::LayoutRight, Mem>("rows", n, wide)};
  auto hd = Kokkos::create_mirror_view(in.dest);
  auto hl = Kokkos::create_mirror_view(in.lengths);
  auto hr = Kokkos::create_mirror_view(in.rows);
  for (int l = 0; l < r.local_count(); ++l)
    for (int i = 0; i < rows_of(r.rank(l), r.size()); ++i) {
      std::int64_t const k = offsets[l] + i;
      hd(k) = dest_of(r.rank(l), i, r.size());
      hl(k) = distributed_length(r.rank(l), i, wide, partial);
      for (int c = 0; c < wide; ++c)
        hr(k, c) = c < hl(k) ? value_of<T>(r.rank(l), i, c) + shift : T(-7);
    }
  Kokkos::deep_copy(in.dest, hd);
  Kokkos::deep_copy(in.lengths, hl);
  Kokkos::deep_copy(in.rows, hr);
  return in;
}

/// The rows of distribute_input() as each local rank must receive them.
template <class T>
void expect_distributed(loom::Ranks const& r, loom::Distributed<T, Mem> const& got, int wide,
                        bool partial, T shift = 0) {
  auto const data = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), got.rows);
  EXPECT_EQ(got.offsets.size(), std::size_t(r.local_count() + 1));
  for (int l = 0; l < r.local_count() && got.offsets.size() == std::size_t(r.local_count() + 1);
       ++l) {
    std::int64_t k = got.offsets[l];
    for (int g = 0; g < r.size(); ++g)
      for (int i : rows_to(g, r.rank(l), r.size())) {
        for (int c = 0; c < distributed_length(g, i, wide, partial) && k < got.offsets[l + 1]; ++c)
          EXPECT_EQ(data(k, c), value_of<T>(g, i, c) + shift)
              << "rank " << r.rank(l) << " from " << g << " row " << i << " value " << c;
        ++k;
      }
    EXPECT_EQ(k, got.offsets[l + 1]) << "rank " << r.rank(l);
  }
}

template <class T>
void check_distribute(loom::Ranks const& r, bool partial) {
  int const wide = 5;
  auto const in = distribute_input<T>(r, wide, partial);
  auto const got = partial ? loom::distribute(Exec(), r, in.dest, in.rows, in.lengths)
                           : loom::distribute(Exec(), r, in.dest, in.rows);
  expect_distributed(r, got, wide, partial);
  if (partial && r.local_count() > 0) {
    if (r.rank(0) == 0 && in.dest.extent(0) > 0)
      Kokkos::deep_copy(Kokkos::subview(in.lengths, 0), wide + 1);
    EXPECT_THROW(loom::distribute(Exec(), r, in.dest, in.rows, in.lengths), loom::Error);
  }
}

// The plan (loom::Distributor) built once, then run on payloads of different widths and values
// after its destinations were overwritten: each time what distribute() gives, bit for bit. A
// destination out of range on one rank, or a payload of another length, makes every process
// throw.
template <class T>
void check_distributor(loom::Ranks const& r) {
  auto in = distribute_input<T>(r, 3, false);
  loom::Distributor<Exec> plan(Exec(), r, in.dest);
  auto const dest = in.dest;
  Kokkos::deep_copy(in.dest, -1); // the plan keeps what it needs
  int run = 0;
  for (int wide : {3, 1, 4}) {
    T const shift = static_cast<T>(10 * run++);
    auto const payload = distribute_input<T>(r, wide, false, shift);
    auto const got = plan.distribute(payload.rows);
    expect_distributed(r, got, wide, false, shift);
    auto const direct = loom::distribute(Exec(), r, payload.dest, payload.rows);
    EXPECT_EQ(got.offsets, direct.offsets);
    auto const a = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), got.rows);
    auto const b = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), direct.rows);
    ASSERT_EQ(a.extent(0), b.extent(0));
    for (std::size_t k = 0; k < a.extent(0); ++k)
      for (int c = 0; c < wide; ++c)
        ASSERT_EQ(a(k, c), b(k, c)) << "row " << k;
    // The same rows given by a function of the source row: here their columns reversed.
    auto const rows = payload.rows;
    auto const by_function = plan.template distribute<T>(
        wide, KOKKOS_LAMBDA(std::int64_t i, std::int64_t c) { return rows(i, wide - 1 - c); });
    EXPECT_EQ(by_function.offsets, direct.offsets);
    auto const f = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), by_function.rows);
    ASSERT_EQ(f.extent(0), b.extent(0));
    ASSERT_EQ(f.extent(1), std::size_t(wide));
    for (std::size_t k = 0; k < f.extent(0); ++k)
      for (int c = 0; c < wide; ++c)
        ASSERT_EQ(f(k, c), b(k, wide - 1 - c)) << "row " << k;
  }
  bool const first_process = r.local_count() > 0 && r.rank(0) == 0;
  Kokkos::View<T**, Kokkos::LayoutRight, Mem> other("other", dest.extent(0) + first_process, 2);
  EXPECT_THROW(plan.distribute(other), loom::Error);
  if (first_process && dest.extent(0) > 0)
    Kokkos::deep_copy(Kokkos::subview(dest, 0), r.size());
  EXPECT_THROW(loom::Distributor<Exec>(Exec(), r, dest), loom::Error);
}

// Nothing to send anywhere: every row dropped.
inline void check_exchange_empty(loom::Ranks const& r) {
  Kokkos::View<int*, Mem> dest("dest", 5 * r.local_count());
  Kokkos::deep_copy(dest, -1);
  Kokkos::View<long*, Mem> rows("rows", 5 * r.local_count());
  auto in = loom::spread(rows, r);
  loom::Capacity cap(3);
  auto got = loom::exchange(r, loom::route(r, dest, rows, in.offsets(), cap));
  auto data = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), got.data);
  auto counts = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), got.counts);
  for (int l = 0; l < r.local_count(); ++l)
    for (int j = 0; j < r.size(); ++j) {
      EXPECT_EQ(counts(l, j), 0);
      for (int s = 0; s < 3; ++s)
        EXPECT_EQ(data(l, j, s, 0), -1);
    }
  EXPECT_EQ(cap.needed(), 0);
}

inline void check_exchange_dense(loom::Ranks const& r) {
  int const m = 3;
  Kokkos::View<long***, Kokkos::LayoutRight, Mem> buf("buf", r.local_count(), r.size(), m);
  auto h = Kokkos::create_mirror_view(buf);
  for (int l = 0; l < r.local_count(); ++l)
    for (int j = 0; j < r.size(); ++j)
      for (int k = 0; k < m; ++k)
        h(l, j, k) = r.rank(l) * 100000L + j * 10L + k;
  Kokkos::deep_copy(buf, h);
  auto out = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), loom::exchange_dense(r, buf));
  for (int l = 0; l < r.local_count(); ++l)
    for (int j = 0; j < r.size(); ++j)
      for (int k = 0; k < m; ++k)
        EXPECT_EQ(out(l, j, k), j * 100000L + r.rank(l) * 10L + k);
}

// ---- spmd and Capacity ---------------------------------------------------------------------
// Sums, per rank, column 0 of the rows received.
struct SumProgram {
  loom::Capacity slots;
  int* runs;
  loom::Spread<Kokkos::View<double*, Mem>> operator()(loom::Ranks const& r,
                                                      Input<double> const& in) const {
    ++*runs;
    auto got = loom::exchange(r, loom::route(r, in.dest, in.rows, in.offsets, slots));
    auto data = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), got.data);
    Kokkos::View<double*, Mem> sums("sums", r.local_count());
    auto hs = Kokkos::create_mirror_view(sums);
    for (int l = 0; l < r.local_count(); ++l) {
      hs(l) = 0;
      for (int j = 0; j < r.size(); ++j)
        for (int s = 0; s < got.capacity(); ++s)
          if (data(l, j, s, 0) >= 0)
            hs(l) += data(l, j, s, 0);
    }
    Kokkos::deep_copy(sums, hs);
    return loom::spread(sums, r);
  }
};

inline void check_spmd_capacity(loom::Ranks const& r) {
  auto in = make_input<double>(r);
  int const initial = 4;
  loom::Capacity slots(initial);
  int runs = 0;
  auto program = loom::spmd(SumProgram{slots, &runs}, r);
  auto sums = loom::gather_to_host(program(in));
  std::int64_t needed = 0;
  for (int g = 0; g < r.size(); ++g)
    needed = std::max(needed, needed_by(g, r.size()));
  int expected_cap = initial;
  while (expected_cap < needed)
    expected_cap *= 2;
  int const expected_reruns = needed > initial ? 1 : 0;
  EXPECT_EQ(slots.value(), expected_cap);
  EXPECT_EQ(program.last_reruns(), expected_reruns);
  EXPECT_EQ(runs, 1 + expected_reruns);
  EXPECT_EQ(static_cast<int>(sums.extent(0)), r.size());
  for (int to = 0; to < r.size(); ++to) {
    double want = 0;
    for (int g = 0; g < r.size(); ++g)
      for (int i : rows_to(g, to, r.size()))
        want += value_of<double>(g, i, 0);
    EXPECT_EQ(sums(to), want) << "rank " << to;
  }
  // The grown size is kept: no rerun on the next call.
  program(in);
  EXPECT_EQ(program.last_reruns(), 0);
  EXPECT_EQ(slots.value(), expected_cap);
  EXPECT_EQ(program.total_reruns(), expected_reruns);
}

// ---- collectives ---------------------------------------------------------------------------
inline double double_of(int g) {
  return 1.0 / (g + 3) + (g % 2 ? 1e12 : -1e12) * (g % 5);
}

// Returns the all_sum so that the MPI test can compare its bits between processes.
inline double check_all_reductions(loom::Ranks const& r) {
  Kokkos::View<double*, Mem> d("d", r.local_count());
  Kokkos::View<long*, Mem> i("i", r.local_count());
  auto hd = Kokkos::create_mirror_view(d);
  auto hi = Kokkos::create_mirror_view(i);
  for (int l = 0; l < r.local_count(); ++l)
    hd(l) = double_of(r.rank(l)), hi(l) = (r.rank(l) * 37L) % 101 - 50;
  Kokkos::deep_copy(d, hd);
  Kokkos::deep_copy(i, hi);
  double want = double_of(0);
  long isum = -50, imax = -50, imin = -50;
  for (int g = 1; g < r.size(); ++g) {
    want += double_of(g);
    long const v = (g * 37L) % 101 - 50;
    isum += v, imax = std::max(imax, v), imin = std::min(imin, v);
  }
  double const got = r.all_sum(d);
  EXPECT_EQ(std::memcmp(&got, &want, sizeof got), 0) << got << " vs " << want;
  EXPECT_EQ(r.all_sum(i), isum);
  EXPECT_EQ(r.all_max(i), imax);
  EXPECT_EQ(r.all_min(i), imin);
  double dmax = double_of(0), dmin = double_of(0);
  for (int g = 1; g < r.size(); ++g)
    dmax = std::max(dmax, double_of(g)), dmin = std::min(dmin, double_of(g));
  EXPECT_EQ(r.all_max(d), dmax);
  EXPECT_EQ(r.all_min(d), dmin);
  EXPECT_TRUE(r.any(r.process_rank() == r.process_count() - 1));
  EXPECT_FALSE(r.any(false));
  // One value per process, added in process order.
  int const P = r.process_count(), p = r.process_rank();
  auto const sums = r.process_sums<2>({double_of(p), double(p)});
  double want_process = double_of(0), process_max = double_of(0), process_min = double_of(0);
  for (int q = 1; q < P; ++q) {
    want_process += double_of(q);
    process_max = std::max(process_max, double_of(q));
    process_min = std::min(process_min, double_of(q));
  }
  EXPECT_EQ(std::memcmp(&sums[0], &want_process, sizeof want_process), 0);
  EXPECT_EQ(sums[1], P * (P - 1) / 2.0);
  EXPECT_EQ(r.process_sum(double_of(p)), want_process);
  EXPECT_EQ(r.process_max(double_of(p)), process_max);
  EXPECT_EQ(r.process_min(double_of(p)), process_min);
  auto const counts = r.process_sums(std::vector<std::int64_t>{p, 1, -p});
  auto const maxima = r.process_maxima(std::vector<double>{double_of(p), -double(p)});
  EXPECT_EQ(counts, (std::vector<std::int64_t>{P * (P - 1) / 2, P, -P * (P - 1) / 2}));
  EXPECT_EQ(maxima, (std::vector<double>{process_max, 0.0}));
  auto const minima = r.process_minima(std::vector<std::int64_t>{p, -p, 7});
  EXPECT_EQ(minima, (std::vector<std::int64_t>{0, -(P - 1), 7}));
  auto const flags = r.process_maxima(std::vector<std::int64_t>{p == P - 1, 0});
  EXPECT_EQ(flags, (std::vector<std::int64_t>{1, 0}));
  return got;
}

// ---- row blocks and halo -------------------------------------------------------------------
// Process p holds rows_of_process(p) rows (process 1 none); it references every global row j
// with j % 3 == p % 3 (some twice), its own rows included. Row j holds (j + 0.5, −j).
inline std::int64_t rows_of_process(int p) {
  return p == 1 ? 0 : 3 + 2 * p;
}

inline void check_row_blocks_and_halo(loom::Ranks const& r) {
  int const P = r.process_count(), p = r.process_rank();
  loom::RowBlocks const blocks(r, rows_of_process(p));
  std::int64_t first = 0;
  for (int q = 0; q < p; ++q)
    first += rows_of_process(q);
  std::int64_t total = 0;
  for (int q = 0; q < P; ++q)
    total += rows_of_process(q);
  EXPECT_EQ(blocks.process(), p);
  EXPECT_EQ(blocks.process_count(), P);
  EXPECT_EQ(blocks.begin(), first);
  EXPECT_EQ(blocks.local_size(), rows_of_process(p));
  EXPECT_EQ(blocks.global_size(), total);
  for (int q = 0, j = 0; q < P; ++q)
    for (std::int64_t k = 0; k < rows_of_process(q); ++k, ++j)
      EXPECT_EQ(blocks.owner(j), q) << "row " << j;

  std::vector<int> columns, remote;
  for (int j = 0; j < total; ++j)
    if (j % 3 == p % 3) {
      columns.push_back(j);
      if (j % 2 == 0)
        columns.push_back(j);
      if (j < first || j >= first + rows_of_process(p))
        remote.push_back(j);
    }
  std::reverse(columns.begin(), columns.end()); // any order
  int const n = static_cast<int>(blocks.local_size()), c = static_cast<int>(columns.size());
  Kokkos::View<int*, Mem> global_columns("global_columns", c), extended_columns("extended", c);
  auto host_columns = Kokkos::create_mirror_view(global_columns);
  for (int e = 0; e < c; ++e)
    host_columns(e) = columns[e];
  Kokkos::deep_copy(global_columns, host_columns);
  Exec space;
  loom::Halo<Exec> const halo(space, r, blocks, global_columns, extended_columns);
  int const h = halo.size();
  ASSERT_EQ(h, P == 1 ? 0 : static_cast<int>(remote.size()));
  auto const remote_columns =
      Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace{}, halo.remote_columns());
  auto const extended = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace{}, extended_columns);
  for (int k = 0; k < h; ++k)
    EXPECT_EQ(remote_columns(k), remote[k]);
  for (int e = 0; e < c; ++e) { // the extended row of each column names the same global row
    int const x = extended(e);
    EXPECT_EQ(x < n ? first + x : remote_columns(x - n), columns[e]);
  }
  // update: an extended vector of 2 components; fetch: the halo rows alone, 1 component.
  Kokkos::View<double**, Kokkos::LayoutLeft, Mem> vector("vector", n + h, 2);
  Kokkos::View<double*, Mem> local("local", n), fetched("fetched", h);
  auto host_vector = Kokkos::create_mirror_view(vector);
  auto host_local = Kokkos::create_mirror_view(local);
  for (int i = 0; i < n + h; ++i)
    for (int k = 0; k < 2; ++k)
      host_vector(i, k) = i < n ? (k == 0 ? first + i + 0.5 : -double(first + i)) : -1;
  for (int i = 0; i < n; ++i)
    host_local(i) = first + i + 0.5;
  Kokkos::deep_copy(vector, host_vector);
  Kokkos::deep_copy(local, host_local);
  for (int twice = 0; twice < 2; ++twice) // the second reuses the plan's buffers
    halo.update(space, vector);
  halo.fetch(space, local, fetched);
  Kokkos::deep_copy(host_vector, vector);
  auto const host_fetched = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace{}, fetched);
  for (int k = 0; k < h; ++k) {
    EXPECT_EQ(host_vector(n + k, 0), remote[k] + 0.5);
    EXPECT_EQ(host_vector(n + k, 1), -double(remote[k]));
    EXPECT_EQ(host_fetched(k), remote[k] + 0.5);
  }
}

// ---- scatter_add ---------------------------------------------------------------------------
inline void check_scatter_add(loom::Ranks const& r) {
  int const n = 1000 + r.first_local(), m = 13;
  Kokkos::View<long*, Mem> target("target", m), vals("vals", n);
  Kokkos::View<int*, Mem> idx("idx", n);
  auto hv = Kokkos::create_mirror_view(vals);
  auto hi = Kokkos::create_mirror_view(idx);
  std::vector<long> want(m, 0);
  for (int k = 0; k < n; ++k) {
    hv(k) = k * 3L + 1;
    hi(k) = (k * 7) % (m + 1) - 1; // -1 skipped
    if (hi(k) >= 0)
      want[hi(k)] += hv(k);
  }
  Kokkos::deep_copy(vals, hv);
  Kokkos::deep_copy(idx, hi);
  loom::scatter_add(target, idx, vals);
  auto ht = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), target);
  for (int k = 0; k < m; ++k)
    EXPECT_EQ(ht(k), want[k]);
  // An index past the end is reported (locally).
  hi(0) = m;
  Kokkos::deep_copy(idx, hi);
  EXPECT_THROW(loom::scatter_add(target, idx, vals), loom::Error);
}

// ---- while_loop ----------------------------------------------------------------------------
// Local rank l wants another round while round < its global rank: size-1 rounds in all.
inline void check_while_loop(loom::Ranks const& r) {
  Kokkos::View<int*, Mem> rank_of("rank_of", r.local_count());
  auto h = Kokkos::create_mirror_view(rank_of);
  for (int l = 0; l < r.local_count(); ++l)
    h(l) = r.rank(l);
  Kokkos::deep_copy(rank_of, h);
  auto cond = [&](int round) {
    Kokkos::View<bool*, Kokkos::HostSpace> wish("wish", r.local_count());
    for (int l = 0; l < r.local_count(); ++l)
      wish(l) = round < h(l);
    return wish;
  };
  int const rounds = loom::while_loop(
      r, cond, [](int round) { return round + 1; }, 0);
  EXPECT_EQ(rounds, r.size() - 1);
  // A bool per process: the last process wants 3 rounds.
  int const three = loom::while_loop(
      r, [&](int round) { return r.process_rank() == r.process_count() - 1 && round < 3; },
      [](int round) { return round + 1; }, 0);
  EXPECT_EQ(three, 3);
}

// ---- spread family -------------------------------------------------------------------------
inline std::int64_t split_first(std::int64_t n, int parts, int p) {
  return p * (n / parts) + std::min<std::int64_t>(p, n % parts);
}

inline void check_spread(loom::Ranks const& r) {
  for (std::int64_t n :
       {std::int64_t(0), std::int64_t(1), std::int64_t(r.size() - 1), std::int64_t(r.size()),
        std::int64_t(2 * r.size() + 3), std::int64_t(17)}) {
    // rank 1
    Kokkos::View<long*, Kokkos::HostSpace> whole("whole", n);
    for (std::int64_t i = 0; i < n; ++i)
      whole(i) = (i * 13) % 7 - 3 + i;
    auto s = loom::spread_host(whole, r);
    auto hv = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), s.value());
    std::int64_t const a = split_first(n, r.size(), r.first_local());
    EXPECT_EQ(static_cast<std::int64_t>(hv.extent(0)),
              split_first(n, r.size(), r.first_local() + r.local_count()) - a);
    for (int l = 0; l <= r.local_count(); ++l)
      EXPECT_EQ(s.offsets()[l], split_first(n, r.size(), r.first_local() + l) - a);
    for (std::size_t i = 0; i < hv.extent(0); ++i)
      EXPECT_EQ(hv(i), whole(a + i));
    auto back = loom::gather_to_host(s);
    EXPECT_EQ(static_cast<std::int64_t>(back.extent(0)), n);
    for (std::int64_t i = 0; i < n && i < static_cast<std::int64_t>(back.extent(0)); ++i)
      EXPECT_EQ(back(i), whole(i));
    long sum = 0, mx = 0, mn = 0;
    for (std::int64_t i = 0; i < n; ++i) {
      sum += whole(i);
      mx = i ? std::max(mx, whole(i)) : whole(i);
      mn = i ? std::min(mn, whole(i)) : whole(i);
    }
    EXPECT_EQ(s.sum(), sum);
    if (n > 0) {
      EXPECT_EQ(s.max(), mx);
      EXPECT_EQ(s.min(), mn);
      EXPECT_DOUBLE_EQ(s.mean(), double(sum) / n);
    } else {
      EXPECT_THROW(s.max(), loom::Error);
    }

    // rank 2, compile-time columns; this process passes its own block to spread().
    Kokkos::View<double* [2], Kokkos::HostSpace> whole2("whole2", n);
    for (std::int64_t i = 0; i < n; ++i)
      whole2(i, 0) = i * 0.5, whole2(i, 1) = -double(i);
    auto s2 = loom::spread_host(whole2, r);
    auto back2 = loom::gather_to_host(loom::spread(s2.value(), r));
    EXPECT_EQ(static_cast<std::int64_t>(back2.extent(0)), n);
    for (std::int64_t i = 0; i < n && i < static_cast<std::int64_t>(back2.extent(0)); ++i) {
      EXPECT_EQ(back2(i, 0), whole2(i, 0));
      EXPECT_EQ(back2(i, 1), whole2(i, 1));
    }
    double dsum = 0; // per-rank partials in rank order, each in row order (as loom does)
    for (int g = 0; g < r.size(); ++g) {
      double part = 0;
      for (std::int64_t i = split_first(n, r.size(), g); i < split_first(n, r.size(), g + 1); ++i)
        part += whole2(i, 0), part += whole2(i, 1);
      dsum = g ? dsum + part : part;
    }
    EXPECT_DOUBLE_EQ(s2.sum(), dsum);
  }
  // Explicit counts per local rank: local rank l holds l+1 rows.
  std::vector<std::int64_t> counts;
  std::int64_t total = 0;
  for (int l = 0; l < r.local_count(); ++l)
    counts.push_back(r.rank(l) % 3), total += counts.back();
  Kokkos::View<int*, Mem> block("block", total);
  auto hb = Kokkos::create_mirror_view(block);
  std::int64_t k = 0;
  for (int l = 0; l < r.local_count(); ++l)
    for (int i = 0; i < counts[l]; ++i)
      hb(k++) = r.rank(l) * 10 + i;
  Kokkos::deep_copy(block, hb);
  auto s = loom::spread(block, r, counts);
  auto back = loom::gather_to_host(s);
  std::vector<int> want;
  for (int g = 0; g < r.size(); ++g)
    for (int i = 0; i < g % 3; ++i)
      want.push_back(g * 10 + i);
  EXPECT_EQ(back.extent(0), want.size());
  for (std::size_t i = 0; i < want.size() && i < back.extent(0); ++i)
    EXPECT_EQ(back(i), want[i]);
}

// ---- errors --------------------------------------------------------------------------------
// A bad argument on the last process only: every process throws the same collective error.
inline void check_errors(loom::Ranks const& r) {
  bool const last = r.process_rank() == r.process_count() - 1;
  std::string const expected =
      r.process_count() > 1 ? "process " + std::to_string(r.process_count() - 1) + ": " : "";
  try {
    r.agree(!last, "bad on the last process");
    ADD_FAILURE() << "agree did not throw";
  } catch (loom::Error const& e) {
    EXPECT_TRUE(e.collective());
    EXPECT_EQ(std::string(e.what()), expected + "bad on the last process");
  }
  // route: a destination out of range on the last process only.
  auto in = make_input<long>(r);
  if (last && in.dest.extent(0) > 0)
    Kokkos::deep_copy(Kokkos::subview(in.dest, 0), r.size() + 5);
  bool const bad = r.any(last && in.dest.extent(0) > 0);
  loom::Capacity cap(64);
  bool threw = false;
  try {
    loom::route(r, in.dest, in.rows, in.offsets, cap);
  } catch (loom::Error const& e) {
    threw = e.collective();
  }
  EXPECT_EQ(threw, bad);
  // route: wrong offsets on the last process only.
  auto in2 = make_input<long>(r);
  if (last)
    in2.offsets.push_back(in2.offsets.back());
  EXPECT_THROW(loom::route(r, in2.dest, in2.rows, in2.offsets, cap), loom::Error);
  // exchange: a different capacity on the last process only (MPI) / a bad shape (boxes).
  auto in3 = make_input<long>(r);
  loom::Capacity other(last ? 8 : 4);
  auto routed = loom::route(r, in3.dest, in3.rows, in3.offsets, other);
  if (r.process_count() > 1) {
    EXPECT_THROW(loom::exchange(r, routed), loom::Error);
  } else {
    routed.counts = decltype(routed.counts)("bad", 1, 1);
    if (r.size() > 1) {
      EXPECT_THROW(loom::exchange(r, routed), loom::Error);
    }
  }
  // A collective error inside spmd reaches every process.
  auto failing = loom::spmd(
      [](loom::Ranks const& rr, int) {
        rr.agree(rr.process_rank() != 0, "no");
        return 0;
      },
      r);
  EXPECT_THROW(failing(1), loom::Error);
}

} // namespace loom_test
