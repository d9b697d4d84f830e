#include "tools/cli/calibrate_collectives.hpp"

#include <cstdio>
#include <filesystem>

#include "core/errors.hpp"
#include "evaluation/collective_fit.hpp"
#include "scenario/cluster_writer.hpp"
#include "scenario/scenario_loader.hpp"
#include "tools/cli/atomic_file.hpp"

namespace symmesh::cli {

namespace {

std::string percent(double fraction) {
  char buffer[32];
  std::snprintf(buffer, sizeof buffer, "%.1f %%", 100 * fraction);
  return buffer;
}

std::string file_names(const std::vector<std::string>& paths) {
  std::string out;
  for (const std::string& p : paths)
    out += (out.empty() ? "" : ", ") + std::filesystem::path(p).filename().string();
  return out;
}

}  // namespace

int run_collective_calibration(const CollectiveCalibrationArgs& args, std::ostream& out) {
  if (args.base.empty())
    throw InvalidArgument(
        "--nccl-tests needs --base: the cluster the runs were measured on "
        "(its GPUs per node and NICs place each run's ranks)",
        "--base");
  std::vector<std::string> inputs = args.nccl_tests;
  inputs.insert(inputs.end(), args.nvls.begin(), args.nvls.end());
  inputs.push_back(args.base);
  check_output_path(args.out, "--out", inputs);
  ClusterSpec cluster = load_cluster(args.base);
  // Nor any file of the base's chain (its own base: and theirs), which the base reads.
  check_output_path(args.out, "--out", files_read_for(cluster));
  std::vector<evaluation::CollectiveFitInput> runs;
  for (const std::string& f : args.nccl_tests)
    runs.push_back({evaluation::read_nccl_tests_file(f), false});
  for (const std::string& f : args.nvls)
    runs.push_back({evaluation::read_nccl_tests_file(f), true});
  const evaluation::CollectiveFit fit = evaluation::fit_collectives(runs, cluster);
  // Fitted lists replace the base's; what the runs did not measure stays as the base says.
  for (int i = 0; i < kBandwidthCollectiveCount; ++i) {
    const auto op = static_cast<BandwidthCollective>(i);
    if (!fit.tuning.intra_node.of(op).empty())
      cluster.collectives.intra_node.of(op) = fit.tuning.intra_node.of(op);
    if (!fit.tuning.inter_node.of(op).empty())
      cluster.collectives.inter_node.of(op) = fit.tuning.inter_node.of(op);
  }
  if (!args.name.empty()) cluster.name = args.name;
  scenario::ClusterFileNotes notes;
  notes.header.push_back("Written by symmesh calibrate --nccl-tests: the cluster of " +
                         std::filesystem::path(args.base).filename().string() +
                         " with its collectives fitted to nccl-tests outputs.");
  notes.collectives = "Fitted (evaluation/collective_fit.hpp) from nccl-tests outputs: " +
                      file_names(args.nccl_tests) +
                      (args.nvls.empty() ? "" : "; NVLS runs: " + file_names(args.nvls));
  // A measurement is not more precise than four significant digits.
  const std::string yaml = scenario::cluster_file_text(cluster, notes, {4});
  StagedOutputs staged("--out");
  staged.stage(args.out, yaml);
  try {
    load_cluster(staged.temporary_of(args.out));
  } catch (const InvalidArgument& e) {
    throw std::logic_error("the cluster file written for " + args.out +
                           " does not load: " + e.what());
  }
  staged.commit();
  out << "symmesh calibrate: collectives fitted (median and max |fitted - measured| / measured "
         "over each fit's points):\n";
  for (const evaluation::CollectiveFitError& e : fit.errors)
    out << "  " << e.scope << " " << to_string(e.collective) << " (" << to_string(e.algorithm)
        << ", " << e.variants << " variant" << (e.variants == 1 ? "" : "s") << ", " << e.points
        << " points from " << file_names(e.files) << "): median "
        << percent(e.median_relative_error) << ", max " << percent(e.max_relative_error) << "\n";
  out << "wrote " << args.out << ":\n" << yaml;
  return 0;
}

}  // namespace symmesh::cli
