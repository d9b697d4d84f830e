// RunResult::label_spans: the per-op summary the simulation process computes (so sweeps
// need no timeline). Checked against a closed form and against the same figures derived
// here from the recorded timeline, and shown to be identical with the timeline off.
#include <gtest/gtest.h>

#include <algorithm>
#include <map>

#include "core/label_spans.hpp"
#include "sim/forked_run.hpp"
#include "sim_test_support.hpp"

namespace symmesh::sim {
namespace {

using namespace testing;

constexpr int64_t kBytes = int64_t{1} << 20;

// Rank 0 puts 1 MiB to rank 1 ("xfer", comm); rank 1 waits for it, then copies it
// locally ("post", compute); rank 0 copies too, on a second stream, concurrently
// ("post"); both meet at a barrier ("sync", left out).
Program two_rank_program() {
  Program p(2);
  const SymmetricHandle h = p.symm_alloc(p.world_group(), kBytes);
  const BufferRef src = p.local_alloc(0, kBytes);
  p.put_signal(0, p.stream(0, "comm"), src, h, 0, 1, {"xfer", OpCategory::comm, ""});
  p.wait_signal(1, p.stream(1, "comm"), h, 0, {"xfer", OpCategory::comm, ""});
  for (int r : {0, 1}) {
    CopyWork c;
    c.src = r == 1 ? h.whole() : src;
    c.dst = p.local_alloc(r, kBytes);
    c.row_bytes = kBytes;
    p.copy(r, p.stream(r, r == 1 ? "comm" : "compute"), c, {"post", OpCategory::compute, ""});
  }
  p.barrier(p.world_group(), "comm", {"end", OpCategory::sync, ""});
  return p;
}

// The summary recomputed from timeline entries: first start, last end, and per rank the
// summed durations by category, the busiest rank's total.
std::map<std::string, LabelSpan> from_timeline(const TracedRun& r) {
  std::map<std::string, LabelSpan> out;
  std::map<std::string, std::map<int, double>> comm, compute;
  for (const TimelineEntry& e : r.timeline) {
    const OpLabel& label = label_of(r, e);
    if (label.category == OpCategory::sync) continue;
    auto [it, fresh] = out.try_emplace(label.name);
    LabelSpan& s = it->second;
    s.name = label.name;
    s.start_s = fresh ? e.start_s : std::min(s.start_s, e.start_s);
    s.end_s = fresh ? e.end_s : std::max(s.end_s, e.end_s);
    (label.category == OpCategory::comm ? comm : compute)[label.name][e.rank] +=
        e.end_s - e.start_s;
  }
  for (auto& [name, s] : out) {
    for (const auto& [rank, t] : comm[name]) s.busiest_comm_s = std::max(s.busiest_comm_s, t);
    for (const auto& [rank, t] : compute[name])
      s.busiest_compute_s = std::max(s.busiest_compute_s, t);
  }
  return out;
}

TEST(LabelSpans, MatchTheClosedFormAndTheTimeline) {
  const Program p = two_rank_program();
  const TracedRun r = traced(p, test_cluster(1, 8));
  ASSERT_EQ(r.label_spans.size(), 2u);  // "end" is sync: left out
  EXPECT_EQ(r.label_spans[0].name, "post");
  EXPECT_EQ(r.label_spans[1].name, "xfer");

  // One NVLink hop: α + bytes / β, on the sender's put and on the receiver's wait alike.
  const double put_s = kIntraLatency + static_cast<double>(kBytes) / kIntraBandwidth;
  const LabelSpan& xfer = r.label_spans[1];
  EXPECT_DOUBLE_EQ(xfer.start_s, 0);
  EXPECT_NEAR(xfer.end_s, put_s, put_s * 1e-9);
  EXPECT_NEAR(xfer.busiest_comm_s, put_s, put_s * 1e-9);
  EXPECT_EQ(xfer.busiest_compute_s, 0);

  // "post" starts at 0 on rank 0 and ends after rank 1's copy, which follows the wait.
  const LabelSpan& post = r.label_spans[0];
  const double copy_s = duration(r, 1, "post");
  EXPECT_GT(copy_s, 0);
  EXPECT_DOUBLE_EQ(post.start_s, 0);
  EXPECT_NEAR(post.end_s, put_s + copy_s, put_s * 1e-9);
  EXPECT_EQ(post.busiest_comm_s, 0);
  EXPECT_DOUBLE_EQ(post.busiest_compute_s, copy_s);

  const auto expected = from_timeline(r);
  for (const LabelSpan& s : r.label_spans) {
    const LabelSpan& e = expected.at(s.name);
    EXPECT_DOUBLE_EQ(s.start_s, e.start_s) << s.name;
    EXPECT_DOUBLE_EQ(s.end_s, e.end_s) << s.name;
    EXPECT_DOUBLE_EQ(s.busiest_comm_s, e.busiest_comm_s) << s.name;
    EXPECT_DOUBLE_EQ(s.busiest_compute_s, e.busiest_compute_s) << s.name;
  }
  // The hardware backend's path (label_spans_of a measured timeline) agrees too.
  const auto again = label_spans_of(p, r.timeline);
  ASSERT_EQ(again.size(), r.label_spans.size());
  for (size_t i = 0; i < again.size(); ++i) {
    EXPECT_EQ(again[i].name, r.label_spans[i].name);
    EXPECT_DOUBLE_EQ(again[i].end_s, r.label_spans[i].end_s);
    EXPECT_DOUBLE_EQ(again[i].busiest_compute_s, r.label_spans[i].busiest_compute_s);
  }
}

TEST(LabelSpans, AreTheSameWithoutTheTimeline) {
  const Program p = two_rank_program();
  const TracedRun with = traced(p, test_cluster(1, 8));
  SimOptions no_timeline;
  no_timeline.record_timeline = false;
  const RunResult without = run_simulation(p, test_cluster(1, 8), no_timeline);
  EXPECT_TRUE(without.timeline.empty());
  EXPECT_FALSE(with.timeline.empty());
  ASSERT_EQ(without.label_spans.size(), with.label_spans.size());
  for (size_t i = 0; i < with.label_spans.size(); ++i) {
    EXPECT_EQ(without.label_spans[i].name, with.label_spans[i].name);
    EXPECT_EQ(without.label_spans[i].start_s, with.label_spans[i].start_s);
    EXPECT_EQ(without.label_spans[i].end_s, with.label_spans[i].end_s);
    EXPECT_EQ(without.label_spans[i].busiest_comm_s, with.label_spans[i].busiest_comm_s);
    EXPECT_EQ(without.label_spans[i].busiest_compute_s, with.label_spans[i].busiest_compute_s);
  }
}

}  // namespace
}  // namespace symmesh::sim
