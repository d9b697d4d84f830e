#pragma once
// The lowering of one plan (strategies/plan_lowering.hpp) as a class over the plan's mesh:
// plan_lowering.cpp runs it (the inputs' pieces, the local matmuls and tensor ops, the fused
// collective matmuls), plan_lowering_redistribution.cpp moves a tensor between placements
// (all-gather, reduce-scatter, all-reduce, all-to-all, local chunks). Not part of the
// library's interface: only those two files include it.
#include <array>
#include <map>
#include <optional>
#include <utility>
#include <vector>

#include "core/errors.hpp"
#include "strategies/collective_matmul.hpp"
#include "strategies/plan_lowering.hpp"

namespace symmesh::strategies::plan_lowering_detail {

using Dims3 = std::array<int64_t, 3>;

// Shapes of rank <= 3 seen as 3-D by prepending ones (origins by prepending zeros).
inline Dims3 as3(const Shape& s, int64_t fill) {
  if (s.size() > 3) throw Unsupported("tensors of rank > 3 cannot be lowered", "plan lowering");
  Dims3 out{fill, fill, fill};
  for (size_t i = 0; i < s.size(); ++i) out[3 - s.size() + i] = s[i];
  return out;
}

// Where a tensor currently is: its spec (placements) and every rank's piece.
struct TensorState {
  TensorSpec spec;
  std::vector<LocalTensor> local;  // by mesh rank
};

class Lowerer {
 public:
  Lowerer(const Plan& plan, Program& program, const LoweringOptions& options)
      : plan_(plan),
        mesh_(plan.problem.mesh),
        program_(program),
        options_(options),
        dtype_(plan.problem.dtype()),
        equation_(plan.problem.is_tensor_op() ? std::nullopt
                                              : std::optional(plan.problem.equation())),
        e_(element_size_bytes(dtype_)),
        data_(options.carry_data || !options.global_inputs.empty()) {}

  LoweredPlan run();

 private:
  int world(int mesh_rank) const { return options_.first_rank + mesh_rank; }
  // Whether the Program holds the rank's ops. A folded rank (core/replica_folding.hpp) is
  // skipped: its piece in a TensorState stays empty (shape_of gives its shape), it gets no
  // buffer and no op, and a group of folded ranks only is not lowered at all. Its copy in
  // replica 0 stands for it; only what differs from that copy is written for it (the
  // zeros a local Partial keeps off coordinate 0, in its allocated bytes, which the
  // workload lowering adds to its copy's).
  bool held(int mesh_rank) const { return program_.holds(world(mesh_rank)); }
  bool any_held(const std::vector<int>& group) const {
    for (int r : group)
      if (held(r)) return true;
    return false;
  }
  // A rank's piece's shape, held or folded (pieces are always their placement's view).
  Shape shape_of(const TensorState& state, int mesh_rank) const {
    return held(mesh_rank) ? state.local[mesh_rank].shape
                           : local_view(state.spec, mesh_, mesh_rank).shape;
  }
  StreamId stream(int mesh_rank) { return program_.stream(world(mesh_rank), options_.stream); }
  OpLabel label(OpCategory category, const std::string& detail) const {
    return {options_.name, category, detail};
  }
  GroupId group_of(int mesh_dim, int index);
  int64_t bytes_of(const Shape& shape) const { return numel(shape) * e_; }

  TensorState initial_state(int input);
  void copy_box(int mesh_rank, const LocalTensor& src, const Shape& src_origin,
                const BufferRef& dst, const Shape& dst_shape, const Shape& dst_origin,
                const Shape& box, const std::string& detail);
  LocalTensor new_local(int mesh_rank, const Shape& shape);
  void apply_step(TensorState& state, const RedistributionStep& step);
  void all_gather(TensorState& state, const TensorSpec& after, int d, const std::vector<int>& group,
                  GroupId gid);
  void reduce_scatter(TensorState& state, const TensorSpec& after, int d,
                      const std::vector<int>& group, GroupId gid, ReduceOp op);
  void all_reduce(TensorState& state, const std::vector<int>& group, GroupId gid, ReduceOp op);
  void all_to_all(TensorState& state, const TensorSpec& after, const std::vector<int>& group,
                  GroupId gid, int from_dim, int to_dim);
  LocalTensor local_chunk(const TensorState& state, const TensorSpec& after, int mesh_rank, int t);
  MatmulWork local_matmul(int mesh_rank, const std::vector<TensorState>& inputs,
                          const LocalTensor& out) const;
  TensorOpWork local_tensor_op(int mesh_rank, const std::vector<TensorState>& inputs,
                               const TensorSpec& out_spec, const LocalTensor& out) const;
  void fused_allgather_matmul(const AllGatherFusion& fusion, const std::vector<TensorState>& inputs,
                              const std::vector<LocalTensor>& outputs);
  std::vector<LocalTensor> fused_matmul_reducescatter(const ReduceScatterFusion& fusion,
                                                      const std::vector<TensorState>& inputs);

  const Plan& plan_;
  const DeviceMesh& mesh_;
  Program& program_;
  const LoweringOptions& options_;
  DType dtype_;
  std::optional<MatmulEquation> equation_;  // matrix ops
  int64_t e_;
  bool data_;
  std::map<std::pair<int, int>, GroupId> groups_;
};

}  // namespace symmesh::strategies::plan_lowering_detail
