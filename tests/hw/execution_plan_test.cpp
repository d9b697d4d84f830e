// The hardware plan, host-side (no GPU): buffer placement, signal slots, the counts waits
// expect, barrier generations, stream order around events, use after free, unsupported
// dtypes, and which collectives become NCCL calls.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "core/collectives.hpp"
#include "core/errors.hpp"
#include "hw/execution_plan.hpp"
#include "hw/nccl_backend.hpp"
#include "tests/hw/hw_test_support.hpp"

namespace symmesh::hw {
namespace {

using ::testing::HasSubstr;

std::vector<Launch> of_kind(const RankPlan& r, Launch::Kind kind) {
  std::vector<Launch> out;
  for (const Launch& l : r.launches)
    if (l.kind == kind) out.push_back(l);
  return out;
}

TEST(ExecutionPlan, SelfPutPlacesCountersBeforeDataAndExpectsOneSignal) {
  Program p(1);
  const auto h = p.symm_alloc(p.world_group(), 1000);
  const auto src = p.local_alloc(0, 1000);
  const StreamId s = p.stream(0, "main");
  p.put_signal(0, s, src, h, 0, 0, {"x", OpCategory::comm, ""});
  p.wait_signal(0, s, h, 0, {"x", OpCategory::comm, ""});
  const ExecutionPlan plan = build_execution_plan(p);
  ASSERT_EQ(plan.comms.size(), 1u);
  EXPECT_EQ(plan.comms[0].ranks, std::vector<int>{0});
  EXPECT_TRUE(plan.comms[0].one_sided);
  EXPECT_EQ(plan.symmetric[h.id].offset_bytes % 256, 0);
  // The comm's counters come first: kSignalIndices slots for its one member.
  EXPECT_GE(plan.symmetric[h.id].offset_bytes, kSignalIndices * 8);
  const auto& launches = plan.ranks[0].launches;
  ASSERT_EQ(launches.size(), 2u);
  EXPECT_EQ(launches[0].kind, Launch::Kind::put);
  EXPECT_EQ(launches[0].peer, 0);
  EXPECT_EQ(launches[0].bytes, 1000);
  EXPECT_EQ(launches[0].dst.offset_bytes, plan.symmetric[h.id].offset_bytes);
  EXPECT_EQ(launches[0].signal_offset_bytes, 0);
  EXPECT_EQ(launches[1].kind, Launch::Kind::wait);
  EXPECT_EQ(launches[1].expected, 1u);
  EXPECT_EQ(launches[1].per_run, 1u);
  EXPECT_EQ(plan.ranks[0].put_slots, 1);
}

TEST(ExecutionPlan, WaitsCountUpAndRepeatedRunsAddThePutsPerRun) {
  // One-sided case 6: three puts, four waits — the fourth expects a count of 4.
  Program p(1);
  const auto h = p.symm_alloc(p.world_group(), 64);
  const auto src = p.local_alloc(0, 64);
  const StreamId s = p.stream(0, "main");
  for (int i = 0; i < 3; ++i) p.put_signal(0, s, src, h, 0, 0, {"put", OpCategory::comm, ""});
  for (int i = 0; i < 4; ++i) p.wait_signal(0, s, h, 0, {"wait", OpCategory::comm, ""});
  const auto plan = build_execution_plan(p);
  const auto waits = of_kind(plan.ranks[0], Launch::Kind::wait);
  ASSERT_EQ(waits.size(), 4u);
  for (int i = 0; i < 4; ++i) {
    EXPECT_EQ(waits[i].expected, static_cast<uint64_t>(i + 1));
    EXPECT_EQ(waits[i].per_run, 3u);
  }
  const auto puts = of_kind(plan.ranks[0], Launch::Kind::put);
  EXPECT_EQ(puts[2].put_slot, 2);
}

TEST(ExecutionPlan, SlotsAreThePairsInTheHandlesGroup) {
  // Group [2, 0] of a world of 3: rank 2 is member 0, rank 0 member 1.
  Program p(3);
  const GroupId g = p.add_group({2, 0});
  const auto h = p.symm_alloc(g, 128);
  const auto src = p.local_alloc(2, 16);
  p.put_signal(2, p.stream(2, "main"), src, h, 40, 1, {"x", OpCategory::comm, ""});
  p.wait_signal(0, p.stream(0, "main"), h, 0, {"x", OpCategory::comm, ""});
  const auto plan = build_execution_plan(p);
  ASSERT_EQ(plan.comms.size(), 2u);
  EXPECT_EQ(plan.comms[1].ranks, (std::vector<int>{2, 0}));
  EXPECT_EQ(plan.group_comm[g], 1);
  const SymmetricPlacement& place = plan.symmetric[h.id];
  const Launch put = plan.ranks[2].launches.at(0);
  EXPECT_EQ(put.comm, 1);
  EXPECT_EQ(put.peer, 1);
  EXPECT_EQ(put.dst.offset_bytes, place.offset_bytes + 40);  // case 13: the offset is honoured
  EXPECT_EQ(put.signal_offset_bytes, 0 * 8);                 // signal 0, sender is member 0
  const Launch wait = plan.ranks[0].launches.at(0);
  EXPECT_EQ(wait.signal_offset_bytes, 0 * 8);  // signal 0, from member 0
  EXPECT_TRUE(plan.ranks[1].comms == std::vector<int>{0});
  EXPECT_EQ(plan.device_bytes(1), plan.comms[0].arena_bytes + plan.ranks[1].local_arena_bytes);
}

TEST(ExecutionPlan, GroupsWithTheSameRanksShareOneCommunicator) {
  Program p(4);
  const GroupId a = p.add_group({0, 1});
  const GroupId b = p.add_group({0, 1});
  const GroupId c = p.add_group({1, 0});
  p.symm_alloc(a, 8), p.symm_alloc(b, 8), p.symm_alloc(c, 8);
  const auto plan = build_execution_plan(p);
  EXPECT_EQ(plan.group_comm[a], plan.group_comm[b]);
  EXPECT_NE(plan.group_comm[a], plan.group_comm[c]);            // another order, other ranks
  EXPECT_EQ(plan.comms[plan.group_comm[a]].groups.size(), 1u);  // Program merged a and b
}

TEST(ExecutionPlan, EveryBufferOfACommSharesItsCountersPerSignalIndex) {
  // NCCL keeps signals per communicator: puts into two buffers of one group bump one
  // counter, so a wait named on buffer B expects the count of puts into A and B together.
  Program p(2);
  const GroupId w = p.world_group();
  const auto a = p.symm_alloc(w, 64);
  const auto b = p.symm_alloc(w, 64);
  const auto src = p.local_alloc(0, 64);
  const StreamId s0 = p.stream(0, "main"), s1 = p.stream(1, "main");
  p.put_signal(0, s0, src, a, 0, 1, {"a", OpCategory::comm, ""});
  p.put_signal(0, s0, src, b, 0, 1, {"b", OpCategory::comm, ""});
  p.put_signal(0, s0, src, b, 0, 1, {"b3", OpCategory::comm, ""}, 3);  // signal index 3
  p.signal(0, s0, w, 1, {"sig", OpCategory::sync, ""}, 3);
  p.wait_signal(1, s1, b, 0, {"wb", OpCategory::comm, ""});
  p.wait_signal(1, s1, a, 0, {"wa", OpCategory::comm, ""});
  p.wait_signal(1, s1, w, 0, {"w3", OpCategory::sync, ""}, 3);
  const auto plan = build_execution_plan(p);
  const auto puts = of_kind(plan.ranks[0], Launch::Kind::put);
  ASSERT_EQ(puts.size(), 4u);
  // Slot (index i, sender s) of a 2-rank comm sits at (i·2 + s)·8 bytes.
  EXPECT_EQ(puts[0].signal_offset_bytes, 0);
  EXPECT_EQ(puts[1].signal_offset_bytes, 0);
  EXPECT_EQ(puts[2].signal_offset_bytes, (3 * 2 + 0) * 8);
  EXPECT_EQ(puts[3].signal_offset_bytes, (3 * 2 + 0) * 8);
  EXPECT_EQ(puts[3].bytes, 0);  // the signal carries no data
  const auto waits = of_kind(plan.ranks[1], Launch::Kind::wait);
  ASSERT_EQ(waits.size(), 3u);
  EXPECT_EQ(waits[0].expected, 1u);  // on b, satisfied by the put into a
  EXPECT_EQ(waits[1].expected, 2u);
  EXPECT_EQ(waits[0].per_run, 2u);   // two index-0 signals per run, whatever the buffer
  EXPECT_EQ(waits[2].expected, 1u);  // index 3 counts apart
  EXPECT_EQ(waits[2].per_run, 2u);
  EXPECT_EQ(waits[2].signal_offset_bytes, (3 * 2 + 0) * 8);
}

TEST(ExecutionPlan, BarriersCountGenerationsPerCommunicator) {
  Program p(2);
  const GroupId w = p.world_group();
  p.barrier(w, "main");
  p.barrier(w, "main");
  const auto plan = build_execution_plan(p);
  for (int r = 0; r < 2; ++r) {
    const auto barriers = of_kind(plan.ranks[r], Launch::Kind::barrier);
    ASSERT_EQ(barriers.size(), 2u);
    EXPECT_EQ(barriers[0].expected, 1u);
    EXPECT_EQ(barriers[1].expected, 2u);
    EXPECT_EQ(barriers[1].per_run, 2u);
    EXPECT_EQ(barriers[0].signal_offset_bytes, plan.comms[0].barrier_slots_offset_bytes);
  }
  EXPECT_NE(plan.comms[0].origin_slots_offset_bytes, plan.comms[0].barrier_slots_offset_bytes);
  EXPECT_TRUE(plan.comms[0].barriers);
  EXPECT_FALSE(plan.comms[0].one_sided);  // barriers alone fall back to NCCL across nodes
}

TEST(ExecutionPlan, WaitEventIsEnqueuedAfterItsRecordOnAnotherStream) {
  Program p(1);
  const StreamId a = p.stream(0, "a");
  const StreamId b = p.stream(0, "b");
  const EventId e = p.record_event(0, b);
  p.wait_event(0, a, e);
  const auto plan = build_execution_plan(p);
  const auto& l = plan.ranks[0].launches;
  ASSERT_EQ(l.size(), 2u);
  EXPECT_EQ(l[0].kind, Launch::Kind::record_event);
  EXPECT_EQ(l[0].stream, b);
  EXPECT_EQ(l[1].kind, Launch::Kind::wait_event);
  EXPECT_EQ(l[1].stream, a);
}

TEST(ExecutionPlan, UseAfterFreeIsAnError) {
  Program p(1);
  const auto h = p.symm_alloc(p.world_group(), 64);
  const auto src = p.local_alloc(0, 64);
  p.symm_free(h, "main");
  p.put_signal(0, p.stream(0, "main"), src, h, 0, 0, {"late", OpCategory::comm, ""});
  try {
    build_execution_plan(p);
    FAIL() << "expected InvalidArgument";
  } catch (const InvalidArgument& e) {
    EXPECT_THAT(e.what(), HasSubstr("'late'"));
    EXPECT_THAT(e.what(), HasSubstr("after its free"));
  }
}

TEST(ExecutionPlan, MatmulDtypesTheGpuCannotComputeAreUnsupported) {
  for (DType dtype : {DType::int8, DType::fp8_e5m2, DType::int32}) {
    Program p(1);
    MatmulWork w;
    w.m = w.n = w.k = 16;
    w.dtype = dtype;
    const int64_t bytes = 16 * 16 * element_size_bytes(dtype);
    w.a = p.local_alloc(0, bytes), w.b = p.local_alloc(0, bytes), w.c = p.local_alloc(0, bytes);
    p.matmul(0, p.stream(0, "main"), w, {"mm", OpCategory::compute, ""});
    EXPECT_THROW(build_execution_plan(p), Unsupported) << to_string(dtype);
  }
  Program p(1);
  MatmulWork w;
  w.m = w.n = w.k = 8;
  w.dtype = DType::fp8_e4m3;
  w.a = p.local_alloc(0, 64), w.b = p.local_alloc(0, 64), w.c = p.local_alloc(0, 64);
  p.matmul(0, p.stream(0, "main"), w, {"mm", OpCategory::compute, ""});
  try {
    build_execution_plan(p);
    FAIL();
  } catch (const Unsupported& e) {
    EXPECT_THAT(e.what(), HasSubstr("multiples of 16"));
  }
}

TEST(ExecutionPlan, MatmulStreamsGetWorkspaceAndFp8Scratch) {
  Program p(1);
  MatmulWork w;
  w.m = w.n = w.k = 32;
  w.dtype = DType::fp8_e4m3;
  w.a = p.local_alloc(0, 1024), w.b = p.local_alloc(0, 1024), w.c = p.local_alloc(0, 1024);
  p.matmul(0, p.stream(0, "mm"), w, {"mm", OpCategory::compute, ""});
  const auto plan = build_execution_plan(p);
  const StreamPlan& s = plan.ranks[0].streams[0];
  EXPECT_TRUE(s.matmuls);
  EXPECT_GE(s.fp8_scratch_bytes, 32 * 32 + 4 * 32 * 32);
  EXPECT_TRUE(plan.ranks[0].fp8);
  EXPECT_EQ(plan.device_bytes(0), plan.comms[0].arena_bytes + plan.ranks[0].local_arena_bytes +
                                      plan.options.cublaslt_workspace_bytes + s.fp8_scratch_bytes);
}

// The core collectives over p ranks, on one stream each.
struct CollectiveCase {
  std::string name;
  NativeCollective::Kind kind;
  bool average = false;
};

void PrintTo(const CollectiveCase& c, std::ostream* os) {
  *os << c.name;
}

class NativeCollectives : public ::testing::TestWithParam<CollectiveCase> {};

TEST_P(NativeCollectives, RecognisedCollectivesBecomeOneNcclCallPerRank) {
  const int p = 4;
  Program program(p);
  CollectiveSpec spec{program.world_group(),
                      4000,
                      DType::fp32,
                      GetParam().average ? ReduceOp::avg : ReduceOp::sum,
                      "main",
                      "op"};
  CollectiveBuffers buffers;
  switch (GetParam().kind) {
    case NativeCollective::Kind::all_gather:
      buffers = ring_all_gather(program, spec);
      break;
    case NativeCollective::Kind::reduce_scatter:
      buffers = ring_reduce_scatter(program, spec);
      break;
    case NativeCollective::Kind::all_reduce:
      buffers = ring_all_reduce(program, spec);
      break;
    case NativeCollective::Kind::all_to_all:
      buffers = pairwise_all_to_all(program, spec);
      break;
  }
  const int64_t c = buffers.chunk_bytes;
  ExecutionOptions options;
  options.collectives = parse_collectives("nccl");
  const auto plan = build_execution_plan(program, options);
  for (int r = 0; r < p; ++r) {
    ASSERT_EQ(plan.ranks[r].launches.size(), 1u) << "rank " << r;
    const Launch& l = plan.ranks[r].launches[0];
    ASSERT_EQ(l.kind, Launch::Kind::native);
    EXPECT_EQ(l.native.kind, GetParam().kind);
    EXPECT_EQ(l.native.average, GetParam().average);
    EXPECT_EQ(l.op_count, static_cast<int>(program.streams(r)[0].ops.size()));
    const int64_t data = plan.symmetric[buffers.data.id].offset_bytes;
    switch (GetParam().kind) {
      case NativeCollective::Kind::all_gather:
        EXPECT_EQ(l.native.send.offset_bytes, data + r * c);
        EXPECT_EQ(l.native.recv.offset_bytes, data);
        EXPECT_EQ(l.native.count, c);
        break;
      case NativeCollective::Kind::reduce_scatter:
        EXPECT_EQ(l.native.send.offset_bytes, data);
        EXPECT_EQ(l.native.recv.offset_bytes, data + r * c);
        EXPECT_EQ(l.native.count, c / 4);
        EXPECT_EQ(l.native.dtype, DType::fp32);
        break;
      case NativeCollective::Kind::all_reduce:
        EXPECT_EQ(l.native.recv.offset_bytes, data);
        EXPECT_EQ(l.native.count, p * c / 4);
        break;
      case NativeCollective::Kind::all_to_all:
        EXPECT_EQ(l.native.send.offset_bytes, data);
        EXPECT_EQ(l.native.recv.offset_bytes, plan.symmetric[buffers.staging.id].offset_bytes);
        EXPECT_EQ(l.native.count, c);
        break;
    }
  }
  EXPECT_TRUE(plan.comms[0].native);
  // The same program one-sided: every op is its own launch.
  const auto one_sided = build_execution_plan(program);
  EXPECT_EQ(one_sided.ranks[0].launches.size(), program.streams(0)[0].ops.size());
  EXPECT_EQ(launch_counts(one_sided).count("nccl " + to_string(GetParam().kind)), 0u);
}

INSTANTIATE_TEST_SUITE_P(
    Collectives, NativeCollectives,
    ::testing::Values(CollectiveCase{"all_gather", NativeCollective::Kind::all_gather},
                      CollectiveCase{"reduce_scatter", NativeCollective::Kind::reduce_scatter},
                      CollectiveCase{"reduce_scatter_avg", NativeCollective::Kind::reduce_scatter,
                                     true},
                      CollectiveCase{"all_reduce", NativeCollective::Kind::all_reduce},
                      CollectiveCase{"all_reduce_avg", NativeCollective::Kind::all_reduce, true},
                      CollectiveCase{"all_to_all", NativeCollective::Kind::all_to_all}),
    [](const auto& info) { return info.param.name; });

TEST(NativeCollectivesMatcher, ARingThatIsNotTheCoreAlgorithmStaysOneSided) {
  // The all-gather's labels, but each rank sends to its LEFT neighbour.
  const int p = 3;
  Program program(p);
  const auto data = program.symm_alloc(program.world_group(), 3 * 16);
  for (int r = 0; r < p; ++r)
    for (int s = 0; s < p - 1; ++s) {
      const OpLabel label{"op", OpCategory::comm,
                          "ring all_gather step " + std::to_string(s + 1) + "/2"};
      const int chunk = ((r - s) % p + p) % p;
      program.put_signal(r, program.stream(r, "main"), data.whole().slice(chunk * 16, 16), data,
                         chunk * 16, (r + p - 1) % p, label);
      program.wait_signal(r, program.stream(r, "main"), data, (r + 1) % p, label);
    }
  ExecutionOptions options;
  options.collectives = parse_collectives("nccl");
  const auto plan = build_execution_plan(program, options);
  EXPECT_EQ(launch_counts(plan).count("nccl all_gather"), 0u);
  EXPECT_EQ(launch_counts(plan).at("put"), p * (p - 1));
}

TEST(ExecutionPlan, DescribeNamesCommunicatorsAndLaunches) {
  Program p(2);
  CollectiveSpec spec{p.world_group(), 1024, DType::bf16, ReduceOp::sum, "main", "grads"};
  ring_all_reduce(p, spec);
  const auto text = describe(build_execution_plan(p), p);
  EXPECT_THAT(text, HasSubstr("hardware plan: 2 ranks"));
  EXPECT_THAT(text, HasSubstr("comm 0: ranks [0, 1] (world)"));
  EXPECT_THAT(text, HasSubstr("[main] put 512 B"));
  EXPECT_THAT(text, HasSubstr("# grads: ring reduce_scatter step 1/1"));
  EXPECT_THAT(text, HasSubstr("launches: put 4, reduce 2, wait 4"));
}

TEST(NativeCollectivesMatcher, OnlyTheNamedOpsBecomeNcclCalls) {
  Program program(2);
  CollectiveSpec grads{program.world_group(), 1024, DType::fp32, ReduceOp::sum, "main", "grads"};
  CollectiveSpec acts{program.world_group(), 1024, DType::fp32, ReduceOp::sum, "main", "acts"};
  ring_all_reduce(program, grads);
  ring_all_gather(program, acts);
  ExecutionOptions options;
  options.collectives = parse_collectives("nccl:grads");
  const auto plan = build_execution_plan(program, options);
  const auto counts = launch_counts(plan);
  EXPECT_EQ(counts.at("nccl all_reduce"), 2);
  EXPECT_EQ(counts.count("nccl all_gather"), 0u);
  EXPECT_EQ(counts.at("put"), 2);  // the all-gather stays one-sided: one put per rank
}

// A run request's choice reaches the executor as it was asked.
TEST(CollectivesChoice, TheRequestChoosesTheExecutorsCollectives) {
  RunRequest request;
  request.collectives = parse_collectives("nccl:a,b");
  const ExecutorOptions options = executor_options_for(request);
  EXPECT_TRUE(options.collectives.native);
  EXPECT_EQ(options.collectives.ops, (std::vector<std::string>{"a", "b"}));
  EXPECT_EQ(CollectivesChoice{}.kind(), "one-sided");
  EXPECT_EQ(options.collectives.kind(), "nccl");
  EXPECT_FALSE(executor_options_for({}).collectives.native);
}

}  // namespace
}  // namespace symmesh::hw
