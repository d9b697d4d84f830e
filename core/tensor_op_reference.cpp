#include "core/tensor_op_reference.hpp"

#include <algorithm>
#include <cmath>
#include <string>

#include "core/errors.hpp"

namespace symmesh {
namespace {

using Tensor = std::vector<double>;
using Inputs = std::vector<Tensor>;

constexpr std::string_view kWhere = "tensor_op_reference";

// SplitMix64's finaliser: a bijection on 64-bit words whose output bits each depend on every
// input bit, so that consecutive rows land far apart in the vocabulary. Unsigned arithmetic
// keeps it the same on every platform, which ranks sharing a row rely on.
uint64_t mix(uint64_t z) {
  z += 0x9e3779b97f4a7c15ULL;
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
  return z ^ (z >> 31);
}

void check_vocab(int64_t vocab) {
  if (vocab < 1)
    throw InvalidArgument("the vocabulary must hold >= 1 ids; got " + std::to_string(vocab),
                          "token ids");
}

int64_t rows_of(const Shape& s) {
  return s.size() == 2 ? s[0] : 1;
}
int64_t cols_of(const Shape& s) {
  return s.empty() ? 1 : s.back();
}

// 1 / √(mean(x²) + ε) of row i of an [rows, h] matrix.
double inverse_rms(const Tensor& x, int64_t i, int64_t h) {
  double sum = 0;
  for (int64_t j = 0; j < h; ++j) sum += x[i * h + j] * x[i * h + j];
  return 1 / std::sqrt(sum / static_cast<double>(h) + kRmsNormEpsilon);
}

Tensor rms_norm(const Tensor& x, const Tensor& w, int64_t rows, int64_t h) {
  Tensor y(x.size());
  for (int64_t i = 0; i < rows; ++i) {
    const double r = inverse_rms(x, i, h);
    for (int64_t j = 0; j < h; ++j) y[i * h + j] = x[i * h + j] * r * w[j];
  }
  return y;
}

// y_j = x_j r w_j with r = (mean(x²) + ε)^(-1/2), so ∂r/∂x_k = −r³ x_k / h and
// dx_k = r w_k dy_k − (r³ x_k / h) Σ_j dy_j w_j x_j.
Tensor rms_norm_dgrad(const Tensor& x, const Tensor& w, const Tensor& dy, int64_t rows, int64_t h) {
  Tensor dx(x.size());
  for (int64_t i = 0; i < rows; ++i) {
    const double r = inverse_rms(x, i, h);
    double dot = 0;
    for (int64_t j = 0; j < h; ++j) dot += dy[i * h + j] * w[j] * x[i * h + j];
    const double c = r * r * r * dot / static_cast<double>(h);
    for (int64_t j = 0; j < h; ++j) dx[i * h + j] = r * w[j] * dy[i * h + j] - c * x[i * h + j];
  }
  return dx;
}

Tensor rms_norm_wgrad(const Tensor& x, const Tensor& dy, int64_t rows, int64_t h) {
  Tensor dw(h, 0.0);
  for (int64_t i = 0; i < rows; ++i) {
    const double r = inverse_rms(x, i, h);
    for (int64_t j = 0; j < h; ++j) dw[j] += dy[i * h + j] * x[i * h + j] * r;
  }
  return dw;
}

// Where one piece's heads sit in qkv and in the output: groups side by side, each
// [R query heads, one key head, one value head] of d columns (core/tensor_op.hpp).
struct AttentionLayout {
  int64_t seq, per_group, d, groups, rows, width, out_width;
  bool causal;
  AttentionLayout(const TensorOpAttrs& a, const Shape& qkv)
      : seq(a.seq),
        per_group(a.heads / a.kv_heads),
        d(a.head_dim),
        groups(attention_groups(qkv[1], a)),
        rows(qkv[0]),
        width(qkv[1]),
        out_width(groups * per_group * a.head_dim),
        causal(a.causal) {}
  int64_t q(int64_t row, int64_t g, int64_t r) const {
    return row * width + g * (per_group + 2) * d + r * d;
  }
  int64_t k(int64_t row, int64_t g) const { return q(row, g, per_group); }
  int64_t v(int64_t row, int64_t g) const { return q(row, g, per_group + 1); }
  int64_t o(int64_t row, int64_t g, int64_t r) const {
    return row * out_width + (g * per_group + r) * d;
  }
  // Positions query `i` of a sequence sees: up to itself when causal.
  int64_t visible(int64_t i) const { return causal ? i + 1 : seq; }
};

// softmax(q kᵀ / √d) of query position i (global row s + i), query head r of group g, over
// the positions it sees; the row max is subtracted so that exp cannot overflow.
Tensor attention_probabilities(const Tensor& qkv, const AttentionLayout& L, int64_t s, int64_t g,
                               int64_t r, int64_t i) {
  const double scale = 1 / std::sqrt(static_cast<double>(L.d));
  Tensor p(L.visible(i));
  for (int64_t j = 0; j < L.visible(i); ++j) {
    double dot = 0;
    for (int64_t c = 0; c < L.d; ++c) dot += qkv[L.q(s + i, g, r) + c] * qkv[L.k(s + j, g) + c];
    p[j] = dot * scale;
  }
  const double top = *std::max_element(p.begin(), p.end());
  double sum = 0;
  for (double& e : p) sum += (e = std::exp(e - top));
  for (double& e : p) e /= sum;
  return p;
}

Tensor attention(const Tensor& qkv, const AttentionLayout& L) {
  Tensor out(L.rows * L.out_width, 0.0);
  for (int64_t s = 0; s < L.rows; s += L.seq)
    for (int64_t g = 0; g < L.groups; ++g)
      for (int64_t r = 0; r < L.per_group; ++r)
        for (int64_t i = 0; i < L.seq; ++i) {
          const Tensor p = attention_probabilities(qkv, L, s, g, r, i);
          for (int64_t j = 0; j < L.visible(i); ++j)
            for (int64_t c = 0; c < L.d; ++c)
              out[L.o(s + i, g, r) + c] += p[j] * qkv[L.v(s + j, g) + c];
        }
  return out;
}

// The softmax backward as FlashAttention-2 runs it: D_i = rowsum(dO_i ∘ O_i) from the given
// forward output (not recomputed from P·V), dP = dO·Vᵀ, dS = P ∘ (dP − D), then
// dQ = dS·K/√d, dK = dSᵀ·Q/√d, dV = Pᵀ·dO. A group's dK and dV sum over its query heads,
// since they all read the same key and value head.
Tensor attention_dgrad(const Tensor& qkv, const Tensor& out, const Tensor& dout,
                       const AttentionLayout& L) {
  const double scale = 1 / std::sqrt(static_cast<double>(L.d));
  Tensor dqkv(qkv.size(), 0.0);
  for (int64_t s = 0; s < L.rows; s += L.seq)
    for (int64_t g = 0; g < L.groups; ++g)
      for (int64_t r = 0; r < L.per_group; ++r)
        for (int64_t i = 0; i < L.seq; ++i) {
          const Tensor p = attention_probabilities(qkv, L, s, g, r, i);
          const int64_t o = L.o(s + i, g, r), q = L.q(s + i, g, r);
          double rowsum = 0;
          for (int64_t c = 0; c < L.d; ++c) rowsum += dout[o + c] * out[o + c];
          for (int64_t j = 0; j < L.visible(i); ++j) {
            const int64_t k = L.k(s + j, g), v = L.v(s + j, g);
            double dp = 0;
            for (int64_t c = 0; c < L.d; ++c) dp += dout[o + c] * qkv[v + c];
            const double ds = p[j] * (dp - rowsum) * scale;
            for (int64_t c = 0; c < L.d; ++c) {
              dqkv[q + c] += ds * qkv[k + c];
              dqkv[k + c] += ds * qkv[q + c];
              dqkv[v + c] += p[j] * dout[o + c];
            }
          }
        }
  return dqkv;
}

// The table piece holds ids [vocab_offset, vocab_offset + table rows); the others' rows stay
// zero here and come from the pieces that hold them (Megatron's vocab-parallel embedding).
Tensor embedding(const TensorOpCall& call, const Tensor& table) {
  const int64_t rows = call.output[0], h = call.output[1], held = call.inputs[0][0];
  Tensor y(rows * h, 0.0);
  for (int64_t t = 0; t < rows; ++t) {
    const int64_t v = token_id(call.row_offset + t, call.vocab) - call.vocab_offset;
    if (v < 0 || v >= held) continue;
    std::copy_n(table.begin() + v * h, h, y.begin() + t * h);
  }
  return y;
}

Tensor embedding_wgrad(const TensorOpCall& call, const Tensor& dy) {
  const int64_t held = call.output[0], h = call.output[1], rows = call.inputs[0][0];
  Tensor dtable(held * h, 0.0);
  for (int64_t t = 0; t < rows; ++t) {
    const int64_t v = token_id(call.row_offset + t, call.vocab) - call.vocab_offset;
    if (v < 0 || v >= held) continue;
    for (int64_t c = 0; c < h; ++c) dtable[v * h + c] += dy[t * h + c];
  }
  return dtable;
}

double logsumexp(const Tensor& logits, int64_t t, int64_t vocab) {
  const auto row = logits.begin() + t * vocab;
  const double top = *std::max_element(row, row + vocab);
  double sum = 0;
  for (int64_t c = 0; c < vocab; ++c) sum += std::exp(row[c] - top);
  return top + std::log(sum);
}

Tensor cross_entropy(const TensorOpCall& call, const Tensor& logits) {
  const int64_t rows = call.inputs[0][0], vocab = call.vocab;
  double loss = 0;
  for (int64_t t = 0; t < rows; ++t)
    loss += logsumexp(logits, t, vocab) - logits[t * vocab + label_id(call.row_offset + t, vocab)];
  return {loss / static_cast<double>(call.total_rows)};
}

// The label of the piece's row t as a column of the piece, or -1 when another rank's
// columns hold it (the logits' vocabulary split from vocab_offset on).
int64_t label_column(const TensorOpCall& call, int64_t t) {
  const int64_t columns = call.inputs[0][1];
  const int64_t column = label_id(call.row_offset + t, call.vocab) - call.vocab_offset;
  return column >= 0 && column < columns ? column : -1;
}

// Per row: Σ over the piece's columns of exp(logit), and the label's logit when the piece
// holds it (0 otherwise): summed over vocabulary pieces, the whole row's.
Tensor cross_entropy_stats(const TensorOpCall& call, const Tensor& logits) {
  const int64_t rows = call.inputs[0][0], columns = call.inputs[0][1];
  Tensor stats(static_cast<size_t>(2 * rows), 0.0);
  for (int64_t t = 0; t < rows; ++t) {
    for (int64_t c = 0; c < columns; ++c) stats[2 * t] += std::exp(logits[t * columns + c]);
    if (const int64_t label = label_column(call, t); label >= 0)
      stats[2 * t + 1] = logits[t * columns + label];
  }
  return stats;
}

Tensor cross_entropy_loss(const TensorOpCall& call, const Tensor& stats) {
  const int64_t rows = call.inputs[0][0];
  double loss = 0;
  for (int64_t t = 0; t < rows; ++t) loss += std::log(stats[2 * t]) - stats[2 * t + 1];
  return {loss / static_cast<double>(call.total_rows)};
}

// (softmax − onehot(label)) · dloss / total_rows on the piece's columns, the softmax's
// denominator from the whole row's statistics.
Tensor cross_entropy_dgrad(const TensorOpCall& call, const Tensor& logits, const Tensor& stats,
                           double dloss) {
  const int64_t rows = call.inputs[0][0], columns = call.inputs[0][1];
  const double scale = dloss / static_cast<double>(call.total_rows);
  Tensor d(logits.size());
  for (int64_t t = 0; t < rows; ++t) {
    for (int64_t c = 0; c < columns; ++c)
      d[t * columns + c] = std::exp(logits[t * columns + c]) / stats[2 * t] * scale;
    if (const int64_t label = label_column(call, t); label >= 0) d[t * columns + label] -= scale;
  }
  return d;
}

// The shapes the caller claimed, checked before any kernel indexes by them: the values'
// counts, the op's own shape rules (core/tensor_op.hpp), the output piece, and the step-wide
// numbers the data ops divide by or draw ids from.
void validate(const TensorOpCall& call, const std::vector<Tensor>& inputs) {
  const std::string op = to_string(call.op);
  if (!is_tensor_op(call.op))
    throw InvalidArgument("'" + op + "' is not a tensor op", std::string(kWhere));
  const TensorOpSignature& sig = tensor_op_signature(call.op);
  if (call.inputs.size() != sig.inputs.size() || inputs.size() != sig.inputs.size())
    throw InvalidArgument(op + " takes " + std::to_string(sig.inputs.size()) + " inputs; got " +
                              std::to_string(call.inputs.size()) + " shapes and " +
                              std::to_string(inputs.size()) + " value vectors",
                          std::string(kWhere));
  for (size_t k = 0; k < inputs.size(); ++k)
    if (static_cast<int64_t>(inputs[k].size()) != numel(call.inputs[k]))
      throw InvalidArgument(op + "'s input '" + std::string(sig.inputs[k]) + "' has " +
                                std::to_string(inputs[k].size()) + " values; its shape " +
                                to_string(call.inputs[k]) + " holds " +
                                std::to_string(numel(call.inputs[k])),
                            std::string(kWhere));
  if (auto p = check_tensor_op(call.op, call.inputs, call.attrs)) {
    const bool input =
        std::find(sig.inputs.begin(), sig.inputs.end(), p->operand) != sig.inputs.end();
    throw InvalidArgument(op + (input ? "'s input '" : "'s '") + p->operand + "': " + p->message,
                          std::string(kWhere));
  }
  // embedding's rows and embedding_wgrad's table rows are the piece's own: only the output
  // says how many; the other outputs follow from the inputs.
  using Class = TensorOpShape;
  const Class shape = sig.shape;
  const bool table_op = shape == Class::lookup || shape == Class::lookup_grad;
  const bool output_ok =
      table_op
          ? call.output.size() == 2 && call.output[0] >= 0 && call.output[1] == call.inputs[0][1]
          : call.output == tensor_op_output_shape(call.op, call.inputs, call.attrs);
  if (!output_ok)
    throw InvalidArgument(
        op + "'s output piece " + to_string(call.output) + " does not fit its inputs",
        std::string(kWhere));
  if (table_op) check_vocab(call.vocab);
  const bool logits = shape == Class::logits_to_loss || shape == Class::logits_to_stats ||
                      shape == Class::loss_grad;
  if (logits) {
    check_vocab(call.vocab);
    if (shape == Class::logits_to_loss && call.inputs[0][1] != call.vocab)
      throw InvalidArgument(op + "'s logits hold " + std::to_string(call.inputs[0][1]) +
                                " columns, not the whole vocabulary of " +
                                std::to_string(call.vocab),
                            std::string(kWhere));
    if (call.vocab_offset < 0 || call.vocab_offset + call.inputs[0][1] > call.vocab)
      throw InvalidArgument(op + "'s logits piece of " + std::to_string(call.inputs[0][1]) +
                                " columns from column " + std::to_string(call.vocab_offset) +
                                " is outside the vocabulary of " + std::to_string(call.vocab),
                            std::string(kWhere));
  }
  const bool averaged = shape == Class::logits_to_loss || shape == Class::stats_to_loss ||
                        shape == Class::loss_grad;
  if (averaged) {
    if (call.total_rows < 1)
      throw InvalidArgument(op + " needs total_rows >= 1; got " + std::to_string(call.total_rows),
                            std::string(kWhere));
  }
}

}  // namespace

int64_t token_id(int64_t row, int64_t vocab) {
  check_vocab(vocab);
  return static_cast<int64_t>(mix(static_cast<uint64_t>(row)) % static_cast<uint64_t>(vocab));
}

// The token id shifted by 1 + (another hash mod vocab − 1): spread as widely, and never the
// row's own token id when the vocabulary has more than one.
int64_t label_id(int64_t row, int64_t vocab) {
  check_vocab(vocab);
  if (vocab == 1) return 0;
  const uint64_t shift = 1 + mix(~static_cast<uint64_t>(row)) % static_cast<uint64_t>(vocab - 1);
  return static_cast<int64_t>((static_cast<uint64_t>(token_id(row, vocab)) + shift) %
                              static_cast<uint64_t>(vocab));
}

namespace tensor_op_kernels {

// The kernels with their operands by name, the shapes checked by validate().
Tensor rms_norm(const TensorOpCall& c, const Inputs& in) {
  return symmesh::rms_norm(in[0], in[1], rows_of(c.inputs[0]), cols_of(c.inputs[0]));
}
Tensor rms_norm_dgrad(const TensorOpCall& c, const Inputs& in) {
  return symmesh::rms_norm_dgrad(in[0], in[1], in[2], rows_of(c.inputs[0]), cols_of(c.inputs[0]));
}
Tensor rms_norm_wgrad(const TensorOpCall& c, const Inputs& in) {
  return symmesh::rms_norm_wgrad(in[0], in[1], rows_of(c.inputs[0]), cols_of(c.inputs[0]));
}
Tensor attention(const TensorOpCall& c, const Inputs& in) {
  return symmesh::attention(in[0], AttentionLayout(c.attrs, c.inputs[0]));
}
Tensor attention_dgrad(const TensorOpCall& c, const Inputs& in) {
  return symmesh::attention_dgrad(in[0], in[1], in[2], AttentionLayout(c.attrs, c.inputs[0]));
}
Tensor embedding(const TensorOpCall& c, const Inputs& in) {
  return symmesh::embedding(c, in[0]);
}
Tensor embedding_wgrad(const TensorOpCall& c, const Inputs& in) {
  return symmesh::embedding_wgrad(c, in[0]);
}
Tensor cross_entropy(const TensorOpCall& c, const Inputs& in) {
  return symmesh::cross_entropy(c, in[0]);
}
Tensor cross_entropy_stats(const TensorOpCall& c, const Inputs& in) {
  return symmesh::cross_entropy_stats(c, in[0]);
}
Tensor cross_entropy_loss(const TensorOpCall& c, const Inputs& in) {
  return symmesh::cross_entropy_loss(c, in[0]);
}
Tensor cross_entropy_dgrad(const TensorOpCall& c, const Inputs& in) {
  return symmesh::cross_entropy_dgrad(c, in[0], in[1], in[2][0]);
}

}  // namespace tensor_op_kernels

std::vector<double> tensor_op_reference(const TensorOpCall& call, const Inputs& in) {
  validate(call, in);
  const TensorOpSignature& row = tensor_op_signature(call.op);
  if (!row.elementwise) return row.reference(call, in);
  // An elementwise op: the row's function of the operands' values at each element.
  std::vector<double> v(in.size());
  Tensor out(in[0].size());
  for (size_t e = 0; e < out.size(); ++e) {
    for (size_t k = 0; k < in.size(); ++k) v[k] = in[k][e];
    out[e] = row.elementwise(v.data());
  }
  return out;
}

}  // namespace symmesh
