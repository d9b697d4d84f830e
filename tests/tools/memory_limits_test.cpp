// The host-memory guard under the limits a user or a batch system sets, run as the user
// would: `prlimit --as` (RLIMIT_AS). A 512-GPU simulation reserves 1,024 SimGrid actor
// stacks of 8 MiB (8.6 GB of address space) before it allocates much memory; under a
// 1 GB address-space limit it used to abort inside SimGrid ("Failed to allocate stack",
// a backtrace, signal 6). It must be refused up front, exit 2, with the figures.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "tests/sanitizers.hpp"
#include "tests/tools/sweep_test_support.hpp"

namespace {

using namespace symmesh::testing;
using ::testing::HasSubstr;

TEST(MemoryLimits, AnAddressSpaceLimitRefusesWhatCannotStart) {
  if (kAddressSanitizer)
    GTEST_SKIP() << "AddressSanitizer reserves terabytes of shadow memory: it cannot run under "
                    "a 1 GB address-space limit at all";
  if (std::system("command -v prlimit >/dev/null 2>&1") != 0) GTEST_SKIP() << "no prlimit";
  const std::string scenario = all_reduce_scenario("address_space", 1, 64);  // 512 GPUs
  const auto r = run_symmesh("simulate " + scenario, "prlimit --as=1000000000");
  EXPECT_EQ(r.exit_code, 2) << r.err;
  // 512 anchors + 512 streams = 1,024 actors x 8,388,608 B = 8.6 GB.
  EXPECT_THAT(r.err, HasSubstr("of address space to simulate"));
  EXPECT_THAT(r.err, HasSubstr("8.6 GB of SimGrid actor stacks"));
  EXPECT_THAT(r.err, HasSubstr("address-space limit (RLIMIT_AS) 1.0 GB"));
  EXPECT_THAT(r.err, ::testing::Not(HasSubstr("Backtrace")));
  EXPECT_TRUE(r.out.empty());
  // validate refuses it too, with the same words (one validation path).
  const auto v = run_symmesh("validate " + scenario, "prlimit --as=1000000000");
  EXPECT_EQ(v.exit_code, 2);
  EXPECT_EQ(v.err, r.err);
  // The same scenario on 32 GPUs fits (64 actors: 537 MB of stacks) and runs.
  const std::string small = all_reduce_scenario("address_space_small", 1, 4);  // 32 GPUs
  const auto ok = run_symmesh("simulate " + small, "prlimit --as=1073741824");
  EXPECT_EQ(ok.exit_code, 0) << ok.err;
}

}  // namespace
