// The cluster writer against the reader: every shipped cluster file, written and read back,
// is the same ClusterSpec to the bit; with fewer significant digits, to that precision.
#include "scenario/cluster_writer.hpp"

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>

#include <unistd.h>

#include "scenario/scenario_loader.hpp"

namespace symmesh::scenario {
namespace {

const std::string kClusters = std::string(SYMMESH_SOURCE_DIR) + "/scenarios/clusters/";

// Each test is its own process under ctest -j: a file name shared between them raced (one
// read the other's half-written file), so the name carries the process id and a count.
ClusterSpec read_back(const std::string& text) {
  static int count = 0;
  const auto path = std::filesystem::temp_directory_path() /
                    ("symmesh_cluster_writer_" + std::to_string(getpid()) + "_" +
                     std::to_string(count++) + ".yaml");
  std::ofstream(path) << text;
  ClusterSpec c = load_cluster(path.string());
  std::filesystem::remove(path);
  return c;
}

void expect_same(const ClusterSpec& a, const ClusterSpec& b, double tolerance) {
  auto near = [tolerance](double x, double y) {
    return tolerance == 0 ? x == y : std::abs(x - y) <= tolerance * std::abs(y);
  };
  EXPECT_EQ(a.nodes, b.nodes);
  EXPECT_EQ(a.gpus_per_node, b.gpus_per_node);
  EXPECT_EQ(a.gpu.name, b.gpu.name);
  ASSERT_EQ(a.gpu.peak_flops_per_s.size(), b.gpu.peak_flops_per_s.size());
  for (const auto& [dtype, rate] : b.gpu.peak_flops_per_s)
    EXPECT_TRUE(near(a.gpu.peak_flops_per_s.at(dtype), rate)) << dtype;
  EXPECT_EQ(a.gpu.memory_capacity_bytes, b.gpu.memory_capacity_bytes);
  EXPECT_TRUE(near(a.gpu.memory_bandwidth_bytes_per_s, b.gpu.memory_bandwidth_bytes_per_s));
  EXPECT_EQ(a.intra_node.kind, b.intra_node.kind);
  EXPECT_TRUE(near(a.intra_node.bandwidth_bytes_per_s, b.intra_node.bandwidth_bytes_per_s));
  EXPECT_TRUE(near(a.intra_node.latency_s, b.intra_node.latency_s));
  ASSERT_EQ(a.gpu.gemm_efficiency.size(), b.gpu.gemm_efficiency.size());
  for (const auto& [dtype, fraction] : b.gpu.gemm_efficiency)
    EXPECT_TRUE(near(a.gpu.gemm_efficiency.at(dtype), fraction)) << dtype;
  EXPECT_TRUE(near(a.gpu.memory_sustained_bandwidth_bytes_per_s,
                   b.gpu.memory_sustained_bandwidth_bytes_per_s));
  EXPECT_EQ(a.gpu.sm_count, b.gpu.sm_count);
  ASSERT_EQ(a.gpu.launch_overhead_s.has_value(), b.gpu.launch_overhead_s.has_value());
  if (b.gpu.launch_overhead_s)
    EXPECT_TRUE(near(*a.gpu.launch_overhead_s, *b.gpu.launch_overhead_s));
  if (b.nodes > 1) {
    EXPECT_EQ(a.inter_node.kind, b.inter_node.kind);
    EXPECT_EQ(a.inter_node.nics_per_node, b.inter_node.nics_per_node);
    EXPECT_TRUE(near(a.inter_node.bandwidth_bytes_per_s, b.inter_node.bandwidth_bytes_per_s));
    EXPECT_TRUE(near(a.inter_node.latency_s, b.inter_node.latency_s));
  }
}

TEST(ClusterWriter, EveryShippedClusterReadsBackExactly) {
  int files = 0;
  for (const auto& entry : std::filesystem::directory_iterator(kClusters)) {
    SCOPED_TRACE(entry.path().string());
    const ClusterSpec c = load_cluster(entry.path().string());
    expect_same(read_back(cluster_file_text(c)), c, 0);
    expect_same(read_back(cluster_file_text(c, {}, {4})), c, 5e-4);
    ++files;
  }
  EXPECT_GE(files, 5);
}

TEST(ClusterWriter, TheRooflinesOptionalFiguresReadBack) {
  // Each optional GPU figure, with values that are not short decimals (1/3, a fitted
  // bandwidth), written and read back: the same doubles; at four digits, within 5e-4.
  ClusterSpec c = load_cluster(kClusters + "dgx-h100.yaml");
  c.gpu.gemm_efficiency = {{"bf16", 0.8}, {"fp8", 1.0 / 3}};
  c.gpu.memory_sustained_bandwidth_bytes_per_s = 2.9137e12;
  c.gpu.sm_count = 132;
  c.gpu.launch_overhead_s = 4.25e-6;
  const std::string text = cluster_file_text(c);
  EXPECT_NE(text.find("  gemm_efficiency: {bf16: 0.8, fp8: 0.333"), std::string::npos) << text;
  EXPECT_NE(text.find("sustained_bandwidth: 2.9137 TB/s}"), std::string::npos) << text;
  EXPECT_NE(text.find("  sm_count: 132\n"), std::string::npos) << text;
  EXPECT_NE(text.find("  launch_overhead: 4.25 us\n"), std::string::npos) << text;
  expect_same(read_back(text), c, 0);
  expect_same(read_back(cluster_file_text(c, {}, {4})), c, 5e-4);
  // A launch cost of 0 is a figure, not an absent one.
  c.gpu.launch_overhead_s = 0.0;
  EXPECT_EQ(read_back(cluster_file_text(c)).gpu.launch_overhead_s, 0.0);
}

TEST(ClusterWriter, NamesAndNotesCannotAddKeys) {
  // A GPU name as calibrate may read it (from the driver, or a --from file someone else
  // wrote), with a quote, a backslash and a line break followed by a key: written back,
  // the file must hold the same keys, the name as one value with the break as '?'.
  ClusterSpec c = load_cluster(kClusters + "dgx-h100.yaml");
  c.gpu.name = "H100 \"SXM\" \\ x\nnodes: 99";
  c.name = "lab\ngpus_per_node: 1";
  const std::string text =
      cluster_file_text(c, {{"measured\nnodes: 7"}, "gpu note\rinter_node: {}", "", ""});
  const ClusterSpec back = read_back(text);
  EXPECT_EQ(back.nodes, c.nodes);
  EXPECT_EQ(back.gpus_per_node, c.gpus_per_node);
  EXPECT_EQ(back.gpu.name, "H100 \"SXM\" \\ x?nodes: 99");
  EXPECT_EQ(back.name, "lab?gpus_per_node: 1");
  EXPECT_NE(text.find("# measured?nodes: 7\n"), std::string::npos);
}

TEST(ClusterWriter, DecimalsInTheReadersUnits) {
  EXPECT_EQ(decimal_in_unit(989.4e12, 12), "989.4");
  EXPECT_EQ(decimal_in_unit(400e9 / 8 * 8, 9), "400");
  EXPECT_EQ(decimal_in_unit(0.5e-6, -6), "0.5");
  EXPECT_EQ(decimal_in_unit(3.35e12, 12), "3.35");
  EXPECT_EQ(decimal_in_unit(1234567.0, 0, 3), "1230000");
  EXPECT_EQ(decimal_in_unit(0.000123456, 0, 2), "0.00012");
  EXPECT_EQ(decimal_in_unit(799.99996e12, 12, 4), "800");
  // A zero step latency (a fitted collective with one group size) reads "0", not "0000000".
  EXPECT_EQ(decimal_in_unit(0.0, -6, 4), "0");
  EXPECT_EQ(decimal_in_unit(0.0, 9), "0");
  // Notes become comments, and the file still loads.
  ClusterSpec c = load_cluster(kClusters + "dgx-h100.yaml");
  const std::string text = cluster_file_text(c, {{"made here", "second line"}, "the GPU", "", ""});
  EXPECT_EQ(text.rfind("# made here\n# second line\n", 0), 0u);
  EXPECT_NE(text.find("# the GPU\ngpu:"), std::string::npos);
  expect_same(read_back(text), c, 0);
}

}  // namespace
}  // namespace symmesh::scenario
