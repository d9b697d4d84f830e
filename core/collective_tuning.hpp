#pragma once
// How a collective library (NCCL) runs the plain collectives on one cluster, as a cluster
// file's `collectives:` section states it (docs/scenario-format.md): for each scope (inside
// one node, across nodes) and each collective, the ways NCCL can run it — an algorithm
// (ring, tree, NVLS, pairwise, direct) with a protocol (LL, LL128, Simple) — each with the
// cost shape of NCCL's own tuner (src/graph/tuning.cc: a base latency per algorithm and
// protocol, a per-hop latency times the algorithm's steps, and bytes over a bus bandwidth):
//
//   time = base_latency + steps(algorithm, group) × step_latency
//          + bytes × busbw_factor(collective, p) / bus_bandwidth
//
// busbw_factor is nccl-tests' (core/bus_bandwidth.hpp), so bus_bandwidth is what
// nccl-tests prints as busbw once a size is large enough for the bytes term to dominate.
// core/nccl_cost_model.hpp evaluates it and picks the cheapest way, as NCCL's tuner does.
// Fused collective matmuls and the core's one-sided rings do not use these figures: they
// pay put_signal / wait_signal costs (core/collectives.hpp).
#include <array>
#include <cstdint>
#include <string>
#include <vector>

#include "core/bus_bandwidth.hpp"

namespace symmesh {

// Collectives are named by core/bus_bandwidth.hpp's BandwidthCollective (nccl-tests' set),
// kBandwidthCollectiveCount of them.

// ring: p-1 steps (all-reduce 2(p-1)); tree: NCCL's double binary tree across nodes with a
// chain inside each node, 2 × (ceil(log2 nodes) + ranks_per_node - 1) steps; nvls: NVLink
// SHARP (the NVSwitch reduces; all-reduce inside an NVSwitch node), 0 steps; pairwise: the
// p-1 peers of an all-to-all at once, p-1 steps; direct: one send/recv, 1 step.
enum class LibraryAlgorithm : uint8_t { ring, tree, nvls, pairwise, direct };
std::string to_string(LibraryAlgorithm algorithm);  // "ring", "tree", "nvls", …
bool parse_library_algorithm(const std::string& text, LibraryAlgorithm& out);

// One way to run a collective and its cost. Inside a node bus_bandwidth is per GPU; across
// nodes it is per NIC a group's channels use (core/nccl_cost_model.hpp: NCCL runs a ring
// channel per NIC, all NICs of a node in parallel).
struct CollectiveVariant {
  LibraryAlgorithm algorithm = LibraryAlgorithm::ring;
  std::string protocol = "Simple";  // LL | LL128 | Simple: named in reports
  double base_latency_s = 0;
  double step_latency_s = 0;
  double bus_bandwidth_bytes_per_s = 0;
};

struct CollectiveScopeTuning {
  // Indexed by BandwidthCollective; an empty list: the cluster does not say (an error when
  // a group of that scope runs that collective).
  std::array<std::vector<CollectiveVariant>, kBandwidthCollectiveCount> variants;
  const std::vector<CollectiveVariant>& of(BandwidthCollective op) const {
    return variants[static_cast<int>(op)];
  }
  std::vector<CollectiveVariant>& of(BandwidthCollective op) {
    return variants[static_cast<int>(op)];
  }
  bool empty() const;
};

struct CollectiveTuning {
  CollectiveScopeTuning intra_node;  // groups inside one node
  CollectiveScopeTuning inter_node;  // groups that span nodes
  bool empty() const { return intra_node.empty() && inter_node.empty(); }
  // Throws InvalidArgument naming the field ("cluster.collectives.intra_node.all_reduce[1]
  // .bus_bandwidth") for non-positive bandwidths, negative latencies, an NVLS variant
  // outside intra_node all_reduce / all_gather / reduce_scatter, a tree outside all_reduce.
  void validate() const;
};

}  // namespace symmesh
