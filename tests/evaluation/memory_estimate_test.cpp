// The host memory estimate (evaluation/memory_estimate.hpp), counted by running the
// lowering into a counting Program, against hand-counted op and byte totals and against the
// Program the real lowering then builds (counted here from its streams and buffers); and
// the guard that refuses or skips with it, fed injected "available" figures (never this
// machine's memory).
#include "evaluation/memory_estimate.hpp"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cstdio>

#include "core/errors.hpp"
#include "core/program.hpp"
#include "evaluation/scenario_evaluation.hpp"
#include "evaluation/sweep_runner.hpp"
#include "scenario/scenario_loader.hpp"

namespace symmesh::evaluation {
namespace {

using ::testing::HasSubstr;

const std::string kScenarios = std::string(SYMMESH_SOURCE_DIR) + "/scenarios/";

// What a lowered Program really holds, counted from its streams and allocations.
struct ProgramSize {
  int64_t ops = 0;
  int64_t op_capacity = 0;   // ops the streams have room for
  int64_t buffer_bytes = 0;  // every rank's buffers (what emulation holds)
};

ProgramSize program_size(const Program& program) {
  ProgramSize size;
  for (int r = 0; r < program.world_size(); ++r)
    for (const Stream& stream : program.streams(r)) {
      size.ops += static_cast<int64_t>(stream.ops.size());
      size.op_capacity += static_cast<int64_t>(stream.ops.capacity());
    }
  for (const auto& a : program.local_allocations()) size.buffer_bytes += a.size_bytes;
  for (const auto& h : program.symmetric_allocations())
    size.buffer_bytes += h.size_bytes * static_cast<int64_t>(program.group(h.group).ranks.size());
  return size;
}

// Lowered as `symmesh simulate` lowers it, with room for anything.
ProgramSize lowered_size(const Scenario& scenario, bool emulate) {
  EvaluationOptions options;
  options.emulate = emulate;
  options.host_memory = HostMemory{int64_t{1} << 50, ""};
  return program_size(prepare_scenario(scenario, options)->workload.program);
}

HostMemoryEstimate estimate(const Scenario& scenario, bool emulate) {
  EvaluationOptions options;
  options.emulate = emulate;
  return estimate_scenario_memory(scenario, options);
}

TEST(MemoryEstimate, CollectiveOpsAreCountedExactly) {
  // Mesh 2x4 (8 ranks). Per op, over all 8 ranks, p ranks per group (p-1 ring steps):
  //   all_gather dim 1 (p=4):     put+wait        2*3*8 = 48
  //   reduce_scatter dim 1 (p=4): put+wait+reduce 3*3*8 = 72
  //   all_reduce dim 0 (p=2):     RS then AG      5*1*8 = 40
  //   all_to_all dim 1 (p=4):     put+wait        2*3*8 = 48
  //   put_signal 0 -> 5:          put, wait           = 2
  //   a barrier per rank after each of the 5 ops: 5*8 = 40     total 250
  const Scenario s = load_scenario_text(R"yaml(name: collectives
cluster: clusters/dgx-h100.yaml
mesh: {shape: [2, 4], names: [dp, tp]}
workload:
  - {name: ag, op: all_gather, bytes: 1 MiB, mesh_dim: tp}
  - {name: rs, op: reduce_scatter, bytes: 1 MiB, mesh_dim: tp}
  - {name: ar, op: all_reduce, bytes: 1 MiB, mesh_dim: dp}
  - {name: a2a, op: all_to_all, bytes: 1 MiB, mesh_dim: tp}
  - {name: ping, op: put_signal, bytes: 1 MiB, src: 0, dst: 5}
)yaml",
                                        kScenarios + "collectives.yaml");
  EXPECT_EQ(estimate(s, false).stream_ops, 250);
  const ProgramSize actual = lowered_size(s, false);
  EXPECT_EQ(actual.ops, 250);
  EXPECT_EQ(actual.op_capacity, 250);  // reserved from the count: no growth slack
  // Emulated buffers, per rank in MiB: ag 1; rs 1 + 3 staging slots of 1/4 = 1.75; ar over
  // pairs 1 + 1/2 = 1.5; a2a 1 + 1 receive buffer = 2: 6.25 MiB x 8 ranks = 50 MiB;
  // put_signal: 8 ranks' 1 MiB + the 1 MiB source = 9 MiB. 59 MiB.
  EXPECT_EQ(estimate(s, true).emulated_bytes, int64_t{59} << 20);
  EXPECT_EQ(lowered_size(s, true).buffer_bytes, int64_t{59} << 20);
  EXPECT_EQ(estimate(s, false).emulated_bytes, 0);
}

TEST(MemoryEstimate, APlannedMatmulCountsItsCollectivesAndCopies) {
  // mesh-2x8-mm's up_proj at 16 ranks (version 1): a [8192,8192] S(0),R; b [8192,28672]
  // R,S(1). The analytic plan keeps both as they are (no redistribution: a row shard times
  // a column shard is local), so 16 matmuls + 16 barriers = 32 ops.
  const Scenario s = load_scenario(kScenarios + "version1-by-hand/mesh-2x8-mm.yaml");
  EXPECT_EQ(estimate(s, false).stream_ops, 32);
  EXPECT_EQ(lowered_size(s, false).ops, 32);
}

// The estimate against the real Program for shipped scenarios, some moved to larger
// meshes: the counts are the lowering's own, so ops are equal, and the Program is reserved
// exactly from them.
struct SizedCase {
  std::string file;
  int nodes;  // 0: as the file says
  std::vector<int> mesh;
};

class EstimateAgainstProgram : public ::testing::TestWithParam<SizedCase> {};

TEST_P(EstimateAgainstProgram, OpsAreExactAndTheProgramHasNoSlack) {
  const SizedCase& c = GetParam();
  Scenario s = load_scenario(kScenarios + c.file);
  if (c.nodes > 0) s = with_cluster_size(s, c.nodes, c.mesh);
  const HostMemoryEstimate e = estimate(s, false);
  const ProgramSize actual = lowered_size(s, false);
  std::printf("[ figures  ] %s at %lld GPUs: %lld ops, Program %lld bytes estimated\n",
              c.file.c_str(), static_cast<long long>(s.cluster.num_gpus()),
              static_cast<long long>(e.stream_ops), static_cast<long long>(e.program_bytes));
  EXPECT_EQ(e.stream_ops, actual.ops);
  EXPECT_EQ(actual.op_capacity, actual.ops);
  // The ops alone take 64 bytes each; the estimate adds the side tables and allocations.
  EXPECT_GE(e.program_bytes, actual.ops * static_cast<int64_t>(sizeof(StreamOp)));
}

INSTANTIATE_TEST_SUITE_P(
    Scenarios, EstimateAgainstProgram,
    ::testing::Values(SizedCase{"ring-allgather-8gpu.yaml", 0, {}},
                      SizedCase{"moe-expert-bmm.yaml", 0, {}},  // version 2
                      SizedCase{"version1-by-hand/moe-expert-bmm.yaml", 0, {}},
                      SizedCase{"version1-by-hand/llama3-70b-layer-tp8.yaml", 0, {}},
                      SizedCase{"version1-by-hand/llama3-70b-layer-tp8.yaml", 8, {8, 8}},
                      SizedCase{"version1-by-hand/llama3-70b-layer-tp8.yaml", 8, {2, 32}},
                      SizedCase{"version1-by-hand/llama3-405b-layer-tp.yaml", 0, {}},
                      // fused all-gather + mm (strategies/collective_matmul)
                      SizedCase{"async-tp-linear.yaml", 0, {}},
                      SizedCase{"linear-mlp.yaml", 0, {}}));

TEST(MemoryEstimate, EmulatedBytesAreTheBuffersAndTheInputValues) {
  // Small shapes, so emulation is cheap; a column-sharded b gathered over tp.
  const Scenario s = load_scenario_text(R"yaml(name: small-emulated
cluster: clusters/dgx-h100.yaml
mesh: {shape: [2, 4], names: [dp, tp]}
dtype: fp32
cost_model: dtensor
workload:
  - {name: mm1, op: mm, a: [64, 96], b: [96, 128],
     a_placements: ["S(0)", "S(1)"], b_placements: ["R", "S(0)"]}
  - {name: mm2, op: mm, a: [64, 128], b: [128, 32],
     a_placements: ["S(0)", "R"], b_placements: ["R", "S(1)"]}
)yaml",
                                        kScenarios + "small-emulated.yaml");
  const HostMemoryEstimate e = estimate(s, true);
  const ProgramSize actual = lowered_size(s, true);
  // Every buffer of every rank, plus the report's global input values in double:
  // mm1 64*96 + 96*128 = 18,432 values, mm2 64*128 + 128*32 = 12,288: 30,720 * 8 B.
  EXPECT_EQ(e.emulated_bytes, actual.buffer_bytes + 30720 * 8);
}

