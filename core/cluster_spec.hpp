#pragma once
// A GPU cluster as a scenario describes it (docs/scenario-format.md,
// `cluster:`), in SI units: bytes, bytes/s, seconds, FLOP/s. Filled by the scenario
// loader; read by the simulator's platform builder and the analytic cost model.
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "core/collective_tuning.hpp"

namespace symmesh {

struct GpuSpec {
  std::string name;
  // Dense peak per dtype family ("bf16", "fp16", "fp32", "fp8", …; see peak_key(DType)).
  std::map<std::string, double> peak_flops_per_s;
  double memory_capacity_bytes = 0;
  double memory_bandwidth_bytes_per_s = 0;  // the datasheet figure
  // Optional refinements of the roofline (core/roofline.hpp); each absent one leaves the
  // roofline's default, so a cluster file without them prices as before they existed.
  // Fraction of each dtype family's peak a large GEMM reaches (keys as peak_flops_per_s),
  // in (0, 1]; a family not listed uses roofline::kPeakEfficiency.
  std::map<std::string, double> gemm_efficiency;
  // What HBM-bound kernels sustain (0: the datasheet memory_bandwidth_bytes_per_s).
  double memory_sustained_bandwidth_bytes_per_s = 0;
  // Streaming multiprocessors: > 0 prices GEMMs' waves of output tiles (0: no waves).
  int sm_count = 0;
  // Fixed cost of one kernel launch (absent: roofline::kLaunchOverhead_s).
  std::optional<double> launch_overhead_s;
};

// Inside a node: what one GPU can send in one direction, and the one-way latency.
struct IntraNodeSpec {
  std::string kind = "nvswitch";  // nvswitch | nvlink | pcie
  double bandwidth_bytes_per_s = 0;
  double latency_s = 0;
};

// Between nodes: rail-optimised (NIC g of every node on rail switch g) or a fat-tree.
// Leaves hold nodes_per_leaf nodes (rail: one leaf per NIC index per group of nodes;
// fat-tree: one leaf per group, all its NICs); a flow between two leaves goes up to the
// spine (core/fabric_layout.hpp says which flows do, sim/platform_builder.hpp how).
struct InterNodeSpec {
  // An assumption, not a datasheet figure: two more switch traversals (spine and the far
  // leaf) of a few hundred ns each on NDR InfiniBand, plus cabling.
  static constexpr double kDefaultSpineLatencyS = 0.5e-6;

  std::string kind = "rail";  // rail | fat-tree
  int nics_per_node = 0;
  double bandwidth_bytes_per_s = 0;                // per NIC, one direction
  double latency_s = 0;                            // one way, GPU to GPU under one leaf
  double spine_latency_s = kDefaultSpineLatencyS;  // added one way by crossing the spine
  double oversubscription = 1;  // a leaf's downlink bandwidth / its uplink bandwidth
  int nodes_per_leaf = 0;       // 0: every node under one leaf (per rail)
};

struct ClusterSpec {
  std::string name;  // free text, e.g. "dgx-h100"
  // The files it was read from (its own and its base: chain), so that no command writes
  // an output over one of them.
  std::vector<std::string> source_files;
  int nodes = 1;
  int gpus_per_node = 1;
  GpuSpec gpu;
  IntraNodeSpec intra_node;
  InterNodeSpec inter_node;  // ignored when nodes == 1
  // How NCCL runs the plain collectives here (core/nccl_cost_model.hpp). Empty: the cluster
  // file has no `collectives:` section, and every collective is priced and simulated as the
  // core's one-sided algorithms over the links above.
  CollectiveTuning collectives;

  int num_gpus() const { return nodes * gpus_per_node; }
  int node_of(int rank) const { return rank / gpus_per_node; }
  // Throws InvalidArgument naming the field ("cluster.intra_node.bandwidth") for counts
  // < 1, non-positive rates, negative latencies, unknown kinds, an oversubscription < 1.
  void validate() const;
};

}  // namespace symmesh
