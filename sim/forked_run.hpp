#pragma once
// The entry point callers use: one simulation in its own forked process.
//
// SimGrid 3.32 keeps one engine per process and its clock never resets, so every
// independent simulation runs in a child process: the child builds the platform, runs the
// Program and sends back the RunResult (sim/result_codec.hpp); the parent waits. Nothing
// global is touched in the parent, so several threads may run simulations at once.
#include "core/cluster_spec.hpp"
#include "core/program.hpp"
#include "sim/run_result.hpp"
#include "sim/sim_options.hpp"

namespace symmesh::sim {

// Simulates `program` on `cluster`. Errors raised in the child are re-thrown here with the
// same type and message: DeadlockError (a symmesh::Timeout), HazardError,
// InvalidArgument, Unsupported, …. Also throws
//   Timeout       "simulation exceeded its wall-clock limit of N s" (the child is killed),
//   BackendError  when the child dies (a signal, an abort inside SimGrid) or fork fails.
RunResult run_simulation(const Program& program, const ClusterSpec& cluster,
                         const SimOptions& options = {});

}  // namespace symmesh::sim
