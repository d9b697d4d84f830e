#pragma once
// The modelled cluster as a SimGrid platform, built with the S4U API from a ClusterSpec,
// and the network-model configuration that makes its transfer times exact.
//
//   rail-optimised: one switch per NIC index        fat-tree: one non-blocking core
//
//     rail 0    rail 1   ...  rail 7                          core
//     |    |    |    |        |    |                      /   /  |  |   |
//   n0.NIC0 n1.NIC0 ...     n0.NIC7 n1.NIC7            every NIC of every node
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
// In SimGrid terms:
//   root (full zone)
//   ├─ node0 (full zone): hosts gpu0…gpu7, router node0_gw
//   │    gpuA → gpuB     : [gpuA_nvl_up, gpuB_nvl_down]          (NVSwitch inside a node)
//   │    gpuA → node0_gw : [node0_nicX_up]   X = NIC of gpuA     (leaving the node)
//   │    node0_gw → gpuB : [node0_nicY_down] Y = NIC of gpuB     (entering the node)
//   ├─ node1 …
//   └─ node_i → node_j : gateways node_i_gw → node_j_gw over node_i's FATPIPE fabric port
//      (no latency, unlimited bandwidth: the rail switches / the core are non-blocking, so
//      the only shared resources are the GPUs' NVLink ports and the NICs).
//
// Every link is one direction (separate up and down links), so both directions have full
// bandwidth. An uncontended GPU→GPU transfer of b bytes therefore takes
//   intra_node.latency + b / intra_node.bandwidth    inside a node,
//   inter_node.latency + b / inter_node.bandwidth    between nodes,
// once configure_network_model() has removed SimGrid's default corrections (below).
// GPU g uses NIC floor(g × nics_per_node / gpus_per_node): its own NIC on a rail network
// (nics = GPUs), a shared one when a fat-tree node has fewer NICs than GPUs. Cross-rail
// traffic is modelled like same-rail traffic (a non-blocking spine at no extra latency).
//
// Routes are stored per node pair at the root and per GPU pair inside a node, so the
// platform grows as nodes² + nodes × (gpus_per_node + 1)² — 1,024 GPUs cost a few MB.
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
