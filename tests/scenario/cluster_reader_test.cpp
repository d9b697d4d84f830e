// The cluster reader's optional GPU figures (scenario/cluster_reader.cpp, documented in
// docs/scenario-format.md "Clusters"): what each reads into, and the error naming the
// field, file, line and column for each bad value.
#include <gtest/gtest.h>

#include "scenario_test_files.hpp"

namespace symmesh::testing {
namespace {

class ClusterReaderTest : public ::testing::Test {
 protected:
  // dgx-h100.yaml with `gpu_extra` appended under gpu: (lines 3 on) and `memory` as the
  // memory map, as its own file (line 1: base).
  std::string file(const std::string& gpu_extra,
                   const std::string& memory = "{capacity: 80 GiB, bandwidth: 3.35 TB/s}") {
    path_ = files_.write("c.yaml", "base: " + std::string(SYMMESH_SOURCE_DIR) +
                                       "/scenarios/clusters/dgx-h100-datasheet.yaml\n"
                                       "gpu:\n"
                                       "  memory: " +
                                       memory + "\n" + gpu_extra);
    return path_;
  }
  std::string at(int line, int column) const {
    return path_ + ":" + std::to_string(line) + ":" + std::to_string(column);
  }
  ScenarioFiles files_;
  std::string path_;
};

TEST_F(ClusterReaderTest, OptionalFiguresReadIntoTheGpu) {
  const ClusterSpec c = load_cluster(
      file("  gemm_efficiency: {bf16: 0.8, fp8: 0.66}\n  sm_count: 132\n  launch_overhead: 4 us\n",
           "{capacity: 80 GiB, bandwidth: 3.35 TB/s, sustained_bandwidth: 2.9 TB/s}"));
  EXPECT_EQ(c.gpu.gemm_efficiency.at("bf16"), 0.8);
  EXPECT_EQ(c.gpu.gemm_efficiency.at("fp8"), 0.66);
  EXPECT_EQ(c.gpu.gemm_efficiency.size(), 2u);
  EXPECT_DOUBLE_EQ(c.gpu.memory_sustained_bandwidth_bytes_per_s, 2.9e12);
  EXPECT_EQ(c.gpu.sm_count, 132);
  EXPECT_DOUBLE_EQ(*c.gpu.launch_overhead_s, 4e-6);
}

TEST_F(ClusterReaderTest, AbsentFiguresStayAbsent) {
  const ClusterSpec c = load_cluster(file(""));
  EXPECT_TRUE(c.gpu.gemm_efficiency.empty());
  EXPECT_EQ(c.gpu.memory_sustained_bandwidth_bytes_per_s, 0);
  EXPECT_EQ(c.gpu.sm_count, 0);
  EXPECT_FALSE(c.gpu.launch_overhead_s.has_value());
}

TEST_F(ClusterReaderTest, ANewDatasheetBandwidthDropsTheBasesSustainedOne) {
  // An H200 on top of a calibrated H100: the H100's 2.9 TB/s sustained does not carry
  // over to the H200's 4.8 TB/s memory.
  const std::string h100 = file("",
                                "{capacity: 80 GiB, bandwidth: 3.35 TB/s, "
                                "sustained_bandwidth: 2.9 TB/s}");
  const std::string h200 = files_.write(
      "h200.yaml", "base: c.yaml\ngpu:\n  memory: {capacity: 141 GB, bandwidth: 4.8 TB/s}\n");
  EXPECT_DOUBLE_EQ(load_cluster(h100).gpu.memory_sustained_bandwidth_bytes_per_s, 2.9e12);
  EXPECT_EQ(load_cluster(h200).gpu.memory_sustained_bandwidth_bytes_per_s, 0);
}

TEST_F(ClusterReaderTest, BadValuesNameTheField) {
  struct Case {
    std::string extra, memory, message;
    int line, column;
  };
  const std::string memory = "{capacity: 80 GiB, bandwidth: 3.35 TB/s}";
  const std::vector<Case> cases{
      {"  gemm_efficiency: {fp8: 1.2}\n", memory,
       "cluster.gpu.gemm_efficiency.fp8: expected a fraction of the peak in (0, 1], e.g. 0.8, "
       "got '1.2'",
       4, 26},
      {"  gemm_efficiency: {fp8: 0}\n", memory, "cluster.gpu.gemm_efficiency.fp8: expected", 4, 26},
      {"  gemm_efficiency: {fp8: 80 %}\n", memory, "cluster.gpu.gemm_efficiency.fp8: expected", 4,
       26},
      {"  gemm_efficiency: {bf17: 0.8}\n", memory, "bf17", 4, 21},
      {"  sm_count: 0\n", memory, "cluster.gpu.sm_count: expected an integer >= 1", 4, 13},
      {"  launch_overhead: 5\n", memory, "needs a unit", 4, 20},
      {"  launch_overhead: 5 GB/s\n", memory, "a time is expected", 4, 20},
      {"", "{capacity: 80 GiB, bandwidth: 3.35 TB/s, sustained_bandwidth: 4 TB/s}",
       "cluster.gpu.memory.sustained_bandwidth: must be > 0 and at most the datasheet bandwidth", 3,
       73},
      {"", "{capacity: 80 GiB, bandwidth: 3.35 TB/s, sustained: 3 TB/s}", "sustained", 3, 52},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.extra + c.memory);
    const InvalidArgument e = error_of([&] { load_cluster(file(c.extra, c.memory)); });
    EXPECT_NE(e.message().find(c.message), std::string::npos) << e.message();
    EXPECT_EQ(e.where(), at(c.line, c.column)) << e.message();
  }
}

}  // namespace
}  // namespace symmesh::testing
