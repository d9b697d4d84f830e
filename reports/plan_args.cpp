// symmesh plan's arguments as an op problem (plan_args.hpp).
#include "reports/plan_args.hpp"

#include "core/dtype.hpp"
#include "core/errors.hpp"

namespace symmesh::reports {
namespace {

bool is_auto(const std::string& text) {
  return text == "auto";
}

// `text` as placements, or all-Replicate for `auto` (the planner places that input).
Placements placements_or_auto(const std::string& text, int ndim, const std::string& where) {
  if (is_auto(text)) return Placements(ndim, Placement::replicate());
  return parse_placements(text, where);
}

}  // namespace

std::vector<bool> auto_inputs(const PlanArgs& args) {
  const MatmulSignature& sig = matmul_signature(strategies::parse_matmul_op(args.op, "--op"));
  const bool with_bias = !args.bias.empty();
  std::vector<bool> out(with_bias ? 3 : 2, false);
  out[sig.lhs_index(with_bias)] = args.in.size() > 0 && is_auto(args.in[0]);
  out[sig.lhs_index(with_bias) + 1] = args.in.size() > 1 && is_auto(args.in[1]);
  if (with_bias) out[sig.bias_index(true)] = is_auto(args.bias_in);
  return out;
}

strategies::OpProblem problem_from(const PlanArgs& args) {
  strategies::OpProblem problem;
  problem.op = strategies::parse_matmul_op(args.op, "--op");
  problem.mesh = parse_mesh(args.mesh, "--mesh");
  const DType dtype = parse_dtype(args.dtype, "--dtype");
  if (args.in.size() != 2)
    throw InvalidArgument("give two placement lists, for a and b (e.g. --in 'S(0),R' 'R,R')",
                          "--in");
  const MatmulSignature& sig = matmul_signature(problem.op);
  const int ndim = problem.mesh.ndim();
  TensorSpec a{parse_shape(args.a, "--a"), dtype, placements_or_auto(args.in[0], ndim, "--in (a)")};
  TensorSpec b{parse_shape(args.b, "--b"), dtype, placements_or_auto(args.in[1], ndim, "--in (b)")};
  if (sig.bias == BiasUse::none && (!args.bias.empty() || !args.bias_in.empty()))
    throw InvalidArgument(args.op + " takes no bias (use addmm, baddbmm or linear)",
                          args.bias.empty() ? "--bias-in" : "--bias");
  if (sig.bias == BiasUse::required && args.bias.empty())
    throw InvalidArgument(args.op + " needs --bias SHAPE", "--bias");
  if (!args.bias.empty() && args.bias_in.empty())
    throw InvalidArgument(args.op + " needs --bias-in PLACEMENTS", "--bias-in");
  if (args.bias.empty() && !args.bias_in.empty())
    throw InvalidArgument("--bias-in without --bias SHAPE", "--bias-in");
  std::optional<TensorSpec> bias;
  if (!args.bias.empty())
    bias = TensorSpec{parse_shape(args.bias, "--bias"), dtype,
                      placements_or_auto(args.bias_in, ndim, "--bias-in")};
  problem.inputs = sig.inputs_in_order(std::move(a), std::move(b), std::move(bias));
  if (!args.out_in.empty()) problem.output_target = parse_placements(args.out_in, "--out-in");
  return problem;
}

}  // namespace symmesh::reports
