#pragma once
// What `symmesh simulate` reports per workload op, from a simulated run: time,
// communication and compute time, memory, strategy, and (emulation) the error against the
// unsharded result. The same shape serves the hardware backend later.
#include <concepts>
#include <optional>
#include <string>
#include <type_traits>
#include <vector>

#include "core/backend.hpp"
#include "core/bus_bandwidth.hpp"
#include "core/collective_record.hpp"
#include "core/run_result.hpp"
#include "core/scenario.hpp"
#include "core/transformer_memory.hpp"
#include "strategies/workload_lowering.hpp"

namespace symmesh::evaluation {

// Each report struct's fields are named once, in a `fields(io, s)` beside it: `io` is
// called with every field's name and member, by a writer (into JSON) or a reader (back
// from it) alike, so that an MPI sweep's processes (evaluation/sweep_point_codec.cpp) send
// every field and none is encoded and then forgotten when decoding. A new field is its
// member and one line in its list.
template <typename T, typename U>
concept FieldsOf = std::same_as<std::remove_const_t<T>, U>;

// A redistribution an op paid for: one of its inputs (or its output) moved to the
// placements its strategy needs (or the output to where it must end up).
struct PaidRedistribution {
  std::string tensor;  // the tensor's name (version 2) or the input's ("a", "b", "out")
  Placements from, to;
  std::string steps;        // "all_reduce over tp (32.00 MiB)"
  double estimated_us = 0;  // the cost model's figure
};
template <typename Io>
void fields(Io& io, FieldsOf<PaidRedistribution> auto& r) {
  io("tensor", r.tensor), io("from", r.from), io("to", r.to), io("steps", r.steps);
  io("estimated_us", r.estimated_us);
}

struct OpReport {
  std::string name;
  std::string op;                 // "mm", "put_signal", "all_reduce", …
  double time_s = 0;              // first start to last end over all ranks
  double start_s = 0, end_s = 0;  // from the step's start
  // Version 2: communication the step waits for. A main-stream op's span less its compute
  // (its redistributions run before its matmul unless fused); a gradient reduction's span
  // less the time the main stream was busy with other ops meanwhile (what it hides under).
  double exposed_comm_s = 0;
  bool on_comm_stream = false;
  double comm_time_s = 0;     // busiest rank's time in communication (puts, waits)
  double compute_time_s = 0;  // busiest rank's time in local compute (matmul, copies)
  int64_t peak_memory_bytes_per_rank = 0;
  int64_t bytes = 0;  // put_signal / collectives: the op's byte count
  // Collectives: the ranks of each group (every group of the mesh dim runs at once) and
  // nccl-tests' algbw and busbw of the op's time (core/bus_bandwidth.hpp).
  int group_size = 0;
  std::optional<CollectiveBandwidth> bandwidth;
  std::optional<std::vector<Placements>> input_placements;  // matmuls: the chosen strategy
  std::optional<Placements> output_placements;
  // Where the output ended up when the op named one (out_placements), after the strategy.
  std::optional<Placements> out_placements;
  std::string implementation = "unfused";  // matmuls: strategies::Implementation's text
  int chunks = 1;                          // its chunks per shard
  std::optional<double> max_abs_error;     // emulation
  // Emulated matmuls: the most max_abs_error may be for the result to be right,
  // γ_n · max(|a||b| + |bias|) (evaluation/emulation_tolerance.hpp); infinite when the
  // bound says nothing (n·u >= 1); none for ops without a bound (tensor ops).
  std::optional<double> error_bound;
  std::vector<PaidRedistribution> redistributions;
  // The row of gradient accumulation's earlier micro-batches (op "micro_batches"): how many
  // ran before the last, whose ops are the other rows.
  int micro_batches = 0;
};
template <typename Io>
void fields(Io& io, FieldsOf<OpReport> auto& op) {
  io("name", op.name), io("op", op.op), io("time_s", op.time_s), io("start_s", op.start_s);
  io("end_s", op.end_s), io("exposed_comm_s", op.exposed_comm_s);
  io("on_comm_stream", op.on_comm_stream), io("comm_time_s", op.comm_time_s);
  io("compute_time_s", op.compute_time_s);
  io("peak_memory_bytes_per_rank", op.peak_memory_bytes_per_rank), io("bytes", op.bytes);
  io("group_size", op.group_size), io("bandwidth", op.bandwidth);
  io("input_placements", op.input_placements), io("output_placements", op.output_placements);
  io("out_placements", op.out_placements), io("implementation", op.implementation);
  io("chunks", op.chunks), io("max_abs_error", op.max_abs_error);
  io("error_bound", op.error_bound), io("redistributions", op.redistributions);
  io("micro_batches", op.micro_batches);
}

// A version-2 step: its memory and what the layout search did.
struct StepReport {
  int64_t peak_memory_bytes = 0;  // per GPU, the busiest rank
  std::string memory_breakdown;   // "parameters 1.00 GiB, gradients …"
  std::string peak_op;            // where it peaks
  int64_t capacity_bytes = 0;
  std::string gpu;
  double serial_estimate_s = 0;      // every op and reduction in series
  double overlapped_estimate_s = 0;  // the search's objective: reductions on the comm stream
  // The planned step priced in closed form, through its pipeline schedule
  // (strategies/planned_step_price.hpp): the analytic reading of what was simulated.
  double priced_step_s = 0;
  int64_t layouts_priced = 0;
  int64_t states_expanded = 0;
  double search_s = 0;
  int beam_width = 0;
  int gradient_reductions = 0;
  // Pipeline stages (a pp mesh dim): how many, the model chunks each holds (interleaving),
  // the micro-batches each replica runs, the bubble as Megatron-LM defines it ((p − 1) /
  // (v·m): the idle slots over the useful ones, Narayanan et al., SC'21, §2.2), and each
  // stage's peak memory per GPU.
  int pipeline_stages = 1;
  int virtual_stages = 1;
  int micro_batches = 1;
  double bubble_fraction = 0;
  std::vector<int64_t> stage_peak_bytes;
};
template <typename Io>
void fields(Io& io, FieldsOf<StepReport> auto& s) {
  io("peak_memory_bytes", s.peak_memory_bytes), io("memory_breakdown", s.memory_breakdown);
  io("peak_op", s.peak_op), io("capacity_bytes", s.capacity_bytes), io("gpu", s.gpu);
  io("serial_estimate_s", s.serial_estimate_s);
  io("overlapped_estimate_s", s.overlapped_estimate_s);
  io("priced_step_s", s.priced_step_s);
  io("layouts_priced", s.layouts_priced), io("states_expanded", s.states_expanded);
  io("search_s", s.search_s), io("beam_width", s.beam_width);
  io("gradient_reductions", s.gradient_reductions), io("pipeline_stages", s.pipeline_stages);
  io("virtual_stages", s.virtual_stages), io("micro_batches", s.micro_batches);
  io("bubble_fraction", s.bubble_fraction), io("stage_peak_bytes", s.stage_peak_bytes);
}

// A model scenario's step as a training run reads it: tokens, throughput and MFU (model
// FLOPs per token as PaLM defines them, core/transformer_spec.hpp, over the GPUs' peak in
// the model's dtype). The simulated step is one micro-batch on every replica.
struct ModelThroughput {
  std::string model;
  int64_t tokens_per_step = 0;
  double tokens_per_s = 0;
  double tokens_per_s_per_gpu = 0;
  double model_flops_per_s_per_gpu = 0;
  double mfu = 0;
  Recompute recompute = Recompute::none;  // the step's (model.recompute): none or full
};
template <typename Io>
void fields(Io& io, FieldsOf<ModelThroughput> auto& m) {
  io("model", m.model), io("tokens_per_step", m.tokens_per_step);
  io("tokens_per_s", m.tokens_per_s), io("tokens_per_s_per_gpu", m.tokens_per_s_per_gpu);
  io("model_flops_per_s_per_gpu", m.model_flops_per_s_per_gpu), io("mfu", m.mfu);
  io("recompute", m.recompute);
}
// Of the scenario's model at its mesh, for a step of `step_s` seconds (nullopt without a
// model or a time).
std::optional<ModelThroughput> model_throughput(const Scenario& scenario, double step_s);

struct SimulationReport {
  std::string scenario;
  std::string backend = "sim";
  std::string cluster;       // one line
  ClusterSpec cluster_spec;  // the same, with its numbers (for JSON)
  std::string mesh;
  std::string cost_model;
  std::string cost_model_note;  // Scenario::cost_model_note: "" when the file gave it
  std::string placement_search;  // Scenario::placement_search
  // The data-parallel replicas folded into one (core/replica_folding.hpp; 1: rank by rank)
  // and the ranks whose ops were simulated (every rank when not folded).
  int folded_replicas = 1;
  int simulated_ranks = 0;
  double total_time_s = 0;
  std::vector<OpReport> ops;
  // From the Program's collective records: how many of each kind ran, and how.
  std::vector<CollectiveCount> collectives;
  std::vector<std::string> warnings;
  std::optional<StepReport> step;        // version 2
  std::optional<ModelThroughput> model;  // a model: scenario
};
// The simulation's results; the cluster's numbers and the cost-model note are the
// scenario's, which every process has.
template <typename Io>
void fields(Io& io, FieldsOf<SimulationReport> auto& r) {
  io("scenario", r.scenario), io("backend", r.backend), io("cluster", r.cluster);
  io("mesh", r.mesh), io("cost_model", r.cost_model);
  io("placement_search", r.placement_search), io("folded_replicas", r.folded_replicas);
  io("simulated_ranks", r.simulated_ranks), io("total_time_s", r.total_time_s);
  io("ops", r.ops), io("collectives", r.collectives), io("warnings", r.warnings);
  io("step", r.step), io("model", r.model);
}

// `collectives` is what the run was asked for: on hardware, which collectives went to NCCL;
// in the simulator, which ran as NCCL's (core/library_collectives.hpp), named with the
// algorithm and protocol the model chose ("nccl ring/LL128").
SimulationReport build_simulation_report(const Scenario& scenario,
                                         const strategies::LoweredWorkload& workload,
                                         const RunResult& result, bool emulated,
                                         const CollectivesChoice& collectives = {},
                                         bool on_hardware = false);
// Whether an emulated run computed what the unsharded ops compute: every op with both an
// error and a bound within it. `checked` counts the ops with a bound, `failed` names those
// beyond it; `unbounded` counts emulated ops without a finite bound (not judged).
struct EmulationVerdict {
  int checked = 0;
  int unbounded = 0;
  std::vector<std::string> failed;
  bool passed() const { return failed.empty(); }
};
// nullopt when the run was not emulated.
std::optional<EmulationVerdict> emulation_verdict(const SimulationReport& report);

// "S(0),R x R,S(1) -> S(0),S(1)" for a matmul, with ", fused-allgather-mm x4" when it
// runs fused; "" for other ops.
std::string strategy_text(const OpReport& op);

}  // namespace symmesh::evaluation
