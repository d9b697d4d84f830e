#include "strategies/op_problem.hpp"

#include "core/errors.hpp"

namespace symmesh::strategies {

std::string to_string(OpKind op) {
  switch (op) {
    case OpKind::mm:
      return "mm";
    case OpKind::bmm:
      return "bmm";
    case OpKind::addmm:
      return "addmm";
    case OpKind::baddbmm:
      return "baddbmm";
  }
  return "?";
}

OpKind parse_op(std::string_view text, std::string_view where) {
  for (OpKind op : {OpKind::mm, OpKind::bmm, OpKind::addmm, OpKind::baddbmm})
    if (text == to_string(op)) return op;
  throw InvalidArgument(
      "unknown op '" + std::string(text) + "' (expected mm, bmm, addmm or baddbmm)",
      std::string(where));
}

bool has_bias(OpKind op) {
  return op == OpKind::addmm || op == OpKind::baddbmm;
}

std::vector<std::string> input_names(OpKind op) {
  if (has_bias(op)) return {"bias", "a", "b"};
  return {"a", "b"};
}

Shape OpProblem::output_shape() const {
  const Shape& a = inputs.at(lhs_index()).shape;
  const Shape& b = inputs.at(rhs_index()).shape;
  if (a.size() == 2) return {a[0], b[1]};
  return {a[0], a[1], b[2]};
}

void OpProblem::validate() const {
  const auto names = input_names(op);
  if (inputs.size() != names.size())
    throw InvalidArgument(to_string(op) + " takes " + std::to_string(names.size()) +
                              " tensors, got " + std::to_string(inputs.size()),
                          to_string(op));
  const bool batched = op == OpKind::bmm || op == OpKind::baddbmm;
  const size_t rank = batched ? 3 : 2;
  const TensorSpec& a = inputs[lhs_index()];
  const TensorSpec& b = inputs[rhs_index()];
  for (int i : {lhs_index(), rhs_index()}) {
    if (inputs[i].shape.size() != rank)
      throw InvalidArgument(to_string(op) + " needs " + std::to_string(rank) + "-D tensors; " +
                                names[i] + " is " + to_string(inputs[i].shape),
                            "--" + names[i]);
  }
  if (a.shape[rank - 1] != b.shape[rank - 2])
    throw InvalidArgument("inner dims differ: a is " + to_string(a.shape) + ", b is " +
                              to_string(b.shape) + " (a's last dim must equal b's " +
                              (batched ? "second" : "first") + ")",
                          "--b");
  if (batched && a.shape[0] != b.shape[0])
    throw InvalidArgument(
        "batch dims differ: a is " + to_string(a.shape) + ", b is " + to_string(b.shape), "--b");
  if (has_bias(op)) {
    const Shape out = output_shape();
    const Shape& bias = inputs[0].shape;
    if (bias.size() > out.size())
      throw InvalidArgument(
          "bias " + to_string(bias) + " has more dims than the output " + to_string(out), "--bias");
    // Broadcasting from the right: each bias dim is 1 or equal to the output's.
    for (size_t i = 1; i <= bias.size(); ++i) {
      const int64_t bd = bias[bias.size() - i];
      if (bd != 1 && bd != out[out.size() - i])
        throw InvalidArgument(
            "bias " + to_string(bias) + " does not broadcast to the output " + to_string(out),
            "--bias");
    }
  }
  for (size_t i = 0; i < inputs.size(); ++i) {
    inputs[i].validate(mesh, "--" + names[i]);
    if (inputs[i].dtype != inputs[0].dtype)
      throw InvalidArgument("all inputs must share one dtype", "--" + names[i]);
  }
  if (output_target) TensorSpec{output_shape(), dtype(), *output_target}.validate(mesh, "--out-in");
}

}  // namespace symmesh::strategies
