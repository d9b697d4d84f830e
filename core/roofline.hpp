#pragma once
// The roofline model that turns a local compute op into a duration on one GPU. Shared by
// the simulator (sim/compute_model.hpp times every compute op of a Program with it) and
// the analytic cost model (strategies/analytic_cost_model.hpp prices each candidate's
// local matmul with it), so both see the same compute time.
//
//   matmul:  work_fraction × max(flops / (peak[dtype] × efficiency(m, n, k)),
//                                bytes_moved / HBM bandwidth) + kLaunchOverhead_s
//            (work_fraction 0.5 for a causal product, core/program.hpp, which skips the
//            blocks above the diagonal: their FLOPs, loads and stores)
//   reduce:  3 × elements × element size / HBM bandwidth + kLaunchOverhead_s
//            (read dst, read src, write dst); 0 when fused into the delivering transfer
//   copy:    2 × bytes / HBM bandwidth + kLaunchOverhead_s (read + write)
//   tensor op (core/tensor_op.hpp): max(Σ products' flops / (peak × efficiency) × work_fraction,
//            bytes / HBM bandwidth) + kernels × kLaunchOverhead_s — attention's products at
//            the GEMM efficiency below (FlashAttention runs them as tiled tensor-core GEMMs),
//            the memory-bound ops at HBM bandwidth
//
// GEMM efficiency — the fraction of the dense peak a GEMM of shape (m, n, k) reaches:
//
//   efficiency(m, n, k) = kPeakEfficiency × s(m) × s(n) × s(k),   s(x) = x / (x + kHalfDim)
//
// Rationale: tensor-core GEMMs tile the output in blocks of 64–256 and stream k in slices
// of 32–64, so a dimension of x elements fills about x / (x + h) of the tiles' work (tile
// quantisation, pipeline fill and too few blocks to occupy every SM all scale like this);
// h = kHalfDim = 64 puts the half-way point at one tile. Large GEMMs saturate at
// kPeakEfficiency = 0.85 × 0.977 ≈ 0.83 (8192³), in line with the 75–85 % that cuBLAS
// reaches on H100 for big bf16 shapes; skinny ones pay for it (m = 16: × 0.2).
// Each s is monotone increasing in its argument, and flops / efficiency is proportional to
// (m + h)(n + h)(k + h), so a larger GEMM never takes less time.
#include <cstdint>

#include "core/cluster_spec.hpp"
#include "core/program.hpp"

namespace symmesh::roofline {

// Fixed cost of launching one kernel (a CUDA launch plus its ramp-up, measured at about
// 3–6 µs for cuBLAS calls); it keeps tiny ops from costing nothing.
inline constexpr double kLaunchOverhead_s = 5e-6;
// Fraction of the dense peak reached when all three GEMM dims are large.
inline constexpr double kPeakEfficiency = 0.85;
// GEMM dimension at which one dim alone halves the efficiency (one tile, see above).
inline constexpr double kHalfDim = 64.0;

// efficiency(m, n, k) in [0, kPeakEfficiency); 0 when any dim is 0.
double gemm_efficiency(int64_t m, int64_t n, int64_t k);

// flops / efficiency(m, n, k): the work a GEMM costs at the dense peak, in "peak flops"
// (0 for an empty GEMM). Dividing by peak_flops_per_s gives its compute-bound time.
double gemm_effective_flops(int64_t batch, int64_t m, int64_t n, int64_t k);

// The peak for `dtype` from `gpu.peak_flops_per_s` (keyed by peak_key(dtype)). Throws
// InvalidArgument naming the dtype and the keys the cluster does have.
double peak_flops_per_s(const GpuSpec& gpu, DType dtype);

// Bytes a matmul reads and writes in HBM: a, b and c once each, c twice when accumulating,
// plus the bias range when there is one (at most one element per element of c).
double matmul_bytes_moved(const MatmulWork& work);

// HBM time of `bytes` (no launch overhead). Throws InvalidArgument when the GPU has no
// memory bandwidth.
double hbm_time_s(const GpuSpec& gpu, double bytes);

double matmul_duration_s(const GpuSpec& gpu, const MatmulWork& work);
double reduce_duration_s(const GpuSpec& gpu, const ReduceWork& work);
double copy_duration_s(const GpuSpec& gpu, const CopyWork& work);
double tensor_op_duration_s(const GpuSpec& gpu, DType dtype, const TensorOpCost& cost);
// A put whose receiver is the sender itself: a device-local copy of `bytes`.
double local_copy_duration_s(const GpuSpec& gpu, int64_t bytes);

}  // namespace symmesh::roofline
