// The collective table (core/collective_descriptor.hpp). Expectations come from outside
// symmesh: the bus-bandwidth factors from NVIDIA/nccl-tests doc/PERFORMANCE.md ("Summary":
// AllReduce 2(n-1)/n; ReduceScatter, AllGather, AlltoAll (n-1)/n; Broadcast, Reduce,
// SendRecv 1), the ring step counts from NCCL's tuner (src/graph/tuning.cc: a ring
// all-reduce takes 2(nRanks-1) steps, the other ring collectives nRanks-1), the
// algorithms from NCCL's documentation (NCCL_ALGO: Tree and NVLS all-reduce, NVLS
// all-gather and reduce-scatter; all-to-all is point-to-point), the names from the
// nccl-tests binaries (all_reduce_perf, alltoall_perf, …) and the transitions from
// PyTorch DTensor's redistribute (Shard→Replicate all_gather, Partial→Shard
// reduce_scatter, Partial→Replicate all_reduce, Shard(i)→Shard(j) all_to_all).
#include "core/collective_descriptor.hpp"

#include <gtest/gtest.h>

#include <set>

#include "core/collectives.hpp"

namespace symmesh {
namespace {

const CollectiveDescriptor& row(std::string_view name) {
  const CollectiveDescriptor* d = find_collective(name);
  if (!d) throw std::runtime_error("no row " + std::string(name));
  return *d;
}

TEST(CollectiveDescriptor, FactorsAreNcclTestsSummary) {
  for (int n : {1, 2, 3, 8, 16, 1024}) {
    const double m = (n - 1.0) / n;
    EXPECT_DOUBLE_EQ(bus_bandwidth_factor(row("all_reduce"), n), 2 * m) << n;
    EXPECT_DOUBLE_EQ(bus_bandwidth_factor(row("all_gather"), n), m) << n;
    EXPECT_DOUBLE_EQ(bus_bandwidth_factor(row("reduce_scatter"), n), m) << n;
    EXPECT_DOUBLE_EQ(bus_bandwidth_factor(row("all_to_all"), n), m) << n;
    EXPECT_DOUBLE_EQ(bus_bandwidth_factor(row("broadcast"), n), 1.0) << n;
    EXPECT_DOUBLE_EQ(bus_bandwidth_factor(row("reduce"), n), 1.0) << n;
    EXPECT_DOUBLE_EQ(bus_bandwidth_factor(row("sendrecv"), n), 1.0) << n;
  }
  // The enum's function reads the same rows: n = 8, 2·7/8 = 1.75 and 7/8.
  EXPECT_DOUBLE_EQ(bus_bandwidth_factor(BandwidthCollective::all_reduce, 8), 1.75);
  EXPECT_DOUBLE_EQ(bus_bandwidth_factor(BandwidthCollective::all_to_all, 8), 0.875);
}

TEST(CollectiveDescriptor, EveryNameAndAliasParsesBackToItsRow) {
  std::set<std::string_view> seen;
  for (const CollectiveDescriptor& d : collective_descriptors()) {
    EXPECT_TRUE(seen.insert(d.name).second) << "two rows named " << d.name;
    EXPECT_EQ(find_collective(d.name), &d) << d.name;
    for (std::string_view alias : d.aliases) {
      if (alias.empty()) continue;
      EXPECT_TRUE(seen.insert(alias).second) << "alias " << alias << " names two rows";
      EXPECT_EQ(find_collective(alias), &d) << alias;
    }
    // Each enum's text form is the row's name, and parses back.
    if (d.record) EXPECT_EQ(to_string(*d.record), d.name);
    if (d.bandwidth) {
      EXPECT_EQ(to_string(*d.bandwidth), d.name);
      EXPECT_EQ(bandwidth_collective(d.name), d.bandwidth);
    }
    if (d.transition) EXPECT_EQ(to_string(*d.transition), d.name);
    if (d.op_kind) {
      EXPECT_EQ(to_string(*d.op_kind), d.name);
      EXPECT_EQ(op_kind_named(d.name), d.op_kind);
    }
  }
  // nccl-tests' binary is alltoall_perf: its spelling names the all-to-all row.
  EXPECT_EQ(bandwidth_collective("alltoall"), BandwidthCollective::all_to_all);
  EXPECT_EQ(find_collective("mm"), nullptr);
  EXPECT_EQ(find_collective("put_signal"), nullptr);
  EXPECT_EQ(bandwidth_collective("allgather_matmul"), std::nullopt);
}

TEST(CollectiveDescriptor, EveryCollectiveOpAndBandwidthCollectiveHasARow) {
  // Every enumerator up to the last (the fused ones come last: a new plain collective goes
  // before them, so the sweep codec's bound still holds), and the six there are today.
  const int ops = static_cast<int>(CollectiveOp::matmul_reducescatter) + 1;
  EXPECT_GE(ops, 6);
  for (int i = 0; i < ops; ++i) {
    const auto op = static_cast<CollectiveOp>(i);
    EXPECT_EQ(descriptor_of(op).record, op) << i;
  }
  for (CollectiveOp op : {CollectiveOp::all_gather, CollectiveOp::reduce_scatter,
                          CollectiveOp::all_reduce, CollectiveOp::all_to_all,
                          CollectiveOp::allgather_matmul, CollectiveOp::matmul_reducescatter})
    EXPECT_EQ(descriptor_of(op).record, op) << to_string(op);
  int with_record = 0, with_bandwidth = 0;
  for (const CollectiveDescriptor& d : collective_descriptors()) {
    with_record += d.record.has_value();
    with_bandwidth += d.bandwidth.has_value();
  }
  EXPECT_EQ(with_record, ops);
  // The tuning arrays are indexed by BandwidthCollective: one row each.
  EXPECT_EQ(with_bandwidth, kBandwidthCollectiveCount);
  for (int i = 0; i < kBandwidthCollectiveCount; ++i) {
    const auto op = static_cast<BandwidthCollective>(i);
    EXPECT_EQ(descriptor_of(op).bandwidth, op);
  }
}

TEST(CollectiveDescriptor, RingStepsAreNcclTunersAndMoveAChunkEach) {
  // p = 8, S = 1000 bytes: chunks of ceil(1000/8) = 125.
  EXPECT_EQ(ring_steps(row("all_reduce"), 8), 14);
  EXPECT_EQ(ring_steps(row("all_gather"), 8), 7);
  EXPECT_EQ(ring_steps(row("reduce_scatter"), 8), 7);
  EXPECT_EQ(ring_steps(row("all_to_all"), 8), 7);
  EXPECT_EQ(ring_steps(row("sendrecv"), 2), 1);
  EXPECT_EQ(ring_step_bytes(row("all_reduce"), 1000, 8), 125);
  EXPECT_EQ(ring_step_bytes(row("all_gather"), 1001, 8), 126);
  EXPECT_EQ(ring_step_bytes(row("sendrecv"), 1000, 2), 1000);
  // Over the ring collectives, steps × bytes per step / S is the bus-bandwidth factor
  // (each link carries what the factor says, when S divides by p).
  for (std::string_view name : {"all_reduce", "all_gather", "reduce_scatter", "all_to_all"}) {
    const CollectiveDescriptor& d = row(name);
    EXPECT_DOUBLE_EQ(ring_steps(d, 8) * ring_step_bytes(d, 800, 8) / 800.0,
                     bus_bandwidth_factor(d, 8))
        << name;
  }
}

TEST(CollectiveDescriptor, NcclAlgorithmsAreTheDocumented) {
  using LA = LibraryAlgorithm;
  EXPECT_TRUE(collective_may_use(row("all_reduce"), LA::tree, false));
  EXPECT_TRUE(collective_may_use(row("all_reduce"), LA::nvls, true));
  EXPECT_FALSE(collective_may_use(row("all_reduce"), LA::nvls, false));  // NVSwitch only
  EXPECT_TRUE(collective_may_use(row("all_gather"), LA::nvls, true));
  EXPECT_FALSE(collective_may_use(row("all_gather"), LA::tree, true));
  EXPECT_TRUE(collective_may_use(row("all_to_all"), LA::pairwise, false));
  EXPECT_FALSE(collective_may_use(row("all_to_all"), LA::ring, false));
  EXPECT_TRUE(collective_may_use(row("sendrecv"), LA::direct, false));
  EXPECT_TRUE(collective_may_use(row("broadcast"), LA::ring, false));
  for (std::string_view fused : {"allgather_matmul", "matmul_reducescatter"}) {
    EXPECT_TRUE(row(fused).library_algorithms.empty()) << fused;
    EXPECT_TRUE(row(fused).native_call.empty()) << fused;
  }
}

TEST(CollectiveDescriptor, TransitionsAreDTensors) {
  const Placement S0 = Placement::shard(0), S1 = Placement::shard(1), R = Placement::replicate();
  const Placement P = Placement::partial();
  EXPECT_EQ(transition_collective(S0, R), CollectiveKind::all_gather);
  EXPECT_EQ(transition_collective(P, S1), CollectiveKind::reduce_scatter);
  EXPECT_EQ(transition_collective(P, R), CollectiveKind::all_reduce);
  EXPECT_EQ(transition_collective(S0, S1), CollectiveKind::all_to_all);
  EXPECT_EQ(transition_collective(S0, P), std::nullopt);
  EXPECT_EQ(descriptor_of(CollectiveKind::local_chunk), nullptr);
  EXPECT_EQ(collective_op_of(CollectiveKind::all_to_all), CollectiveOp::all_to_all);
  EXPECT_EQ(collective_op_of(CollectiveKind::none), std::nullopt);
}

TEST(CollectiveDescriptor, EmittersAreTheCoresAlgorithms) {
  EXPECT_EQ(row("all_gather").emit, &ring_all_gather);
  EXPECT_EQ(row("reduce_scatter").emit, &ring_reduce_scatter);
  EXPECT_EQ(row("all_reduce").emit, &ring_all_reduce);
  EXPECT_EQ(row("all_to_all").emit, &pairwise_all_to_all);
  EXPECT_EQ(row("allgather_matmul").emit, nullptr);  // written with its matmul
  EXPECT_EQ(algorithm_of(CollectiveOp::all_to_all), CollectiveAlgorithm::pairwise);
  EXPECT_EQ(algorithm_of(CollectiveOp::matmul_reducescatter), CollectiveAlgorithm::fused_ring);
  EXPECT_EQ(collective_op_of(OpKind::all_reduce), CollectiveOp::all_reduce);
  EXPECT_TRUE(is_collective(OpKind::all_to_all));
  EXPECT_FALSE(is_collective(OpKind::mm));
}

}  // namespace
}  // namespace symmesh
