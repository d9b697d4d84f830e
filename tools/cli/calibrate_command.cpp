// symmesh calibrate: microbenchmarks on this machine's GPUs through the hardware backend,
// fitted into a cluster description (evaluation/calibration.hpp) and written as a cluster
// file (scenario/cluster_writer.hpp) that scenarios can name. --from refits saved
// measurements without a GPU; --save-measurements keeps them; --gemm fits the GEMM
// efficiencies of --base to measured GEMM times (evaluation/gemm_efficiency_fit.hpp).
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <memory>
#include <nlohmann/json.hpp>

#include "core/errors.hpp"
#include "core/input_file.hpp"
#include "core/text.hpp"
#include "evaluation/backends.hpp"
#include "evaluation/calibration.hpp"
#include "evaluation/gemm_efficiency_fit.hpp"
#include "evaluation/gemm_measurements.hpp"
#include "reports/simulation_output.hpp"
#include "scenario/cluster_writer.hpp"
#include "scenario/scenario_loader.hpp"
#include "tools/cli/atomic_file.hpp"
#include "tools/cli/calibrate_collectives.hpp"
#include "tools/cli/command.hpp"

namespace symmesh::cli {

using namespace evaluation;

namespace {

struct CalibrateArgs {
  std::string out;
  std::string from;
  std::string save;
  std::string base;
  std::string name;
  std::string gemm;
  CollectiveCalibrationArgs collectives;  // --nccl-tests, --nvls
};

nlohmann::json read_measurements(const std::string& path) {
  const std::string text = read_input_file(path, "--from");
  try {
    return nlohmann::json::parse(text);
  } catch (const nlohmann::json::exception& e) {
    throw InvalidArgument("not JSON: " + without_input_quote(e.what()), path);
  }
}

// One line per measurement, e.g. "  gemm bf16 8192x8192x8192: 1.523 ms = 722.1 TFLOP/s".
std::string measurement_lines(const nlohmann::json& m) {
  std::string out;
  for (const auto& g : m.value("gemm", nlohmann::json::array())) {
    const double flops =
        2.0 * g.at("m").get<double>() * g.at("n").get<double>() * g.at("k").get<double>();
    const double t = g.at("seconds").get<double>();
    out += "  gemm " + g.at("dtype").get<std::string>() + " " + g.at("m").dump() + "x" +
           g.at("n").dump() + "x" + g.at("k").dump() + ": " + format_fixed(t * 1e3, 3) +
           " ms = " + format_fixed(flops / t / 1e12, 1) +
           " TFLOP/s (the executor's cuBLASLt algorithm)";
    if (g.contains("best_seconds")) {
      const double best = g.at("best_seconds").get<double>();
      out += "; best candidate " + format_fixed(best * 1e3, 3) +
             " ms = " + format_fixed(flops / best / 1e12, 1) + " TFLOP/s (" +
             format_fixed(100 * best / t, 1) + "%)";
    }
    out += "\n";
  }
  for (const auto& c : m.value("copy", nlohmann::json::array())) {
    const double bytes = c.at("bytes").get<double>(), t = c.at("seconds").get<double>();
    out += "  copy " + format_bytes(static_cast<int64_t>(bytes)) + ": " + format_fixed(t * 1e3, 3) +
           " ms = " + format_fixed(2 * bytes / t / 1e12, 3) + " TB/s read + write\n";
  }
  for (const auto& p : m.value("put", nlohmann::json::array())) {
    const double bytes = p.at("bytes").get<double>(), t = p.at("seconds").get<double>();
    out += "  put " + p.value("peer", std::string("self")) + " " +
           format_bytes(static_cast<int64_t>(bytes)) + ": " + format_fixed(t * 1e6, 2) +
           " us = " + format_fixed(bytes / t / 1e9, 1) + " GB/s\n";
  }
  return out;
}

// Replaced only once what we write loads: a failed calibrate leaves the old --out.
void write_cluster(const std::string& out, const std::string& yaml) {
  StagedOutputs staged("--out");
  staged.stage(out, yaml);
  try {
    load_cluster(staged.temporary_of(out));
  } catch (const InvalidArgument& e) {
    // The writer quotes and marks every name (scenario/cluster_writer.cpp); a file it made
    // that does not load is symmesh's fault, not the user's input.
    throw std::logic_error("the cluster file written for " + out + " does not load: " + e.what());
  }
  staged.commit();
}

// --gemm: the per-dtype efficiencies fitted to measured GEMMs, on top of --base.
int run_gemm_fit(const CalibrateArgs& args) {
  check_output_path(args.out, "--out", {args.gemm, args.base});
  if (args.base.empty())
    throw InvalidArgument(
        "fits efficiencies against a cluster's peaks: give --base FILE "
        "(e.g. scenarios/clusters/dgx-h100.yaml)",
        "--gemm");
  const ClusterSpec base = load_cluster(args.base);
  // Nor any file of the base's chain (its own base: and theirs), which the base reads.
  check_output_path(args.out, "--out", files_read_for(base));
  const std::vector<GemmMeasurement> rows = read_gemm_csv(args.gemm);
  const GemmEfficiencyFit fit = fit_gemm_efficiencies(rows, base, args.base, args.gemm, args.name);
  // The base's figures are not measurements: written exactly (the efficiencies are already
  // rounded to four digits by the fit).
  const std::string yaml =
      scenario::cluster_file_text(fit.calibration.cluster, fit.calibration.notes);
  write_cluster(args.out, yaml);
  std::cout << "symmesh calibrate: " << rows.size() << " GEMMs from " << args.gemm << " against "
            << args.base << "'s peaks:\n";
  for (const DtypeEfficiency& d : fit.dtypes)
    std::cout << "  " << d.key << ": efficiency " << scenario::decimal_in_unit(d.efficiency, 0)
              << " of " << format_fixed(base.gpu.peak_flops_per_s.at(d.key) / 1e12, 1)
              << " TFLOP/s from " << d.shapes << " shapes (" << d.compute_bound
              << " compute-bound); model vs measured: rms "
              << format_fixed(100 * d.rms_relative_error, 1) << " %, max " << format_fixed(100 * d.max_relative_error, 1) << " %\n";
  std::cout << "wrote " << args.out << ":\n" << yaml;
  return 0;
}

int run_calibrate(CalibrateArgs args) {
  if (!args.gemm.empty() &&
      (!args.collectives.nccl_tests.empty() || !args.collectives.nvls.empty()))
    throw InvalidArgument(
        "fits GEMMs or collectives, not both in one run: calibrate one, then "
        "give its output as --base to the other",
        "--gemm");
  if (!args.gemm.empty()) return run_gemm_fit(args);
  if (!args.collectives.nccl_tests.empty() || !args.collectives.nvls.empty()) {
    if (!args.from.empty() || !args.save.empty())
      throw InvalidArgument("fits collectives only; measure or refit GPUs in another run",
                            "--nccl-tests");
    args.collectives.base = args.base, args.collectives.out = args.out;
    args.collectives.name = args.name;
    return run_collective_calibration(args.collectives, std::cout);
  }
  // Neither output may be an input (--from, --base) or the other output.
  check_output_path(args.out, "--out", {args.from, args.base});
  check_output_path(args.save, "--save-measurements", {args.from, args.base});
  if (same_file(args.out, args.save))
    throw InvalidArgument("'" + args.save +
                              "' is also --out: the cluster file would replace the "
                              "measurements; give them two files",
                          "--save-measurements");
  std::optional<ClusterSpec> base;
  if (!args.base.empty()) {
    base = load_cluster(args.base);  // bad base: exit 2 before measuring
    // Nor any file of the base's chain (its own base: and theirs), which the base reads.
    check_output_path(args.out, "--out", files_read_for(*base));
    check_output_path(args.save, "--save-measurements", files_read_for(*base));
  }
  const std::string command = "symmesh calibrate";
  const nlohmann::json measurements =
      args.from.empty() ? measure_devices(*make_backend("nccl", nullptr, command), command)
                        : read_measurements(args.from);
  // The raw measurements first, whole: taken on a GPU they cost minutes, so they survive
  // a fit that fails below.
  if (!args.save.empty())
    write_file_atomically(args.save, measurements.dump(2) + "\n", "--save-measurements");
  std::string yaml;
  try {
    const CalibrationFit fitted =
        fit_calibration(measurements, base ? &*base : nullptr, args.base, args.name);
    // A measurement is not more precise than four significant digits.
    yaml = scenario::cluster_file_text(fitted.cluster, fitted.notes, {4});
  } catch (const nlohmann::json::exception& e) {
    throw InvalidArgument(std::string("malformed measurements: ") + e.what(),
                          args.from.empty() ? "calibrate" : args.from);
  } catch (const InvalidArgument& e) {
    // A figure out of range in a --from file: name the file, not "measurements".
    if (args.from.empty() || e.where() != "measurements") throw;
    throw InvalidArgument(e.message(), args.from);
  }
  write_cluster(args.out, yaml);
  std::cout << "symmesh calibrate: measurements" << (args.from.empty() ? "" : " from " + args.from)
            << ":\n"
            << measurement_lines(measurements) << "wrote " << args.out << ":\n"
            << yaml;
  return 0;
}

}  // namespace

void add_calibrate_command(CLI::App& app, CommandAction& selected) {
  auto args = std::make_shared<CalibrateArgs>();
  CLI::App* cmd = app.add_subcommand(
      "calibrate",
      "Measure this machine's GPUs, or fit measured GEMM times (--gemm), into a cluster "
      "description (YAML)");
  cmd->add_option("--out", args->out, "cluster description to write (YAML)")->required();
  auto* from = cmd->add_option("--from", args->from,
                               "fit these saved measurements (JSON) instead of measuring");
  auto* save =
      cmd->add_option("--save-measurements", args->save, "also write the raw measurements (JSON)");
  cmd->add_option("--gemm", args->gemm,
                  "fit gpu.gemm_efficiency per dtype to measured GEMMs (CSV: m,n,k,dtype and "
                  "seconds, time_ms, time_us or tflops) against --base's peaks; no GPU")
      ->excludes(from)
      ->excludes(save);
  cmd->add_option("--base", args->base,
                  "cluster file whose figures fill what was not measured (links between GPUs "
                  "and nodes, fp8), and whose peaks GEMM efficiencies are fitted against");
  cmd->add_option("--name", args->name, "name of the written cluster");
  cmd->add_option("--nccl-tests", args->collectives.nccl_tests,
                  "fit the collectives: section to these nccl-tests outputs (needs --base)");
  cmd->add_option("--nvls", args->collectives.nvls, "nccl-tests outputs of NVLS runs to fit too");
  cmd->callback([args, &selected] { selected = [args] { return run_calibrate(*args); }; });
}

}  // namespace symmesh::cli
