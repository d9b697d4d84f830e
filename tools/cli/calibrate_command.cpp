// symmesh calibrate: microbenchmarks on this machine's GPUs — GEMMs (cuBLASLt), HBM copies
// and put_signal transfers run through the hardware executor — fitted with Eigen least
// squares to "time = fixed cost + work / rate" and written as a cluster description
// (scenarios/clusters/*.yaml format) that scenarios can name. --from refits saved
// measurements without a GPU; --save-measurements keeps them.
#include <Eigen/Dense>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <memory>
#include <nlohmann/json.hpp>
#include <sstream>

#include "core/errors.hpp"
#include "evaluation/hardware_evaluation.hpp"
#include "evaluation/scenario_evaluation.hpp"
#include "evaluation/simulation_report.hpp"
#include "scenario/scenario_loader.hpp"
#include "tools/cli/atomic_file.hpp"
#include "tools/cli/command.hpp"
#include "tools/cli/simulation_output.hpp"
#ifdef SYMMESH_HAVE_HW
#include "hw/microbench.hpp"
#include "hw/program_executor.hpp"
#endif

namespace symmesh::cli {

using namespace evaluation;
namespace {

struct CalibrateArgs {
  std::string out;
  std::string from;
  std::string save;
  std::string base;
  std::string name;
};

// time = fixed_s + work / rate, fitted by least squares.
struct LinearFit {
  double fixed_s = 0;
  double rate = 0;  // work per second
};

LinearFit fit(const std::vector<double>& work, const std::vector<double>& seconds,
              const std::string& what) {
  std::vector<double> distinct = work;
  std::sort(distinct.begin(), distinct.end());
  distinct.erase(std::unique(distinct.begin(), distinct.end()), distinct.end());
  if (work.size() != seconds.size() || distinct.size() < 2)
    throw InvalidArgument("need measurements at two or more sizes to fit " + what, "calibrate");
  Eigen::MatrixXd a(work.size(), 2);
  Eigen::VectorXd t(work.size());
  for (size_t i = 0; i < work.size(); ++i) a(i, 0) = 1, a(i, 1) = work[i], t(i) = seconds[i];
  const Eigen::Vector2d x = a.colPivHouseholderQr().solve(t);
  if (!(x(1) > 0))
    throw InvalidArgument("the " + what + " measurements do not grow with size; cannot fit a rate",
                          "calibrate");
  return {std::max(0.0, x(0)), 1.0 / x(1)};
}

nlohmann::json read_measurements(const std::string& path) {
  std::ifstream in(path);
  if (!in) throw InvalidArgument("cannot read '" + path + "'", "--from");
  try {
    return nlohmann::json::parse(in);
  } catch (const nlohmann::json::exception& e) {
    throw InvalidArgument(std::string("not JSON: ") + e.what(), path);
  }
}

#ifdef SYMMESH_HAVE_HW
// The executor's options for calibration runs: messages name this command.
hw::ExecutorOptions calibration_executor() {
  hw::ExecutorOptions options;
  options.command = "symmesh calibrate";
  return options;
}

// Min over repeats of each op's measured time, by label detail.
std::map<std::string, double> fastest(const hw::Measurement& m, const Program& program) {
  std::map<std::string, double> out;
  for (const auto& op : m.timeline) {
    const StreamOp& s = program.streams(op.rank)[op.stream].ops[op.op_index];
    const OpLabel& label = program.label_of(s.label());
    if (label.category == OpCategory::sync || s.kind() == StreamOp::Kind::wait_signal) continue;
    const double t = op.end_s - op.start_s;
    auto [it, fresh] = out.emplace(label.detail, t);
    if (!fresh) it->second = std::min(it->second, t);
  }
  return out;
}

// put_signal (and its wait) of each size, from rank 0 to rank `peer`, three times each.
nlohmann::json measure_puts(int world, int peer) {
  const std::vector<int64_t> sizes{4 << 10, 64 << 10, 1 << 20, 16 << 20, 256 << 20};
  Program program(world);
  const GroupId all = program.world_group();
  for (int64_t bytes : sizes) {
    const SymmetricHandle h = program.symm_alloc(all, bytes);
    const BufferRef src = program.local_alloc(0, bytes);
    for (int repeat = 0; repeat < 3; ++repeat) {
      const OpLabel label{"put", OpCategory::comm, std::to_string(bytes)};
      program.put_signal(0, program.stream(0, "main"), src, h, 0, peer, label);
      program.wait_signal(peer, program.stream(peer, "main"), h, 0, label);
      program.barrier(all, "main", {"put", OpCategory::sync, ""});
    }
  }
  const auto m = hw::execute_program(program, calibration_executor());
  nlohmann::json out = nlohmann::json::array();
  for (const auto& [detail, seconds] : fastest(m, program))
    out.push_back({{"bytes", std::stoll(detail)},
                   {"seconds", seconds},
                   {"peer", peer == 0 ? "self" : "gpu" + std::to_string(peer)}});
  return out;
}

// Copies inside GPU 0's memory (read + write) of each size.
nlohmann::json measure_copies() {
  const std::vector<int64_t> sizes{16 << 20, 64 << 20, 256 << 20, int64_t{1} << 30};
  Program program(1);
  for (int64_t bytes : sizes) {
    CopyWork w;
    w.src = program.local_alloc(0, bytes);
    w.dst = program.local_alloc(0, bytes);
    w.row_bytes = bytes;
    for (int repeat = 0; repeat < 3; ++repeat)
      program.copy(0, program.stream(0, "main"), w,
                   {"copy", OpCategory::compute, std::to_string(bytes)});
  }
  const auto m = hw::execute_program(program, calibration_executor());
  nlohmann::json out = nlohmann::json::array();
  for (const auto& [detail, seconds] : fastest(m, program))
    out.push_back({{"bytes", std::stoll(detail)}, {"seconds", seconds}});
  return out;
}

nlohmann::json measure() {
  const hw::GpuInventory gpus = hw::visible_gpus();
  if (gpus.count() == 0)
    throw HardwareUnavailable(
        hw::no_gpu_message("symmesh calibrate", gpus.why_none, "a GPU to measure"),
        "symmesh calibrate");
  nlohmann::json j;
  j["gpu"] = {{"name", gpus.gpus[0].name},
              {"count", gpus.count()},
              {"memory_bytes", gpus.gpus[0].memory_bytes}};
  j["gemm"] = nlohmann::json::array();
  for (DType dtype : {DType::bf16, DType::fp16, DType::fp32}) {
    for (int64_t n : {1024, 2048, 4096, 8192}) {
      if (dtype == DType::fp32 && n > 4096) continue;  // slow on CUDA cores, and enough
      const auto t = hw::benchmark_gemm(dtype, n, n, n, 10);
      j["gemm"].push_back({{"dtype", to_string(dtype)},
                           {"m", n},
                           {"n", n},
                           {"k", n},
                           {"seconds", t.heuristic_s},
                           {"best_seconds", t.best_s}});
    }
  }
  j["copy"] = measure_copies();
  j["put"] = measure_puts(1, 0);
  if (gpus.count() >= 2)
    for (auto& p : measure_puts(2, 1)) j["put"].push_back(p);
  return j;
}
#endif

std::string fixed(double v, int digits) {
  char buffer[64];
  std::snprintf(buffer, sizeof buffer, "%.*f", digits, v);
  return buffer;
}

// The cluster description: measured figures, the base cluster's (or defaults) for the rest.
std::string cluster_yaml(const nlohmann::json& m, const CalibrateArgs& args) {
  ClusterSpec base;
  if (!args.base.empty()) base = load_cluster(args.base);
  const std::string gpu_name = m.at("gpu").at("name").get<std::string>();
  const int count = m.at("gpu").value("count", 1);
  std::ostringstream y;
  y << "# Measured by `symmesh calibrate` on " << count << " x " << gpu_name
    << ": each figure is a least-squares fit of\n"
    << "# time = fixed cost + work / rate to microbenchmarks (GEMMs through cuBLASLt, copies "
       "and\n# put_signal through the hardware executor)"
    << (args.base.empty() ? "" : "; figures not measured come from " + args.base) << ".\n";
  y << "name: " << (args.name.empty() ? "calibrated" : args.name) << "\n";
  y << "nodes: 1\n";
  y << "gpus_per_node: " << count << "\n";
  y << "gpu:\n  name: \"" << gpu_name << "\"\n";

  std::map<std::string, double> peaks = base.gpu.peak_flops_per_s;
  std::map<std::string, std::pair<std::vector<double>, std::vector<double>>> gemm;
  for (const auto& g : m.value("gemm", nlohmann::json::array())) {
    auto& [work, seconds] = gemm[g.at("dtype").get<std::string>()];
    work.push_back(2.0 * g.at("m").get<double>() * g.at("n").get<double>() *
                   g.at("k").get<double>());
    seconds.push_back(g.at("seconds").get<double>());
  }
  for (const auto& [dtype, series] : gemm)
    peaks[dtype] = fit(series.first, series.second, dtype + " GEMM").rate;
  if (peaks.empty()) throw InvalidArgument("no GEMM measurements and no base cluster", "calibrate");
  y << "  peak: {";
  bool first = true;
  for (const auto& [dtype, rate] : peaks)
    y << (first ? "" : ", ") << dtype << ": " << fixed(rate / 1e12, 1) << " TFLOP/s", first = false;
  y << "}\n";

  std::vector<double> copy_bytes, copy_seconds;
  for (const auto& c : m.value("copy", nlohmann::json::array()))
    copy_bytes.push_back(2.0 * c.at("bytes").get<double>()),
        copy_seconds.push_back(c.at("seconds").get<double>());
  const double hbm = copy_bytes.empty() ? base.gpu.memory_bandwidth_bytes_per_s
                                        : fit(copy_bytes, copy_seconds, "copy").rate;
  const double capacity = m.at("gpu").value("memory_bytes", base.gpu.memory_capacity_bytes);
  if (!(hbm > 0) || !(capacity > 0))
    throw InvalidArgument("no copy measurements / memory size and no base cluster", "calibrate");
  y << "  memory: {capacity: " << fixed(capacity, 0) << " B, bandwidth: " << fixed(hbm / 1e12, 3)
    << " TB/s}\n";

  // Intra-node: a put to another GPU when there was one; else the base's, else the self-put
  // (which crosses HBM, not NVLink: said in a comment).
  std::vector<double> peer_bytes, peer_seconds, self_bytes, self_seconds;
  for (const auto& p : m.value("put", nlohmann::json::array())) {
    const bool self = p.value("peer", "self") == "self";
    (self ? self_bytes : peer_bytes).push_back(p.at("bytes").get<double>());
    (self ? self_seconds : peer_seconds).push_back(p.at("seconds").get<double>());
  }
  LinearFit link{base.intra_node.latency_s, base.intra_node.bandwidth_bytes_per_s};
  std::string link_note = args.base.empty() ? "" : "from " + args.base;
  if (!peer_bytes.empty()) {
    link = fit(peer_bytes, peer_seconds, "put_signal");
    link_note = "measured: put_signal GPU 0 -> GPU 1";
  } else if (!(link.rate > 0) && !self_bytes.empty()) {
    link = fit(self_bytes, self_seconds, "self put_signal");
    link_note = "measured on ONE GPU: a self put_signal through HBM, not a GPU-to-GPU link";
  }
  if (!(link.rate > 0))
    throw InvalidArgument("no put_signal measurements and no base cluster", "calibrate");
  if (!link_note.empty()) y << "# intra_node " << link_note << "\n";
  y << "intra_node: {kind: " << (base.intra_node.kind.empty() ? "nvswitch" : base.intra_node.kind)
    << ", bandwidth: " << fixed(link.rate / 1e9, 1)
    << " GB/s, latency: " << fixed(link.fixed_s * 1e6, 3) << " us}\n";
  if (base.inter_node.bandwidth_bytes_per_s > 0)
    y << "inter_node: {kind: " << base.inter_node.kind
      << ", nics_per_node: " << base.inter_node.nics_per_node
      << ", bandwidth: " << fixed(base.inter_node.bandwidth_bytes_per_s / 1e9, 3)
      << " GB/s, latency: " << fixed(base.inter_node.latency_s * 1e6, 3) << " us}\n";
  return y.str();
}

// One line per measurement, e.g. "  gemm bf16 8192x8192x8192: 1.523 ms = 722.1 TFLOP/s".
std::string measurement_lines(const nlohmann::json& m) {
  std::string out;
  for (const auto& g : m.value("gemm", nlohmann::json::array())) {
    const double flops =
        2.0 * g.at("m").get<double>() * g.at("n").get<double>() * g.at("k").get<double>();
    const double t = g.at("seconds").get<double>();
    out += "  gemm " + g.at("dtype").get<std::string>() + " " + g.at("m").dump() + "x" +
           g.at("n").dump() + "x" + g.at("k").dump() + ": " + fixed(t * 1e3, 3) +
           " ms = " + fixed(flops / t / 1e12, 1) + " TFLOP/s (the executor's cuBLASLt algorithm)";
    if (g.contains("best_seconds")) {
      const double best = g.at("best_seconds").get<double>();
      out += "; best candidate " + fixed(best * 1e3, 3) + " ms = " + fixed(flops / best / 1e12, 1) +
             " TFLOP/s (" + fixed(100 * best / t, 1) + "%)";
    }
    out += "\n";
  }
  for (const auto& c : m.value("copy", nlohmann::json::array())) {
    const double bytes = c.at("bytes").get<double>(), t = c.at("seconds").get<double>();
    out += "  copy " + format_bytes(static_cast<int64_t>(bytes)) + ": " + fixed(t * 1e3, 3) +
           " ms = " + fixed(2 * bytes / t / 1e12, 3) + " TB/s read + write\n";
  }
  for (const auto& p : m.value("put", nlohmann::json::array())) {
    const double bytes = p.at("bytes").get<double>(), t = p.at("seconds").get<double>();
    out += "  put " + p.value("peer", std::string("self")) + " " +
           format_bytes(static_cast<int64_t>(bytes)) + ": " + fixed(t * 1e6, 2) +
           " us = " + fixed(bytes / t / 1e9, 1) + " GB/s\n";
  }
  return out;
}

void check_writable(const std::string& path, const std::string& what) {
  const auto parent = std::filesystem::absolute(path).parent_path();
  if (!std::filesystem::is_directory(parent))
    throw InvalidArgument("cannot write '" + path + "': no directory " + parent.string(), what);
}

int run_calibrate(const CalibrateArgs& args) {
  check_writable(args.out, "--out");
  if (!args.save.empty()) check_writable(args.save, "--save-measurements");
  if (!args.base.empty()) load_cluster(args.base);  // bad base: exit 2 before measuring
  nlohmann::json measurements;
  if (!args.from.empty()) {
    measurements = read_measurements(args.from);
  } else {
#ifdef SYMMESH_HAVE_HW
    try {
      measurements = measure();
    } catch (const HardwareUnavailable& e) {
      std::cerr << "symmesh: error: " << e.message() << "\n";
      return 1;
    }
#else
    std::cerr << "symmesh: error: this symmesh was built without the hardware backend (hw/ "
                 "needs the CUDA toolkit with NCCL at configure time); symmesh calibrate "
                 "measures GPUs — or refits saved measurements with --from\n";
    return 1;
#endif
  }
  if (!args.save.empty())
    write_file_atomically(args.save, measurements.dump(2) + "\n", "--save-measurements");
  std::string yaml;
  try {
    yaml = cluster_yaml(measurements, args);
  } catch (const nlohmann::json::exception& e) {
    throw InvalidArgument(std::string("malformed measurements: ") + e.what(),
                          args.from.empty() ? "calibrate" : args.from);
  }
  write_file_atomically(args.out, yaml, "--out");
  load_cluster(args.out);  // what we wrote must load
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
      "calibrate", "Measure this machine's GPUs and write a fitted cluster description (YAML)");
  cmd->add_option("--out", args->out, "cluster description to write (YAML)")->required();
  cmd->add_option("--from", args->from, "fit these saved measurements (JSON) instead of measuring");
  cmd->add_option("--save-measurements", args->save, "also write the raw measurements (JSON)");
  cmd->add_option(
      "--base", args->base,
      "cluster file whose figures fill what was not measured (links between GPUs and nodes, fp8)");
  cmd->add_option("--name", args->name, "name of the written cluster");
  cmd->callback([args, &selected] { selected = [args] { return run_calibrate(*args); }; });
}

}  // namespace symmesh::cli
