#pragma once
// What a plain collective costs when a collective library (NCCL) runs it: the cluster's
// `collectives:` figures (core/collective_tuning.hpp) applied to one group, the cheapest
// way chosen as NCCL's tuner chooses (the least predicted time over every algorithm and
// protocol the cluster lists, ties to the first listed).
//
// Groups inside one node use collectives.intra_node. Groups spanning nodes use
// collectives.inter_node, whose bus bandwidth is per NIC: NCCL builds one ring (channel) per
// NIC and runs them over all NICs of a node in parallel (each channel enters and leaves
// every node once, through its own NIC). The per-NIC figure is read as a node's budget
// shared out: what each NIC carried while all NICs of the node were busy (the way the
// shipped figures were fitted, from whole-node runs). So a group's bus bandwidth is
//
//   min(per-NIC figure × nics_per_node / groups_per_node,    its share of the node's budget
//       NICs it uses × the NIC's line rate)                   what its own NICs can carry
//   NICs it uses = min(ranks_per_node × nics_per_node / gpus_per_node,
//                      nics_per_node / groups_per_node)
//
// — a rank reaches its own NIC(s) (one per GPU on a rail-optimised DGX), and the groups of
// one mesh dim that share a node run at once and split its NICs. On 4 DGX H100 nodes
// (8 NICs of 400 Gb/s each) one all-reduce over all 32 GPUs uses all 8 NICs per node; the
// 8 data-parallel groups of mesh [4, 8] (one GPU per node each) use one NIC each, at the
// per-NIC figure. A group with one GPU per node and the node's other GPUs idle uses one NIC,
// which then runs at up to its line rate (cluster.inter_node.bandwidth): xxrjun's 10x1 H100
// runs reach 48.9 GB/s busbw on one 400 Gb/s NIC, while the 8 NICs of the 10x8 runs carry
// 40 GB/s each (tools/validation/published/SOURCES.md).
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

// The group's share of its busiest node's budget, in NICs: nics_per_node / groups_per_node
// (≥ group_nics); 1 inside one node. calibrate divides a measured bus bandwidth by it, the
// inverse of group_bus_bandwidth below where the line rate does not bind.
double group_nic_share(const ClusterSpec& cluster, const GroupGeometry& group);

// The group's bus bandwidth from a variant's figure (per NIC across nodes, per GPU inside
// one node), by the header's rule.
double group_bus_bandwidth(const ClusterSpec& cluster, const GroupGeometry& group,
                           double figure_bytes_per_s);

// The algorithm's step count (core/collective_tuning.hpp's definitions).
int algorithm_steps(LibraryAlgorithm algorithm, BandwidthCollective op, const GroupGeometry& group);

}  // namespace symmesh
