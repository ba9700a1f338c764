// loom::Capacity and the registration of the capacities used during an spmd run.
#include <loom/capacity.hpp>
#include <loom/error.hpp>

#include <algorithm>

namespace loom {

namespace {
thread_local detail::CapacityRun* current_run = nullptr;
}

Capacity::Capacity(int initial) : state_(std::make_shared<State>()) {
  if (initial < 1)
    throw Error("loom::Capacity: the initial size must be at least 1", true);
  state_->value = initial;
}

void Capacity::report(std::int64_t needed) const {
  if (detail::CapacityRun* run = current_run) {
    auto const known = std::find_if(run->used.begin(), run->used.end(),
                                    [&](Capacity const& c) { return c.same(*this); });
    if (known == run->used.end()) {
      state_->needed = 0; // a new run: forget what earlier runs or calls reported
      run->used.push_back(*this);
    }
  }
  state_->needed = std::max(state_->needed, needed);
}

bool Capacity::grow_to(std::int64_t needed) const {
  bool grew = false;
  while (state_->value < needed) {
    if (state_->value > (1 << 29))
      throw Error("loom::Capacity: size overflow (more than 2^30 slots needed)", true);
    state_->value *= 2;
    grew = true;
  }
  return grew;
}

void Capacity::set(int value) const {
  if (value < 1)
    throw Error("loom::Capacity::set: the size must be at least 1", true);
  state_->value = value;
}

namespace detail {
CapacityRun* current_capacity_run() {
  return current_run;
}
CapacityRunScope::CapacityRunScope() : previous_(current_run) {
  current_run = &run_;
}
CapacityRunScope::~CapacityRunScope() {
  current_run = previous_;
}
} // namespace detail

} // namespace loom
