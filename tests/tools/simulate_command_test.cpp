// symmesh simulate end to end: shipped scenarios against closed forms worked out by hand,
// golden JSON for regressions, emulation against the unsharded product, bad input.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cstdio>
#include <filesystem>
#include <map>
#include <fstream>
#include <nlohmann/json.hpp>

#include "tests/tools/run_symmesh.hpp"
#include "tests/tools/sweep_test_support.hpp"

namespace {

using symmesh::testing::read_file;
using symmesh::testing::run_symmesh;
using ::testing::HasSubstr;

const std::string kScenarios = std::string(SYMMESH_SOURCE_DIR) + "/scenarios/";
const std::string kGolden = std::string(SYMMESH_SOURCE_DIR) + "/tests/tools/golden/";

nlohmann::json simulate_json(const std::string& args) {
  const auto r = run_symmesh("simulate " + args + " --json");
  EXPECT_EQ(r.exit_code, 0) << r.err;
  return nlohmann::json::parse(r.out);
}

const nlohmann::json& op_named(const nlohmann::json& report, const std::string& name) {
  for (const auto& op : report["ops"])
    if (op["name"] == name) return op;
  throw std::runtime_error("no op " + name);
}

// dgx-h100.yaml (from dgx-h100-datasheet.yaml): NVSwitch 450 GB/s per direction per GPU,
// 1 us one-way latency: what the core's one-sided puts and rings pay. The file's collectives:
// section runs plain collectives as NCCL does unless --collectives one-sided sets it aside,
// as the tests of the one-sided rings' closed forms below do.
constexpr double kAlpha = 1e-6;
constexpr double kBeta = 450e9;
const std::string kOneSided = " --collectives one-sided";

TEST(SimulateCommand, PingPongLegsAreLatencyPlusBytesOverBandwidth) {
  // Each leg: 1 MiB between two GPUs of a node: 1 us + 1,048,576 / 450e9 = 3.3302 us.
  const auto report = simulate_json(kScenarios + "pingpong.yaml");
  const double leg = kAlpha + 1048576.0 / kBeta;
  EXPECT_NEAR(op_named(report, "ping")["time_s"].get<double>(), leg, leg * 0.005);
  EXPECT_NEAR(op_named(report, "pong")["time_s"].get<double>(), leg, leg * 0.005);
  EXPECT_NEAR(report["total_time_s"].get<double>(), 2 * leg, 2 * leg * 0.005);
  EXPECT_EQ(report["backend"], "sim");
}

TEST(SimulateCommand, ASelfPutIsACopyInTheGpusOwnMemory) {
  // NCCL allows a put to oneself. 1 MiB from GPU 3 to itself is a device copy: read and
  // write 2 x 1,048,576 B at the HBM's sustained 2.97 TB/s (dgx-h100.yaml) = 0.706 us, plus
  // core/roofline.hpp's launch overhead — and no link latency.
  const std::string dir = symmesh::testing::fresh_dir("self-put");
  const std::string path = dir + "/self-put.yaml";
  std::ofstream(path) << "cluster: " << kScenarios << "clusters/dgx-h100.yaml\n"
                      << "mesh: [8]\nworkload:\n"
                         "  - {name: self, op: put_signal, bytes: 1 MiB, src: 3, dst: 3}\n";
  const auto report = simulate_json(path);
  const double expected = 2 * 1048576.0 / 2.97e12 + 5e-6;  // 5 us launch overhead
  EXPECT_NEAR(op_named(report, "self")["time_s"].get<double>(), expected, expected * 0.005);
}

TEST(SimulateCommand, RingAllGatherOnOneNodeMatchesTheClosedForm) {
  // 1 GiB gathered over 8 GPUs by the one-sided ring: 7 x (1 us + 134,217,728 B / 450e9)
  // = 2.0948 ms.
  const auto report = simulate_json(kScenarios + "ring-allgather-8gpu.yaml" + kOneSided);
  const double expected = 7 * (kAlpha + 134217728.0 / kBeta);
  EXPECT_NEAR(op_named(report, "gather")["time_s"].get<double>(), expected, expected * 0.01);
  EXPECT_EQ(op_named(report, "gather")["bytes"], 1073741824);
}

class MeshMatmul : public ::testing::TestWithParam<const char*> {};

TEST_P(MeshMatmul, ComputeFollowsTheRoofline) {
  // up_proj on 2x8: (S0,R) x (R,S1) needs no redistribution; each rank multiplies
  // 4096x8192 by 8192x3584 in bf16: 2*4096*3584*8192 = 2.4052e11 FLOP.
  // dgx-h100.yaml's bf16 gemm_efficiency is 0.8897 and its sm_count 132 (core/roofline.hpp):
  // shape term 2 * 4160 * 3648 * 8256 / 0.8897 = 2.81646e11 peak FLOPs; 32 x 28 = 896 tiles
  // in 7 waves of 132: 7 * 132 * 2 * 128² * 8256 / 0.8897 = 2.80962e11, so the shape binds:
  // 2.81646e11 / 989.4e12 + 5 us launch = 0.284664 + 0.005 = 0.289664 ms.
  // Version 1 declares the weight column-parallel; version 2 leaves it to the planner,
  // which must find the same split (anything else moves data or computes more).
  const auto report = simulate_json(kScenarios + GetParam());
  const auto& op = op_named(report, "up_proj");
  EXPECT_NEAR(op["compute_time_s"].get<double>(), 2.89664e-4, 2.89664e-4 * 0.001);
  EXPECT_EQ(op["comm_time_s"].get<double>(), 0.0);
  EXPECT_EQ(op["strategy"]["input_placements"],
            nlohmann::json::parse(R"j([["S(0)","R"],["R","S(1)"]])j"));
  EXPECT_EQ(op["strategy"]["output_placements"], nlohmann::json::parse(R"j(["S(0)","S(1)"])j"));
  // a 4096x8192 + b 8192x3584 + out 4096x3584, bf16 = (33,554,432 + 29,360,128 + 14,680,064) x 2.
  EXPECT_EQ(op["peak_memory_bytes_per_rank"], (33554432 + 29360128 + 14680064) * 2);
}

INSTANTIATE_TEST_SUITE_P(BothVersions, MeshMatmul,
                         ::testing::Values("version1-by-hand/mesh-2x8-mm.yaml",
                                           "mesh-2x8-mm.yaml"));

TEST(SimulateCommand, MoeAllToAllIsPairwiseExchange) {
  // 16 MiB over 8 ranks, the one-sided pairwise exchange: chunks of 2 MiB, 7 steps of
  // 1 us + 2,097,152 / 450e9 = 39.62 us.
  const auto report =
      simulate_json(kScenarios + "version1-by-hand/moe-expert-bmm.yaml" + kOneSided);
  const double expected = 7 * (kAlpha + 2097152.0 / kBeta);
  EXPECT_NEAR(op_named(report, "dispatch")["time_s"].get<double>(), expected, expected * 0.01);
}

TEST(SimulateCommand, MoeVersionTwoDerivesTheDispatchAndCombine) {
  // Version 2 writes no all-to-all: x arrives split by token copies (S(1)) and the experts'
  // bmm need it by expert (S(0)), so expert_gate pays S(1) -> S(0), one pairwise
  // all-to-all of 2 MiB blocks: 7 x (1 us + 2,097,152 / 450e9) = 39.62 us; expert_up
  // reads the copy; expert_down brings y back to S(1), the same again.
  const auto v2 = simulate_json(kScenarios + "moe-expert-bmm.yaml" + kOneSided);
  const auto v1 = simulate_json(kScenarios + "version1-by-hand/moe-expert-bmm.yaml" + kOneSided);
  const double all_to_all = 7 * (kAlpha + 2097152.0 / kBeta);
  for (const char* name : {"expert_gate", "expert_down"}) {
    const auto& op = op_named(v2, name);
    ASSERT_EQ(op["redistributions"].size(), 1u) << name;
    EXPECT_EQ(op["redistributions"][0]["steps"], "all_to_all over ep (16.00 MiB)") << name;
    EXPECT_NEAR(op["comm_time_s"].get<double>(), all_to_all, 0.01 * all_to_all) << name;
    // Around it, each rank splits its 16 MiB into 8 slots and concatenates the 8 blocks
    // it receives: 16 copies of 2 MiB, each 5 us + 2 x 2 MiB / 2.97 TB/s (roofline copy at
    // dgx-h100.yaml's sustained HBM bandwidth).
    const double copies = 16 * (5e-6 + 2 * 2097152.0 / 2.97e12);
    const double bmm = op_named(v1, name)["compute_time_s"].get<double>();
    EXPECT_NEAR(op["compute_time_s"].get<double>(), bmm + copies, 0.01 * copies) << name;
  }
  EXPECT_EQ(op_named(v2, "expert_gate")["redistributions"][0]["tensor"], "x");
  EXPECT_EQ(op_named(v2, "expert_down")["redistributions"][0]["tensor"], "y");
  EXPECT_TRUE(op_named(v2, "expert_up")["redistributions"].empty());
  EXPECT_EQ(op_named(v2, "expert_up")["comm_time_s"].get<double>(), 0.0);
}

TEST(SimulateCommand, CountsCollectivesFromTheProgramsRecords) {
  // The version-1 quickstart: "grads" all-reduces 8 MiB over dp on a 2x4 mesh: 4 dp
  // groups of 2 GPUs, each runs its own ring: 4 all-reduces, 4 x 8 MiB = 33,554,432
  // bytes. Its mm needs no redistribution and its put_signal is no collective. One-sided
  // here, so each is the core's ring; NCCL's runs are counted the same (below).
  const auto quickstart =
      simulate_json(kScenarios + "version1-by-hand/quickstart.yaml" + kOneSided);
  EXPECT_EQ(quickstart["collectives"], nlohmann::json::parse(R"j([{"op": "all_reduce",
      "implementation": "ring", "count": 4, "bytes": 33554432}])j"));
  // moe-expert-bmm: dispatch and combine, 16 MiB each over the one ep group of 8 (written
  // by hand in version 1, derived from the placements in version 2: the same two).
  const auto moe = simulate_json(kScenarios + "version1-by-hand/moe-expert-bmm.yaml" + kOneSided);
  EXPECT_EQ(moe["collectives"], nlohmann::json::parse(R"j([{"op": "all_to_all",
      "implementation": "pairwise", "count": 2, "bytes": 33554432}])j"));
  EXPECT_EQ(simulate_json(kScenarios + "moe-expert-bmm.yaml" + kOneSided)["collectives"],
            moe["collectives"]);
  const auto r =
      run_symmesh("simulate " + kScenarios + "version1-by-hand/quickstart.yaml" + kOneSided);
  EXPECT_THAT(r.out, ::testing::HasSubstr("collectives: 4 all_reduce (ring)\n"));
  // By default dgx-h100.yaml's collectives: section runs them as NCCL: the same count and
  // bytes, each named by the library's algorithm and protocol.
  const auto nccl = simulate_json(kScenarios + "version1-by-hand/quickstart.yaml");
  ASSERT_EQ(nccl["collectives"].size(), 1u);
  EXPECT_EQ(nccl["collectives"][0]["count"], 4);
  EXPECT_EQ(nccl["collectives"][0]["bytes"], 33554432);
  EXPECT_EQ(nccl["collectives"][0]["implementation"].get<std::string>().rfind("nccl ", 0), 0u);
}

