#include "strategies/op_rules.hpp"

namespace symmesh::strategies {
namespace {

const EinsumEquation& equation_of(OpKind op) {
  static const EinsumEquation mm = parse_einsum("mk,kn->mn");
  static const EinsumEquation bmm = parse_einsum("bmk,bkn->bmn");
  return (op == OpKind::mm || op == OpKind::addmm) ? mm : bmm;
}

bool any_input_sharded(const OpProblem& problem) {
  for (const auto& input : problem.inputs)
    for (const auto& p : input.placements)
      if (p.is_shard()) return true;
  return false;
}

// addmm/baddbmm: the matmul's rules with the bias placement inserted after the output.
std::vector<Rule> with_bias(std::vector<Rule> rules, const Shape& out, const Shape& bias) {
  for (Rule& rule : rules) rule.insert(rule.begin() + 1, bias_placement(rule[0], out, bias));
  return rules;
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
  auto rules = einsum_single_dim_rules(equation_of(problem.op), any_input_sharded(problem));
  if (!has_bias(problem.op)) return rules;
  return with_bias(std::move(rules), problem.output_shape(), problem.inputs[0].shape);
}

}  // namespace symmesh::strategies
