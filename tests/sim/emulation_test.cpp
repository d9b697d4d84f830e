// Emulated numerics: 16-bit float conversions, and matmul / reduce / copy on real bytes
// (directly and through a simulated run) against plain CPU loops written here.
#include "sim/emulated_ops.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <limits>
#include <random>

#include "core/errors.hpp"
#include "sim/forked_run.hpp"
#include "sim/half_precision.hpp"
#include "sim_test_support.hpp"

namespace symmesh::sim {
namespace {

using namespace testing;

template <typename T>
std::vector<unsigned char> as_bytes(const std::vector<T>& v) {
  std::vector<unsigned char> out(v.size() * sizeof(T));
  std::memcpy(out.data(), v.data(), out.size());
  return out;
}
template <typename T>
std::vector<T> from_bytes(const std::vector<unsigned char>& b) {
  std::vector<T> out(b.size() / sizeof(T));
  std::memcpy(out.data(), b.data(), out.size() * sizeof(T));
  return out;
}
template <typename T>
std::vector<T> random_values(size_t n, unsigned seed) {
  std::mt19937 gen(seed);
  std::uniform_real_distribution<double> dist(-1.0, 1.0);
  std::vector<T> v(n);
  for (auto& x : v) x = static_cast<T>(dist(gen));
  return v;
}

MatmulWork shape(int64_t batch, int64_t m, int64_t n, int64_t k, DType dtype) {
  MatmulWork w;
  w.batch = batch;
  w.m = m;
  w.n = n;
  w.k = k;
  w.dtype = dtype;
  return w;
}

ReduceWork reduce_of(DType dtype, int64_t elements) {
  ReduceWork w;
  w.dtype = dtype;
  w.elements = elements;
  return w;
}

// The reference: a triple loop, accumulating in T.
template <typename T>
std::vector<T> reference_matmul(int64_t batch, int64_t m, int64_t n, int64_t k,
                                const std::vector<T>& a, const std::vector<T>& b) {
  std::vector<T> c(static_cast<size_t>(batch * m * n), T(0));
  for (int64_t p = 0; p < batch; ++p)
    for (int64_t i = 0; i < m; ++i)
      for (int64_t j = 0; j < n; ++j) {
        T sum = 0;
        for (int64_t x = 0; x < k; ++x) sum += a[p * m * k + i * k + x] * b[p * k * n + x * n + j];
        c[p * m * n + i * n + j] = sum;
      }
  return c;
}

TEST(HalfPrecision, Bf16RoundTripsAndRoundsToNearestEven) {
  // Values with at most 8 significant bits are exact in bf16.
  for (float v : {0.0f, -0.0f, 1.0f, -2.5f, 3.140625f, 65280.0f, 0x1p-120f, -0x1.fep100f})
    EXPECT_EQ(bf16_to_float(float_to_bf16(v)), v) << v;
  // Every bf16 bit pattern (except NaNs) survives widening and rounding back.
  for (uint32_t bits = 0; bits < 0x10000; ++bits) {
    const float f = bf16_to_float(static_cast<uint16_t>(bits));
    if (std::isnan(f)) {
      EXPECT_TRUE(std::isnan(bf16_to_float(float_to_bf16(f))));
      continue;
    }
    ASSERT_EQ(float_to_bf16(f), bits) << bits;
  }
  EXPECT_EQ(float_to_bf16(1.0f + 0x1p-8f), 0x3F80);                     // tie → even (down)
  EXPECT_EQ(float_to_bf16(1.0f + 3 * 0x1p-8f), 0x3F82);                 // tie → even (up)
  EXPECT_EQ(float_to_bf16(1.0f + 0x1p-8f + 0x1p-20f), 0x3F81);          // above the tie
  EXPECT_EQ(float_to_bf16(std::numeric_limits<float>::max()), 0x7F80);  // rounds to inf
}

TEST(HalfPrecision, Fp16RoundTripsAndRounds) {
  for (uint32_t bits = 0; bits < 0x10000; ++bits) {
    const float f = fp16_to_float(static_cast<uint16_t>(bits));
    if (std::isnan(f)) continue;
    ASSERT_EQ(float_to_fp16(f), bits) << bits;
  }
  EXPECT_EQ(fp16_to_float(0x3C00), 1.0f);
  EXPECT_EQ(fp16_to_float(0x0001), std::ldexp(1.0f, -24));  // smallest subnormal
  EXPECT_EQ(float_to_fp16(65504.0f), 0x7BFF);
  EXPECT_EQ(float_to_fp16(65520.0f), 0x7C00);               // rounds up to inf
  EXPECT_EQ(float_to_fp16(1.0f + 0x1p-11f), 0x3C00);        // tie → even
  EXPECT_EQ(float_to_fp16(std::ldexp(1.0f, -25)), 0x0000);  // tie between 0 and 2^-24
  EXPECT_EQ(float_to_fp16(std::ldexp(1.5f, -25)), 0x0001);
  EXPECT_TRUE(std::isnan(fp16_to_float(float_to_fp16(std::nanf("")))));
}

TEST(EmulatedOps, MatmulMatchesLoopsInFp32AndFp64) {
  const int64_t batch = 2, m = 5, n = 7, k = 9;
  {
    const auto a = random_values<double>(batch * m * k, 1),
               b = random_values<double>(batch * k * n, 2);
    MatmulWork w = shape(batch, m, n, k, DType::fp64);
    auto ab = as_bytes(a), bb = as_bytes(b);
    std::vector<unsigned char> c(batch * m * n * 8);
    emulate_matmul(w, ab.data(), bb.data(), c.data());
    const auto expected = reference_matmul(batch, m, n, k, a, b);
    const auto got = from_bytes<double>(c);
    for (size_t i = 0; i < got.size(); ++i) EXPECT_NEAR(got[i], expected[i], 1e-13);
  }
  {
    const auto a = random_values<float>(batch * m * k, 3),
               b = random_values<float>(batch * k * n, 4);
    MatmulWork w = shape(batch, m, n, k, DType::fp32);
    w.accumulate = true;
    auto ab = as_bytes(a), bb = as_bytes(b);
    auto c = as_bytes(std::vector<float>(batch * m * n, 1.0f));  // accumulate onto ones
    emulate_matmul(w, ab.data(), bb.data(), c.data());
    const auto expected = reference_matmul(batch, m, n, k, a, b);
    const auto got = from_bytes<float>(c);
    for (size_t i = 0; i < got.size(); ++i) EXPECT_NEAR(got[i], expected[i] + 1.0f, 1e-5);
  }
}

TEST(EmulatedOps, Bf16MatmulWidensComputesInFloatAndRounds) {
  const int64_t m = 3, n = 4, k = 6;
  const auto af = random_values<float>(m * k, 5), bf = random_values<float>(k * n, 6);
  std::vector<uint16_t> a16(af.size()), b16(bf.size());
  std::vector<float> a_exact(af.size()), b_exact(bf.size());
  for (size_t i = 0; i < af.size(); ++i) a_exact[i] = bf16_to_float(a16[i] = float_to_bf16(af[i]));
  for (size_t i = 0; i < bf.size(); ++i) b_exact[i] = bf16_to_float(b16[i] = float_to_bf16(bf[i]));
  MatmulWork w = shape(1, m, n, k, DType::bf16);
  auto ab = as_bytes(a16), bb = as_bytes(b16);
  std::vector<unsigned char> c(m * n * 2);
  emulate_matmul(w, ab.data(), bb.data(), c.data());
  const auto expected = reference_matmul<float>(1, m, n, k, a_exact, b_exact);
  const auto got = from_bytes<uint16_t>(c);
  for (size_t i = 0; i < got.size(); ++i) {
    // The float result rounded once to bf16: within half a bf16 ulp (2^-8 relative).
    EXPECT_NEAR(bf16_to_float(got[i]), expected[i], std::abs(expected[i]) * 0x1p-8f + 1e-6f);
    EXPECT_EQ(got[i], float_to_bf16(expected[i])) << i;
  }
}

TEST(EmulatedOps, MatmulAddsABroadcastBias) {
  const int64_t m = 2, n = 3, k = 2;
  const std::vector<float> a{1, 2, 3, 4}, b{1, 0, 2, 0, 1, 3}, bias{10, 20, 30};
  MatmulWork w = shape(1, m, n, k, DType::fp32);
  w.bias.id = 0;
  w.bias_col_stride = 1;  // one bias row broadcast over the rows of c
  auto ab = as_bytes(a), bb = as_bytes(b), biasb = as_bytes(bias);
  std::vector<unsigned char> c(m * n * 4);
  emulate_matmul(w, ab.data(), bb.data(), c.data(), biasb.data());
  EXPECT_EQ(from_bytes<float>(c), (std::vector<float>{11, 22, 38, 13, 24, 48}));
}

TEST(EmulatedOps, ReduceMatchesLoops) {
  const auto d = random_values<float>(33, 7), s = random_values<float>(33, 8);
  ReduceWork w = reduce_of(DType::fp32, 33);
  w.scale = 0.5;
  auto db = as_bytes(d), sb = as_bytes(s);
  emulate_reduce(w, db.data(), sb.data());
  const auto got = from_bytes<float>(db);
  for (size_t i = 0; i < got.size(); ++i) EXPECT_FLOAT_EQ(got[i], (d[i] + s[i]) * 0.5f);

  ReduceWork wi = reduce_of(DType::int64, 3);
  auto di = as_bytes(std::vector<int64_t>{1, -2, 1LL << 40}),
       si = as_bytes(std::vector<int64_t>{5, 5, 5});
  emulate_reduce(wi, di.data(), si.data());
  EXPECT_EQ(from_bytes<int64_t>(di), (std::vector<int64_t>{6, 3, (1LL << 40) + 5}));
  wi.scale = 0.5;
  EXPECT_THROW(emulate_reduce(wi, di.data(), si.data()), Unsupported);
  ReduceWork w8 = reduce_of(DType::fp8_e4m3, 3);
  EXPECT_THROW(emulate_reduce(w8, di.data(), si.data()), Unsupported);
}

TEST(EmulatedOps, StridedBoxCopyIsByteExact) {
  // A 2 × 3 × 5-byte box out of a source with row stride 7 and plane stride 30, into a
  // destination with row stride 5 and plane stride 15 (packed).
  const auto src = pattern(60, 9);
  std::vector<unsigned char> dst(30, 0xEE);
  CopyWork w;
  w.planes = 2;
  w.rows = 3;
  w.row_bytes = 5;
  w.src_plane_stride_bytes = 30;
  w.src_stride_bytes = 7;
  w.dst_plane_stride_bytes = 15;
  w.dst_stride_bytes = 5;
  emulate_copy(w, dst.data(), src.data());
  for (int p = 0; p < 2; ++p)
    for (int r = 0; r < 3; ++r)
      for (int x = 0; x < 5; ++x) EXPECT_EQ(dst[p * 15 + r * 5 + x], src[p * 30 + r * 7 + x]);
}

// Through the simulator: rank 0 computes A @ B with A's rows split over two streams' halves,
// and rank 1 receives the product by put_signal and reduces it with its own copy.
TEST(EmulatedOps, SimulatedMatmulPutAndReduceMatchTheCpu) {
  const int64_t m = 8, n = 6, k = 5;
  const auto a = random_values<float>(m * k, 10), b = random_values<float>(k * n, 11);
  const auto mine = random_values<float>(m * n, 12);
  Program p(2);
  const SymmetricHandle inbox = p.symm_alloc(p.world_group(), m * n * 4);
  const BufferRef A = local_with(p, 0, as_bytes(a)), B = local_with(p, 0, as_bytes(b));
  const BufferRef C = p.local_alloc(0, m * n * 4);
  const StreamId s0 = p.stream(0, "main"), s1 = p.stream(1, "main");
  for (int half = 0; half < 2; ++half) {  // two row blocks of 4
    MatmulWork w = shape(1, m / 2, n, k, DType::fp32);
    w.a = A.slice(half * (m / 2) * k * 4, (m / 2) * k * 4);
    w.b = B;
    w.c = C.slice(half * (m / 2) * n * 4, (m / 2) * n * 4);
    p.matmul(0, s0, w, {"mm", OpCategory::compute, ""});
  }
  p.put_signal(0, s0, C, inbox, 0, 1, {"send", OpCategory::comm, ""});
  const BufferRef acc = local_with(p, 1, as_bytes(mine));
  p.wait_signal(1, s1, inbox, 0, {"recv", OpCategory::comm, ""});
  ReduceWork add = reduce_of(DType::fp32, m * n);
  add.dst = acc;
  add.src = inbox.whole();
  p.reduce(1, s1, add, {"add", OpCategory::compute, ""});
  p.request_output("c", 0, C);
  p.request_output("sum", 1, acc);
  const RunResult r = run_simulation(p, test_cluster(1, 8), with_data());
  const auto expected = reference_matmul<float>(1, m, n, k, a, b);
  const auto c = from_bytes<float>(r.output("c", 0).bytes);
  const auto sum = from_bytes<float>(r.output("sum", 1).bytes);
  for (size_t i = 0; i < c.size(); ++i) {
    EXPECT_NEAR(c[i], expected[i], 1e-5);
    EXPECT_NEAR(sum[i], expected[i] + mine[i], 1e-5);
  }
}

TEST(EmulatedOps, UnsupportedDtypeFailsTheRunWithUnsupported) {
  Program p(1);
  ClusterSpec c = test_cluster(1, 8);
  c.gpu.peak_flops_per_s["int8"] = 1e15;
  MatmulWork w = shape(1, 2, 2, 2, DType::int8);
  w.a = p.local_alloc(0, 4);
  w.b = p.local_alloc(0, 4);
  w.c = p.local_alloc(0, 4);
  p.matmul(0, p.stream(0, "main"), w, {"mm", OpCategory::compute, ""});
  EXPECT_NO_THROW(run_simulation(p, c));  // timing only: fine
  EXPECT_THROW(run_simulation(p, c, with_data()), Unsupported);
}

}  // namespace
}  // namespace symmesh::sim
