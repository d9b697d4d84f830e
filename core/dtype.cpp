#include "core/dtype.hpp"

#include <array>

#include "core/errors.hpp"

namespace symmesh {
namespace {

struct DTypeInfo {
  DType dtype;
  const char* name;
  int64_t size_bytes;
  const char* peak_key;
};

constexpr std::array<DTypeInfo, 9> kTable{{
    {DType::bf16, "bf16", 2, "bf16"},
    {DType::fp16, "fp16", 2, "fp16"},
    {DType::fp32, "fp32", 4, "fp32"},
    {DType::fp64, "fp64", 8, "fp64"},
    {DType::fp8_e4m3, "fp8_e4m3", 1, "fp8"},
    {DType::fp8_e5m2, "fp8_e5m2", 1, "fp8"},
    {DType::int8, "int8", 1, "int8"},
    {DType::int32, "int32", 4, "int32"},
    {DType::int64, "int64", 8, "int64"},
}};

const DTypeInfo& info(DType dtype) {
  return kTable[static_cast<size_t>(dtype)];
}

struct Alias {
  const char* text;
  DType dtype;
};
constexpr std::array<Alias, 11> kAliases{{
    {"bfloat16", DType::bf16},
    {"float16", DType::fp16},
    {"half", DType::fp16},
    {"float32", DType::fp32},
    {"float", DType::fp32},
    {"float64", DType::fp64},
    {"double", DType::fp64},
    {"fp8", DType::fp8_e4m3},
    {"e4m3", DType::fp8_e4m3},
    {"e5m2", DType::fp8_e5m2},
    {"int", DType::int32},
}};

}  // namespace

int64_t element_size_bytes(DType dtype) {
  return info(dtype).size_bytes;
}
std::string to_string(DType dtype) {
  return info(dtype).name;
}
std::string peak_key(DType dtype) {
  return info(dtype).peak_key;
}

DType parse_dtype(std::string_view text, std::string_view where) {
  for (const auto& entry : kTable)
    if (text == entry.name) return entry.dtype;
  for (const auto& alias : kAliases)
    if (text == alias.text) return alias.dtype;
  std::string known;
  for (const auto& entry : kTable) known += std::string(known.empty() ? "" : ", ") + entry.name;
  throw InvalidArgument("unknown dtype '" + std::string(text) + "' (known: " + known + ")",
                        std::string(where));
}

}  // namespace symmesh
