// mm / bmm (cuBLASLt, row-major, bias, accumulate), reduce and strided copy on a GPU
// against CPU loops in double (SKIPPED without a GPU).
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <random>

#include "hw/program_executor.hpp"
#include "tests/hw/hw_test_support.hpp"

namespace symmesh::hw {
namespace {

using symmesh::testing::local_with;

uint16_t to_bf16(float f) {
  uint32_t u;
  std::memcpy(&u, &f, 4);
  u += 0x7fff + ((u >> 16) & 1);  // round to nearest even
  return static_cast<uint16_t>(u >> 16);
}
float from_bf16(uint16_t h) {
  const uint32_t u = static_cast<uint32_t>(h) << 16;
  float f;
  std::memcpy(&f, &u, 4);
  return f;
}

// Values as the bytes of `dtype` (fp32 or bf16), and back.
std::vector<unsigned char> encode(const std::vector<double>& v, DType dtype) {
  std::vector<unsigned char> out(v.size() * element_size_bytes(dtype));
  for (size_t i = 0; i < v.size(); ++i) {
    if (dtype == DType::fp32) {
      const float f = static_cast<float>(v[i]);
      std::memcpy(&out[4 * i], &f, 4);
    } else {
      const uint16_t h = to_bf16(static_cast<float>(v[i]));
      std::memcpy(&out[2 * i], &h, 2);
    }
  }
  return out;
}
std::vector<double> decode(const std::vector<unsigned char>& bytes, DType dtype) {
  const size_t n = bytes.size() / element_size_bytes(dtype);
  std::vector<double> out(n);
  for (size_t i = 0; i < n; ++i) {
    if (dtype == DType::fp32) {
      float f;
      std::memcpy(&f, &bytes[4 * i], 4);
      out[i] = f;
    } else {
      uint16_t h;
      std::memcpy(&h, &bytes[2 * i], 2);
      out[i] = from_bf16(h);
    }
  }
  return out;
}
std::vector<double> random_values(size_t n, unsigned seed, DType dtype) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<double> u(-1, 1);
  std::vector<double> v(n);
  for (double& x : v) x = u(rng);
  return decode(encode(v, dtype), dtype);  // exactly representable
}

struct MatmulCase {
  std::string name;
  DType dtype;
  int64_t batch, m, n, k;
  bool bias, accumulate;
  bool transpose_b = false;  // b stored [n, k] (linear's weight)
};

// Test names and CTest lines show the case's name, not its bytes.
void PrintTo(const MatmulCase& c, std::ostream* os) {
  *os << c.name;
}

class GpuMatmul : public ::testing::TestWithParam<MatmulCase> {};

TEST_P(GpuMatmul, MatchesCpuReference) {
  SYMMESH_REQUIRE_GPUS(1);
  const MatmulCase c = GetParam();
  const int64_t e = element_size_bytes(c.dtype);
  const auto a = random_values(c.batch * c.m * c.k, 1, c.dtype);
  const auto b = random_values(c.batch * c.k * c.n, 2, c.dtype);
  const auto c0 = random_values(c.batch * c.m * c.n, 3, c.dtype);
  const auto bias = random_values(c.n, 4, c.dtype);  // one row, broadcast over batch and rows
  Program p(1);
  MatmulWork w;
  w.batch = c.batch, w.m = c.m, w.n = c.n, w.k = c.k, w.dtype = c.dtype;
  w.accumulate = c.accumulate;
  w.transpose_b = c.transpose_b;
  w.a = local_with(p, 0, encode(a, c.dtype));
  w.b = local_with(p, 0, encode(b, c.dtype));
  w.c = local_with(p, 0, encode(c0, c.dtype));
  if (c.bias) {
    w.bias = local_with(p, 0, encode(bias, c.dtype));
    w.bias_col_stride = 1;
  }
  p.matmul(0, p.stream(0, "main"), w, {"mm", OpCategory::compute, ""});
  p.request_output("c", 0, w.c);
  ExecutorOptions o;
  o.warmup_runs = 0;
  const auto m = execute_program(p, o);
  const auto got = decode(m.outputs.at(0).bytes, c.dtype);
  ASSERT_EQ(got.size(), static_cast<size_t>(c.batch * c.m * c.n));
  const double tolerance =
      (c.dtype == DType::fp32 ? 1e-5 : 1.0 / 64) * (1 + std::sqrt(static_cast<double>(c.k)));
  double worst = 0;
  for (int64_t bb = 0; bb < c.batch; ++bb)
    for (int64_t i = 0; i < c.m; ++i)
      for (int64_t j = 0; j < c.n; ++j) {
        double want = c.accumulate ? c0[(bb * c.m + i) * c.n + j] : 0;
        if (c.bias) want += bias[j];
        for (int64_t k = 0; k < c.k; ++k)
          want += a[(bb * c.m + i) * c.k + k] *
                  (c.transpose_b ? b[(bb * c.n + j) * c.k + k] : b[(bb * c.k + k) * c.n + j]);
        worst = std::max(worst, std::abs(got[(bb * c.m + i) * c.n + j] - want));
      }
  EXPECT_LE(worst, tolerance) << c.name << " (" << e << "-byte elements)";
}

INSTANTIATE_TEST_SUITE_P(
    Shapes, GpuMatmul,
    ::testing::Values(MatmulCase{"fp32_mm", DType::fp32, 1, 64, 48, 80, false, false},
                      MatmulCase{"bf16_mm", DType::bf16, 1, 128, 96, 64, false, false},
                      MatmulCase{"bf16_addmm", DType::bf16, 1, 33, 17, 40, true, false},
                      MatmulCase{"bf16_bmm_accumulate", DType::bf16, 3, 32, 24, 16, false, true},
                      MatmulCase{"fp32_baddbmm", DType::fp32, 2, 16, 16, 16, true, true},
                      MatmulCase{"fp32_empty_k", DType::fp32, 1, 8, 8, 0, true, false},
                      MatmulCase{"bf16_linear", DType::bf16, 1, 48, 40, 64, true, false, true},
                      MatmulCase{"fp32_linear", DType::fp32, 1, 33, 17, 24, false, false, true}),
    [](const auto& info) { return info.param.name; });

TEST(GpuLocalOps, ReduceAndStridedCopyMatchCpu) {
  SYMMESH_REQUIRE_GPUS(1);
  const auto x = random_values(1000, 5, DType::fp32);
  const auto y = random_values(1000, 6, DType::fp32);
  Program p(1);
  const auto dst = local_with(p, 0, encode(x, DType::fp32));
  const auto src = local_with(p, 0, encode(y, DType::fp32));
  ReduceWork r;
  r.dtype = DType::fp32, r.elements = 1000, r.dst = dst, r.src = src, r.scale = 0.25;
  p.reduce(0, p.stream(0, "main"), r, {"reduce", OpCategory::compute, ""});
  // A 3-level box: 2 planes x 3 rows x 5 bytes out of a [2][4][7] byte tensor.
  std::vector<unsigned char> box(2 * 4 * 7);
  for (size_t i = 0; i < box.size(); ++i) box[i] = static_cast<unsigned char>(i);
  CopyWork cw;
  cw.src = local_with(p, 0, box);
  cw.dst = p.local_alloc(0, 2 * 3 * 5);
  cw.planes = 2, cw.rows = 3, cw.row_bytes = 5;
  cw.src_plane_stride_bytes = 28, cw.src_stride_bytes = 7;
  cw.dst_plane_stride_bytes = 15, cw.dst_stride_bytes = 5;
  cw.src = cw.src.slice(1, 55);  // from column 1
  p.copy(0, p.stream(0, "main"), cw, {"copy", OpCategory::compute, ""});
  p.request_output("reduced", 0, dst);
  p.request_output("box", 0, cw.dst);
  ExecutorOptions o;
  o.warmup_runs = 0;
  const auto m = execute_program(p, o);
  const auto reduced = decode(m.outputs.at(0).bytes, DType::fp32);
  for (int i = 0; i < 1000; ++i)
    EXPECT_FLOAT_EQ(reduced[i], static_cast<float>((static_cast<float>(x[i]) + y[i]) * 0.25));
  const auto& copied = m.outputs.at(1).bytes;
  for (int pl = 0; pl < 2; ++pl)
    for (int row = 0; row < 3; ++row)
      for (int col = 0; col < 5; ++col)
        EXPECT_EQ(copied[pl * 15 + row * 5 + col], box[pl * 28 + row * 7 + col + 1]);
}

}  // namespace
}  // namespace symmesh::hw
