#include "strategies/sharded_result.hpp"

#include <Eigen/Dense>
#include <array>
#include <cmath>

#include "core/errors.hpp"

namespace symmesh::strategies {
namespace {

std::array<int64_t, 3> as3(const Shape& s, int64_t fill) {
  std::array<int64_t, 3> out{fill, fill, fill};
  for (size_t i = 0; i < s.size(); ++i) out[3 - s.size() + i] = s[i];
  return out;
}

using RowMatrix = Eigen::Matrix<double, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>;

}  // namespace

AssembledTensor assemble_global(const TensorSpec& spec, const DeviceMesh& mesh,
                                const std::vector<std::vector<double>>& pieces) {
  if (spec.shape.size() > 3) throw Unsupported("tensors of rank > 3", "assemble_global");
  if (static_cast<int>(pieces.size()) != mesh.size())
    throw InvalidArgument("one piece per rank is needed", "assemble_global");
  AssembledTensor out;
  out.values.assign(numel(spec.shape), 0.0);
  double avg_divisor = 1;
  for (int d = 0; d < mesh.ndim(); ++d)
    if (spec.placements[d] == Placement::partial(ReduceOp::avg)) avg_divisor *= mesh.size(d);
  const auto g = as3(spec.shape, 1);
  for (int r = 0; r < mesh.size(); ++r) {
    auto canonical_coords = mesh.coordinates(r);
    for (int d = 0; d < mesh.ndim(); ++d)
      if (spec.placements[d].is_replicate()) canonical_coords[d] = 0;
    const int canonical = mesh.rank(canonical_coords);
    const LocalView view = local_view(spec, mesh, r);
    if (static_cast<int64_t>(pieces[r].size()) != view.numel())
      throw InvalidArgument("piece of rank " + std::to_string(r) + " has " +
                                std::to_string(pieces[r].size()) + " values, expected " +
                                std::to_string(view.numel()),
                            "assemble_global");
    if (canonical != r) {
      for (size_t i = 0; i < pieces[r].size(); ++i)
        out.max_replica_mismatch =
            std::max(out.max_replica_mismatch, std::abs(pieces[r][i] - pieces[canonical][i]));
      continue;
    }
    const auto l = as3(view.shape, 1), o = as3(view.offset, 0);
    for (int64_t a = 0; a < l[0]; ++a)
      for (int64_t b = 0; b < l[1]; ++b)
        for (int64_t c = 0; c < l[2]; ++c)
          out.values[((a + o[0]) * g[1] + (b + o[1])) * g[2] + (c + o[2])] +=
              pieces[r][(a * l[1] + b) * l[2] + c];
  }
  for (double& v : out.values) v /= avg_divisor;
  return out;
}

TensorOpCall whole_tensor_op_call(const OpProblem& problem) {
  TensorOpCall call;
  call.op = problem.op;
  call.attrs = problem.attrs;
  for (const TensorSpec& t : problem.inputs) call.inputs.push_back(t.shape);
  call.output = problem.output_shape();
  const Shape& first = problem.inputs.at(0).shape;
  switch (problem.op) {
    case OpKind::embedding:
      call.vocab = first.at(0);
      break;
    case OpKind::embedding_wgrad:
      call.vocab = problem.attrs.rows;
      break;
    case OpKind::cross_entropy:
    case OpKind::cross_entropy_stats:
    case OpKind::cross_entropy_dgrad:
      call.vocab = first.at(1);
      call.total_rows = first.at(0);
      break;
    case OpKind::cross_entropy_loss:
      call.total_rows = first.at(0);
      break;
    default:
      break;
  }
  return call;
}

std::vector<double> unsharded_result(const OpProblem& problem,
                                     const std::vector<std::vector<double>>& inputs) {
  if (problem.is_tensor_op()) return tensor_op_reference(whole_tensor_op_call(problem), inputs);
  // The op as one GEMM over the global tensors (core/matmul_signature.hpp), in double.
  const MatmulEquation eq = problem.equation();
  const Shape& a_shape = problem.inputs[problem.lhs_index()].shape;
  const Shape& b_shape = problem.inputs[problem.rhs_index()].shape;
  const LocalGemm g = eq.local_gemm(a_shape, b_shape);
  std::vector<double> out(numel(eq.output_shape(a_shape, b_shape)));
  for (int64_t q = 0; q < g.batch; ++q) {
    Eigen::Map<const RowMatrix> a(inputs[problem.lhs_index()].data() + q * g.m * g.k, g.m, g.k);
    const double* b_data = inputs[problem.rhs_index()].data() + q * g.k * g.n;
    Eigen::Map<RowMatrix> c(out.data() + q * g.m * g.n, g.m, g.n);
    if (g.transpose_b)
      c.noalias() = a * Eigen::Map<const RowMatrix>(b_data, g.n, g.k).transpose();
    else
      c.noalias() = a * Eigen::Map<const RowMatrix>(b_data, g.k, g.n);
  }
  if (problem.has_bias()) {
    const BiasStrides s =
        eq.bias_strides(problem.inputs[problem.bias_index()].shape, problem.output_shape());
    const auto& bias = inputs[problem.bias_index()];
    for (int64_t q = 0; q < g.batch; ++q)
      for (int64_t i = 0; i < g.m; ++i)
        for (int64_t j = 0; j < g.n; ++j)
          out[(q * g.m + i) * g.n + j] += bias[q * s.batch + i * s.row + j * s.col];
  }
  return out;
}

}  // namespace symmesh::strategies
