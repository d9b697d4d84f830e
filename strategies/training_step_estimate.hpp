#pragma once
// A whole training step of a transformer (core/transformer_spec.hpp) priced in closed form
// for one parallel layout — tensor (with sequence parallelism), pipeline (1F1B, optionally
// interleaved), data (plain, ZeRO-1/2/3), micro-batching, recomputation — and the search over
// such layouts that `symmesh layouts` runs: the screening step that Calculon does from a
// model JSON, on this project's own cost figures. Every time comes from the same formulas
// the planner and simulator use: the roofline (core/roofline.hpp) for GEMMs and HBM-bound
// work, and the alpha-beta ring costs of strategies/analytic_topology.hpp on the mesh
// [pp, dp, tp] (tp fastest, inside a node; pp outermost, as Megatron orders its groups).
//
// One micro-batch of b sequences on one stage of L/p layers (ceil when p does not divide L),
// per layer and tensor-parallel rank (T = b·seq tokens, t = tp), each op of the layer table
// (core/transformer_layer.hpp) priced by its kind of work:
//   GEMMs     the roofline of its [T, k] x [k, n] on the rank (qkv, out, gate, up, down).
//   attention FlashAttention, causal: its products over b·heads/t heads, at half their FLOPs.
//   HBM-bound the norms, residual adds, the MLP's activation and rotary: their bytes at HBM
//             bandwidth, one launch each.
//   backward  each op's forward times its multiple: 2 for GEMMs (dgrad + wgrad) and kernels,
//             2.5 for attention (it recomputes the scores: 5 products vs 2).
//   TP        with sequence parallelism, the table's all-gathers and reduce-scatters of the
//             [T, h] activation (2 of each per layer) in the forward and their reverses in
//             the backward, not overlapped.
//   recompute full: the whole layer forward again in the backward (its TP all-gathers too).
//             Selective recomputation (of the attention core) is what FlashAttention does
//             anyway: it costs and saves nothing beyond it here.
// The output projection (and its loss) is spread over the stages, as Megatron and Llama 3
// balance their first and last stages with fewer layers.
//
// The step, m = global_batch / (dp·b) micro-batches per replica, v virtual stages:
//   pipeline  (m + (p-1)/v) x (stage time of one micro-batch), p2p sends of [T, h]/t bytes
//             between stages (v per micro-batch each way), exposed; bubble (p-1)/(v·m).
//   DP        gradients in fp32 (Llama 3 reduces them so), all-reduced (ZeRO 0) or
//             reduce-scattered with the bf16 parameters all-gathered after (ZeRO-1), hidden
//             under the last micro-batch's backward (Megatron's --overlap-grad-reduce) and
//             the first one's forward, the rest exposed. ZeRO-2 reduce-scatters every
//             micro-batch's gradients under its backward; ZeRO-3 also all-gathers the
//             weights for every micro-batch's forward and backward, under them. ZeRO-2/3
//             with pipeline parallelism is refused (DeepSpeed does not run the pair).
// Memory per GPU (the fullest stage): bf16 weights (/dp with ZeRO-3), fp32 gradients (/dp
// from ZeRO-2), Adam's 12 B of fp32 state (/dp from ZeRO-1) — Megatron's 18 B per
// parameter, 6 + 12/dp with its distributed optimizer — and the activations of Korthikanti
// et al. (core/transformer_memory.hpp; under FlashAttention no s x s tensor, i.e. their
// selective count plus the softmax statistics) for min(m, p) micro-batches in flight on the
// first stage (x (1 + (p-1)/(p·v)) interleaved), one layer's set more when fully
// recomputed, and the logits (bf16 and an fp32 copy for the loss). When p does not divide
// the layers, the first and last stages take fewer (as Llama 3 did).
//
//   optimizer Adam on the fullest stage's parameters each rank updates (/dp from ZeRO-1): its
//             HBM traffic (core/optimizer_step.hpp) after the gradients are reduced and
//             before the weights are gathered, exposed.
//
// What it leaves out: the overlap of TP communication with compute (Megatron's
// --tp-comm-overlap), context parallelism, activation offloading, stragglers and any
// failure; the memory allocator's fragmentation.
#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "core/cluster_spec.hpp"
#include "core/transformer_memory.hpp"
#include "core/transformer_spec.hpp"

