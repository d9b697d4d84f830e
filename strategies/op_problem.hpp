#pragma once
// One matrix op to be placed on a mesh: which op, its input tensors with their current
// placements, the mesh. Inputs are ordered as in ATen: mm/bmm (a, b); addmm/baddbmm
// (bias, a, b).
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "core/device_mesh.hpp"
#include "core/tensor_spec.hpp"

namespace symmesh::strategies {

// The vocabulary's to_string overloads stay visible next to this namespace's own.
using symmesh::to_string;

enum class OpKind { mm, bmm, addmm, baddbmm };

std::string to_string(OpKind op);
OpKind parse_op(std::string_view text, std::string_view where = "op");
bool has_bias(OpKind op);
// The names of the inputs in order, for messages and output: {"a","b"} or {"bias","a","b"}.
std::vector<std::string> input_names(OpKind op);

struct OpProblem {
  OpKind op = OpKind::mm;
  DeviceMesh mesh{{1}};
  std::vector<TensorSpec> inputs;
  // Where the output must end up (a later op's input, e.g. sequence-parallel rows after a
  // row-parallel linear): every candidate is priced with the redistribution of its output
  // there, and the plan runs it. None: the output stays as the strategy leaves it.
  std::optional<Placements> output_target;

  // Throws InvalidArgument naming the input: rank per op (mm 2-D, bmm 3-D), inner dims,
  // batch dims, bias broadcastable to the output, placements per mesh dim and shard dims
  // within each tensor's rank, one dtype for all inputs.
  void validate() const;
  Shape output_shape() const;
  DType dtype() const { return inputs.at(0).dtype; }
  // Index of matrix a / b in `inputs`.
  int lhs_index() const { return has_bias(op) ? 1 : 0; }
  int rhs_index() const { return lhs_index() + 1; }
};

}  // namespace symmesh::strategies
