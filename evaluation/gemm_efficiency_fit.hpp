#pragma once
// `symmesh calibrate --gemm`: the per-dtype GEMM efficiency (gpu.gemm_efficiency,
// core/roofline.hpp) that makes the roofline's times closest to measured GEMM times — the
// least squares of their relative differences — against the peaks, HBM bandwidth, SM count
// and launch cost of a base cluster, which the fit leaves as they are.
#include <string>
#include <vector>

#include "core/cluster_spec.hpp"
#include "evaluation/calibration.hpp"
#include "evaluation/gemm_measurements.hpp"

namespace symmesh::evaluation {

struct DtypeEfficiency {
  std::string key;  // peak key: "bf16", "fp8", …
  double efficiency = 0;
  int shapes = 0;
  int compute_bound = 0;          // shapes whose modelled time the efficiency sets
  double rms_relative_error = 0;  // of the modelled times at `efficiency`
  double max_relative_error = 0;
};

struct GemmEfficiencyFit {
  CalibrationFit calibration;  // `base` with the fitted efficiencies, named `name`
  std::vector<DtypeEfficiency> dtypes;
};

// Fits each dtype's efficiency in (0, 1]. Throws InvalidArgument (naming the first row of
// the dtype) when `base` has no peak for a dtype, or when every shape of a dtype is
// HBM-bound in the model (its time says nothing about the tensor cores).
GemmEfficiencyFit fit_gemm_efficiencies(const std::vector<GemmMeasurement>& rows,
                                        const ClusterSpec& base, const std::string& base_name,
                                        const std::string& source, const std::string& name);

}  // namespace symmesh::evaluation
