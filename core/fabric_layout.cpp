#include "core/fabric_layout.hpp"

#include <algorithm>

namespace symmesh {

FabricLayout::FabricLayout(const ClusterSpec& cluster)
    : c_{cluster.nodes, cluster.gpus_per_node, cluster.inter_node.bandwidth_bytes_per_s,
         cluster.inter_node.oversubscription} {
  nics_ = std::max(1, cluster.inter_node.nics_per_node);
  const int per_leaf = cluster.inter_node.nodes_per_leaf;
  nodes_per_leaf_ = per_leaf <= 0 ? cluster.nodes : std::min(per_leaf, cluster.nodes);
  groups_ = (cluster.nodes + nodes_per_leaf_ - 1) / nodes_per_leaf_;
  rail_ = cluster.inter_node.kind != "fat-tree";
  leaves_ = rail_ ? groups_ * nics_ : groups_;
}

int FabricLayout::nic_of_gpu(int gpu_in_node) const {
  return static_cast<int>(static_cast<long long>(gpu_in_node) * nics_ / c_.gpus_per_node);
}

int FabricLayout::nic_slot(int rank) const {
  return c_.node_of(rank) * nics_ + nic_of_gpu(rank % c_.gpus_per_node);
}

int FabricLayout::leaf_of(int rank) const {
  const int group = c_.node_of(rank) / nodes_per_leaf_;
  return rail_ ? group * nics_ + nic_of_gpu(rank % c_.gpus_per_node) : group;
}

bool FabricLayout::crosses_spine(int src_rank, int dst_rank) const {
  return c_.node_of(src_rank) != c_.node_of(dst_rank) && leaf_of(src_rank) != leaf_of(dst_rank);
}

double FabricLayout::uplink_bytes_per_s(int leaf) const {
  const int group = rail_ ? leaf / nics_ : leaf;
  const int nodes = std::min(nodes_per_leaf_, c_.nodes - group * nodes_per_leaf_);
  const int nics_on_leaf = nodes * (rail_ ? 1 : nics_);
  return nics_on_leaf * c_.nic_bandwidth_bytes_per_s / c_.oversubscription;
}

}  // namespace symmesh
