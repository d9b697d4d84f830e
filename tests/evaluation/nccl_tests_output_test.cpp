// evaluation/nccl_tests_output.hpp against the layout nccl-tests' src/common.cu prints (a
// "# Collective test starting:" line, "#  Rank  N Group G Pid P on HOST device D" lines and
// 13-column data rows: size count type redop root, then time algbw busbw #wrong out-of-place
// and in-place) and against a published file of tools/validation/published/nccl/.
#include "evaluation/nccl_tests_output.hpp"

#include <gtest/gtest.h>

#include "core/errors.hpp"

namespace symmesh::evaluation {
namespace {

const std::string kPublished =
    std::string(SYMMESH_SOURCE_DIR) + "/tools/validation/published/nccl/";

// Two hosts of two GPUs each, two rows (hand-written in nccl-tests' layout; the times are
// made up, the columns are the format's).
const char* kTwoNodes = R"(# nccl-tests version 2.13.8 nccl-headers=21903 nccl-library=21903
# Collective test starting: all_gather_perf
# nThread 1 nGpus 1 minBytes 1024 maxBytes 2048 step: 2(factor) warmup iters: 5 iters: 20 agg iters: 1 validation: 1 graph: 0
#
# Using devices
#  Rank  0 Group  0 Pid   101 on hostA device  0 [0x1b] NVIDIA H100 80GB HBM3
#  Rank  1 Group  0 Pid   102 on hostA device  1 [0x43] NVIDIA H100 80GB HBM3
#  Rank  2 Group  0 Pid   201 on hostB device  0 [0x1b] NVIDIA H100 80GB HBM3
#  Rank  3 Group  0 Pid   202 on hostB device  1 [0x43] NVIDIA H100 80GB HBM3
#
#                                                              out-of-place                       in-place
#       size         count      type   redop    root     time   algbw   busbw #wrong     time   algbw   busbw #wrong
#        (B)    (elements)                               (us)  (GB/s)  (GB/s)            (us)  (GB/s)  (GB/s)
        1024            64     float    none      -1    20.00    0.05    0.04      0    19.50    0.05    0.04      0
        2048           128     float    none      -1    25.00    0.08    0.06      0    24.00    0.09    0.06    N/A
# Out of bounds values : 0 OK
# Avg bus bandwidth    : 0.05
#
)";

TEST(NcclTestsOutput, ReadsCollectiveRanksHostsAndRows) {
  const NcclTestsRun run = parse_nccl_tests_output(kTwoNodes, "two.txt");
  EXPECT_EQ(run.collective, BandwidthCollective::all_gather);
  EXPECT_EQ(run.gpus, 4);   // four Rank lines
  EXPECT_EQ(run.nodes, 2);  // hostA, hostB
  ASSERT_EQ(run.rows.size(), 2u);
  EXPECT_EQ(run.rows[0].bytes, 1024);
  EXPECT_EQ(run.rows[0].count, 64);
  EXPECT_EQ(run.rows[0].type, "float");
  EXPECT_EQ(run.rows[0].redop, "none");
  EXPECT_EQ(run.rows[0].root, -1);
  EXPECT_DOUBLE_EQ(run.rows[0].time_s, 20e-6);  // out-of-place, us → s
  EXPECT_DOUBLE_EQ(run.rows[0].in_place_time_s, 19.5e-6);
  EXPECT_DOUBLE_EQ(run.rows[1].busbw_gb_per_s, 0.06);
  EXPECT_EQ(run.rows[1].line, 15);  // the file's 15th line
}

TEST(NcclTestsOutput, StripsMpirunTagsAndSkipsNcclLogLines) {
  std::string tagged;
  std::string text = kTwoNodes;
  size_t start = 0;
  for (size_t end; (end = text.find('\n', start)) != std::string::npos; start = end + 1)
    tagged += "[1,0]<stdout>:" + text.substr(start, end - start + 1);
  tagged += "hostA:101:110 [0] NCCL INFO Channel 00/32 : 0 1 2 3\n";
  const NcclTestsRun run = parse_nccl_tests_output(tagged, "tagged.txt");
  EXPECT_EQ(run.gpus, 4);
  EXPECT_EQ(run.rows.size(), 2u);
}

TEST(NcclTestsOutput, GpuCountFallsBackToMetadataThenThreadsTimesGpus) {
  // No Rank lines: "#% gpus: 16" wins over nThread × nGpus (1 × 8).
  const std::string rows =
      "        1024           256     float     sum      -1    30.00    0.03    0.06      0    "
      "30.00    0.03    0.06      0\n";
  const std::string header = "# nThread 1 nGpus 8 minBytes 8 maxBytes 1024\n";
  EXPECT_EQ(parse_nccl_tests_output("#% gpus: 16\n" + header + rows, "m.txt",
                                    BandwidthCollective::all_reduce)
                .gpus,
            16);
  const NcclTestsRun run =
      parse_nccl_tests_output(header + rows, "t.txt", BandwidthCollective::all_reduce);
  EXPECT_EQ(run.gpus, 8);
  EXPECT_EQ(run.nodes, 0);                                     // unknown
  EXPECT_EQ(run.collective, BandwidthCollective::all_reduce);  // the caller's
}

TEST(NcclTestsOutput, BadRowsNameFileAndLine) {
  const std::string text = std::string("# Collective test starting: alltoall_perf\n") +
                           "#% gpus: 8\n" + "   1024   256  float  none  -1  30.0  0.03\n";
  try {
    parse_nccl_tests_output(text, "h.txt");
    FAIL() << "a 7-column row was accepted";
  } catch (const InvalidArgument& e) {
    EXPECT_EQ(e.where(), "h.txt:3");
    EXPECT_NE(e.message().find("expected 13 columns"), std::string::npos) << e.message();
    EXPECT_NE(e.message().find("got 7"), std::string::npos) << e.message();
  }
  const std::string not_a_time =
      "# Collective test starting: alltoall_perf\n#% gpus: 8\n"
      "1024 256 float none -1 fast 0.03 0.03 0 30.0 0.03 0.03 0\n";
  try {
    parse_nccl_tests_output(not_a_time, "h.txt");
    FAIL();
  } catch (const InvalidArgument& e) {
    EXPECT_EQ(e.where(), "h.txt:3");
    EXPECT_NE(e.message().find("'fast'"), std::string::npos) << e.message();
  }
  // Neither the file nor the caller says which collective.
  EXPECT_THROW(
      parse_nccl_tests_output("#% gpus: 8\n1024 256 float sum -1 30 0 0 0 30 0 0 0\n", "n.txt"),
      InvalidArgument);
  // Two programs' sections in one file (a whole benchmark log) would mix their rows.
  try {
    parse_nccl_tests_output(
        std::string(kTwoNodes) + "# Collective test starting: all_reduce_perf\n", "log.txt");
    FAIL();
  } catch (const InvalidArgument& e) {
    EXPECT_EQ(e.where(), "log.txt:19");  // kTwoNodes is 18 lines
    EXPECT_NE(e.message().find("one run per file"), std::string::npos) << e.message();
  }
  // No data row.
  EXPECT_THROW(
      parse_nccl_tests_output("# Collective test starting: all_reduce_perf\n#% gpus: 8\n", "e.txt"),
      InvalidArgument);
}

// A table of more rows than one fit takes is refused at the first row past the bound, so
// that a table of 10^6 rows is neither read whole nor fitted for minutes.
TEST(NcclTestsOutput, MoreRowsThanAFitTakesAreRefusedAtTheFirstRowPastTheBound) {
  const std::string header = "# Collective test starting: all_reduce_perf\n#% gpus: 8\n";
  const std::string row = "1024 256 float sum -1 30 0 0 0 30 0 0 0\n";
  std::string text = header;
  for (int i = 0; i < kMostNcclTestsRows; ++i) text += row;
  EXPECT_EQ(parse_nccl_tests_output(text, "big.txt").rows.size(),
            static_cast<size_t>(kMostNcclTestsRows));
  text += row;
  try {
    parse_nccl_tests_output(text, "big.txt");
    FAIL() << "a row past the bound was accepted";
  } catch (const InvalidArgument& e) {
    EXPECT_EQ(e.where(), "big.txt:" + std::to_string(kMostNcclTestsRows + 3));
    EXPECT_NE(e.message().find("more than 10000 data rows"), std::string::npos) << e.message();
  }
}

TEST(NcclTestsOutput, ReadsAPublishedFile) {
  // h100_1x8_xxrjun_allreduce.txt: 8 Rank lines on host cnode3-002, 10 rows from 33554432 to
  // 17179869184 bytes; its first row (line 29) reads
  //   33554432  4194304  double  sum  -1  182.87  183.49  321.10  0  182.88  183.48  321.08  0
  const NcclTestsRun run = read_nccl_tests_file(kPublished + "h100_1x8_xxrjun_allreduce.txt");
  EXPECT_EQ(run.collective, BandwidthCollective::all_reduce);
  EXPECT_EQ(run.gpus, 8);
  EXPECT_EQ(run.nodes, 1);
  ASSERT_EQ(run.rows.size(), 10u);
  EXPECT_EQ(run.rows[0].bytes, 33554432);
  EXPECT_EQ(run.rows[0].count, 4194304);
  EXPECT_EQ(run.rows[0].type, "double");
  EXPECT_DOUBLE_EQ(run.rows[0].time_s, 182.87e-6);
  EXPECT_DOUBLE_EQ(run.rows[0].busbw_gb_per_s, 321.10);
  EXPECT_EQ(run.rows[0].line, 29);
  EXPECT_EQ(run.rows.back().bytes, 17179869184);
}

TEST(NcclTestsOutput, ReadsEveryPublishedFile) {
  // p5efa has no "# Collective test starting:" line: its "#% collective: all_reduce_perf"
  // metadata names it. 16 Rank lines on two hosts (test-nccl-worker-0 and -1).
  const NcclTestsRun p5 =
      read_nccl_tests_file(kPublished + "h100_2x8_p5efa_allreduce_nccl2223.txt");
  EXPECT_EQ(p5.collective, BandwidthCollective::all_reduce);
  EXPECT_EQ(p5.gpus, 16);
  EXPECT_EQ(p5.nodes, 2);
  EXPECT_EQ(read_nccl_tests_file(kPublished + "h100_10x8_xxrjun_alltoall.txt").collective,
            BandwidthCollective::all_to_all);
  EXPECT_EQ(read_nccl_tests_file(kPublished + "h100_10x8_xxrjun_alltoall.txt").gpus, 80);
  EXPECT_EQ(read_nccl_tests_file(kPublished + "h100_10x1_xxrjun_allgather.txt").nodes, 10);
  EXPECT_THROW(read_nccl_tests_file(kPublished + "no_such_file.txt"), InvalidArgument);
}

}  // namespace
}  // namespace symmesh::evaluation
