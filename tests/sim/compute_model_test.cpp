// The roofline compute model: formula checks against hand-computed values, and the
// monotonicity a cost model must have.
#include "sim/compute_model.hpp"

#include <gtest/gtest.h>

#include "core/errors.hpp"
#include "sim/forked_run.hpp"
#include "sim_test_support.hpp"

namespace symmesh::sim {
namespace {

using namespace testing;

MatmulWork gemm(int64_t m, int64_t n, int64_t k, DType dtype = DType::bf16) {
  MatmulWork w;
  w.m = m;
  w.n = n;
  w.k = k;
  w.dtype = dtype;
  return w;
}

TEST(ComputeModel, EfficiencyFormula) {
  // 0.85 × (8192 / 8256)³ = 0.830385…; one skinny dim: 0.85 × (16/80) × (4096/4160)².
  EXPECT_NEAR(gemm_efficiency(8192, 8192, 8192), 0.8303854, 1e-7);
  EXPECT_NEAR(gemm_efficiency(16, 4096, 4096), 0.85 * 0.2 * (4096.0 / 4160) * (4096.0 / 4160),
              1e-12);
  EXPECT_NEAR(gemm_efficiency(64, 64, 64), 0.85 / 8, 1e-12);  // one tile: half per dim
  EXPECT_EQ(gemm_efficiency(0, 10, 10), 0.0);
}

TEST(ComputeModel, LargeBf16GemmIsComputeBound) {
  // 8192³ bf16 on an H100 (989.4 TFLOP/s, 3.35 TB/s): 2·8192³ flops / (989.4e12 × 0.830385)
  // = 1.338284 ms, memory 3·8192²·2 B / 3.35e12 = 0.120 ms; + 5 µs launch = 1.343284 ms.
  const ClusterSpec c = test_cluster(1, 8);
  EXPECT_NEAR(matmul_duration_s(c.gpu, gemm(8192, 8192, 8192)), 1.343284e-3, 1e-9);
}

TEST(ComputeModel, ACausalProductDoesHalfTheWork) {
  // The 8192³ GEMM above computing only its lower triangle: 1.338284 ms / 2 = 0.669142 ms of
  // compute, still above its 0.120 ms of memory; + 5 µs = 0.674142 ms.
  const ClusterSpec c = test_cluster(1, 8);
  MatmulWork causal = gemm(8192, 8192, 8192);
  causal.work_fraction = 0.5;
  EXPECT_NEAR(matmul_duration_s(c.gpu, causal), 0.674142e-3, 1e-9);
  // A memory-bound one saves half its traffic too (the skipped blocks are not loaded):
  // 40.074775 µs / 2 + 5 µs.
  MatmulWork gemv = gemm(1, 8192, 8192);
  gemv.work_fraction = 0.5;
  EXPECT_NEAR(matmul_duration_s(c.gpu, gemv), 25.0373875e-6, 1e-11);
}

TEST(ComputeModel, GemvIsMemoryBound) {
  // m = 1: compute 10.54 µs, memory (8192 + 8192² + 8192)·2 B / 3.35e12 = 40.075 µs; + 5 µs.
  const ClusterSpec c = test_cluster(1, 8);
  EXPECT_NEAR(matmul_duration_s(c.gpu, gemm(1, 8192, 8192)), 45.074775e-6, 1e-11);
}

TEST(ComputeModel, ReduceAndCopyAreMemoryBoundWithLaunchOverhead) {
  const ClusterSpec c = test_cluster(1, 8);
  ReduceWork r;
  r.dtype = DType::fp32;
  r.elements = 1 << 20;  // reads dst and src, writes dst: 12 MiB → 3.756 µs + 5 µs
  EXPECT_NEAR(reduce_duration_s(c.gpu, r), 8.756093e-6, 1e-12);
  r.fused_with_transfer = true;
  EXPECT_EQ(reduce_duration_s(c.gpu, r), 0.0);
  CopyWork w;
  w.rows = 4;
  w.row_bytes = 1000;
  EXPECT_NEAR(copy_duration_s(c.gpu, w), 8000 / kHbmBandwidth + kLaunchOverhead_s, 1e-15);
  EXPECT_NEAR(local_copy_duration_s(c.gpu, 1 << 20), 2.0 * (1 << 20) / kHbmBandwidth + 5e-6, 1e-15);
}

TEST(ComputeModel, EmptyOutputLaunchesNothing) {
  // ATen's mm returns an empty result without calling cuBLAS, and hw/matmul.cpp returns
  // before any launch: a GEMM with no output element costs no time, not even the launch.
  const ClusterSpec c = test_cluster(1, 8);
  EXPECT_EQ(matmul_duration_s(c.gpu, gemm(0, 128, 128)), 0.0);
  EXPECT_EQ(matmul_duration_s(c.gpu, gemm(128, 0, 128)), 0.0);
}

TEST(ComputeModel, EmptyContractionStillWritesItsOutput) {
  // k = 0: the 128x128 output is written (zeros: torch.mm of 128x0 by 0x128), a launch plus
  // 128*128 elements of the test's dtype through HBM.
  const ClusterSpec c = test_cluster(1, 8);
  const MatmulWork w = gemm(128, 128, 0);
  const double bytes = 128.0 * 128.0 * element_size_bytes(w.dtype);
  EXPECT_NEAR(matmul_duration_s(c.gpu, w), bytes / kHbmBandwidth + kLaunchOverhead_s, 1e-15);
}

TEST(ComputeModel, MissingDtypeIsAClearInvalidArgument) {
  const ClusterSpec c = test_cluster(1, 8);  // no fp8 entry
  try {
    matmul_duration_s(c.gpu, gemm(128, 128, 128, DType::fp8_e4m3));
    FAIL() << "expected InvalidArgument";
  } catch (const InvalidArgument& e) {
    const std::string what = e.what();
    EXPECT_NE(what.find("no peak rate for dtype fp8_e4m3 (key 'fp8')"), std::string::npos) << what;
    EXPECT_NE(what.find("bf16, fp16, fp32, fp64"), std::string::npos) << what;
  }
  // The simulator refuses such a program before running it.
  Program p(1);
  MatmulWork w = gemm(16, 16, 16, DType::fp8_e4m3);
  w.a = p.local_alloc(0, 256);
  w.b = p.local_alloc(0, 256);
  w.c = p.local_alloc(0, 256);
  p.matmul(0, p.stream(0, "compute"), w, {"mm", OpCategory::compute, ""});
  EXPECT_THROW(run_simulation(p, c), InvalidArgument);
}

TEST(ComputeModel, LargerGemmNeverTakesLessTime) {
  const ClusterSpec c = test_cluster(1, 8);
  const std::vector<int64_t> dims{1, 2, 7, 16, 63, 64, 100, 128, 1000, 4096, 8192, 65536};
  for (DType dtype : {DType::bf16, DType::fp32}) {
    for (int64_t m : dims)
      for (int64_t n : dims)
        for (size_t i = 1; i < dims.size(); ++i) {
          // Growing k, then (by symmetry of the loop) m and n.
          EXPECT_LE(matmul_duration_s(c.gpu, gemm(m, n, dims[i - 1], dtype)),
                    matmul_duration_s(c.gpu, gemm(m, n, dims[i], dtype)));
          EXPECT_LE(matmul_duration_s(c.gpu, gemm(dims[i - 1], m, n, dtype)),
                    matmul_duration_s(c.gpu, gemm(dims[i], m, n, dtype)));
          EXPECT_LE(matmul_duration_s(c.gpu, gemm(m, dims[i - 1], n, dtype)),
                    matmul_duration_s(c.gpu, gemm(m, dims[i], n, dtype)));
        }
    MatmulWork one = gemm(512, 512, 512, dtype), many = one;
    many.batch = 8;
    EXPECT_LT(matmul_duration_s(c.gpu, one), matmul_duration_s(c.gpu, many));
  }
}

TEST(ComputeModel, MoreBandwidthOrPeakIsNeverSlower) {
  const ClusterSpec base = test_cluster(1, 8);
  for (const MatmulWork& w : {gemm(1, 8192, 8192), gemm(8192, 8192, 8192), gemm(300, 77, 5000)}) {
    ClusterSpec faster = base;
    faster.gpu.peak_flops_per_s["bf16"] *= 2;
    EXPECT_LE(matmul_duration_s(faster.gpu, w), matmul_duration_s(base.gpu, w));
    faster = base;
    faster.gpu.memory_bandwidth_bytes_per_s *= 2;
    EXPECT_LE(matmul_duration_s(faster.gpu, w), matmul_duration_s(base.gpu, w));
  }
  ReduceWork r;
  r.elements = 1 << 24;
  ClusterSpec faster = base;
  faster.gpu.memory_bandwidth_bytes_per_s *= 2;
  EXPECT_LT(reduce_duration_s(faster.gpu, r), reduce_duration_s(base.gpu, r));
}

TEST(ComputeModel, SimulatedMatmulTakesTheModelledTime) {
  const ClusterSpec c = test_cluster(1, 8);
  Program p(1);
  MatmulWork w = gemm(4096, 4096, 4096);
  w.a = p.local_alloc(0, 4096 * 4096 * 2);
  w.b = p.local_alloc(0, 4096 * 4096 * 2);
  w.c = p.local_alloc(0, 4096 * 4096 * 2);
  p.matmul(0, p.stream(0, "compute"), w, {"mm", OpCategory::compute, ""});
  const TracedRun r = traced(p, c);
  EXPECT_NEAR(r.makespan_s, matmul_duration_s(c.gpu, w), 1e-12);
  EXPECT_EQ(entry(r, 0, "mm").bytes, 3 * 4096 * 4096 * 2);
}

}  // namespace
}  // namespace symmesh::sim
