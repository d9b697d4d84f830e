// The throughput and MFU `simulate` reports for a model scenario
// (evaluation/simulation_report.hpp, model_throughput), worked by hand.
#include <gtest/gtest.h>

#include "evaluation/simulation_report.hpp"
#include "scenario/scenario_loader.hpp"

namespace symmesh::evaluation {
namespace {

const char* kTiny = R"yaml(version: 2
cluster: clusters/dgx-h100.yaml
mesh: {shape: [2, 4], names: [dp, tp]}
model: {layers: 2, hidden: 64, heads: 4, kv_heads: 2, ffn: 128, vocab: 256, seq: 24}
)yaml";

TEST(ModelThroughput, TokensAndMfuByHand) {
  const Scenario s = load_scenario_text(kTiny, shipped_scenarios_dir() + "/tiny.yaml");
  const auto t = model_throughput(s, 1e-3);
  ASSERT_TRUE(t.has_value());
  // dp 2 replicas x 1 sequence x 24 tokens.
  EXPECT_EQ(t->tokens_per_step, 48);
  EXPECT_DOUBLE_EQ(t->tokens_per_s, 48'000.0);
  EXPECT_DOUBLE_EQ(t->tokens_per_s_per_gpu, 6'000.0);
  // Parameters per layer: W_qkv 64 x (4 + 2 x 2) x 16 = 8,192, W_o 64 x 64 = 4,096, the MLP
  // 3 x 64 x 128 = 24,576, two norms 128: 36,992; two layers 73,984, embedding and output
  // 2 x 256 x 64 = 32,768, final norm 64: 106,816. Those that multiply (all but the
  // embedding): 90,432; 6 x 90,432 + 12 x 2 layers x 4 heads x 16 x 24 = 542,592 + 36,864 =
  // 579,456 FLOPs per token. Over the H100's 989.4 TFLOP/s bf16 peak (dgx-h100.yaml).
  EXPECT_DOUBLE_EQ(t->model_flops_per_s_per_gpu, 6'000.0 * 579'456);
  EXPECT_DOUBLE_EQ(t->mfu, 6'000.0 * 579'456 / 989.4e12);
}

TEST(ModelThroughput, NoneWithoutAModelOrATime) {
  const Scenario s = load_scenario_text(kTiny, shipped_scenarios_dir() + "/tiny.yaml");
  EXPECT_FALSE(model_throughput(s, 0).has_value());
  const Scenario plain = load_scenario(shipped_scenarios_dir() + "/quickstart.yaml");
  EXPECT_FALSE(model_throughput(plain, 1e-3).has_value());
}

}  // namespace
}  // namespace symmesh::evaluation
