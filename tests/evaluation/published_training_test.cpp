// symmesh's closed-form training step against a published measurement: Llama 3 405B as
// Meta trained it. Source: The Llama 3 Herd of Models (Meta, 2024, arXiv:2407.21783),
// Table 4 ("Scaling configurations and MFU for each stage of Llama 3 405B
// pre-training"): seq 8192, 16 M tokens per batch (2048 sequences), TP 8, CP 1, PP 16 on
// H100 80 GB —
//   8,192 GPUs, DP 64:   430 TFLOP/s per GPU, 43 % BF16 MFU
//   16,384 GPUs, DP 128: 400 TFLOP/s per GPU, 41 % BF16 MFU
// (the table's third row, CP 16 at 131,072 tokens, needs context parallelism: not
// modelled). The cluster is the shipped dgx-h100.yaml, not fitted to these points: its
// figures are datasheet values and GEMM, HBM and nccl-tests benchmarks (the file cites
// them).
//
// The table does not state the pipeline schedule (virtual stages), recomputation or
// micro-batch size, so the prediction is the best layout with Meta's TP, PP and DP that
// fits in 80 GiB, with ZeRO at most 1 (Megatron's distributed optimizer, which Llama 3's
// framework resembles). The goal is MFU within 10 % (relative) of each point, and both
// tests assert it: |predicted MFU / published MFU - 1| <= 0.10. Measured 2026-12-06 (the
// printout of these tests): closed form +1.4 % (8,192 GPUs) and -5.5 % (16,384), simulated
// +2.4 % and -7.3 %; the band is the goal, 2.7 points wider than the worst of them, not a
// figure fitted to them.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <optional>

#include "evaluation/simulated_training_step.hpp"
#include "scenario/scenario_loader.hpp"
#include "strategies/training_step_estimate.hpp"
#include "tests/sanitizers.hpp"

namespace symmesh {
namespace {

const std::string kScenarios = std::string(SYMMESH_SOURCE_DIR) + "/scenarios";

struct Published {
  int gpus;
  int dp;
  double tflops_per_gpu;
  double mfu;
};

// The fastest layout with Meta's TP 8 and PP 16 (and ZeRO at most 1) that fits, on `gpus`.
std::optional<strategies::TrainingEstimate> meta_layout(const Scenario& s, int gpus) {
  strategies::TrainingSearchOptions meta;
  meta.tps = {8};
  meta.pps = {16};
  meta.zero_stages = {0, 1};
  auto found =
      strategies::search_training_layouts(*s.model, s.model->global_batch, s.cluster, gpus, meta);
  if (found.fitting.empty()) return std::nullopt;
  return found.fitting.front();
}

TEST(PublishedTraining, Llama3_405bTable4WithinTenPercent) {
  const Scenario s = load_scenario(kScenarios + "/training/llama3-405b-train.yaml");
  ASSERT_TRUE(s.model.has_value());
  ASSERT_EQ(s.model->global_batch, 2048);
  ASSERT_EQ(s.model->seq, 8192);
  ASSERT_EQ(s.model->layers, 126);
  std::printf("Llama 3 405B, Table 4 vs symmesh (dgx-h100.yaml):\n");
  for (const Published& p : {Published{8192, 64, 430, 0.43}, Published{16384, 128, 400, 0.41}}) {
    const auto best = meta_layout(s, p.gpus);
    ASSERT_TRUE(best.has_value()) << p.gpus << " GPUs: no layout with TP 8, PP 16 fits";
    const strategies::TrainingEstimate& e = *best;
    EXPECT_EQ(e.layout.dp, p.dp);
    const double error = e.mfu / p.mfu - 1;
    std::printf(
        "  %5d GPUs: published %.0f TFLOP/s/GPU, MFU %.0f%%; predicted %.0f TFLOP/s/GPU, MFU "
        "%.1f%% (%+.1f%%) with %s: step %.2f s, bubble %.1f%%, exposed comm %.2f s, %.1f GiB "
        "per GPU\n",
        p.gpus, p.tflops_per_gpu, 100 * p.mfu, e.model_flops_per_s_per_gpu / 1e12, 100 * e.mfu,
        100 * error, to_string(e.layout).c_str(), e.step_s, 100 * e.bubble_fraction,
        e.exposed_comm_s, e.memory.total() / (1024.0 * 1024 * 1024));
    EXPECT_LE(std::abs(error), 0.10) << p.gpus << " GPUs";
  }
}

// The same points simulated (evaluation/simulated_training_step.hpp): the layout the closed
// form chose, one replica's pipeline and one stage's data-parallel rings run op by op. The
// 16,384-GPU step is the scale target; under AddressSanitizer only it runs (the
// 8,192 one, with 32 micro-batches, takes several times longer there).
TEST(PublishedTraining, Llama3_405bTable4SimulatedWithinTenPercent) {
  const Scenario s = load_scenario(kScenarios + "/training/llama3-405b-train.yaml");
  std::printf("Llama 3 405B, Table 4 vs symmesh simulated (dgx-h100.yaml):\n");
  for (const Published& p : {Published{8192, 64, 430, 0.43}, Published{16384, 128, 400, 0.41}}) {
    if (testing::kAddressSanitizer && p.gpus != 16384) continue;
    const auto best = meta_layout(s, p.gpus);
    ASSERT_TRUE(best.has_value());
    const auto step = evaluation::simulate_training_step(*s.model, s.model->global_batch, s.cluster,
                                                         best->layout);
    EXPECT_EQ(step.represented_ranks, p.gpus);
    EXPECT_EQ(step.replica_ranks, 8 * 16);
    const double error = step.mfu / p.mfu - 1;
    std::printf(
        "  %5d GPUs: published MFU %.0f%%; simulated %.1f%% (%+.1f%%) with %s: step %.2f s "
        "(pipeline %.2f s, data-parallel exposed %.2f s), %lld ops simulated for %.0f\n",
        p.gpus, 100 * p.mfu, 100 * step.mfu, 100 * error, to_string(step.estimate.layout).c_str(),
        step.step_s, step.pipeline_s, step.data_parallel.exposed_s,
        static_cast<long long>(step.simulated_stream_ops()), step.represented_stream_ops);
    EXPECT_LE(std::abs(error), 0.10) << p.gpus << " GPUs";
  }
}

}  // namespace
}  // namespace symmesh
