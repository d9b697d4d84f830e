#pragma once
// GEMM microbenchmarks on GPU 0 for `symmesh calibrate` and tools/device-check: the time of
// the algorithm the executor uses (cuBLASLt's first heuristic choice) against the fastest
// of the algorithms cuBLASLt proposes. Transfers are measured by running Programs through
// the executor instead (hw/program_executor.hpp), so they time the real put path.
#include <cstdint>

#include "core/dtype.hpp"

namespace symmesh::hw {

struct GemmTiming {
  DType dtype = DType::bf16;
  int64_t m = 0, n = 0, k = 0;
  double heuristic_s = 0;  // per GEMM, the executor's choice
  double best_s = 0;       // per GEMM, the fastest candidate
  int candidates = 0;      // algorithms timed
  double flops() const { return 2.0 * m * n * k; }
};

// Row-major c = a @ b (no bias), `iterations` timed back to back after a warm-up, on GPU 0.
// bf16, fp16, fp32 and fp64; Unsupported otherwise; DeviceUnavailable without a GPU.
GemmTiming benchmark_gemm(DType dtype, int64_t m, int64_t n, int64_t k, int iterations,
                          int max_candidates = 8);

}  // namespace symmesh::hw
