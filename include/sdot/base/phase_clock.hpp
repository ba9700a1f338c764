#pragma once
// The phases of a computation, timed: each end() records the seconds since the previous one
// (or the start) and reports them to the caller's callback, if any (progress output).
#include <Kokkos_Timer.hpp>

#include <functional>
#include <map>
#include <string>
#include <utility>

namespace sdot::detail {

/// What a caller is told when a phase ends: its name and its seconds on this process.
using PhaseEnded = std::function<void(std::string const& phase, double seconds)>;

class PhaseClock {
public:
  PhaseClock(std::map<std::string, double>& seconds, PhaseEnded ended)
      : seconds_(seconds), ended_(std::move(ended)) {}
  /// Ends phase `name` (the caller has fenced its work).
  void end(std::string const& name) {
    double const s = timer_.seconds();
    seconds_[name] = s;
    if (ended_)
      ended_(name, s);
    timer_.reset();
  }

private:
  std::map<std::string, double>& seconds_;
  PhaseEnded ended_;
  Kokkos::Timer timer_;
};

} // namespace sdot::detail
