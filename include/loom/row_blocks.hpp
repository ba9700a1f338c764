#pragma once
/// @file
/// loom::RowBlocks: which process holds which rows of a vector whose rows are split over the
/// processes in consecutive blocks, in process order.

#include <loom/ranks.hpp>

#include <algorithm>
#include <cstdint>
#include <vector>

namespace loom {

/// How N rows are split over the processes: process p holds the global rows
/// [begin(p), end(p)), the blocks following each other in process order. The one type that
/// numbers seeds, matrix rows and file rows globally from per-process counts.
class RowBlocks {
public:
  /// One process holding no row.
  RowBlocks() = default;

  /// Collective over the processes of `ranks`: this process holds `local_size` rows (all its
  /// ranks together).
  RowBlocks(Ranks const& ranks, std::int64_t local_size) : process_(ranks.process_rank()) {
    auto const sizes = ranks.allgather(std::vector<std::int64_t>{local_size});
    offsets_.assign(1, 0);
    for (auto const s : sizes)
      offsets_.push_back(offsets_.back() + s);
  }

  /// First global row of this process.
  std::int64_t begin() const { return offsets_[process_]; }
  /// One past the last global row of this process.
  std::int64_t end() const { return offsets_[process_ + 1]; }
  /// Rows of this process.
  std::int64_t local_size() const { return end() - begin(); }
  /// First global row of process `p`.
  std::int64_t begin(int p) const { return offsets_[p]; }
  /// One past the last global row of process `p`.
  std::int64_t end(int p) const { return offsets_[p + 1]; }
  /// Rows of all the processes.
  std::int64_t global_size() const { return offsets_.back(); }
  /// This process's rank among the processes.
  int process() const { return process_; }
  /// Number of processes.
  int process_count() const { return static_cast<int>(offsets_.size()) - 1; }
  /// The process count + 1 offsets: begin(0), …, begin(P − 1), global_size().
  std::vector<std::int64_t> const& offsets() const { return offsets_; }
  /// Process holding global row `j` (0 ≤ j < global_size()).
  int owner(std::int64_t j) const {
    auto const it = std::upper_bound(offsets_.begin(), offsets_.end(), j);
    return static_cast<int>(it - offsets_.begin()) - 1;
  }

private:
  std::vector<std::int64_t> offsets_{0, 0};
  int process_ = 0;
};

} // namespace loom
