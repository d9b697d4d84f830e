// symmesh run / compare / calibrate as a user runs them, on any machine: bad arguments exit
// 2 with the reason; a machine that cannot run them (hw/ not built, no GPU, too few GPUs)
// exits 1 saying which; --dry-run shows the hardware plan without a GPU; calibrate --from
// fits saved measurements without one.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cstdio>
#include <filesystem>
#include <fstream>

#include "core/roofline.hpp"
#include "scenario/scenario_loader.hpp"
#include "tests/tools/run_symmesh.hpp"
#ifdef SYMMESH_HAVE_HW
#include "hw/devices.hpp"
#endif

namespace {

using symmesh::testing::run_symmesh;
using ::testing::HasSubstr;

const std::string kScenarios = std::string(SYMMESH_SOURCE_DIR) + "/scenarios/";
// The version-1 quickstart: three ops of the three kinds (matmul, put_signal, all-reduce)
// and shapes small enough for `run --check` to emulate.
const std::string kQuickstartV1 = kScenarios + "version1-by-hand/quickstart.yaml";

int visible_gpus() {
#ifdef SYMMESH_HAVE_HW
  return symmesh::hw::visible_gpus().count();
#else
  return 0;
#endif
}

std::string temp_path(const std::string& name) {
  return (std::filesystem::temp_directory_path() / name).string();
}

// What a command that needs `ranks` GPUs says on this machine when it cannot run.
void expect_cannot_run_here(const symmesh::testing::RunResult& r, const std::string& command,
                            int ranks) {
  EXPECT_EQ(r.exit_code, 1) << r.err;
#ifndef SYMMESH_HAVE_HW
  EXPECT_THAT(r.err, HasSubstr("built without the hardware backend"));
#else
  if (visible_gpus() == 0)
    EXPECT_THAT(r.err, HasSubstr("no GPU visible: " + command + " needs one GPU per rank"));
  else
    EXPECT_THAT(r.err, HasSubstr(std::to_string(ranks) + " ranks but only " +
                                 std::to_string(visible_gpus()) + " GPU"));
#endif
  EXPECT_TRUE(r.out.empty()) << r.out;
}

TEST(RunCommand, NeedsAScenario) {
  const auto r = run_symmesh("run");
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_THAT(r.err, HasSubstr("scenario"));
}

TEST(RunCommand, UnknownBackendIsBadInput) {
  const auto r = run_symmesh("run " + kQuickstartV1 + " --backend sim");
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_THAT(r.err, HasSubstr("unknown backend 'sim'"));
  EXPECT_THAT(r.err, HasSubstr("--backend"));
}

TEST(RunCommand, BadOptionsAreBadInput) {
  EXPECT_EQ(run_symmesh("run " + kQuickstartV1 + " --collectives mpi").exit_code, 2);
  EXPECT_EQ(run_symmesh("run " + kQuickstartV1 + " --collectives nccl:").exit_code, 2);
  EXPECT_EQ(run_symmesh("run " + kQuickstartV1 + " --timeout 0").exit_code, 2);
  EXPECT_EQ(run_symmesh("run " + kQuickstartV1 + " --warmup -1").exit_code, 2);
  const auto r = run_symmesh("run " + kQuickstartV1 + " --trace /no/such/dir/t.json");
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_THAT(r.err, HasSubstr("--trace"));
  const auto missing = run_symmesh("run /no/such/scenario.yaml");
  EXPECT_EQ(missing.exit_code, 2);
}

TEST(RunCommand, ScenarioErrorsAreFoundWithoutAGpu) {
  // Lowering runs before any GPU is needed: a bad workload is exit 2 everywhere.
  const auto path = temp_path("symmesh_run_bad.yaml");
  std::ofstream(path) << "name: bad\n"
                         "cluster: "
                      << kScenarios
                      << "clusters/dgx-h100.yaml\n"
                         "mesh: {shape: [8]}\n"
                         "workload:\n"
                         "  - {name: x, op: mm, a: [8, 16], b: [32, 8], a_placements: [R], "
                         "b_placements: [R]}\n";
  const auto r = run_symmesh("run " + path + " --backend nccl");
  EXPECT_EQ(r.exit_code, 2) << r.err;
  EXPECT_THAT(r.err, HasSubstr("inner dims"));
  std::remove(path.c_str());
}

TEST(RunCommand, WithoutEnoughGpusItSaysWhyAndExits1) {
  if (visible_gpus() >= 8) GTEST_SKIP() << "8 GPUs visible: quickstart would run";
  expect_cannot_run_here(run_symmesh("run " + kQuickstartV1 + " --backend nccl"), "symmesh run", 8);
  expect_cannot_run_here(run_symmesh("run " + kQuickstartV1 + " --backend nccl --check --json"),
                         "symmesh run", 8);
  expect_cannot_run_here(run_symmesh("run " + kScenarios + "quickstart.yaml --backend nccl"),
                         "symmesh run", 8);
}

TEST(RunCommand, DryRunShowsTheHardwarePlanWithoutAGpu) {
  const auto r = run_symmesh("run " + kQuickstartV1 + " --dry-run");
#ifndef SYMMESH_HAVE_HW
  EXPECT_EQ(r.exit_code, 1);
#else
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_THAT(r.out, HasSubstr("hardware plan: 8 ranks, one GPU each, collectives one-sided"));
  EXPECT_THAT(r.out, HasSubstr("comm 0: ranks [0, 1, 2, 3, 4, 5, 6, 7] (world)"));
  EXPECT_THAT(r.out, HasSubstr("matmul bf16 1x512x1024x1024 (cuBLASLt)"));  // proj, S(0),R x R,S(1)
  EXPECT_THAT(r.out, HasSubstr("put 1.00 MiB"));                            // handoff 0 -> 4
  EXPECT_THAT(r.out, HasSubstr("# handoff: put_signal 0 -> 4"));
  EXPECT_THAT(r.out, HasSubstr("# grads: ring reduce_scatter step 1/1"));
  EXPECT_THAT(r.out, HasSubstr("launches: barrier 24,"));
  const auto native = run_symmesh("run " + kQuickstartV1 + " --dry-run --collectives nccl");
  ASSERT_EQ(native.exit_code, 0) << native.err;
  EXPECT_THAT(native.out, HasSubstr("collectives nccl"));
  EXPECT_THAT(native.out, HasSubstr("nccl all_reduce on comm"));
  EXPECT_THAT(native.out, HasSubstr("nccl all_reduce 8"));  // 8 ranks: one call each
  const auto some = run_symmesh("run " + kQuickstartV1 + " --dry-run --collectives nccl:handoff");
  ASSERT_EQ(some.exit_code, 0) << some.err;
  EXPECT_THAT(some.out, ::testing::Not(HasSubstr("nccl all_reduce")));  // grads not named
#endif
}

// A misspelt name would leave that op one-sided while the plan said "nccl": bad input,
// found before any GPU is needed, listing the scenario's ops (the version-1 quickstart's three).
TEST(RunCommand, NativeCollectivesMustNameOpsOfTheScenario) {
  for (const char* command : {"run", "compare"}) {
    const auto r = run_symmesh(std::string(command) + " " + kQuickstartV1 +
                               " --collectives nccl:handoff,grad");
    EXPECT_EQ(r.exit_code, 2) << command << r.err;
    EXPECT_THAT(r.err, HasSubstr("--collectives"));
    EXPECT_THAT(r.err, HasSubstr("no op named 'grad' in scenario 'quickstart-v1'"));
    EXPECT_THAT(r.err, HasSubstr("(its ops: proj, handoff, grads)"));
  }
}

TEST(RunCommand, DryRunLowersAVersionTwoStepOnTwoStreams) {
  // The shipped quickstart (version 2): its derived backward runs on the main stream and
  // each gradient reduction on the comm stream, after an event from the wgrad.
  const auto r = run_symmesh("run " + kScenarios + "quickstart.yaml --dry-run");
#ifndef SYMMESH_HAVE_HW
  EXPECT_EQ(r.exit_code, 1);
#else
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_THAT(r.out, HasSubstr("hardware plan: 8 ranks, one GPU each, collectives one-sided"));
  EXPECT_THAT(r.out, HasSubstr("# up.wgrad: mm"));
  EXPECT_THAT(r.out, HasSubstr("[comm] wait event 0   # w_down.grad_all_reduce"));
  EXPECT_THAT(r.out, HasSubstr("[main] wait event"));  // the step ends when comm is done
#endif
}

TEST(RunCommand, AStepWithTensorOpsSaysTheyHaveNoGpuKernelYet) {
  // A model's generated step has tensor ops (norms, attention, the loss, ...): the hardware
  // backend has no kernels for them, and the dry run says so at the first one, as bad input
  // for this backend (exit 2), naming the op and its kind.
  // A one-layer model keeps the layout search short.
  const auto path =
      (std::filesystem::temp_directory_path() / "symmesh_tensor_op_run.yaml").string();
  std::ofstream(path) << "version: 2\ncluster: " << kScenarios
                      << "clusters/dgx-h100.yaml\nmesh: {shape: [1, 8], names: [dp, tp]}\n"
                         "model: {layers: 1, hidden: 256, heads: 4, ffn: 512, vocab: 1024, seq: "
                         "128}\n";
  const auto r = run_symmesh("run " + path + " --dry-run");
  std::filesystem::remove(path);
#ifndef SYMMESH_HAVE_HW
  EXPECT_EQ(r.exit_code, 1);
#else
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_THAT(r.err, HasSubstr("'embed' (embedding): the hardware backend has no kernel for "
                               "'embedding' yet"));
#endif
}

TEST(RunCommand, NativeCollectivesMayNameTheDerivedOpsOfAVersionTwoStep) {
  // The quickstart's step runs ops its file does not write: the backward, the gradient
  // reductions (on 2x4 with the weights split over tp, both all-reduced over dp: one bucket,
  // strategies/gradient_buckets.hpp, named by the first gradient made and the last) and the
  // updates.
  const auto named = run_symmesh("run " + kScenarios +
                                 "quickstart.yaml --dry-run --collectives "
                                 "nccl:w_down..w_up.grad_all_reduce");
#ifndef SYMMESH_HAVE_HW
  EXPECT_EQ(named.exit_code, 1);
#else
  ASSERT_EQ(named.exit_code, 0) << named.err;
  EXPECT_THAT(named.out, HasSubstr("nccl all_reduce"));
  const auto misspelt =
      run_symmesh("run " + kScenarios + "quickstart.yaml --dry-run --collectives nccl:w_up.grad");
  EXPECT_EQ(misspelt.exit_code, 2) << misspelt.err;
  EXPECT_THAT(misspelt.err, HasSubstr("no op named 'w_up.grad' in scenario 'quickstart'"));
  EXPECT_THAT(misspelt.err,
              HasSubstr("w_down..w_up.grad_all_reduce, w_down.adam"));  // its ops listed
#endif
}

TEST(RunCommand, DryRunRefusesReportOptions) {
  const auto r = run_symmesh("run " + kQuickstartV1 + " --dry-run --json");
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_THAT(r.err, HasSubstr("--dry-run"));
}

TEST(CompareCommand, ArgumentsAndMachineChecks) {
  EXPECT_EQ(run_symmesh("compare").exit_code, 2);
  EXPECT_EQ(run_symmesh("compare " + kQuickstartV1 + " --collectives x").exit_code, 2);
  if (visible_gpus() >= 8) GTEST_SKIP() << "8 GPUs visible";
  expect_cannot_run_here(run_symmesh("compare " + kQuickstartV1), "symmesh compare", 8);
}

std::string num(double v) {
  char buffer[32];
  std::snprintf(buffer, sizeof buffer, "%.17g", v);
  return buffer;
}

// Saved measurements with exact times: t = 10 us + flops / 800 TFLOP/s (bf16),
// copy: t = 2 us + 2·bytes / 3 TB/s, put: t = 5 us + bytes / 400 GB/s.
// A GPU whose kernels each cost 6 us to launch, whose n³ bf16 GEMM does 2 (n + 64)³ work
// at 800 TFLOP/s (the roofline's shape terms, core/roofline.hpp, at peak × efficiency =
// 800 TFLOP/s), and whose copies move read + write at 3 TB/s.
double gemm_seconds(int n) {
  return 6e-6 + 2.0 * (n + 64.0) * (n + 64.0) * (n + 64.0) / 800e12;
}

std::string measurements_json() {
  std::string gemm, copies, puts;
  for (int n : {1024, 2048, 4096}) {
    gemm += std::string(gemm.empty() ? "" : ",") + R"({"dtype": "bf16", "m": )" +
            std::to_string(n) + R"(, "n": )" + std::to_string(n) + R"(, "k": )" +
            std::to_string(n) + R"(, "seconds": )" + num(gemm_seconds(n)) + "}";
  }
  for (double bytes : {16e6, 64e6, 256e6}) {
    copies += std::string(copies.empty() ? "" : ",") + R"({"bytes": )" +
              std::to_string(static_cast<long>(bytes)) + R"(, "seconds": )" +
              num(6e-6 + 2 * bytes / 3e12) + "}";
    puts += std::string(puts.empty() ? "" : ",") + R"({"peer": "gpu1", "bytes": )" +
            std::to_string(static_cast<long>(bytes)) + R"(, "seconds": )" +
            num(5e-6 + bytes / 400e9) + "}";
  }
  return R"({"gpu": {"name": "Test GPU", "count": 2, "memory_bytes": 85899345920}, "gemm": [)" +
         gemm + R"(], "copy": [)" + copies + R"(], "put": [)" + puts + "]}";
}

TEST(CalibrateCommand, ArgumentsAndMachineChecks) {
  EXPECT_EQ(run_symmesh("calibrate").exit_code, 2);  // --out is required
  const auto nodir = run_symmesh("calibrate --out /no/such/dir/c.yaml");
  EXPECT_EQ(nodir.exit_code, 2);
  EXPECT_THAT(nodir.err, HasSubstr("--out"));
  const auto base = run_symmesh("calibrate --out " + temp_path("c.yaml") + " --base /no/such.yaml");
  EXPECT_EQ(base.exit_code, 2);
  if (visible_gpus() > 0) GTEST_SKIP() << "a GPU is visible: calibrate would measure it";
  const auto r = run_symmesh("calibrate --out " + temp_path("symmesh_calibrated.yaml"));
  EXPECT_EQ(r.exit_code, 1);
#ifdef SYMMESH_HAVE_HW
  EXPECT_THAT(r.err, HasSubstr("no GPU visible: symmesh calibrate needs a GPU to measure"));
#else
  EXPECT_THAT(r.err, HasSubstr("built without the hardware backend"));
#endif
}

TEST(CalibrateCommand, FitsSavedMeasurementsIntoALoadableCluster) {
  const auto in = temp_path("symmesh_measurements.json");
  const auto out = temp_path("symmesh_calibrated_cluster.yaml");
  std::ofstream(in) << measurements_json();
  const auto r = run_symmesh("calibrate --from " + in + " --out " + out + " --name lab");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const symmesh::ClusterSpec c = symmesh::load_cluster(out);
  EXPECT_EQ(c.name, "lab");
  EXPECT_EQ(c.gpus_per_node, 2);
  EXPECT_EQ(c.gpu.name, "Test GPU");
  // No base peak: the default efficiency 0.85 and the peak it implies, 800 / 0.85 =
  // 941.18 TFLOP/s, written to four digits (941.2).
  EXPECT_NEAR(c.gpu.peak_flops_per_s.at("bf16"), 941.2e12, 0.05e12);
  EXPECT_EQ(c.gpu.gemm_efficiency.at("bf16"), 0.85);
  EXPECT_NEAR(*c.gpu.launch_overhead_s, 6e-6, 0.001e-6);
  EXPECT_NEAR(c.gpu.memory_bandwidth_bytes_per_s, 3e12, 0.001e12);
  // Each GEMM calibrated at T simulates at T again (it was 1.2 T when the measured rate was
  // stored as the peak and the efficiency applied on top).
  for (int n : {1024, 2048, 4096}) {
    symmesh::MatmulWork w;
    w.m = w.n = w.k = n;
    w.dtype = symmesh::DType::bf16;
    EXPECT_NEAR(symmesh::roofline::matmul_duration_s(c.gpu, w), gemm_seconds(n),
                0.03 * gemm_seconds(n))
        << n;
  }
  EXPECT_DOUBLE_EQ(c.gpu.memory_capacity_bytes, 85899345920.0);
  EXPECT_NEAR(c.intra_node.bandwidth_bytes_per_s, 400e9, 0.1e9);
  EXPECT_NEAR(c.intra_node.latency_s, 5e-6, 0.001e-6);
  std::remove(in.c_str());
  std::remove(out.c_str());
}

TEST(CalibrateCommand, MeasurementsThatCannotBeFittedAreBadInput) {
  const auto in = temp_path("symmesh_bad_measurements.json");
  std::ofstream(in) << R"({"gpu": {"name": "G"}, "gemm": [{"dtype": "bf16", "m": 8, "n": 8, )"
                       R"("k": 8, "seconds": 1e-6}]})";
  const auto r = run_symmesh("calibrate --from " + in + " --out " + temp_path("x.yaml"));
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_THAT(r.err, HasSubstr("two or more sizes"));
  std::ofstream(in) << "not json";
  EXPECT_EQ(run_symmesh("calibrate --from " + in + " --out " + temp_path("x.yaml")).exit_code, 2);
  std::remove(in.c_str());
}

TEST(CalibrateCommand, GemmCsvFitsEfficienciesOnTopOfTheBase) {
  // bf16 GEMMs made up at 0.75 of the H100's 989.4 TFLOP/s (dgx-h100-datasheet.yaml: no
  // sm_count, so no waves), plus its 5 us
  // launch: 2 (n + 64)³ / (989.4e12 × 0.75) + 5e-6 s; and one decode shape, HBM-bound.
  const auto in = temp_path("symmesh_gemm.csv");
  const auto out = temp_path("symmesh_gemm_cluster.yaml");
  std::ofstream csv(in);
  csv << "id,m,n,k,dtype,time_us,source\n";
  for (int n : {2048, 4096, 8192})
    csv << n << "," << n << "," << n << "," << n << ",bf16,"
        << num((2.0 * (n + 64.0) * (n + 64.0) * (n + 64.0) / (989.4e12 * 0.75) + 5e-6) * 1e6)
        << ",made up\n";
  // m = 1: (8192 + 8192² + 8192) × 2 B at 3.35 TB/s = 40.075 us, + 5 us.
  csv << "d,1,8192,8192,bf16,45.07,made up\n";
  csv.close();
  const std::string base =
      std::string(SYMMESH_SOURCE_DIR) + "/scenarios/clusters/dgx-h100-datasheet.yaml";
  const auto r = run_symmesh("calibrate --gemm " + in + " --base " + base + " --out " + out);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_THAT(r.out,
              HasSubstr("bf16: efficiency 0.75 of 989.4 TFLOP/s from 4 shapes (3 compute-bound)"));
  const symmesh::ClusterSpec c = symmesh::load_cluster(out);
  EXPECT_EQ(c.gpu.gemm_efficiency.at("bf16"), 0.75);
  EXPECT_EQ(c.gpu.peak_flops_per_s.at("bf16"), 989.4e12);
  EXPECT_EQ(c.name, "dgx-h100-datasheet-calibrated");
  std::remove(out.c_str());

  // Bad rows: exit 2 naming file:line:column, nothing written; --gemm needs --base.
  std::ofstream(in) << "m,n,k,dtype,seconds\n8,8,8,bf16,1e-3\n8,8,eight,bf16,1e-3\n";
  const auto bad = run_symmesh("calibrate --gemm " + in + " --base " + base + " --out " + out);
  EXPECT_EQ(bad.exit_code, 2);
  EXPECT_THAT(bad.err, HasSubstr(in + ":3:5: k: expected an integer >= 1, got 'eight'"));
  EXPECT_FALSE(std::filesystem::exists(out));
  const auto nobase = run_symmesh("calibrate --gemm " + in + " --out " + out);
  EXPECT_EQ(nobase.exit_code, 2);
  EXPECT_THAT(nobase.err, HasSubstr("give --base FILE"));
  EXPECT_EQ(run_symmesh("calibrate --gemm " + in + " --from x.json --out " + out).exit_code, 2);
  EXPECT_FALSE(std::filesystem::exists(out));
  std::remove(in.c_str());
}

}  // namespace
