#pragma once
// Clusters for the analytic cost model's tests: DGX-H100-like nodes (NVSwitch 450 GB/s and
// 1 us per GPU per direction; 400 Gb/s = 50 GB/s NICs, 3 us; HBM 3.35 TB/s; bf16
// 989.4 TFLOP/s; 80 GiB) on a rail or fat-tree network.
#include <string>

#include "core/cluster_spec.hpp"

namespace symmesh::strategies::testing {

inline ClusterSpec dgx_cluster(int nodes = 1, const std::string& kind = "rail", int nics = 8,
                               double inter_latency_s = 3e-6) {
  ClusterSpec c;
  c.name = "test-dgx";
  c.nodes = nodes;
  c.gpus_per_node = 8;
  c.gpu.name = "H100";
  c.gpu.peak_flops_per_s = {{"bf16", 989.4e12}, {"fp32", 67e12}};
  c.gpu.memory_capacity_bytes = 80.0 * (1ull << 30);
  c.gpu.memory_bandwidth_bytes_per_s = 3.35e12;
  c.intra_node = {"nvswitch", 450e9, 1e-6};
  c.inter_node = {kind, nics, 50e9, inter_latency_s};
  return c;
}

}  // namespace symmesh::strategies::testing
