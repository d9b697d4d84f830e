#pragma once
// Which switches a GPU-to-GPU flow crosses between nodes: the one rule that
// sim/platform_builder.hpp wires and strategies/analytic_topology.hpp prices.
//
// GPU g of a node uses NIC floor(g × nics_per_node / gpus_per_node). Nodes are grouped in
// order, nodes_per_leaf at a time (the last group may be smaller; nodes_per_leaf 0 or
// >= nodes: one group). The leaves:
//   rail:     one leaf per (group, NIC index): NIC x of every node of a group is on leaf
//             (group, x), the "rail switch" x of that group (a scalable unit of a DGX
//             SuperPOD: 32 nodes, 8 rail leaves);
//   fat-tree: one leaf per group, holding every NIC of its nodes.
// A flow between NICs on the same leaf turns around at the leaf. Any other inter-node flow
// (cross-rail, or between groups) goes up its leaf's uplink to the non-blocking spine and
// down the far leaf's downlink, paying inter_node.spine_latency on top of
// inter_node.latency. Each leaf's uplink (and its downlink from the spine) carries, in each
// direction, the bandwidth of the NICs attached to it divided by inter_node.oversubscription.
// PXN (NCCL moving a cross-rail chunk over NVLink to the GPU on the destination's rail
// first) is not modelled: a cross-rail put goes through the spine.
#include "core/cluster_spec.hpp"

namespace symmesh {

class FabricLayout {
 public:
  explicit FabricLayout(const ClusterSpec& cluster);

  int nics_per_node() const { return nics_; }
  int nic_of_gpu(int gpu_in_node) const;  // NIC index inside the node
  int nic_slot(int rank) const;           // node × nics_per_node + NIC index
  int leaf_count() const { return leaves_; }
  int leaf_of(int rank) const;
  // Both ranks on different nodes and on different leaves.
  bool crosses_spine(int src_rank, int dst_rank) const;
  // One direction of leaf `leaf`'s link to the spine, bytes/s.
  double uplink_bytes_per_s(int leaf) const;

 private:
  // The figures it needs, copied: a layout may outlive the ClusterSpec it was made from
  // (a temporary).
  struct Figures {
    int nodes = 1;
    int gpus_per_node = 1;
    double nic_bandwidth_bytes_per_s = 0;
    double oversubscription = 1;
    int node_of(int rank) const { return rank / gpus_per_node; }
  };
  Figures c_;
  int nics_ = 1;
  int nodes_per_leaf_ = 1;
  int groups_ = 1;
  int leaves_ = 1;
  bool rail_ = true;
};

}  // namespace symmesh
