#include "sim/half_precision.hpp"

#include <bit>
#include <cmath>

namespace symmesh::sim {

float bf16_to_float(uint16_t bits) {
  return std::bit_cast<float>(static_cast<uint32_t>(bits) << 16);
}

uint16_t float_to_bf16(float value) {
  const uint32_t bits = std::bit_cast<uint32_t>(value);
  if (std::isnan(value)) return static_cast<uint16_t>((bits >> 16) | 0x0040u);  // quiet NaN
  // Adding 0x7FFF plus the lowest kept bit rounds to nearest with ties to even; a carry
  // into the exponent is the correct rounding (up to the next binade or to inf).
  const uint32_t lsb = (bits >> 16) & 1u;
  return static_cast<uint16_t>((bits + 0x7FFFu + lsb) >> 16);
}

float fp16_to_float(uint16_t bits) {
  const uint32_t sign = static_cast<uint32_t>(bits & 0x8000u) << 16;
  const uint32_t exponent = (bits >> 10) & 0x1Fu;
  const uint32_t mantissa = bits & 0x3FFu;
  if (exponent == 0x1F)  // inf or NaN
    return std::bit_cast<float>(sign | 0x7F800000u | (mantissa << 13));
  if (exponent == 0) {  // zero or subnormal: mantissa × 2^-24, exact in float
    const float magnitude = std::ldexp(static_cast<float>(mantissa), -24);
    return sign ? -magnitude : magnitude;
  }
  return std::bit_cast<float>(sign | ((exponent + 112u) << 23) | (mantissa << 13));
}

uint16_t float_to_fp16(float value) {
  const uint32_t bits = std::bit_cast<uint32_t>(value);
  const uint16_t sign = static_cast<uint16_t>((bits >> 16) & 0x8000u);
  const uint32_t abs_bits = bits & 0x7FFFFFFFu;
  if (abs_bits >= 0x7F800000u)  // inf or NaN
    return static_cast<uint16_t>(sign | 0x7C00u | (abs_bits > 0x7F800000u ? 0x200u : 0u));
  const int exponent = static_cast<int>(abs_bits >> 23) - 127;
  if (exponent > 15) return static_cast<uint16_t>(sign | 0x7C00u);  // overflow
  if (exponent >= -14) {
    // Normal half: keep 10 mantissa bits, round the 13 dropped ones to nearest even. A
    // carry out of the mantissa moves to the next exponent (or to inf), which is right.
    const uint32_t mantissa = abs_bits & 0x7FFFFFu;
    uint32_t half = (static_cast<uint32_t>(exponent + 15) << 10) | (mantissa >> 13);
    const uint32_t rest = mantissa & 0x1FFFu;
    if (rest > 0x1000u || (rest == 0x1000u && (half & 1u))) ++half;
    return static_cast<uint16_t>(sign | half);
  }
  // Subnormal half (or zero): the value in units of 2^-24, rounded to nearest even.
  const float scaled = std::ldexp(std::bit_cast<float>(abs_bits), 24);
  const float rounded = std::nearbyint(scaled);  // default rounding mode: ties to even
  return static_cast<uint16_t>(sign | static_cast<uint16_t>(rounded));
}

}  // namespace symmesh::sim
