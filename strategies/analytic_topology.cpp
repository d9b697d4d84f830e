#include "strategies/analytic_topology.hpp"

#include <algorithm>

#include "core/errors.hpp"
#include "core/fabric_layout.hpp"

namespace symmesh::strategies {
namespace {

struct StepFigures {
  double latency_s = 0;
  double s_per_byte = 0;
  int nic_sharing = 1;
  bool crosses_nodes = false;
};

// The flows of one step on every group of a dim: rank i of each group sends to rank
// (i + shift) mod p of the same group.
StepFigures step_figures(const ClusterSpec& c, const FabricLayout& fabric,
                         const std::vector<std::vector<int>>& groups, int shift) {
  const size_t nic_slots = static_cast<size_t>(c.nodes) * fabric.nics_per_node();
  std::vector<int> up(nic_slots, 0), down(nic_slots, 0);
  // Flows leaving each leaf for the spine, and entering each from it.
  std::vector<int> leaf_up(c.nodes > 1 ? fabric.leaf_count() : 0, 0), leaf_down(leaf_up);
  StepFigures out;
  for (const auto& group : groups) {
    const int p = static_cast<int>(group.size());
    for (int i = 0; i < p; ++i) {
      const int src = group[i], dst = group[(i + shift) % p];
      if (c.node_of(src) == c.node_of(dst)) {
        out.latency_s = std::max(out.latency_s, c.intra_node.latency_s);
        out.s_per_byte = std::max(out.s_per_byte, 1.0 / c.intra_node.bandwidth_bytes_per_s);
      } else {
        ++up[fabric.nic_slot(src)];
        ++down[fabric.nic_slot(dst)];
        if (fabric.crosses_spine(src, dst)) {
          ++leaf_up[fabric.leaf_of(src)];
          ++leaf_down[fabric.leaf_of(dst)];
        }
        out.crosses_nodes = true;
      }
    }
  }
  if (!out.crosses_nodes) return out;
  for (const auto& group : groups) {
    const int p = static_cast<int>(group.size());
    for (int i = 0; i < p; ++i) {
      const int src = group[i], dst = group[(i + shift) % p];
      if (c.node_of(src) == c.node_of(dst)) continue;
      const int sharing = std::max(up[fabric.nic_slot(src)], down[fabric.nic_slot(dst)]);
      out.nic_sharing = std::max(out.nic_sharing, sharing);
      double latency_s = c.inter_node.latency_s;
      double s_per_byte = sharing / c.inter_node.bandwidth_bytes_per_s;
      if (fabric.crosses_spine(src, dst)) {
        const int from = fabric.leaf_of(src), to = fabric.leaf_of(dst);
        latency_s += c.inter_node.spine_latency_s;
        s_per_byte = std::max({s_per_byte, leaf_up[from] / fabric.uplink_bytes_per_s(from),
                               leaf_down[to] / fabric.uplink_bytes_per_s(to)});
      }
      out.latency_s = std::max(out.latency_s, latency_s);
      out.s_per_byte = std::max(out.s_per_byte, s_per_byte);
    }
  }
  return out;
}

}  // namespace

AnalyticTopology AnalyticTopology::of(const ClusterSpec& cluster, const DeviceMesh& mesh,
                                      bool with_all_to_all) {
  cluster.validate();
  if (mesh.size() > cluster.num_gpus())
    throw InvalidArgument("mesh " + to_string(mesh) + " has " + std::to_string(mesh.size()) +
                              " ranks but the cluster '" + cluster.name + "' has " +
                              std::to_string(cluster.num_gpus()) + " GPUs",
                          "--mesh");
  AnalyticTopology topo;
  if (!cluster.collectives.empty()) topo.library = std::make_shared<const ClusterSpec>(cluster);
  const FabricLayout fabric(cluster);
  for (int d = 0; d < mesh.ndim(); ++d) {
    MeshDimLinks links;
    links.size = mesh.size(d);
    if (links.size > 1) {
      const auto groups = mesh.groups(d);
      links.group = geometry_of(cluster, groups.front(), mesh.size());
      const StepFigures ring = step_figures(cluster, fabric, groups, 1);
      links.spans_nodes = ring.crosses_nodes;
      links.nic_sharing = ring.nic_sharing;
      links.ring_latency_s = ring.latency_s;
      links.ring_s_per_byte = ring.s_per_byte;
      for (int s = 1; with_all_to_all && s < links.size; ++s) {
        const StepFigures step = s == 1 ? ring : step_figures(cluster, fabric, groups, s);
        links.a2a_latency_s += step.latency_s;
        links.a2a_s_per_byte += step.s_per_byte;
        links.spans_nodes |= step.crosses_nodes;
      }
    }
    topo.dims.push_back(links);
  }
  return topo;
}

double ring_all_gather_s(const MeshDimLinks& links, double chunk_bytes) {
  return (links.size - 1) * (links.ring_latency_s + chunk_bytes * links.ring_s_per_byte);
}

double ring_all_reduce_s(const MeshDimLinks& links, double chunk_bytes) {
  return 2 * ring_all_gather_s(links, chunk_bytes);
}

double pairwise_all_to_all_s(const MeshDimLinks& links, double chunk_bytes) {
  return links.a2a_latency_s + chunk_bytes * links.a2a_s_per_byte;
}

double collective_s(const AnalyticTopology& topo, int dim, BandwidthCollective op,
                    double chunk_bytes) {
  const MeshDimLinks& links = topo.dims.at(dim);
  if (links.size <= 1) return 0;
  if (topo.library) return library_collective_s(topo, dim, op, chunk_bytes * links.size);
  return op == BandwidthCollective::all_reduce ? ring_all_reduce_s(links, chunk_bytes)
                                               : ring_all_gather_s(links, chunk_bytes);
}

double library_collective_s(const AnalyticTopology& topo, int dim, BandwidthCollective op,
                            double bytes) {
  if (!topo.library)
    throw InvalidArgument("the cluster has no collectives: section", "analytic topology");
  return estimate_library_collective(*topo.library, op, topo.dims.at(dim).group, bytes).time_s;
}

}  // namespace symmesh::strategies
