// symmesh's closed-form training step against published BF16 H100 throughputs of
// Megatron-based training, beyond the Llama 3 Table 4 points of published_training_test.cpp.
// Closed form only (strategies/training_step_estimate.hpp), on the shipped
// scenarios/clusters/dgx-h100.yaml (datasheet figures and GEMM, HBM and nccl-tests
// benchmarks; not fitted to any point here).
//
// Sources (each point below names its row):
//
// [M] NVIDIA Megatron-LM, README.md "Performance Benchmarking", the table image
//     images/model_table.png (added by commit f2e5db402c44ae309aa6448bcb4ae87e8ae0f5f4,
//     2024-07-15, "New scaling figures on H100 GPUs"; unchanged at d98e8a64ddf3, 2026-08-22;
//     Megatron-Core r0.8.0 per the scaling figures). GPT models, vocabulary 131,072,
//     sequence 4,096, data-parallel size 48, on H100: per row the attention heads, hidden
//     size, layers, TP, PP, GPUs, batch size, per-GPU teraFLOP/s and MFU. The README says
//     TP, DP and PP communication were overlapped (--tp-comm-overlap, --overlap-grad-reduce,
//     --overlap-param-gather) and that the throughput is end to end. It does not state the
//     micro-batch size, virtual pipeline stages, recomputation or the MLP: the parameter
//     counts of the table's first column (1.7B … 462B) are 12·h² per layer plus untied
//     input and output embeddings, i.e. multi-head attention and a 4h two-matrix (GELU)
//     MLP, which is what is built here.
//     The per-GPU teraFLOP/s is Megatron's num_floating_point_operations
//     (megatron/training/training.py at f2e5db402c): per sequence
//       12·s·L·h²·((1 + g/a + s/h)·q/h + (f/h)·(3/2 if swiglu else 1) + V/(2·L·h))
//     which for these models (g = a, q = h, f = 4h, no SwiGLU) is 72·L·h² + 12·L·h·s + 6·V·h
//     per token: the same count as symmesh's PaLM definition (core/transformer_spec.hpp)
//     but for the 12·h FLOPs per layer of the two norms' weights, a 1e-4 relative
//     difference. Converted here to tokens/s per GPU with Megatron's own formula (so that
//     the comparison does not depend on symmesh's FLOP count at all).
//
// [D] NVIDIA dgxc-benchmarking (github.com/NVIDIA/dgxc-benchmarking), commit
//     35a9aecc8d5b17d99d80f52f38c75ade0dbab7ae ("v24.11.1"; NeMo container 24.09, DGX H100):
//       nemotron/README_15b.md, table "Nemotron4 15b 24.11 BF16 (TP=4, PP=1, MBS=4, GA=4)",
//         row "Training step time (seconds per step)", GBS = 4 x GPUs (nemotron/configure.sh);
//       nemotron/README_340b.md, table "Nemotron4 340b 24.11 BF16 (TP=8, PP=8, MBS=1, GA=16,
//         VP=12)", same row, GBS = 2 x nodes = GPUs / 4 (nemotron/configure.sh);
//       nemo_megatron/README_175b.md, table "NeMo Megatron 24.11 BF16 (TP=4,PP=8, MBS=1, VP=12,
//         SEQ=2048)", row "Training step time (seconds per step)", GBS = 2 x GPUs.
//     All CP 1. The step time is what is compared (tokens/s per GPU = seq · GBS / step /
//     GPUs): the READMEs' "model flops utilization" uses a formula of their own (its notes:
//     24·L·h² for attention, i.e. no grouped-query saving) that overcounts Nemotron-4's
//     FLOPs by about 17 %, so their MFU is not symmesh's. Model shapes: Nemotron-4 15B and
//     340B from nemotron/nemotron4-{15b,340b}-synth.yaml at that commit (and NVIDIA/NeMo
//     nemo/collections/llm/gpt/model/nemotron.py at 9068746bd1: Nemotron4Config15B /
//     340B): squared-ReLU MLP (two matrices: built as `gelu`, the same GEMMs), RoPE, no
//     biases, untied embeddings, 8 query groups, vocabulary 256,000; GPT-3 175B from
//     nemo_megatron/gpt3_175b_hydra.yaml (96 layers, 12288, 96 heads, FFN 49152, dropout 0.1)
//     and the vocabulary 51,200 of the README's notes. Recomputation: none for 15B and
//     175B, "selective" (the attention core only: what FlashAttention does anyway, i.e.
//     none here) for 340B. All use TP-communication overlap (ub_tp_comm_overlap) and the
//     distributed optimizer (distributed_fused_adam), which symmesh takes as ZeRO-1.
//
// Not used: every Llama 3 row of the NeMo / Megatron-Bridge performance summaries on H100
// (docs/performance-summary*.md, NVIDIA-NeMo/Megatron-Bridge) is FP8; the dgxc-benchmarking
// Llama 3.1 BF16 rows all run context parallelism 2; neither is modelled by symmesh.
//
// Findings: no point here is predicted within 10 % with its published settings. symmesh is
// optimistic: its compute term alone (GEMMs at up to 83 % of the peak, attention, HBM-bound
// kernels) is shorter than the measured step, although the TP communication it leaves
// exposed was overlapped in every run here. The one point that lands within 10 %
// (Nemotron-4 340B on 128 GPUs, -6 %) does so only because symmesh's memory model does not
// fit the recipe's layout without full recomputation, which the recipe does not use. Each
// test asserts what the publications say independently of symmesh (the conversions of [M]
// are its own; each published layout runs on 80 GB H100s, so some layout with its TP, PP,
// DP, micro-batch and virtual stages must fit) and that each prediction's error,
// predicted / published tokens/s per GPU - 1, lies in its series' band.
//
// The bands. Measured 2026-12-06 (the printout of these tests), per series:
//   [M] Megatron-LM table         +12.3 % (32B) ... +59.3 % (1.7B)
//   [D] Nemotron-4 15B            +11.3 % (16 GPUs) ... +16.9 % (2,048)
//   [D] Nemotron-4 340B            -5.7 % (128 GPUs, full recomputation) ... +15.0 % (256)
//   [D] GPT-3 175B                +22.9 % (256 GPUs) ... +24.5 % (512)
// Each band is that range widened by 5 points on each side, rounded outward to a multiple
// of 5: [M] [+5 %, +65 %]; Nemotron-4 15B [+5 %, +25 %], 340B [-15 %, +20 %], GPT-3 175B
// [+15 %, +30 %]. They are not accuracy goals (published_training_test.cpp's 10 % is one):
// they record how far off the closed form is known to be, so that a change of the model
// that moves any row out of its band, closer or further, fails here and the band is
// restated on purpose, with the new printout, rather than drifting unseen.
//
// Two orderings the publications state that symmesh does not reproduce today (not asserted:
// they would fail; README.md, "Against published training runs", keeps them in view):
// - [D] weak scaling: every series takes longer per step at its largest GPU count than at
//   its smallest (Nemotron-4 15B 2.83 -> 2.96 s, 340B 4.61 -> 4.84 s, GPT-3 175B 8.91 ->
//   9.02 s). symmesh's Nemotron-4 15B shrinks (2.543 -> 2.532 s: its DP collectives stay
//   hidden under one micro-batch's compute at every dp, and the sharded optimizer step
//   shrinks with dp); its 340B at 128 GPUs needs full recomputation in symmesh's memory
//   model, which the recipe does not use, so its smallest point is its slowest.
// - [M] "MFU increases from 41% for the smallest model considered to 47-48% for the
//   largest": symmesh predicts 65.8 % for 1.7B and 59.4 % for 462B (its GEMM efficiency is
//   near its ceiling from h = 2048 on; the larger rows pay TP, p2p, bubble and exposed DP
//   time that the 1.7B row does not).
#include <gtest/gtest.h>

