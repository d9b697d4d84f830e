#include "core/roofline.hpp"

#include <algorithm>
#include <cmath>

#include "core/errors.hpp"

namespace symmesh::roofline {
namespace {

double saturation(int64_t x) {
  const double v = static_cast<double>(x);
  return v / (v + kHalfDim);
}

}  // namespace

double launch_overhead_s(const GpuSpec& gpu) {
  return gpu.launch_overhead_s.value_or(kLaunchOverhead_s);
}

double peak_efficiency(const GpuSpec& gpu, DType dtype) {
  const auto it = gpu.gemm_efficiency.find(peak_key(dtype));
  return it != gpu.gemm_efficiency.end() ? it->second : kPeakEfficiency;
}

double hbm_bandwidth_bytes_per_s(const GpuSpec& gpu) {
  return gpu.memory_sustained_bandwidth_bytes_per_s > 0 ? gpu.memory_sustained_bandwidth_bytes_per_s
                                                        : gpu.memory_bandwidth_bytes_per_s;
}

int64_t gemm_waves(const GpuSpec& gpu, int64_t batch, int64_t m, int64_t n) {
  if (gpu.sm_count <= 0 || batch <= 0 || m <= 0 || n <= 0) return 0;
  // In doubles: batch × tiles can pass 2^63 for absurd shapes, and a wave count need not
  // be exact there (it is only compared and multiplied into a time).
  const auto tiles_along = [](int64_t x) { return static_cast<double>((x - 1) / kWaveTile + 1); };
  const double tiles = static_cast<double>(batch) * tiles_along(m) * tiles_along(n);
  // Capped below 2^63, so that the conversion stays defined for shapes no GPU could hold.
  return static_cast<int64_t>(std::min(std::ceil(tiles / gpu.sm_count), 9e18));
}

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

double gemm_wave_flops(const GpuSpec& gpu, DType dtype, int64_t batch, int64_t m, int64_t n,
                       int64_t k) {
  const int64_t waves = gemm_waves(gpu, batch, m, n);
  if (waves <= 1 || k <= 0) return 0.0;  // at most one wave: split-K fills the SMs
  const double tile = static_cast<double>(kWaveTile);
  return static_cast<double>(waves) * gpu.sm_count * 2.0 * tile * tile *
         (static_cast<double>(k) + kHalfDim) / peak_efficiency(gpu, dtype);
}

double gemm_effective_flops(const GpuSpec& gpu, DType dtype, int64_t batch, int64_t m, int64_t n,
                            int64_t k) {
  // 2 b (m + h)(n + h)(k + h) / E, written as flops / efficiency × (0.85 / E) so that a GPU
  // without gemm_efficiency gives exactly the doubles it gave before they existed.
  const double shape =
      gemm_effective_flops(batch, m, n, k) * (kPeakEfficiency / peak_efficiency(gpu, dtype));
  return std::max(shape, gemm_wave_flops(gpu, dtype, batch, m, n, k));
}

double tensor_op_effective_flops(const GpuSpec& gpu, DType dtype, const TensorOpCost& cost) {
  double total = 0;
  for (const LocalGemm& g : cost.products)
    total += gemm_effective_flops(gpu, dtype, g.batch, g.m, g.n, g.k);
  return total * cost.work_fraction;
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
  const double bandwidth = hbm_bandwidth_bytes_per_s(gpu);
  if (!(bandwidth > 0))
    throw InvalidArgument("must be > 0 to time memory-bound ops", "cluster.gpu.memory.bandwidth");
  return bytes / bandwidth;
}

double matmul_duration_s(const GpuSpec& gpu, const MatmulWork& work) {
  // An empty output (a zero-size dim, or an empty torch.chunk piece) launches nothing:
  // ATen's mm returns an empty result before calling cuBLAS, and hw/matmul.cpp does too.
  // (k = 0 with a non-empty output still writes it: zeros, or the bias.)
  if (work.batch <= 0 || work.m <= 0 || work.n <= 0) return 0.0;
  const double peak = peak_flops_per_s(gpu, work.dtype);
  const double flops = work.flops() * work.work_fraction;
  // The shape term as before per-dtype efficiencies and waves existed (× E / 0.85 = × 1
  // without gemm_efficiency: the same doubles), then the waves' lower bound.
  const double efficiency = gemm_efficiency(work.m, work.n, work.k) *
                            (peak_efficiency(gpu, work.dtype) / kPeakEfficiency);
  double compute_s = flops > 0 ? flops / (peak * efficiency) : 0.0;
  const double wave_flops =
      gemm_wave_flops(gpu, work.dtype, work.batch, work.m, work.n, work.k) * work.work_fraction;
  compute_s = std::max(compute_s, wave_flops / peak);
  // A causal product skips the blocks above the diagonal: neither their FLOPs nor their
  // loads and stores (work_fraction of both).
  const double bytes = matmul_bytes_moved(work) * work.work_fraction;
  return std::max(compute_s, hbm_time_s(gpu, bytes)) + launch_overhead_s(gpu);
}

double reduce_duration_s(const GpuSpec& gpu, const ReduceWork& work) {
  if (work.fused_with_transfer) return 0.0;
  const double bytes = 3.0 * static_cast<double>(work.elements) *
                       static_cast<double>(element_size_bytes(work.dtype));
  return hbm_time_s(gpu, bytes) + launch_overhead_s(gpu);
}

double copy_duration_s(const GpuSpec& gpu, const CopyWork& work) {
  return hbm_time_s(gpu, 2.0 * static_cast<double>(work.bytes())) + launch_overhead_s(gpu);
}

double tensor_op_duration_s(const GpuSpec& gpu, DType dtype, const TensorOpCost& cost) {
  if (cost.bytes <= 0 && cost.products.empty()) return 0.0;  // an empty piece launches nothing
  const double flops = tensor_op_effective_flops(gpu, dtype, cost);
  const double compute_s = flops > 0 ? flops / peak_flops_per_s(gpu, dtype) : 0.0;
  return std::max(compute_s, hbm_time_s(gpu, cost.bytes)) + cost.kernels * launch_overhead_s(gpu);
}

double local_copy_duration_s(const GpuSpec& gpu, int64_t bytes) {
  return hbm_time_s(gpu, 2.0 * static_cast<double>(bytes)) + launch_overhead_s(gpu);
}

}  // namespace symmesh::roofline
