#pragma once
// How one simulation runs: what it carries, how long it may take, what counts as an error.
#include "core/backend.hpp"

namespace symmesh::sim {

struct SimOptions {
  // Emulation: every buffer holds real bytes, puts move them, compute ops compute them, and
  // the result carries the bytes of each Program::outputs() request. Off: only sizes and
  // times are tracked (no per-byte state, so large programs stay small in memory).
  bool carry_data = false;
  // Wall-clock limit for the forked simulation process, in seconds; 0 = none. Past it the
  // child is killed and run_simulation throws Timeout.
  double wall_clock_limit_s = 0;
  // Overwrite hazards end the run with a HazardError instead of being listed in the result.
  bool hazards_are_errors = false;
  // Record one timeline entry per executed op (start, end, bytes). Off for huge programs
  // whose per-op record would dominate memory (benchmarks).
  bool record_timeline = true;
  // Which plain collectives run as NCCL's (core/library_collectives.hpp); by default all of
  // them where the cluster has a collectives: section.
  CollectivesChoice collectives;

  // Throws InvalidArgument for a negative or non-finite limit.
  void validate() const;
};

// The simulation options a run request asks for (validated).
SimOptions sim_options_for(const RunRequest& request);

}  // namespace symmesh::sim
