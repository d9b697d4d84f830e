// `symmesh calibrate --nccl-tests`: the round trip of issue 15. nccl-tests outputs are made
// here from known NCCL-shaped costs (a formula in this file: base + steps × step + bus bytes /
// bandwidth, the least over protocols), calibrated by the command, and the same
// configurations predicted with estimate_library_collective on the cluster file it wrote:
// every time within 3 % of the formula's.
#include <unistd.h>

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "core/nccl_cost_model.hpp"
#include "scenario/scenario_loader.hpp"
#include "tests/tools/run_symmesh.hpp"

namespace symmesh {
namespace {

using testing::run_symmesh;
namespace fs = std::filesystem;

const std::string kRoot = SYMMESH_SOURCE_DIR;
const std::string kBase = kRoot + "/scenarios/clusters/dgx-h100.yaml";

struct Known {
  double base_s, step_s, bus_bytes_per_s;
};

// The formula: NCCL's tuner shape over `protocols` for a ring all_reduce of p ranks on
// `nodes` nodes (2(p-1) steps, bus bytes 2(p-1)/p × size, doc/PERFORMANCE.md), the group's
// bandwidth `nics` × the per-NIC figure across nodes.
double known_time(const std::vector<Known>& protocols, int p, int nics, double bytes) {
  double best = 1e30;
  for (const Known& k : protocols)
    best = std::min(best, k.base_s + 2.0 * (p - 1) * k.step_s +
                              bytes * 2.0 * (p - 1) / p / (k.bus_bytes_per_s * nics));
  return best;
}

// nccl-tests' layout (src/common.cu): header, one Rank line per GPU ("on HOST"), rows of
// size count type redop root | time algbw busbw #wrong | the same in place.
std::string nccl_tests_text(const std::vector<Known>& protocols, int p, int nodes, int nics) {
  std::string text =
      "# Collective test starting: all_reduce_perf\n"
      "# nThread 1 nGpus 1 minBytes 8 maxBytes 8589934592 step: 2(factor)\n"
      "# Using devices\n";
  char line[256];
  for (int r = 0; r < p; ++r) {
    std::snprintf(line, sizeof line,
                  "#  Rank %2d Group  0 Pid %5d on node%d device %2d [0x%02x] H100\n", r, 1000 + r,
                  r / (p / nodes), r % (p / nodes), r);
    text += line;
  }
  text +=
      "#       size         count      type   redop    root     time   algbw   busbw #wrong     "
      "time   algbw   busbw #wrong\n";
  for (int64_t bytes = 8; bytes <= (int64_t{8} << 30); bytes *= 2) {
    const double t_us = known_time(protocols, p, nics, static_cast<double>(bytes)) * 1e6;
    const double algbw = bytes / (t_us * 1e3);
    std::snprintf(line, sizeof line,
                  "%12lld  %12lld     float     sum      -1  %7.2f  %6.2f  %6.2f      0  %7.2f  "
                  "%6.2f  %6.2f      0\n",
                  static_cast<long long>(bytes), static_cast<long long>(bytes / 4), t_us, algbw,
                  algbw * 2.0 * (p - 1) / p, t_us, algbw, algbw * 2.0 * (p - 1) / p);
    text += line;
  }
  return text;
}

class CalibrateNcclTests : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() / ("symmesh-calibrate-nccl-" + std::to_string(getpid()));
    fs::create_directories(dir_);
  }
  void TearDown() override { fs::remove_all(dir_); }
  std::string write(const std::string& name, const std::string& text) {
    const std::string path = (dir_ / name).string();
    std::ofstream(path) << text;
    return path;
  }
  fs::path dir_;
};

