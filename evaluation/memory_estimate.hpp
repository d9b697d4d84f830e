#pragma once
// The host memory one scenario needs to simulate, known BEFORE its Program is built: the
// real lowering runs first into a counting Program (core/program.hpp, Program::counting),
// which checks and counts every op, buffer and byte but keeps none, so the figures are the
// Program's own — there is no second copy of the algorithms' op counts here. The real
// Program is then reserved from that count (no growth slack).
//
//   program     the counted ops (64 B each), side tables, allocations, initial bytes
//   emulated    with data carried: every rank's real buffers (the simulator holds them)
//               and the global input values kept for the report
//   simulator   1 MiB per simulated rank: the budget tests/sim/memory_budget_test.cpp
//               holds the simulator to (actors, stacks, link state)
//   stacks      address space only, not memory: SimGrid reserves each actor's stack whole
//               (contexts/stack-size, 8 MiB by default in 3.32), one actor per stream per
//               rank and an anchor per rank; it counts against an address-space limit
//   timeline    when recorded: one entry per op, in the simulation process and the caller
//
// The forked simulation shares the parent's Program (copy on write), so a point in flight
// needs it about once, plus the simulator's own state.
#include <cstdint>
#include <optional>

#include "core/program.hpp"
#include "core/scenario.hpp"
#include "evaluation/host_memory.hpp"
#include "strategies/workload_lowering.hpp"

namespace symmesh::evaluation {

struct HostMemoryEstimate {
  int64_t stream_ops = 0;      // the lowered Program's operations, all ranks together
  int64_t program_bytes = 0;   // the Program in memory
  int64_t emulated_bytes = 0;  // emulation: every rank's real buffers; 0 for timing only
  int64_t simulator_bytes = 0;
  int64_t timeline_bytes = 0;        // 0 unless the timeline is recorded
  int64_t stack_reserved_bytes = 0;  // address space, not counted in total_bytes()
  int64_t total_bytes() const {
    return program_bytes + emulated_bytes + simulator_bytes + timeline_bytes;
  }
};

// The estimate of a workload that `counted` (a counting Program) saw being lowered.
HostMemoryEstimate estimate_host_memory(const Program& counted,
                                        const strategies::PlannedWorkload& planned, bool emulate,
                                        bool record_timeline);

// The guard of `symmesh simulate` and `symmesh run --check`: throws InvalidArgument,
// naming the scenario's file, when `estimate` is more than `available` ("scenario 'x'
// needs about 9.1 GB of host memory to emulate; 6.2 GB available"). Nothing when the
// available memory is unknown.
void check_host_memory(const Scenario& scenario, const HostMemoryEstimate& estimate, bool emulate,
                       const std::optional<HostMemory>& available);

}  // namespace symmesh::evaluation
