#include "strategies/tensor_op_rules.hpp"

#include "core/errors.hpp"

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

std::vector<Rule> tensor_op_rules(const OpProblem& problem) {
  const size_t tensors = problem.inputs.size() + 1;
  const int rank = static_cast<int>(problem.inputs.at(0).shape.size());
  std::vector<Rule> rules{same(R, tensors)};
  switch (problem.op) {
    case OpKind::add:
      for (int d = 0; d < rank; ++d) rules.push_back(same(S(d), tensors));
      rules.push_back(same(P, tensors));
      break;
    case OpKind::swiglu:
    case OpKind::gelu:
    case OpKind::swiglu_dgrad_gate:
    case OpKind::swiglu_dgrad_up:
    case OpKind::gelu_dgrad:
      for (int d = 0; d < rank; ++d) rules.push_back(same(S(d), tensors));
      break;
    case OpKind::rms_norm:
      rules.push_back({S(0), S(0), R});
      break;
    case OpKind::rms_norm_dgrad:
      rules.push_back({S(0), S(0), R, S(0)});
      break;
    case OpKind::rms_norm_wgrad:
      rules.push_back({P, S(0), S(0)});
      break;
    case OpKind::attention:
    case OpKind::attention_dgrad:
      rules.push_back(same(S(0), tensors));
      rules.push_back(same(S(1), tensors));
      break;
    case OpKind::embedding:
      rules.push_back({S(0), R});
      rules.push_back({S(1), S(1)});
      rules.push_back({P, S(0)});
      break;
    case OpKind::embedding_wgrad:
      rules.push_back({P, S(0)});
      rules.push_back({S(1), S(1)});
      rules.push_back({S(0), R});
      break;
    case OpKind::cross_entropy:
    case OpKind::cross_entropy_loss:
      rules.push_back({P, S(0)});
      break;
    case OpKind::cross_entropy_stats:
      rules.push_back({S(0), S(0)});
      rules.push_back({P, S(1)});
      break;
    case OpKind::cross_entropy_dgrad:
      rules.push_back({S(0), S(0), S(0), R});
      rules.push_back({S(1), S(1), R, R});
      break;
    default:
      throw InvalidArgument("'" + to_string(problem.op) + "' is not a tensor op",
                            "tensor op rules");
  }
  return rules;
}

std::string tensor_op_filter(const OpProblem& problem, const Candidate& c) {
  if (problem.op != OpKind::attention && problem.op != OpKind::attention_dgrad) return "";
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
