// symmesh simulate --nccl-tests: the table in nccl-tests' layout. Each row is checked with
// arithmetic of its own (algbw = size / time, busbw = algbw x the factor of NVIDIA/nccl-tests
// doc/PERFORMANCE.md), the layout against all_reduce_perf's header lines, the times
// against the ring's closed form, and bad input against exit 2.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cmath>
#include <nlohmann/json.hpp>
#include <sstream>

#include "tests/tools/run_symmesh.hpp"

namespace {

using symmesh::testing::run_symmesh;
using ::testing::HasSubstr;

const std::string kCluster =
    std::string(SYMMESH_SOURCE_DIR) + "/scenarios/clusters/dgx-h100-datasheet.yaml";

struct Row {
  long long bytes = 0, count = 0;
  std::string type, redop;
  int root = 0;
  double time_us = 0, algbw = 0, busbw = 0;
  std::string wrong;
};

// The data lines (not starting with '#'), split on blanks into nccl-tests' nine columns.
std::vector<Row> rows_of(const std::string& out) {
  std::vector<Row> rows;
  std::istringstream lines(out);
  std::string line;
  while (std::getline(lines, line)) {
    if (line.empty() || line[0] == '#') continue;
    std::istringstream cells(line);
    Row r;
    cells >> r.bytes >> r.count >> r.type >> r.redop >> r.root >> r.time_us >> r.algbw >> r.busbw >>
        r.wrong;
    EXPECT_FALSE(cells.fail()) << line;
    std::string extra;
    EXPECT_FALSE(cells >> extra) << "more than nine columns: " << line;
    rows.push_back(r);
  }
  return rows;
}

// What nccl-tests' time cell rounds to: 2 decimals under 100 us, 1 under 10,000, else none.
double time_digit_us(double us) {
  return us >= 10000 ? 1 : us >= 100 ? 0.1 : 0.01;
}

void expect_nccl_tests_arithmetic(const std::vector<Row>& rows, double factor) {
  double previous_us = 0;
  for (const Row& r : rows) {
    // The bandwidths come from the unrounded time: allow half a digit of the time's
    // rounding plus half of the bandwidth's own (two decimals).
    const double algbw = r.bytes / (r.time_us * 1e-6) * 1e-9;
    const double share = 0.5 * time_digit_us(r.time_us) / r.time_us;
    EXPECT_NEAR(r.algbw, algbw, 0.005 + algbw * share) << r.bytes;
    EXPECT_NEAR(r.busbw, algbw * factor, 0.005 + algbw * factor * share) << r.bytes;
    // More bytes never take less time (at the smallest sizes the latency terms dominate
    // and the printed time stays flat).
    EXPECT_GE(r.time_us, previous_us) << r.bytes;
    previous_us = r.time_us;
    EXPECT_EQ(r.root, -1);
    EXPECT_EQ(r.wrong, "N/A");
  }
  ASSERT_GE(rows.size(), 2u);
  EXPECT_GT(rows.back().time_us, rows.front().time_us);
}

TEST(NcclTestsTable, AllReduceHasAllReducePerfsColumnsAndArithmetic) {
  const auto r = run_symmesh("simulate --nccl-tests all_reduce --cluster " + kCluster +
                             " --gpus 8 -b 8 -e 1G -f 2");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  // all_reduce_perf's column header lines, as it prints them (e.g. NVIDIA/nccl-tests issue
  // 287), up to the first group's #wrong.
  EXPECT_THAT(r.out, HasSubstr("#       size         count      type   redop    root     time   "
                               "algbw   busbw #wrong\n"));
  EXPECT_THAT(r.out, HasSubstr("#        (B)    (elements)                               (us)  "
                               "(GB/s)  (GB/s)"));
  const auto rows = rows_of(r.out);
  // 8, 16, …, 2^30: 28 sizes.
  ASSERT_EQ(rows.size(), 28u);
  EXPECT_EQ(rows.front().bytes, 8);
  EXPECT_EQ(rows.back().bytes, 1LL << 30);
  for (const Row& row : rows) {
    EXPECT_EQ(row.count, row.bytes / 4) << row.bytes;  // all-reduce: the whole buffer's floats
    EXPECT_EQ(row.type, "float");
    EXPECT_EQ(row.redop, "sum");
  }
  expect_nccl_tests_arithmetic(rows, 2.0 * 7 / 8);
  // The one-sided ring's closed form (docs/scenario-format.md) on dgx-h100-datasheet's 1 us, 450
  // GB/s: 2(p-1)(α + c/β) = 14 x (1 us + 134,217,728 B / 450e9 B/s) = 14 x 299.26 us = 4189.7 us.
  EXPECT_NEAR(rows.back().time_us, 14 * (1 + 134217728 / 450e9 * 1e6), 4189.7 * 0.001);
}

TEST(NcclTestsTable, AllGatherCountsPerRankAndSkipsSizesUnderOneElementPerRank) {
  // 16 GPUs (2 nodes): 8 B and 32 B hold under one float per rank; from 128 B on, count is
  // size / 4 / 16 as all_gather_perf prints it (1024 B -> 16 elements).
  const auto r = run_symmesh("simulate --nccl-tests all_gather --cluster " + kCluster +
                             " --gpus 16 -b 8 -e 1M -f 4");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const auto rows = rows_of(r.out);
  ASSERT_EQ(rows.size(), 7u);  // 128 B, 512 B, …, 512 KiB
  EXPECT_EQ(rows.front().bytes, 128);
  for (const Row& row : rows) {
    EXPECT_EQ(row.count, row.bytes / 4 / 16) << row.bytes;
    EXPECT_EQ(row.redop, "none");
  }
  expect_nccl_tests_arithmetic(rows, 15.0 / 16);
  EXPECT_THAT(r.out, HasSubstr("# skipped 8 B: under one float per rank"));
  EXPECT_THAT(r.out, HasSubstr("# skipped 32 B: under one float per rank"));
}

TEST(NcclTestsTable, JsonCarriesTheSameRowsInSiUnits) {
  const std::string args =
      "simulate --nccl-tests reduce_scatter --cluster " + kCluster + " -b 1K -e 1M -f 8 -d bf16";
  const auto text = run_symmesh(args);
  const auto json = run_symmesh(args + " --json");
  ASSERT_EQ(json.exit_code, 0) << json.err;
  const auto j = nlohmann::json::parse(json.out);
  const auto rows = rows_of(text.out);
  ASSERT_EQ(j["rows"].size(), rows.size());
  EXPECT_EQ(j["type"], "bfloat16");
  EXPECT_EQ(j["ranks"], 8);
  for (size_t i = 0; i < rows.size(); ++i) {
    const auto& row = j["rows"][i];
    EXPECT_EQ(row["bytes"].get<long long>(), rows[i].bytes);
    const double t = row["time_s"].get<double>();
    EXPECT_DOUBLE_EQ(row["algbw_bytes_per_s"].get<double>(), rows[i].bytes / t);
    EXPECT_DOUBLE_EQ(row["busbw_bytes_per_s"].get<double>(), rows[i].bytes / t * 7 / 8);
  }
}

TEST(NcclTestsTable, BadInputIsExitTwoNamingTheFlag) {
  const std::string base = "simulate --nccl-tests all_reduce --cluster " + kCluster;
  const std::vector<std::pair<std::string, std::string>> cases{
      {base + " -b 1M -e 1K", "--max-bytes"},
      {base + " --gpus 12", "--gpus"},
      {base + " -f 1", "--step-factor"},
      {base + " -b 12Q", "--min-bytes"},
      {base + " -e 999999999999999G", "--max-bytes"},  // past int64 bytes
      {"simulate --nccl-tests broadcast --cluster " + kCluster, "--nccl-tests"},
      {"simulate --nccl-tests all_reduce", "--cluster"},
      {"simulate", "scenario"},
  };
  for (const auto& [command, flag] : cases) {
    const auto r = run_symmesh(command);
    EXPECT_EQ(r.exit_code, 2) << command;
    EXPECT_THAT(r.err, HasSubstr(flag)) << command;
    EXPECT_TRUE(r.out.empty()) << command;
  }
}

}  // namespace