// Regression guard: every figure of the shipped scenarios' JSON as first checked above,
// in simulate-<scenario name>.json. The version-2 scenarios report the layout search's
// wall time, so their guard is the quickstart sweep's golden results.json instead; the
// version-1 files of those with a version 2 are under version1-by-hand/, and pingpong and
// ring-allgather-8gpu have no matrix op, so no version 2.
class SimulateGolden : public ::testing::TestWithParam<const char*> {};

TEST_P(SimulateGolden, MatchesTheCheckedInReport) {
  const auto got = simulate_json(kScenarios + GetParam() + ".yaml");
  const std::string name = got["scenario"];
  const auto want = nlohmann::json::parse(read_file(kGolden + "simulate-" + name + ".json"));
  symmesh::testing::expect_same_json(got, want, name);
}

INSTANTIATE_TEST_SUITE_P(Shipped, SimulateGolden,
                         ::testing::Values("pingpong", "ring-allgather-8gpu",
                                           "version1-by-hand/mesh-2x8-mm",
                                           "version1-by-hand/moe-expert-bmm",
                                           "version1-by-hand/quickstart"));

std::string temp_scenario(const std::string& body) {
  const auto path = std::filesystem::temp_directory_path() /
                    ("symmesh_sim_" + std::to_string(std::hash<std::string>{}(body)) + ".yaml");
  std::ofstream(path) << body;
  return path.string();
}

