#include "evaluation/emulation_tolerance.hpp"

#include <cmath>
#include <limits>

#include "core/errors.hpp"

namespace symmesh::evaluation {

double unit_roundoff(DType dtype) {
  switch (dtype) {
    case DType::fp64:
      return std::ldexp(1.0, -53);
    case DType::fp32:
      return std::ldexp(1.0, -24);
    case DType::fp16:
      return std::ldexp(1.0, -11);
    case DType::bf16:
      return std::ldexp(1.0, -8);
    default:
      throw Unsupported("no error bound for " + to_string(dtype) + " (it is not emulated)",
                        "emulation");
  }
}

double higham_gamma(int64_t n, double u) {
  const double nu = static_cast<double>(n) * u;
  if (nu >= 1) return std::numeric_limits<double>::infinity();
  return nu / (1 - nu);
}

int64_t matmul_rounding_count(int64_t k) {
  return 2 * k + 2;
}

}  // namespace symmesh::evaluation
