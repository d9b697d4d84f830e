#include "core/tensor_op.hpp"

#include <algorithm>

#include "core/errors.hpp"
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

const TensorOpSignature& tensor_op_signature(OpKind op) {
  static const TensorOpSignature table[] = {
      {OpKind::add, {"a", "b"}, OpKind::add, "elementwise sum"},
      {OpKind::rms_norm, {"a", "b"}, OpKind::rms_norm, "RMSNorm over the last dim"},
      {OpKind::swiglu, {"a", "b"}, OpKind::swiglu, "silu(a) * b"},
      {OpKind::gelu, {"a"}, OpKind::gelu, "GELU"},
      {OpKind::attention, {"a"}, OpKind::attention, "fused attention over a qkv projection"},
      {OpKind::embedding, {"a"}, OpKind::embedding, "embedding lookup"},
      {OpKind::cross_entropy, {"a"}, OpKind::cross_entropy, "cross-entropy loss"},
      {OpKind::rms_norm_dgrad, {"x", "w", "dy"}, OpKind::rms_norm, "RMSNorm input gradient"},
      {OpKind::rms_norm_wgrad, {"x", "dy"}, OpKind::rms_norm, "RMSNorm weight gradient"},
      {OpKind::swiglu_dgrad_gate, {"gate", "up", "dy"}, OpKind::swiglu, "SwiGLU gate gradient"},
      {OpKind::swiglu_dgrad_up, {"gate", "dy"}, OpKind::swiglu, "SwiGLU up gradient"},
      {OpKind::gelu_dgrad, {"x", "dy"}, OpKind::gelu, "GELU input gradient"},
      {OpKind::attention_dgrad, {"qkv", "out", "dout"}, OpKind::attention, "attention gradient"},
      {OpKind::embedding_wgrad, {"dy"}, OpKind::embedding, "embedding table gradient"},
      {OpKind::cross_entropy_stats, {"logits"}, OpKind::cross_entropy, "loss statistics"},
      {OpKind::cross_entropy_loss, {"stats"}, OpKind::cross_entropy, "loss from statistics"},
      {OpKind::cross_entropy_dgrad,
       {"logits", "stats", "dloss"},
       OpKind::cross_entropy,
       "loss gradient"},
  };
  for (const TensorOpSignature& s : table)
    if (s.op == op) return s;
  throw InvalidArgument("'" + to_string(op) + "' is not a tensor op", "tensor op signature");
}

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
  switch (op) {
    case OpKind::add:
      return same(1, 0);
    case OpKind::swiglu:
    case OpKind::gelu:
    case OpKind::swiglu_dgrad_gate:
    case OpKind::swiglu_dgrad_up:
    case OpKind::gelu_dgrad: {
      if (auto p = matrix(0, std::string(sig.what) + "'s input [rows, features]")) return p;
      for (size_t k = 1; k < in.size(); ++k)
        if (auto p = same(k, 0)) return p;
      return std::nullopt;
    }
    case OpKind::rms_norm:
    case OpKind::rms_norm_dgrad:
    case OpKind::rms_norm_wgrad: {
      if (auto p = matrix(0, "the normalised input [rows, hidden]")) return p;
      const size_t dy = op == OpKind::rms_norm ? 0 : in.size() - 1;
      if (dy > 0)
        if (auto p = same(dy, 0)) return p;
      if (op == OpKind::rms_norm_wgrad) return std::nullopt;
      const Shape weight{in[0].back()};
      if (in[1] != weight)
        return problem_at(sig.inputs[1], "the norm's weight must be [" +
                                             std::to_string(in[0].back()) +
                                             "], one element per column of " + shape_text(in[0]) +
                                             "; got " + shape_text(in[1]));
      return std::nullopt;
    }
    case OpKind::attention:
    case OpKind::attention_dgrad: {
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
      if (op == OpKind::attention_dgrad) {
        const Shape out{in[0][0], groups * (attrs.heads / attrs.kv_heads) * attrs.head_dim};
        for (size_t k = 1; k < 3; ++k)
          if (in[k] != out)
            return problem_at(sig.inputs[k], std::string(sig.inputs[k]) + " must be " +
                                                 shape_text(out) + "; got " + shape_text(in[k]));
      }
      return std::nullopt;
    }
    case OpKind::embedding:
      if (auto p = matrix(0, "the embedding table [vocab, hidden]")) return p;
      if (attrs.rows < 0) return problem_at("tokens", "tokens must be >= 0");
      return std::nullopt;
    case OpKind::embedding_wgrad:
      if (auto p = matrix(0, "the embedding's output gradient [tokens, hidden]")) return p;
      if (attrs.rows < 1) return problem_at("vocab", "the table needs >= 1 rows");
      return std::nullopt;
    case OpKind::cross_entropy:
    case OpKind::cross_entropy_stats:
      return matrix(0, "the logits [tokens, vocab]");
    case OpKind::cross_entropy_loss:
      if (auto p = matrix(0, "the loss statistics [tokens, 2]")) return p;
      if (in[0][1] != 2)
        return problem_at(sig.inputs[0],
                          "the loss statistics are [tokens, 2]; got " + shape_text(in[0]));
      return std::nullopt;
    case OpKind::cross_entropy_dgrad: {
      if (auto p = matrix(0, "the logits [tokens, vocab]")) return p;
      const Shape stats{in[0][0], 2};
      if (in[1] != stats)
        return problem_at(sig.inputs[1], "the loss statistics must be " + shape_text(stats) +
                                             "; got " + shape_text(in[1]));
      return rank_problem(sig.inputs[2], in[2], 0, "the loss gradient");
    }
    default:
      break;
  }
  throw InvalidArgument("'" + to_string(op) + "' is not a tensor op", "tensor op");
}