namespace symmesh::strategies {

struct TrainingLayout {
  int tp = 1;
  int pp = 1;
  int dp = 1;
  int64_t micro_batch = 1;  // sequences per micro-batch
  int virtual_stages = 1;   // chunks of layers per pipeline stage (1: plain 1F1B)
  Recompute recompute = Recompute::none;
  int zero_stage = 0;  // 0..3
  int gpus() const { return tp * pp * dp; }
};
std::string to_string(const TrainingLayout& layout);  // "tp 8 pp 16 dp 64 mb 1 v 1 …"

struct TrainingMemory {
  double weights_bytes = 0;
  double gradients_bytes = 0;
  double optimizer_bytes = 0;
  double activations_bytes = 0;
  double total() const {
    return weights_bytes + gradients_bytes + optimizer_bytes + activations_bytes;
  }
};

struct TrainingEstimate {
  TrainingLayout layout;
  int64_t micro_batches = 0;  // m, per data-parallel replica
  double step_s = 0;
  // Per micro-batch on the slowest stage: compute (GEMMs, attention, HBM-bound work,
  // recomputation) and tensor-parallel communication; p2p sends between stages.
  double stage_compute_s = 0;
  double stage_tp_comm_s = 0;
  double stage_p2p_s = 0;
  double bubble_fraction = 0;  // (p-1)/(v·m) of the ideal pipeline time
  double bubble_s = 0;
  double dp_comm_s = 0;       // the step's data-parallel communication in all
  double dp_exposed_s = 0;    // what of it is not hidden under compute
  double optimizer_s = 0;     // the optimizer step on the fullest stage, exposed
  double exposed_comm_s = 0;  // TP + p2p + exposed DP, over the step
  TrainingMemory memory;
  bool fits = false;  // memory.total() <= the GPU's capacity
  double tokens_per_s = 0;
  double tokens_per_s_per_gpu = 0;
  double model_flops_per_s_per_gpu = 0;  // model FLOPs (PaLM's definition) per GPU second
  double mfu = 0;                        // model_flops_per_s_per_gpu / bf16 peak
};

// The step of `global_batch` sequences of spec.seq tokens on `cluster` (its GPU and fabric;
// its node count is not used: the layout says how many GPUs). Throws InvalidArgument naming
// what does not fit together: tp, pp or dp < 1; dp·micro_batch not dividing the global
// batch; tp not dividing the heads, kv_heads and FFN width, or more GPUs than a node has;
// pp·virtual_stages more than the layers; a ZeRO stage beyond 3, or 2/3 with pp > 1
// (check_training_layout throws the same, pricing nothing).
void check_training_layout(const TransformerSpec& spec, int64_t global_batch,
                           const ClusterSpec& cluster, const TrainingLayout& layout);
TrainingEstimate estimate_training_step(const TransformerSpec& spec, int64_t global_batch,
                                        const ClusterSpec& cluster, const TrainingLayout& layout);

// The data-parallel communication of a step and what of it is exposed, from the time of one
// gradient collective (an all-reduce for ZeRO 0, a reduce-scatter otherwise), of one
// weight all-gather, and of the compute it hides under (one micro-batch's forward and
// backward on the stage): the DP rule of the closed form above, shared by the simulated step.
struct DataParallelTime {
  double comm_s = 0;
  double exposed_s = 0;
};
DataParallelTime data_parallel_time(int zero_stage, int64_t micro_batches, double gradients_s,
                                    double gather_s, double forward_s, double backward_s);

// The optimizer step of the fullest stage on one rank: Adam over the parameters it updates
// (stage_parameters_per_rank, /dp from ZeRO-1), at HBM bandwidth.
double optimizer_step_s(const TransformerSpec& spec, const GpuSpec& gpu,
                        const TrainingLayout& layout);

// The parameters one tensor rank of the fullest stage holds: ceil(L/p) layers' share of the
// tensor-parallel group, and the embedding (first stage) and output projection (last), both
// when p = 1. What the data-parallel collectives move and the optimizer keeps.
double stage_parameters_per_rank(const TransformerSpec& spec, const TrainingLayout& layout);

// What the search tries. Any value may be listed (a tp of 3, a micro-batch of 6, 5 virtual
// stages): a layout it makes impossible is skipped and counted, with its reason, in
// LayoutSearchResult::skipped.
struct TrainingSearchOptions {
  std::vector<int> tps;  // tensor-parallel sizes to try; empty: every power of two allowed
  std::vector<int> pps;  // pipeline sizes to try; empty: every one
  std::vector<int64_t> micro_batches{1, 2, 4, 8};
  std::vector<int> virtual_stages{1, 2, 4, 8};
  // selective is none under FlashAttention (see above): not tried by default.
  std::vector<Recompute> recomputes{Recompute::none, Recompute::full};
  std::vector<int> zero_stages{0, 1, 2, 3};
};

struct LayoutSearchResult {
  std::vector<TrainingEstimate> fitting;  // the layouts that fit, fastest first
  int64_t priced = 0;                     // layouts priced (fitting or not)
  int64_t too_big = 0;                    // priced but over the memory capacity
  // Layouts of the options' values that could not be priced, by reason ("micro_batch 3
  // does not divide the 16 sequences of each of 64 replicas"): what a caller says when
  // nothing at all was priced.
  std::map<std::string, int64_t> skipped;
};

// Every layout of `gpus` GPUs: tp the options' sizes (default: each power of two) up to the
// GPUs per node that divide the heads, kv_heads and FFN width, any pp up to the layers
// with tp·pp dividing the GPUs, dp the rest, and the options' micro-batches (dividing the
// global batch per replica), virtual stages (v > 1 only with pp > 1 and m a multiple of pp,
// as Megatron requires), recomputation and ZeRO stages (with dp 1 a stage above 0 is the
// same layout as 0: priced once, as 0 when 0 is listed; pp > 1 only stages 0 and 1).
LayoutSearchResult search_training_layouts(const TransformerSpec& spec, int64_t global_batch,
                                           const ClusterSpec& cluster, int gpus,
                                           const TrainingSearchOptions& options = {});

// The layouts search_training_layouts would consider at `gpus` GPUs, before any is priced:
// the tensor-parallel sizes (the options' or the default powers of two) × the pipeline
// sizes (the options' or every divisor of the GPUs up to the layers) × the micro-batches ×
// virtual stages × recomputations × ZeRO stages. An upper bound on what it prices; what a
// caller bounds before it searches.
int64_t layout_candidates(const TransformerSpec& spec, const ClusterSpec& cluster, int gpus,
                          const TrainingSearchOptions& options);
// The most layout candidates one search (every GPU count of `symmesh layouts` or of a
// `sweep.layouts`) may consider: should every one be priced, about 20 s at the ~18 us a
// layout the 8B capacity search measures (6,141 layouts in 0.11 s); most candidates of
// long lists are skipped at once (a micro-batch that does not divide the batch).
inline constexpr int64_t kMaxLayoutCandidates = 1000000;

}  // namespace symmesh::strategies