TEST_F(CalibrateNcclTests, RoundTripWithinThreePercent) {
  // Inside a node: LL 8 us + 0.6 us/step at 60 GB/s, Simple 25 us + 1.2 us/step at
  // 380 GB/s; runs of 4 and 8 GPUs (two group sizes: the step latency is identifiable).
  const std::vector<Known> intra = {{8e-6, 0.6e-6, 60e9}, {25e-6, 1.2e-6, 380e9}};
  // Across nodes: one protocol, 40 us + 2 us/step at 45 GB/s per NIC; 2 and 4 DGX nodes of
  // 8 GPUs, 8 NICs each: min(8 × 8/8, 8/1) = 8 NICs per group.
  const std::vector<Known> inter = {{40e-6, 2e-6, 45e9}};
  const std::string a = write("ar_1x4.txt", nccl_tests_text(intra, 4, 1, 1));
  const std::string b = write("ar_1x8.txt", nccl_tests_text(intra, 8, 1, 1));
  const std::string c = write("ar_2x8.txt", nccl_tests_text(inter, 16, 2, 8));
  const std::string d = write("ar_4x8.txt", nccl_tests_text(inter, 32, 4, 8));
  const std::string out = (dir_ / "fitted.yaml").string();
  const auto result =
      run_symmesh("calibrate --base " + kBase + " --out " + out + " --nccl-tests " + a +
                  " --nccl-tests " + b + " --nccl-tests " + c + " " + d + " --name fitted-h100");
  ASSERT_EQ(result.exit_code, 0) << result.err;
  EXPECT_NE(result.out.find("intra_node all_reduce (ring"), std::string::npos) << result.out;
  EXPECT_NE(result.out.find("inter_node all_reduce (ring"), std::string::npos) << result.out;
  const ClusterSpec fitted = load_cluster(out);
  EXPECT_EQ(fitted.name, "fitted-h100");
  EXPECT_EQ(fitted.gpus_per_node, 8);  // the base's geometry
  struct Config {
    int p, nodes, nics;
    const std::vector<Known>* known;
  };
  const std::vector<Config> configs = {
      {4, 1, 1, &intra}, {8, 1, 1, &intra}, {16, 2, 8, &inter}, {32, 4, 8, &inter}};
  int checked = 0;
  for (const Config& cfg : configs) {
    const GroupGeometry group{cfg.p, cfg.nodes, cfg.p / cfg.nodes, 1};
    for (int64_t bytes = 8; bytes <= (int64_t{8} << 30); bytes *= 2) {
      const double expected = known_time(*cfg.known, cfg.p, cfg.nics, static_cast<double>(bytes));
      const double predicted = estimate_library_collective(fitted, BandwidthCollective::all_reduce,
                                                           group, static_cast<double>(bytes))
                                   .time_s;
      EXPECT_NEAR(predicted / expected, 1, 0.03)
          << cfg.p << " GPUs on " << cfg.nodes << " nodes, " << bytes << " B";
      ++checked;
    }
  }
  EXPECT_EQ(checked, 4 * 31);  // 8 B … 8 GiB by ×2
}

TEST_F(CalibrateNcclTests, BadInputExitsTwoAndWritesNothing) {
  const std::string bad = write("h.txt",
                                "# Collective test starting: all_reduce_perf\n#% gpus: 8\n"
                                "1024 256 float sum -1 30.0 0.03\n");
  const std::string out = (dir_ / "never.yaml").string();
  auto result = run_symmesh("calibrate --base " + kBase + " --out " + out + " --nccl-tests " + bad);
  EXPECT_EQ(result.exit_code, 2);
  EXPECT_NE(result.err.find("h.txt:3"), std::string::npos) << result.err;
  EXPECT_NE(result.err.find("expected 13 columns"), std::string::npos) << result.err;
  EXPECT_FALSE(fs::exists(out));
  // No --base: the runs cannot be placed on nodes.
  result = run_symmesh("calibrate --out " + out + " --nccl-tests " + bad);
  EXPECT_EQ(result.exit_code, 2);
  EXPECT_NE(result.err.find("--base"), std::string::npos) << result.err;
  EXPECT_FALSE(fs::exists(out));
}

}  // namespace
}  // namespace symmesh
