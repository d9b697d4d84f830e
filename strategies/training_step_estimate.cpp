// A transformer's training step priced in closed form for one parallel layout, and the
// search over layouts (training_step_estimate.hpp).
#include "strategies/training_step_estimate.hpp"

#include <algorithm>
#include <cmath>
#include <optional>

#include "core/device_mesh.hpp"
#include "core/errors.hpp"
#include "core/optimizer_step.hpp"
#include "core/roofline.hpp"
#include "core/transformer_layer.hpp"
#include "strategies/analytic_topology.hpp"

namespace symmesh::strategies {
namespace {

constexpr const char* kWhere = "training layout";

// Bytes per parameter: bf16 weights, fp32 main gradients, Adam's fp32 master, momentum and
// variance (Megatron's mixed-precision accounting; core/optimizer_step.hpp).
constexpr double kWeightBytes = 2;
constexpr double kGradientBytes = 4;
constexpr double kOptimizerBytes = kAdamStateBytesPerElement;

double gemm_s(const GpuSpec& gpu, int64_t batch, int64_t m, int64_t n, int64_t k, DType dtype) {
  LocalGemm gemm;
  gemm.batch = batch;
  gemm.m = m;
  gemm.n = n;
  gemm.k = k;
  return roofline::matmul_duration_s(gpu, matmul_work(gemm, dtype));
}

struct LayerTimes {
  double forward_s = 0;   // GEMMs + attention + HBM-bound work
  double backward_s = 0;  // with recomputation
  double tp_comm_s = 0;   // forward and backward (and the recomputed forward's)
};

// One layer's forward and backward on one tensor rank, its ops priced as the table
// (core/transformer_layer.hpp) says, each kind of work summed apart: GEMMs by the roofline
// (a run of equal shapes — SwiGLU's gate and up — priced once and counted for each),
// causal attention by its products, the HBM-bound kernels as their bytes in all at HBM
// bandwidth plus a launch each. The backward is each op's forward times its multiple.
LayerTimes layer_times(const TransformerSpec& spec, const GpuSpec& gpu,
                       const AnalyticTopology& topology, int t, int64_t b, Recompute recompute) {
  const DType dt = spec.dtype;
  const int64_t T = b * spec.seq;
  const double element = static_cast<double>(element_size_bytes(dt));
  double gemms = 0, gemms_backward = 0;
  double attention = 0, attention_backward = 0;
  double kernel_bytes = 0, kernel_bytes_backward = 0, launches = 0, launches_backward = 0;
  int gathers = 0, scatters = 0;  // the forward's sequence-parallel collectives
  std::optional<LocalGemm> run_shape;  // the run of equal GEMMs being counted
  double run_count = 0, run_multiple = 0;
  const auto close_run = [&] {
    if (!run_shape) return;
    const double each = gemm_s(gpu, 1, run_shape->m, run_shape->n, run_shape->k, dt);
    gemms += each * run_count;
    gemms_backward += run_multiple * (each * run_count);
    run_shape.reset();
  };
  for (const LayerOp& op : transformer_layer_ops(spec)) {
    for (const TpCollective c : {op.tp_before, op.tp_after}) {
      gathers += c == TpCollective::all_gather;
      scatters += c == TpCollective::reduce_scatter;
    }
    switch (op.work) {
      case LayerWork::gemm: {
        const LocalGemm shape = layer_gemm(op, T, t);
        if (run_shape && *run_shape == shape && run_multiple == op.backward_multiple) {
          ++run_count;
          break;
        }
        close_run();
        run_shape = shape;
        run_count = 1;
        run_multiple = op.backward_multiple;
        break;
      }
      case LayerWork::attention: {
        double forward = 0;
        for (const AttentionProduct& p : attention_products(spec, b, t, /*backward=*/false))
          forward += p.work_fraction * gemm_s(gpu, p.gemm.batch, p.gemm.m, p.gemm.n, p.gemm.k, dt);
        attention += forward;
        attention_backward += op.backward_multiple * forward;
        break;
      }
      case LayerWork::kernel: {
        const double bytes = layer_kernel_bytes(op, spec, T, t);
        kernel_bytes += bytes;
        kernel_bytes_backward += op.backward_multiple * bytes;
        launches += 1;
        launches_backward += op.backward_multiple;
        break;
      }
    }
  }
  close_run();
  const double launch = roofline::launch_overhead_s(gpu);
  const double elementwise = roofline::hbm_time_s(gpu, kernel_bytes) + launches * launch;
  const double elementwise_backward =
      roofline::hbm_time_s(gpu, kernel_bytes_backward) + launches_backward * launch;
  LayerTimes out;
  out.forward_s = gemms + attention + elementwise;
  out.backward_s = gemms_backward + attention_backward + elementwise_backward;
  // Sequence parallelism moves the [T, h] activation, T·h/t elements per rank; the
  // backward runs each forward collective's reverse (an all-gather's is a reduce-scatter).
  const double sbh_t = static_cast<double>(T) * spec.hidden / t;
  const double tp_gather =
      collective_s(topology, 2, BandwidthCollective::all_gather, sbh_t * element);
  const double tp_scatter =
      collective_s(topology, 2, BandwidthCollective::reduce_scatter, sbh_t * element);
  if (t > 1) {
    const double tp_forward = gathers * tp_gather + scatters * tp_scatter;
    const double tp_backward = scatters * tp_gather + gathers * tp_scatter;
    out.tp_comm_s = tp_forward + tp_backward;
  }
  // FlashAttention recomputes the scores inside its backward (in its multiple), so
  // selective recomputation adds nothing more. Full recomputation reruns the layer's forward,
  // its all-gathers but not its reduce-scatters (as the replica program writes it).
  if (recompute == Recompute::full) {
    out.backward_s += out.forward_s;
    if (t > 1) out.tp_comm_s += gathers * tp_gather;
  }
  return out;
}

void require(bool ok, const std::string& message) {
  if (!ok) throw InvalidArgument(message, kWhere);
}

}  // namespace

std::string to_string(const TrainingLayout& l) {
  return "tp " + std::to_string(l.tp) + " pp " + std::to_string(l.pp) + " dp " +
         std::to_string(l.dp) + " mb " + std::to_string(l.micro_batch) + " v " +
         std::to_string(l.virtual_stages) + " recompute " + to_string(l.recompute) + " zero " +
         std::to_string(l.zero_stage);
}

namespace {

// The ring figures of the mesh [pp, dp, tp] on `cluster`, enough nodes for its GPUs.
AnalyticTopology training_topology(const ClusterSpec& cluster, const TrainingLayout& l) {
  const int64_t gpus = int64_t{l.tp} * l.pp * l.dp;
  ClusterSpec sized = cluster;
  sized.nodes = static_cast<int>((gpus + cluster.gpus_per_node - 1) / cluster.gpus_per_node);
  const DeviceMesh mesh({l.pp, l.dp, l.tp}, {"pp", "dp", "tp"});
  return AnalyticTopology::of(sized, mesh, /*with_all_to_all=*/false);
}

TrainingEstimate estimate(const TransformerSpec& spec, int64_t global_batch,
                          const ClusterSpec& cluster, const TrainingLayout& l,
                          const AnalyticTopology& topology);

}  // namespace

TrainingEstimate estimate_training_step(const TransformerSpec& spec, int64_t global_batch,
                                        const ClusterSpec& cluster, const TrainingLayout& l) {
  check_training_layout(spec, global_batch, cluster, l);
  return estimate(spec, global_batch, cluster, l, training_topology(cluster, l));
}

void check_training_layout(const TransformerSpec& spec, int64_t global_batch,
                           const ClusterSpec& cluster, const TrainingLayout& l) {
  require(l.tp >= 1 && l.pp >= 1 && l.dp >= 1 && l.micro_batch >= 1 && l.virtual_stages >= 1,
          "tp, pp, dp, micro_batch and virtual_stages must be >= 1 (" + to_string(l) + ")");
  require(l.zero_stage >= 0 && l.zero_stage <= 3,
          "zero stage " + std::to_string(l.zero_stage) + " is not 0, 1, 2 or 3");
  require(l.pp == 1 || l.zero_stage <= 1,
          "ZeRO-" + std::to_string(l.zero_stage) +
              " with pipeline parallelism is not modelled: DeepSpeed refuses the pair, and "
              "Megatron's distributed optimizer is ZeRO-1");
  require(global_batch % (int64_t{l.dp} * l.micro_batch) == 0,
          "dp " + std::to_string(l.dp) + " x micro_batch " + std::to_string(l.micro_batch) +
              " does not divide the global batch of " + std::to_string(global_batch) +
              " sequences");
  require(spec.heads % l.tp == 0 && spec.kv_heads % l.tp == 0 && spec.ffn % l.tp == 0,
          "tp " + std::to_string(l.tp) + " does not divide the " + std::to_string(spec.heads) +
              " heads, " + std::to_string(spec.kv_heads) + " key/value heads and FFN width " +
              std::to_string(spec.ffn));
  require(l.tp <= cluster.gpus_per_node, "tp " + std::to_string(l.tp) + " spans nodes (" +
                                             std::to_string(cluster.gpus_per_node) +
                                             " GPUs per node)");
  require(int64_t{l.pp} * l.virtual_stages <= spec.layers,
          "pp " + std::to_string(l.pp) + " x " + std::to_string(l.virtual_stages) +
              " virtual stages is more than the " + std::to_string(spec.layers) + " layers");
  const int64_t gpus = int64_t{l.tp} * l.pp * l.dp;
  require(gpus <= int64_t{1} << 24, "the layout has more than 2^24 GPUs");
}

namespace {

TrainingEstimate estimate(const TransformerSpec& spec, int64_t global_batch,
                          const ClusterSpec& cluster, const TrainingLayout& l,
                          const AnalyticTopology& topology) {
  const int64_t gpus = int64_t{l.tp} * l.pp * l.dp;
  const MeshDimLinks& pp_links = topology.dims[0];
  const GpuSpec& gpu = cluster.gpu;
  const double element = static_cast<double>(element_size_bytes(spec.dtype));

  TrainingEstimate e;
  e.layout = l;
  const int64_t m = global_batch / (int64_t{l.dp} * l.micro_batch);
  e.micro_batches = m;
  const int p = l.pp;
  const int v = l.virtual_stages;
  // The middle stages take ceil(L/p) layers; when p does not divide L, the first and last
  // stages take the shortfall (Llama 3 gives each of them one layer less: 126 = 14 x 8 + 2 x
  // 7 on 16 stages), the first the smaller half of it.
  const int64_t layers_per_stage = (spec.layers + p - 1) / p;
  const int64_t shortfall = layers_per_stage * p - spec.layers;
  const int64_t first_stage_layers =
      p == 1 ? spec.layers : std::max<int64_t>(1, layers_per_stage - (shortfall + 1) / 2);
  const LayerTimes layer = layer_times(spec, gpu, topology, l.tp, l.micro_batch, l.recompute);
  // The output projection [T, h] x [h, vocab/t] and its backward, spread over the stages.
  const int64_t T = l.micro_batch * spec.seq;
  const double output_s = 3 * gemm_s(gpu, 1, T, spec.vocab / l.tp, spec.hidden, spec.dtype);
  const double stage_forward = layers_per_stage * layer.forward_s + output_s / 3 / p;
  const double stage_backward = layers_per_stage * layer.backward_s + 2 * output_s / 3 / p;
  e.stage_compute_s = stage_forward + stage_backward;
  e.stage_tp_comm_s = layers_per_stage * layer.tp_comm_s;
  const double activation_bytes = static_cast<double>(T) * spec.hidden / l.tp * element;
  e.stage_p2p_s =
      p > 1 ? 2.0 * v * (pp_links.ring_latency_s + activation_bytes * pp_links.ring_s_per_byte)
            : 0.0;
  const double stage_s = e.stage_compute_s + e.stage_tp_comm_s + e.stage_p2p_s;
  const double pipeline_s = (static_cast<double>(m) + static_cast<double>(p - 1) / v) * stage_s;
  e.bubble_fraction = static_cast<double>(p - 1) / (static_cast<double>(v) * m);
  e.bubble_s = pipeline_s - static_cast<double>(m) * stage_s;

  const double params = stage_parameters_per_rank(spec, l);
  const double dp = l.dp;
  // Data parallel: ZeRO 0 all-reduces the fp32 gradients; >= 1 reduce-scatters them and
  // all-gathers the updated bf16 weights; 3 also gathers the weights per micro-batch
  // (forward and backward) and reduce-scatters the gradients per micro-batch.
  DataParallelTime dp_time;
  if (l.dp > 1) {
    const double grad_chunk = params * kGradientBytes / dp;
    const double weight_chunk = params * kWeightBytes / dp;
    const double gradients = collective_s(
        topology, 1,
        l.zero_stage == 0 ? BandwidthCollective::all_reduce : BandwidthCollective::reduce_scatter,
        grad_chunk);
    dp_time =
        data_parallel_time(l.zero_stage, m, gradients,
                           collective_s(topology, 1, BandwidthCollective::all_gather, weight_chunk),
                           stage_forward, stage_backward);
  }
  const double dp_comm = dp_time.comm_s, dp_exposed = dp_time.exposed_s;
  e.dp_comm_s = dp_comm;
  e.dp_exposed_s = dp_exposed;
  e.optimizer_s = optimizer_step_s(spec, gpu, l);
  e.step_s = pipeline_s + dp_exposed + e.optimizer_s;
  e.exposed_comm_s =
      (m + static_cast<double>(p - 1) / v) * (e.stage_tp_comm_s + e.stage_p2p_s) + dp_exposed;

  // Memory of the fullest stage.
  e.memory.weights_bytes = params * kWeightBytes / (l.zero_stage >= 3 ? dp : 1);
  e.memory.gradients_bytes = params * kGradientBytes / (l.zero_stage >= 2 ? dp : 1);
  e.memory.optimizer_bytes = params * kOptimizerBytes / (l.zero_stage >= 1 ? dp : 1);
  TransformerSpec per_micro_batch = spec;
  per_micro_batch.micro_batch = l.micro_batch;
  // FlashAttention keeps no s x s tensor: without full recomputation a layer keeps what
  // Korthikanti et al. count under selective recomputation, plus the softmax statistics
  // (one fp32 per head and token).
  const Recompute kept = l.recompute == Recompute::full ? Recompute::full : Recompute::selective;
  const double softmax_stats = flash_statistics_bytes(per_micro_batch, l.tp);
  const double layer_bytes = layer_activation_bytes(per_micro_batch, {l.tp, l.tp > 1, kept}) +
                             (kept == Recompute::full ? 0.0 : softmax_stats);
  // The first stage holds the most micro-batches in flight: min(m, p) under 1F1B, and
  // (1 + (p-1)/(p·v)) times that interleaved (Korthikanti et al. §4.2.3).
  const double in_flight = static_cast<double>(std::min<int64_t>(m, p)) *
                           (v > 1 ? 1.0 + static_cast<double>(p - 1) / (p * v) : 1.0);
  double activations = layer_bytes * first_stage_layers * in_flight;
  if (l.recompute == Recompute::full)  // the layer being recomputed, whole
    activations += layer_activation_bytes(per_micro_batch, {l.tp, l.tp > 1, Recompute::selective}) +
                   softmax_stats;
  // Logits in bf16 and fp32 for the loss, on the tp shard of the vocabulary.
  activations += static_cast<double>(T) * spec.vocab / l.tp * (element + 4);
  e.memory.activations_bytes = activations;
  e.fits = e.memory.total() <= static_cast<double>(gpu.memory_capacity_bytes);

  const double tokens = static_cast<double>(global_batch) * spec.seq;
  e.tokens_per_s = tokens / e.step_s;
  e.tokens_per_s_per_gpu = e.tokens_per_s / static_cast<double>(gpus);
  e.model_flops_per_s_per_gpu = e.tokens_per_s_per_gpu * spec.model_flops_per_token();
  e.mfu = e.model_flops_per_s_per_gpu / roofline::peak_flops_per_s(gpu, spec.dtype);
  return e;
}

}  // namespace

DataParallelTime data_parallel_time(int zero_stage, int64_t m, double gradients_s, double gather_s,
                                    double forward_s, double backward_s) {
  // ZeRO 0 all-reduces the gradients once, under the last micro-batch's backward (Megatron's
  // --overlap-grad-reduce). ZeRO-1 reduce-scatters them once there; with the gradient buffer
  // sharded (ZeRO-2/3, as DeepSpeed runs them) each micro-batch's gradients are
  // reduce-scattered as its backward makes them, hidden under it.
  DataParallelTime t;
  const double mb = static_cast<double>(m);
  if (zero_stage == 0) {
    t.comm_s = gradients_s;
    t.exposed_s = std::max(0.0, gradients_s - backward_s);
    return t;
  }
  const double reduces = zero_stage >= 2 ? mb : 1.0;
  t.comm_s = reduces * gradients_s;
  if (zero_stage <= 2) {
    t.exposed_s = reduces * std::max(0.0, gradients_s - backward_s);
    // The updated weights, gathered once, under the first micro-batch's forward.
    t.comm_s += gather_s;
    t.exposed_s += std::max(0.0, gather_s - forward_s);
  } else {
    // ZeRO-3: gathered for every micro-batch's forward and again for its backward; the
    // updated shard needs no gather after the step. The backward's gathers and its
    // reduce-scatters cross the same links one after the other (one comm stream), so the
    // backward hides their sum, not each in turn: counted each against the whole backward,
    // Llama 3.1 70B on 64 GPUs (tp 4, dp 16, 64 micro-batches) was priced at 96 s (116 s
    // now) where its planned step simulates 166 s (docs/scenario-format.md, training.zero).
    t.comm_s += 2.0 * mb * gather_s;
    t.exposed_s = mb * (std::max(0.0, gather_s - forward_s) +
                        std::max(0.0, gather_s + gradients_s - backward_s));
  }
  return t;
}

double optimizer_step_s(const TransformerSpec& spec, const GpuSpec& gpu, const TrainingLayout& l) {
  const double owned = stage_parameters_per_rank(spec, l) / (l.zero_stage >= 1 ? l.dp : 1);
  return roofline::hbm_time_s(gpu, owned * kAdamUpdateBytesPerElement) +
         kAdamUpdateKernels * roofline::launch_overhead_s(gpu);
}

double stage_parameters_per_rank(const TransformerSpec& spec, const TrainingLayout& l) {
  const int64_t layers_per_stage = (spec.layers + l.pp - 1) / l.pp;
  const double stage_layers_params =
      static_cast<double>(layers_per_stage) * spec.layer_parameters() / l.tp;
  const double table = static_cast<double>(spec.vocab) * spec.hidden / l.tp;
  return stage_layers_params + (l.pp == 1 ? table * (spec.tie_embeddings ? 1 : 2) : table);
}

int64_t layout_candidates(const TransformerSpec& spec, const ClusterSpec& cluster, int gpus,
                          const TrainingSearchOptions& options) {
  int64_t tps = static_cast<int64_t>(options.tps.size());
  if (tps == 0)
    for (int tp = 1; tp <= cluster.gpus_per_node && tp <= gpus; tp *= 2) ++tps;
  int64_t pps = static_cast<int64_t>(options.pps.size());
  if (pps == 0)
    for (int pp = 1; pp <= spec.layers && pp <= gpus; ++pp) pps += gpus % pp == 0;
  return tps * pps * static_cast<int64_t>(options.micro_batches.size()) *
         static_cast<int64_t>(options.virtual_stages.size()) *
         static_cast<int64_t>(options.recomputes.size()) *
         static_cast<int64_t>(options.zero_stages.size());
}

LayoutSearchResult search_training_layouts(const TransformerSpec& spec, int64_t global_batch,
                                           const ClusterSpec& cluster, int gpus,
                                           const TrainingSearchOptions& options) {
  LayoutSearchResult result;
  const auto skip = [&result](const std::string& reason, int64_t layouts = 1) {
    result.skipped[reason] += layouts;
  };
  const auto listed = [](const auto& values, auto value) {
    return std::find(values.begin(), values.end(), value) != values.end();
  };
  std::vector<int> tps = options.tps;
  if (tps.empty())
    for (int tp = 1; tp <= cluster.gpus_per_node && tp <= gpus; tp *= 2) tps.push_back(tp);
  const int64_t combinations_per_pp =
      static_cast<int64_t>(options.micro_batches.size() * options.virtual_stages.size() *
                           options.recomputes.size() * options.zero_stages.size());
  for (const int tp : tps) {
    const std::string tp_text = "tp " + std::to_string(tp);
    if (tp > cluster.gpus_per_node) {
      skip(tp_text + " spans nodes (" + std::to_string(cluster.gpus_per_node) + " GPUs per node)");
      continue;
    }
    if (spec.heads % tp != 0 || spec.kv_heads % tp != 0 || spec.ffn % tp != 0) {
      skip(tp_text + " does not divide the " + std::to_string(spec.heads) + " heads, " +
           std::to_string(spec.kv_heads) + " key/value heads and FFN width " +
           std::to_string(spec.ffn));
      continue;
    }
    if (tp > gpus || gpus % tp != 0) {
      skip(tp_text + " does not divide the " + std::to_string(gpus) + " GPUs");
      continue;
    }
    std::vector<int> pps = options.pps;
    if (pps.empty())
      for (int pp = 1; pp <= spec.layers && int64_t{tp} * pp <= gpus; ++pp)
        if (gpus % (tp * pp) == 0) pps.push_back(pp);
    for (const int pp : pps) {
      if (pp > spec.layers) {
        skip("pp " + std::to_string(pp) + " is more than the " + std::to_string(spec.layers) +
             " layers");
        continue;
      }
      if (int64_t{tp} * pp > gpus || gpus % (tp * pp) != 0) {
        skip(tp_text + " x pp " + std::to_string(pp) + " does not divide the " +
             std::to_string(gpus) + " GPUs");
        continue;
      }
      const int dp = gpus / (tp * pp);
      std::optional<AnalyticTopology> topology;  // built once per (tp, pp), when first needed
      for (const int64_t mb : options.micro_batches) {
        if (global_batch % (int64_t{dp} * mb) != 0) {
          skip("micro_batch " + std::to_string(mb) + " x dp " + std::to_string(dp) +
                   " does not divide the global batch of " + std::to_string(global_batch),
               combinations_per_pp / static_cast<int64_t>(options.micro_batches.size()));
          continue;
        }
        const int64_t m = global_batch / (int64_t{dp} * mb);
        for (const int v : options.virtual_stages) {
          if (v > 1 && pp == 1) {
            skip(std::to_string(v) + " virtual stages need pipeline parallelism (pp > 1)");
            continue;
          }
          if (v > 1 && m % pp != 0) {
            skip(std::to_string(v) + " virtual stages need the micro-batches per replica (" +
                 std::to_string(m) + ") a multiple of pp " + std::to_string(pp) +
                 ", as Megatron's interleaved schedule does");
            continue;
          }
          if (int64_t{pp} * v > spec.layers) {
            skip("pp " + std::to_string(pp) + " x " + std::to_string(v) +
                 " virtual stages is more than the " + std::to_string(spec.layers) + " layers");
            continue;
          }
          for (const Recompute recompute : options.recomputes)
            for (const int zero : options.zero_stages) {
              // With one replica every ZeRO stage is stage 0: priced once.
              if (dp == 1 && zero > 0 && listed(options.zero_stages, 0)) continue;
              if (pp > 1 && zero > 1) {
                skip("ZeRO-" + std::to_string(zero) +
                     " with pipeline parallelism (DeepSpeed refuses the pair; Megatron's "
                     "distributed optimizer is ZeRO-1)");
                continue;
              }
              const TrainingLayout layout{tp, pp, dp, mb, v, recompute, zero};
              check_training_layout(spec, global_batch, cluster, layout);
              if (!topology) topology = training_topology(cluster, layout);
              TrainingEstimate e = estimate(spec, global_batch, cluster, layout, *topology);
              ++result.priced;
              if (!e.fits) {
                ++result.too_big;
                continue;
              }
              result.fitting.push_back(std::move(e));
            }
        }
      }
    }
  }
  std::stable_sort(
      result.fitting.begin(), result.fitting.end(),
      [](const TrainingEstimate& a, const TrainingEstimate& b) { return a.step_s < b.step_s; });
  return result;
}

}  // namespace symmesh::strategies
