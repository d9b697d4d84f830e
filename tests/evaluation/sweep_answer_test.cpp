// The objective's answer on hand-made points: fewest GPUs first, then the fastest, then
// sweep order; a budget is met when the time is at most max_time; nobody meeting it gives
// the fastest point and its miss; no objective gives the fastest per GPU count.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "evaluation/sweep_answer.hpp"

namespace {

using namespace symmesh::evaluation;
using ::testing::ElementsAre;
using ::testing::HasSubstr;

SweepPoint point(int nodes, std::vector<int> mesh, double time_s) {
  SweepPoint p;
  p.nodes = nodes;
  p.gpus = int64_t{nodes} * 8;
  p.mesh = std::move(mesh);
  p.report.total_time_s = time_s;
  return p;
}

SweepPoint skipped(int nodes, std::vector<int> mesh) {
  SweepPoint p = point(nodes, std::move(mesh), 0);
  p.skip_reason = "does not fit";
  return p;
}

TEST(SweepAnswer, SmallestClusterMeetingTheBudgetThenFastestThenSweepOrder) {
  const std::vector<SweepPoint> points{
      point(1, {1, 8}, 12e-3), point(1, {2, 4}, 11e-3),  // 8 GPUs: both miss 10 ms
      point(2, {2, 8}, 9e-3),  point(2, {4, 4}, 8e-3),   // 16 GPUs: both meet; 4x4 faster
      point(2, {8, 2}, 8e-3),                            // a tie: the earlier wins
      point(4, {4, 8}, 2e-3)};                           // faster, but bigger
  const auto a = answer_sweep(points, 10e-3);
  ASSERT_TRUE(a.best);
  EXPECT_EQ(*a.best, 3u);
  EXPECT_TRUE(a.met);
  EXPECT_EQ(a.meeting, 4);
  EXPECT_EQ(a.simulated, 6);
  EXPECT_THAT(answer_text(a, points, {"dp", "tp"}),
              HasSubstr("Answer: 2 nodes (16 GPUs), mesh 4x4 (dp,tp) meets the 10 ms objective: "
                        "8 ms per step (4 of 6 points meet it)."));
}

TEST(SweepAnswer, ExactlyTheBudgetMeetsIt) {
  const std::vector<SweepPoint> points{point(1, {8}, 10e-3)};
  EXPECT_TRUE(answer_sweep(points, 10e-3).met);
  EXPECT_FALSE(answer_sweep(points, 9.999e-3).met);
}

TEST(SweepAnswer, NobodyMeetingItGivesTheFastestAndTheMiss) {
  const std::vector<SweepPoint> points{point(1, {8}, 30e-3), point(2, {16}, 15e-3),
                                       point(4, {32}, 15e-3)};
  const auto a = answer_sweep(points, 10e-3);
  ASSERT_TRUE(a.best);
  EXPECT_EQ(*a.best, 1u);  // as fast as 4 nodes, with fewer GPUs
  EXPECT_FALSE(a.met);
  EXPECT_NEAR(a.miss_s, 5e-3, 1e-15);
  EXPECT_NEAR(a.miss_percent, 50, 1e-9);
  EXPECT_THAT(answer_text(a, points, {}),
              HasSubstr("no point meets the 10 ms objective; the fastest, 2 nodes (16 GPUs), "
                        "mesh 16, takes 15 ms per step: 5 ms (50.0%) over."));
}

TEST(SweepAnswer, WithoutObjectiveTheFastestPerGpuCount) {
  const std::vector<SweepPoint> points{point(2, {2, 8}, 5e-3), point(2, {16, 1}, 4e-3),
                                       point(1, {1, 8}, 6e-3), skipped(4, {4, 8})};
  const auto a = answer_sweep(points, std::nullopt);
  EXPECT_THAT(a.fastest_per_gpu_count, ElementsAre(2u, 1u));  // 8 GPUs, then 16
  ASSERT_TRUE(a.best);
  EXPECT_EQ(*a.best, 1u);
  EXPECT_EQ(a.skipped, 1);
  EXPECT_FALSE(a.met);
  EXPECT_FALSE(meets_objective(points[1], std::nullopt));
}

TEST(SweepAnswer, SkippedPointsNeverAnswer) {
  const std::vector<SweepPoint> points{skipped(1, {8}), point(2, {16}, 1e-3)};
  const auto a = answer_sweep(points, 10e-3);
  ASSERT_TRUE(a.best);
  EXPECT_EQ(*a.best, 1u);
  const std::vector<SweepPoint> none{skipped(1, {8})};
  EXPECT_FALSE(answer_sweep(none, 10e-3).best);
}

TEST(SweepAnswer, TimesInTheirNaturalUnit) {
  EXPECT_EQ(format_time(9.5e-6), "9.5 us");
  EXPECT_EQ(format_time(12.345e-3), "12.35 ms");
  EXPECT_EQ(format_time(1.5), "1.5 s");
}

}  // namespace
