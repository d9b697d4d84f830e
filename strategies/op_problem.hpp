#pragma once
// One op to be placed on a mesh: which op, its input tensors with their current
// placements, the mesh. A matrix op's inputs are in its ATen order (core/matmul_signature.hpp):
// mm/bmm (a, b); addmm/baddbmm (bias, a, b); linear (a, b[, bias]). A tensor op's
// (core/tensor_op.hpp) are in its signature's order, and `attrs` holds its keys.
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "core/device_mesh.hpp"
#include "core/matmul_signature.hpp"
#include "core/tensor_op.hpp"
#include "core/tensor_spec.hpp"

namespace symmesh::strategies {

// The vocabulary's to_string overloads stay visible next to this namespace's own.
using symmesh::to_string;

// A matrix op named `text` (`plan --op`); throws InvalidArgument naming `where` otherwise.
OpKind parse_matmul_op(std::string_view text, std::string_view where = "op");

struct OpProblem {
  OpKind op = OpKind::mm;
  DeviceMesh mesh{{1}};
  std::vector<TensorSpec> inputs;
  // Where the output must end up (a later op's input, e.g. sequence-parallel rows after a
  // row-parallel linear): every candidate is priced with the redistribution of its output
  // there, and the plan runs it. None: the output stays as the strategy leaves it.
  std::optional<Placements> output_target;
  // The share of the product's FLOPs the op performs (MatmulWork::work_fraction): 0.5 for a
  // causal op (WorkloadOp::causal). Priced by the cost models; the placements are the same.
  double work_fraction = 1.0;
  TensorOpAttrs attrs;  // tensor ops only

  // Throws InvalidArgument naming the input ("--a", "--b", "--bias"): the input count, the
  // shapes (MatmulEquation::check), placements per mesh dim and shard dims within each
  // tensor's rank, one dtype for all inputs.
  void validate() const;
  bool is_tensor_op() const { return symmesh::is_tensor_op(op); }
  // A matrix op's equation for these inputs (valid inputs assumed); throws for a tensor op.
  MatmulEquation equation() const;
  Shape output_shape() const;
  DType dtype() const { return inputs.at(0).dtype; }
  bool has_bias() const { return !is_tensor_op() && inputs.size() == 3; }
  // Positions of a, b and the bias (-1: none) in `inputs` (a tensor op: 0, 1 and -1).
  int lhs_index() const;
  int rhs_index() const { return lhs_index() + 1; }
  int bias_index() const;
  // The inputs' names in order, for messages and output: {"a","b"}, {"bias","a","b"}, ….
  std::vector<std::string> input_names() const;
};

}  // namespace symmesh::strategies
