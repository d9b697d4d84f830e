#pragma once
// `symmesh simulate --nccl-tests OP`: a collective simulated over a range of sizes, printed
// in the layout of nccl-tests' own output (all_reduce_perf and its siblings), so that the
// simulated figures sit line by line next to measured ones.
#include <cstdint>
#include <nlohmann/json.hpp>
#include <string>
#include <string_view>

#include "core/cluster_spec.hpp"
#include "evaluation/collective_perf.hpp"

namespace symmesh::cli {

// A size as nccl-tests' -b/-e take it: a whole number of bytes with an optional K, M or G
// (powers of 1024: "8", "128M", "8G"), or a symmesh size ("1 GiB", "64 KB"). Throws
// InvalidArgument naming `flag`.
int64_t parse_nccl_tests_size(std::string_view text, std::string_view flag);
// nccl-tests' program names less "_perf": all_reduce, all_gather, reduce_scatter,
// alltoall (all_to_all too). Throws InvalidArgument naming --nccl-tests.
OpKind parse_nccl_tests_collective(std::string_view text);
// nccl-tests' type and reduction names: float, half, bfloat16, double, …; sum or none.
std::string nccl_tests_type(DType dtype);
std::string nccl_tests_redop(OpKind op);

// The table: nccl-tests' three header lines with one group of columns (size, count, type,
// redop, root, time in us, algbw and busbw in GB/s of 1e9 B, #wrong), its row format
// ("%12li  %12li  %8s  %6s  %6i  %7s  %6.2f  %6.2f  %5s", the time "%7.2f" under 100 us,
// "%7.1f" under 10 ms, "%7.0f" from there) and its "Avg bus bandwidth" footer. #wrong is
// N/A: a simulation carries no data to check. Always in us: the layout is nccl-tests'.
std::string nccl_tests_text(const evaluation::CollectivePerfRequest& request,
                            const evaluation::CollectivePerf& perf);
nlohmann::json nccl_tests_json(const evaluation::CollectivePerfRequest& request,
                               const evaluation::CollectivePerf& perf);

}  // namespace symmesh::cli
