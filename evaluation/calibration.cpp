#include "evaluation/calibration.hpp"

#include <Eigen/Dense>
#include <algorithm>
#include <cmath>
#include <map>
#include <optional>

#include "core/errors.hpp"
#include "core/roofline.hpp"

namespace symmesh::evaluation {
namespace {

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

// Kernels of each kind ("GEMM bf16", "copy"): (work, seconds) pairs.
using KernelSeries = std::map<std::string, std::vector<std::pair<double, double>>>;

struct KernelFit {
  std::optional<double> launch_s;                  // the one fixed cost; none without kernels
  std::map<std::string, double> seconds_per_work;  // per kind
};

// time = launch + work × seconds_per_work[kind], one launch cost for every kernel (the
// roofline charges each kernel the same gpu.launch_overhead) and one slope per kind, by
// least squares of the relative error (each row divided by its time): the small sizes,
// which say most about the launch cost, count as much as the large ones.
KernelFit fit_kernels(const KernelSeries& series) {
  KernelFit out;
  std::vector<std::string> kinds;
  size_t rows = 0;
  for (const auto& [kind, points] : series) {
    std::vector<double> work;
    for (const auto& p : points) work.push_back(p.first);
    std::sort(work.begin(), work.end());
    if (std::unique(work.begin(), work.end()) - work.begin() < 2)
      throw InvalidArgument("need measurements at two or more sizes to fit " + kind, "calibrate");
    kinds.push_back(kind);
    rows += points.size();
  }
  if (kinds.empty()) return out;
  const auto solve = [&](bool with_launch) {
    const int offset = with_launch ? 1 : 0;
    Eigen::MatrixXd a = Eigen::MatrixXd::Zero(rows, kinds.size() + offset);
    Eigen::VectorXd t(rows);
    size_t r = 0;
    for (size_t k = 0; k < kinds.size(); ++k)
      for (const auto& [work, seconds] : series.at(kinds[k])) {
        if (with_launch) a(r, 0) = 1 / seconds;
        a(r, k + offset) = work / seconds;
        t(r++) = 1;
      }
    return Eigen::VectorXd(a.colPivHouseholderQr().solve(t));
  };
  Eigen::VectorXd x = solve(true);
  if (x(0) >= 0) {
    out.launch_s = x(0);
  } else {  // no negative launch cost: refit the slopes without one
    x = solve(false);
    out.launch_s = 0;
  }
  const int offset = x.size() > static_cast<int>(kinds.size()) ? 1 : 0;
  for (size_t k = 0; k < kinds.size(); ++k) {
    const double slope = x(k + offset);
    if (!(slope > 0))
      throw InvalidArgument(
          "the " + kinds[k] + " measurements do not grow with size; cannot fit a rate",
          "calibrate");
    out.seconds_per_work[kinds[k]] = slope;
  }
  return out;
}

// A measured figure: a finite number > 0 (>= 0 where `zero_ok`: an empty put), named by its
// place in the measurements ("gemm[2].seconds") when it is not — a negative time or an
// overflowing size would otherwise fit into a rate that looks plausible.
double measured(const nlohmann::json& entry, const char* key, const std::string& where,
                bool zero_ok = false) {
  const nlohmann::json& value = entry.at(key);
  const std::string name = where + "." + key;
  if (!value.is_number())
    throw InvalidArgument(name + ": expected a number, got " + value.dump(), "measurements");
  const double v = value.get<double>();
  if (!std::isfinite(v) || v < 0 || (v == 0 && !zero_ok) || v > 1e18)
    throw InvalidArgument(name + ": expected a finite number " + (zero_ok ? ">= 0" : "> 0") +
                              " and below 1e18, got " + value.dump(),
                          "measurements");
  return v;
}

// Min over repeats of each op's measured time, by label detail (the op's size).
std::map<std::string, double> fastest(const RunResult& result, const Program& program) {
  std::map<std::string, double> out;
  for (const TimelineEntry& e : result.timeline) {
    const StreamOp& op = program.streams(e.rank)[e.stream].ops[e.op_index];
    const OpLabel& label = program.label_of(op.label());
    if (label.category == OpCategory::sync || op.kind() == StreamOp::Kind::wait_signal) continue;
    auto [it, fresh] = out.emplace(label.detail, e.end_s - e.start_s);
    if (!fresh) it->second = std::min(it->second, e.end_s - e.start_s);
  }
  return out;
}

RunResult timed(Backend& backend, const Program& program, const std::string& command) {
  RunRequest request;
  request.record_timeline = true;
  request.warmup_runs = 1;
  request.command = command;
  return backend.run(program, request);
}

// put_signal (and its wait) of each size, from rank 0 to rank `peer`, three times each.
nlohmann::json measure_puts(Backend& backend, int world, int peer, const std::string& command) {
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
  nlohmann::json out = nlohmann::json::array();
  for (const auto& [detail, seconds] : fastest(timed(backend, program, command), program))
    out.push_back({{"bytes", std::stoll(detail)},
                   {"seconds", seconds},
                   {"peer", peer == 0 ? "self" : "gpu" + std::to_string(peer)}});
  return out;
}

// Copies inside GPU 0's memory (read + write) of each size.
nlohmann::json measure_copies(Backend& backend, const std::string& command) {
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
  nlohmann::json out = nlohmann::json::array();
  for (const auto& [detail, seconds] : fastest(timed(backend, program, command), program))
    out.push_back({{"bytes", std::stoll(detail)}, {"seconds", seconds}});
  return out;
}

}  // namespace

nlohmann::json measure_devices(Backend& backend, const std::string& command) {
  DeviceBenchmarks* bench = backend.device_benchmarks();
  if (!bench) throw Unsupported("the " + backend.name() + " backend measures no devices", command);
  const std::vector<DeviceInfo> devices = bench->devices(command);
  nlohmann::json j;
  j["gpu"] = {{"name", devices.at(0).name},
              {"count", devices.size()},
              {"memory_bytes", devices.at(0).memory_bytes}};
  j["gemm"] = nlohmann::json::array();
  for (DType dtype : {DType::bf16, DType::fp16, DType::fp32}) {
    for (int64_t n : {1024, 2048, 4096, 8192}) {
      if (dtype == DType::fp32 && n > 4096) continue;  // slow on CUDA cores, and enough
      const GemmTiming t = bench->gemm(dtype, n, n, n, 10);
      j["gemm"].push_back({{"dtype", to_string(dtype)},
                           {"m", n},
                           {"n", n},
                           {"k", n},
                           {"seconds", t.heuristic_s},
                           {"best_seconds", t.best_s}});
    }
  }
  j["copy"] = measure_copies(backend, command);
  j["put"] = measure_puts(backend, 1, 0, command);
  if (devices.size() >= 2)
    for (auto& p : measure_puts(backend, 2, 1, command)) j["put"].push_back(p);
  return j;
}

CalibrationFit fit_calibration(const nlohmann::json& m, const ClusterSpec* base_cluster,
                               const std::string& base_name, const std::string& name) {
  const ClusterSpec base = base_cluster ? *base_cluster : ClusterSpec{};
  CalibrationFit out;
  ClusterSpec& c = out.cluster;
  const std::string gpu_name = m.at("gpu").at("name").get<std::string>();
  const int count = m.at("gpu").value("count", 1);
  out.notes.header = {
      "Measured by `symmesh calibrate` on " + std::to_string(count) + " x " + gpu_name +
          ": each figure is a least-squares fit of",
      "time = fixed cost + work / rate to microbenchmarks (GEMMs through cuBLASLt, copies and",
      "put_signal through the hardware executor)" +
          (base_cluster ? "; figures not measured come from " + base_name : std::string()) + "."};
  c.name = name.empty() ? "calibrated" : name;
  c.nodes = 1;
  c.gpus_per_node = count;
  c.gpu.name = gpu_name;

  c.gpu.peak_flops_per_s = base.gpu.peak_flops_per_s;
  c.gpu.gemm_efficiency = base.gpu.gemm_efficiency;
  c.gpu.sm_count = base.gpu.sm_count;
  c.gpu.launch_overhead_s = base.gpu.launch_overhead_s;
  KernelSeries series;
  int i = 0;
  for (const auto& g : m.value("gemm", nlohmann::json::array())) {
    const std::string at = "gemm[" + std::to_string(i++) + "]";
    const std::string key = peak_key(parse_dtype(g.at("dtype").get<std::string>(), at + ".dtype"));
    const auto dim = [&](const char* name) {
      return static_cast<int64_t>(std::llround(measured(g, name, at)));
    };
    // The work in peak FLOPs at E = 1: what the roofline divides by peak × E (its shape
    // terms and, with the base's sm_count, its waves), so that the fitted slope is
    // 1 / (peak × E) and the model gives the measured time back.
    GpuSpec at_full = c.gpu;
    at_full.gemm_efficiency[key] = 1.0;
    series["GEMM " + key].push_back(
        {roofline::gemm_effective_flops(at_full, parse_dtype(key), 1, dim("m"), dim("n"), dim("k")),
         measured(g, "seconds", at)});
  }
  i = 0;
  for (const auto& x : m.value("copy", nlohmann::json::array())) {
    const std::string at = "copy[" + std::to_string(i++) + "]";
    series["copy"].push_back({2.0 * measured(x, "bytes", at), measured(x, "seconds", at)});
  }
  const KernelFit kernels = fit_kernels(series);
  if (kernels.launch_s) c.gpu.launch_overhead_s = kernels.launch_s;
  std::vector<std::string> gpu_notes;
  for (const auto& [kind, seconds_per_work] : kernels.seconds_per_work) {
    if (kind == "copy") continue;
    const std::string key = kind.substr(5);
    const double rate = 1.0 / seconds_per_work;  // peak × E
    const auto peak = base.gpu.peak_flops_per_s.find(key);
    if (peak == base.gpu.peak_flops_per_s.end()) {
      // No datasheet to measure against: the default efficiency, and the peak it implies.
      c.gpu.peak_flops_per_s[key] = rate / roofline::kPeakEfficiency;
      c.gpu.gemm_efficiency[key] = roofline::kPeakEfficiency;
      gpu_notes.push_back(key + " peak = fitted rate / " +
                          scenario::decimal_in_unit(roofline::kPeakEfficiency, 0));
    } else if (rate > peak->second) {
      c.gpu.peak_flops_per_s[key] = rate;  // faster than the base's peak: the base is wrong
      c.gpu.gemm_efficiency[key] = 1.0;
      gpu_notes.push_back(key + " measured above " + base_name + "'s peak");
    } else {
      c.gpu.gemm_efficiency[key] = rate / peak->second;
      gpu_notes.push_back(key + " efficiency against " + base_name + "'s peak");
    }
  }
  if (c.gpu.peak_flops_per_s.empty())
    throw InvalidArgument("no GEMM measurements and no base cluster", "calibrate");

  c.gpu.memory_bandwidth_bytes_per_s = base.gpu.memory_bandwidth_bytes_per_s;
  c.gpu.memory_sustained_bandwidth_bytes_per_s = base.gpu.memory_sustained_bandwidth_bytes_per_s;
  if (kernels.seconds_per_work.count("copy")) {
    const double fitted = 1.0 / kernels.seconds_per_work.at("copy");
    if (fitted < c.gpu.memory_bandwidth_bytes_per_s) {
      // The datasheet figure stays; copies say what streaming kernels sustain.
      c.gpu.memory_sustained_bandwidth_bytes_per_s = fitted;
      gpu_notes.push_back("sustained HBM bandwidth from copies; bandwidth from " + base_name);
    } else {
      c.gpu.memory_bandwidth_bytes_per_s = fitted;
      c.gpu.memory_sustained_bandwidth_bytes_per_s = 0;
    }
  }
  if (kernels.launch_s) gpu_notes.push_back("launch_overhead: the fixed cost of every kernel");
  for (const std::string& note : gpu_notes)
    out.notes.gpu += (out.notes.gpu.empty() ? "gpu: " : "; ") + note;
  c.gpu.memory_capacity_bytes = m.at("gpu").contains("memory_bytes")
                                    ? measured(m.at("gpu"), "memory_bytes", "gpu")
                                    : base.gpu.memory_capacity_bytes;
  if (!(c.gpu.memory_bandwidth_bytes_per_s > 0) || !(c.gpu.memory_capacity_bytes > 0))
    throw InvalidArgument("no copy measurements / memory size and no base cluster", "calibrate");

  // Intra-node: a put to another GPU when there was one; else the base's, else the self-put
  // (which crosses HBM, not NVLink: said in a comment).
  std::vector<double> peer_bytes, peer_seconds, self_bytes, self_seconds;
  i = 0;
  for (const auto& p : m.value("put", nlohmann::json::array())) {
    const std::string at = "put[" + std::to_string(i++) + "]";
    const bool self = p.value("peer", "self") == "self";
    (self ? self_bytes : peer_bytes).push_back(measured(p, "bytes", at, true));
    (self ? self_seconds : peer_seconds).push_back(measured(p, "seconds", at));
  }
  LinearFit link{base.intra_node.latency_s, base.intra_node.bandwidth_bytes_per_s};
  std::string link_note = base_cluster ? "from " + base_name : "";
  if (!peer_bytes.empty()) {
    link = fit(peer_bytes, peer_seconds, "put_signal");
    link_note = "measured: put_signal GPU 0 -> GPU 1";
  } else if (!(link.rate > 0) && !self_bytes.empty()) {
    link = fit(self_bytes, self_seconds, "self put_signal");
    link_note = "measured on ONE GPU: a self put_signal through HBM, not a GPU-to-GPU link";
  }
  if (!(link.rate > 0))
    throw InvalidArgument("no put_signal measurements and no base cluster", "calibrate");
  out.notes.intra_node = link_note.empty() ? "" : "intra_node " + link_note;
  c.intra_node.kind = base.intra_node.kind.empty() ? "nvswitch" : base.intra_node.kind;
  c.intra_node.bandwidth_bytes_per_s = link.rate;
  c.intra_node.latency_s = link.fixed_s;
  c.inter_node = base.inter_node;
  if (base.inter_node.bandwidth_bytes_per_s > 0 && base_cluster)
    out.notes.inter_node = "inter_node from " + base_name;
  return out;
}

}  // namespace symmesh::evaluation