TEST(SimulateCommand, EmulationMatchesTheUnshardedProduct) {
  // fp32 shapes that shard unevenly and need all-to-all, all-gather along an inner dim
  // and local chunks; the error is against the same product computed on one CPU.
  const auto path = temp_scenario(R"y(
name: emulation-check
cluster: clusters/dgx-h100.yaml
mesh: {shape: [2, 4], names: [dp, tp]}
dtype: fp32
cost_model: dtensor
workload:
  - {name: uneven, op: mm, a: [37, 29], b: [29, 23], a_placements: ["S(1)", "S(0)"], b_placements: ["S(0)", "R"]}
  - {name: batched, op: bmm, a: [6, 9, 11], b: [6, 11, 5], a_placements: ["S(0)", "S(2)"], b_placements: ["R", "S(1)"]}
  - {name: gathered, op: mm, a: [16, 12], b: [12, 10], a_placements: ["R", "S(1)"], b_placements: ["S(1)", "S(0)"]}
  - {name: biased, op: addmm, bias: [23], a: [37, 29], b: [29, 23], bias_placements: ["R", "R"],
     a_placements: ["P(sum)", "S(1)"], b_placements: ["S(0)", "S(0)"]}
)y");
  const auto report = simulate_json(path + " --emulate");
  for (const auto& op : report["ops"]) {
    ASSERT_TRUE(op.contains("max_abs_error")) << op["name"];
    // k <= 29 products of values in [-1, 1] summed in fp32: far below 1e-4.
    EXPECT_LT(op["max_abs_error"].get<double>(), 1e-4) << op["name"];
  }
  std::remove(path.c_str());
}

