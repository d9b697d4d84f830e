#include "strategies/op_rules.hpp"

#include "strategies/tensor_op_rules.hpp"

namespace symmesh::strategies {
namespace {

bool any_input_sharded(const OpProblem& problem) {
  for (const auto& input : problem.inputs)
    for (const auto& p : input.placements)
      if (p.is_shard()) return true;
  return false;
}

}  // namespace

Placement bias_placement(const Placement& output, const Shape& output_shape,
                         const Shape& bias_shape) {
  if (!output.is_shard()) return output;
  const int out_dim = output.shard_dim();
  // Align from the right, as broadcasting does. A size-1 bias dim broadcasts (R) even when
  // the output dim has size 1 too: DTensor decides from the bias shape alone.
  const int bias_dim = out_dim - static_cast<int>(output_shape.size() - bias_shape.size());
  if (bias_dim < 0 || bias_shape[bias_dim] == 1 || bias_shape[bias_dim] != output_shape[out_dim])
    return Placement::replicate();
  return Placement::shard(bias_dim);
}

std::vector<Rule> op_single_dim_rules(const OpProblem& problem) {
  return op_single_dim_rules(problem, any_input_sharded(problem));
}

std::vector<Rule> op_single_dim_rules(const OpProblem& problem, bool any_sharded) {
  if (problem.is_tensor_op()) return tensor_op_rules(problem);
  const MatmulEquation eq = problem.equation();
  auto rules = einsum_single_dim_rules(eq.einsum(), any_sharded);
  if (!problem.has_bias()) return rules;
  // The matmul's [out, a, b] with the bias placement put where the bias is among the
  // inputs (after the output for addmm, last for linear).
  const Shape out = problem.output_shape();
  const Shape& bias = problem.inputs[problem.bias_index()].shape;
  for (Rule& rule : rules)
    rule.insert(rule.begin() + 1 + problem.bias_index(), bias_placement(rule[0], out, bias));
  return rules;
}

}  // namespace symmesh::strategies
