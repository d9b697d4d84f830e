#include "evaluation/dtype_values.hpp"

#include <cstring>

#include "core/errors.hpp"
#include "sim/half_precision.hpp"

namespace symmesh::evaluation {
namespace {

void require_emulatable(DType dtype) {
  if (dtype != DType::fp32 && dtype != DType::fp64 && dtype != DType::bf16 && dtype != DType::fp16)
    throw Unsupported("emulation carries fp64, fp32, bf16 and fp16 values, not " + to_string(dtype),
                      "--emulate");
}

}  // namespace

std::vector<unsigned char> encode_values(const std::vector<double>& values, DType dtype) {
  require_emulatable(dtype);
  const size_t e = static_cast<size_t>(element_size_bytes(dtype));
  std::vector<unsigned char> out(values.size() * e);
  for (size_t i = 0; i < values.size(); ++i) {
    unsigned char* at = out.data() + i * e;
    if (dtype == DType::fp64) {
      std::memcpy(at, &values[i], 8);
    } else if (dtype == DType::fp32) {
      const float f = static_cast<float>(values[i]);
      std::memcpy(at, &f, 4);
    } else {
      const float f = static_cast<float>(values[i]);
      const uint16_t h = dtype == DType::bf16 ? sim::float_to_bf16(f) : sim::float_to_fp16(f);
      std::memcpy(at, &h, 2);
    }
  }
  return out;
}

std::vector<double> decode_values(const std::vector<unsigned char>& bytes, DType dtype) {
  require_emulatable(dtype);
  const size_t e = static_cast<size_t>(element_size_bytes(dtype));
  std::vector<double> out(bytes.size() / e);
  for (size_t i = 0; i < out.size(); ++i) {
    const unsigned char* at = bytes.data() + i * e;
    if (dtype == DType::fp64) {
      std::memcpy(&out[i], at, 8);
    } else if (dtype == DType::fp32) {
      float f;
      std::memcpy(&f, at, 4);
      out[i] = f;
    } else {
      uint16_t h;
      std::memcpy(&h, at, 2);
      out[i] = dtype == DType::bf16 ? sim::bf16_to_float(h) : sim::fp16_to_float(h);
    }
  }
  return out;
}

}  // namespace symmesh::evaluation
