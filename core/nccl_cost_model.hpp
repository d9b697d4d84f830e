#pragma once
// What a plain collective costs when a collective library (NCCL) runs it: the cluster's
// `collectives:` figures (core/collective_tuning.hpp) applied to one group, the cheapest
// way chosen as NCCL's tuner chooses (the least predicted time over every algorithm and
// protocol the cluster lists, ties to the first listed).
//
// Groups inside one node use collectives.intra_node. Groups spanning nodes use
// collectives.inter_node, whose bus bandwidth is per NIC: NCCL builds one ring (channel) per
// NIC and runs them over all NICs of a node in parallel (each channel enters and leaves
// every node once, through its own NIC), so a group's bus bandwidth is
//
//   per-NIC bus bandwidth × NICs the group can use on its busiest node, where
//   NICs it can use = min(ranks_per_node × nics_per_node / gpus_per_node,
//                         nics_per_node / groups_per_node)
//
// — a rank reaches its own NIC(s) (one per GPU on a rail-optimised DGX), and the groups of
// one mesh dim that share a node run at once and split its NICs. On 4 DGX H100 nodes
// (8 NICs of 400 Gb/s each) one all-reduce over all 32 GPUs uses all 8 NICs per node; the
// 8 data-parallel groups of mesh [4, 8] (one GPU per node each) use one NIC each.
//
// groups_per_node is what plan lowering runs: a collective on a mesh dim runs on every group
// of that dim at once, so a node's GPUs in the world divide into groups of ranks_per_node.
#include <cstdint>
#include <string>
#include <vector>

#include "core/cluster_spec.hpp"
#include "core/collective_tuning.hpp"

namespace symmesh {

struct GroupGeometry {
  int ranks = 1;            // p
  int nodes = 1;            // nodes holding at least one of its ranks
  int ranks_per_node = 1;   // most of its ranks on one node
  int groups_per_node = 1;  // groups of this shape sharing that node's NICs
};

// The geometry of the group of world ranks `ranks` when `world_size` ranks (GPUs 0…
// world_size-1) each run such a collective at once. Throws InvalidArgument for an empty
// group or a rank outside the cluster.
GroupGeometry geometry_of(const ClusterSpec& cluster, const std::vector<int>& ranks,
                          int world_size);

struct LibraryEstimate {
  LibraryAlgorithm algorithm = LibraryAlgorithm::ring;
  std::string protocol;
  bool inter_node = false;  // priced with collectives.inter_node
  double time_s = 0;
  double base_latency_s = 0;  // its parts: base, steps × step latency, bytes term
  double steps_latency_s = 0;
  double bandwidth_s = 0;
  double bus_bandwidth_bytes_per_s = 0;  // the group's (per-NIC figure × NICs across nodes)
  std::string name() const;              // "ring/LL128", "nvls/Simple"; "none" for p = 1
};

// `bytes` in nccl-tests' convention (core/bus_bandwidth.hpp). A one-rank group costs 0
// ("none"). Throws InvalidArgument naming cluster.collectives.<scope>.<collective> when the
// cluster has no `collectives:` section or lists no way to run it.
LibraryEstimate estimate_library_collective(const ClusterSpec& cluster, BandwidthCollective op,
                                            const GroupGeometry& group, double bytes);

// The NICs a group spanning nodes uses on its busiest node (the header's rule); 1 for a
// group inside one node, whose bus bandwidth is per GPU.
double group_nics(const ClusterSpec& cluster, const GroupGeometry& group);

// The algorithm's step count (core/collective_tuning.hpp's definitions).
int algorithm_steps(LibraryAlgorithm algorithm, BandwidthCollective op, const GroupGeometry& group);

}  // namespace symmesh
