#include "strategies/tensor_op_rules.hpp"

#include "core/tensor_op_registry.hpp"

namespace symmesh::strategies {
namespace {

Placement S(int d) {
  return Placement::shard(d);
}
const Placement R = Placement::replicate();
const Placement P = Placement::partial(ReduceOp::sum);

// Every input and the output alike: [p, p, …] for `count` tensors.
Rule same(const Placement& p, size_t count) {
  return Rule(count, p);
}

}  // namespace

// The op's row says which rules (core/tensor_op_registry.hpp): pointwise ops split every
// dim alike, a linear one may also stay Partial(sum), the others list theirs.
std::vector<Rule> tensor_op_rules(const OpProblem& problem) {
  const TensorOpSignature& row = tensor_op_signature(problem.op);
  const size_t tensors = problem.inputs.size() + 1;
  const int rank = static_cast<int>(problem.inputs.at(0).shape.size());
  std::vector<Rule> rules{same(R, tensors)};
  if (row.sharding == TensorOpSharding::listed) {
    rules.insert(rules.end(), row.rules.begin(), row.rules.end());
    return rules;
  }
  for (int d = 0; d < rank; ++d) rules.push_back(same(S(d), tensors));
  if (row.sharding == TensorOpSharding::linear) rules.push_back(same(P, tensors));
  return rules;
}

std::string tensor_op_filter(const OpProblem& problem, const Candidate& c) {
  if (tensor_op_signature(problem.op).sharding != TensorOpSharding::whole_groups) return "";
  // How many pieces each dim of qkv is cut into.
  int64_t row_pieces = 1, column_pieces = 1;
  const Placements& qkv = c.input_placements.at(0);
  for (int d = 0; d < problem.mesh.ndim(); ++d)
    if (qkv[d].is_shard())
      (qkv[d].shard_dim() == 0 ? row_pieces : column_pieces) *= problem.mesh.size(d);
  const TensorOpAttrs& a = problem.attrs;
  const int64_t sequences = a.seq > 0 ? problem.inputs[0].shape.at(0) / a.seq : 0;
  if (sequences % row_pieces != 0)
    return "attention's " + std::to_string(sequences) + " sequences do not split into " +
           std::to_string(row_pieces) + " whole pieces (context parallelism is not modelled)";
  if (a.kv_heads % column_pieces != 0)
    return "attention's " + std::to_string(a.kv_heads) + " key/value groups do not split into " +
           std::to_string(column_pieces) + " whole pieces";
  return "";
}

}  // namespace symmesh::strategies
