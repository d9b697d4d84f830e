#pragma once
// The sweep's plots: step time vs GPUs (one line per mesh kind: the mesh with its first
// dim left free, e.g. "*x8") and the best point's per-op time split into communication
// and compute. Always written as gnuplot data (.dat) and scripts (.gp); rendered to SVG
// and PNG when gnuplot is on PATH, each image into a staged temporary that is kept only
// if gnuplot succeeded and the image is whole (an SVG that ends with </svg>, a PNG that
// ends with its IEND chunk: gnuplot exits 0 on a full disk). Without them, images of an
// earlier run are removed at the commit so none is stale.
#include <string>
#include <vector>

#include "evaluation/training_layouts.hpp"
#include "reports/sweep_report.hpp"
#include "tools/cli/atomic_file.hpp"

namespace symmesh::cli {

struct PlotOutput {
  std::vector<std::string> files;  // file names written in the output folder
  bool rendered = false;
  std::string note;  // one line for the user when not rendered ("" when rendered)
};

// Stages every plot file into `staged` (the caller commits the whole set).
PlotOutput write_sweep_plots(const std::string& dir, const reports::SweepOutcome& outcome,
                             StagedOutputs& staged);

// A layouts sweep's (sweep.layouts) plots under the same names: step time vs GPUs of each
// count's fastest layout, priced and simulated, and that layout's step split into its
// parts (compute, TP comm, stage sends, bubble, DP exposed, optimizer) per count.
PlotOutput write_layouts_plots(const std::string& dir, const Scenario& scenario,
                               const evaluation::TrainingLayoutsRun& run, StagedOutputs& staged);
std::vector<std::pair<std::string, std::string>> layouts_plot_sources(
    const Scenario& scenario, const evaluation::TrainingLayoutsRun& run);

// The plots of `sources` (NAME.dat and NAME.gp for each of step-time and breakdown), staged
// and rendered.
PlotOutput write_plots(const std::string& dir,
                       const std::vector<std::pair<std::string, std::string>>& sources,
                       StagedOutputs& staged);

// Whether the file at `path` is a whole SVG (".svg") or PNG (".png") image.
bool image_is_complete(const std::string& path, const std::string& extension);

// The plots' data and scripts, without touching the file system: name -> content.
std::vector<std::pair<std::string, std::string>> sweep_plot_sources(
    const reports::SweepOutcome& outcome);

// Every file the plots may write: each plot's .dat, .gp, .svg and .png.
std::vector<std::string> sweep_plot_file_names();

// The absolute path of `program` in a PATH folder, or "" when none has it.
std::string find_on_path(const std::string& program);

}  // namespace symmesh::cli