Shape tensor_op_output_shape(OpKind op, const std::vector<Shape>& in, const TensorOpAttrs& attrs) {
  switch (op) {
    case OpKind::rms_norm_wgrad:
      return Shape{in.at(0).back()};
    case OpKind::attention:
      return Shape{in.at(0)[0], std::max<int64_t>(0, attention_groups(in.at(0)[1], attrs)) *
                                    (attrs.heads / attrs.kv_heads) * attrs.head_dim};
    case OpKind::embedding:
      return Shape{attrs.rows, in.at(0)[1]};
    case OpKind::embedding_wgrad:
      return Shape{attrs.rows, in.at(0)[1]};
    case OpKind::cross_entropy:
    case OpKind::cross_entropy_loss:
      return Shape{};
    case OpKind::cross_entropy_stats:
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
  const double e = static_cast<double>(element_size_bytes(dtype));
  const auto elements = [](const Shape& s) { return static_cast<double>(numel(s)); };
  double read = 0;
  for (const Shape& s : in) read += elements(s);
  // A lookup reads the table's rows it looks up, one per token, not the whole table (a
  // vocabulary-split piece no more than that: the ids outside it read nothing).
  if (op == OpKind::embedding) read = elements(out);
  TensorOpCost c;
  c.bytes = e * (read + elements(out));
  const double rows = static_cast<double>(rows_of(in.at(0)));
  switch (op) {
    case OpKind::rms_norm:
    case OpKind::rms_norm_dgrad:
      c.bytes += 4 * rows;  // the fp32 reciprocal RMS per row, saved then read back
      break;
    case OpKind::rms_norm_wgrad:
      c.bytes += 4 * rows;
      break;
    case OpKind::attention:
    case OpKind::attention_dgrad: {
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
      if (op == OpKind::attention_dgrad) c.products = {scores, scores, context, context, context};
      c.work_fraction = attrs.causal ? 0.5 : 1.0;
      // The log-sum-exp per row and head (fp32), written forward and read backward; the
      // rotary embedding reads and writes q and k once more (its backward, dq and dk).
      const double rope = 2 * e * static_cast<double>(rows_of(in[0]) * (heads + groups) * d);
      c.bytes += 4 * static_cast<double>(rows_of(in[0]) * heads) + rope;
      c.kernels = op == OpKind::attention ? 2 : 3;  // rope + flash; preprocess + flash + rope
      break;
    }
    case OpKind::embedding:
    case OpKind::embedding_wgrad:
    case OpKind::cross_entropy:
    case OpKind::cross_entropy_stats:
    case OpKind::cross_entropy_dgrad:
      // The int64 token ids (or labels) of the tokens worked on: the output's rows for
      // embedding, whose input is the table, the input's rows for the others.
      c.bytes += 8 * (op == OpKind::embedding ? static_cast<double>(rows_of(out)) : rows);
      if (op == OpKind::embedding_wgrad) c.kernels = 2;  // zero the table, then add rows
      break;
    default:
      break;
  }
  return c;
}

}  // namespace symmesh
