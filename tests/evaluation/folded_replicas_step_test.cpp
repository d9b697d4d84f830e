// The planned step lowered with its data-parallel replicas folded (EvaluationOptions::
// fold_replicas, `simulate --fold-replicas`): the reference is the same scenario lowered
// and simulated rank by rank, which must report the same step op by op.
#include <gtest/gtest.h>

#include <string>

#include "core/errors.hpp"
#include "evaluation/scenario_evaluation.hpp"
#include "scenario/scenario_loader.hpp"
#include "tests/thrown.hpp"

namespace symmesh::evaluation {
namespace {

using symmesh::testing::thrown;

// Llama 3.1 8B cut to 2 layers, [pp 2, dp 4, tp 2] on 8 nodes of 2 GPUs, so that each
// (stage, replica) has a node of its own and the data-parallel rings cross nodes; 2
// micro-batches of one 1024-token sequence per replica, Adam.
Scenario pp_dp_tp_over_nodes() {
  return load_scenario_text(R"yaml(version: 2
cluster: {base: clusters/dgx-h100.yaml, nodes: 8, gpus_per_node: 2,
          inter_node: {nics_per_node: 2}}
mesh: {shape: [2, 4, 2], names: [pp, dp, tp]}
dtype: bf16
cost_model: analytic
model: {hf_config: models/llama3.1-8b.json, layers: 2, seq: 1024, micro_batch: 1,
        global_batch: 8}
training: {optimizer: adam}
)yaml",
                            shipped_scenarios_dir() + "/folded.yaml");
}

EvaluationOptions options(bool fold) {
  EvaluationOptions o;
  o.fold_replicas = fold;
  o.host_memory = HostMemory{int64_t{16} << 30, "test"};
  return o;
}

TEST(FoldedReplicasStep, AFoldedStepReportsTheRankByRankStepOpByOp) {
  const Scenario s = pp_dp_tp_over_nodes();
  const SimulationReport whole = evaluate_scenario(s, options(false)).report;
  const SimulationReport folded = evaluate_scenario(s, options(true)).report;
  ASSERT_GT(whole.total_time_s, 0);
  EXPECT_NEAR(folded.total_time_s, whole.total_time_s, 1e-9 * whole.total_time_s);
  EXPECT_TRUE(folded.warnings.empty()) << folded.warnings.front();
  ASSERT_EQ(folded.ops.size(), whole.ops.size());
  for (size_t i = 0; i < whole.ops.size(); ++i) {
    const OpReport &f = folded.ops[i], &w = whole.ops[i];
    EXPECT_EQ(f.name, w.name);
    EXPECT_NEAR(f.start_s, w.start_s, 1e-12) << w.name;
    EXPECT_NEAR(f.end_s, w.end_s, 1e-12) << w.name;
    EXPECT_EQ(f.peak_memory_bytes_per_rank, w.peak_memory_bytes_per_rank) << w.name;
  }
  ASSERT_TRUE(folded.step && whole.step);
  EXPECT_EQ(folded.step->peak_memory_bytes, whole.step->peak_memory_bytes);
  ASSERT_TRUE(folded.model && whole.model);
  EXPECT_NEAR(folded.model->mfu, whole.model->mfu, 1e-9);
}

TEST(FoldedReplicasStep, TheFoldedProgramHoldsOneReplicasOps) {
  const Scenario s = pp_dp_tp_over_nodes();
  const auto whole = prepare_scenario(s, options(false));
  const auto folded = prepare_scenario(s, options(true));
  const Program& w = whole->workload.program;
  const Program& f = folded->workload.program;
  EXPECT_EQ(f.folding().replicas, 4);
  EXPECT_EQ(f.folding().stride, 2);  // a replica is one tp pair within its stage
  EXPECT_EQ(f.counts().stream_ops * 4, w.counts().stream_ops);
  for (int rank = 0; rank < f.world_size(); ++rank)
    if (!f.holds(rank))
      for (const Stream& stream : f.streams(rank)) EXPECT_TRUE(stream.ops.empty()) << rank;
}

TEST(FoldedReplicasStep, FoldingAndEmulationAreRefusedTogether) {
  EvaluationOptions o = options(true);
  o.emulate = true;
  const std::string message =
      thrown<InvalidArgument>([&] { evaluate_scenario(pp_dp_tp_over_nodes(), o); }).message();
  EXPECT_NE(message.find("carries no data"), std::string::npos) << message;
}

// A put_signal between two named ranks is not the same in every replica.
TEST(FoldedReplicasStep, AStepWithAPutBetweenNamedRanksIsNotFolded) {
  const Scenario s = load_scenario_text(R"yaml(version: 2
cluster: {nodes: 1, gpus_per_node: 4, gpu: {peak: {bf16: 100 TFLOP/s}, memory: {capacity: 80 GiB,
          bandwidth: 3 TB/s}}, intra_node: {kind: nvswitch, bandwidth: 100 GB/s, latency: 1 us}}
mesh: {shape: [4], names: [dp]}
cost_model: analytic
workload:
  - {name: handoff, op: put_signal, src: 0, dst: 1, bytes: 1 MiB}
)yaml",
                                        "handoff.yaml");
  const InvalidArgument e =
      thrown<InvalidArgument>([&] { evaluate_scenario(s, options(true)); });
  EXPECT_NE(e.message().find("op 'handoff': a put_signal from rank 0 to rank 1 is not the same "
                             "in every replica"),
            std::string::npos)
      << e.message();
  EXPECT_NE(e.where().find("handoff.yaml:7"), std::string::npos) << e.where();
}

}  // namespace
}  // namespace symmesh::evaluation
