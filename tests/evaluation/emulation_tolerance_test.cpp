// The error bound of emulated matmuls (evaluation/emulation_tolerance.hpp): unit roundoffs
// from the formats' significand widths (IEEE 754 binary64/32/16: 53, 24, 11 bits; bfloat16:
// 8), Higham's γ_n worked by hand, and the verdict over a report.
#include "evaluation/emulation_tolerance.hpp"

#include <gtest/gtest.h>

#include <cmath>

#include "core/errors.hpp"
#include "evaluation/simulation_report.hpp"

namespace symmesh::evaluation {
namespace {

TEST(EmulationTolerance, UnitRoundoffIsHalfTheMachineEpsilon) {
  // u = 2^-p: fp64 1.1102e-16, fp32 5.9605e-8, fp16 4.8828e-4, bf16 3.90625e-3.
  EXPECT_DOUBLE_EQ(unit_roundoff(DType::fp64), 1.1102230246251565e-16);
  EXPECT_DOUBLE_EQ(unit_roundoff(DType::fp32), 5.9604644775390625e-8);
  EXPECT_DOUBLE_EQ(unit_roundoff(DType::fp16), 4.8828125e-4);
  EXPECT_DOUBLE_EQ(unit_roundoff(DType::bf16), 3.90625e-3);
  EXPECT_THROW(unit_roundoff(DType::fp8_e4m3), Unsupported);
}

TEST(EmulationTolerance, GammaIsHighamsBound) {
  // k = 29 in fp32: n = 2·29 + 2 = 60; γ_60 = 60u / (1 - 60u) with u = 2^-24:
  // 60u = 3.5762787e-6, over 1 - 3.5762787e-6: 3.5762915e-6.
  EXPECT_EQ(matmul_rounding_count(29), 60);
  EXPECT_NEAR(higham_gamma(60, std::ldexp(1.0, -24)), 3.5762915e-6, 1e-12);
  // bf16, k = 127: n = 256, 256 x 2^-8 = 1: the bound says nothing.
  EXPECT_TRUE(std::isinf(higham_gamma(matmul_rounding_count(127), unit_roundoff(DType::bf16))));
}

OpReport emulated(const std::string& name, double error, std::optional<double> bound) {
  OpReport op;
  op.name = name;
  op.max_abs_error = error;
  op.error_bound = bound;
  return op;
}

TEST(EmulationTolerance, VerdictFailsAnOpBeyondItsBoundAndSkipsUnboundedOnes) {
  SimulationReport report;
  EXPECT_FALSE(emulation_verdict(report));  // not emulated
  report.ops = {emulated("a", 1e-7, 2e-7), emulated("b", 0, 0)};
  ASSERT_TRUE(emulation_verdict(report));
  EXPECT_TRUE(emulation_verdict(report)->passed());
  EXPECT_EQ(emulation_verdict(report)->checked, 2);
  report.ops.push_back(emulated("c", 3e-7, 2e-7));
  report.ops.push_back(emulated("d", NAN, 1.0));           // NaN never passes
  report.ops.push_back(emulated("e", 5.0, INFINITY));      // no bound: not judged
  report.ops.push_back(emulated("f", 5.0, std::nullopt));  // tensor op: not judged
  const auto v = emulation_verdict(report);
  EXPECT_FALSE(v->passed());
  EXPECT_EQ(v->failed, (std::vector<std::string>{"c", "d"}));
  EXPECT_EQ(v->checked, 4);
  EXPECT_EQ(v->unbounded, 2);
}

}  // namespace
}  // namespace symmesh::evaluation
