#include "tools/cli/nccl_tests_table.hpp"

#include <cctype>
#include <cstdio>
#include <limits>

#include "core/errors.hpp"
#include "core/quantity.hpp"
#include "core/text.hpp"
#include "reports/simulation_output.hpp"

namespace symmesh::cli {

int64_t parse_nccl_tests_size(std::string_view text, std::string_view flag) {
  const std::string where(flag);
  std::string_view digits = text;
  int64_t scale = 1;
  if (!digits.empty()) {
    const char last = digits.back();
    if (last == 'K' || last == 'k') scale = 1LL << 10;
    if (last == 'M' || last == 'm') scale = 1LL << 20;
    if (last == 'G' || last == 'g') scale = 1LL << 30;
    if (scale > 1) digits.remove_suffix(1);
  }
  bool whole = !digits.empty() && digits.size() <= 15;
  for (char c : digits) whole = whole && std::isdigit(static_cast<unsigned char>(c));
  if (whole) {
    const int64_t number = std::stoll(std::string(digits));
    if (number > std::numeric_limits<int64_t>::max() / scale)
      throw InvalidArgument("'" + std::string(text) + "' is more bytes than symmesh counts", where);
    const int64_t value = number * scale;
    if (value < 1)
      throw InvalidArgument("expected a size >= 1 byte, got '" + std::string(text) + "'", where);
    return value;
  }
  return parse_size_bytes(text, where);  // "1 GiB"; its message names the units
}

OpKind parse_nccl_tests_collective(std::string_view text) {
  if (text == "all_reduce") return OpKind::all_reduce;
  if (text == "all_gather") return OpKind::all_gather;
  if (text == "reduce_scatter") return OpKind::reduce_scatter;
  if (text == "alltoall" || text == "all_to_all") return OpKind::all_to_all;
  throw InvalidArgument("unknown collective '" + std::string(text) +
                            "' (all_reduce, all_gather, reduce_scatter, alltoall)",
                        "--nccl-tests");
}

std::string nccl_tests_type(DType dtype) {
  switch (dtype) {
    case DType::fp32:
      return "float";
    case DType::fp16:
      return "half";
    case DType::bf16:
      return "bfloat16";
    case DType::fp64:
      return "double";
    case DType::int8:
      return "int8";
    case DType::int32:
      return "int32";
    case DType::int64:
      return "int64";
    case DType::fp8_e4m3:
      return "f8e4m3";
    case DType::fp8_e5m2:
      return "f8e5m2";
  }
  return to_string(dtype);
}

std::string nccl_tests_redop(OpKind op) {
  return op == OpKind::all_reduce || op == OpKind::reduce_scatter ? "sum" : "none";
}

namespace {

std::string printf_text(const char* format, auto... values) {
  char buffer[256];
  std::snprintf(buffer, sizeof buffer, format, values...);
  return buffer;
}

// nccl-tests' time cell: two decimals under 100 us, one under 10,000 us, none from there.
std::string time_cell_us(double time_s) {
  const double us = time_s * 1e6;
  if (us >= 10000.0) return printf_text("%7.0f", us);
  if (us >= 100.0) return printf_text("%7.1f", us);
  return printf_text("%7.2f", us);
}

double average_busbw_gbps(const evaluation::CollectivePerf& perf) {
  if (perf.rows.empty()) return 0;
  double sum = 0;
  for (const auto& row : perf.rows) sum += row.bandwidth.busbw_bytes_per_s * 1e-9;
  return sum / static_cast<double>(perf.rows.size());
}

}  // namespace

std::string nccl_tests_text(const evaluation::CollectivePerfRequest& request,
                            const evaluation::CollectivePerf& perf) {
  const ClusterSpec& c = request.cluster;
  const std::string type = nccl_tests_type(request.dtype);
  const std::string redop = nccl_tests_redop(request.op);
  std::string out = "# symmesh simulate --nccl-tests " + to_string(request.op) + ": " +
                    std::to_string(perf.ranks) + " GPUs, " + std::to_string(c.nodes) + " node" +
                    (c.nodes > 1 ? "s" : "") + " x " + std::to_string(c.gpus_per_node) + " " +
                    c.gpu.name + " (" + c.intra_node.kind +
                    (c.nodes > 1 ? ", " + c.inter_node.kind : std::string()) + "), cluster " +
                    c.name + "\n";
  out += printf_text("# minBytes %lld maxBytes %lld step: %lld(factor) type: %s\n",
                     static_cast<long long>(request.min_bytes),
                     static_cast<long long>(request.max_bytes),
                     static_cast<long long>(request.step_factor), type.c_str());
  out +=
      "# simulated on the SimGrid model, one in-place collective per size; nothing validated "
      "(#wrong N/A); how each size ran is listed at the end\n#\n";
  out += printf_text("# %10s  %12s  %8s  %6s  %6s           simulated (in-place)\n", "", "", "", "",
                     "");
  out += printf_text("# %10s  %12s  %8s  %6s  %6s  %7s  %6s  %6s %6s\n", "size", "count", "type",
                     "redop", "root", "time", "algbw", "busbw", "#wrong");
  out += printf_text("# %10s  %12s  %8s  %6s  %6s  %7s  %6s  %6s  %5s\n", "(B)", "(elements)", "",
                     "", "", "(us)", "(GB/s)", "(GB/s)", "");
  for (const auto& row : perf.rows)
    out += printf_text("%12lld  %12lld  %8s  %6s  %6i  %7s  %6.2f  %6.2f  %5s\n",
                       static_cast<long long>(row.bytes), static_cast<long long>(row.count),
                       type.c_str(), redop.c_str(), -1, time_cell_us(row.time_s).c_str(),
                       row.bandwidth.algbw_bytes_per_s * 1e-9,
                       row.bandwidth.busbw_bytes_per_s * 1e-9, "N/A");
  for (int64_t skipped : perf.skipped_bytes)
    out += "# skipped " + std::to_string(skipped) + " B: under one " + type + " per rank\n";
  out += printf_text("# Avg bus bandwidth    : %g \n#\n", average_busbw_gbps(perf));
  // How each size ran, as runs of consecutive sizes (nccl-tests' rows keep their columns).
  for (size_t i = 0; i < perf.rows.size();) {
    size_t j = i;
    while (j + 1 < perf.rows.size() &&
           perf.rows[j + 1].implementation == perf.rows[i].implementation)
      ++j;
    out += printf_text("# %lld..%lld B: %s\n", static_cast<long long>(perf.rows[i].bytes),
                       static_cast<long long>(perf.rows[j].bytes),
                       perf.rows[i].implementation.c_str());
    i = j + 1;
  }
  return out;
}

nlohmann::json nccl_tests_json(const evaluation::CollectivePerfRequest& request,
                               const evaluation::CollectivePerf& perf) {
  nlohmann::json j;
  j["nccl_tests"] = to_string(request.op);
  j["backend"] = "sim";
  j["cluster"] = reports::cluster_json(request.cluster);
  j["ranks"] = perf.ranks;
  j["dtype"] = to_string(request.dtype);
  j["type"] = nccl_tests_type(request.dtype);
  j["redop"] = nccl_tests_redop(request.op);
  j["min_bytes"] = request.min_bytes;
  j["max_bytes"] = request.max_bytes;
  j["step_factor"] = request.step_factor;
  j["rows"] = nlohmann::json::array();
  for (const auto& row : perf.rows)
    j["rows"].push_back({{"bytes", row.bytes},
                         {"count", row.count},
                         {"root", -1},
                         {"time_s", row.time_s},
                         {"algbw_bytes_per_s", row.bandwidth.algbw_bytes_per_s},
                         {"busbw_bytes_per_s", row.bandwidth.busbw_bytes_per_s},
                         {"implementation", row.implementation}});
  j["skipped_bytes"] = perf.skipped_bytes;
  j["average_busbw_bytes_per_s"] = average_busbw_gbps(perf) * 1e9;
  return j;
}

}  // namespace symmesh::cli
