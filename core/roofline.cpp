#include "core/roofline.hpp"

#include <algorithm>

#include "core/errors.hpp"

namespace symmesh::roofline {
namespace {

double saturation(int64_t x) {
  const double v = static_cast<double>(x);
  return v / (v + kHalfDim);
}

}  // namespace

double gemm_efficiency(int64_t m, int64_t n, int64_t k) {
  if (m <= 0 || n <= 0 || k <= 0) return 0.0;
  return kPeakEfficiency * saturation(m) * saturation(n) * saturation(k);
}

double gemm_effective_flops(int64_t batch, int64_t m, int64_t n, int64_t k) {
  if (batch <= 0 || m <= 0 || n <= 0 || k <= 0) return 0.0;
  const double flops = 2.0 * static_cast<double>(batch) * static_cast<double>(m) *
                       static_cast<double>(n) * static_cast<double>(k);
  return flops / gemm_efficiency(m, n, k);
}

double peak_flops_per_s(const GpuSpec& gpu, DType dtype) {
  const std::string key = peak_key(dtype);
  const auto it = gpu.peak_flops_per_s.find(key);
  if (it != gpu.peak_flops_per_s.end() && it->second > 0) return it->second;
  std::string known;
  for (const auto& [name, value] : gpu.peak_flops_per_s)
    known.append(known.empty() ? "" : ", ").append(name);
  throw InvalidArgument("no peak rate for dtype " + to_string(dtype) + " (key '" + key +
                            "'); the cluster's GPU lists: " + (known.empty() ? "none" : known),
                        "cluster.gpu.peak");
}

double matmul_bytes_moved(const MatmulWork& work) {
  if (work.batch <= 0 || work.m <= 0 || work.n <= 0)
    return 0.0;  // nothing to write: no kernel work
  const double e = static_cast<double>(element_size_bytes(work.dtype));
  const double batch = static_cast<double>(work.batch);
  const double a = static_cast<double>(work.m) * static_cast<double>(work.k);
  const double b = static_cast<double>(work.k) * static_cast<double>(work.n);
  const double c = static_cast<double>(work.m) * static_cast<double>(work.n);
  double bias = 0;  // the distinct bias elements read (a broadcast row is read once)
  if (work.bias.id >= 0) bias = std::min(batch * c, static_cast<double>(work.bias.size_bytes) / e);
  return (batch * (a + b + c * (work.accumulate ? 2.0 : 1.0)) + bias) * e;
}

double hbm_time_s(const GpuSpec& gpu, double bytes) {
  if (!(gpu.memory_bandwidth_bytes_per_s > 0))
    throw InvalidArgument("must be > 0 to time memory-bound ops", "cluster.gpu.memory.bandwidth");
  return bytes / gpu.memory_bandwidth_bytes_per_s;
}

double matmul_duration_s(const GpuSpec& gpu, const MatmulWork& work) {
  // An empty output (a zero-size dim, or an empty torch.chunk piece) launches nothing:
  // ATen's mm returns an empty result before calling cuBLAS, and hw/matmul.cpp does too.
  // (k = 0 with a non-empty output still writes it: zeros, or the bias.)
  if (work.batch <= 0 || work.m <= 0 || work.n <= 0) return 0.0;
  const double peak = peak_flops_per_s(gpu, work.dtype);
  const double flops = work.flops() * work.work_fraction;
  // Same arithmetic as before the roofline moved to core/, so simulated times are unchanged.
  const double compute_s =
      flops > 0 ? flops / (peak * gemm_efficiency(work.m, work.n, work.k)) : 0.0;
  // A causal product skips the blocks above the diagonal: neither their FLOPs nor their
  // loads and stores (work_fraction of both).
  const double bytes = matmul_bytes_moved(work) * work.work_fraction;
  return std::max(compute_s, hbm_time_s(gpu, bytes)) + kLaunchOverhead_s;
}

double reduce_duration_s(const GpuSpec& gpu, const ReduceWork& work) {
  if (work.fused_with_transfer) return 0.0;
  const double bytes = 3.0 * static_cast<double>(work.elements) *
                       static_cast<double>(element_size_bytes(work.dtype));
  return hbm_time_s(gpu, bytes) + kLaunchOverhead_s;
}

double copy_duration_s(const GpuSpec& gpu, const CopyWork& work) {
  return hbm_time_s(gpu, 2.0 * static_cast<double>(work.bytes())) + kLaunchOverhead_s;
}

double tensor_op_duration_s(const GpuSpec& gpu, DType dtype, const TensorOpCost& cost) {
  if (cost.bytes <= 0 && cost.products.empty()) return 0.0;  // an empty piece launches nothing
  const double flops = cost.effective_flops();
  const double compute_s = flops > 0 ? flops / peak_flops_per_s(gpu, dtype) : 0.0;
  return std::max(compute_s, hbm_time_s(gpu, cost.bytes)) + cost.kernels * kLaunchOverhead_s;
}

double local_copy_duration_s(const GpuSpec& gpu, int64_t bytes) {
  return hbm_time_s(gpu, 2.0 * static_cast<double>(bytes)) + kLaunchOverhead_s;
}

}  // namespace symmesh::roofline
