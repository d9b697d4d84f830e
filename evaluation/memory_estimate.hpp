#pragma once
// The host memory one scenario needs to simulate, estimated BEFORE it is lowered: the
// lowering itself is what fills the memory (a 512-GPU point: ~15 M stream ops, gigabytes).
// Ops are counted from the collective algorithms (core/collectives.cpp) and the plan
// lowering's re-layout copies (strategies/plan_lowering.cpp), per workload op:
//
//   collective on a mesh dim of p ranks, over all W ranks (p-1 ring steps each):
//     all-gather 2(p-1)·W (put + wait), reduce-scatter 3(p-1)·W (+ reduce),
//     all-reduce 5(p-1)·W (reduce-scatter then all-gather), all-to-all 2(p-1)·W
//   put_signal: 2
//   mm/bmm: its plan's steps (the collective above + copies into and out of the
//     symmetric buffers: one per rank, or p per rank when the shard dim is not the
//     leading one) and one matmul per rank
//   every op: one barrier per rank
//
// Bytes per op: sizeof(StreamOp), times 1.5 for std::vector's doubling slack, plus the
// heap text of a label past the small-string buffer ("ring all_gather step 3/7"). The
// forked simulation shares the parent's Program (copy on write), so a point in flight
// needs it about once, plus the simulator's own state.
#include <cstdint>
#include <optional>

#include "core/scenario.hpp"
#include "evaluation/host_memory.hpp"
#include "strategies/cost_model.hpp"

namespace symmesh::evaluation {

struct HostMemoryEstimate {
  int64_t stream_ops = 0;      // the lowered Program's operations, all ranks together
  int64_t program_bytes = 0;   // those operations in memory
  int64_t emulated_bytes = 0;  // emulation: every rank's real buffers; 0 for timing only
  // The simulator's own state: 1 MiB per simulated rank, the budget
  // tests/sim/memory_budget_test.cpp holds it to (actors, stacks, link state).
  int64_t simulator_bytes = 0;
  // The largest single op's emulated buffers: past WorkloadOptions::max_emulated_bytes the
  // lowering refuses that op itself, whatever the machine (the guard then leaves it to it).
  int64_t largest_emulated_op_bytes = 0;
  int64_t total_bytes() const { return program_bytes + emulated_bytes + simulator_bytes; }
};

// Bytes one lowered stream op takes on average (see above).
int64_t bytes_per_stream_op();

// Plans every matmul with `model` (cheap next to lowering) and counts. An op the lowering
// will reject (a mesh dim out of range, shapes that do not multiply) counts nothing here:
// the lowering reports it with its file:line:col.
HostMemoryEstimate estimate_host_memory(const Scenario& scenario,
                                        const strategies::CostModel& model, bool emulate);

// The guard of `symmesh simulate` and `symmesh run --check`: throws InvalidArgument,
// naming the scenario's file, when `estimate` is more than `available` ("scenario 'x'
// needs about 9.1 GB of host memory to emulate; 6.2 GB available"). Nothing when the
// available memory is unknown, or when an op is past the lowering's own emulation limit
// (its refusal names the op and does not depend on the machine).
void check_host_memory(const Scenario& scenario, const HostMemoryEstimate& estimate, bool emulate,
                       const std::optional<HostMemory>& available);

}  // namespace symmesh::evaluation
