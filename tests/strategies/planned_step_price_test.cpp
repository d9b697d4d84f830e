// The planned step priced through its pipeline schedule (strategies/planned_step_price.hpp),
// on hand-built steps whose times are closed forms of the schedule: Narayanan et al. (SC'21,
// §2.2) for 1F1B and the interleaved schedule, and sums worked in the comments.
#include "strategies/planned_step_price.hpp"

#include <gtest/gtest.h>

#include <vector>

#include "core/errors.hpp"

namespace symmesh::strategies {
namespace {

// One op per (stage, chunk, direction): forward f_us, backward b_us.
std::vector<ScheduledOp> uniform_stages(int stages, int chunks, double f_us, double b_us) {
  std::vector<ScheduledOp> ops;
  for (int s = 0; s < stages; ++s)
    for (int c = 0; c < chunks; ++c) {
      ScheduledOp f;
      f.stage = s, f.chunk = c, f.forward = true, f.timing.main_us = f_us;
      f.timing.compute_us = f_us;
      ScheduledOp b = f;
      b.forward = false, b.timing.main_us = b.timing.compute_us = b_us;
      ops.push_back(f);
      ops.push_back(b);
    }
  return ops;
}

// The sends of a chain of stages: model chunk k = c·p + s feeds chunk k + 1 forward and is
// fed by it backward (the forward op of chunk k at index 2·(s·v + c), its backward next).
std::vector<ScheduledTransfer> chain(int stages, int chunks, double us) {
  std::vector<ScheduledTransfer> out;
  const auto index = [&](int s, int c, bool forward) { return 2 * (s * chunks + c) + !forward; };
  for (int k = 0; k + 1 < stages * chunks; ++k) {
    const int s = k % stages, c = k / stages;
    const int s1 = (k + 1) % stages, c1 = (k + 1) / stages;
    out.push_back({index(s, c, true), s1, c1, true, us});
    out.push_back({index(s1, c1, false), s, c, false, us});
  }
  return out;
}

TEST(PlannedStepPrice, OneF1BTakesMPlusPMinusOneSlots) {
  // p = 4 equal stages, m = 8: (m + p - 1)(F + B) = 11 x (2 + 4) = 66 us.
  const PlannedStepPrice price =
      price_schedule(uniform_stages(4, 1, 2, 4), chain(4, 1, 0), 4, 8, 1);
  EXPECT_DOUBLE_EQ(price.pipeline_us, 66);
  EXPECT_DOUBLE_EQ(price.step_us, 66);
  // Stage 0 ends last; it idles (p - 1)(F + B) = 18 us of the 66.
  EXPECT_EQ(price.last_stage, 0);
  EXPECT_DOUBLE_EQ(price.bubble_us, 18);
  EXPECT_DOUBLE_EQ(price.stage_forward_us[2], 2);
  EXPECT_DOUBLE_EQ(price.stage_backward_us[2], 4);
}

TEST(PlannedStepPrice, InterleavingShrinksTheBubbleByTheChunks) {
  // p = 4, v = 2 chunks of f = 1, b = 2 us (a stage's F = 2, B = 4), m = 8:
  // (m + (p - 1)/v)(F + B) = (8 + 1.5) x 6 = 57 us.
  const PlannedStepPrice price =
      price_schedule(uniform_stages(4, 2, 1, 2), chain(4, 2, 0), 4, 8, 2);
  EXPECT_DOUBLE_EQ(price.pipeline_us, 57);
}

TEST(PlannedStepPrice, OneMicroBatchCrossesEveryHopTwice) {
  // m = 1 through p = 3 stages with t = 0.5 us a send: 3F + 2t forward, 3B + 2t back:
  // 3 x (2 + 4) + 4 x 0.5 = 20 us.
  const PlannedStepPrice price =
      price_schedule(uniform_stages(3, 1, 2, 4), chain(3, 1, 0.5), 3, 1, 1);
  EXPECT_DOUBLE_EQ(price.step_us, 20);
}

TEST(PlannedStepPrice, ASendWaitsForTheSendsBeforeIt) {
  // Two tensors leave stage 0's forward (one op each, 1 us), each taking 3 us to send on
  // the one send stream: the second arrives at 2 + 3 + 3 = 8 us; stage 1's forward (1 us)
  // and backward (1 us) follow: 10 us; stage 0's backward (2 x 1 us) waits for nothing
  // sent back (none is), so stage 1 ends the step.
  std::vector<ScheduledOp> ops(6);
  for (int i = 0; i < 6; ++i) {
    ops[i].stage = i < 4 ? 0 : 1;
    ops[i].forward = i < 2 || i == 4;
    ops[i].timing.main_us = 1;
  }
  const std::vector<ScheduledTransfer> sends{{0, 1, 0, true, 3}, {1, 1, 0, true, 3}};
  const PlannedStepPrice price = price_schedule(ops, sends, 2, 1, 1);
  EXPECT_DOUBLE_EQ(price.step_us, 10);
  EXPECT_EQ(price.last_stage, 1);
}

TEST(PlannedStepPrice, TheLastMicroBatchReducesAndUpdatesOnce) {
  // One stage, m = 3: forward 1 us, backward 2 us whose gradient takes 10 us to reduce
  // (on links the main stream does not use) and 0.5 us to update. The first two
  // micro-batches take 3 us each; the last's backward ends at 9 us, its reduction at 19 us,
  // the update at 19.5 us. A 1 us ZeRO gather before the forward's first reader delays the
  // first micro-batch by 1 us: 20.5 us.
  std::vector<ScheduledOp> ops(2);
  ops[0].timing.main_us = 1;
  ops[1].forward = false;
  ops[1].timing.main_us = 2;
  ops[1].timing.reduction_us = 10;
  ops[1].timing.update_us = 0.5;
  EXPECT_DOUBLE_EQ(price_schedule(ops, {}, 1, 3, 1).step_us, 19.5);
  EXPECT_DOUBLE_EQ(price_schedule(ops, {}, 1, 3, 1).exposed_comm_us, 10);
  ops[0].gather_link_us[1] = 1;
  EXPECT_DOUBLE_EQ(price_schedule(ops, {}, 1, 3, 1).step_us, 20.5);
}

TEST(PlannedStepPrice, ZeroThreeGathersEachUnitWhileTheOneBeforeRuns) {
  // One stage, one micro-batch, three forward ops reading gathered weights (ZeRO-3): A and
  // B of one unit (a layer), C of the next. A (main 10 us, gather 4 us): its unit is the
  // task's first, so its gather runs from the task's start, 0..4, and A runs 4..14. B (main
  // 10, gather 15), same unit: its gather queues behind A's, 4..19, and B runs 19..29. C
  // (main 10, gather 5), the next unit: its gathers may start once A, its unit's first op,
  // has started (4), and the comm stream is free at 19: 19..24, in before B ends; C runs
  // 29..39. With C's gather at 12 us instead: 19..31, and C runs 31..41.
  std::vector<ScheduledOp> ops(3);
  for (ScheduledOp& op : ops) op.timing.main_us = op.timing.compute_us = 10;
  ops[0].timing.gather_link_us[1] = 4;
  ops[1].timing.gather_link_us[1] = 15;
  ops[2].timing.gather_link_us[1] = 5;
  ops[0].timing.gather_unit = ops[1].timing.gather_unit = 0;
  ops[2].timing.gather_unit = 1;
  EXPECT_DOUBLE_EQ(price_schedule(ops, {}, 1, 1, 1).step_us, 39);
  ops[2].timing.gather_link_us[1] = 12;
  EXPECT_DOUBLE_EQ(price_schedule(ops, {}, 1, 1, 1).step_us, 41);
}

TEST(PlannedStepPrice, ZeroThreeReducesEveryMicroBatch) {
  // One stage, m = 2: a forward op of 10 us and a backward op of 10 us whose gradient's
  // reduce-scatter takes 30 us on the comm stream. Reduced once (ZeRO-1 and 2), in the last
  // micro-batch: the main stream runs 0..40 and the reduction 40..70. Reduced in every
  // micro-batch (ZeRO-3): micro-batch 0's runs 20..50 while the main stream goes on, and
  // micro-batch 1's queues behind it, 50..80; the update (2 us) runs once, after both.
  std::vector<ScheduledOp> ops(2);
  ops[0].timing.main_us = ops[0].timing.compute_us = 10;
  ops[1].forward = false;
  ops[1].timing.main_us = ops[1].timing.compute_us = 10;
  ops[1].timing.reduction_us = ops[1].timing.reduction_link_us[1] = 30;
  ops[1].timing.reduction_links = 2;
  ops[1].timing.update_us = 2;
  EXPECT_DOUBLE_EQ(price_schedule(ops, {}, 1, 2, 1).step_us, 72);
  const PlannedStepPrice every =
      price_schedule(ops, {}, 1, 2, 1, /*reduce_every_micro_batch=*/true);
  EXPECT_DOUBLE_EQ(every.step_us, 82);
  EXPECT_DOUBLE_EQ(every.exposed_comm_us, 40);
}

TEST(PlannedStepPrice, RefusesWhatTheScheduleCannotRun) {
  const auto ops = uniform_stages(2, 1, 1, 1);
  EXPECT_THROW(price_schedule(ops, {}, 0, 1, 1), InvalidArgument);
  EXPECT_THROW(price_schedule(ops, {}, 1, 1, 1), InvalidArgument);  // stage 1 of 1
  EXPECT_THROW(price_schedule(ops, {{7, 1, 0, true, 0}}, 2, 1, 1), InvalidArgument);
  EXPECT_THROW(price_schedule(uniform_stages(2, 2, 1, 1), {}, 2, 3, 2), InvalidArgument);
  // Stage 1's forward reads stage 0's, whose forward reads what stage 1's backward sends:
  // the schedule waits on itself.
  EXPECT_THROW(price_schedule(ops, {{0, 1, 0, true, 0}, {3, 0, 0, true, 0}}, 2, 1, 1), Error);
}

}  // namespace
}  // namespace symmesh::strategies
