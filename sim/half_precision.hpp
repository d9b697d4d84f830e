#pragma once
// 16-bit float conversions for emulated numerics: bf16 and fp16 values are widened to
// float for the arithmetic and rounded back (round to nearest, ties to even), as GPU
// kernels that accumulate in fp32 do.
#include <cstdint>

namespace symmesh::sim {

// bf16 is the top half of an IEEE float: widening is exact.
float bf16_to_float(uint16_t bits);
// Round to nearest even; NaN stays a (quiet) NaN, overflow rounds to ±inf.
uint16_t float_to_bf16(float value);

// IEEE 754 binary16 (1 sign, 5 exponent, 10 mantissa bits), subnormals included.
float fp16_to_float(uint16_t bits);
// Round to nearest even; values beyond 65504 round to ±inf, tiny ones to subnormals or ±0.
uint16_t float_to_fp16(float value);

}  // namespace symmesh::sim