TEST(SimulateCommand, EmulationVerdictPassesWithinHighamsBound) {
  // The same shapes as above in fp32. Each matmul's bound is γ_n · max(|a||b| + |bias|),
  // n = 2k + 2 (evaluation/emulation_tolerance.hpp); inputs in [-1, 1], so
  // max(|a||b| + |bias|) <= k (+ 1 with a bias): for "uneven" (k = 29) the bound is at most
  // γ_60 x 29 = 3.5762915e-6 x 29 = 1.0371e-4, and at least the error.
  const auto path = temp_scenario(R"y(
name: emulation-verdict
cluster: clusters/dgx-h100.yaml
mesh: {shape: [2, 4], names: [dp, tp]}
dtype: fp32
cost_model: dtensor
workload:
  - {name: uneven, op: mm, a: [37, 29], b: [29, 23], a_placements: ["S(1)", "S(0)"], b_placements: ["S(0)", "R"]}
)y");
  const auto report = simulate_json(path + " --emulate");
  const auto& op = op_named(report, "uneven");
  const double bound = op["error_bound"].get<double>();
  EXPECT_GT(bound, 0);
  EXPECT_LE(bound, 3.5762915e-6 * 29);
  EXPECT_LE(op["max_abs_error"].get<double>(), bound);
  EXPECT_EQ(report["emulation"]["passed"], true);
  EXPECT_EQ(report["emulation"]["checked"], 1);
  const auto r = run_symmesh("simulate " + path + " --emulate");
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_THAT(r.out, HasSubstr("emulation: pass, 1 of 1 matmuls within the error bound"));
  std::remove(path.c_str());
}