#include <cmath>
#include <cstdio>
#include <optional>
#include <string>
#include <vector>

#include "core/cluster_spec.hpp"
#include "core/transformer_spec.hpp"
#include "scenario/scenario_loader.hpp"
#include "strategies/training_step_estimate.hpp"

namespace symmesh {
namespace {

using strategies::TrainingEstimate;
using strategies::TrainingLayout;
using strategies::TrainingSearchOptions;

const std::string kScenarios = std::string(SYMMESH_SOURCE_DIR) + "/scenarios";

ClusterSpec dgx_h100() {
  return load_cluster(kScenarios + "/clusters/dgx-h100.yaml");
}

TransformerSpec decoder(const char* name, int layers, int64_t hidden, int heads, int kv_heads,
                        int64_t ffn, int64_t vocab, int64_t seq) {
  TransformerSpec s;
  s.name = name;
  s.layers = layers;
  s.hidden = hidden;
  s.heads = heads;
  s.kv_heads = kv_heads;
  s.head_dim = hidden / heads;
  s.ffn = ffn;
  s.activation = MlpActivation::gelu;  // two MLP matrices (GELU, squared ReLU)
  s.vocab = vocab;
  s.seq = seq;
  s.validate(name);
  return s;
}

// One published point: the model, the step, the layout the publication states (empty lists
// where it does not: the search tries symmesh's defaults), and what it measured, as tokens
// per second per GPU.
struct Point {
  std::string row;  // source and row, for the printout
  TransformerSpec spec;
  int64_t global_batch = 0;
  int gpus = 0;
  int tp = 0;
  int pp = 0;
  std::vector<int64_t> micro_batches;  // empty: not published
  std::vector<int> virtual_stages;     // empty: not published
  std::vector<Recompute> recomputes;   // empty: not published
  double published_tokens_per_s_per_gpu = 0;
  int dp() const { return gpus / (tp * pp); }
};

// The fastest layout with the published TP, PP (and micro-batch, virtual stages and
// recomputation where published) that fits, ZeRO at most 1 (Megatron's distributed
// optimizer), as published_training_test.cpp searches Meta's.
std::optional<TrainingEstimate> predict(const Point& p, const ClusterSpec& cluster) {
  TrainingSearchOptions o;
  o.tps = {p.tp};
  o.pps = {p.pp};
  if (!p.micro_batches.empty()) o.micro_batches = p.micro_batches;
  if (!p.virtual_stages.empty()) o.virtual_stages = p.virtual_stages;
  if (!p.recomputes.empty()) o.recomputes = p.recomputes;
  o.zero_stages = {0, 1};
  const auto found =
      strategies::search_training_layouts(p.spec, p.global_batch, cluster, p.gpus, o);
  if (found.fitting.empty()) return std::nullopt;
  return found.fitting.front();
}

double peak_bf16(const ClusterSpec& cluster) {
  return cluster.gpu.peak_flops_per_s.at("bf16");
}

// A series' band for predicted / published tokens/s per GPU - 1 (see the top of this file).
struct Band {
  double low = 0, high = 0;
};

void expect_in_band(const Point& p, const TrainingEstimate& e, const Band& band) {
  const double error = e.tokens_per_s_per_gpu / p.published_tokens_per_s_per_gpu - 1;
  EXPECT_GE(error, band.low) << p.row << ", " << p.gpus << " GPUs: predicted "
                             << e.tokens_per_s_per_gpu << " tokens/s per GPU, published "
                             << p.published_tokens_per_s_per_gpu;
  EXPECT_LE(error, band.high) << p.row << ", " << p.gpus << " GPUs: predicted "
                              << e.tokens_per_s_per_gpu << " tokens/s per GPU, published "
                              << p.published_tokens_per_s_per_gpu;
}

// One printed row: published and predicted tokens/s per GPU and their MFU under one
// definition (symmesh's, core/transformer_spec.hpp), the relative error of the prediction,
// and the estimate's step split into its parts: m micro-batches of stage compute (GEMMs at
// roofline efficiency, attention, HBM-bound kernels, recomputation), of TP communication
// and of p2p sends, the pipeline bubble, the exposed data-parallel communication and the
// optimizer step (these add up to the step).
void print_row(const Point& p, const TrainingEstimate& e, const ClusterSpec& cluster) {
  const double published_mfu =
      p.published_tokens_per_s_per_gpu * p.spec.model_flops_per_token() / peak_bf16(cluster);
  const double error = e.tokens_per_s_per_gpu / p.published_tokens_per_s_per_gpu - 1;
  const double m = static_cast<double>(e.micro_batches);
  std::printf(
      "  %-22s %5d GPUs: published %7.0f tok/s/GPU (MFU %4.1f%%), predicted %7.0f (MFU "
      "%4.1f%%), %+5.1f%%\n      %s, m %lld: step %.3f s = compute %.3f + TP %.3f + p2p %.3f "
      "+ bubble %.3f + DP %.3f + optimizer %.3f; %.1f GiB\n",
      p.row.c_str(), p.gpus, p.published_tokens_per_s_per_gpu, 100 * published_mfu,
      e.tokens_per_s_per_gpu, 100 * e.mfu, 100 * error, to_string(e.layout).c_str(),
      static_cast<long long>(e.micro_batches), e.step_s, m * e.stage_compute_s,
      m * e.stage_tp_comm_s, m * e.stage_p2p_s, e.bubble_s, e.dp_exposed_s, e.optimizer_s,
      e.memory.total() / (1024.0 * 1024 * 1024));
}

// [M] Megatron-LM README, images/model_table.png: one row per model. Published per-GPU
// teraFLOP/s by Megatron's formula, converted to tokens/s per GPU with that formula.
struct MegatronRow {
  const char* size;
  int heads;
  int64_t hidden;
  int layers;
  int tp, pp, gpus;
  int64_t batch;
  double tflops_per_gpu;
  double mfu;  // as printed (percent, rounded)
};

// Measured +12.3 % ... +59.3 % (the top of this file).
constexpr Band kMegatronBand{0.05, 0.65};
constexpr int64_t kMegatronVocab = 131072;
constexpr int64_t kMegatronSeq = 4096;

// Megatron's num_floating_point_operations for one token of these GPT models (see above).
double megatron_flops_per_token(const MegatronRow& r) {
  const double h = static_cast<double>(r.hidden), L = r.layers, s = kMegatronSeq;
  const double V = kMegatronVocab;
  return 12 * L * h * h * ((1 + 1 + s / h) + 4 + V / (2 * L * h));
}

std::vector<MegatronRow> megatron_table() {
  return {
      {"1.7B", 16, 2048, 24, 1, 1, 48, 192, 408.8, 41},
      {"7.1B", 32, 4096, 30, 2, 1, 96, 192, 465.9, 47},
      {"16B", 48, 6144, 32, 4, 1, 192, 192, 489.1, 49},
      {"32B", 56, 7168, 48, 8, 1, 384, 192, 459.6, 46},
      {"70B", 64, 8192, 84, 8, 2, 768, 384, 419.7, 42},
      {"119B", 80, 10240, 92, 8, 4, 1536, 768, 420.5, 43},
      {"177B", 96, 12288, 96, 8, 6, 2304, 1152, 432.8, 44},
      {"314B", 128, 16384, 96, 8, 8, 3072, 1536, 474.4, 48},
      {"462B", 144, 18432, 112, 8, 16, 6144, 3072, 459.9, 47},
  };
}

Point megatron_point(const MegatronRow& r) {
  Point p;
  p.row = std::string("[M] GPT ") + r.size;
  p.spec = decoder(r.size, r.layers, r.hidden, r.heads, r.heads, 4 * r.hidden, kMegatronVocab,
                   kMegatronSeq);
  p.global_batch = r.batch;
  p.gpus = r.gpus;
  p.tp = r.tp;
  p.pp = r.pp;
  p.published_tokens_per_s_per_gpu = r.tflops_per_gpu * 1e12 / megatron_flops_per_token(r);
  return p;
}

TEST(PublishedMegatron, MegatronLmReadmeTableIsConsistent) {
  // The conversion is the table's own: its teraFLOP/s over the 989.4 TFLOP/s bf16 peak is
  // its MFU column (rounded to a percent), and its parameter counts are the models built.
  const ClusterSpec cluster = dgx_h100();
  for (const MegatronRow& r : megatron_table()) {
    EXPECT_NEAR(r.tflops_per_gpu * 1e12 / peak_bf16(cluster), r.mfu / 100, 0.006) << r.size;
    const Point p = megatron_point(r);
    EXPECT_EQ(p.dp(), 48) << r.size;
    const double billions = static_cast<double>(p.spec.parameters()) / 1e9;
    EXPECT_NEAR(billions, std::stod(r.size), 0.05 * std::stod(r.size)) << r.size;
    // symmesh's model FLOPs per token and Megatron's differ by the norms' weights only.
    EXPECT_NEAR(p.spec.model_flops_per_token() / megatron_flops_per_token(r), 1.0, 1e-3) << r.size;
  }
}

TEST(PublishedMegatron, MegatronLmReadmeTable) {
  const ClusterSpec cluster = dgx_h100();
  std::printf("Megatron-LM README model table (H100, BF16) vs symmesh (dgx-h100.yaml):\n");
  for (const MegatronRow& r : megatron_table()) {
    const Point p = megatron_point(r);
    const auto best = predict(p, cluster);
    // Megatron ran every row on 80 GB H100s with this TP, PP and DP: some layout of them
    // must fit in symmesh's memory model too.
    ASSERT_TRUE(best.has_value()) << r.size << ": no layout with TP " << r.tp << ", PP " << r.pp
                                  << " fits";
    EXPECT_EQ(best->layout.dp, 48) << r.size;
    print_row(p, *best, cluster);
    expect_in_band(p, *best, kMegatronBand);
  }
}

// [D] dgxc-benchmarking v24.11.1: the BF16 step times at each published GPU count.
struct DgxcSeries {
  const char* row = "";
  TransformerSpec spec;
  int tp = 1, pp = 1;
  int64_t micro_batch = 1;
  int virtual_stages = 1;
  Recompute recompute = Recompute::none;        // as the recipe configures it
  int64_t (*global_batch)(int gpus) = nullptr;  // the recipe's rule
  std::vector<std::pair<int, double>> steps;    // GPUs, published seconds per step
  Band band;                                    // of its errors (the top of this file)
};

std::vector<DgxcSeries> dgxc_series() {
  std::vector<DgxcSeries> all(3);
  // nemotron/README_15b.md; nemotron/configure.sh: TP 4, PP 1, VP null, MBS 4, GBS 4 x GPUs.
  DgxcSeries& n15 = all[0];
  n15.row = "[D] Nemotron-4 15B";
  n15.spec = decoder("nemotron4-15b", 32, 6144, 48, 8, 24576, 256000, 4096);
  n15.tp = 4;
  n15.pp = 1;
  n15.micro_batch = 4;
  n15.virtual_stages = 1;
  n15.recompute = Recompute::none;  // activations_checkpoint_granularity: null
  n15.global_batch = [](int gpus) { return int64_t{4} * gpus; };
  n15.steps = {{16, 2.83},  {32, 2.86},  {64, 2.86},   {128, 2.89},
               {256, 2.88}, {512, 2.92}, {1024, 2.92}, {2048, 2.96}};
  n15.band = {0.05, 0.25};  // measured +11.3 % ... +16.9 %
  // nemotron/README_340b.md; nemotron/configure.sh: TP 8, PP 8, VP 12, MBS 1, GBS 2 x nodes.
  DgxcSeries& n340 = all[1];
  n340.row = "[D] Nemotron-4 340B";
  n340.spec = decoder("nemotron4-340b", 96, 18432, 96, 8, 73728, 256000, 4096);
  n340.tp = 8;
  n340.pp = 8;
  n340.micro_batch = 1;
  n340.virtual_stages = 12;
  n340.recompute = Recompute::none;  // granularity selective: the attention core only
  n340.global_batch = [](int gpus) { return int64_t{gpus / 8} * 2; };
  n340.steps = {{128, 4.61}, {256, 4.67}, {512, 4.7}, {1024, 4.73}, {2048, 4.84}};
  n340.band = {-0.15, 0.20};  // measured -5.7 % ... +15.0 %
  // nemo_megatron/README_175b.md and gpt3_175b_hydra.yaml: TP 4, PP 8, VP 12, MBS 1, GBS
  // 2 x GPUs (the README's GBS per GPU count), dropout 0.1.
  DgxcSeries& g175 = all[2];
  g175.row = "[D] GPT-3 175B";
  g175.spec = decoder("gpt3-175b", 96, 12288, 96, 96, 49152, 51200, 2048);
  g175.spec.dropout = true;
  g175.tp = 4;
  g175.pp = 8;
  g175.micro_batch = 1;
  g175.virtual_stages = 12;
  g175.recompute = Recompute::none;  // activations_checkpoint_granularity: null
  g175.global_batch = [](int gpus) { return int64_t{2} * gpus; };
  g175.steps = {{128, 8.91}, {256, 8.95}, {512, 9.09}, {1024, 9.01}, {2048, 9.02}};
  g175.band = {0.15, 0.30};  // measured +22.9 % ... +24.5 %
  return all;
}

Point dgxc_point(const DgxcSeries& d, int gpus, double step_s) {
  Point p;
  p.row = d.row;
  p.spec = d.spec;
  p.global_batch = d.global_batch(gpus);
  p.gpus = gpus;
  p.tp = d.tp;
  p.pp = d.pp;
  p.micro_batches = {d.micro_batch};
  p.virtual_stages = {d.virtual_stages};
  // Recomputation as published first; full recomputation is allowed too, so that a
  // prediction exists where symmesh's memory model refuses the published setting.
  p.recomputes = {d.recompute, Recompute::full};
  p.published_tokens_per_s_per_gpu =
      static_cast<double>(d.spec.seq) * static_cast<double>(p.global_batch) / step_s / gpus;
  return p;
}

TEST(PublishedMegatron, DgxcBenchmarkingBf16Steps) {
  const ClusterSpec cluster = dgx_h100();
  std::printf("dgxc-benchmarking v24.11.1 (NeMo 24.09, H100, BF16) vs symmesh (dgx-h100.yaml):\n");
  for (const DgxcSeries& d : dgxc_series()) {
    for (const auto& [gpus, step_s] : d.steps) {
      const Point p = dgxc_point(d, gpus, step_s);
      // NeMo ran each of these on 80 GB H100s: with the recipe's TP, PP, micro-batch and
      // virtual stages, something must fit.
      const auto best = predict(p, cluster);
      ASSERT_TRUE(best.has_value()) << d.row << ", " << gpus << " GPUs: nothing fits";
      EXPECT_EQ(best->layout.micro_batch, d.micro_batch);
      EXPECT_EQ(best->layout.virtual_stages, d.virtual_stages);
      print_row(p, *best, cluster);
      expect_in_band(p, *best, d.band);
      // The published layout itself, recomputation as the recipe sets it, where symmesh's
      // memory model made the search choose full recomputation instead.
      if (best->layout.recompute != d.recompute) {
        TrainingLayout published = best->layout;
        published.recompute = d.recompute;
        const TrainingEstimate e =
            strategies::estimate_training_step(p.spec, p.global_batch, cluster, published);
        const double gib = 1024.0 * 1024 * 1024;
        std::printf(
            "      the recipe's %s does not fit in symmesh: %.1f GiB (weights %.1f, "
            "gradients %.1f, optimizer %.1f, activations %.1f) > %.0f GiB; it would take "
            "%.3f s (%+.1f%% tokens/s vs published)\n",
            to_string(published).c_str(), e.memory.total() / gib, e.memory.weights_bytes / gib,
            e.memory.gradients_bytes / gib, e.memory.optimizer_bytes / gib,
            e.memory.activations_bytes / gib, cluster.gpu.memory_capacity_bytes / gib, e.step_s,
            100 * (e.tokens_per_s_per_gpu / p.published_tokens_per_s_per_gpu - 1));
      }
    }
  }
}

}  // namespace
}  // namespace symmesh
