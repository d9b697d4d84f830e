#include "core/cluster_spec.hpp"

#include <sstream>

#include "core/errors.hpp"
#include "core/text.hpp"

namespace symmesh {
namespace {

void require_positive(double value, const char* field) {
  if (!(value > 0)) throw InvalidArgument("must be > 0, got " + number_text(value), field);
}

void require_non_negative(double value, const char* field) {
  if (!(value >= 0)) throw InvalidArgument("must be >= 0, got " + number_text(value), field);
}

}  // namespace

void ClusterSpec::validate() const {
  if (nodes < 1)
    throw InvalidArgument("must be >= 1, got " + std::to_string(nodes), "cluster.nodes");
  if (gpus_per_node < 1)
    throw InvalidArgument("must be >= 1, got " + std::to_string(gpus_per_node),
                          "cluster.gpus_per_node");
  if (static_cast<long long>(nodes) * gpus_per_node > (1 << 24))
    throw InvalidArgument("more than 16,777,216 GPUs", "cluster");
  if (gpu.peak_flops_per_s.empty())
    throw InvalidArgument("needs at least one dtype", "cluster.gpu.peak");
  for (const auto& [key, value] : gpu.peak_flops_per_s)
    if (!(value > 0)) throw InvalidArgument("peak for " + key + " must be > 0", "cluster.gpu.peak");
  require_positive(gpu.memory_capacity_bytes, "cluster.gpu.memory.capacity");
  require_positive(gpu.memory_bandwidth_bytes_per_s, "cluster.gpu.memory.bandwidth");
  for (const auto& [key, value] : gpu.gemm_efficiency)
    if (!(value > 0 && value <= 1))
      throw InvalidArgument("must be in (0, 1], got " + number_text(value),
                            "cluster.gpu.gemm_efficiency." + key);
  const double sustained = gpu.memory_sustained_bandwidth_bytes_per_s;
  if (!(sustained >= 0) || sustained > gpu.memory_bandwidth_bytes_per_s)
    throw InvalidArgument("must be > 0 and at most the datasheet bandwidth (" +
                              number_text(gpu.memory_bandwidth_bytes_per_s) + " B/s), got " +
                              number_text(sustained) + " B/s",
                          "cluster.gpu.memory.sustained_bandwidth");
  if (gpu.sm_count < 0)
    throw InvalidArgument("must be >= 1, got " + std::to_string(gpu.sm_count),
                          "cluster.gpu.sm_count");
  if (gpu.launch_overhead_s && !(*gpu.launch_overhead_s >= 0 && *gpu.launch_overhead_s < 1))
    throw InvalidArgument("must be >= 0 and below 1 s, got " + number_text(*gpu.launch_overhead_s),
                          "cluster.gpu.launch_overhead");
  if (intra_node.kind != "nvswitch" && intra_node.kind != "nvlink" && intra_node.kind != "pcie")
    throw InvalidArgument("unknown kind '" + intra_node.kind + "' (nvswitch, nvlink or pcie)",
                          "cluster.intra_node.kind");
  require_positive(intra_node.bandwidth_bytes_per_s, "cluster.intra_node.bandwidth");
  require_non_negative(intra_node.latency_s, "cluster.intra_node.latency");
  if (nodes > 1) {
    if (inter_node.kind != "rail" && inter_node.kind != "fat-tree")
      throw InvalidArgument("unknown kind '" + inter_node.kind + "' (rail or fat-tree)",
                            "cluster.inter_node.kind");
    if (inter_node.nics_per_node < 1)
      throw InvalidArgument("must be >= 1", "cluster.inter_node.nics_per_node");
    if (inter_node.kind == "rail" && inter_node.nics_per_node != gpus_per_node)
      throw InvalidArgument("a rail-optimised network has one NIC per GPU: nics_per_node (" +
                                std::to_string(inter_node.nics_per_node) +
                                ") must equal gpus_per_node (" + std::to_string(gpus_per_node) +
                                ")",
                            "cluster.inter_node.nics_per_node");
    require_positive(inter_node.bandwidth_bytes_per_s, "cluster.inter_node.bandwidth");
    require_non_negative(inter_node.latency_s, "cluster.inter_node.latency");
    require_non_negative(inter_node.spine_latency_s, "cluster.inter_node.spine_latency");
    if (!(inter_node.oversubscription >= 1) || inter_node.oversubscription > 1e6)
      throw InvalidArgument(
          "must be >= 1 (1: non-blocking; 2: a leaf's uplinks carry half of "
          "what its NICs can send), got " +
              number_text(inter_node.oversubscription),
          "cluster.inter_node.oversubscription");
    if (inter_node.nodes_per_leaf < 0)
      throw InvalidArgument("must be >= 1, got " + std::to_string(inter_node.nodes_per_leaf),
                            "cluster.inter_node.nodes_per_leaf");
  }
  collectives.validate();
}

}  // namespace symmesh
