// The cap on a workload's op count (scenario/workload_reader.cpp): bad input is refused
// before work proportional to it starts, with the cap and how to raise it.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cstdlib>
#include <string>

#include "core/errors.hpp"
#include "scenario/scenario_loader.hpp"

namespace symmesh {
namespace {

using ::testing::HasSubstr;

// n put_signal ops on one 8-GPU node.
std::string puts_scenario(int n) {
  std::string yaml =
      "cluster:\n  nodes: 1\n  gpus_per_node: 8\n"
      "  gpu: {peak: {bf16: 989.4 TFLOP/s}, memory: {capacity: 80 GiB, bandwidth: 3.35 TB/s}}\n"
      "  intra_node: {kind: nvswitch, bandwidth: 450 GB/s, latency: 1 us}\n"
      "mesh: [8]\nworkload:\n";
  for (int i = 0; i < n; ++i)
    yaml +=
        "  - {name: p" + std::to_string(i) + ", op: put_signal, bytes: 1 KiB, src: 0, dst: 1}\n";
  return yaml;
}

// Sets SYMMESH_MAX_OPS for one test; the default again afterwards.
struct MaxOps {
  explicit MaxOps(const char* value) { setenv("SYMMESH_MAX_OPS", value, 1); }
  ~MaxOps() { unsetenv("SYMMESH_MAX_OPS"); }
};

TEST(WorkloadCaps, MoreOpsThanTheCapAreRefusedNamingTheCapAndHowToRaiseIt) {
  const MaxOps cap("3");
  EXPECT_EQ(load_scenario_text(puts_scenario(3), "three.yaml").workload.size(), 3u);
  try {
    load_scenario_text(puts_scenario(4), "four.yaml");
    FAIL() << "4 ops over a cap of 3 must be refused";
  } catch (const InvalidArgument& e) {
    EXPECT_THAT(e.what(), HasSubstr("four.yaml:8:3"));  // the list: its first "- " item
    EXPECT_THAT(e.what(), HasSubstr("4 ops, more than the 3 symmesh reads"));
    EXPECT_THAT(e.what(), HasSubstr("set SYMMESH_MAX_OPS to raise the cap"));
  }
}

TEST(WorkloadCaps, TheDefaultCapIs200000AndABadSettingIsNamed) {
  unsetenv("SYMMESH_MAX_OPS");
  EXPECT_EQ(load_scenario_text(puts_scenario(10), "ten.yaml").workload.size(), 10u);
  const MaxOps bad("lots");
  try {
    load_scenario_text(puts_scenario(1), "one.yaml");
    FAIL() << "a cap that is not a number must be refused";
  } catch (const InvalidArgument& e) {
    EXPECT_THAT(e.what(), HasSubstr("SYMMESH_MAX_OPS"));
    EXPECT_THAT(e.what(), HasSubstr("expected a whole number >= 1, got 'lots'"));
  }
}

}  // namespace
}  // namespace symmesh
