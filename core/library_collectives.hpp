#pragma once
// Which recorded collectives a simulation runs as the collective library (NCCL) would, and
// what each costs there: the one rule the simulator (sim/stream_ops) and the reports
// (evaluation/simulation_report) share.
//
// A plain collective (has_library_equivalent: not fused with a matmul) runs as NCCL's when
// the cluster has a collectives: section and either the user asked for NCCL collectives
// (`--collectives nccl[:ops]`) or made no choice; `--collectives one-sided` keeps the core's
// put_signal / wait_signal algorithms and their link-level costs. Asking for NCCL on a
// cluster without the section is an error (estimate_library_collective says why).
#include <string>

#include "core/backend.hpp"
#include "core/cluster_spec.hpp"
#include "core/nccl_cost_model.hpp"
#include "core/program.hpp"

namespace symmesh {

bool runs_as_library(const ClusterSpec& cluster, const CollectivesChoice& choice,
                     const CollectiveRecord& record);

// The cluster a command works with under `--collectives`: with one-sided chosen, its
// collectives: section set aside, so that the planner prices and the simulator runs every
// collective as the core's rings; otherwise unchanged. (nccl:OP,… still plans every plain
// collective at NCCL's cost: the planner does not know the ops' names.)
ClusterSpec cluster_for_collectives(ClusterSpec cluster, const CollectivesChoice& choice);

// The text of --collectives on the commands that plan and simulate, for their help.
inline constexpr const char* kCollectivesHelp =
    "one-sided | nccl | nccl:OP,OP: plan and run the plain collectives as the core's "
    "put_signal rings, or as NCCL runs them (the default where the cluster has a "
    "collectives: section)";

// The estimate of `record` (a plain collective) on `cluster`, its group's geometry taken
// with every rank of `program` running such a collective at once.
LibraryEstimate estimate_recorded_collective(const ClusterSpec& cluster, const Program& program,
                                             const CollectiveRecord& record);

// How a simulation runs `record`, for reports: "nccl ring/LL128", "nccl nvls/Simple", or the
// one-sided algorithm ("ring", "pairwise", "fused ring").
std::string simulated_implementation(const ClusterSpec& cluster, const CollectivesChoice& choice,
                                     const Program& program, const CollectiveRecord& record);

}  // namespace symmesh
