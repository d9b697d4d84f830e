#pragma once
// What `symmesh simulate` reports per workload op, from a simulated run: time,
// communication and compute time, memory, strategy, and (emulation) the error against the
// unsharded result. The same shape serves the hardware backend later.
#include <optional>
#include <string>
#include <vector>

#include "core/backend.hpp"
#include "core/collective_record.hpp"
#include "core/run_result.hpp"
#include "core/scenario.hpp"
#include "strategies/workload_lowering.hpp"

namespace symmesh::evaluation {

struct OpReport {
  std::string name;
  std::string op;             // "mm", "put_signal", "all_reduce", …
  double time_s = 0;          // first start to last end over all ranks
  double comm_time_s = 0;     // busiest rank's time in communication (puts, waits)
  double compute_time_s = 0;  // busiest rank's time in local compute (matmul, copies)
  int64_t peak_memory_bytes_per_rank = 0;
  int64_t bytes = 0;  // put_signal / collectives: the op's byte count
  std::optional<std::vector<Placements>> input_placements;  // matmuls: the chosen strategy
  std::optional<Placements> output_placements;
  // Where the output ended up when the op named one (out_placements), after the strategy.
  std::optional<Placements> out_placements;
  std::string implementation = "unfused";  // matmuls: strategies::Implementation's text
  int chunks = 1;                          // its chunks per shard
  std::optional<double> max_abs_error;     // emulation
};

struct SimulationReport {
  std::string scenario;
  std::string backend = "sim";
  std::string cluster;  // one line
  std::string mesh;
  std::string cost_model;
  double total_time_s = 0;
  std::vector<OpReport> ops;
  // From the Program's collective records: how many of each kind ran, and how.
  std::vector<CollectiveCount> collectives;
  std::vector<std::string> warnings;
};

// `collectives` says which collectives a hardware run handed to NCCL (the simulator runs
// them all one-sided).
SimulationReport build_simulation_report(const Scenario& scenario,
                                         const strategies::LoweredWorkload& workload,
                                         const RunResult& result, bool emulated,
                                         const CollectivesChoice& collectives = {});
// "S(0),R x R,S(1) -> S(0),S(1)" for a matmul, with ", fused-allgather-mm x4" when it
// runs fused; "" for other ops.
std::string strategy_text(const OpReport& op);

}  // namespace symmesh::evaluation
