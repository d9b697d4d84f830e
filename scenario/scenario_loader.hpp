#pragma once
// Scenario files (docs/scenario-format.md, versions 1 and 2) → symmesh::Scenario.
// Version 2 adds `tensors:` and `training:`; its matrix ops name the tensors they read and
// produce (a, b, bias, output) and the loader resolves them in op order, filling each op's
// shapes and leaving its placements empty. Version-1 files load as they always have.
//
// Every error is a symmesh::InvalidArgument whose where() is "file:line:col" (1-based)
// and whose message says what was expected, e.g.
//   unknown key 'meshh' — did you mean 'mesh'?
//   bandwidth '450' needs a unit, e.g. '450 GB/s'
// A file that cannot be read gives an InvalidArgument whose where() is its path.
//
// `cluster:` is a map or a path to a cluster file. A path is looked up relative to the
// referring file's directory, then under the shipped scenarios directory, then under its
// clusters/ folder. A cluster (inline or a file) may name `base: other.yaml`: the base is
// loaded first and every key given here overrides it, field by field (gpu.peak per dtype);
// cyclic base references are errors.
#include <string>
#include <vector>

#include "core/cluster_spec.hpp"
#include "core/scenario.hpp"

namespace symmesh {

// The shipped scenarios folder: $SYMMESH_SCENARIOS_DIR, the installed one beside the running
// executable, or the source tree's scenarios/ (scenario/scenario_paths.hpp says when).
std::string shipped_scenarios_dir();

Scenario load_scenario(const std::string& path);
// The same from text; `file` names it in messages and anchors relative cluster paths.
Scenario load_scenario_text(const std::string& yaml, const std::string& file = "<scenario>");

// A cluster file: the map that would follow `cluster:` (nodes, gpus_per_node, gpu, …).
ClusterSpec load_cluster(const std::string& path);
ClusterSpec load_cluster_text(const std::string& yaml, const std::string& file = "<cluster>");

// The scenario on `nodes` nodes with another mesh shape of the same number of dims (the
// workload's placements are per mesh dim). Throws InvalidArgument (where
// "with_cluster_size") if the mesh does not cover the GPUs, the cluster is invalid at that
// size (e.g. several nodes without inter_node) or a put_signal rank falls outside.
Scenario with_cluster_size(const Scenario& scenario, int nodes, std::vector<int> mesh_shape);

// The mesh shapes a sweep tries at `nodes` nodes: with `mesh: auto` every ordered
// factorisation of the GPU count into as many dims as the scenario's mesh (for 16 GPUs and
// 2 dims: 1x16, 2x8, 4x4, 8x2, 16x1); with a list, its shapes that cover those GPUs.
// mesh: auto tries at most this many shapes per node count (more is an error saying so).
inline constexpr int64_t kMaxAutoMeshShapes = 100000;
std::vector<std::vector<int>> sweep_mesh_shapes(const Scenario& scenario, int nodes);
// How many shapes mesh: auto tries for `gpus` over `ndim` dims, without listing them; at
// most `cap` + 1.
int64_t count_mesh_shapes(int64_t gpus, int ndim, int64_t cap);
// The most points a sweep (not sweep.layouts) simulates: node counts × each count's mesh
// shapes × micro-batch sizes × ZeRO stages. More is refused at load, at sweep.nodes.
inline constexpr int64_t kMaxSweepPoints = 10000;

}  // namespace symmesh
