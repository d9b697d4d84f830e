#pragma once
// The one owner of matrix-op shapes. Each matrix op is a row of one table: its einsum
// equation, whether it takes a bias and where the bias sits among its inputs (ATen order).
// Everything else about shapes is derived from the equation, here and nowhere else: the
// output shape, the local GEMM (batch, m, n, k) a rank runs on its pieces, the leading dim
// that fused collectives cut along, bias broadcasting and the bias strides of the GEMM,
// and the validation of a user's shapes. Rules, cost models, lowering, the scenario loader
// and reports all ask this file.
//
//   op       equation         bias       inputs (ATen order)   out
//   mm       mk,kn->mn        none       a, b                  a @ b
//   bmm      bmk,bkn->bmn     none       a, b                  a @ b (batched)
//   addmm    mk,kn->mn        required   bias, a, b            bias + a @ b
//   baddbmm  bmk,bkn->bmn     required   bias, a, b            bias + a @ b (batched)
//   linear   ...k,nk->...n    optional   a, b, bias            a @ bᵀ + bias
//
// In an equation a letter of both inputs and the output is a batch dim, of a and the
// output an m dim, of b and the output an n dim, of both inputs only a contracted k dim.
// "..." stands for a's leading dims (linear takes a of rank 2 or 3, as a [tokens, hidden]
// or [batch, sequence, hidden] activation; they are named "m" and "bm"). A row-major piece
// of each operand is one GEMM when a is [batch…, m…, k…], the output [batch…, m…, n…] and
// b [batch…, k…, n…] — or [batch…, n…, k…], which is b transposed (linear's weight).
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "core/einsum.hpp"
#include "core/op_kind.hpp"
#include "core/tensor_spec.hpp"

namespace symmesh {

enum class BiasUse { none, required, optional };

struct MatmulSignature {
  OpKind op = OpKind::mm;
  std::string_view equation;  // may hold "..." (see above)
  BiasUse bias = BiasUse::none;
  bool bias_first = false;  // the bias is the first input (addmm), else the last (linear)

  // Positions of a and the bias (-1: none) among the inputs, in ATen order, with or without
  // a bias; b follows a.
  int lhs_index(bool with_bias) const { return with_bias && bias_first ? 1 : 0; }
  int bias_index(bool with_bias) const { return !with_bias ? -1 : bias_first ? 0 : 2; }
  // a, b and the bias (when given) in ATen order.
  std::vector<TensorSpec> inputs_in_order(TensorSpec a, TensorSpec b,
                                          std::optional<TensorSpec> bias) const;
};

// The table row of a matrix op; throws InvalidArgument for a kind that is not one.
const MatmulSignature& matmul_signature(OpKind op);

// The GEMM one rank runs on its pieces, row-major: c[batch, m, n] = a[batch, m, k] @ b,
// b being [batch, k, n], or [batch, n, k] when transpose_b (batch 1 for unbatched ops).
struct LocalGemm {
  int64_t batch = 1;
  int64_t m = 0;
  int64_t n = 0;
  int64_t k = 0;
  bool transpose_b = false;
  double flops() const { return 2.0 * batch * m * n * k; }
  bool operator==(const LocalGemm&) const = default;
};

// Element strides of a bias over the (batch, row, column) of its op's local GEMM; a stride
// of 0 broadcasts.
struct BiasStrides {
  int64_t batch = 0;
  int64_t row = 0;
  int64_t col = 0;
};

// What is wrong with a matrix op's shapes: the operand it concerns ("a", "b" or "bias") and
// a message that names the shapes.
struct ShapeProblem {
  std::string operand;
  std::string message;
  std::vector<int> ranks;  // when the operand's rank is wrong: the ranks it may have
};

// A matrix op's equation for one rank of a (and with or without its bias), its letters
// classified. Every shape function takes the shapes it works on, global or one rank's
// pieces alike.
class MatmulEquation {
 public:
  // Throws InvalidArgument when the op is not a matrix op or takes no a of that rank.
  MatmulEquation(OpKind op, int a_rank, bool with_bias);
  // The equation of an op with these operands (a's rank, whether a bias is given).
  static MatmulEquation of(OpKind op, const Shape& a, bool with_bias);

  // The first problem with these shapes, checked in the order a user fixes them: ranks,
  // dims a and b share, then the bias (given when the op takes one, nullptr otherwise).
  static std::optional<ShapeProblem> check(OpKind op, const Shape& a, const Shape& b,
                                           const Shape* bias);

  OpKind op() const { return op_; }
  const EinsumEquation& einsum() const { return eq_; }
  bool has_bias() const { return with_bias_; }

  // Positions in the op's input order, and the inputs' names in that order.
  int lhs_index() const;
  int rhs_index() const;
  int bias_index() const;  // -1 without a bias
  int input_count() const { return with_bias_ ? 3 : 2; }
  std::vector<std::string> input_names() const;

  Shape output_shape(const Shape& a, const Shape& b) const;
  // The GEMM of pieces a and b (the output piece follows from them).
  LocalGemm local_gemm(const Shape& a, const Shape& b) const;
  // The strides of a bias piece `bias` (aligned from the right with the output piece `out`).
  BiasStrides bias_strides(const Shape& bias, const Shape& out) const;

  // a's dim 0 is also the output's dim 0: the leading dim that fused collectives cut along.
  // It is a GEMM batch dim (bmm: b is cut along with a) or a row dim of the GEMM.
  bool leading_is_batch() const;
  // GEMM batches (leading_is_batch) or GEMM rows per index of a's dim 0: 1 for mm, the
  // sequence length for a [batch, sequence, hidden] linear.
  int64_t gemm_extent_per_leading(const Shape& a) const;

 private:
  enum class Role { batch, m, n, k };
  Role role(char letter) const;
  int64_t product(const Shape& shape, const std::string& dims, Role role) const;

  OpKind op_;
  bool with_bias_;
  const MatmulSignature* sig_;
  EinsumEquation eq_;
};

}  // namespace symmesh
