#include "core/nccl_cost_model.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <map>

#include "core/errors.hpp"

namespace symmesh {

GroupGeometry geometry_of(const ClusterSpec& cluster, const std::vector<int>& ranks,
                          int world_size) {
  if (ranks.empty()) throw InvalidArgument("an empty group", "collective group");
  std::map<int, int> per_node;
  for (int r : ranks) {
    if (r < 0 || r >= cluster.num_gpus())
      throw InvalidArgument("rank " + std::to_string(r) + " is outside the cluster's " +
                                std::to_string(cluster.num_gpus()) + " GPUs",
                            "collective group");
    ++per_node[cluster.node_of(r)];
  }
  GroupGeometry g;
  g.ranks = static_cast<int>(ranks.size());
  g.nodes = static_cast<int>(per_node.size());
  int busiest = per_node.begin()->first;
  for (const auto& [node, count] : per_node)
    if (count > g.ranks_per_node) g.ranks_per_node = count, busiest = node;
  // GPUs of the busiest node inside the world (ranks 0 … world_size-1), each in a group of
  // this shape running at the same time.
  const int first = busiest * cluster.gpus_per_node;
  const int in_world = std::clamp(world_size - first, 0, cluster.gpus_per_node);
  g.groups_per_node = std::max(1, in_world / g.ranks_per_node);
  return g;
}

int algorithm_steps(LibraryAlgorithm algorithm, BandwidthCollective op,
                    const GroupGeometry& group) {
  const int p = group.ranks;
  switch (algorithm) {
    case LibraryAlgorithm::ring:
      return op == BandwidthCollective::all_reduce ? 2 * (p - 1) : p - 1;
    case LibraryAlgorithm::tree: {
      int levels = 0;
      while ((1 << levels) < group.nodes) ++levels;  // ceil(log2 nodes)
      return 2 * (levels + group.ranks_per_node - 1);
    }
    case LibraryAlgorithm::nvls:
      return 0;
    case LibraryAlgorithm::pairwise:
      return p - 1;
    case LibraryAlgorithm::direct:
      return 1;
  }
  return 0;
}

double group_nics(const ClusterSpec& cluster, const GroupGeometry& group) {
  if (group.nodes <= 1) return 1;
  const double nics = cluster.inter_node.nics_per_node;
  return std::min(group.ranks_per_node * nics / cluster.gpus_per_node,
                  nics / group.groups_per_node);
}

double group_nic_share(const ClusterSpec& cluster, const GroupGeometry& group) {
  if (group.nodes <= 1) return 1;
  return static_cast<double>(cluster.inter_node.nics_per_node) / group.groups_per_node;
}

double group_bus_bandwidth(const ClusterSpec& cluster, const GroupGeometry& group,
                           double figure_bytes_per_s) {
  if (group.nodes <= 1) return figure_bytes_per_s;
  const double budget = figure_bytes_per_s * group_nic_share(cluster, group);
  const double line_rate = cluster.inter_node.bandwidth_bytes_per_s;
  // A cluster without a NIC rate (0) has no line-rate ceiling.
  if (line_rate <= 0) return budget;
  return std::min(budget, group_nics(cluster, group) * line_rate);
}

std::string LibraryEstimate::name() const {
  if (protocol.empty()) return "none";
  return to_string(algorithm) + "/" + protocol;
}

LibraryEstimate estimate_library_collective(const ClusterSpec& cluster, BandwidthCollective op,
                                            const GroupGeometry& group, double bytes) {
  LibraryEstimate best;
  if (group.ranks <= 1) return best;
  const bool inter = group.nodes > 1;
  const CollectiveScopeTuning& scope =
      inter ? cluster.collectives.inter_node : cluster.collectives.intra_node;
  const std::vector<CollectiveVariant>& variants = scope.of(op);
  if (variants.empty()) {
    const std::string field = std::string("cluster.collectives.") +
                              (inter ? "inter_node" : "intra_node") + "." + to_string(op);
    throw InvalidArgument(
        cluster.collectives.empty()
            ? "cluster '" + cluster.name +
                  "' has no collectives: section, so it cannot price a collective as NCCL runs "
                  "it (run collectives one-sided, or add the section: docs/scenario-format.md)"
            : "cluster '" + cluster.name + "' lists no way to run " + to_string(op) +
                  (inter ? " across nodes" : " inside a node"),
        field);
  }
  const double bus_bytes = bytes * bus_bandwidth_factor(op, group.ranks);
  best.time_s = std::numeric_limits<double>::infinity();
  for (const CollectiveVariant& v : variants) {
    LibraryEstimate e;
    e.algorithm = v.algorithm;
    e.protocol = v.protocol;
    e.inter_node = inter;
    e.bus_bandwidth_bytes_per_s = group_bus_bandwidth(cluster, group, v.bus_bandwidth_bytes_per_s);
    e.base_latency_s = v.base_latency_s;
    e.steps_latency_s = algorithm_steps(v.algorithm, op, group) * v.step_latency_s;
    e.bandwidth_s = bus_bytes / e.bus_bandwidth_bytes_per_s;
    e.time_s = e.base_latency_s + e.steps_latency_s + e.bandwidth_s;
    if (e.time_s < best.time_s) best = e;
  }
  return best;
}

}  // namespace symmesh
