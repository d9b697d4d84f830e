#pragma once
// Real values <-> the bytes of a dtype, for emulated runs (bf16/fp16 rounded to nearest
// even as GPU kernels do). fp8 and integer types are not emulated: Unsupported.
#include <vector>

#include "core/dtype.hpp"

namespace symmesh::evaluation {

std::vector<unsigned char> encode_values(const std::vector<double>& values, DType dtype);
std::vector<double> decode_values(const std::vector<unsigned char>& bytes, DType dtype);

}  // namespace symmesh::evaluation
