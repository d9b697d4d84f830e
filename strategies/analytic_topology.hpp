#pragma once
// Alpha-beta figures per mesh dim, derived from the cluster and the mesh, for the analytic
// cost model (strategies/analytic_cost_model.hpp).
//
// Layout. Ranks are node-major (GPU g of node n is rank n·gpus_per_node + g) and the mesh
// is laid row-major over them, last mesh dim fastest: mesh rank r is GPU r (the mesh may
// cover fewer GPUs than the cluster has, from GPU 0). A collective on mesh dim d runs on
// every group of d at once, as plan lowering issues it.
//
// The rule. Each step of a collective is a set of flows, one per rank (ring: to the next
// rank of the group; pairwise all-to-all step s: to the rank s further on). A flow
// between two GPUs of one node takes intra_node latency and bandwidth (every GPU has its
// own NVSwitch/NVLink/PCIe port in each direction, so one flow per GPU shares nothing).
// A flow between nodes takes inter_node latency and its NIC's bandwidth divided by the
// number of the step's flows that use the same NIC in the same direction (leaving through
// the sender's NIC, entering through the receiver's), where GPU g uses NIC
// floor(g·nics_per_node / gpus_per_node), as sim/platform_builder.hpp wires it:
//   - rail (nics_per_node = gpus_per_node): every GPU has its own NIC, so no sharing;
//   - fat-tree with fewer NICs than GPUs: the GPUs of a node that take part in the step
//     share its NICs (dp across 4 nodes with 8 GPUs and 2 NICs per node: 4 flows a NIC).
// A flow that crosses the spine (core/fabric_layout.hpp: cross-rail, or between leaves)
// adds inter_node.spine_latency, and its bandwidth is also limited by the uplink of the
// leaf it leaves and the downlink of the leaf it enters, each divided by the number of the
// step's flows crossing it in that direction (uplink = the leaf's NICs' bandwidth /
// oversubscription): with 2 leaves of 2 nodes, 8 NICs a node at 50 GB/s and
// oversubscription 2, a leaf's uplink carries 400 GB/s, and 16 flows leaving it get 25 GB/s.
// A step lasts as long as its slowest flow: latency = the largest flow latency and
// seconds per byte = the largest (sharing / bandwidth). The ring steps of a dim all see the
// same flows, so ring collectives use one (α, s/B) pair per dim; all-to-all steps differ,
// so their latencies and seconds per byte are summed over the p-1 steps.
//
// Limits. The spine is taken as non-blocking (only the leaves' uplinks limit), and flows
// get equal shares of a NIC or an uplink (no congestion control, no adaptive routing, no
// PXN routing of cross-rail traffic through NVLink). Only the
// collective's own flows are counted: traffic of other ops running at the same time
// (overlap, other streams) is not — that is what the simulated model adds. Taking the
// slowest flow's latency and bandwidth together is exact when one flow is slowest in both
// (inter-node flows against NVLink ones) and an upper bound otherwise. A ring whose groups
// mix intra- and inter-node hops is priced as if every hop were its slowest one, which is
// what a step-synchronous ring does: each rank forwards a chunk only after receiving it.
// Rings and all-to-alls whose groups hold one GPU per node (or stay in one node) agree with
// the simulator exactly (tests/tools/cost_model_agreement_test.cpp). A pairwise all-to-all
// whose groups mix intra- and inter-node peers (mesh [32] on 4 nodes) does not: ranks with
// peers in their node run ahead, and flows of different steps meet on one NIC; the
// simulator measures it 20-40% slower than this per-step form.
#include <memory>
#include <vector>

#include "core/cluster_spec.hpp"
#include "core/device_mesh.hpp"
#include "core/nccl_cost_model.hpp"

namespace symmesh::strategies {

struct MeshDimLinks {
  int size = 1;
  bool spans_nodes = false;  // some group of this dim has ranks on two nodes
  int nic_sharing = 1;       // most flows sharing one NIC direction in a ring step
  // One ring step (all-gather, reduce-scatter, each half of all-reduce) of c bytes takes
  // ring_latency_s + c · ring_s_per_byte.
  double ring_latency_s = 0;
  double ring_s_per_byte = 0;
  // A pairwise all-to-all of c-byte chunks takes a2a_latency_s + c · a2a_s_per_byte
  // (sums over its p-1 steps).
  double a2a_latency_s = 0;
  double a2a_s_per_byte = 0;
  // The shape of this dim's groups (all alike: the mesh is laid row-major over the GPUs),
  // for the plain collectives NCCL runs (core/nccl_cost_model.hpp).
  GroupGeometry group;
};

struct AnalyticTopology {
  std::vector<MeshDimLinks> dims;  // one per mesh dim
  // Set when the cluster has a collectives: section: plain collectives (all-gather,
  // reduce-scatter, all-reduce, all-to-all) are then priced as NCCL runs them
  // (library_collective_s), as the simulator runs them (core/library_collectives.hpp).
  std::shared_ptr<const ClusterSpec> library;

  // Throws InvalidArgument when the mesh has more ranks than the cluster has GPUs, or the
  // cluster is invalid.
  // Without `with_all_to_all` the all-to-all figures stay 0: they cost p - 1 passes over
  // every group, which a caller pricing only rings (strategies/training_step_estimate.hpp,
  // on thousands of ranks) does not need.
  static AnalyticTopology of(const ClusterSpec& cluster, const DeviceMesh& mesh,
                             bool with_all_to_all = true);
};

// Closed forms of core/collectives.hpp on one mesh dim, c = the padded chunk in bytes:
// all-gather and reduce-scatter (p-1)(α + c/β), all-reduce 2(p-1)(α + c/β), all-to-all
// Σ_s (α_s + c/β_s). In seconds.
double ring_all_gather_s(const MeshDimLinks& links, double chunk_bytes);
double ring_all_reduce_s(const MeshDimLinks& links, double chunk_bytes);
double pairwise_all_to_all_s(const MeshDimLinks& links, double chunk_bytes);

// A plain collective (all_gather, reduce_scatter, all_reduce) whose chunk per rank is
// `chunk_bytes` on mesh dim `dim`, in seconds: as NCCL runs it when topo.library is set,
// else the core's one-sided ring (the closed forms above).
double collective_s(const AnalyticTopology& topo, int dim, BandwidthCollective op,
                    double chunk_bytes);

// A plain collective of `bytes` (nccl-tests size) on mesh dim `dim` as NCCL runs it, in
// seconds; requires topo.library.
double library_collective_s(const AnalyticTopology& topo, int dim, BandwidthCollective op,
                            double bytes);

}  // namespace symmesh::strategies
