#pragma once
// The `workload:` list of a scenario: matrix ops, put_signal and collectives, checked
// against the mesh and the cluster; in version 2 also the `tensors:` the matrix ops read
// and produce. Internal to the loader.
#include <optional>
#include <vector>

#include "core/cluster_spec.hpp"
#include "core/device_mesh.hpp"
#include "core/scenario.hpp"
#include "scenario/yaml_reader.hpp"

namespace symmesh::scenario {

// Version 1: every matrix op gives its shapes and placements. Op names are unique; an op
// without one is called "<op><index>" ("mm0", "put_signal3").
std::vector<WorkloadOp> read_workload(const Value& list, const DeviceMesh& mesh,
                                      const ClusterSpec& cluster);

// Version 2: the declarations of `tensors:` (nullopt when the file has none) and the
// workload whose matrix ops name them. Each op's inputs resolve to a declared input or
// parameter or to an earlier op's output, and their shapes fill the op's a, b and bias;
// then every output declaration must be produced and every input or parameter read.
struct Dataflow {
  std::vector<TensorDecl> tensors;  // in file order
  std::vector<WorkloadOp> workload;
};
// With a pp mesh dim, `mesh` is one stage's (Scenario::stage_mesh_shape): ops may say
// `stage: N` (N < stages × virtual_stages), and hold matrix and tensor ops only.
struct PipelineShape {
  int stages = 1;
  int virtual_stages = 1;
  int chunks() const { return stages * virtual_stages; }
};
Dataflow read_dataflow(const std::optional<Value>& tensors, const Value& list,
                       const DeviceMesh& mesh, const ClusterSpec& cluster,
                       PipelineShape pipeline = {});

// The most ops a workload may hold (200,000, or SYMMESH_MAX_OPS); throws InvalidArgument
// (where "SYMMESH_MAX_OPS") when that variable is not a whole number >= 1.
int64_t workload_op_cap();

// mesh_dim given as a name ("tp") or an index ("1"); fails with a did-you-mean.
int read_mesh_dim(const Value& value, const DeviceMesh& mesh);

}  // namespace symmesh::scenario
