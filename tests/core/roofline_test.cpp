// The roofline's optional GPU figures (core/roofline.hpp): per-dtype GEMM efficiency,
// sustained HBM bandwidth, waves over the SMs and the launch cost, each against a hand
// computation; and that absent, they change nothing.
#include "core/roofline.hpp"

#include <gtest/gtest.h>

#include <vector>

namespace symmesh::roofline {
namespace {

// An H100 SXM as the whitepaper gives it: 989.4 TFLOP/s bf16, 1978.9 fp8, 3.35 TB/s.
GpuSpec h100() {
  GpuSpec g;
  g.name = "H100-SXM";
  g.peak_flops_per_s = {{"bf16", 989.4e12}, {"fp8", 1978.9e12}};
  g.memory_capacity_bytes = 80.0 * (1ull << 30);
  g.memory_bandwidth_bytes_per_s = 3.35e12;
  return g;
}

MatmulWork gemm(int64_t m, int64_t n, int64_t k, DType dtype = DType::bf16, int64_t batch = 1) {
  MatmulWork w;
  w.batch = batch;
  w.m = m;
  w.n = n;
  w.k = k;
  w.dtype = dtype;
  return w;
}

TEST(Roofline, AbsentFiguresKeepTheDefaults) {
  const GpuSpec g = h100();
  EXPECT_EQ(launch_overhead_s(g), 5e-6);
  EXPECT_EQ(peak_efficiency(g, DType::bf16), 0.85);
  EXPECT_EQ(hbm_bandwidth_bytes_per_s(g), 3.35e12);
  EXPECT_EQ(gemm_waves(g, 1, 8192, 8192), 0);
  // 8192³ bf16 at 0.85 × (8192/8256)³: 1.338284 ms + 5 µs (tests/sim/compute_model_test.cpp).
  EXPECT_NEAR(matmul_duration_s(g, gemm(8192, 8192, 8192)), 1.343284e-3, 1e-9);
}

TEST(Roofline, PerDtypeEfficiencyReplacesTheDefault) {
  GpuSpec g = h100();
  g.gemm_efficiency = {{"bf16", 0.8}, {"fp8", 0.66}};
  // bf16 8192³ at 0.8 × s(8192)³ of 989.4 TFLOP/s: flops / efficiency = 2 × 8256³ / 0.8
  // (8256³ = 562,741,641,216), / (989.4e12 × 0.8) = 1.4219265 ms; + 5 µs = 1.4269265 ms.
  EXPECT_NEAR(matmul_duration_s(g, gemm(8192, 8192, 8192)), 1.4269265e-3, 1e-9);
  // fp8 (1 byte): 2 × 8256³ / (1978.9e12 × 0.66) = 0.8617301 ms; + 5 µs = 0.8667301 ms.
  EXPECT_NEAR(matmul_duration_s(g, gemm(8192, 8192, 8192, DType::fp8_e4m3)), 0.8667301e-3, 1e-9);
  EXPECT_EQ(peak_efficiency(g, DType::fp8_e5m2), 0.66);  // both fp8 kinds share the key
  // fp16 is not listed: the default 0.85.
  g.peak_flops_per_s["fp16"] = 989.4e12;
  EXPECT_NEAR(matmul_duration_s(g, gemm(8192, 8192, 8192, DType::fp16)), 1.343284e-3, 1e-9);
}

TEST(Roofline, SustainedBandwidthTimesHbmBoundKernels) {
  GpuSpec g = h100();
  g.memory_sustained_bandwidth_bytes_per_s = 2.9e12;
  // Decode GEMV m = 1, n = k = 8192: (8192 + 8192² + 8192) × 2 B = 134,250,496 B at
  // 2.9 TB/s = 46.29327 µs (compute: 10.5 µs); + 5 µs = 51.29327 µs.
  EXPECT_NEAR(matmul_duration_s(g, gemm(1, 8192, 8192)), 51.293274e-6, 1e-11);
  CopyWork copy;
  copy.rows = 1;
  copy.row_bytes = 1 << 20;  // read + write 2 MiB at 2.9 TB/s = 0.723155 µs
  EXPECT_NEAR(copy_duration_s(g, copy), 2.0 * (1 << 20) / 2.9e12 + 5e-6, 1e-15);
}

TEST(Roofline, LaunchOverheadComesFromTheGpu) {
  GpuSpec g = h100();
  g.launch_overhead_s = 2e-6;
  CopyWork copy;
  copy.rows = 1;
  copy.row_bytes = 1000;
  EXPECT_NEAR(copy_duration_s(g, copy), 2000 / 3.35e12 + 2e-6, 1e-15);
  g.launch_overhead_s = 0.0;  // given as 0: no launch cost, not the default
  EXPECT_NEAR(copy_duration_s(g, copy), 2000 / 3.35e12, 1e-15);
}

TEST(Roofline, OneTileMoreThanTheSmsTakesTwoWaves) {
  GpuSpec g = h100();
  g.sm_count = 132;
  // m = 896 = 7 tiles of 128, n = 2432 = 19 tiles: 133 tiles, one more than the SMs.
  EXPECT_EQ(gemm_waves(g, 1, 896, 2432), 2);
  EXPECT_EQ(gemm_waves(g, 1, 1536, 1408), 1);  // 12 × 11 = 132 tiles: one full wave
  EXPECT_EQ(gemm_waves(g, 1, 129, 128), 1);    // ⌈129/128⌉ = 2 tiles
  EXPECT_EQ(gemm_waves(g, 67, 128, 128), 1);   // 67 × 1 tile
  EXPECT_EQ(gemm_waves(g, 133, 128, 128), 2);  // a batch's tiles count too
  // 2^40 × (2^33)² tiles: no GPU holds that, but the count stays defined (capped at 9e18).
  const int64_t huge = int64_t{1} << 40;
  EXPECT_EQ(gemm_waves(g, huge, huge, huge), int64_t{9'000'000'000'000'000'000});
  // Two waves of 132 tiles, each 2 × 128² × (4096 + 64) peak FLOPs / 0.85 at 989.4 TFLOP/s:
  // 2 × 132 × 2 × 16384 × 4160 / (0.85 × 989.4e12) = 42.791387 µs, more than the shape
  // term 2 × 960 × 2496 × 4160 / (0.85 × 989.4e12) = 23.705456 µs; + 5 µs.
  EXPECT_NEAR(matmul_duration_s(g, gemm(896, 2432, 4096)), 47.791387e-6, 1e-11);
  // 132 tiles are one wave: no wave term, the shape term alone
  // (2 × 1600 × 1472 × 4160 / (0.85 × 989.4e12) = 23.300234 µs + 5 µs).
  EXPECT_NEAR(matmul_duration_s(g, gemm(1536, 1408, 4096)), 28.300234e-6, 1e-11);
  GpuSpec no_waves = h100();
  EXPECT_EQ(matmul_duration_s(g, gemm(1536, 1408, 4096)),
            matmul_duration_s(no_waves, gemm(1536, 1408, 4096)));
}

TEST(Roofline, LargeGemmsAreBarelyTouchedByWaves) {
  GpuSpec g = h100();
  g.sm_count = 132;
  const GpuSpec no_waves = h100();
  // 8192³: 64 × 64 = 4096 tiles = 31.03 waves → 32; 32 × 132 × 128² = 69,206,016 against
  // the shape term's 8256² = 68,161,536: the waves bind, 1.5 % over the shape term:
  // 2 × 69,206,016 × 8256 / (0.85 × 989.4e12) = 1.358791 ms; + 5 µs.
  EXPECT_NEAR(matmul_duration_s(g, gemm(8192, 8192, 8192)), 1.363791e-3, 1e-9);
  // 65536² × 8192: 262,144 tiles → 1986 waves = 262,152 slots × 128² = 4,295,098,368 <
  // 65600² = 4,303,360,000: the shape term binds; the time is exactly the one without waves.
  EXPECT_EQ(matmul_duration_s(g, gemm(65536, 65536, 8192)),
            matmul_duration_s(no_waves, gemm(65536, 65536, 8192)));
}

TEST(Roofline, LargerGemmNeverTakesLessTimeWithWaves) {
  GpuSpec g = h100();
  g.sm_count = 132;
  g.gemm_efficiency = {{"bf16", 0.8}};
  g.memory_sustained_bandwidth_bytes_per_s = 2.9e12;
  // Tile and wave edges: 127, 128, 129; 1408 (11 tiles), 1536 (12), 1664 (13).
  const std::vector<int64_t> dims{1, 2, 64, 127, 128, 129, 255, 1000, 1408, 1536, 1664, 4096, 8192};
  for (int64_t a : dims)
    for (int64_t b : dims)
      for (size_t i = 1; i < dims.size(); ++i) {
        const int64_t lo = dims[i - 1], hi = dims[i];
        EXPECT_LE(matmul_duration_s(g, gemm(a, b, lo)), matmul_duration_s(g, gemm(a, b, hi)));
        EXPECT_LE(matmul_duration_s(g, gemm(lo, a, b)), matmul_duration_s(g, gemm(hi, a, b)));
        EXPECT_LE(matmul_duration_s(g, gemm(a, lo, b)), matmul_duration_s(g, gemm(a, hi, b)));
      }
  for (int64_t batch = 1; batch < 300; ++batch)
    EXPECT_LE(matmul_duration_s(g, gemm(128, 256, 512, DType::bf16, batch)),
              matmul_duration_s(g, gemm(128, 256, 512, DType::bf16, batch + 1)));
}

}  // namespace
}  // namespace symmesh::roofline