TEST(SimulateCommand, CollectivesCarryNcclTestsBandwidths) {
  // ring-allgather-8gpu.yaml works them by hand for the one-sided ring: algbw 1 GiB /
  // 2.095 ms = 512.6 GB/s, busbw x 7/8 = 448.5 GB/s (nccl-tests' all-gather factor (n-1)/n).
  const auto report = simulate_json(kScenarios + "ring-allgather-8gpu.yaml" + kOneSided);
  const auto& gather = op_named(report, "gather");
  EXPECT_EQ(gather["group_size"], 8);
  EXPECT_NEAR(gather["algbw_bytes_per_s"].get<double>(), 512.6e9, 0.1e9);
  EXPECT_NEAR(gather["busbw_bytes_per_s"].get<double>(), 448.5e9, 0.1e9);
  // The quickstart's grads: 8 MiB all-reduced over dp groups of 2: factor 2(2-1)/2 = 1, and
  // the time 2 x (1 us + 4 MiB / 450 GB/s) = 20.641 us: algbw = busbw = 8,388,608 B /
  // 20.641 us = 406.4 GB/s.
  const auto v1 = simulate_json(kScenarios + "version1-by-hand/quickstart.yaml" + kOneSided);
  const auto& grads = op_named(v1, "grads");
  EXPECT_EQ(grads["group_size"], 2);
  EXPECT_NEAR(grads["algbw_bytes_per_s"].get<double>(), 406.4e9, 0.2e9);
  EXPECT_DOUBLE_EQ(grads["busbw_bytes_per_s"].get<double>(),
                   grads["algbw_bytes_per_s"].get<double>());
  EXPECT_FALSE(op_named(v1, "proj").contains("busbw_bytes_per_s"));  // a matmul has none
  const auto r = run_symmesh("simulate " + kScenarios + "ring-allgather-8gpu.yaml" + kOneSided);
  EXPECT_THAT(r.out, HasSubstr("algbw (GB/s)  busbw (GB/s)"));
  EXPECT_THAT(r.out, HasSubstr("512.57        448.50"));
}

TEST(SimulateCommand, ClusterIsStructuredInJson) {
  // dgx-h100.yaml's own numbers: 8 GPUs of 80 GiB at 3.35 TB/s, bf16 989.4 TFLOP/s;
  // NVSwitch 450 GB/s and 1 us; rail NICs 8 x 400 Gb/s = 50 GB/s, 3 us.
  const auto report = simulate_json(kScenarios + "ring-allgather-8gpu.yaml");
  const auto& c = report["cluster"];
  EXPECT_EQ(c["name"], "dgx-h100");
  EXPECT_EQ(c["nodes"], 1);
  EXPECT_EQ(c["gpus_per_node"], 8);
  EXPECT_EQ(c["gpu"]["name"], "H100-SXM");
  EXPECT_DOUBLE_EQ(c["gpu"]["memory_bytes"].get<double>(), 80.0 * (1LL << 30));
  EXPECT_DOUBLE_EQ(c["gpu"]["memory_bandwidth_bytes_per_s"].get<double>(), 3.35e12);
  EXPECT_DOUBLE_EQ(c["gpu"]["peak_flops_per_s"]["bf16"].get<double>(), 989.4e12);
  EXPECT_EQ(c["intra_node"]["kind"], "nvswitch");
  EXPECT_DOUBLE_EQ(c["intra_node"]["bandwidth_bytes_per_s"].get<double>(), 450e9);
  EXPECT_DOUBLE_EQ(c["intra_node"]["latency_s"].get<double>(), 1e-6);
  EXPECT_EQ(c["inter_node"]["nics_per_node"], 8);
  EXPECT_DOUBLE_EQ(c["inter_node"]["bandwidth_bytes_per_s"].get<double>(), 50e9);
  EXPECT_DOUBLE_EQ(c["inter_node"]["latency_s"].get<double>(), 3e-6);
  EXPECT_EQ(report["cluster_text"], "1 node x 8 H100-SXM (nvswitch)");
}

