// Megatron-LM's pipeline orders (strategies/pipeline_schedule.hpp), written out by hand from
// the rules of megatron/core/pipeline_parallel/schedules.py and Narayanan et al. (SC'21,
// Figure 4), and the split of layers into model chunks.
#include "strategies/pipeline_schedule.hpp"

#include <gtest/gtest.h>

#include <set>
#include <string>
#include <tuple>

#include "core/errors.hpp"

namespace symmesh::strategies {
namespace {

// "F0" is micro-batch 0's forward; "B1.c1" micro-batch 1's backward of chunk 1.
std::string text(const std::vector<PipelineTask>& order, bool chunks) {
  std::string out;
  for (const PipelineTask& t : order) {
    if (!out.empty()) out += " ";
    out += (t.forward ? "F" : "B") + std::to_string(t.micro_batch);
    if (chunks) out += ".c" + std::to_string(t.chunk);
  }
  return out;
}

TEST(PipelineSchedule, OneF1BWarmsUpByTheStagesAfter) {
  // 4 stages, 6 micro-batches: stage s warms up with 3 - s forwards, then alternates.
  EXPECT_EQ(text(stage_schedule(4, 6, 1, 0), false), "F0 F1 F2 F3 B0 F4 B1 F5 B2 B3 B4 B5");
  EXPECT_EQ(text(stage_schedule(4, 6, 1, 2), false), "F0 F1 B0 F2 B1 F3 B2 F4 B3 F5 B4 B5");
  EXPECT_EQ(text(stage_schedule(4, 6, 1, 3), false), "F0 B0 F1 B1 F2 B2 F3 B3 F4 B4 F5 B5");
  // Fewer micro-batches than the warm-up: every forward, then every backward.
  EXPECT_EQ(text(stage_schedule(4, 2, 1, 0), false), "F0 F1 B0 B1");
}

TEST(PipelineSchedule, InterleavedRunsGroupsOfStagesPerChunk) {
  // 2 stages, 2 chunks, 4 micro-batches. Virtual micro-batch k: group k / 4, chunk
  // (k % 4) / 2, micro-batch (k / 4)·2 + k % 2; backwards count chunks from the last.
  // Stage 0 warms up with (2 - 0 - 1)·2 + (2 - 1)·2 = 4 forwards, stage 1 with 2.
  EXPECT_EQ(text(stage_schedule(2, 4, 2, 0), true),
            "F0.c0 F1.c0 F0.c1 F1.c1 "
            "F2.c0 B0.c1 F3.c0 B1.c1 F2.c1 B0.c0 F3.c1 B1.c0 "
            "B2.c1 B3.c1 B2.c0 B3.c0");
  EXPECT_EQ(text(stage_schedule(2, 4, 2, 1), true),
            "F0.c0 F1.c0 "
            "F0.c1 B0.c1 F1.c1 B1.c1 F2.c0 B0.c0 F3.c0 B1.c0 F2.c1 B2.c1 F3.c1 B3.c1 "
            "B2.c0 B3.c0");
  // As many micro-batches as stages: every forward first (Megatron's all-warm-up case).
  EXPECT_EQ(text(stage_schedule(2, 2, 2, 1), true),
            "F0.c0 F1.c0 F0.c1 F1.c1 B0.c1 B1.c1 B0.c0 B1.c0");
}

TEST(PipelineSchedule, EveryTaskOnceAndEachBackwardAfterItsForward) {
  for (int p : {1, 2, 3, 4, 8})
    for (int v : {1, 2, 4})
      for (int64_t m : {int64_t{p}, int64_t{2} * p, int64_t{3} * p + (v == 1 ? 1 : 0)}) {
        if (v > 1 && m % p != 0) continue;
        for (int s = 0; s < p; ++s) {
          const auto order = stage_schedule(p, m, v, s);
          ASSERT_EQ(order.size(), static_cast<size_t>(2 * m * v));
          std::set<std::tuple<bool, int64_t, int>> seen;
          for (const PipelineTask& t : order) {
            ASSERT_TRUE(t.micro_batch >= 0 && t.micro_batch < m && t.chunk >= 0 && t.chunk < v);
            if (!t.forward)
              ASSERT_TRUE(seen.count({true, t.micro_batch, t.chunk}))
                  << "p " << p << " v " << v << " m " << m << " stage " << s;
            ASSERT_TRUE(seen.insert({t.forward, t.micro_batch, t.chunk}).second);
          }
        }
      }
}

TEST(PipelineSchedule, RefusesWhatMegatronRefuses) {
  EXPECT_THROW(stage_schedule(4, 6, 2, 0), InvalidArgument);  // m not a multiple of p
  EXPECT_THROW(stage_schedule(4, 8, 1, 4), InvalidArgument);  // no stage 4
  EXPECT_THROW(stage_schedule(0, 8, 1, 0), InvalidArgument);
  EXPECT_THROW(stage_schedule(4, 0, 1, 0), InvalidArgument);
}

}  // namespace
}  // namespace symmesh::strategies
