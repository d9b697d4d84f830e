#pragma once
// A scenario (shared/reference/scenario-format.md, version 1) as plain values: the
// cluster, the mesh over its ranks, the workload and the optional sweep/objective.
// The YAML loader fills it; every later stage reads it. Sizes in bytes, times in s.
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "core/cluster_spec.hpp"
#include "core/dtype.hpp"
#include "core/op_kind.hpp"
#include "core/placement.hpp"
#include "core/tensor_spec.hpp"

namespace symmesh {

// Where something came from in a scenario file, for messages: "file.yaml:12:3".
struct SourceLocation {
  std::string file;
  int line = 0;    // 1-based; 0 when unknown
  int column = 0;  // 1-based
  std::string to_string() const;
};

struct WorkloadOp {
  std::string name;
  OpKind kind = OpKind::mm;
  SourceLocation where;
  // Matrix ops: shapes and current placements (one per mesh dim). The bias of addmm,
  // baddbmm and (optionally) linear; empty when the op has none.
  Shape a, b, bias;
  Placements a_placements, b_placements, bias_placements;
  // Where the output must end up (out_placements); none: wherever the strategy leaves it.
  std::optional<Placements> out_placements;
  std::optional<DType> dtype;  // falls back to the scenario's
  // put_signal: bytes from src rank to dst rank. Collectives: bytes is the whole buffer
  // on each rank (nccl-tests convention), over the group along mesh_dim.
  int64_t bytes = 0;
  int src = 0;
  int dst = 0;
  int mesh_dim = 0;  // index, resolved from a name or a number by the loader
};

struct SweepSpec {
  std::vector<int> nodes;                     // node counts to try
  bool mesh_auto = false;                     // every factorisation of the GPU count
  std::vector<std::vector<int>> mesh_shapes;  // or these shapes
};

struct ObjectiveSpec {
  std::optional<double> max_time_s;
};

struct Scenario {
  std::string name;
  std::string path;  // the file it came from ("" when built in code)
  ClusterSpec cluster;
  std::vector<int> mesh_shape;
  std::vector<std::string> mesh_names;
  DType dtype = DType::bf16;
  std::string cost_model = "dtensor";
  std::vector<WorkloadOp> workload;
  std::optional<SweepSpec> sweep;
  std::optional<ObjectiveSpec> objective;

  DType dtype_of(const WorkloadOp& op) const { return op.dtype.value_or(dtype); }
};

}  // namespace symmesh
