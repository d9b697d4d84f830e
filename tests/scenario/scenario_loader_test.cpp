// The scenario loader on good input: the reference example, the shipped catalogue, values
// converted to SI units, cluster files and their bases, resizing for sweeps. Expected
// values come from scenario-format.md and hand arithmetic.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <filesystem>

#include "scenario/scenario_loader.hpp"
#include "tests/scenario/scenario_test_files.hpp"

using namespace symmesh;
using symmesh::testing::error_of;
using symmesh::testing::ScenarioFiles;
using ::testing::ElementsAre;
using ::testing::HasSubstr;

namespace {

const std::string kScenarios = std::string(SYMMESH_SOURCE_DIR) + "/scenarios";

// The example of the scenario format's first, version-1 reference, verbatim (an inline
// cluster and every kind of op; docs/scenario-format.md, "A complete example", succeeds it).
const char* kReferenceExample = R"yaml(name: llama3-70b-layer-tp8                # free text
cluster:                                  # inline, or a path: cluster: clusters/dgx-h100.yaml
  nodes: 4
  gpus_per_node: 8
  gpu:
    name: H100-SXM
    peak: {bf16: 989.4 TFLOP/s, fp16: 989.4 TFLOP/s, fp32: 67 TFLOP/s, fp8: 1978.9 TFLOP/s}
    memory: {capacity: 80 GiB, bandwidth: 3.35 TB/s}
  intra_node: {kind: nvswitch, bandwidth: 450 GB/s, latency: 1 us}   # per GPU, per direction
  inter_node: {kind: rail, nics_per_node: 8, bandwidth: 400 Gb/s, latency: 3 us}  # kind: rail | fat-tree
mesh: {shape: [4, 8], names: [dp, tp]}    # product must equal nodes × gpus_per_node
dtype: bf16                               # default for ops that name none
cost_model: analytic                      # dtensor | analytic | simulated
workload:                                 # run in order; each op's placements are its inputs' current ones
  - {name: qkv, op: mm, a: [8192, 8192], b: [8192, 10240],
     a_placements: ["S(0)", "R"], b_placements: ["R", "S(1)"]}
  - {name: experts, op: bmm, a: [8, 2048, 4096], b: [8, 4096, 14336],
     a_placements: ["S(0)", "R"], b_placements: ["S(0)", "S(2)"], dtype: bf16}
  - {name: handoff, op: put_signal, bytes: 64 MiB, src: 0, dst: 8}
  - {name: grads, op: all_reduce, bytes: 1 GiB, mesh_dim: dp}       # also all_gather, reduce_scatter, all_to_all
sweep:                                    # optional: capacity planning
  nodes: [1, 2, 4, 8, 16]
  mesh: auto                              # or a list of shapes; auto = factorisations of the GPU count
objective: {max_time: 20 ms}              # optional: smallest cluster meeting it
)yaml";

}  // namespace

TEST(ScenarioLoader, AFifoIsRefusedInsteadOfReadForever) {
  // Opening a FIFO for reading blocks until a writer comes: the loader must not try.
  const auto fifo = std::filesystem::temp_directory_path() /
                    ("symmesh_fifo_" + std::to_string(getpid()) + ".yaml");
  std::filesystem::remove(fifo);
  ASSERT_EQ(mkfifo(fifo.c_str(), 0600), 0);
  try {
    load_scenario(fifo.string());
    ADD_FAILURE() << "no error";
  } catch (const InvalidArgument& e) {
    EXPECT_THAT(e.message(), HasSubstr("is not a regular file"));
  }
  std::filesystem::remove(fifo);
}

