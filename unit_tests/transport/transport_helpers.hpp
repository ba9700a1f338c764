#pragma once
// Helpers of the transport tests: host copies of sparse matrices, measures of a cloud at given
// weights, and a stand-in for a distributed diagram (every process computes the whole diagram
// and keeps its block of cells).

#include <clouds.hpp>

#include <sdot/jacobian.hpp>
#include <sdot/optimal_transport.hpp>

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

namespace sdot_test {

/// A sparse matrix on the host: (row, global column) -> value.
using SparseEntries = std::map<std::pair<int, int>, double>;

template <class Matrix>
SparseEntries host_entries(Matrix const& m, int first_row = 0) {
  auto row_map = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), m.graph.row_map);
  auto entries = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), m.graph.entries);
  auto values = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), m.values);
  SparseEntries out;
  for (int i = 0; i < m.numRows(); ++i)
    for (int k = row_map(i); k < row_map(i + 1); ++k)
      out[{first_row + i, entries(k)}] += values(k);
  return out;
}

template <class T>
Kokkos::View<T*> view_of(std::vector<T> const& v, char const* label = "test::values") {
  Kokkos::View<T*> out(std::string(label), v.size());
  auto h = Kokkos::create_mirror_view(out);
  for (std::size_t i = 0; i < v.size(); ++i)
    h(i) = v[i];
  Kokkos::deep_copy(out, h);
  return out;
}

/// Process p's block of n rows: [n p / P, n (p+1) / P).
inline std::pair<int, int> block_of(int n, loom::Ranks const& ranks) {
  std::int64_t const P = ranks.process_count(), p = ranks.process_rank();
  return {static_cast<int>(n * p / P), static_cast<int>(n * (p + 1) / P)};
}

/// The transport solver's view of a diagram spread over the processes, emulated: every
/// process computes the whole diagram (from the weights of all processes) and exposes the
/// block of seeds it owns, with edge sources in global numbering. Stands for the distributed
/// PowerDiagram in tests of the distributed Jacobian and solver.
class ReplicatedCells {
public:
  using execution_space = Kokkos::DefaultExecutionSpace;
  using memory_space = execution_space::memory_space;
  using positions_type = sdot::Points<memory_space>;
  using scalars_type = Kokkos::View<double*, memory_space>;

  ReplicatedCells(loom::Ranks ranks, Cloud const& all, std::vector<sdot::HalfSpace> hs,
                  sdot::PowerDiagramOptions options = {})
      : ranks_(ranks), all_(all), hs_(std::move(hs)), options_(options),
        area_(sdot::domain_polygon(hs_).area) {
    std::tie(begin_, end_) = block_of(static_cast<int>(all.x.size()), ranks_);
    Cloud mine;
    mine.x.assign(all.x.begin() + begin_, all.x.begin() + end_);
    mine.w.assign(all.w.begin() + begin_, all.w.begin() + end_);
    positions_ = positions_view(mine);
  }

  execution_space const& execution_space_instance() const { return space_; }
  loom::Ranks const& ranks() const { return ranks_; }
  positions_type positions() const { return positions_; }
  double domain_area() const { return area_; }
  int begin() const { return begin_; }

  /// Never gives up (abandon_below ignored), so abandoned() is false on every process.
  void set_weights(scalars_type local, double /*abandon_below*/ = 0) {
    auto mine = to_vector(local);
    std::vector<std::int64_t> counts;
    for (int p = 0; p < ranks_.process_count(); ++p) {
      int const n = static_cast<int>(all_.x.size());
      std::int64_t const P = ranks_.process_count();
      counts.push_back(n * (p + 1) / P - n * p / P);
    }
    std::vector<double> w(all_.x.size());
    ranks_.allgatherv_bytes(mine.data(), w.data(), counts, sizeof(double));
    Cloud c = all_;
    c.w = w;
    diagram_.reset();
    diagram_.emplace(positions_view(c), weights_view(c), hs_, options_);
  }

  bool abandoned() const { return false; }

  scalars_type measures() {
    auto all = diagram_->measures();
    scalars_type out("test::block_measures", end_ - begin_);
    Kokkos::deep_copy(out, Kokkos::subview(all, std::make_pair(begin_, end_)));
    return out;
  }

  sdot::CellPolygons<memory_space> cell_polygons() {
    auto all = diagram_->cell_polygons();
    auto offsets = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), all.offsets);
    int const first = offsets(begin_), last = offsets(end_);
    sdot::CellPolygons<memory_space> mine;
    mine.offsets = Kokkos::View<int*, memory_space>("test::offsets", end_ - begin_ + 1);
    auto h = Kokkos::create_mirror_view(mine.offsets);
    for (int i = begin_; i <= end_; ++i)
      h(i - begin_) = offsets(i) - first;
    Kokkos::deep_copy(mine.offsets, h);
    mine.vertices = sdot::Points<memory_space>("test::vertices", last - first);
    mine.edge_sources = Kokkos::View<int*, memory_space>("test::edge_sources", last - first);
    Kokkos::deep_copy(mine.vertices,
                      Kokkos::subview(all.vertices, std::make_pair(first, last), Kokkos::ALL));
    Kokkos::deep_copy(mine.edge_sources,
                      Kokkos::subview(all.edge_sources, std::make_pair(first, last)));
    return mine;
  }

private:
  execution_space space_;
  loom::Ranks ranks_;
  Cloud all_;
  std::vector<sdot::HalfSpace> hs_;
  sdot::PowerDiagramOptions options_;
  double area_;
  int begin_ = 0, end_ = 0;
  positions_type positions_;
  std::optional<sdot::PowerDiagram<>> diagram_;
};

} // namespace sdot_test
