#pragma once
// Helpers for the hw/ tests: tests named Gpu* need GPUs and report SKIPPED (never passed)
// when fewer are visible; everything else runs on any machine.
#include <gtest/gtest.h>

#include <cstdint>
#include <string>
#include <vector>

#include "core/program.hpp"
#include "hw/devices.hpp"

// Skips the current test unless `needed` GPUs are visible, saying why.
#define SYMMESH_REQUIRE_GPUS(needed)                                                             \
  do {                                                                                           \
    const auto symmesh_gpus_ = ::symmesh::hw::visible_gpus();                                    \
    if (symmesh_gpus_.count() < (needed))                                                        \
      GTEST_SKIP() << "needs " << (needed) << " GPU(s), " << symmesh_gpus_.count() << " visible" \
                   << (symmesh_gpus_.why_none.empty() ? "" : " (") << symmesh_gpus_.why_none     \
                   << (symmesh_gpus_.why_none.empty() ? "" : ")");                               \
  } while (0)

namespace symmesh::testing {

inline std::vector<unsigned char> pattern(int64_t bytes, unsigned seed) {
  std::vector<unsigned char> out(static_cast<size_t>(bytes));
  uint32_t x = seed * 2654435761u + 1;
  for (auto& b : out) {
    x ^= x << 13, x ^= x >> 17, x ^= x << 5;
    b = static_cast<unsigned char>(x);
  }
  return out;
}

// A local buffer on `rank` holding `bytes`.
inline BufferRef local_with(Program& program, int rank, std::vector<unsigned char> bytes) {
  const BufferRef ref = program.local_alloc(rank, static_cast<int64_t>(bytes.size()));
  program.set_initial_bytes(rank, ref, std::move(bytes));
  return ref;
}

}  // namespace symmesh::testing