TEST(SimulateCommand, TheGpusRooflineFiguresPriceItsMatmuls) {
  // One GPU of dgx-h100.yaml with every optional roofline figure. 8192³ bf16: 64 × 64 =
  // 4096 output tiles on 132 SMs = 32 waves, 32 × 132 × 128² = 69,206,016 > 8256² =
  // 68,161,536, so the waves bind: 2 × 69,206,016 × 8256 / (0.8 × 989.4e12) = 1.4437156 ms;
  // + the 4 us launch = 1.4477156 ms (core/roofline.hpp; its memory time, 3 × 8192² × 2 B
  // / 2.9 TB/s = 0.139 ms, is far below).
  const auto path = temp_scenario(R"y(
name: roofline-figures
cluster:
  base: clusters/dgx-h100.yaml
  gpus_per_node: 1
  gpu:
    memory: {capacity: 80 GiB, bandwidth: 3.35 TB/s, sustained_bandwidth: 2.9 TB/s}
    gemm_efficiency: {bf16: 0.8, fp8: 0.66}
    sm_count: 132
    launch_overhead: 4 us
mesh: {shape: [1]}
workload:
  - {name: big, op: mm, a: [8192, 8192], b: [8192, 8192], a_placements: ["R"], b_placements: ["R"]}
)y");
  const auto report = simulate_json(path);
  EXPECT_NEAR(op_named(report, "big")["time_s"].get<double>(), 1.4477156e-3, 1e-9);
  const auto& gpu = report["cluster"]["gpu"];
  EXPECT_DOUBLE_EQ(gpu["gemm_efficiency"]["fp8"].get<double>(), 0.66);
  EXPECT_DOUBLE_EQ(gpu["memory_sustained_bandwidth_bytes_per_s"].get<double>(), 2.9e12);
  EXPECT_EQ(gpu["sm_count"], 132);
  EXPECT_DOUBLE_EQ(gpu["launch_overhead_s"].get<double>(), 4e-6);
  // Absent from a cluster that does not give them (dgx-h100-datasheet.yaml).
  const auto plain_path = temp_scenario(R"y(
name: roofline-absent
cluster: clusters/dgx-h100-datasheet.yaml
mesh: {shape: [8]}
workload:
  - {name: gather, op: all_gather, bytes: 1 MiB, mesh_dim: 0}
)y");
  const auto plain = simulate_json(plain_path);
  EXPECT_FALSE(plain["cluster"]["gpu"].contains("sm_count"));
  EXPECT_FALSE(plain["cluster"]["gpu"].contains("gemm_efficiency"));
  std::remove(path.c_str());
  std::remove(plain_path.c_str());
}

TEST(SimulateCommand, OneTimeUnitChosenForTheTable) {
  // The version-1 quickstart, one-sided: its longest time is its total, 6.549 us (proj's
  // roofline: 512x1024 by 1024x1024 per rank, 2 (576)(1088)(1088) / 0.8897 / 989.4e12 =
  // 1.549 us above its 1.412 us of HBM at 2.97 TB/s, + 5 us launch) + 3.33 us (1 us +
  // 1 MiB / 450 GB/s) + 20.64 us (the all-reduce's 2 x (1 us + 4 MiB / 450 GB/s)) =
  // 30.521 us, under 1 ms: us throughout. The all-gather's 2.095 ms: ms.
  const auto small =
      run_symmesh("simulate " + kScenarios + "version1-by-hand/quickstart.yaml" + kOneSided);
  EXPECT_THAT(small.out, HasSubstr("time (us)  comm (us)  compute (us)"));
  EXPECT_THAT(small.out, HasSubstr("total: 30.521 us\n"));
  const auto large = run_symmesh("simulate " + kScenarios + "ring-allgather-8gpu.yaml" + kOneSided);
  EXPECT_THAT(large.out, HasSubstr("time (ms)  comm (ms)  compute (ms)"));
  EXPECT_THAT(large.out, HasSubstr("total: 2.095 ms\n"));
}

TEST(SimulateCommand, TraceIsChromeTraceJson) {
  const std::string trace =
      (std::filesystem::temp_directory_path() / "symmesh_trace_test.json").string();
  const auto r = run_symmesh("simulate " + kScenarios + "quickstart.yaml --trace " + trace);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const auto j = nlohmann::json::parse(read_file(trace));
  ASSERT_TRUE(j.contains("traceEvents"));
  int complete = 0;
  for (const auto& e : j["traceEvents"]) complete += e["ph"] == "X";
  EXPECT_GT(complete, 0);
  std::remove(trace.c_str());
}

