#pragma once
// The roofline model that turns a local compute op into a duration on one GPU. Shared by
// the simulator (sim/compute_model.hpp times every compute op of a Program with it) and
// the analytic cost model (strategies/analytic_cost_model.hpp prices each candidate's
// local matmul with it), so both see the same compute time.
//
//   matmul:  work_fraction × max(compute time (efficiency and waves below),
//                                bytes_moved / HBM bandwidth) + launch overhead
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
//   efficiency(m, n, k) = E[dtype] × s(m) × s(n) × s(k),   s(x) = x / (x + kHalfDim)
//
// E[dtype] is the cluster's gpu.gemm_efficiency for the dtype's peak key, else
// kPeakEfficiency (0.85). Rationale: tensor-core GEMMs tile the output in blocks of 64–256
// and stream k in slices of 32–64, so a dimension of x elements fills about x / (x + h) of
// the tiles' work (tile quantisation, pipeline fill and too few blocks to occupy every SM
// all scale like this); h = kHalfDim = 64 puts the half-way point at one tile. Large GEMMs
// saturate at kPeakEfficiency = 0.85 × 0.977 ≈ 0.83 (8192³), in line with the 75–85 % that
// cuBLAS reaches on H100 for big bf16 shapes; skinny ones pay for it (m = 16: × 0.2).
// fp8 reaches a smaller fraction of its (twice as high) peak — 65–71 % on H100 — which is
// what a per-dtype E says; `symmesh calibrate --gemm` fits E from measured shapes.
// Each s is monotone increasing in its argument, and flops / efficiency is proportional to
// (m + h)(n + h)(k + h), so a larger GEMM never takes less time.
//
// Waves (only when the cluster gives gpu.sm_count = S): the output is cut into
// tiles = batch × ⌈m / kWaveTile⌉ × ⌈n / kWaveTile⌉ blocks, one per SM at a time, so the
// GEMM runs in ⌈tiles / S⌉ waves and the last, partial wave costs as long as a full one
// (NVIDIA, "Matrix Multiplication Background User's Guide", DU-09799-001, §3.2 "Wave
// Quantization"; its §2.3 lists 128×128 among cuBLAS's typical tiles — kWaveTile). One
// wave of S tiles of k deep costs S × 2 kWaveTile² (k + h) / E peak FLOPs — a full tile
// at the large-GEMM efficiency, its k pipeline filled as s(k) says — and the compute
// time is the larger of the two lower bounds:
//
//   peak FLOPs = max(2 batch (m + h)(n + h)(k + h) / E,                  (the shape terms)
//                    ⌈tiles / S⌉ × S × 2 kWaveTile² (k + h) / E)         (tiles > S only)
//
// Why a max and not a product: s(m) and s(n) already price partly filled tiles and a
// GEMM too small to occupy every SM, so multiplying by the waves' utilisation would charge
// a small GEMM twice; the max charges each GEMM for whichever limit binds. Why tiles > S
// only: a GEMM of at most S tiles is one partial wave, which cuBLAS fills by splitting k
// (split-K / stream-K) or taking smaller tiles — charging it a full wave of 128×128 tiles
// would price a decode GEMV (m = 1, n = k = 4096: 32 tiles) at twice its HBM time, which
// measurements do not show. The wave term is non-decreasing in batch, m, n (tiles and
// ⌈tiles / S⌉ are) and in k, and so is the shape term: the max keeps a larger GEMM never
// faster. Large GEMMs are unaffected in the limit: ⌈tiles / S⌉ S kWaveTile² / (m n) → 1,
// as (m + h)(n + h) / (m n) does. At 8192³ (4096 tiles, 31.03 → 32 waves on 132 SMs) the
// wave term is 1.031 × m n (k + h) against the shape term's 1.016 × m n (k + h): the
// waves bind, 1.5 % slower than without sm_count.
//
// HBM time divides by the cluster's gpu.memory.sustained_bandwidth when given (what
// streaming kernels reach: about 87 % of the datasheet on H100), else by the datasheet
// bandwidth; every kernel pays launch_overhead_s(gpu) once.
#include <cstdint>

#include "core/cluster_spec.hpp"
#include "core/program.hpp"