TEST(ScenarioLoader, ReferenceExampleLoadsWithSiValues) {
  ScenarioFiles files;
  const Scenario s = load_scenario(files.write("example.yaml", kReferenceExample));
  EXPECT_EQ(s.name, "llama3-70b-layer-tp8");
  const ClusterSpec& c = s.cluster;
  EXPECT_EQ(c.nodes, 4);
  EXPECT_EQ(c.gpus_per_node, 8);
  EXPECT_EQ(c.gpu.name, "H100-SXM");
  EXPECT_DOUBLE_EQ(c.gpu.peak_flops_per_s.at("bf16"), 989.4e12);
  EXPECT_DOUBLE_EQ(c.gpu.peak_flops_per_s.at("fp16"), 989.4e12);
  EXPECT_DOUBLE_EQ(c.gpu.peak_flops_per_s.at("fp32"), 67e12);
  EXPECT_DOUBLE_EQ(c.gpu.peak_flops_per_s.at("fp8"), 1978.9e12);
  EXPECT_DOUBLE_EQ(c.gpu.memory_capacity_bytes, 80.0 * 1024 * 1024 * 1024);  // 85,899,345,920
  EXPECT_DOUBLE_EQ(c.gpu.memory_bandwidth_bytes_per_s, 3.35e12);
  EXPECT_EQ(c.intra_node.kind, "nvswitch");
  EXPECT_DOUBLE_EQ(c.intra_node.bandwidth_bytes_per_s, 4.5e11);  // 450 GB/s
  EXPECT_DOUBLE_EQ(c.intra_node.latency_s, 1e-6);                // 1 us
  EXPECT_EQ(c.inter_node.kind, "rail");
  EXPECT_EQ(c.inter_node.nics_per_node, 8);
  EXPECT_DOUBLE_EQ(c.inter_node.bandwidth_bytes_per_s, 5e10);  // 400 Gb/s = 400e9 / 8 B/s
  EXPECT_DOUBLE_EQ(c.inter_node.latency_s, 3e-6);
  EXPECT_THAT(s.mesh_shape, ElementsAre(4, 8));
  EXPECT_THAT(s.mesh_names, ElementsAre("dp", "tp"));
  EXPECT_EQ(s.dtype, DType::bf16);
  EXPECT_EQ(s.cost_model, "analytic");

  ASSERT_EQ(s.workload.size(), 4u);
  const WorkloadOp& qkv = s.workload[0];
  EXPECT_EQ(qkv.name, "qkv");
  EXPECT_EQ(qkv.kind, OpKind::mm);
  EXPECT_THAT(qkv.a, ElementsAre(8192, 8192));
  EXPECT_THAT(qkv.b, ElementsAre(8192, 10240));
  EXPECT_EQ(to_string(qkv.a_placements), "S(0),R");
  EXPECT_EQ(to_string(qkv.b_placements), "R,S(1)");
  EXPECT_FALSE(qkv.dtype.has_value());
  EXPECT_EQ(qkv.where.line, 15);
  EXPECT_EQ(qkv.where.column, 5);
  const WorkloadOp& experts = s.workload[1];
  EXPECT_EQ(experts.kind, OpKind::bmm);
  EXPECT_THAT(experts.b, ElementsAre(8, 4096, 14336));
  EXPECT_EQ(to_string(experts.b_placements), "S(0),S(2)");
  EXPECT_EQ(experts.dtype, DType::bf16);
  const WorkloadOp& handoff = s.workload[2];
  EXPECT_EQ(handoff.kind, OpKind::put_signal);
  EXPECT_EQ(handoff.bytes, 67108864);  // 64 MiB
  EXPECT_EQ(handoff.src, 0);
  EXPECT_EQ(handoff.dst, 8);
  const WorkloadOp& grads = s.workload[3];
  EXPECT_EQ(grads.kind, OpKind::all_reduce);
  EXPECT_EQ(grads.bytes, 1073741824);  // 1 GiB
  EXPECT_EQ(grads.mesh_dim, 0);        // dp

  ASSERT_TRUE(s.sweep.has_value());
  EXPECT_THAT(s.sweep->nodes, ElementsAre(1, 2, 4, 8, 16));
  EXPECT_TRUE(s.sweep->mesh_auto);
  ASSERT_TRUE(s.objective.has_value());
  EXPECT_DOUBLE_EQ(*s.objective->max_time_s, 0.02);
}

TEST(ScenarioLoader, DefaultsNamesAndShorthands) {
  ScenarioFiles files;
  const std::string path = files.write("small-one.yaml", R"yaml(cluster: clusters/dgx-h100.yaml
mesh: [8]
workload:
  - {op: mm, a: 64x32, b: [32, 16], a_placements: "S(0)", b_placements: [R], dtype: fp32}
  - {op: all_reduce, bytes: 4 KiB}
  - {op: reduce_scatter, bytes: 8 KiB, mesh_dim: 0}
)yaml");
  const Scenario s = load_scenario(path);
  EXPECT_EQ(s.name, "small-one");  // the file's stem
  EXPECT_EQ(s.path, path);
  EXPECT_EQ(s.cost_model, "dtensor");
  EXPECT_EQ(s.dtype, DType::bf16);
  EXPECT_THAT(s.mesh_shape, ElementsAre(8));
  EXPECT_TRUE(s.mesh_names.empty());
  ASSERT_EQ(s.workload.size(), 3u);
  EXPECT_EQ(s.workload[0].name, "mm0");
  EXPECT_THAT(s.workload[0].a, ElementsAre(64, 32));
  EXPECT_EQ(s.dtype_of(s.workload[0]), DType::fp32);
  EXPECT_EQ(s.workload[1].name, "all_reduce1");
  EXPECT_EQ(s.workload[1].bytes, 4096);
  EXPECT_EQ(s.workload[1].mesh_dim, 0);  // a 1-D mesh needs no mesh_dim
  EXPECT_EQ(s.workload[2].name, "reduce_scatter2");
  EXPECT_FALSE(s.sweep.has_value());
  EXPECT_FALSE(s.objective.has_value());
  // No `version:` is version 1: no tensors, no training, ops that name no tensors.
  EXPECT_EQ(s.version, 1);
  EXPECT_FALSE(s.is_dataflow());
  EXPECT_TRUE(s.tensors.empty());
  EXPECT_FALSE(s.training.has_value());
  EXPECT_FALSE(s.workload[0].reads_tensors());
  EXPECT_EQ(s.workload[0].a_tensor, "");
}

