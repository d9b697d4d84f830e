// `calibrate --gemm`'s fit (evaluation/gemm_efficiency_fit.cpp): GEMM times made up by a
// formula written here from known efficiencies — bf16 at 0.80 and fp8 at 0.66 of the
// H100's peaks, decode shapes HBM-bound at a sustained 2.9 TB/s — fitted back: the same
// efficiencies, and the roofline gives every measured time back within 3 %.
#include "evaluation/gemm_efficiency_fit.hpp"

#include <gtest/gtest.h>

#include <cmath>

#include "core/errors.hpp"
#include "core/roofline.hpp"

namespace symmesh::evaluation {
namespace {

constexpr double kLaunch = 4e-6, kSustained = 2.9e12;

ClusterSpec h100() {
  ClusterSpec c;
  c.name = "h100";
  c.gpu.peak_flops_per_s = {{"bf16", 989.4e12}, {"fp8", 1978.9e12}};
  c.gpu.memory_capacity_bytes = 80.0 * (1ull << 30);
  c.gpu.memory_bandwidth_bytes_per_s = 3.35e12;
  c.gpu.memory_sustained_bandwidth_bytes_per_s = kSustained;
  c.gpu.launch_overhead_s = kLaunch;
  c.intra_node = {"nvswitch", 450e9, 1e-6};
  return c;
}

// The launch plus the larger of 2 (m+64)(n+64)(k+64) / (peak × E) and the bytes of a, b
// and c once each at the sustained bandwidth (no sm_count: no waves).
GemmMeasurement made_up(DType dtype, int64_t m, int64_t n, int64_t k) {
  const bool fp8 = dtype == DType::fp8_e4m3;
  const double peak = fp8 ? 1978.9e12 : 989.4e12, e = fp8 ? 0.66 : 0.80, bytes = fp8 ? 1 : 2;
  const double compute = 2.0 * (m + 64.0) * (n + 64.0) * (k + 64.0) / (peak * e);
  const double hbm = (double(m) * k + double(k) * n + double(m) * n) * bytes / kSustained;
  return {dtype, m, n, k, kLaunch + std::max(compute, hbm), "made-up"};
}

std::vector<GemmMeasurement> rows() {
  std::vector<GemmMeasurement> out;
  for (DType d : {DType::bf16, DType::fp8_e4m3}) {
    for (int64_t m : {1, 4})  // decode: HBM-bound
      out.push_back(made_up(d, m, 8192, 8192));
    out.push_back(made_up(d, 8192, 8192, 8192));
    out.push_back(made_up(d, 4096, 14336, 4096));
    out.push_back(made_up(d, 16384, 8192, 1024));
  }
  return out;
}

double modelled(const ClusterSpec& c, const GemmMeasurement& r) {
  MatmulWork w;
  w.m = r.m, w.n = r.n, w.k = r.k, w.dtype = r.dtype;
  return roofline::matmul_duration_s(c.gpu, w);
}

TEST(GemmEfficiencyFit, RecoversTheEfficienciesAndTheMeasuredTimes) {
  const GemmEfficiencyFit fit = fit_gemm_efficiencies(rows(), h100(), "h100.yaml", "m.csv", "");
  const ClusterSpec& c = fit.calibration.cluster;
  EXPECT_NEAR(c.gpu.gemm_efficiency.at("bf16"), 0.80, 0.0005);
  EXPECT_NEAR(c.gpu.gemm_efficiency.at("fp8"), 0.66, 0.0005);
  EXPECT_EQ(c.gpu.peak_flops_per_s.at("fp8"), 1978.9e12);  // the base's figures stay
  EXPECT_EQ(c.gpu.memory_sustained_bandwidth_bytes_per_s, kSustained);
  EXPECT_EQ(c.name, "h100-calibrated");
  for (const GemmMeasurement& r : rows()) {
    SCOPED_TRACE(std::to_string(r.m) + "x" + std::to_string(r.n) + "x" + std::to_string(r.k));
    EXPECT_NEAR(modelled(c, r), r.seconds, 0.03 * r.seconds);
  }
  ASSERT_EQ(fit.dtypes.size(), 2u);
  EXPECT_EQ(fit.dtypes[0].key, "bf16");
  EXPECT_EQ(fit.dtypes[0].shapes, 5);
  EXPECT_EQ(fit.dtypes[0].compute_bound, 3);  // the two decode shapes are HBM-bound
  EXPECT_LT(fit.dtypes[0].max_relative_error, 0.001);
}

TEST(GemmEfficiencyFit, OnlyHbmBoundShapesSayNothing) {
  const std::vector<GemmMeasurement> decode{made_up(DType::bf16, 1, 8192, 8192),
                                            made_up(DType::bf16, 2, 8192, 8192)};
  try {
    fit_gemm_efficiencies(decode, h100(), "h100.yaml", "m.csv", "x");
    FAIL() << "expected InvalidArgument";
  } catch (const InvalidArgument& e) {
    EXPECT_NE(e.message().find("every bf16 GEMM here is HBM-bound"), std::string::npos)
        << e.message();
  }
}

// A row faster than the base's peak is another GPU's, or a wrong unit: the fitted
// efficiency (at most 1) could not reach it, so it is refused at its row.
TEST(GemmEfficiencyFit, ARowFasterThanThePeakIsRefusedAtItsRow) {
  std::vector<GemmMeasurement> measured = rows();
  GemmMeasurement fast = made_up(DType::bf16, 8192, 8192, 8192);
  fast.seconds = 2.0 * 8192 * 8192 * 8192 / 5000e12;  // 5,000 TFLOP/s
  fast.where = "m.csv:7";
  measured.push_back(fast);
  try {
    fit_gemm_efficiencies(measured, h100(), "h100.yaml", "m.csv", "x");
    FAIL() << "expected InvalidArgument";
  } catch (const InvalidArgument& e) {
    EXPECT_EQ(e.where(), "m.csv:7");
    EXPECT_NE(e.message().find("8192x8192x8192 bf16 runs at 5000.0 TFLOP/s, faster than the "
                               "989.4 TFLOP/s bf16 peak of h100.yaml"),
              std::string::npos)
        << e.message();
  }
}

TEST(GemmEfficiencyFit, ADtypeWithoutABasePeakIsAnError) {
  ClusterSpec base = h100();
  base.gpu.peak_flops_per_s.erase("fp8");
  try {
    fit_gemm_efficiencies(rows(), base, "h100.yaml", "m.csv", "x");
    FAIL() << "expected InvalidArgument";
  } catch (const InvalidArgument& e) {
    EXPECT_NE(e.message().find("has no fp8 peak"), std::string::npos) << e.message();
  }
}

}  // namespace
}  // namespace symmesh::evaluation
