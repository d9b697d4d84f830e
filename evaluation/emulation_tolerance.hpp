#pragma once
// How far an emulated matmul may be from the unsharded product and still be right: a
// standard floating-point error bound, so that `simulate --emulate` can say pass or fail.
//
// Higham, Accuracy and Stability of Numerical Algorithms (2nd ed., SIAM 2002), Lemma 3.1
// and §3.1 (eq. 3.5): if each of n roundings on the way to a result has relative error at
// most the unit roundoff u, then |computed - exact| <= γ_n · Σ|a_i||b_i| with
// γ_n = n·u / (1 - n·u), for any order of summation. The order is what sharding changes
// (partial sums per rank, reduced over a ring), so the bound covers every strategy.
//
// n for a matmul of inner dimension k (emulated as sim/emulated_ops.cpp does: a local GEMM
// in float — or double for fp64 — stored in the dtype, partial sums reduced with an add in
// float stored in the dtype): along any product's way to the output at most k - 1
// additions and the product itself, each rounded up to twice (in float, then when a
// partial sum is stored in the dtype), plus the bias addition and the final store:
// n = 2k + 2. Both sides start from the same dtype-rounded inputs, so input rounding is
// no error here.
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "core/dtype.hpp"

namespace symmesh::evaluation {

// u = 2^-p for p significand bits (the hidden bit included): fp64 2^-53, fp32 2^-24,
// fp16 2^-11, bf16 2^-8. Throws Unsupported for a dtype that is not emulated.
double unit_roundoff(DType dtype);
// γ_n = n·u / (1 - n·u); infinity when n·u >= 1 (the bound says nothing there).
double higham_gamma(int64_t n, double u);
// The rounding count of a matmul of inner dimension k (see above): 2k + 2.
int64_t matmul_rounding_count(int64_t k);

}  // namespace symmesh::evaluation
