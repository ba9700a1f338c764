#pragma once
/// @file
/// loom::spmd: runs a program per rank, reruns it with grown Capacities when one overflowed.

#include <loom/capacity.hpp>
#include <loom/error.hpp>
#include <loom/ranks.hpp>

#include <exception>
#include <type_traits>
#include <utility>

namespace loom {

namespace detail {
/// After a run: agrees over all ranks on the sizes needed by the Capacities used (maximum),
/// grows the overflowed ones, and returns true if the program must run again. Collective.
bool grow_capacities(Ranks const& ranks, CapacityRun& run);
/// Policy for an exception escaping a program run by spmd: with several processes, prints
/// `what` with the process rank to stderr and calls the process group's abort() (MPI_Abort
/// under MPI; the other processes may be waiting in a collective); otherwise returns (and the
/// caller rethrows).
void abort_if_distributed(Ranks const& ranks, char const* what);
} // namespace detail

/// A program bound to its ranks (made by loom::spmd).
///
/// Calling it with arguments runs `program(ranks, args...)` on every process (each process
/// runs it once for all of its local ranks). When the program returns, the processes agree
/// on whether a Capacity used during the run overflowed on any rank; if so, each overflowed
/// Capacity is doubled (repeatedly, until it holds the largest size needed on any rank) and
/// the program runs again from the start with the same arguments. The grown sizes are kept
/// for later calls.
///
/// Errors: a collective loom::Error (every rank throws it, see Ranks::agree) propagates to
/// the caller on every process. Any other exception escaping the program propagates when the
/// ranks live in one process (BoxRanks, or MPI with one process); with several processes it
/// prints a message naming the process and aborts the job (ProcessGroup::abort: MPI_Abort
/// under MPI), since the other processes could otherwise wait forever in a collective.
template <class Program>
class Spmd {
public:
  /// Binds `program` to `ranks`; a call throws a collective Error when the Capacities still
  /// overflow after `max_reruns` reruns.
  Spmd(Program program, Ranks ranks, int max_reruns = 16)
      : program_(std::move(program)), ranks_(std::move(ranks)), max_reruns_(max_reruns) {}

  /// Runs the program (collective); returns what it returns.
  template <class... Args>
  auto operator()(Args const&... args) {
    using Result = decltype(program_(ranks_, args...));
    last_reruns_ = 0;
    for (;;) {
      detail::CapacityRunScope scope;
      if constexpr (std::is_void<Result>::value) {
        guarded([&]() {
          program_(ranks_, args...);
          return 0;
        });
        if (!again(scope))
          return;
      } else {
        Result result = guarded([&]() { return program_(ranks_, args...); });
        if (!again(scope))
          return result;
      }
    }
  }

  /// Reruns caused by overflowed Capacities during the last call.
  int last_reruns() const { return last_reruns_; }
  /// Reruns over all calls.
  int total_reruns() const { return total_reruns_; }
  /// The ranks the program runs on.
  Ranks const& ranks() const { return ranks_; }

private:
  template <class F>
  auto guarded(F&& f) -> decltype(f()) {
    try {
      return f();
    } catch (Error const& e) {
      if (!e.collective())
        detail::abort_if_distributed(ranks_, e.what());
      throw;
    } catch (std::exception const& e) {
      detail::abort_if_distributed(ranks_, e.what());
      throw;
    } catch (...) {
      detail::abort_if_distributed(ranks_, "unknown exception");
      throw;
    }
  }

  bool again(detail::CapacityRunScope& scope) {
    if (!detail::grow_capacities(ranks_, scope.run()))
      return false;
    ++last_reruns_;
    ++total_reruns_;
    if (last_reruns_ > max_reruns_)
      throw Error("loom::spmd: capacities still overflow after " + std::to_string(max_reruns_) +
                      " reruns",
                  true);
    return true;
  }

  Program program_;
  Ranks ranks_;
  int max_reruns_;
  int last_reruns_ = 0;
  int total_reruns_ = 0;
};

/// Binds `program` (called as `program(ranks, args...)`) to `ranks`; see Spmd.
template <class Program>
Spmd<Program> spmd(Program program, Ranks ranks, int max_reruns = 16) {
  return Spmd<Program>(std::move(program), std::move(ranks), max_reruns);
}

} // namespace loom
