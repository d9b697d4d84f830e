// The host memory guard's pieces: reading MemAvailable, the figures it prints, and the
// start / wait / skip decision, all with injected numbers (never this machine's memory).
#include "evaluation/host_memory.hpp"

#include <gtest/gtest.h>

namespace symmesh::evaluation {
namespace {

TEST(HostMemory, ParsesMemAvailableInKibibytes) {
  // A /proc/meminfo excerpt: 6062244 kB = 6062244 * 1024 = 6,207,737,856 bytes.
  const std::string text =
      "MemTotal:       16303904 kB\n"
      "MemFree:         1021916 kB\n"
      "MemAvailable:    6062244 kB\n"
      "Buffers:          212132 kB\n";
  EXPECT_EQ(parse_mem_available(text), std::optional<int64_t>(6207737856));
}

TEST(HostMemory, NoMemAvailableLineOrAMalformedOneIsUnknown) {
  EXPECT_EQ(parse_mem_available("MemTotal: 16303904 kB\nMemFree: 1021916 kB\n"), std::nullopt);
  EXPECT_EQ(parse_mem_available("MemAvailable: lots\n"), std::nullopt);
  EXPECT_EQ(parse_mem_available("MemAvailable: 12 MB\n"), std::nullopt);  // not the kB unit
  EXPECT_EQ(parse_mem_available(""), std::nullopt);
}

TEST(HostMemory, ThisMachineReportsSomeFigure) {
  // Linux always has /proc/meminfo or sysconf; only that a figure exists is checked.
  const auto memory = host_memory();
  ASSERT_TRUE(memory.has_value());
  EXPECT_GT(memory->available_bytes, 0);
}

TEST(HostMemory, GigabytesAreDecimalWithOneDecimal) {
  EXPECT_EQ(gigabytes_text(9'100'000'000), "9.1 GB");
  EXPECT_EQ(gigabytes_text(6'207'737'856), "6.2 GB");
  EXPECT_EQ(gigabytes_text(1'000'000'000), "1.0 GB");
  EXPECT_EQ(gigabytes_text(512'000'000), "512 MB");
}

TEST(HostMemory, AdmissionStartsWhatFitsWaitsForRoomAndSkipsWhatNeverFits) {
  const std::optional<HostMemory> six_gb = HostMemory{6'000'000'000, ""};
  // Alone and small enough: start.
  EXPECT_EQ(admit(4'000'000'000, 0, six_gb), Admission::start);
  // 2 GB running + 4 GB = 6 GB: exactly fits.
  EXPECT_EQ(admit(4'000'000'000, 2'000'000'000, six_gb), Admission::start);
  // 2.5 GB running + 4 GB = 6.5 GB > 6 GB: wait until the running point finishes.
  EXPECT_EQ(admit(4'000'000'000, 2'500'000'000, six_gb), Admission::wait);
  // 7 GB > 6 GB even alone: skip, whatever runs.
  EXPECT_EQ(admit(7'000'000'000, 0, six_gb), Admission::skip);
  EXPECT_EQ(admit(7'000'000'000, 1'000'000'000, six_gb), Admission::skip);
  // Unknown memory: no guard.
  EXPECT_EQ(admit(int64_t{1} << 60, int64_t{1} << 60, std::nullopt), Admission::start);
}

TEST(HostMemory, JobsTimesEstimateBeyondMemoryRunsFewerAtOnce) {
  // 8 jobs of 1.5 GB each in 6 GB: the 5th does not fit next to 4 running (7.5 GB > 6).
  const std::optional<HostMemory> six_gb = HostMemory{6'000'000'000, ""};
  int64_t committed = 0;
  int started = 0;
  while (admit(1'500'000'000, committed, six_gb) == Admission::start && started < 8) {
    committed += 1'500'000'000;
    ++started;
  }
  EXPECT_EQ(started, 4);
}

TEST(HostMemory, TheMessageGivesBothFiguresAndAFallbackSource) {
  EXPECT_EQ(not_enough_memory_text(9'100'000'000, {6'200'000'000, ""}, "to simulate"),
            "needs about 9.1 GB of host memory to simulate; 6.2 GB available");
  EXPECT_EQ(not_enough_memory_text(9'100'000'000,
                                   {16'000'000'000, "physical memory; /proc/meminfo unreadable"},
                                   "to emulate"),
            "needs about 9.1 GB of host memory to emulate; 16.0 GB available (physical memory; "
            "/proc/meminfo unreadable)");
}

TEST(HostMemory, ReadsTheLimitsOfProcAndCgroupFiles) {
  // /proc/self/status: "VmSize: 1048576 kB" = 1 GiB mapped.
  EXPECT_EQ(parse_vm_size("Name:\tsymmesh\nVmPeak:\t 2000000 kB\nVmSize:\t 1048576 kB\n"),
            std::optional<int64_t>(int64_t{1} << 30));
  EXPECT_EQ(parse_vm_size("VmRSS: 10 kB\n"), std::nullopt);
  // cgroup v2 memory.max: "max" is no limit; v1 writes 2^63 - 4096 (page-aligned LONG_MAX).
  EXPECT_EQ(parse_cgroup_limit("max\n"), std::nullopt);
  EXPECT_EQ(parse_cgroup_limit("2147483648\n"), std::optional<int64_t>(2147483648));
  EXPECT_EQ(parse_cgroup_limit("9223372036854771712\n"), std::nullopt);
  EXPECT_EQ(parse_cgroup_limit("lots"), std::nullopt);
  // /proc/self/cgroup: "0::PATH" is the v2 hierarchy; a v1 line lists its controllers.
  EXPECT_EQ(parse_cgroup_paths("0::/user.slice/session-1.scope\n"),
            (std::pair<std::string, std::string>{"/user.slice/session-1.scope", ""}));
  EXPECT_EQ(parse_cgroup_paths("5:cpu,cpuacct:/\n4:memory:/process_api/ab12\n0::/\n"),
            (std::pair<std::string, std::string>{"/", "/process_api/ab12"}));
  EXPECT_EQ(parse_cgroup_paths("3:cpuset:/\n"), (std::pair<std::string, std::string>{"", ""}));
}

TEST(HostMemory, TheTightestLimitIsTheOneThatCounts) {
  const auto t = tightest(
      {{23'000'000'000, ""}, {2'000'000'000, "cgroup memory.max"}, {4'000'000'000, "other"}});
  ASSERT_TRUE(t);
  EXPECT_EQ(t->available_bytes, 2'000'000'000);
  EXPECT_EQ(t->source, "cgroup memory.max");
  EXPECT_FALSE(tightest({}).has_value());
}

TEST(HostMemory, AnAddressSpaceLimitCountsReservedStacksPerProcess) {
  // 20 GB of memory but an address-space limit leaving 4 GB: a point needing 1 GB of memory
  // and reserving 8.6 GB of actor stacks (1,024 actors x 8 MiB) cannot start at all; one
  // reserving 2 GB can, and two such points fit side by side (each child process has its
  // own address space: the reservations are not summed).
  HostMemory memory{20'000'000'000, ""};
  memory.address_space_bytes = 4'000'000'000;
  memory.address_space_source = "address-space limit (RLIMIT_AS) 4.0 GB less 0 MB";
  const std::optional<HostMemory> limited = memory;
  const int64_t stacks = int64_t{1024} * (8 << 20);
  EXPECT_EQ(admit(1'000'000'000, 0, limited, stacks), Admission::skip);
  EXPECT_EQ(admit(1'000'000'000, 0, limited, 2'000'000'000), Admission::start);
  EXPECT_EQ(admit(1'000'000'000, 1'000'000'000, limited, 2'000'000'000), Admission::start);
  EXPECT_EQ(not_enough_memory_text(1'000'000'000, memory, "to simulate", stacks),
            "needs about 9.6 GB of address space to simulate (1.0 GB of memory and 8.6 GB of "
            "SimGrid actor stacks); 4.0 GB available (address-space limit (RLIMIT_AS) 4.0 GB "
            "less 0 MB)");
  // Memory itself short: the usual message.
  EXPECT_EQ(not_enough_memory_text(30'000'000'000, memory, "to simulate", stacks),
            "needs about 30.0 GB of host memory to simulate; 20.0 GB available");
}

}  // namespace
}  // namespace symmesh::evaluation
