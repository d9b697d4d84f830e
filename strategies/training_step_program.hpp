#pragma once
// A transformer's training step for one parallel layout (strategies/training_step_estimate.hpp)
// written as Programs the simulator runs, reduced by what is identical in it. A step of
// Llama 3 405B on 16,384 GPUs written rank by rank would hold billions of ops; but its 128
// data-parallel replicas run the same pipeline, and the data-parallel groups of every
// (stage, tensor rank) the same ring on their own rail. So two Programs stand for it:
//
//   replica         one data-parallel replica, whole: pp stages of tp ranks, every
//                   micro-batch's forward and backward of every layer in the order of
//                   strategies/pipeline_schedule.hpp, its tensor-parallel all-gathers and
//                   reduce-scatters (sequence parallelism) as ring collectives on the
//                   compute stream (not overlapped, as in the closed form), and the
//                   activations and their gradients sent between stages with put_signal on
//                   a send stream and waited for with wait_signal by the stage that needs
//                   them. Ranks sit where Megatron-LM puts replica 0 (world rank
//                   t + tp·(d + dp·s)), stages packed onto whole nodes when they fill them.
//   data_parallel   the data-parallel rings of one stage: its tp·dp ranks where Megatron puts
//                   them (t + tp·d), the tp rings (one per tensor rank) side by side, so
//                   that those sharing a node share its NICs, all-reducing the fp32
//                   gradients of the fullest stage's parameters (ZeRO 0), or
//                   reduce-scattering them and all-gathering the bf16 weights (ZeRO >= 1).
//                   The other stages' rings run on other nodes (or, when stages share a
//                   node, inside it) and are copies of these.
//
// Per layer and micro-batch of T = b·seq tokens on a tensor rank (t = tp), the ops are the
// layer table's (core/transformer_layer.hpp), each slice named by its op:
//   forward   in the table's order: each GEMM on the rank's piece, causal attention's two
//             products over b·heads/t heads (half their work), each HBM-bound kernel, and
//             the sequence-parallel all-gathers and reduce-scatters where the table puts
//             them, as ring collectives.
//   backward  the table in reverse: each GEMM's data and weight gradients ("qkv dgrad"),
//             FlashAttention's five causal products (it recomputes the scores), each kernel
//             as many times as its backward multiple, and each collective's reverse; with
//             full recomputation the layer's forward first (its all-gathers too, not its
//             reduce-scatters).
// HBM-bound kernels are copies moving the bytes the closed form counts (a copy of n bytes
// reads and writes them: 2n of HBM traffic). The first model chunk also gathers its
// embeddings (T·h/t per rank), the last all-gathers [T, h], projects onto the vocabulary
// [T, h]x[h, vocab/t] and computes the loss over the fp32 logits. After its last backward
// each rank runs the optimizer step over the parameters it owns (its stage's, /dp from
// ZeRO-1): Adam and the copy into the bf16 weights, two copies of half their HBM traffic
// (core/optimizer_step.hpp).
#include <cstdint>
#include <string>
#include <vector>

#include "core/cluster_spec.hpp"
#include "core/program.hpp"
#include "core/transformer_spec.hpp"
#include "strategies/training_step_estimate.hpp"

namespace symmesh::strategies {

// Label names of the replica's ops, for reading the simulated timeline back: every op of a
// forward task is "forward", of a backward "backward" (its recomputed forward included), of
// a send "p2p"; stage 0's first forward and last backward have their own, since the
// data-parallel collectives hide under them (Megatron's --overlap-param-gather and
// --overlap-grad-reduce).
inline constexpr const char* kForwardLabel = "forward";
inline constexpr const char* kBackwardLabel = "backward";
inline constexpr const char* kSendLabel = "p2p";
inline constexpr const char* kFirstForwardLabel = "stage 0 first forward";
inline constexpr const char* kLastBackwardLabel = "stage 0 last backward";
// The optimizer step: stage 0's (it follows the step's last backward) and the other stages'.
inline constexpr const char* kFirstStageOptimizerLabel = "stage 0 optimizer";
inline constexpr const char* kOptimizerLabel = "optimizer";
// The data-parallel program's collectives.
inline constexpr const char* kGradientReduceLabel = "gradients";
inline constexpr const char* kWeightGatherLabel = "weights";

struct ReplicaProgram {
  Program program{1};
  int nodes = 0;                      // the nodes its ranks span
  int64_t micro_batches = 0;          // per replica
  std::vector<int64_t> chunk_layers;  // per model chunk (pp·v of them), in model order
  std::vector<int> stage_first_rank;  // world rank of (stage, tensor rank 0)
};

// Throws InvalidArgument what check_training_layout throws, and for virtual stages without
// pipeline parallelism. Only the cluster's GPUs per node are used. `counting`: a counting
// Program (core/program.hpp), which holds no op.
ReplicaProgram replica_program(const TransformerSpec& spec, int64_t global_batch,
                               const ClusterSpec& cluster, const TrainingLayout& layout,
                               bool counting = false);

// The stream ops replica_program would write, counted on a schedule of at most pp
// micro-batches and scaled (every micro-batch's tasks hold the same ops): cheap enough to
// decide whether a layout is worth simulating.
int64_t replica_stream_ops(const TransformerSpec& spec, int64_t global_batch,
                           const ClusterSpec& cluster, const TrainingLayout& layout);

struct DataParallelProgram {
  Program program{1};
  int nodes = 0;
  double parameters = 0;       // of the fullest stage, on one tensor rank
  int64_t gradient_bytes = 0;  // fp32: what is all-reduced or reduce-scattered
  int64_t weight_bytes = 0;    // bf16: what is all-gathered (ZeRO >= 1; 0 otherwise)
};

// The data-parallel rings of stage 0; the Program is empty (no stream) when dp is 1.
DataParallelProgram data_parallel_program(const TransformerSpec& spec, int gpus_per_node,
                                          const TrainingLayout& layout);

}  // namespace symmesh::strategies
