#pragma once
/// @file
/// loom::Capacity: a size that is not known in advance (rows per destination of a route...).
/// A size found too small on any rank makes `loom::spmd` grow it on every rank and run the
/// program again; the grown size is kept for the next calls.

#include <cstdint>
#include <memory>
#include <vector>

namespace loom {

/// A size that grows when found too small.
///
/// Capacity is a handle: copies share the same size (a program may capture it by value).
/// Operations such as loom::route read `value()` and `report()` the size they needed. Inside
/// a `loom::spmd` run, every Capacity reported to is registered with the run; when the program
/// returns, the run agrees (maximum over all ranks) on the needed sizes, doubles every
/// overflowed Capacity until it holds the needed size, and reruns the program.
class Capacity {
public:
  /// A capacity of `initial` (at least 1).
  explicit Capacity(int initial = 1);

  /// The current size.
  int value() const { return state_->value; }
  /// The largest size reported since the last reset (this process only).
  std::int64_t needed() const { return state_->needed; }
  /// True when a reported size exceeded value() (this process only).
  bool overflowed() const { return state_->needed > state_->value; }
  /// Records that `needed` slots were needed; registers this Capacity with the current spmd
  /// run (if any) the first time it is reported to during that run.
  void report(std::int64_t needed) const;
  /// Doubles the value until it is at least `needed` (never shrinks). Returns true if it grew.
  bool grow_to(std::int64_t needed) const;
  /// Forgets the reported sizes.
  void reset_needed() const { state_->needed = 0; }
  /// Sets the value (at least 1).
  void set(int value) const;
  /// True when both handles share the same size.
  bool same(Capacity const& other) const { return state_ == other.state_; }

private:
  struct State {
    int value = 1;
    std::int64_t needed = 0;
  };
  std::shared_ptr<State> state_;
};

namespace detail {
/// The Capacities reported to during one spmd run (see spmd.hpp), in first-use order.
struct CapacityRun {
  std::vector<Capacity> used;
};
/// The innermost active run on this thread, or nullptr.
CapacityRun* current_capacity_run();
/// Makes `run` the current run for the lifetime of the object (runs nest).
class CapacityRunScope {
public:
  CapacityRunScope();
  ~CapacityRunScope();
  CapacityRunScope(CapacityRunScope const&) = delete;
  CapacityRunScope& operator=(CapacityRunScope const&) = delete;
  CapacityRun& run() { return run_; }

private:
  CapacityRun run_;
  CapacityRun* previous_;
};
} // namespace detail

} // namespace loom
