#pragma once
// A cluster's `collectives:` figures (core/collective_tuning.hpp) fitted to nccl-tests runs
// (evaluation/nccl_tests_output.hpp): `symmesh calibrate --nccl-tests`.
//
// For each scope (intra_node, inter_node), collective and algorithm the runs measured, the
// model is NCCL's tuner's lower envelope over protocols (core/nccl_cost_model.hpp):
//
//   time = min over variants v of  base_v + steps(p) × step_v + bytes × factor(op, p) / bw_v
//
// fitted with up to three variants. Points (out-of-place times) start split in thirds of
// their sorted sizes; each variant is fitted by least squares on relative error (weight
// 1/t²) with base, step >= 0 and bw > 0; then every point goes to the variant that predicts
// it the least time, and the variants are refitted, until nothing moves (or 20 rounds). The
// same is tried from every split of the sorted sizes into one, two or three runs, and the
// start with the least relative error wins (the greedy reassignment has local optima; a
// variant more must lower the RMS relative error by 0.1 %). A
// variant left with fewer than two points is dropped. The step latency is fitted only when
// the points have two or more step counts (two group sizes); else it is 0 inside a node,
// and across nodes the whole latency is charged to the steps (base 0). Variants are named
// by bandwidth, lowest first, with the last of LL, LL128, Simple (one variant: Simple), and
// by algorithm: ring (all_reduce, all_gather, reduce_scatter; nvls for runs marked so),
// pairwise (all_to_all), direct (sendrecv, broadcast, reduce).
//
// Across nodes the bandwidth is stored per NIC: each point's bytes term is divided by the
// group's share of its node's NICs (group_nic_share, core/nccl_cost_model.hpp), so
// estimate_library_collective multiplies back wherever the NICs' line rate does not bind. A
// run with NICs idle on its nodes (10x1: one GPU and one NIC busy of 8) therefore fits a
// lower bound of the node's budget: fit from whole-node runs (all GPUs of each node).
#include <string>
#include <vector>

#include "core/cluster_spec.hpp"
#include "core/collective_tuning.hpp"
#include "core/nccl_cost_model.hpp"
#include "evaluation/nccl_tests_output.hpp"

namespace symmesh::evaluation {

struct CollectiveFitInput {
  NcclTestsRun run;
  bool nvls = false;  // the run used NVLink SHARP (the caller knows: NCCL_NVLS_ENABLE, logs)
};

// The group one nccl-tests run formed on `cluster`'s nodes: `run.nodes` hosts (else
// ceil(gpus / gpus_per_node)) with the ranks spread evenly, one group alone on them
// (groups_per_node 1). Throws InvalidArgument naming the run's file when its ranks do not
// fit the cluster's gpus_per_node.
GroupGeometry run_geometry(const ClusterSpec& cluster, const NcclTestsRun& run);

struct CollectiveFitError {
  std::string scope;  // "intra_node" | "inter_node"
  BandwidthCollective collective = BandwidthCollective::all_reduce;
  LibraryAlgorithm algorithm = LibraryAlgorithm::ring;
  int points = 0;
  int variants = 0;
  double median_relative_error = 0;  // |fitted - measured| / measured over its points
  double max_relative_error = 0;
  std::vector<std::string> files;
};

struct CollectiveFit {
  CollectiveTuning tuning;
  std::vector<CollectiveFitError> errors;  // one per (scope, collective, algorithm)
};

// Throws InvalidArgument naming the file for an NVLS run that spans nodes or is not an
// all_reduce / all_gather / reduce_scatter, and for a (scope, collective, algorithm) with
// fewer than two points.
CollectiveFit fit_collectives(const std::vector<CollectiveFitInput>& inputs,
                              const ClusterSpec& cluster);

}  // namespace symmesh::evaluation
