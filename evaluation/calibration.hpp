#pragma once
// Calibration: microbenchmarks on this machine's devices (GEMMs, HBM copies and
// put_signal transfers run through the hardware backend), and their fit — least squares of
// "time = launch cost + work / rate", one launch cost shared by every kernel as the roofline
// charges it (core/roofline.hpp), one rate per kind — into a ClusterSpec that
// scenario/cluster_writer.hpp writes as a cluster file. The measurements are plain JSON
// (what `calibrate --save-measurements` keeps and `--from` refits without a device):
//   {"gpu": {"name", "count", "memory_bytes"},
//    "gemm": [{"dtype", "m", "n", "k", "seconds", "best_seconds"}],
//    "copy": [{"bytes", "seconds"}], "put": [{"bytes", "seconds", "peer": "self"|"gpu1"}]}
#include <string>

#include <nlohmann/json.hpp>

#include "core/backend.hpp"
#include "core/cluster_spec.hpp"
#include "scenario/cluster_writer.hpp"

namespace symmesh::evaluation {

// Runs every microbenchmark on the backend's devices. Throws Unavailable without a device
// (naming `command`), Unsupported when the backend cannot measure devices.
nlohmann::json measure_devices(Backend& backend, const std::string& command);

struct CalibrationFit {
  ClusterSpec cluster;
  scenario::ClusterFileNotes notes;  // where the figures came from, for the file's comments
};

// Fits `measurements` so that the roofline gives each measured kernel's time back:
// - GEMMs: peak × efficiency per dtype. With a peak in `base`, the peak stays and
//   gpu.gemm_efficiency is fitted against it (the peak is raised, at efficiency 1, only
//   when the measurements beat it); without, the efficiency is kPeakEfficiency and the
//   peak what the fit implies. The work is the roofline's (its shape terms, and waves
//   when `base` gives sm_count).
// - copies (read + write): gpu.memory.sustained_bandwidth under `base`'s datasheet
//   bandwidth; the bandwidth itself when there is none, or when copies beat it.
// - the fixed cost shared by GEMMs and copies: gpu.launch_overhead.
// - the intra-node link from puts to another GPU (else `base`'s; else a self put, said so).
// Figures not measured come from `base` (nullptr: none), named `base_name` in the notes.
// Throws InvalidArgument when a kind cannot be fitted ("need measurements at two or more
// sizes to fit bf16 GEMM") or is missing with no base to fall back on.
CalibrationFit fit_calibration(const nlohmann::json& measurements, const ClusterSpec* base,
                               const std::string& base_name, const std::string& name);

}  // namespace symmesh::evaluation
