#pragma once
// The `workload:` list of a scenario: matrix ops, put_signal and collectives, checked
// against the mesh and the cluster. Internal to the loader.
#include <vector>

#include "core/cluster_spec.hpp"
#include "core/device_mesh.hpp"
#include "core/scenario.hpp"
#include "scenario/yaml_reader.hpp"

namespace symmesh::scenario {

// Op names are unique; an op without one is called "<op><index>" ("mm0", "put_signal3").
std::vector<WorkloadOp> read_workload(const Value& list, const DeviceMesh& mesh,
                                      const ClusterSpec& cluster);

// mesh_dim given as a name ("tp") or an index ("1"); fails with a did-you-mean.
int read_mesh_dim(const Value& value, const DeviceMesh& mesh);

}  // namespace symmesh::scenario
