#pragma once
// The validation table of tools/validation/manifest.yaml: every published point it lists
// predicted with symmesh (collectives with estimate_library_collective, GEMMs with
// roofline::matmul_duration_s, HBM with the cluster's bandwidth) and the error of each,
// summarised per regime and role. `tools/validation/run` prints it.
#include <string>
#include <vector>

namespace symmesh::validation {

struct ValidationPoint {
  std::string source;  // file or id
  std::string config;  // "all_reduce 8 GPUs 1 node", "bf16 2048x2048x13312"
  double size_bytes = 0;
  std::string regime, role;
  double published_s = 0;  // a time (HBM: 1 / bandwidth, so the error is a time's too)
  double predicted_s = 0;  // 0 with `note` when symmesh cannot predict it
  std::string note;
  double error() const { return predicted_s / published_s - 1; }
};

// Reads the manifest (paths in it relative to `published_dir`; clusters looked up in
// `clusters_dir`). Throws InvalidArgument naming the manifest or the data file and line.
std::vector<ValidationPoint> validation_points(const std::string& manifest_path,
                                               const std::string& published_dir,
                                               const std::string& clusters_dir);

// The `symmesh calibrate` arguments the manifest gives for `cluster` (a file name of its
// calibration: section): "--nccl-tests PATH" and "--nvls PATH", one pair per line, paths
// under `published_dir`. Throws InvalidArgument when it lists none.
std::string calibration_arguments(const std::string& manifest_path,
                                  const std::string& published_dir, const std::string& cluster);
// The clusters the calibration: section names, one per line.
std::string calibrated_clusters(const std::string& manifest_path);

// The manifest's GEMM rows with role fit for `cluster`, as the CSV `symmesh calibrate
// --gemm` reads (id, m, n, k, dtype, tflops, seconds; dtype as the manifest names it).
std::string gemm_fit_csv(const std::string& manifest_path, const std::string& published_dir,
                         const std::string& cluster);

struct RegimeSummary {
  std::string regime, role;
  int count = 0, unpredicted = 0;
  double median_abs_error = 0, max_abs_error = 0;
};
// Per (regime, role): role fit first, then the others; regimes in the order they first appear.
std::vector<RegimeSummary> summarise(const std::vector<ValidationPoint>& points);

// Every point, then the summary table.
std::string validation_report(const std::vector<ValidationPoint>& points);

}  // namespace symmesh::validation
