#pragma once
// The kinds of workload op, one enum for all of them: the matrix ops the planner shards
// (their shapes and local GEMMs come from core/matmul_signature.hpp), the one-sided
// transfer, the collectives over one mesh dim, a barrier of all ranks and the optimizer
// update a training step generates, and the tensor ops between the matmuls
// (core/tensor_op.hpp; each a row of core/tensor_op_registry.hpp). One text form each, as
// scenario files and `symmesh plan --op` write them.
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace symmesh {

enum class OpKind {
  mm,
  bmm,
  addmm,
  baddbmm,
  linear,      // matrix ops (planned)
  put_signal,  // one-sided transfer between two ranks
  all_gather,
  reduce_scatter,
  all_reduce,
  all_to_all,  // collectives over one mesh dim
  barrier,     // every rank waits for every other (and, in version 2, for its reductions)
  // A parameter's optimizer update on every rank: HBM-bound, `bytes` of traffic on the
  // busiest rank. Version 2 training steps generate it (strategies/workload_lowering.hpp);
  // files cannot name it.
  optimizer_step,
  // Tensor ops (core/tensor_op.hpp), version 2 only: placed by the planner like matrix ops.
  add,
  rms_norm,
  swiglu,
  gelu,
  attention,
  embedding,
  cross_entropy,
  // Their backward ops: a version-2 `training:` step derives them; files cannot name them.
  rms_norm_dgrad,
  rms_norm_wgrad,
  swiglu_dgrad_gate,
  swiglu_dgrad_up,
  gelu_dgrad,
  attention_dgrad,
  embedding_wgrad,
  cross_entropy_stats,  // a file's cross_entropy runs as these two (core/tensor_op.hpp)
  cross_entropy_loss,
  cross_entropy_dgrad,
};

std::string to_string(OpKind kind);  // "mm", "put_signal", …
// Every kind a scenario file may write, in the enum's order (for messages that list them).
const std::vector<OpKind>& all_op_kinds();
// The kind spelt `text`, if a file may write it.
std::optional<OpKind> op_kind_named(std::string_view text);
// The kind spelt `text` that only a training step generates (optimizer_step, the tensor ops'
// backward ops), if it is one: a file that writes it is told so.
std::optional<OpKind> generated_op_kind_named(std::string_view text);
bool is_matmul(OpKind kind);
bool is_collective(OpKind kind);
bool is_tensor_op(OpKind kind);  // forward or backward
// Ops the planner places on the mesh: matrix ops and tensor ops.
inline bool is_planned(OpKind kind) {
  return is_matmul(kind) || is_tensor_op(kind);
}

}  // namespace symmesh
