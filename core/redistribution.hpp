#pragma once
// Planning a change of placements as a sequence of per-mesh-dim steps, following
// DTensor's greedy planner (docs/dtensor-strategies.md §3):
//   1. if the source has any Shard, walk mesh dims inner → outer; a dim whose target is
//      S(k) goes to R first when the outer mesh dims sharding tensor dim k differ between
//      the current and the target placements (nested sharding must be undone first);
//   2. walk outer → inner and emit every remaining difference.
// A 1-D mesh takes one direct step. Example: (S0,S0) → (R,S0) is
//   dim 1 S(0)→R, dim 0 S(0)→R, dim 1 R→S(0).
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "core/device_mesh.hpp"
#include "core/placement.hpp"
#include "core/tensor_spec.hpp"

namespace symmesh {

enum class CollectiveKind {
  all_gather,      // S → R
  reduce_scatter,  // P → S
  all_reduce,      // P → R
  all_to_all,      // S(i) → S(j)
  local_chunk,     // R → S: each rank keeps its chunk, nothing moves
  local_partial,   // R → P: rank 0 keeps the value, the others hold zeros (avg: all keep it)
  // A step on a mesh dim of size 1: DTensor's cost model prices it (its base latency), but
  // no collective runs and nothing moves — PyTorch's redistribute_local_tensor skips it.
  none,
};

std::string to_string(CollectiveKind kind);  // "all_gather", …

// The collective that turns `from` into `to` on one mesh dim; nullopt when impossible
// (S → P, P(sum) ↔ P(avg)). `from` must differ from `to`.
std::optional<CollectiveKind> transition_collective(const Placement& from, const Placement& to);

struct Transition {
  int mesh_dim = 0;
  Placement from;
  Placement to;
};

// The greedy planner alone: placements and the mesh's dim sizes, never throws. Transitions
// may be impossible (see transition_collective); callers decide what that means. As
// PyTorch's _gen_transform_infos, the inner-to-outer misalignment pass runs only when the
// source has more than one shard (num_shards: the product of the sizes of its sharded mesh
// dims), so a Shard on a size-1 mesh dim alone does not trigger it.
std::vector<Transition> plan_transitions(const Placements& src, const Placements& dst,
                                         const std::vector<int>& mesh_shape);
std::vector<Transition> plan_transitions(const Placements& src, const Placements& dst,
                                         const DeviceMesh& mesh);

struct RedistributionStep {
  int mesh_dim = 0;
  Placement from;
  Placement to;
  CollectiveKind collective = CollectiveKind::local_chunk;
  // Bytes the busiest rank sends in this step with ring algorithms over padded (equal)
  // chunks, as NCCL needs: all-gather (n-1)·shard, reduce-scatter (n-1)·out-chunk,
  // all-reduce 2(n-1)·ceil(buffer/n), all-to-all (n-1)·block; local steps 0.
  int64_t bytes = 0;
  // The nccl-tests "size" of the step: gathered output (all-gather), input buffer
  // (reduce-scatter, all-reduce, all-to-all); 0 for local steps.
  int64_t buffer_bytes = 0;
};

struct Redistribution {
  Placements from;
  Placements to;
  std::vector<RedistributionStep> steps;
  int64_t total_bytes() const;
};

// Plans src.placements → dst for a concrete tensor. Throws InvalidArgument for an
// impossible transition (naming the mesh dim) or placements that do not fit the mesh.
Redistribution plan_redistribution(const TensorSpec& src, const Placements& dst,
                                   const DeviceMesh& mesh);

}  // namespace symmesh
