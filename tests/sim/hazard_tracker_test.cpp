// The overwrite-hazard rule on its own (sim/hazard_tracker.hpp).
#include "sim/hazard_tracker.hpp"

#include <gtest/gtest.h>

#include <map>

namespace symmesh::sim {
namespace {

// Drives a HazardTracker the way the simulator does: one PendingPuts per signal pair.
struct Harness {
  HazardTracker tracker;
  std::map<std::tuple<int, int, int>, PendingPuts> pending;  // (handle, sender, receiver)
  std::map<std::tuple<int, int, int>, int64_t> delivered;
  std::vector<std::string> labels{"a", "b", "c", "d", "e", "f"};
  size_t next_label = 0;

  std::vector<Hazard> put(int receiver, int handle, int sender, int64_t begin, int64_t end) {
    const auto k = std::make_tuple(handle, sender, receiver);
    return tracker.on_delivery(receiver, handle, sender, ++delivered[k], begin, end,
                               &labels[next_label++ % labels.size()], 0.0, pending[k]);
  }
  void consume(int receiver, int handle, int sender, int64_t credit) {
    tracker.on_consumed(credit, pending[std::make_tuple(handle, sender, receiver)]);
  }
};

TEST(HazardTracker, OneCounterConsumesItsPutsInEveryBufferOfTheGroup) {
  // NCCL's counters are per (group, sender → receiver): puts into buffers 7 and 8 are
  // signals 1 and 2 of one counter. Consuming credit 1 frees only buffer 7's bytes; a put
  // over buffer 8's bytes is then still a hazard; credit 2 frees them.
  HazardTracker tracker;
  PendingPuts counter;
  const std::string a = "a", b = "b", c = "c", d = "d";
  EXPECT_TRUE(tracker.on_delivery(1, 7, 0, 1, 0, 64, &a, 0.0, counter).empty());
  EXPECT_TRUE(tracker.on_delivery(1, 8, 0, 2, 0, 64, &b, 0.0, counter).empty());
  tracker.on_consumed(1, counter);
  PendingPuts other;  // another sender's counter
  EXPECT_TRUE(tracker.on_delivery(1, 7, 2, 1, 0, 64, &c, 0.0, other).empty());
  const auto h = tracker.on_delivery(1, 8, 2, 2, 32, 64, &d, 0.0, other);
  ASSERT_EQ(h.size(), 1u);
  EXPECT_EQ(h[0].handle, 8);
  EXPECT_EQ(h[0].earlier_label, "b");
  EXPECT_EQ(h[0].begin_bytes, 32);
  tracker.on_consumed(2, counter);
  tracker.on_consumed(2, other);
  EXPECT_TRUE(counter.empty());
  EXPECT_TRUE(other.empty());
}

TEST(HazardTracker, OverlapWithUnconsumedBytesIsAHazard) {
  Harness t;
  EXPECT_TRUE(t.put(1, 7, 0, 0, 100).empty());    // "a"
  EXPECT_TRUE(t.put(1, 7, 0, 100, 200).empty());  // "b", adjacent: fine
  const auto h = t.put(1, 7, 2, 50, 150);         // "c" overlaps both
  ASSERT_EQ(h.size(), 2u);
  EXPECT_EQ(h[0].begin_bytes, 50);
  EXPECT_EQ(h[0].end_bytes, 100);
  EXPECT_EQ(h[0].earlier_label, "a");
  EXPECT_EQ(h[0].later_label, "c");
  EXPECT_EQ(h[1].begin_bytes, 100);
  EXPECT_EQ(h[1].end_bytes, 150);
  EXPECT_EQ(h[1].earlier_sender, 0);
  EXPECT_EQ(h[1].later_sender, 2);
}

TEST(HazardTracker, AWaitConsumesThatSendersPutsUpToItsCredit) {
  Harness t;
  t.put(1, 7, 0, 0, 100);
  t.put(1, 7, 0, 100, 200);
  t.consume(1, 7, 0, 1);  // consumes the first put only
  EXPECT_TRUE(t.put(1, 7, 0, 0, 100).empty());
  EXPECT_EQ(t.put(1, 7, 0, 150, 160).size(), 1u);  // the second is still unconsumed
  t.consume(1, 7, 3, 5);  // another sender's wait consumes nothing of sender 0's
  EXPECT_EQ(t.put(1, 7, 3, 0, 10).size(), 1u);
}

TEST(HazardTracker, BuffersAndReceiversAreSeparate) {
  Harness t;
  t.put(1, 7, 0, 0, 100);
  EXPECT_TRUE(t.put(2, 7, 0, 0, 100).empty());  // other receiver
  EXPECT_TRUE(t.put(1, 8, 0, 0, 100).empty());  // other buffer
  EXPECT_TRUE(t.put(1, 7, 0, 0, 0).empty());    // empty put
  t.tracker.on_free(1, 7);
  EXPECT_TRUE(t.put(1, 7, 0, 0, 100).empty());
}

TEST(HazardTracker, ManyConsumedPutsLeaveNothingBehind) {
  Harness t;
  for (int i = 0; i < 1000; ++i) {
    EXPECT_TRUE(t.put(1, 7, 0, 0, 64).empty()) << i;
    t.consume(1, 7, 0, i + 1);
  }
  EXPECT_TRUE(t.pending[std::make_tuple(7, 0, 1)].empty());
}

}  // namespace
}  // namespace symmesh::sim
