#pragma once
// The features the analytic cost model prices (strategies/analytic_cost_model.hpp): for one
// input's redistribution, what the lowered Program (strategies/plan_lowering.hpp) does on
// the busiest rank, counted per mesh dim so that one cost vector prices every candidate.
//
// The busiest rank is mesh rank 0: torch.chunk gives chunk 0 the largest piece of every
// tensor dim, so rank 0 holds the largest local piece of every tensor, runs the largest
// local matmul and copies the most bytes.
//
// Columns (per candidate, summed over its inputs), with their costs in µs per unit:
//   per mesh dim d:
//     ring_steps(d)   sequential ring steps (all-gather, reduce-scatter: p-1;
//                     all-reduce: 2(p-1))                       × ring latency of d
//     ring_bytes(d)   Σ over those steps of the padded chunk c  × ring s/B of d
//     a2a_count(d)    pairwise all-to-alls                       × Σ_s latency of d
//     a2a_bytes(d)    Σ of their chunks c                         × Σ_s s/B of d
//   copy_launches     re-layout copies (pad, concat, split, chunk) × kernel launch overhead
//   copy_hbm_bytes    bytes those copies read and write in HBM    × 1 / HBM bandwidth
//   library_s         seconds of the plain collectives NCCL runs  × 1e6
// With a layout whose `library` topology is set (the cluster has a collectives: section),
// every all-gather, reduce-scatter, all-reduce and all-to-all is priced as NCCL runs it
// (core/nccl_cost_model.hpp, not linear in its bytes) into library_s, and the ring and a2a
// columns stay 0: that is how the simulator runs them (core/library_collectives.hpp).
// c is the chunk the lowering's collectives move: buffer_bytes / p of core/redistribution's
// step (all-reduce: ceil(buffer / p) in whole elements, as CollectiveSpec::chunk_bytes).
#include <cstdint>
#include <string>
#include <vector>

#include "core/cluster_spec.hpp"
#include "core/device_mesh.hpp"
#include "core/redistribution.hpp"
#include "core/tensor_spec.hpp"
#include "strategies/analytic_topology.hpp"

namespace symmesh::strategies {

struct FeatureLayout {
  int ndim = 1;
  const AnalyticTopology* library = nullptr;  // see above; nullptr: the one-sided columns
  int cols() const { return 4 * ndim + 3; }
  int ring_steps(int d) const { return 4 * d; }
  int ring_bytes(int d) const { return 4 * d + 1; }
  int a2a_count(int d) const { return 4 * d + 2; }
  int a2a_bytes(int d) const { return 4 * d + 3; }
  int copy_launches() const { return 4 * ndim; }
  int copy_hbm_bytes() const { return 4 * ndim + 1; }
  int library_s() const { return 4 * ndim + 2; }
};

// µs per unit of each column, for `topo`'s mesh on `gpu`.
std::vector<double> cost_vector(const FeatureLayout& layout, const AnalyticTopology& topo,
                                const GpuSpec& gpu);

// What one input's move from its current placements to a target adds to a candidate.
struct InputFeatures {
  std::string impossible;   // non-empty: a step cannot be done (S → P, P(sum) ↔ P(avg))
  std::vector<double> row;  // layout.cols() values, summed over the steps
  int steps = 0;            // redistribution steps (local ones included)
  std::vector<std::vector<double>> step_rows;  // one per step, when asked for
  Shape local_shape;                           // rank 0's piece after the redistribution
  int64_t local_bytes = 0;                     // its bytes
  int64_t current_bytes = 0;                   // rank 0's piece before
  int64_t buffer_bytes = 0;                    // the largest step's symmetric buffers on rank 0
  bool moves() const { return steps > 0; }
};

InputFeatures input_features(const TensorSpec& current, const Placements& target,
                             const DeviceMesh& mesh, const FeatureLayout& layout,
                             bool with_step_rows = false);

// Rank 0's piece of `spec` (what local_view(spec, mesh, 0) gives, without its checks).
Shape rank0_shape(const TensorSpec& spec, const DeviceMesh& mesh);

}  // namespace symmesh::strategies