TEST(MemoryGuard, SimulateRefusesUpFrontNamingTheScenarioAndBothFigures) {
  const Scenario s = load_scenario(kScenarios + "version1-by-hand/llama3-70b-layer-tp8.yaml");
  EvaluationOptions options;
  options.host_memory = HostMemory{1'000'000, ""};  // 1 MB
  const HostMemoryEstimate e = estimate_scenario_memory(s, options);
  ASSERT_GT(e.total_bytes(), 1'000'000);
  try {
    prepare_scenario(s, options);
    FAIL() << "expected a refusal";
  } catch (const InvalidArgument& err) {
    EXPECT_EQ(err.where(), kScenarios + "version1-by-hand/llama3-70b-layer-tp8.yaml");
    EXPECT_THAT(err.message(), HasSubstr("scenario 'llama3-70b-layer-tp8' needs about " +
                                         gigabytes_text(e.total_bytes()) +
                                         " of host memory to simulate; 1 MB available"));
  }
  // Just enough: prepared.
  options.host_memory = HostMemory{e.total_bytes(), ""};
  EXPECT_NO_THROW(prepare_scenario(s, options));
}

TEST(MemoryGuard, EmulationRefusesWhenTheRealBuffersDoNotFit) {
  // Four 4096^2 bf16 mms on 16 ranks, each local (a by rows over dp, b by columns over tp):
  // per rank a 2048x4096 (16 MiB), b 4096x512 (4 MiB), out 2048x512 (2 MiB) = 22 MiB;
  // x 16 ranks x 4 ops = 1,476,395,008 bytes of buffers, plus the report's input values,
  // 4 x 2 x 4096^2 doubles = 1,073,741,824: 2,550,136,832 bytes, "2.6 GB". The Program
  // also holds the a and b pieces' initial contents, (16 + 4) MiB x 16 x 4 = 1,342,177,280,
  // and the simulator takes 16 MiB: 3,909,091,328 bytes and a few dozen ops, "3.9 GB".
  const Scenario s = load_scenario_text(R"yaml(name: big-emulated
cluster: {base: clusters/dgx-h100.yaml, nodes: 2}
mesh: {shape: [2, 8], names: [dp, tp]}
dtype: bf16
workload:
  - {name: mm1, op: mm, a: [4096, 4096], b: [4096, 4096],
     a_placements: ["S(0)", "R"], b_placements: ["R", "S(1)"]}
  - {name: mm2, op: mm, a: [4096, 4096], b: [4096, 4096],
     a_placements: ["S(0)", "R"], b_placements: ["R", "S(1)"]}
  - {name: mm3, op: mm, a: [4096, 4096], b: [4096, 4096],
     a_placements: ["S(0)", "R"], b_placements: ["R", "S(1)"]}
  - {name: mm4, op: mm, a: [4096, 4096], b: [4096, 4096],
     a_placements: ["S(0)", "R"], b_placements: ["R", "S(1)"]}
)yaml",
                                        kScenarios + "big-emulated.yaml");
  EvaluationOptions options;
  options.emulate = true;
  options.host_memory = HostMemory{2'000'000'000, ""};
  EXPECT_EQ(estimate_scenario_memory(s, options).emulated_bytes, 2550136832);
  try {
    prepare_scenario(s, options);
    FAIL() << "expected a refusal";
  } catch (const InvalidArgument& err) {
    EXPECT_THAT(err.what(), HasSubstr("big-emulated.yaml: scenario 'big-emulated' needs about 3.9 "
                                      "GB of host memory to emulate; 2.0 GB available"));
    EXPECT_THAT(err.what(), HasSubstr("every rank's real buffers: 2.6 GB"));
  }
}

