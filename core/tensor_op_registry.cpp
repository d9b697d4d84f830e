#include "core/tensor_op_registry.hpp"

#include <cmath>

#include "core/errors.hpp"
#include "core/tensor_op_reference.hpp"

namespace symmesh {
namespace {

using ShapeClass = TensorOpShape;
using Sharding = TensorOpSharding;
using Gradient = TensorOpGradient;
using From = TensorOpOperand::From;

TensorOpOperand in(int k) {
  return {From::input, k};
}
const TensorOpOperand out{From::output, 0};
const TensorOpOperand d_out{From::output_grad, 0};

Placement S(int d) {
  return Placement::shard(d);
}
const Placement R = Placement::replicate();
const Placement P = Placement::partial(ReduceOp::sum);

// The elementwise math, each exactly what PyTorch computes in float64.
double sigmoid(double x) {
  return 1 / (1 + std::exp(-x));
}
double silu(double x) {
  return x * sigmoid(x);
}
double silu_grad(double x) {
  const double s = sigmoid(x);
  return s * (1 + x * (1 - s));
}

// GELU's tanh form: 0.5 x (1 + tanh(u)), u = √(2/π) (x + 0.044715 x³).
constexpr double kGeluScale = 0.7978845608028654;  // √(2/π)
constexpr double kGeluCubic = 0.044715;
double gelu(double x) {
  return 0.5 * x * (1 + std::tanh(kGeluScale * (x + kGeluCubic * x * x * x)));
}
double gelu_grad(double x) {
  const double t = std::tanh(kGeluScale * (x + kGeluCubic * x * x * x));
  return 0.5 * (1 + t) + 0.5 * x * (1 - t * t) * kGeluScale * (1 + 3 * kGeluCubic * x * x);
}

namespace k = tensor_op_kernels;

// One row per kind: the forward ops first, in the order messages list the kinds files may
// write, then the ops a training step derives. The shapes, rules, costs and values are
// core/tensor_op.hpp's, strategies/tensor_op_rules.hpp's and core/tensor_op_reference.hpp's;
// each backward op reads the forward tensors the framework kernels save (PyTorch's autograd
// formulas, FlashAttention-2's saved output, Megatron-LM's vocab-parallel loss statistics).
std::vector<TensorOpSignature> make_table() {
  return {
      {.op = OpKind::add,
       .name = "add",
       .inputs = {"a", "b"},
       .forward = OpKind::add,
       .what = "elementwise sum",
       .shape = ShapeClass::pointwise,
       .sharding = Sharding::linear,
       .gradient = Gradient::passes_through,
       .elementwise = [](const double* v) { return v[0] + v[1]; }},
      {.op = OpKind::rms_norm,
       .name = "rms_norm",
       .inputs = {"a", "b"},
       .forward = OpKind::rms_norm,
       .what = "RMSNorm over the last dim",
       .shape = ShapeClass::norm,
       .sharding = Sharding::listed,
       .rules = {{S(0), S(0), R}},
       .gradient = Gradient::derived,
       .backward = {{OpKind::rms_norm_dgrad, in(0), {in(0), in(1), d_out}, ".dgrad"},
                    {OpKind::rms_norm_wgrad, in(1), {in(0), d_out}, ".wgrad", true}},
       .row_bytes = 4,  // the fp32 reciprocal RMS per row, saved then read back
       .reference = &k::rms_norm},
      {.op = OpKind::swiglu,
       .name = "swiglu",
       .inputs = {"a", "b"},
       .forward = OpKind::swiglu,
       .what = "silu(a) * b",
       .gradient = Gradient::derived,
       .backward = {{OpKind::swiglu_dgrad_gate, in(0), {in(0), in(1), d_out}, ".dgrad.gate"},
                    {OpKind::swiglu_dgrad_up, in(1), {in(0), d_out}, ".dgrad.up"}},
       .elementwise = [](const double* v) { return silu(v[0]) * v[1]; }},
      {.op = OpKind::gelu,
       .name = "gelu",
       .inputs = {"a"},
       .forward = OpKind::gelu,
       .what = "GELU",
       .gradient = Gradient::derived,
       .backward = {{OpKind::gelu_dgrad, in(0), {in(0), d_out}, ".dgrad"}},
       .elementwise = [](const double* v) { return gelu(v[0]); }},
      {.op = OpKind::attention,
       .name = "attention",
       .inputs = {"a"},
       .forward = OpKind::attention,
       .what = "fused attention over a qkv projection",
       .shape = ShapeClass::attention,
       .sharding = Sharding::whole_groups,
       .gradient = Gradient::derived,
       .backward = {{OpKind::attention_dgrad, in(0), {in(0), out, d_out}, ".dgrad", false,
                     TensorOpBackwardAttrs::forward}},
       .cost = TensorOpCostClass::attention,
       .kernels = 2,  // rope, flash
       .reference = &k::attention},
      {.op = OpKind::embedding,
       .name = "embedding",
       .inputs = {"a"},
       .forward = OpKind::embedding,
       .what = "embedding lookup",
       .shape = ShapeClass::lookup,
       .sharding = Sharding::listed,
       .rules = {{S(0), R}, {S(1), S(1)}, {P, S(0)}},
       .gradient = Gradient::derived,
       .backward = {{OpKind::embedding_wgrad, in(0), {d_out}, ".wgrad", true,
                     TensorOpBackwardAttrs::target_rows}},
       .cost = TensorOpCostClass::lookup,
       .reference = &k::embedding},
      // A graph runs it as cross_entropy_stats then cross_entropy_loss
      // (strategies/dataflow_graph.hpp).
      {.op = OpKind::cross_entropy,
       .name = "cross_entropy",
       .inputs = {"a"},
       .forward = OpKind::cross_entropy,
       .what = "cross-entropy loss",
       .shape = ShapeClass::logits_to_loss,
       .sharding = Sharding::listed,
       .rules = {{P, S(0)}},
       .row_bytes = 8,  // the int64 labels
       .reference = &k::cross_entropy},

      {.op = OpKind::rms_norm_dgrad,
       .name = "rms_norm_dgrad",
       .inputs = {"x", "w", "dy"},
       .forward = OpKind::rms_norm,
       .what = "RMSNorm input gradient",
       .shape = ShapeClass::norm,
       .sharding = Sharding::listed,
       .rules = {{S(0), S(0), R, S(0)}},
       .row_bytes = 4,
       .reference = &k::rms_norm_dgrad},
      {.op = OpKind::rms_norm_wgrad,
       .name = "rms_norm_wgrad",
       .inputs = {"x", "dy"},
       .forward = OpKind::rms_norm,
       .what = "RMSNorm weight gradient",
       .shape = ShapeClass::norm_weight_grad,
       .sharding = Sharding::listed,
       .rules = {{P, S(0), S(0)}},
       .row_bytes = 4,
       .reference = &k::rms_norm_wgrad},
      {.op = OpKind::swiglu_dgrad_gate,
       .name = "swiglu_dgrad_gate",
       .inputs = {"gate", "up", "dy"},
       .forward = OpKind::swiglu,
       .what = "SwiGLU gate gradient",
       .elementwise = [](const double* v) { return v[2] * v[1] * silu_grad(v[0]); }},
      {.op = OpKind::swiglu_dgrad_up,
       .name = "swiglu_dgrad_up",
       .inputs = {"gate", "dy"},
       .forward = OpKind::swiglu,
       .what = "SwiGLU up gradient",
       .elementwise = [](const double* v) { return v[1] * silu(v[0]); }},
      {.op = OpKind::gelu_dgrad,
       .name = "gelu_dgrad",
       .inputs = {"x", "dy"},
       .forward = OpKind::gelu,
       .what = "GELU input gradient",
       .elementwise = [](const double* v) { return v[1] * gelu_grad(v[0]); }},
      {.op = OpKind::attention_dgrad,
       .name = "attention_dgrad",
       .inputs = {"qkv", "out", "dout"},
       .forward = OpKind::attention,
       .what = "attention gradient",
       .shape = ShapeClass::attention_grad,
       .sharding = Sharding::whole_groups,
       .cost = TensorOpCostClass::attention,
       .kernels = 3,  // preprocess, flash, rope
       .reference = &k::attention_dgrad},
      {.op = OpKind::embedding_wgrad,
       .name = "embedding_wgrad",
       .inputs = {"dy"},
       .forward = OpKind::embedding,
       .what = "embedding table gradient",
       .shape = ShapeClass::lookup_grad,
       .sharding = Sharding::listed,
       .rules = {{P, S(0)}, {S(1), S(1)}, {S(0), R}},
       .row_bytes = 8,  // the int64 token ids
       .kernels = 2,    // zero the table, then add rows
       .reference = &k::embedding_wgrad},
      {.op = OpKind::cross_entropy_stats,
       .name = "cross_entropy_stats",
       .inputs = {"logits"},
       .forward = OpKind::cross_entropy,
       .what = "loss statistics",
       .shape = ShapeClass::logits_to_stats,
       .sharding = Sharding::listed,
       .rules = {{S(0), S(0)}, {P, S(1)}},
       .gradient = Gradient::via_consumer,
       .row_bytes = 8,
       .reference = &k::cross_entropy_stats},
      // The logits' gradient from the logits, the whole rows' statistics and d loss.
      {.op = OpKind::cross_entropy_loss,
       .name = "cross_entropy_loss",
       .inputs = {"stats"},
       .forward = OpKind::cross_entropy,
       .what = "loss from statistics",
       .shape = ShapeClass::stats_to_loss,
       .sharding = Sharding::listed,
       .rules = {{P, S(0)}},
       .gradient = Gradient::derived,
       .backward = {{OpKind::cross_entropy_dgrad,
                     {From::producer_input, 0},
                     {{From::producer_input, 0}, in(0), d_out},
                     ".dgrad"}},
       .reference = &k::cross_entropy_loss},
      {.op = OpKind::cross_entropy_dgrad,
       .name = "cross_entropy_dgrad",
       .inputs = {"logits", "stats", "dloss"},
       .forward = OpKind::cross_entropy,
       .what = "loss gradient",
       .shape = ShapeClass::loss_grad,
       .sharding = Sharding::listed,
       .rules = {{S(0), S(0), S(0), R}, {S(1), S(1), R, R}},
       .row_bytes = 8,
       .reference = &k::cross_entropy_dgrad},
  };
}

}  // namespace

const std::vector<TensorOpSignature>& tensor_op_signatures() {
  static const std::vector<TensorOpSignature> table = make_table();
  return table;
}

const TensorOpSignature* find_tensor_op(OpKind op) {
  // Indexed by the enum's value: is_tensor_op asks on every planned op.
  static const std::vector<const TensorOpSignature*> by_kind = [] {
    std::vector<const TensorOpSignature*> v;
    for (const TensorOpSignature& s : tensor_op_signatures()) {
      const auto i = static_cast<size_t>(s.op);
      if (v.size() <= i) v.resize(i + 1, nullptr);
      v[i] = &s;
    }
    return v;
  }();
  const auto i = static_cast<size_t>(op);
  return i < by_kind.size() ? by_kind[i] : nullptr;
}

const TensorOpSignature& tensor_op_signature(OpKind op) {
  if (const TensorOpSignature* s = find_tensor_op(op)) return *s;
  throw InvalidArgument("'" + to_string(op) + "' is not a tensor op", "tensor op signature");
}

}  // namespace symmesh
