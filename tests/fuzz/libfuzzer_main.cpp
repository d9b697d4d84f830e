// The libFuzzer entry point of one target, chosen when it is compiled: SYMMESH_FUZZ_TARGET
// names a body of fuzz_targets.hpp (tests/fuzz/CMakeLists.txt builds one per target).
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "tests/fuzz/fuzz_targets.hpp"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  symmesh::fuzz::SYMMESH_FUZZ_TARGET(std::string_view(reinterpret_cast<const char*>(data), size));
  return 0;
}
