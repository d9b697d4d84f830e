#pragma once
// The modelled cluster as a SimGrid platform, built with the S4U API from a ClusterSpec,
// and the network-model configuration that makes its transfer times exact.
//
//   rail-optimised (nodes_per_leaf = 2, 4 nodes)       fat-tree (nodes_per_leaf = 2, 4 nodes)
//
//                    spine (non-blocking)                      spine (non-blocking)
//        /      |        \        \   \  <- uplinks:          /              \
//   leaf(0,0) leaf(0,1) … leaf(1,0) …   NICs' bw / over-      leaf 0           leaf 1
//    |    |    |    |                   subscription       / | … \          / | … \
//   n0.NIC0 n1.NIC0 n0.NIC1 …           each direction    every NIC of     every NIC of
//   (rail x of group k: leaf (k, x))                      nodes 0 and 1    nodes 2 and 3
//
//   one node (gpus_per_node = 8, one NIC per GPU):
//   +-------------------------------------------------------------+
//   |  NIC0     NIC1     ...     NIC7                             |
//   |   ^|       ^|               ^|   nic_up / nic_down:          |
//   |   |v       |v               |v   inter_node.bandwidth,       |
//   |  gpu0     gpu1     ...     gpu7   inter_node.latency / 2 each |
//   |   ^|       ^|               ^|   nvl_up / nvl_down:          |
//   |   |v       |v               |v   intra_node.bandwidth,       |
//   |  ========== NVSwitch (non-blocking) ==========  intra_node.latency / 2 each
//   +-------------------------------------------------------------+
//
// Which leaf a NIC is on and which flows cross the spine: core/fabric_layout.hpp (one rule
// for this platform and the analytic model). In SimGrid terms, one zone holds every GPU
// and computes a route from the two ranks when a comm asks for it:
//   same node        : [gpuA_nvl_up, gpuB_nvl_down]                        (NVSwitch)
//   same leaf        : [nodeN_nicX_up, nodeM_nicY_down]                    (leaf turns it)
//   across the spine : [nodeN_nicX_up, leafL_spine_up, leafK_spine_down, nodeM_nicY_down]
// where leafL_spine_up/down carry uplink = (NICs on the leaf) × inter_node.bandwidth /
// inter_node.oversubscription and inter_node.spine_latency / 2 each. The spine itself is
// non-blocking: the shared resources are the NVLink ports, the NICs and the leaf uplinks.
//
// Every link is one direction (separate up and down links), so both directions have full
// bandwidth. An uncontended GPU→GPU transfer of b bytes therefore takes
//   intra_node.latency + b / intra_node.bandwidth                         inside a node,
//   inter_node.latency + b / inter_node.bandwidth                         under one leaf,
//   inter_node.latency + spine_latency + b / min(inter_node.bandwidth, uplink)
//                                                                         across the spine,
// and k flows crossing one leaf uplink in one direction (and nothing narrower) each get
// uplink / k, once configure_network_model() has removed SimGrid's default corrections.
// GPU g uses NIC floor(g × nics_per_node / gpus_per_node): its own NIC on a rail network
// (nics = GPUs), a shared one when a fat-tree node has fewer NICs than GPUs. With the
// defaults (nodes_per_leaf: all nodes, oversubscription 1) a fat-tree is one leaf, and on a
// rail network only cross-rail flows reach the spine, at no bandwidth cost.
//
// Nothing is stored per pair of GPUs: the platform grows as GPUs + NICs + leaves (links
// and hosts), and building it for 1,024 GPUs takes milliseconds.
#include <vector>

#include "core/cluster_spec.hpp"

namespace simgrid::s4u {
class Host;
}

namespace symmesh::sim {

// A host's nominal speed. Compute durations come from sim/compute_model.hpp; an op of
// duration d executes d × kHostFlopsPerS flops, so alone on its GPU it takes exactly d and
// two streams computing at once on one GPU share it.
inline constexpr double kHostFlopsPerS = 1e12;

// Must run after the Engine exists and before the platform is built. Selects CM02 (no
// latency ×13.01, no bandwidth ×0.97, no weight-S), no cross-traffic (a flow does not load
// the reverse path), no TCP-gamma window cap (TCP-gamma 0 disables it in 3.32), latency
// and bandwidth factors 1, and silences SimGrid's configuration log lines.
void configure_network_model();

// Builds the platform for `cluster` (validated first) in the current Engine and returns
// the hosts by rank: GPU g of node n is rank n × gpus_per_node + g.
std::vector<simgrid::s4u::Host*> build_platform(const ClusterSpec& cluster);

}  // namespace symmesh::sim
