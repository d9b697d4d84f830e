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

}  // namespace
}  // namespace symmesh::evaluation