TEST(SimulateCommand, BadInputExitsTwoAndWritesNothing) {
  const auto missing = run_symmesh("simulate /nonexistent/scenario.yaml");
  EXPECT_EQ(missing.exit_code, 2);
  EXPECT_THAT(missing.err, HasSubstr("/nonexistent/scenario.yaml"));

  const auto typo = temp_scenario(
      "name: t\ncluster: clusters/dgx-h100.yaml\nmeshh: {shape: [8]}\nworkload: []\n");
  const auto r = run_symmesh("simulate " + typo);
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_THAT(r.err, HasSubstr(":3:1"));
  EXPECT_THAT(r.err, HasSubstr("did you mean 'mesh'"));
  std::remove(typo.c_str());

  const std::string trace = "/nonexistent-dir/trace.json";
  const auto unwritable = run_symmesh("simulate " + kScenarios + "pingpong.yaml --trace " + trace);
  EXPECT_EQ(unwritable.exit_code, 2);
  EXPECT_THAT(unwritable.err, HasSubstr("--trace"));
  EXPECT_TRUE(unwritable.out.empty());

  const auto huge = temp_scenario(R"y(
name: huge
cluster: clusters/dgx-h100.yaml
mesh: {shape: [8]}
dtype: bf16
cost_model: dtensor
workload:
  - {name: big, op: mm, a: [65536, 65536], b: [65536, 65536], a_placements: ["S(0)"], b_placements: ["R"]}
)y");
  const auto too_big = run_symmesh("simulate " + huge + " --emulate");
  EXPECT_EQ(too_big.exit_code, 2);
  EXPECT_THAT(too_big.err, HasSubstr("too large to emulate"));
  std::remove(huge.c_str());
}

// linear end to end: loaded, planned, lowered and emulated. In fp64 the sharded result
// equals the unsharded product (a @ Wᵀ + bias, computed once on the CPU) to rounding.
TEST(SimulateCommand, LinearLayersEmulateToTheUnshardedProduct) {
  const std::string dir = ::testing::TempDir();
  const std::string path = dir + "/linear-mlp-fp64.yaml";
  std::string yaml = read_file(kScenarios + "linear-mlp.yaml");
  yaml.replace(yaml.find("dtype: bf16"), 11, "dtype: fp64");
  yaml.replace(yaml.find("cluster: clusters/"), 18, "cluster: " + kScenarios + "clusters/");
  std::ofstream(path) << yaml;
  const auto report = simulate_json(path + " --emulate");
  for (const char* name : {"fc1", "fc2"}) {
    const auto& op = op_named(report, name);
    EXPECT_EQ(op["op"], "linear");
    EXPECT_LT(op["max_abs_error"].get<double>(), 1e-9) << name;
    EXPECT_GT(op["time_s"].get<double>(), 0) << name;
  }
  // fc2's partial sums end where out_placements says: sequence-parallel rows.
  EXPECT_EQ(op_named(report, "fc2")["strategy"]["out_placements"], nlohmann::json({"S(0)"}));
  std::remove(path.c_str());
}

}  // namespace

namespace {

// A model: step left without cost_model is priced by the calibrated analytic model and the
// report says so; before, DTensor's communication-only model priced it without a word (an
// 8B step at 84.3 ms and 8.1 % MFU where the analytic model says 19.7 ms and 34.5 %).
TEST(SimulateCommand, AModelStepWithoutACostModelIsPricedAnalyticallyAndSaysSo) {
  const std::string model =
      "version: 2\ncluster: " + kScenarios +
      "clusters/dgx-h100.yaml\nmesh: {shape: [2, 4], names: [dp, tp]}\n"
      "model: {layers: 2, hidden: 256, heads: 4, kv_heads: 4, ffn: 512, vocab: 512, seq: 128, "
      "global_batch: 4}\ntraining: {optimizer: adam}\n";
  const std::string unsaid = symmesh::testing::write_temp_scenario("cost-unsaid", model);
  const std::string analytic =
      symmesh::testing::write_temp_scenario("cost-analytic", model + "cost_model: analytic\n");
  const std::string dtensor =
      symmesh::testing::write_temp_scenario("cost-dtensor", model + "cost_model: dtensor\n");
  const auto a = simulate_json(unsaid);
  const auto b = simulate_json(analytic);
  const auto c = simulate_json(dtensor);
  EXPECT_EQ(a["cost_model"], "analytic");
  EXPECT_EQ(a["cost_model_given"], false);
  EXPECT_EQ(b["cost_model_given"], true);
  // The same model priced the same step.
  EXPECT_DOUBLE_EQ(a["total_time_s"].get<double>(), b["total_time_s"].get<double>());
  EXPECT_EQ(c["cost_model"], "dtensor");
  const auto text = run_symmesh("simulate " + unsaid);
  ASSERT_EQ(text.exit_code, 0) << text.err;
  EXPECT_THAT(text.out, HasSubstr("cost model analytic (not given: the calibrated analytic model "
                                  "prices a model: step"));
  for (const std::string& path : {unsaid, analytic, dtensor})
    std::filesystem::remove_all(std::filesystem::path(path).parent_path());
}

}  // namespace

