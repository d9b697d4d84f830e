// Zero-size dims and 0-d tensors, as PyTorch accepts them: `[]` is a 0-d tensor (a bias
// given, not a bias left out), a 0 a dim with no elements; a negative size is refused.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <string>

#include "core/errors.hpp"
#include "scenario/scenario_loader.hpp"

namespace symmesh {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::IsEmpty;

const std::string kHead =
    "cluster:\n  nodes: 1\n  gpus_per_node: 4\n"
    "  gpu: {peak: {bf16: 989.4 TFLOP/s}, memory: {capacity: 80 GiB, bandwidth: 3.35 TB/s}}\n"
    "  intra_node: {kind: nvswitch, bandwidth: 450 GB/s, latency: 1 us}\n"
    "mesh: [4]\n";

TEST(ZeroSizeShapes, VersionOneReadsAZeroDimBiasAsGivenAndZeroSizeDims) {
  const Scenario s = load_scenario_text(
      kHead +
          "workload:\n"
          "  - {name: p, op: addmm, bias: [], a: [0, 8], b: \"8x0\", bias_placements: [R],\n"
          "     a_placements: [R], b_placements: [R]}\n"
          "  - {name: q, op: mm, a: [4, 8], b: [8, 4], a_placements: [R], b_placements: [R]}\n",
      "zero.yaml");
  ASSERT_TRUE(s.workload[0].bias.has_value());
  EXPECT_THAT(*s.workload[0].bias, IsEmpty());
  EXPECT_THAT(s.workload[0].a, ElementsAre(0, 8));
  EXPECT_THAT(s.workload[0].b, ElementsAre(8, 0));
  EXPECT_FALSE(s.workload[1].bias.has_value());  // mm: no bias, not a 0-d one
}

TEST(ZeroSizeShapes, VersionTwoTellsAZeroDimParameterFromAnOutputByItsShapeKey) {
  const Scenario s =
      load_scenario_text("version: 2\n" + kHead +
                             "tensors:\n"
                             "  x: {shape: [0, 8], placements: [\"S(0)\"]}\n"
                             "  w: {shape: [8, 4], parameter: true}\n"
                             "  c: {shape: [], parameter: true}\n"
                             "  y: {placements: [R]}\n"
                             "workload:\n"
                             "  - {name: p, op: addmm, bias: c, a: x, b: w, output: y}\n",
                         "zero2.yaml");
  EXPECT_EQ(s.tensors[2].role, TensorDecl::Role::parameter);
  EXPECT_THAT(s.tensors[2].shape, IsEmpty());
  EXPECT_EQ(s.tensors[3].role, TensorDecl::Role::output);
  ASSERT_TRUE(s.workload[0].bias.has_value());
  EXPECT_THAT(*s.workload[0].bias, IsEmpty());
}

TEST(ZeroSizeShapes, NegativeSizesAreRefusedAtTheItem) {
  try {
    load_scenario_text(kHead +
                           "workload:\n"
                           "  - {name: p, op: mm, a: [4, -8], b: [8, 4], a_placements: [R], "
                           "b_placements: [R]}\n",
                       "negative.yaml");
    FAIL() << "a negative size was accepted";
  } catch (const InvalidArgument& e) {
    // Line 8 (six of cluster and mesh, then workload:); "  - {name: p, op: mm, a: [4, "
    // is 29 characters, so -8 starts at column 30.
    EXPECT_EQ(e.where(), "negative.yaml:8:30");
    EXPECT_THAT(e.message(), HasSubstr("expected a list of sizes >= 0"));
    EXPECT_THAT(e.message(), HasSubstr("got '-8'"));
  }
}

}  // namespace
}  // namespace symmesh
