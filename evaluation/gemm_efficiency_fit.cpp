#include "evaluation/gemm_efficiency_fit.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <map>

#include "core/errors.hpp"
#include "core/roofline.hpp"
#include "scenario/cluster_writer.hpp"

namespace symmesh::evaluation {
namespace {

double modelled_s(const GpuSpec& gpu, const GemmMeasurement& row) {
  LocalGemm gemm;
  gemm.m = row.m;
  gemm.n = row.n;
  gemm.k = row.k;
  return roofline::matmul_duration_s(gpu, matmul_work(gemm, row.dtype));
}

// Σ ((model − measured) / measured)² at efficiency `e` for `key`.
double squared_error(GpuSpec gpu, const std::string& key, double e,
                     const std::vector<const GemmMeasurement*>& rows) {
  gpu.gemm_efficiency[key] = e;
  double sum = 0;
  for (const GemmMeasurement* row : rows) {
    const double r = (modelled_s(gpu, *row) - row->seconds) / row->seconds;
    sum += r * r;
  }
  return sum;
}

// The efficiency in (0, 1] of least squared error: a scan at steps of 0.005 (the error is
// not convex in e where shapes switch between compute- and HBM-bound, so no single descent
// from one start), then golden-section search around the best step.
double best_efficiency(const GpuSpec& gpu, const std::string& key,
                       const std::vector<const GemmMeasurement*>& rows) {
  constexpr double kStep = 0.005;
  double best = 1, best_error = squared_error(gpu, key, 1, rows);
  for (int i = 1; i < 200; ++i) {
    const double e = i * kStep;
    const double err = squared_error(gpu, key, e, rows);
    if (err < best_error) best = e, best_error = err;
  }
  double lo = std::max(kStep / 8, best - kStep), hi = std::min(1.0, best + kStep);
  const double g = (std::sqrt(5.0) - 1) / 2;
  double a = hi - g * (hi - lo), b = lo + g * (hi - lo);
  double fa = squared_error(gpu, key, a, rows), fb = squared_error(gpu, key, b, rows);
  for (int i = 0; i < 60; ++i) {
    if (fa < fb) {
      hi = b, b = a, fb = fa;
      a = hi - g * (hi - lo);
      fa = squared_error(gpu, key, a, rows);
    } else {
      lo = a, a = b, fa = fb;
      b = lo + g * (hi - lo);
      fb = squared_error(gpu, key, b, rows);
    }
  }
  const double refined = (lo + hi) / 2;
  return squared_error(gpu, key, refined, rows) < best_error ? refined : best;
}

}  // namespace

GemmEfficiencyFit fit_gemm_efficiencies(const std::vector<GemmMeasurement>& rows,
                                        const ClusterSpec& base, const std::string& base_name,
                                        const std::string& source, const std::string& name) {
  std::map<std::string, std::vector<const GemmMeasurement*>> by_key;
  for (const GemmMeasurement& row : rows) by_key[peak_key(row.dtype)].push_back(&row);
  GemmEfficiencyFit out;
  ClusterSpec& c = out.calibration.cluster;
  c = base;
  c.name = name.empty() ? base.name + "-calibrated" : name;
  c.source_files.clear();
  std::string summary;
  for (const auto& [key, points] : by_key) {
    const std::string& first = points.front()->where;
    if (!base.gpu.peak_flops_per_s.count(key))
      throw InvalidArgument("the base cluster " + base_name + " has no " + key +
                                " peak to measure these GEMMs against",
                            first);
    // A GEMM faster than the GPU's peak is not a measurement of this GPU (another GPU, a
    // wrong unit): the fitted efficiency (at most 1) could not reach it.
    const double key_peak = base.gpu.peak_flops_per_s.at(key);
    for (const GemmMeasurement* row : points) {
      const double rate = 2.0 * static_cast<double>(row->m) * static_cast<double>(row->n) *
                          static_cast<double>(row->k) / row->seconds;
      if (rate > key_peak) {
        char text[96];
        std::snprintf(text, sizeof text, "%.1f TFLOP/s, faster than the %.1f TFLOP/s", rate * 1e-12,
                      key_peak * 1e-12);
        throw InvalidArgument(std::to_string(row->m) + "x" + std::to_string(row->n) + "x" +
                                  std::to_string(row->k) + " " + key + " runs at " + text + " " +
                                  key + " peak of " + base_name +
                                  ": no GEMM beats its GPU's peak; check the unit, or the base",
                              row->where);
      }
    }
    DtypeEfficiency fit;
    fit.key = key;
    fit.shapes = static_cast<int>(points.size());
    // Four significant digits, as written: the errors below are those of the file's figure.
    fit.efficiency =
        std::stod(scenario::decimal_in_unit(best_efficiency(c.gpu, key, points), 0, 4));
    c.gpu.gemm_efficiency[key] = fit.efficiency;
    // Which shapes the efficiency decides: compute-bound at the fitted value.
    const double peak = roofline::peak_flops_per_s(c.gpu, points.front()->dtype);
    double sum = 0;
    for (const GemmMeasurement* row : points) {
      const double compute_s =
          roofline::gemm_effective_flops(c.gpu, row->dtype, 1, row->m, row->n, row->k) / peak;
      LocalGemm gemm;
      gemm.m = row->m, gemm.n = row->n, gemm.k = row->k;
      const double hbm_s =
          roofline::hbm_time_s(c.gpu, roofline::matmul_bytes_moved(matmul_work(gemm, row->dtype)));
      if (compute_s > hbm_s) ++fit.compute_bound;
      const double r = (modelled_s(c.gpu, *row) - row->seconds) / row->seconds;
      sum += r * r;
      fit.max_relative_error = std::max(fit.max_relative_error, std::abs(r));
    }
    if (fit.compute_bound == 0)
      throw InvalidArgument("every " + key +
                                " GEMM here is HBM-bound in the model, so none says what "
                                "fraction of the peak the tensor cores reach; add larger shapes",
                            first);
    fit.rms_relative_error = std::sqrt(sum / static_cast<double>(points.size()));
    out.dtypes.push_back(fit);
    char rms[32];
    std::snprintf(rms, sizeof rms, "%.1f", 100 * fit.rms_relative_error);
    summary += (summary.empty() ? "" : ", ") + key + " " + std::to_string(fit.shapes) +
               " shapes (rms error " + rms + " %)";
  }
  out.calibration.notes.header = {
      "GEMM efficiencies fitted by `symmesh calibrate --gemm " + source + "` against the",
      "peaks of " + base_name + " (least squares of the roofline's relative error): " + summary +
          ".",
      "Everything else is " + base_name + "'s."};
  return out;
}

}  // namespace symmesh::evaluation
