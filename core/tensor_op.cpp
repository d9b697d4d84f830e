#include "core/tensor_op.hpp"

#include <algorithm>

#include "core/roofline.hpp"

namespace symmesh {
namespace {

std::string shape_text(const Shape& s) {
  return to_string(s);
}

ShapeProblem problem_at(std::string_view operand, std::string message,
                        std::vector<int> ranks = {}) {
  return ShapeProblem{std::string(operand), std::move(message), std::move(ranks)};
}

// The problem when input `k` (named `name`) is not of rank `rank`.
std::optional<ShapeProblem> rank_problem(std::string_view name, const Shape& shape, int rank,
                                         std::string_view what) {
  if (static_cast<int>(shape.size()) == rank) return std::nullopt;
  return problem_at(name,
                    std::string(what) + " is " + std::to_string(rank) + "-D; got " +
                        std::to_string(shape.size()) + "-D " + shape_text(shape),
                    {rank});
}

int64_t rows_of(const Shape& s) {
  return s.empty() ? 1 : s.size() == 1 ? 1 : s[0];
}
int64_t cols_of(const Shape& s) {
  return s.empty() ? 1 : s.back();
}

}  // namespace

int64_t attention_groups(int64_t qkv_width, const TensorOpAttrs& attrs) {
  if (attrs.kv_heads <= 0 || attrs.head_dim <= 0 || attrs.heads % attrs.kv_heads != 0) return -1;
  const int64_t group_width = (attrs.heads / attrs.kv_heads + 2) * attrs.head_dim;
  return qkv_width % group_width == 0 ? qkv_width / group_width : -1;
}

int64_t attention_head_dim(int64_t qkv_width, const TensorOpAttrs& attrs) {
  const int64_t heads = attrs.heads + 2 * attrs.kv_heads;
  if (attrs.heads <= 0 || attrs.kv_heads <= 0 || qkv_width <= 0 || qkv_width % heads != 0) return 0;
  return qkv_width / heads;
}

std::optional<ShapeProblem> check_tensor_op(OpKind op, const std::vector<Shape>& in,
                                            const TensorOpAttrs& attrs) {
  const TensorOpSignature& sig = tensor_op_signature(op);
  if (in.size() != sig.inputs.size())
    return problem_at(sig.inputs.front(), to_string(op) + " takes " +
                                              std::to_string(sig.inputs.size()) + " tensors, got " +
                                              std::to_string(in.size()));
  const auto same = [&](size_t k, size_t of) -> std::optional<ShapeProblem> {
    if (in[k] == in[of]) return std::nullopt;
    return problem_at(sig.inputs[k], std::string(sig.inputs[k]) + " must have " +
                                         std::string(sig.inputs[of]) + "'s shape " +
                                         shape_text(in[of]) + "; got " + shape_text(in[k]));
  };
  const auto matrix = [&](size_t k, std::string_view what) {
    return rank_problem(sig.inputs[k], in[k], 2, what);
  };
  switch (sig.shape) {
    case TensorOpShape::pointwise_matrix:
      if (auto p = matrix(0, std::string(sig.what) + "'s input [rows, features]")) return p;
      [[fallthrough]];
    case TensorOpShape::pointwise:
      for (size_t k = 1; k < in.size(); ++k)
        if (auto p = same(k, 0)) return p;
      return std::nullopt;
    case TensorOpShape::norm:
    case TensorOpShape::norm_weight_grad: {
      if (auto p = matrix(0, "the normalised input [rows, hidden]")) return p;
      // The backward ops read the output's gradient last; the forward has none.
      const size_t dy = sig.forward == op ? 0 : in.size() - 1;
      if (dy > 0)
        if (auto p = same(dy, 0)) return p;
      if (sig.shape == TensorOpShape::norm_weight_grad) return std::nullopt;
      const Shape weight{in[0].back()};
      if (in[1] != weight)
        return problem_at(sig.inputs[1], "the norm's weight must be [" +
                                             std::to_string(in[0].back()) +
                                             "], one element per column of " + shape_text(in[0]) +
                                             "; got " + shape_text(in[1]));
      return std::nullopt;
    }
    case TensorOpShape::attention:
    case TensorOpShape::attention_grad: {
      if (auto p = matrix(0, "attention's qkv [tokens, (heads + 2 kv_heads) x head_dim]")) return p;
      if (attrs.heads < 1 || attrs.kv_heads < 1 || attrs.heads % attrs.kv_heads != 0)
        return problem_at("heads",
                          "attention needs heads >= 1 and kv_heads >= 1 dividing it; got "
                          "heads " +
                              std::to_string(attrs.heads) + ", kv_heads " +
                              std::to_string(attrs.kv_heads));
      if (attrs.head_dim < 1)
        return problem_at("head_dim",
                          "attention needs head_dim >= 1; got " + std::to_string(attrs.head_dim));
      if (attrs.seq < 1 || in[0][0] % attrs.seq != 0)
        return problem_at("seq", "attention's " + std::to_string(in[0][0]) +
                                     " rows are not whole sequences of seq " +
                                     std::to_string(attrs.seq));
      const int64_t groups = attention_groups(in[0][1], attrs);
      if (groups < 0)
        return problem_at(sig.inputs[0],
                          "attention's qkv has " + std::to_string(in[0][1]) +
                              " columns, not whole key/value groups of (heads / kv_heads + 2) x "
                              "head_dim = " +
                              std::to_string((attrs.heads / attrs.kv_heads + 2) * attrs.head_dim));
      if (sig.shape == TensorOpShape::attention_grad) {
        const Shape out{in[0][0], groups * (attrs.heads / attrs.kv_heads) * attrs.head_dim};
        for (size_t k = 1; k < 3; ++k)
          if (in[k] != out)
            return problem_at(sig.inputs[k], std::string(sig.inputs[k]) + " must be " +
                                                 shape_text(out) + "; got " + shape_text(in[k]));
      }
      return std::nullopt;
    }
    case TensorOpShape::lookup:
      if (auto p = matrix(0, "the embedding table [vocab, hidden]")) return p;
      if (attrs.rows < 0) return problem_at("tokens", "tokens must be >= 0");
      return std::nullopt;
    case TensorOpShape::lookup_grad:
      if (auto p = matrix(0, "the embedding's output gradient [tokens, hidden]")) return p;
      if (attrs.rows < 1) return problem_at("vocab", "the table needs >= 1 rows");
      return std::nullopt;
    case TensorOpShape::logits_to_loss:
    case TensorOpShape::logits_to_stats:
      return matrix(0, "the logits [tokens, vocab]");
    case TensorOpShape::stats_to_loss:
      if (auto p = matrix(0, "the loss statistics [tokens, 2]")) return p;
      if (in[0][1] != 2)
        return problem_at(sig.inputs[0],
                          "the loss statistics are [tokens, 2]; got " + shape_text(in[0]));
      return std::nullopt;
    case TensorOpShape::loss_grad: {
      if (auto p = matrix(0, "the logits [tokens, vocab]")) return p;
      const Shape stats{in[0][0], 2};
      if (in[1] != stats)
        return problem_at(sig.inputs[1], "the loss statistics must be " + shape_text(stats) +
                                             "; got " + shape_text(in[1]));
      return rank_problem(sig.inputs[2], in[2], 0, "the loss gradient");
    }
  }
  return std::nullopt;
}

Shape tensor_op_output_shape(OpKind op, const std::vector<Shape>& in, const TensorOpAttrs& attrs) {
  // Not a tensor op (no row): the first input's shape, as for a pointwise op.
  const TensorOpSignature* sig = find_tensor_op(op);
  switch (sig ? sig->shape : TensorOpShape::pointwise) {
    case TensorOpShape::norm_weight_grad:
      return Shape{in.at(0).back()};
    case TensorOpShape::attention:
      return Shape{in.at(0)[0], std::max<int64_t>(0, attention_groups(in.at(0)[1], attrs)) *
                                    (attrs.heads / attrs.kv_heads) * attrs.head_dim};
    case TensorOpShape::lookup:
    case TensorOpShape::lookup_grad:
      return Shape{attrs.rows, in.at(0)[1]};
    case TensorOpShape::logits_to_loss:
    case TensorOpShape::stats_to_loss:
      return Shape{};
    case TensorOpShape::logits_to_stats:
      return Shape{in.at(0)[0], 2};
    default:
      return in.at(0);
  }
}

double TensorOpCost::effective_flops() const {
  double total = 0;
  for (const LocalGemm& g : products)
    total += roofline::gemm_effective_flops(g.batch, g.m, g.n, g.k);
  return total * work_fraction;
}

double TensorOpCost::flops() const {
  double total = 0;
  for (const LocalGemm& g : products) total += g.flops();
  return total * work_fraction;
}

TensorOpCost tensor_op_cost(OpKind op, const std::vector<Shape>& in, const Shape& out,
                            const TensorOpAttrs& attrs, DType dtype) {
  const TensorOpSignature& sig = tensor_op_signature(op);
  const double e = static_cast<double>(element_size_bytes(dtype));
  const auto elements = [](const Shape& s) { return static_cast<double>(numel(s)); };
  double read = 0;
  for (const Shape& s : in) read += elements(s);
  TensorOpCost c;
  c.kernels = sig.kernels;
  switch (sig.cost) {
    case TensorOpCostClass::streamed:
      // The row's extra bytes per row: fp32 statistics, int64 token ids or labels.
      c.bytes = e * (read + elements(out)) + sig.row_bytes * static_cast<double>(rows_of(in.at(0)));
      break;
    case TensorOpCostClass::lookup:
      // A lookup reads the table's rows it looks up, one per token, not the whole table (a
      // vocabulary-split piece no more than that: the ids outside it read nothing), and the
      // int64 id of each.
      c.bytes = e * 2 * elements(out) + 8 * static_cast<double>(rows_of(out));
      break;
    case TensorOpCostClass::attention: {
      c.bytes = e * (read + elements(out));
      // Per sequence and query head of the piece: the scores q·kᵀ [seq, d]·[d, seq] and the
      // context p·v [seq, seq]·[seq, d]; the backward recomputes the scores and runs dp = do·vᵀ,
      // dv = pᵀ·do, dq = ds·k, dk = dsᵀ·q (FlashAttention-2's five products: 2.5 times the
      // forward's FLOPs).
      const int64_t groups = std::max<int64_t>(0, attention_groups(cols_of(in[0]), attrs));
      const int64_t heads = groups * (attrs.heads / attrs.kv_heads);
      const int64_t sequences = attrs.seq > 0 ? rows_of(in[0]) / attrs.seq : 0;
      const int64_t batch = sequences * heads, s = attrs.seq, d = attrs.head_dim;
      const LocalGemm scores{batch, s, s, d, false};
      const LocalGemm context{batch, s, d, s, false};
      c.products = {scores, context};
      if (sig.forward != op) c.products = {scores, scores, context, context, context};
      c.work_fraction = attrs.causal ? 0.5 : 1.0;
      // The log-sum-exp per row and head (fp32), written forward and read backward; the
      // rotary embedding reads and writes q and k once more (its backward, dq and dk).
      const double rope = 2 * e * static_cast<double>(rows_of(in[0]) * (heads + groups) * d);
      c.bytes += 4 * static_cast<double>(rows_of(in[0]) * heads) + rope;
      break;
    }
  }
  return c;
}

}  // namespace symmesh
