// The matrix ops' signatures: every shape fact derived from the op's equation, checked
// against hand-worked examples (shapes as torch.matmul / torch.nn.functional.linear define
// them).
#include "core/matmul_signature.hpp"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "core/errors.hpp"

namespace symmesh {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;

TEST(MatmulSignature, TheTable) {
  EXPECT_EQ(matmul_signature(OpKind::mm).equation, "mk,kn->mn");
  EXPECT_EQ(matmul_signature(OpKind::baddbmm).bias, BiasUse::required);
  EXPECT_EQ(matmul_signature(OpKind::linear).bias, BiasUse::optional);
  EXPECT_THROW(matmul_signature(OpKind::all_reduce), InvalidArgument);
  // linear's "..." names a's leading dims m (rank 2) or b, m (rank 3).
  EXPECT_EQ(MatmulEquation(OpKind::linear, 2, false).einsum().to_string(), "mk,nk->mn");
  EXPECT_EQ(MatmulEquation(OpKind::linear, 3, true).einsum().to_string(), "bmk,nk->bmn");
  EXPECT_THROW(MatmulEquation(OpKind::linear, 4, false), InvalidArgument);
}

TEST(MatmulSignature, InputOrderIsAtens) {
  const MatmulEquation addmm(OpKind::addmm, 2, true);  // addmm(bias, a, b)
  EXPECT_THAT(addmm.input_names(), ElementsAre("bias", "a", "b"));
  EXPECT_EQ(addmm.lhs_index(), 1);
  EXPECT_EQ(addmm.bias_index(), 0);
  const MatmulEquation linear(OpKind::linear, 3, true);  // linear(input, weight, bias)
  EXPECT_THAT(linear.input_names(), ElementsAre("a", "b", "bias"));
  EXPECT_EQ(linear.lhs_index(), 0);
  EXPECT_EQ(linear.bias_index(), 2);
  EXPECT_EQ(MatmulEquation(OpKind::linear, 2, false).bias_index(), -1);
}

TEST(MatmulSignature, OutputShapes) {
  EXPECT_EQ(MatmulEquation(OpKind::mm, 2, false).output_shape({4, 5}, {5, 6}), (Shape{4, 6}));
  EXPECT_EQ(MatmulEquation(OpKind::bmm, 3, false).output_shape({2, 4, 5}, {2, 5, 6}),
            (Shape{2, 4, 6}));
  // linear: [..., k] x [n, k] -> [..., n].
  EXPECT_EQ(MatmulEquation(OpKind::linear, 2, false).output_shape({4, 5}, {6, 5}), (Shape{4, 6}));
  EXPECT_EQ(MatmulEquation(OpKind::linear, 3, false).output_shape({2, 3, 5}, {6, 5}),
            (Shape{2, 3, 6}));
}

TEST(MatmulSignature, LocalGemms) {
  EXPECT_EQ(MatmulEquation(OpKind::mm, 2, false).local_gemm({4, 5}, {5, 6}),
            (LocalGemm{1, 4, 6, 5, false}));
  EXPECT_EQ(MatmulEquation(OpKind::baddbmm, 3, true).local_gemm({2, 4, 5}, {2, 5, 6}),
            (LocalGemm{2, 4, 6, 5, false}));
  // A [batch, sequence, hidden] linear is one GEMM of batch x sequence rows, weight
  // stored [n, k] (transposed for the GEMM).
  EXPECT_EQ(MatmulEquation(OpKind::linear, 3, false).local_gemm({2, 3, 5}, {6, 5}),
            (LocalGemm{1, 6, 6, 5, true}));
  // Pieces: the same mapping on local shapes (k split in two).
  EXPECT_EQ(MatmulEquation(OpKind::linear, 3, false).local_gemm({1, 3, 3}, {6, 3}),
            (LocalGemm{1, 3, 6, 3, true}));
}

TEST(MatmulSignature, LeadingDim) {
  EXPECT_TRUE(MatmulEquation(OpKind::bmm, 3, false).leading_is_batch());
  EXPECT_FALSE(MatmulEquation(OpKind::mm, 2, false).leading_is_batch());
  EXPECT_FALSE(MatmulEquation(OpKind::linear, 3, false).leading_is_batch());
  // One index of a [2, 3, 5] linear input's leading dim is 3 GEMM rows; of bmm, one batch.
  EXPECT_EQ(MatmulEquation(OpKind::linear, 3, false).gemm_extent_per_leading({2, 3, 5}), 3);
  EXPECT_EQ(MatmulEquation(OpKind::bmm, 3, false).gemm_extent_per_leading({2, 3, 5}), 1);
  EXPECT_EQ(MatmulEquation(OpKind::mm, 2, false).gemm_extent_per_leading({7, 5}), 1);
}

TEST(MatmulSignature, BiasStridesBroadcastFromTheRight) {
  const MatmulEquation addmm(OpKind::addmm, 2, true);
  // [4, 6] bias on a [4, 6] output: element (i, j) at 6i + j.
  auto s = addmm.bias_strides({4, 6}, {4, 6});
  EXPECT_EQ(std::vector<int64_t>({s.batch, s.row, s.col}), std::vector<int64_t>({0, 6, 1}));
  s = addmm.bias_strides({6}, {4, 6});  // one row for every row
  EXPECT_EQ(std::vector<int64_t>({s.batch, s.row, s.col}), std::vector<int64_t>({0, 0, 1}));
  s = addmm.bias_strides({4, 1}, {4, 6});  // one column for every column
  EXPECT_EQ(std::vector<int64_t>({s.batch, s.row, s.col}), std::vector<int64_t>({0, 1, 0}));
  s = MatmulEquation(OpKind::baddbmm, 3, true).bias_strides({2, 1, 6}, {2, 4, 6});
  EXPECT_EQ(std::vector<int64_t>({s.batch, s.row, s.col}), std::vector<int64_t>({6, 0, 1}));
  s = MatmulEquation(OpKind::linear, 3, true).bias_strides({6}, {2, 3, 6});
  EXPECT_EQ(std::vector<int64_t>({s.batch, s.row, s.col}), std::vector<int64_t>({0, 0, 1}));
}

std::string problem_of(OpKind op, const Shape& a, const Shape& b, const Shape* bias = nullptr) {
  const auto p = MatmulEquation::check(op, a, b, bias);
  return p ? p->operand + ": " + p->message : "";
}

TEST(MatmulSignature, CheckNamesTheOperandAndTheShapes) {
  EXPECT_EQ(problem_of(OpKind::mm, {4, 5}, {5, 6}), "");
  EXPECT_EQ(problem_of(OpKind::bmm, {4, 5}, {5, 6}), "a: bmm needs a 3-D tensor, got 4x5");
  EXPECT_EQ(problem_of(OpKind::linear, {4}, {6, 4}), "a: linear needs a 2-D or 3-D tensor, got 4");
  EXPECT_EQ(problem_of(OpKind::mm, {4, 5}, {5, 6, 1}), "b: mm needs a 2-D tensor, got 5x6x1");
  EXPECT_EQ(problem_of(OpKind::mm, {4, 5}, {6, 7}),
            "b: inner dims differ: a is 4x5, b is 6x7 (a's last dim must equal b's first)");
  EXPECT_EQ(problem_of(OpKind::bmm, {2, 4, 5}, {2, 6, 7}),
            "b: inner dims differ: a is 2x4x5, b is 2x6x7 (a's last dim must equal b's second)");
  EXPECT_EQ(problem_of(OpKind::linear, {4, 5}, {6, 7}),
            "b: inner dims differ: a is 4x5, b is 6x7 (a's last dim must equal b's second)");
  EXPECT_EQ(problem_of(OpKind::bmm, {2, 4, 5}, {3, 5, 7}),
            "b: batch dims differ: a is 2x4x5, b is 3x5x7");
  const Shape seven{7}, two_by_six{2, 6}, three_by_six{3, 6}, deep{1, 1, 4, 6};
  EXPECT_EQ(problem_of(OpKind::mm, {4, 5}, {5, 6}, &seven),
            "bias: mm takes no bias (use addmm or baddbmm)");
  EXPECT_EQ(problem_of(OpKind::addmm, {4, 5}, {5, 6}), "bias: addmm needs a bias");
  EXPECT_EQ(problem_of(OpKind::addmm, {4, 5}, {5, 6}, &seven),
            "bias: bias 7 does not broadcast to the output 4x6 (each of its trailing dims must be "
            "1 or the output's)");
  EXPECT_EQ(problem_of(OpKind::addmm, {4, 5}, {5, 6}, &deep),
            "bias: bias 1x1x4x6 has more dims than the output 4x6");
  // A linear of [2, 3, 5] multiplies its 2 x 3 rows as one GEMM dim: a [3, 6] bias (one row
  // per sequence position, the same for every batch) has no single row stride there.
  EXPECT_THAT(problem_of(OpKind::linear, {2, 3, 5}, {6, 5}, &three_by_six),
              HasSubstr("bias: bias 3x6 is broadcast along some of the output dims linear "
                        "multiplies as one"));
  EXPECT_EQ(problem_of(OpKind::linear, {2, 3, 5}, {6, 5}, &two_by_six),
            "bias: bias 2x6 does not broadcast to the output 2x3x6 (each of its trailing dims "
            "must be 1 or the output's)");
  const Shape six{6};
  EXPECT_EQ(problem_of(OpKind::linear, {2, 3, 5}, {6, 5}, &six), "");
}

}  // namespace
}  // namespace symmesh
