// One message for one fault, whichever reader meets it (core/input_file.hpp): a scenario,
// a cluster file or a model's Hugging Face config that is a FIFO, a device or a loop of
// symbolic links is reported as that, at the reference's line:col — never "not found",
// and never read (a FIFO would block, a device never end).
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <filesystem>

#include "core/errors.hpp"
#include "core/input_file.hpp"
#include "tests/scenario/scenario_test_files.hpp"

using namespace symmesh;
using ::testing::HasSubstr;

namespace {

namespace fs = std::filesystem;

const std::string kCluster =
    "cluster:\n  nodes: 1\n  gpus_per_node: 8\n"
    "  gpu: {peak: {bf16: 989.4 TFLOP/s}, memory: {capacity: 80 GiB, bandwidth: 3.35 TB/s}}\n"
    "  intra_node: {kind: nvswitch, bandwidth: 450 GB/s, latency: 1 us}\n";

class InputFileFaults : public symmesh::testing::ScenarioFileTest {
 protected:
  // A FIFO and a two-link loop in the test's folder.
  void SetUp() override {
    fifo_ = files_.dir() + "/fifo.json";
    ASSERT_EQ(mkfifo(fifo_.c_str(), 0600), 0);
    loop_ = files_.dir() + "/loop-a.json";
    fs::create_symlink("loop-b.json", loop_);
    fs::create_symlink("loop-a.json", files_.dir() + "/loop-b.json");
  }
  // The message loading `path` as a scenario throws.
  static std::string error_of_load(const std::string& path) {
    return symmesh::testing::error_of([&] { load_scenario(path); }).message();
  }
  std::string fifo_, loop_;
};

TEST_F(InputFileFaults, EachFaultHasOneMessage) {
  EXPECT_EQ(input_file_fault(fifo_),
            "'" + fifo_ + "' is not a regular file (a FIFO, a device or a socket)");
  EXPECT_EQ(input_file_fault("/dev/zero"),
            "'/dev/zero' is not a regular file (a FIFO, a device or a socket)");
  EXPECT_EQ(input_file_fault(loop_), "'" + loop_ + "' is a loop of symbolic links");
  EXPECT_EQ(input_file_fault(files_.dir()), "'" + files_.dir() + "' is a directory, not a file");
  EXPECT_EQ(input_file_fault(files_.dir() + "/absent.json"), "");
  // The same words from the scenario loader and from --gemm's reader.
  EXPECT_THAT(error_of_load(fifo_), HasSubstr("'" + fifo_ + "' is not a regular file (a FIFO"));
  EXPECT_THAT(error_of_load(loop_), HasSubstr("'" + loop_ + "' is a loop of symbolic links"));
  try {
    read_input_file(loop_, "--gemm");
    FAIL() << "no error";
  } catch (const InvalidArgument& e) {
    EXPECT_EQ(e.message(), "'" + loop_ + "' is a loop of symbolic links");
  }
}

TEST_F(InputFileFaults, AHuggingFaceConfigThatIsAFifoOrALoopIsSaidSoAtItsReference) {
  const std::string head = "version: 2\n" + kCluster + "mesh: {shape: [2, 4], names: [dp, tp]}\n";
  // Line 8, column 20: the hf_config value.
  auto e = load_error(head + "model: {hf_config: fifo.json, seq: 24}\n");
  EXPECT_EQ(e.where(), at(8, 20));
  EXPECT_THAT(e.message(), HasSubstr("Hugging Face config '" + fifo_ +
                                     "' is not a regular file (a FIFO, a device or a socket)"));
  EXPECT_THAT(e.message(), ::testing::Not(HasSubstr("not found")));
  e = load_error(head + "model: {hf_config: loop-a.json, seq: 24}\n");
  EXPECT_EQ(e.where(), at(8, 20));
  EXPECT_THAT(e.message(), HasSubstr("'" + loop_ + "' is a loop of symbolic links"));
}

TEST_F(InputFileFaults, AClusterFileThatIsAFifoOrALoopIsSaidSoAtItsReference) {
  const std::string tail = "mesh: [8]\nworkload: [{op: all_reduce, bytes: 1 MiB, mesh_dim: 0}]\n";
  auto e = load_error("cluster: fifo.json\n" + tail);
  EXPECT_EQ(e.where(), at(1, 10));
  EXPECT_THAT(e.message(), HasSubstr("cluster file '" + fifo_ + "' is not a regular file"));
  e = load_error("cluster: loop-a.json\n" + tail);
  EXPECT_THAT(e.message(), HasSubstr("cluster file '" + loop_ + "' is a loop of symbolic links"));
}

// A file past kMaxInputFileBytes (64 MiB; a sparse file here, so the disk holds nothing)
// is refused by every reader with the bound named, before any of it is parsed: as a
// scenario, as a cluster file a scenario names, and as --gemm's table.
TEST_F(InputFileFaults, AFileLargerThanTheBoundIsRefusedByEveryReader) {
  const std::string big = files_.dir() + "/big.yaml";
  ASSERT_EQ(truncate(files_.write("big.yaml", "").c_str(), kMaxInputFileBytes + 1), 0);
  const std::string said = "'" + big + "' holds more than 64 MiB, the most an input file may hold";
  EXPECT_THAT(error_of_load(big), HasSubstr(said));
  const auto e = load_error("cluster: big.yaml\nmesh: [8]\n"
                            "workload: [{op: all_reduce, bytes: 1 MiB, mesh_dim: 0}]\n");
  EXPECT_THAT(e.message(), HasSubstr(said));
  EXPECT_EQ(e.where(), at(1, 10));
  try {
    read_input_file(big, "--gemm");
    FAIL() << "no error";
  } catch (const InvalidArgument& x) {
    EXPECT_THAT(x.message(), HasSubstr(said));
    EXPECT_EQ(x.where(), "--gemm");
  }
  // At the bound exactly, a file is read (and then parsed: an empty YAML is no scenario).
  ASSERT_EQ(truncate(big.c_str(), kMaxInputFileBytes), 0);
  EXPECT_EQ(read_input_file(big, "--gemm").size(), static_cast<size_t>(kMaxInputFileBytes));
}

}  // namespace
