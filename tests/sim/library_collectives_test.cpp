// sim/library_collectives: plain collectives run as NCCL runs them when the cluster has a
// collectives: section — one call per member, timed by core/nccl_cost_model.hpp, the data
// where the one-sided steps put it. Expected data: sums of the integers each rank starts
// with, written out in each test; expected times: the cost shape by hand.
#include <gtest/gtest.h>

#include <cstring>

#include "core/collectives.hpp"
#include "core/errors.hpp"
#include "core/library_collectives.hpp"
#include "sim_test_support.hpp"

namespace symmesh::sim::testing {
namespace {

constexpr int kRanks = 4;
constexpr int64_t kElements = 8;  // per rank's buffer: a chunk of 2 floats per member
constexpr int64_t kBytes = kElements * 4;

// Rank r's buffer holds 100·r + i at element i (exact in fp32).
std::vector<float> start_values(int r) {
  std::vector<float> v(kElements);
  for (int64_t i = 0; i < kElements; ++i) v[i] = static_cast<float>(100 * r + i);
  return v;
}

ClusterSpec tuned(bool with_section) {
  ClusterSpec c = test_cluster(1, kRanks);
  if (!with_section) return c;
  for (BandwidthCollective op : {BandwidthCollective::all_gather, BandwidthCollective::all_reduce,
                                 BandwidthCollective::reduce_scatter}) {
    c.collectives.intra_node.of(op) = {{LibraryAlgorithm::ring, "Simple", 20e-6, 1e-6, 100e9}};
  }
  c.collectives.intra_node.of(BandwidthCollective::all_to_all) = {
      {LibraryAlgorithm::pairwise, "Simple", 20e-6, 1e-6, 100e9}};
  return c;
}

// Each rank copies its start values into the collective's data buffer, runs `op`, and the
// result buffer comes back as output "r<rank>".
struct Outcome {
  std::vector<std::vector<float>> result;  // per rank
  TracedRun run;
};

Outcome run(CollectiveOp op, bool with_section, const std::string& collectives = "") {
  Program p(kRanks);
  CollectiveSpec spec;
  spec.group = p.world_group();
  spec.bytes = kBytes;
  spec.dtype = DType::fp32;
  spec.stream = "comm";
  spec.name = "coll";
  const SymmetricHandle data = p.symm_alloc(p.world_group(), kBytes);
  for (int r = 0; r < kRanks; ++r) {
    const std::vector<float> v = start_values(r);
    std::vector<unsigned char> bytes(kBytes);
    std::memcpy(bytes.data(), v.data(), kBytes);
    CopyWork fill;
    fill.src = local_with(p, r, bytes);
    fill.dst = data.whole();
    fill.row_bytes = kBytes;
    p.copy(r, p.stream(r, "comm"), fill, OpLabel{"fill", OpCategory::compute, ""});
  }
  const CollectiveBuffers b = run_collective(p, op, spec, data);
  for (int r = 0; r < kRanks; ++r) p.request_output("r" + std::to_string(r), r, b.result.whole());
  SimOptions options = with_data();
  if (!collectives.empty()) options.collectives = parse_collectives(collectives);
  Outcome out;
  out.run = traced(p, tuned(with_section), options);
  for (int r = 0; r < kRanks; ++r) {
    const auto& bytes = out.run.output("r" + std::to_string(r), r).bytes;
    std::vector<float> v(bytes.size() / 4);
    std::memcpy(v.data(), bytes.data(), bytes.size());
    out.result.push_back(v);
  }
  return out;
}

// The library call's timeline entry on `rank` (the one that ran several ops).
const TimelineEntry& library_entry(const TracedRun& r, int rank) {
  for (const TimelineEntry& e : r.timeline)
    if (e.rank == rank && e.op_count > 1) return e;
  ADD_FAILURE() << "no library call on rank " << rank;
  static const TimelineEntry none;
  return none;
}

TEST(LibraryCollectives, AllReduceSumsEveryRanksBufferAndTakesTheEstimate) {
  const Outcome o = run(CollectiveOp::all_reduce, true);
  // Σ_r (100 r + i) over r = 0..3 = 600 + 4 i, on every rank.
  for (int r = 0; r < kRanks; ++r)
    for (int64_t i = 0; i < kElements; ++i) EXPECT_EQ(o.result[r][i], 600 + 4 * i) << r << " " << i;
  // 32 B over 4 ranks: 20 us + 2·3 steps × 1 us + 32 · (2·3/4) / 100e9 s = 26.00048 us.
  for (int r = 0; r < kRanks; ++r) {
    const TimelineEntry& e = library_entry(o.run, r);
    EXPECT_NEAR(e.end_s - e.start_s, 26.00048e-6, 1e-12) << r;
    ASSERT_GE(e.detail, 0);
    EXPECT_EQ(o.run.details.at(e.detail).rfind("nccl all_reduce ring/Simple", 0), 0u)
        << o.run.details.at(e.detail);
  }
}

TEST(LibraryCollectives, AllGatherReduceScatterAndAllToAllPutTheDataWhereTheRingsDo) {
  // The same Program with --collectives one-sided runs the core's rings: both ways must give
  // the same bytes, and those are the hand-computed ones below.
  for (CollectiveOp op :
       {CollectiveOp::all_gather, CollectiveOp::reduce_scatter, CollectiveOp::all_to_all}) {
    const Outcome library = run(op, true);
    const Outcome rings = run(op, true, "one-sided");
    EXPECT_NE(library_entry(library.run, 0).op_count, 0);
    for (const TimelineEntry& e : rings.run.timeline) EXPECT_EQ(e.op_count, 1);
    for (int r = 0; r < kRanks; ++r) {
      for (int64_t i = 0; i < kElements; ++i) {
        const int64_t slot = i / 2;  // chunk of 2 elements per member
        float expected = 0;
        switch (op) {
          case CollectiveOp::all_gather:  // slot s comes from rank s's slot s
            expected = static_cast<float>(100 * slot + i);
            break;
          case CollectiveOp::reduce_scatter:  // own slot: the sum (the others are scratch)
            if (slot != r) continue;
            expected = static_cast<float>(600 + 4 * i);
            break;
          default:  // result slot s (s != r) holds rank s's slot r: 100 s + 2 r + i % 2
            if (slot == r) continue;  // the rank's own chunk stays in its data buffer
            expected = static_cast<float>(100 * slot + 2 * r + i % 2);
        }
        EXPECT_EQ(library.result[r][i], expected) << to_string(op) << " rank " << r << " " << i;
        EXPECT_EQ(rings.result[r][i], expected) << to_string(op) << " rank " << r << " " << i;
      }
    }
  }
}

TEST(LibraryCollectives, AverageDividesByTheGroupSize) {
  Program p(2);
  CollectiveSpec spec{p.world_group(), 8, DType::fp32, ReduceOp::avg, "comm", "avg"};
  const SymmetricHandle data = p.symm_alloc(p.world_group(), 8);
  for (int r = 0; r < 2; ++r) {
    const float v[2] = {static_cast<float>(2 + 4 * r), static_cast<float>(6 + 4 * r)};
    std::vector<unsigned char> bytes(8);
    std::memcpy(bytes.data(), v, 8);
    CopyWork fill;
    fill.src = local_with(p, r, bytes);
    fill.dst = data.whole();
    fill.row_bytes = 8;
    p.copy(r, p.stream(r, "comm"), fill, OpLabel{"fill", OpCategory::compute, ""});
  }
  ring_all_reduce(p, spec, data);
  p.request_output("y", 1, data.whole());
  ClusterSpec c = test_cluster(1, 2);
  c.collectives.intra_node.of(BandwidthCollective::all_reduce) = {
      {LibraryAlgorithm::ring, "Simple", 1e-6, 0, 100e9}};
  const RunResult r = run_simulation(p, c, with_data());
  float y[2];
  std::memcpy(y, r.output("y", 1).bytes.data(), 8);
  EXPECT_EQ(y[0], 4);  // (2 + 6) / 2
  EXPECT_EQ(y[1], 8);  // (6 + 10) / 2
}

TEST(LibraryCollectives, WithoutTheSectionTheCoreRingsRunAndAskingForNcclIsAnError) {
  const Outcome rings = run(CollectiveOp::all_reduce, false);
  for (const TimelineEntry& e : rings.run.timeline) EXPECT_EQ(e.op_count, 1);
  EXPECT_EQ(rings.result[2][3], 600 + 4 * 3);
  EXPECT_THROW(run(CollectiveOp::all_reduce, false, "nccl"), InvalidArgument);
}

TEST(LibraryCollectives, ReportsNameTheAlgorithm) {
  Program p(kRanks);
  CollectiveSpec spec{p.world_group(), kBytes, DType::fp32, ReduceOp::sum, "comm", "grads"};
  ring_all_reduce(p, spec);
  const CollectiveRecord& record = p.collectives().front();
  EXPECT_EQ(simulated_implementation(tuned(true), {}, p, record), "nccl ring/Simple");
  EXPECT_EQ(simulated_implementation(tuned(false), {}, p, record), "ring");
  EXPECT_EQ(simulated_implementation(tuned(true), parse_collectives("one-sided"), p, record),
            "ring");
  EXPECT_EQ(simulated_implementation(tuned(true), parse_collectives("nccl:other"), p, record),
            "ring");
}

}  // namespace
}  // namespace symmesh::sim::testing
