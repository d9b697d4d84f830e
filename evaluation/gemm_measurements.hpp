#pragma once
// Measured GEMM times from a CSV file (`symmesh calibrate --gemm FILE.csv`): published
// benchmarks or one's own, one GEMM per row. The header names the columns, in any order:
//   m, n, k, dtype                 required (dtype as in scenarios: bf16, fp16, fp8, …)
//   seconds | time_ms | time_us    the GEMM's time, or
//   tflops                         its rate, 2 m n k / time, in TFLOP/s
// Each row uses the first of seconds, time_ms, time_us, tflops that it fills (so a file
// may mix times and rates); any other column (id, gpu, source, …) is ignored. Blank lines and lines
// starting with '#' are skipped. Fields are plain: no quotes, no commas inside a field.
#include <cstdint>
#include <string>
#include <vector>

#include "core/dtype.hpp"

namespace symmesh::evaluation {

struct GemmMeasurement {
  DType dtype = DType::bf16;
  int64_t m = 0, n = 0, k = 0;
  double seconds = 0;
  std::string where;  // "FILE:LINE", for messages about this row
};

// The fastest a GEMM row may claim, whatever the GPU: 100,000 TFLOP/s (20 times a B200's
// sparse FP4 peak). The fit also refuses a row faster than the base's own peak.
inline constexpr double kMostGemmFlopsPerS = 1e17;

// The rows of `path`. Throws InvalidArgument naming FILE:LINE:COLUMN and the column for
// a missing column, a row with too few fields, a dimension that is not an integer >= 1, an
// unknown dtype, a time or rate that is not a finite number > 0 or that makes the GEMM run
// faster than kMostGemmFlopsPerS; and for a file with no rows or one that cannot be read
// (a folder, a FIFO).
std::vector<GemmMeasurement> read_gemm_csv(const std::string& path);

}  // namespace symmesh::evaluation
