// loom::spmd: capacity agreement after a run and the policy for exceptions.
#include <loom/spmd.hpp>

#include <algorithm>
#include <cstdio>

namespace loom::detail {

bool grow_capacities(Ranks const& ranks, CapacityRun& run) {
  // Every process must have used the same Capacities in the same order (SPMD); agree on how
  // many first, so a process that used fewer still takes part in the same collective.
  std::vector<std::int64_t> count{static_cast<std::int64_t>(run.used.size())};
  count = ranks.process_maxima(count);
  std::vector<std::int64_t> needed(static_cast<std::size_t>(count[0]), 0);
  for (std::size_t i = 0; i < run.used.size(); ++i)
    needed[i] = run.used[i].needed();
  if (!needed.empty())
    needed = ranks.process_maxima(needed);
  bool grew = false;
  for (std::size_t i = 0; i < run.used.size(); ++i) {
    grew = run.used[i].grow_to(needed[i]) || grew;
    run.used[i].reset_needed();
  }
  // A process that used fewer Capacities must still rerun when the others do.
  if (run.used.size() < needed.size())
    for (std::size_t i = run.used.size(); i < needed.size(); ++i)
      grew = grew || needed[i] > 0;
  return grew;
}

void abort_if_distributed(Ranks const& ranks, char const* what) {
  if (!ranks.group() || ranks.process_count() == 1)
    return;
  std::fprintf(stderr,
               "loom: process %d of %d: exception escaped the program run by loom::spmd: %s\n"
               "loom: aborting the job (MPI_Abort, or the process group's abort), so that no "
               "process waits forever in a collective\n",
               ranks.process_rank(), ranks.process_count(), what);
  std::fflush(stderr);
  ranks.group()->abort();
}

} // namespace loom::detail
