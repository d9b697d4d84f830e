#pragma once
// A capacity sweep shared out over the processes of an MPI job (mpirun -np N symmesh
// sweep …). Point i is evaluated by process i mod N (round robin: the sweep lists small
// clusters first, so every process gets some of the large ones), each with its own --jobs
// and host-memory admission; the points travel to rank 0 (evaluation/sweep_point_codec.hpp)
// which ranks them, and the process that simulated the best point simulates it again for
// the trace and sends it. Rank 0 then writes what a local sweep writes.
//
// Before any point runs, the processes agree that they sweep the same thing: a digest of
// the scenario's bytes, of every file it reads and of the options that change the points;
// a process that differs from rank 0 is bad input for all (exit 2).
//
// Failures are agreed on: every process reports its own (or none) at each exchange, and
// all stop there with the lowest failing rank's error; rank 0 says it and exits with its
// code (mpirun's), the others print nothing and exit 0 — a non-zero exit would make mpirun
// kill rank 0 before it has said why. A process that dies ends the job through mpirun.
#include <exception>
#include <optional>
#include <string>

#include "evaluation/sweep_runner.hpp"
#include "tools/cli/communicator.hpp"

namespace symmesh::cli {

// After a phase in which `error` (null: none) happened here: when any process failed,
// rank 0 throws the lowest failing rank's error (its own as it was thrown) and the others
// get 0, to exit quietly with; nullopt when none failed. Collective.
std::optional<int> agree_on_failure(Communicator& world, std::exception_ptr error);

// The whole run on rank 0 (as run_sweep returns it, best trace included); nullopt on the
// others. A failure anywhere throws on rank 0 and gives the others their exit code (0) in
// `exit_code`. Collective.
std::optional<evaluation::SweepRun> run_sweep_over(Communicator& world, const Scenario& scenario,
                                                   evaluation::SweepOptions options,
                                                   int& exit_code);

}  // namespace symmesh::cli