TEST(MemoryGuard, AnOpPastTheEmulationLimitIsRefusedByTheLoweringItself) {
  // One 8192^2 bf16 mm on 16 ranks: 3 * 8192^2 * 2 B * 16 = 6,442,450,944 > 2 GiB for one op.
  // The lowering refuses it whatever the machine has (already while counting).
  const Scenario s = load_scenario_text(R"yaml(name: one-big-op
cluster: {base: clusters/dgx-h100.yaml, nodes: 2}
mesh: {shape: [2, 8], names: [dp, tp]}
dtype: bf16
workload:
  - {name: big, op: mm, a: [8192, 8192], b: [8192, 8192],
     a_placements: ["S(0)", "R"], b_placements: ["R", "S(1)"]}
)yaml",
                                        kScenarios + "one-big-op.yaml");
  EvaluationOptions options;
  options.emulate = true;
  options.host_memory = HostMemory{1'000'000, ""};
  try {
    prepare_scenario(s, options);
    FAIL() << "expected a refusal";
  } catch (const InvalidArgument& err) {
    EXPECT_THAT(err.what(), HasSubstr("too large to emulate"));
    EXPECT_THAT(err.what(), ::testing::Not(HasSubstr("host memory")));
  }
}

TEST(MemoryGuard, ASweepSkipsThePointsThatDoNotFitAndSimulatesTheRest) {
  // Two points: 8 GPUs (mesh 8) and 32 GPUs (mesh 32). An all-gather's ops grow as
  // 2(p-1)p: 8 GPUs 2*7*8 + 8 = 120 ops, 32 GPUs 2*31*32 + 32 = 2016. Memory between the
  // two: the small point runs, the large one is skipped with both figures.
  const Scenario s = load_scenario_text(R"yaml(name: two-sizes
cluster: clusters/dgx-h100.yaml
mesh: {shape: [8], names: [tp]}
workload:
  - {name: gather, op: all_gather, bytes: 1 MiB, mesh_dim: tp}
sweep: {nodes: [1, 4], mesh: [[8], [32]]}
)yaml",
                                        kScenarios + "two-sizes.yaml");
  const HostMemoryEstimate small = estimate_scenario_memory(with_cluster_size(s, 1, {8}), {});
  const HostMemoryEstimate large = estimate_scenario_memory(with_cluster_size(s, 4, {32}), {});
  EXPECT_EQ(small.stream_ops, 120);
  EXPECT_EQ(large.stream_ops, 2016);
  SweepOptions options;
  options.jobs = 2;
  options.evaluation.host_memory = HostMemory{(small.total_bytes() + large.total_bytes()) / 2, ""};
  const SweepRun run = run_sweep(s, options);
  ASSERT_EQ(run.points.size(), 2u);
  EXPECT_TRUE(run.points[0].simulated());
  ASSERT_FALSE(run.points[1].simulated());
  EXPECT_EQ(*run.points[1].skip_reason,
            "needs about " + gigabytes_text(large.total_bytes()) + " of host memory to simulate; " +
                gigabytes_text(options.evaluation.host_memory->available_bytes) + " available");
  EXPECT_EQ(run.best, std::optional<size_t>(0));
}

}  // namespace
}  // namespace symmesh::evaluation