namespace symmesh::roofline {

// Fixed cost of launching one kernel (a CUDA launch plus its ramp-up, measured at about
// 3–6 µs for cuBLAS calls); it keeps tiny ops from costing nothing. The default of
// launch_overhead_s(gpu) when the cluster gives no gpu.launch_overhead.
inline constexpr double kLaunchOverhead_s = 5e-6;
// Fraction of the dense peak reached when all three GEMM dims are large: the default of
// peak_efficiency(gpu, dtype) when the cluster gives none for the dtype.
inline constexpr double kPeakEfficiency = 0.85;
// GEMM dimension at which one dim alone halves the efficiency (one tile, see above).
inline constexpr double kHalfDim = 64.0;
// Side of the square output tile one SM computes at a time, for waves (see above).
inline constexpr int64_t kWaveTile = 128;

// The cluster's gpu.launch_overhead, else kLaunchOverhead_s.
double launch_overhead_s(const GpuSpec& gpu);
// E[dtype]: the cluster's gpu.gemm_efficiency for peak_key(dtype), else kPeakEfficiency.
double peak_efficiency(const GpuSpec& gpu, DType dtype);
// What HBM-bound time divides by: gpu.memory.sustained_bandwidth, else the datasheet's.
double hbm_bandwidth_bytes_per_s(const GpuSpec& gpu);
// ⌈tiles / sm_count⌉ for batch × ⌈m / kWaveTile⌉ × ⌈n / kWaveTile⌉ tiles; 0 without
// sm_count or for an empty output.
int64_t gemm_waves(const GpuSpec& gpu, int64_t batch, int64_t m, int64_t n);

// efficiency(m, n, k) at E = kPeakEfficiency, in [0, kPeakEfficiency); 0 when any dim is 0.
double gemm_efficiency(int64_t m, int64_t n, int64_t k);

// flops / efficiency(m, n, k) at E = kPeakEfficiency and without waves: the work a GEMM
// costs at the dense peak, in "peak flops" (0 for an empty GEMM).
double gemm_effective_flops(int64_t batch, int64_t m, int64_t n, int64_t k);
// The wave term above in peak FLOPs: 0 without sm_count, for at most one wave or k = 0.
double gemm_wave_flops(const GpuSpec& gpu, DType dtype, int64_t batch, int64_t m, int64_t n,
                       int64_t k);
// The same on `gpu` for `dtype`: its E[dtype] and, with sm_count, its waves (the max
// above). Dividing by peak_flops_per_s(gpu, dtype) gives the compute-bound time.
double gemm_effective_flops(const GpuSpec& gpu, DType dtype, int64_t batch, int64_t m, int64_t n,
                            int64_t k);
// Σ products' gemm_effective_flops(gpu, dtype, …) × work_fraction of a tensor op.
double tensor_op_effective_flops(const GpuSpec& gpu, DType dtype, const TensorOpCost& cost);

// The peak for `dtype` from `gpu.peak_flops_per_s` (keyed by peak_key(dtype)). Throws
// InvalidArgument naming the dtype and the keys the cluster does have.
double peak_flops_per_s(const GpuSpec& gpu, DType dtype);

// Bytes a matmul reads and writes in HBM: a, b and c once each, c twice when accumulating,
// plus the bias range when there is one (at most one element per element of c).
double matmul_bytes_moved(const MatmulWork& work);

// HBM time of `bytes` at hbm_bandwidth_bytes_per_s (no launch overhead). Throws
// InvalidArgument when the GPU has no memory bandwidth.
double hbm_time_s(const GpuSpec& gpu, double bytes);

double matmul_duration_s(const GpuSpec& gpu, const MatmulWork& work);
double reduce_duration_s(const GpuSpec& gpu, const ReduceWork& work);
double copy_duration_s(const GpuSpec& gpu, const CopyWork& work);
double tensor_op_duration_s(const GpuSpec& gpu, DType dtype, const TensorOpCost& cost);
// A put whose receiver is the sender itself: a device-local copy of `bytes`.
double local_copy_duration_s(const GpuSpec& gpu, int64_t bytes);

}  // namespace symmesh::roofline
