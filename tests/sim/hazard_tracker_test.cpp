// The overwrite-hazard rule on its own (sim/hazard_tracker.hpp).
#include "sim/hazard_tracker.hpp"

#include <gtest/gtest.h>

namespace symmesh::sim {
namespace {

TEST(HazardTracker, OverlapWithUnconsumedBytesIsAHazard) {
  HazardTracker t;
  EXPECT_TRUE(t.on_delivery(1, 7, 0, 1, 0, 100, "a", 0.0).empty());
  EXPECT_TRUE(t.on_delivery(1, 7, 0, 2, 100, 200, "b", 0.0).empty());  // adjacent: fine
  const auto h = t.on_delivery(1, 7, 2, 1, 50, 150, "c", 1.0);
  ASSERT_EQ(h.size(), 2u);  // overlaps both earlier puts
  EXPECT_EQ(h[0].begin_bytes, 50);
  EXPECT_EQ(h[0].end_bytes, 100);
  EXPECT_EQ(h[0].earlier_label, "a");
  EXPECT_EQ(h[1].begin_bytes, 100);
  EXPECT_EQ(h[1].end_bytes, 150);
  EXPECT_EQ(h[1].earlier_sender, 0);
  EXPECT_EQ(h[1].later_sender, 2);
}

TEST(HazardTracker, AWaitConsumesThatSendersPutsUpToItsCredit) {
  HazardTracker t;
  t.on_delivery(1, 7, 0, 1, 0, 100, "p1", 0.0);
  t.on_delivery(1, 7, 0, 2, 100, 200, "p2", 0.0);
  t.on_consumed(1, 7, 0, 1);  // consumes p1 only
  EXPECT_TRUE(t.on_delivery(1, 7, 0, 3, 0, 100, "p3", 0.0).empty());
  EXPECT_EQ(t.on_delivery(1, 7, 0, 4, 150, 160, "p4", 0.0).size(), 1u);  // p2 unconsumed
  t.on_consumed(1, 7, 3, 5);  // another sender's wait consumes nothing of sender 0's
  EXPECT_EQ(t.on_delivery(1, 7, 3, 1, 0, 10, "q", 0.0).size(), 1u);
}

TEST(HazardTracker, BuffersAndReceiversAreSeparate) {
  HazardTracker t;
  t.on_delivery(1, 7, 0, 1, 0, 100, "a", 0.0);
  EXPECT_TRUE(t.on_delivery(2, 7, 0, 1, 0, 100, "other receiver", 0.0).empty());
  EXPECT_TRUE(t.on_delivery(1, 8, 0, 1, 0, 100, "other buffer", 0.0).empty());
  EXPECT_TRUE(t.on_delivery(1, 7, 0, 2, 0, 0, "empty", 0.0).empty());
  t.on_free(1, 7);
  EXPECT_TRUE(t.on_delivery(1, 7, 0, 3, 0, 100, "after free", 0.0).empty());
}

}  // namespace
}  // namespace symmesh::sim
