#include "strategies/op_problem.hpp"

#include "core/errors.hpp"
#include "core/text.hpp"

namespace symmesh::strategies {

OpKind parse_matmul_op(std::string_view text, std::string_view where) {
  const auto kind = op_kind_named(text);
  if (kind && is_matmul(*kind)) return *kind;
  std::vector<std::string> names;
  for (OpKind k : all_op_kinds())
    if (is_matmul(k)) names.push_back(to_string(k));
  const std::string last = names.back();
  names.pop_back();
  throw InvalidArgument("unknown op '" + std::string(text) + "' (expected " +
                            join(names, ", ", [](const std::string& n) { return n; }) + " or " +
                            last + ")",
                        std::string(where));
}

int OpProblem::lhs_index() const {
  return is_tensor_op() ? 0 : matmul_signature(op).lhs_index(has_bias());
}

int OpProblem::bias_index() const {
  return is_tensor_op() ? -1 : matmul_signature(op).bias_index(has_bias());
}

namespace {

std::vector<Shape> shapes_of(const std::vector<TensorSpec>& inputs) {
  std::vector<Shape> out;
  for (const TensorSpec& t : inputs) out.push_back(t.shape);
  return out;
}

}  // namespace

MatmulEquation OpProblem::equation() const {
  return MatmulEquation::of(op, inputs.at(lhs_index()).shape, has_bias());
}

Shape OpProblem::output_shape() const {
  if (is_tensor_op()) return tensor_op_output_shape(op, shapes_of(inputs), attrs);
  return equation().output_shape(inputs.at(lhs_index()).shape, inputs.at(rhs_index()).shape);
}

std::vector<std::string> OpProblem::input_names() const {
  if (is_tensor_op()) {
    std::vector<std::string> names;
    for (std::string_view n : tensor_op_signature(op).inputs) names.emplace_back(n);
    return names;
  }
  return equation().input_names();
}

void OpProblem::validate() const {
  if (is_tensor_op()) {
    if (const auto problem = check_tensor_op(op, shapes_of(inputs), attrs))
      throw InvalidArgument(problem->message, "--" + problem->operand);
    const auto names = input_names();
    for (size_t i = 0; i < inputs.size(); ++i) inputs[i].validate(mesh, "--" + names[i]);
    if (output_target)
      TensorSpec{output_shape(), dtype(), *output_target}.validate(mesh, "--out-in");
    return;
  }
  const MatmulSignature& sig = matmul_signature(op);
  const size_t fewest = sig.bias == BiasUse::required ? 3 : 2;
  const size_t most = sig.bias == BiasUse::none ? 2 : 3;
  if (inputs.size() < fewest || inputs.size() > most)
    throw InvalidArgument(to_string(op) + " takes " + std::to_string(fewest) +
                              (most > fewest ? " or " + std::to_string(most) : "") +
                              " tensors, got " + std::to_string(inputs.size()),
                          to_string(op));
  const int bias = bias_index();
  if (const auto problem =
          MatmulEquation::check(op, inputs[lhs_index()].shape, inputs[rhs_index()].shape,
                                bias >= 0 ? &inputs[bias].shape : nullptr))
    throw InvalidArgument(problem->message, "--" + problem->operand);
  const auto names = input_names();
  for (size_t i = 0; i < inputs.size(); ++i) {
    inputs[i].validate(mesh, "--" + names[i]);
    if (inputs[i].dtype != inputs[0].dtype)
      throw InvalidArgument("all inputs must share one dtype", "--" + names[i]);
  }
  if (output_target) TensorSpec{output_shape(), dtype(), *output_target}.validate(mesh, "--out-in");
}

}  // namespace symmesh::strategies