TEST(ScenarioLoader, ExplicitVersionOneLoadsAsBefore) {
  ScenarioFiles files;
  const Scenario s = load_scenario(files.write("v1.yaml", R"yaml(version: 1
cluster: clusters/dgx-h100.yaml
mesh: [8]
workload:
  - {op: mm, a: [64, 32], b: [32, 16], a_placements: ["S(0)"], b_placements: [R],
     out_placements: ["S(0)"]}
)yaml"));
  EXPECT_EQ(s.version, 1);
  ASSERT_EQ(s.workload.size(), 1u);
  EXPECT_THAT(s.workload[0].a, ElementsAre(64, 32));
  EXPECT_EQ(to_string(s.workload[0].a_placements), "S(0)");
  ASSERT_TRUE(s.workload[0].out_placements.has_value());
  EXPECT_EQ(to_string(*s.workload[0].out_placements), "S(0)");
}

// The example of docs/scenario-format.md, "Version 2: named tensors and dataflow".
TEST(ScenarioLoader, VersionTwoTensorsAndDataflow) {
  ScenarioFiles files;
  const Scenario s = load_scenario(files.write("mlp.yaml", R"yaml(version: 2
cluster: clusters/dgx-h100.yaml
mesh: {shape: [2, 4], names: [dp, tp]}
tensors:
  x:  {shape: [32768, 8192], placements: ["S(0)", "R"]}
  w1: {shape: [8192, 28672], parameter: true}
  w2: {shape: [28672, 8192], parameter: true, placements: ["R", "S(0)"]}
  y:  {placements: ["S(0)", "R"]}
training: {backward: true, optimizer: adam, zero: 2}
workload:
  - {name: up,   op: mm, a: x, b: w1, output: h}
  - {name: down, op: mm, a: h, b: w2, output: y}
  - {name: sync, op: all_reduce, bytes: 8 MiB, mesh_dim: dp}
)yaml"));
  EXPECT_EQ(s.version, 2);
  EXPECT_TRUE(s.is_dataflow());

  // Declarations in file order, by role.
  ASSERT_EQ(s.tensors.size(), 4u);
  const TensorDecl& x = s.tensors[0];
  EXPECT_EQ(x.name, "x");
  EXPECT_EQ(x.role, TensorDecl::Role::input);
  EXPECT_THAT(x.shape, ElementsAre(32768, 8192));
  ASSERT_TRUE(x.placements.has_value());
  EXPECT_EQ(to_string(*x.placements), "S(0),R");
  EXPECT_EQ(x.where.line, 5);  // at the tensor's name
  EXPECT_EQ(x.where.column, 3);
  const TensorDecl& w1 = s.tensors[1];
  EXPECT_EQ(w1.name, "w1");
  EXPECT_EQ(w1.role, TensorDecl::Role::parameter);
  EXPECT_THAT(w1.shape, ElementsAre(8192, 28672));
  EXPECT_FALSE(w1.placements.has_value());  // free: the planner chooses
  const TensorDecl& w2 = s.tensors[2];
  EXPECT_EQ(w2.role, TensorDecl::Role::parameter);
  ASSERT_TRUE(w2.placements.has_value());
  EXPECT_EQ(to_string(*w2.placements), "R,S(0)");
  const TensorDecl& y = s.tensors[3];
  EXPECT_EQ(y.name, "y");
  EXPECT_EQ(y.role, TensorDecl::Role::output);
  EXPECT_TRUE(y.shape.empty());
  ASSERT_TRUE(y.placements.has_value());
  EXPECT_EQ(to_string(*y.placements), "S(0),R");
  EXPECT_EQ(y.where.line, 8);
  EXPECT_EQ(s.tensor("w2"), &s.tensors[2]);
  EXPECT_EQ(s.tensor("h"), nullptr);  // produced, not declared

  ASSERT_TRUE(s.training.has_value());
  EXPECT_TRUE(s.training->backward);
  EXPECT_EQ(s.training->optimizer, Optimizer::adam);
  EXPECT_EQ(s.training->zero_stage, 2);
  EXPECT_EQ(s.training->where.line, 9);
  EXPECT_EQ(s.training->where.column, 11);

  ASSERT_EQ(s.workload.size(), 3u);
  const WorkloadOp& up = s.workload[0];
  EXPECT_EQ(up.name, "up");
  EXPECT_TRUE(up.reads_tensors());
  EXPECT_EQ(up.a_tensor, "x");
  EXPECT_EQ(up.b_tensor, "w1");
  EXPECT_EQ(up.bias_tensor, "");
  EXPECT_EQ(up.output_tensor, "h");
  EXPECT_THAT(up.a, ElementsAre(32768, 8192));
  EXPECT_THAT(up.b, ElementsAre(8192, 28672));
  EXPECT_FALSE(up.bias.has_value());
  EXPECT_TRUE(up.a_placements.empty());  // the declarations carry them
  EXPECT_TRUE(up.b_placements.empty());
  EXPECT_FALSE(up.out_placements.has_value());
  const WorkloadOp& down = s.workload[1];
  EXPECT_EQ(down.a_tensor, "h");
  EXPECT_EQ(down.b_tensor, "w2");
  EXPECT_EQ(down.output_tensor, "y");
  // h = x[32768, 8192] @ w1[8192, 28672]: [32768, 28672].
  EXPECT_THAT(down.a, ElementsAre(32768, 28672));
  EXPECT_THAT(down.b, ElementsAre(28672, 8192));
  EXPECT_EQ(down.where.line, 12);
  // A collective reads as in version 1.
  const WorkloadOp& sync = s.workload[2];
  EXPECT_EQ(sync.kind, OpKind::all_reduce);
  EXPECT_FALSE(sync.reads_tensors());
  EXPECT_EQ(sync.bytes, 8388608);  // 8 MiB = 8 x 1,048,576
  EXPECT_EQ(sync.mesh_dim, 0);     // dp
}

TEST(ScenarioLoader, VersionTwoLinearAndAddmmBiases) {
  ScenarioFiles files;
  const Scenario s = load_scenario(files.write("bias2.yaml", R"yaml(version: 2
cluster: clusters/dgx-h100.yaml
mesh: [8]
tensors:
  tokens: {shape: [4, 2048, 4096], placements: ["R"]}
  fc1_w:  {shape: [14336, 4096], parameter: true, placements: ["S(0)"]}
  fc1_b:  {shape: [14336], parameter: true}
  fc2_w:  {shape: [4096, 14336], parameter: true}
  rows:   {shape: [1024, 4096], placements: ["S(0)"]}
  proj_w: {shape: [4096, 512], parameter: true}
  proj_b: {shape: [512], parameter: true}
training: {backward: false, optimizer: sgd}
workload:
  - {name: fc1, op: linear, a: tokens, b: fc1_w, bias: fc1_b, output: hidden}
  - {name: fc2, op: linear, a: hidden, b: fc2_w, output: out, dtype: fp32}
  - {name: proj, op: addmm, bias: proj_b, a: rows, b: proj_w, output: proj}
)yaml"));
  ASSERT_TRUE(s.training.has_value());
  EXPECT_FALSE(s.training->backward);
  EXPECT_EQ(s.training->optimizer, Optimizer::sgd);
  EXPECT_EQ(s.training->zero_stage, 0);  // the default
  ASSERT_EQ(s.workload.size(), 3u);

  // linear with a bias.
  const WorkloadOp& fc1 = s.workload[0];
  EXPECT_EQ(fc1.kind, OpKind::linear);
  EXPECT_THAT(fc1.a, ElementsAre(4, 2048, 4096));
  EXPECT_THAT(fc1.b, ElementsAre(14336, 4096));
  EXPECT_EQ(fc1.bias_tensor, "fc1_b");
  EXPECT_THAT(*fc1.bias, ElementsAre(14336));
  EXPECT_EQ(fc1.output_tensor, "hidden");
  EXPECT_TRUE(fc1.bias_placements.empty());

  // linear without one: hidden = tokens[4, 2048, 4096] @ fc1_w[14336, 4096]^T is
  // [4, 2048, 14336].
  const WorkloadOp& fc2 = s.workload[1];
  EXPECT_EQ(fc2.a_tensor, "hidden");
  EXPECT_THAT(fc2.a, ElementsAre(4, 2048, 14336));
  EXPECT_THAT(fc2.b, ElementsAre(4096, 14336));
  EXPECT_EQ(fc2.bias_tensor, "");
  EXPECT_FALSE(fc2.bias.has_value());
  EXPECT_EQ(s.dtype_of(fc2), DType::fp32);

  // addmm with its bias; the op and its output share the name "proj" (separate namespaces).
  const WorkloadOp& proj = s.workload[2];
  EXPECT_EQ(proj.kind, OpKind::addmm);
  EXPECT_EQ(proj.name, "proj");
  EXPECT_EQ(proj.output_tensor, "proj");
  EXPECT_EQ(proj.bias_tensor, "proj_b");
  EXPECT_THAT(*proj.bias, ElementsAre(512));
  EXPECT_THAT(proj.a, ElementsAre(1024, 4096));
  EXPECT_THAT(proj.b, ElementsAre(4096, 512));
  EXPECT_EQ(s.tensor("proj"), nullptr);
}

TEST(ScenarioLoader, VersionTwoWithoutTensorsAndTrainingDefaults) {
  // A version-2 file needs `tensors:` only for matrix ops; `training: {}` takes the defaults.
  const Scenario s = load_scenario_text(R"yaml(version: 2
cluster: clusters/dgx-h100.yaml
mesh: [8]
training: {}
workload: [{name: gather, op: all_gather, bytes: 1 MiB}]
)yaml",
                                        "v2.yaml");
  EXPECT_EQ(s.version, 2);
  EXPECT_TRUE(s.tensors.empty());
  ASSERT_TRUE(s.training.has_value());
  EXPECT_TRUE(s.training->backward);
  EXPECT_EQ(s.training->optimizer, Optimizer::adam);
  ASSERT_EQ(s.workload.size(), 1u);
  EXPECT_EQ(s.workload[0].bytes, 1048576);

  const Scenario untrained = load_scenario_text(R"yaml(version: 2
cluster: clusters/dgx-h100.yaml
mesh: [8]
workload: [{op: all_reduce, bytes: 1 MiB}]
)yaml",
                                                "v2.yaml");
  EXPECT_FALSE(untrained.training.has_value());
}

TEST(ScenarioLoader, AddmmAndBaddbmmCarryBias) {
  ScenarioFiles files;
  const Scenario s = load_scenario(files.write("bias.yaml", R"yaml(cluster: clusters/dgx-h100.yaml
mesh: {shape: [2, 4], names: [dp, tp]}
workload:
  - {name: lin, op: addmm, bias: [4096], a: [1024, 1024], b: [1024, 4096],
     bias_placements: [R, "S(0)"], a_placements: ["S(0)", R], b_placements: [R, "S(1)"]}
  - {name: blin, op: baddbmm, bias: [8, 1, 64], a: [8, 32, 16], b: [8, 16, 64],
     bias_placements: [R, R], a_placements: ["S(0)", R], b_placements: ["S(0)", R]}
)yaml"));
  ASSERT_EQ(s.workload.size(), 2u);
  EXPECT_EQ(s.workload[0].kind, OpKind::addmm);
  EXPECT_THAT(*s.workload[0].bias, ElementsAre(4096));
  EXPECT_EQ(to_string(s.workload[0].bias_placements), "R,S(0)");
  EXPECT_EQ(s.workload[1].kind, OpKind::baddbmm);
  EXPECT_THAT(*s.workload[1].bias, ElementsAre(8, 1, 64));
}

TEST(ScenarioShipped, EveryShippedScenarioLoads) {
  std::vector<std::string> names;
  for (const auto& entry : std::filesystem::directory_iterator(kScenarios)) {
    if (entry.path().extension() != ".yaml") continue;
    names.push_back(entry.path().filename().string());
    SCOPED_TRACE(entry.path().string());
    const Scenario s = load_scenario(entry.path().string());
    EXPECT_FALSE(s.workload.empty());
    EXPECT_EQ(s.name, entry.path().stem().string());
  }
  std::sort(names.begin(), names.end());
  EXPECT_THAT(names, ElementsAre("async-tp-linear.yaml", "linear-mlp.yaml",
                                 "llama3-405b-layer-tp.yaml", "llama3-70b-layer-tp8.yaml",
                                 "llama3-70b-layer-train.yaml", "llama3-8b-pipeline.yaml",
                                 "llama3-8b-train.yaml", "mesh-2x8-mm.yaml", "moe-expert-bmm.yaml",
                                 "pingpong.yaml", "quickstart.yaml", "ring-allgather-8gpu.yaml"));
}

TEST(ScenarioShipped, EveryShippedClusterLoads) {
  std::vector<std::string> names;
  for (const auto& entry : std::filesystem::directory_iterator(kScenarios + "/clusters")) {
    names.push_back(entry.path().filename().string());
    SCOPED_TRACE(entry.path().string());
    const ClusterSpec c = load_cluster(entry.path().string());
    EXPECT_EQ(c.name, entry.path().stem().string());
    EXPECT_EQ(c.gpus_per_node, 8);
  }
  std::sort(names.begin(), names.end());
  EXPECT_THAT(names,
              ElementsAre("dgx-h100-calibrated.yaml", "dgx-h100-datasheet.yaml", "dgx-h100.yaml",
                          "dgx-h200-calibrated.yaml", "dgx-h200-datasheet.yaml", "dgx-h200.yaml",
                          "h200-ib-rail-4node.yaml", "ib-fattree-4node.yaml",
                          "ib-rail-4node-calibrated.yaml", "ib-rail-4node.yaml", "pcie-8gpu.yaml"));
}

TEST(ScenarioShipped, TheLlamaLayersAreVersionTwoWithTheirVersionOneCopiesKept) {
  for (const char* name : {"llama3-70b-layer-tp8", "llama3-405b-layer-tp"}) {
    SCOPED_TRACE(name);
    const Scenario now = load_scenario(kScenarios + "/" + name + ".yaml");
    const Scenario before = load_scenario(kScenarios + "/version1-by-hand/" + name + ".yaml");
    EXPECT_EQ(now.version, 2);
    EXPECT_EQ(before.version, 1);
    EXPECT_EQ(now.mesh_shape, before.mesh_shape);
    ASSERT_EQ(now.workload.size(), before.workload.size());
    // The same five GEMMs: names and shapes agree, only where placements come from changes.
    for (size_t i = 0; i < now.workload.size(); ++i) {
      EXPECT_EQ(now.workload[i].name, before.workload[i].name);
      EXPECT_EQ(now.workload[i].a, before.workload[i].a);
      EXPECT_EQ(now.workload[i].b, before.workload[i].b);
    }
  }
}

TEST(ScenarioShipped, TheVersionOneTrainingStepByHandLoads) {
  // The README's "before": 5 forward + 10 backward matmuls and one all-reduce of the tp-8
  // weight shards, (10240 + 8192 + 3 x 28672) x 8192 x 2 B / 8 = 204 MiB.
  const Scenario s = load_scenario(kScenarios + "/version1-by-hand/llama3-70b-layer-train-v1.yaml");
  EXPECT_EQ(s.version, 1);
  ASSERT_EQ(s.workload.size(), 16u);
  EXPECT_EQ(s.workload.back().bytes, int64_t{204} << 20);
  EXPECT_EQ(s.cluster.gpu.name, "H200-SXM");
}

TEST(ScenarioShipped, H200RailClusterIsFourDgxH200) {
  // H200 datasheet: 141 GB (decimal) at 4.8 TB/s; the rest from ib-rail-4node.yaml.
  const ClusterSpec c = load_cluster(kScenarios + "/clusters/h200-ib-rail-4node.yaml");
  EXPECT_EQ(c.nodes, 4);
  EXPECT_EQ(c.gpu.name, "H200-SXM");
  EXPECT_DOUBLE_EQ(c.gpu.memory_capacity_bytes, 141e9);
  EXPECT_DOUBLE_EQ(c.gpu.memory_bandwidth_bytes_per_s, 4.8e12);
  EXPECT_EQ(c.inter_node.kind, "rail");
  EXPECT_EQ(c.inter_node.nics_per_node, 8);
}

TEST(ScenarioShipped, ClusterFigures) {
  const ClusterSpec h100 = load_cluster(kScenarios + "/clusters/dgx-h100.yaml");
  EXPECT_EQ(h100.nodes, 1);
  EXPECT_DOUBLE_EQ(h100.gpu.peak_flops_per_s.at("bf16"), 989.4e12);
  EXPECT_DOUBLE_EQ(h100.gpu.peak_flops_per_s.at("fp8"), 1978.9e12);
  EXPECT_DOUBLE_EQ(h100.gpu.peak_flops_per_s.at("fp32"), 67e12);
  EXPECT_DOUBLE_EQ(h100.gpu.memory_capacity_bytes, 85899345920.0);  // 80 GiB
  EXPECT_DOUBLE_EQ(h100.gpu.memory_bandwidth_bytes_per_s, 3.35e12);
  EXPECT_DOUBLE_EQ(h100.intra_node.bandwidth_bytes_per_s, 4.5e11);
  EXPECT_DOUBLE_EQ(h100.intra_node.latency_s, 1e-6);
  EXPECT_DOUBLE_EQ(h100.inter_node.bandwidth_bytes_per_s, 5e10);

  // H200 overrides memory only; compute and links come from its base, dgx-h100.yaml.
  const ClusterSpec h200 = load_cluster(kScenarios + "/clusters/dgx-h200.yaml");
  EXPECT_EQ(h200.gpu.name, "H200-SXM");
  EXPECT_DOUBLE_EQ(h200.gpu.memory_capacity_bytes, 141e9);
  EXPECT_DOUBLE_EQ(h200.gpu.memory_bandwidth_bytes_per_s, 4.8e12);
  EXPECT_DOUBLE_EQ(h200.gpu.peak_flops_per_s.at("bf16"), 989.4e12);
  EXPECT_DOUBLE_EQ(h200.intra_node.bandwidth_bytes_per_s, 4.5e11);

  const ClusterSpec pcie = load_cluster(kScenarios + "/clusters/pcie-8gpu.yaml");
  EXPECT_EQ(pcie.intra_node.kind, "pcie");
  EXPECT_DOUBLE_EQ(pcie.intra_node.bandwidth_bytes_per_s, 64e9);
  EXPECT_DOUBLE_EQ(pcie.gpu.peak_flops_per_s.at("bf16"), 756e12);
  EXPECT_DOUBLE_EQ(pcie.gpu.memory_bandwidth_bytes_per_s, 2e12);

  const ClusterSpec rail = load_cluster(kScenarios + "/clusters/ib-rail-4node.yaml");
  EXPECT_EQ(rail.nodes, 4);
  EXPECT_EQ(rail.inter_node.kind, "rail");
  EXPECT_EQ(rail.inter_node.nics_per_node, 8);
  EXPECT_DOUBLE_EQ(rail.inter_node.bandwidth_bytes_per_s, 5e10);
  const ClusterSpec tree = load_cluster(kScenarios + "/clusters/ib-fattree-4node.yaml");
  EXPECT_EQ(tree.nodes, 4);
  EXPECT_EQ(tree.inter_node.kind, "fat-tree");
  EXPECT_DOUBLE_EQ(tree.inter_node.latency_s, 3.5e-6);
}

TEST(ScenarioShipped, Llama70bLayer) {
  const Scenario s = load_scenario(kScenarios + "/version1-by-hand/llama3-70b-layer-tp8.yaml");
  EXPECT_EQ(s.cluster.nodes, 4);
  EXPECT_THAT(s.mesh_shape, ElementsAre(4, 8));
  ASSERT_EQ(s.workload.size(), 5u);
  // q 64 heads x 128 + k, v 8 x 128 each = 10240; tokens 4 x 8192.
  EXPECT_THAT(s.workload[0].a, ElementsAre(32768, 8192));
  EXPECT_THAT(s.workload[0].b, ElementsAre(8192, 10240));
  EXPECT_THAT(s.workload[4].b, ElementsAre(28672, 8192));
  EXPECT_EQ(to_string(s.workload[0].a_placements), "S(0),S(0)");
  ASSERT_TRUE(s.sweep && s.objective);
  EXPECT_THAT(s.sweep->nodes, ElementsAre(1, 2, 4, 8));
  EXPECT_DOUBLE_EQ(*s.objective->max_time_s, 5e-3);
}

TEST(ScenarioShipped, Llama405bLayerAndCommunicationScenarios) {
  const Scenario big = load_scenario(kScenarios + "/version1-by-hand/llama3-405b-layer-tp.yaml");
  EXPECT_EQ(big.cluster.inter_node.kind, "fat-tree");
  EXPECT_THAT(big.workload[0].b, ElementsAre(16384, 18432));  // 16384 + 2 x 8 x 128
  EXPECT_THAT(big.workload[2].b, ElementsAre(16384, 53248));

  const Scenario ping = load_scenario(kScenarios + "/pingpong.yaml");
  ASSERT_EQ(ping.workload.size(), 2u);
  EXPECT_EQ(ping.workload[0].bytes, 1048576);
  EXPECT_EQ(ping.workload[0].src, 0);
  EXPECT_EQ(ping.workload[0].dst, 1);
  EXPECT_EQ(ping.workload[1].src, 1);
  EXPECT_EQ(ping.cluster.node_of(ping.workload[0].dst), 0);  // both GPUs in one node

  const Scenario ring = load_scenario(kScenarios + "/ring-allgather-8gpu.yaml");
  EXPECT_EQ(ring.workload[0].kind, OpKind::all_gather);
  EXPECT_EQ(ring.workload[0].bytes, 1073741824);

  const Scenario mesh = load_scenario(kScenarios + "/mesh-2x8-mm.yaml");
  EXPECT_EQ(mesh.cluster.nodes, 2);  // inline override of dgx-h100.yaml's 1 node
  EXPECT_THAT(mesh.mesh_shape, ElementsAre(2, 8));
}

TEST(ScenarioLoader, ClusterPathPrefersTheScenarioFolder) {
  ScenarioFiles files;
  files.write("clusters/dgx-h100.yaml", R"yaml(nodes: 1
gpus_per_node: 4
gpu: {peak: {bf16: 100 TFLOP/s}, memory: {capacity: 16 GiB, bandwidth: 1 TB/s}}
intra_node: {kind: nvlink, bandwidth: 100 GB/s, latency: 2 us}
)yaml");
  const Scenario s = load_scenario(files.write("s.yaml", R"yaml(cluster: clusters/dgx-h100.yaml
mesh: [4]
workload: [{op: put_signal, bytes: 1 B, src: 0, dst: 3}]
)yaml"));
  EXPECT_EQ(s.cluster.gpus_per_node, 4);
  EXPECT_EQ(s.cluster.name, "dgx-h100");
  EXPECT_EQ(s.cluster.intra_node.kind, "nvlink");
  EXPECT_DOUBLE_EQ(s.cluster.gpu.memory_capacity_bytes, 16.0 * (1 << 30));
}

TEST(ScenarioLoader, InlineClusterOverridesItsBaseFieldByField) {
  ScenarioFiles files;
  const Scenario s = load_scenario(files.write("s.yaml", R"yaml(cluster:
  base: clusters/dgx-h100.yaml
  nodes: 2
  gpu: {peak: {bf16: 500 TFLOP/s}}
  inter_node: {latency: 5 us}
mesh: [2, 8]
workload: [{op: all_gather, bytes: 1 MiB, mesh_dim: 0}]
)yaml"));
  EXPECT_EQ(s.cluster.nodes, 2);
  EXPECT_EQ(s.cluster.name, "dgx-h100");
  EXPECT_DOUBLE_EQ(s.cluster.gpu.peak_flops_per_s.at("bf16"), 5e14);
  EXPECT_DOUBLE_EQ(s.cluster.gpu.peak_flops_per_s.at("fp8"), 1978.9e12);  // kept from the base
  EXPECT_DOUBLE_EQ(s.cluster.inter_node.latency_s, 5e-6);
  EXPECT_DOUBLE_EQ(s.cluster.inter_node.bandwidth_bytes_per_s, 5e10);  // kept from the base
}

TEST(ScenarioLoader, LoadFromText) {
  const Scenario s = load_scenario_text(R"yaml(cluster: clusters/pcie-8gpu.yaml
mesh: {shape: [8]}
workload: [{op: all_to_all, bytes: 2 MB}]
)yaml",
                                        "inline.yaml");
  EXPECT_EQ(s.cluster.intra_node.kind, "pcie");
  EXPECT_EQ(s.workload[0].bytes, 2000000);
  const ClusterSpec c = load_cluster_text("base: dgx-h200.yaml\nnodes: 3\n");
  EXPECT_EQ(c.nodes, 3);
  EXPECT_DOUBLE_EQ(c.gpu.memory_bandwidth_bytes_per_s, 4.8e12);
}

TEST(ScenarioResize, WithClusterSize) {
  const Scenario s = load_scenario(kScenarios + "/version1-by-hand/llama3-70b-layer-tp8.yaml");
  const Scenario two = with_cluster_size(s, 2, {2, 8});
  EXPECT_EQ(two.cluster.nodes, 2);
  EXPECT_EQ(two.cluster.num_gpus(), 16);
  EXPECT_THAT(two.mesh_shape, ElementsAre(2, 8));
  EXPECT_THAT(two.mesh_names, ElementsAre("dp", "tp"));
  EXPECT_EQ(two.workload.size(), s.workload.size());

  const auto wrong_count = error_of([&] { with_cluster_size(s, 2, {4, 8}); });
  EXPECT_EQ(wrong_count.where(), "with_cluster_size");
  EXPECT_THAT(wrong_count.message(), HasSubstr("16 GPUs"));
  EXPECT_THAT(error_of([&] { with_cluster_size(s, 2, {16}); }).message(),
              HasSubstr("placements are per mesh dim"));

  // One node without inter_node cannot grow to two.
  ScenarioFiles files;
  const Scenario one = load_scenario(files.write("one.yaml", R"yaml(cluster:
  nodes: 1
  gpus_per_node: 2
  gpu: {peak: {bf16: 1 TFLOP/s}, memory: {capacity: 1 GiB, bandwidth: 1 TB/s}}
  intra_node: {kind: nvlink, bandwidth: 1 GB/s, latency: 1 us}
mesh: [2]
workload: [{op: put_signal, bytes: 1 KiB, src: 0, dst: 1}]
)yaml"));
  EXPECT_THAT(error_of([&] { with_cluster_size(one, 2, {4}); }).message(), HasSubstr("inter_node"));
}

TEST(ScenarioResize, MeshAutoIsCappedBeforeItListsAnything) {
  // Ordered factorisations of n = prod p^e into k dims: prod C(e + k - 1, k - 1) (stars and
  // bars). 8 GPUs = 2^3 over 3 dims: C(5, 2) = 10 shapes, all listed.
  ScenarioFiles files;
  const auto scenario = [&](const std::string& shape) {
    return load_scenario(
        files.write("m.yaml", "cluster: clusters/dgx-h100.yaml\nmesh: {shape: " + shape +
                                  "}\nworkload: [{op: all_reduce, bytes: 1 "
                                  "MiB, mesh_dim: 0}]\nsweep: {nodes: [1]}\n"));
  };
  EXPECT_EQ(sweep_mesh_shapes(scenario("[2, 2, 2]"), 1).size(), 10u);
  // 8,192 GPUs = 2^13 over 20 dims: C(32, 19) = 347,373,600 shapes, far past the cap of
  // 100,000: refused with the figures, not materialised (that took 10^8 vectors).
  const Scenario wide = scenario("[8, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1]");
  try {
    sweep_mesh_shapes(wide, 1024);
    FAIL() << "no error";
  } catch (const InvalidArgument& e) {
    EXPECT_THAT(e.message(), HasSubstr("mesh: auto would try more than 100000 shapes of 8192 "
                                       "GPUs over 20 mesh dims"));
    EXPECT_THAT(e.where(), HasSubstr("sweep.mesh"));
  }
  // Under the cap: 1,024 GPUs (2^10) over 4 dims: C(13, 3) = 286 shapes, all listed.
  EXPECT_EQ(sweep_mesh_shapes(scenario("[8, 1, 1, 1]"), 128).size(), 286u);
}

TEST(ScenarioResize, SweepMeshShapes) {
  const Scenario s = load_scenario(kScenarios + "/mesh-2x8-mm.yaml");
  // 2 nodes x 8 = 16 GPUs as 2 dims: 1x16, 2x8, 4x4, 8x2, 16x1.
  const std::vector<std::vector<int>> expected{{1, 16}, {2, 8}, {4, 4}, {8, 2}, {16, 1}};
  EXPECT_EQ(sweep_mesh_shapes(s, 2), expected);

  ScenarioFiles files;
  const Scenario listed = load_scenario(files.write("l.yaml", R"yaml(cluster: clusters/dgx-h100.yaml
mesh: {shape: [2, 4], names: [dp, tp]}
workload: [{op: all_reduce, bytes: 1 MiB, mesh_dim: dp}]
sweep: {nodes: [1, 2], mesh: [[2, 4], [1, 8], [2, 8]]}
)yaml"));
  EXPECT_FALSE(listed.sweep->mesh_auto);
  const std::vector<std::vector<int>> at_one{{2, 4}, {1, 8}};
  EXPECT_EQ(sweep_mesh_shapes(listed, 1), at_one);
  const std::vector<std::vector<int>> at_two{{2, 8}};
  EXPECT_EQ(sweep_mesh_shapes(listed, 2), at_two);
}
