#pragma once
// Element types symmesh knows, with their sizes. One text form each (to_string).
#include <cstdint>
#include <string>
#include <string_view>

namespace symmesh {

enum class DType { bf16, fp16, fp32, fp64, fp8_e4m3, fp8_e5m2, int8, int32, int64 };

int64_t element_size_bytes(DType dtype);
std::string to_string(DType dtype);  // "bf16", "fp8_e4m3", …
// Accepts the canonical names plus common aliases (bfloat16, float16/half, float32/float,
// float64/double, fp8 = fp8_e4m3, e4m3, e5m2). Throws InvalidArgument naming `where`.
DType parse_dtype(std::string_view text, std::string_view where = "dtype");
// The dtype's family for peak-rate tables: "bf16", "fp16", "fp32", "fp64", "fp8", "int8"…
std::string peak_key(DType dtype);

}  // namespace symmesh