namespace {

// A trace names the slices of gradient accumulation's earlier micro-batches by micro-batch
// and op ("mb 1: proj.dgrad"), where every one of them was "earlier micro-batches" (77 % of
// a pipeline trace's slices), so a schedule can be read in Perfetto; the report still sums
// them into one row. Three micro-batches of proj (forward, dgrad, wgrad), run in
// order: micro-batch 0's ops, then 1's, then the last's, named by the op alone (on the 8
// GPUs of one node, x and w replicated).
TEST(SimulateCommand, ATraceNamesEachEarlierMicroBatchsOps) {
  const std::string scenario = symmesh::testing::write_temp_scenario(
      "accumulate-trace", "version: 2\nname: accumulate\ncluster: " + kScenarios +
                              "clusters/dgx-h100.yaml\nmesh: {shape: [8]}\ncost_model: analytic\n"
                              "tensors:\n"
                              "  x: {shape: [4096, 4096], placements: [R]}\n"
                              "  w: {shape: [4096, 4096], parameter: true, placements: [R]}\n"
                              "training: {optimizer: sgd, micro_batches: 3}\n"
                              "workload:\n"
                              "  - {name: proj, op: mm, a: x, b: w, output: y}\n");
  const std::string trace = scenario + ".trace.json";
  const auto r = run_symmesh("simulate " + scenario + " --trace " + trace + " --json");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const auto t = nlohmann::json::parse(read_file(trace));
  std::map<std::string, std::pair<double, double>> span;  // op -> (first start, last end)
  for (const auto& e : t["traceEvents"]) {
    if (e["ph"] != "X") continue;
    const std::string op = e["args"]["op"];
    EXPECT_NE(op, "earlier micro-batches");
    const double start = e["ts"].get<double>(), end = start + e["dur"].get<double>();
    auto [at, fresh] = span.emplace(op, std::make_pair(start, end));
    if (!fresh) at->second = {std::min(at->second.first, start), std::max(at->second.second, end)};
  }
  for (const char* op : {"mb 0: proj", "mb 0: proj.dgrad", "mb 0: proj.wgrad", "mb 1: proj",
                         "mb 1: proj.wgrad", "proj", "proj.wgrad"})
    EXPECT_TRUE(span.contains(op)) << op;
  EXPECT_FALSE(span.contains("mb 2: proj"));  // the last micro-batch is the plain op
  EXPECT_LE(span["mb 0: proj.wgrad"].second, span["mb 1: proj"].first + 1e-6);
  EXPECT_LE(span["mb 1: proj.wgrad"].second, span["proj"].first + 1e-6);
  // The report's row spans both earlier micro-batches: from mb 0's first start to mb 1's
  // last end (microseconds in the trace).
  const auto j = nlohmann::json::parse(r.out);
  const auto& row = op_named(j, "earlier micro-batches");
  EXPECT_EQ(row["micro_batches"], 2);
  const double first = std::min({span["mb 0: proj"].first, span["mb 0: proj.dgrad"].first,
                                 span["mb 0: proj.wgrad"].first});
  double last = 0;
  for (const auto& [op, s] : span)
    if (op.starts_with("mb 1: ")) last = std::max(last, s.second);
  EXPECT_NEAR(row["time_s"].get<double>(), (last - first) * 1e-6, 1e-9 + 1e-6 * (last - first) * 1e-6);
  std::filesystem::remove_all(std::filesystem::path(scenario).parent_path());
}

}  // namespace
