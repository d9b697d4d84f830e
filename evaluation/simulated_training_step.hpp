#pragma once
// A model's training step for one parallel layout, simulated rather than priced: the two
// Programs of strategies/training_step_program.hpp (one data-parallel replica's whole
// pipeline, and one stage's data-parallel rings) run side by side in forked simulations on the
// scenario's cluster, and composed into the step:
//
//   step = the replica's simulated makespan (every micro-batch through every stage: compute,
//          tensor-parallel collectives, stage-to-stage sends, the pipeline's bubble as it
//          falls out of the schedule, and the optimizer step after stage 0's last backward)
//        + the data-parallel time left exposed: the simulated gradient collective and weight
//          all-gather, less the simulated compute they hide under (stage 0's last backward
//          and first forward), by the closed form's rule (data_parallel_time).
//
// What is simulated and what is replicated: the replica's pp·tp ranks and every op of theirs
// are simulated; the other dp - 1 replicas are identical copies of it and are not. The tp
// data-parallel rings of one stage are simulated side by side; the other stages' are copies
// of them, on other nodes.
#include <cstdint>
#include <string>

#include "core/cluster_spec.hpp"
#include "core/transformer_spec.hpp"
#include "strategies/training_step_estimate.hpp"

namespace symmesh::evaluation {

// The most stream ops a replica may hold to be simulated: the 405B step of Llama 3's 8,192
// GPUs holds 6.0 M and takes about 14 s and 624 MiB here (README, "Whole models"), a 70B
// replica of 8.3 M took 34 s; a layout of more micro-batches per replica (a small
// data-parallel size: hundreds or thousands of them) is priced only.
inline constexpr int64_t kMaxSimulatedStreamOps = 8'000'000;

struct SimulatedTrainingStep {
  strategies::TrainingEstimate estimate;  // the closed form of the same layout
  // Why the layout was not simulated ("" when it was): its replica's ops over the cap.
  std::string not_simulated;
  bool simulated() const { return not_simulated.empty(); }
  double pipeline_s = 0;       // the replica's simulated makespan
  double first_forward_s = 0;  // stage 0's first forward, as simulated
  double last_backward_s = 0;  // stage 0's last backward
  double optimizer_s = 0;      // stage 0's optimizer step, as simulated (in pipeline_s)
  double gradients_s = 0;      // the simulated gradient all-reduce / reduce-scatter
  double weights_s = 0;        // the simulated weight all-gather (ZeRO >= 1)
  strategies::DataParallelTime data_parallel;
  double step_s = 0;
  double tokens_per_s = 0;
  double tokens_per_s_per_gpu = 0;
  double mfu = 0;
  // What was simulated.
  int replica_ranks = 0;  // pp·tp
  int replica_nodes = 0;
  int64_t replica_stream_ops = 0;
  int data_parallel_ranks = 0;
  int64_t data_parallel_stream_ops = 0;
  int64_t simulated_stream_ops() const { return replica_stream_ops + data_parallel_stream_ops; }
  // What it stands for: every rank of the step and the ops it would hold written out
  // (the replica's times dp, the stage's rings times pp).
  int64_t represented_ranks = 0;
  double represented_stream_ops = 0;
  double wall_s = 0;  // building and simulating both
};

// Throws what estimate_training_step and replica_program throw, and what the simulation
// found (a deadlock would be a bug in the schedule: DeadlockError names the waits). A replica
// of more than kMaxSimulatedStreamOps ops is not simulated: not_simulated says so.
SimulatedTrainingStep simulate_training_step(const TransformerSpec& spec, int64_t global_batch,
                                             const ClusterSpec& cluster,
                                             const strategies::TrainingLayout& layout);

// The most stream ops a replica may hold for its trace to be written: a trace keeps every
// op's slice (~200 B of JSON each), so 500 k ops make about 100 MB.
inline constexpr int64_t kMaxTracedStreamOps = 500'000;

// The Chrome/Perfetto trace (core/trace_writer.hpp) of one data-parallel replica's simulated
// pipeline for `layout`: every rank of its pp stages and tp positions, each task's slices
// named by micro-batch and pass ("mb 3 backward"; stage 0's first forward and last backward
// as "stage 0 first forward", "stage 0 last backward"), their ops in `detail`. Empty when
// the replica holds more than kMaxTracedStreamOps ops (`why` says so).
std::string training_step_trace_json(const TransformerSpec& spec, int64_t global_batch,
                                     const ClusterSpec& cluster,
                                     const strategies::TrainingLayout& layout, std::string& why);

}  // namespace symmesh::evaluation
