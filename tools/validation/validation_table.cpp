#include "tools/validation/validation_table.hpp"

#include <yaml-cpp/yaml.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <fstream>
#include <map>
#include <sstream>

#include "core/errors.hpp"
#include "core/nccl_cost_model.hpp"
#include "core/program.hpp"
#include "core/roofline.hpp"
#include "evaluation/collective_fit.hpp"
#include "evaluation/nccl_tests_output.hpp"
#include "scenario/scenario_loader.hpp"

namespace symmesh::validation {

namespace {

YAML::Node load_manifest(const std::string& path) {
  try {
    return YAML::LoadFile(path);
  } catch (const YAML::Exception& e) {
    throw InvalidArgument(std::string("not a readable YAML manifest: ") + e.what(), path);
  }
}

std::string field(const YAML::Node& entry, const char* name, const std::string& manifest) {
  if (!entry[name]) throw InvalidArgument(std::string("an entry has no '") + name + "'", manifest);
  return entry[name].as<std::string>();
}

std::string optional_field(const YAML::Node& entry, const char* name) {
  return entry[name] ? entry[name].as<std::string>() : std::string();
}

// A cluster, once per file.
class Clusters {
 public:
  explicit Clusters(std::string dir) : dir_(std::move(dir)) {}
  const ClusterSpec& get(const std::string& name) {
    auto it = loaded_.find(name);
    if (it == loaded_.end()) it = loaded_.emplace(name, load_cluster(dir_ + "/" + name)).first;
    return it->second;
  }

 private:
  std::string dir_;
  std::map<std::string, ClusterSpec> loaded_;
};

// The cluster with only `algorithm`'s variants for `op` (a run that forced NCCL_ALGO).
ClusterSpec only_algorithm(ClusterSpec cluster, BandwidthCollective op,
                           const std::string& algorithm) {
  if (algorithm.empty()) return cluster;
  for (CollectiveScopeTuning* scope :
       {&cluster.collectives.intra_node, &cluster.collectives.inter_node}) {
    auto& list = scope->of(op);
    list.erase(std::remove_if(
                   list.begin(), list.end(),
                   [&](const CollectiveVariant& v) { return to_string(v.algorithm) != algorithm; }),
               list.end());
  }
  return cluster;
}

std::string collective_regime(const GroupGeometry& g, double bytes) {
  if (g.nodes > 1) return "multi-node collective";
  if (bytes <= 1024.0 * 1024) return "NVLink collective <= 1 MiB";
  if (bytes < 128.0 * 1024 * 1024) return "NVLink collective 2-64 MiB";
  return "NVLink collective >= 128 MiB";
}

// Prices one collective point; `note` says why not when the cluster cannot.
void predict_collective(ValidationPoint& point, const ClusterSpec& cluster, BandwidthCollective op,
                        const GroupGeometry& group, const std::string& algorithm) {
  try {
    const ClusterSpec priced = only_algorithm(cluster, op, algorithm);
    const LibraryEstimate e = estimate_library_collective(priced, op, group, point.size_bytes);
    point.predicted_s = e.time_s;
    point.note = e.name();
  } catch (const InvalidArgument& e) {
    point.predicted_s = 0;
    point.note = "no prediction: " + e.message();
  }
}

std::string group_text(BandwidthCollective op, const GroupGeometry& g) {
  return to_string(op) + " " + std::to_string(g.ranks) + " GPUs " + std::to_string(g.nodes) +
         (g.nodes == 1 ? " node" : " nodes");
}

// Comma-separated values with "quoted, fields".
std::vector<std::string> csv_fields(const std::string& line) {
  std::vector<std::string> out(1);
  bool quoted = false;
  for (char c : line) {
    if (c == '"')
      quoted = !quoted;
    else if (c == ',' && !quoted)
      out.emplace_back();
    else if (c != '\r')
      out.back() += c;
  }
  return out;
}

struct CsvTable {
  std::string file;
  std::vector<std::string> header;
  std::vector<std::pair<int, std::vector<std::string>>> rows;  // line, fields
  const std::string& at(const std::pair<int, std::vector<std::string>>& row,
                        const std::string& column) const {
    const auto it = std::find(header.begin(), header.end(), column);
    if (it == header.end()) throw InvalidArgument("no column '" + column + "'", file);
    const size_t i = static_cast<size_t>(it - header.begin());
    if (i >= row.second.size())
      throw InvalidArgument("a row has too few columns", file + ":" + std::to_string(row.first));
    return row.second[i];
  }
  double number(const std::pair<int, std::vector<std::string>>& row,
                const std::string& column) const {
    const std::string& text = at(row, column);
    char* end = nullptr;
    const double v = std::strtod(text.c_str(), &end);
    if (text.empty() || *end != '\0')
      throw InvalidArgument("column " + column + " is not a number: '" + text + "'",
                            file + ":" + std::to_string(row.first));
    return v;
  }
};

CsvTable read_csv(const std::string& path) {
  std::ifstream in(path);
  if (!in) throw InvalidArgument("cannot read '" + path + "'", "manifest");
  CsvTable t;
  t.file = path;
  std::string line;
  int n = 0;
  while (std::getline(in, line)) {
    ++n;
    if (line.empty()) continue;
    if (t.header.empty())
      t.header = csv_fields(line);
    else
      t.rows.push_back({n, csv_fields(line)});
  }
  return t;
}

bool starts_with(const std::string& s, const std::string& prefix) {
  return s.compare(0, prefix.size(), prefix) == 0;
}

// "132K" → 131072: the power of two nearest (in ratio) to 132e3 (see the manifest).
double size_from_label(const std::string& label, const std::string& where) {
  if (label.size() < 2) throw InvalidArgument("size label '" + label + "'", where);
  const char unit = label.back();
  const double scale = unit == 'K' ? 1e3 : unit == 'M' ? 1e6 : unit == 'G' ? 1e9 : 0;
  char* end = nullptr;
  const std::string digits = label.substr(0, label.size() - 1);
  const double v = std::strtod(digits.c_str(), &end);
  if (scale == 0 || *end != '\0' || !(v > 0))
    throw InvalidArgument("size label '" + label + "' is not a number with K, M or G", where);
  return std::exp2(std::round(std::log2(v * scale)));
}

// One group of `gpus` on the cluster's nodes (`nodes` hosts; by default as few as hold them).
GroupGeometry group_of(const ClusterSpec& cluster, int gpus, int nodes, const std::string& file) {
  evaluation::NcclTestsRun run;
  run.file = file;
  run.gpus = gpus;
  run.nodes = nodes;
  return evaluation::run_geometry(cluster, run);
}

}  // namespace

std::vector<ValidationPoint> validation_points(const std::string& manifest_path,
                                               const std::string& published_dir,
                                               const std::string& clusters_dir) {
  const YAML::Node manifest = load_manifest(manifest_path);
  Clusters clusters(clusters_dir);
  std::vector<ValidationPoint> points;
  for (const YAML::Node& entry : manifest["nccl_tests"]) {
    const std::string file = field(entry, "file", manifest_path);
    const ClusterSpec& cluster = clusters.get(field(entry, "cluster", manifest_path));
    const evaluation::NcclTestsRun run =
        evaluation::read_nccl_tests_file(published_dir + "/" + file);
    const int nodes = entry["nodes"] ? entry["nodes"].as<int>() : run.nodes;
    const GroupGeometry group = group_of(cluster, run.gpus, nodes, file);
    for (const evaluation::NcclTestsRow& row : run.rows) {
      // nccl-tests prints size 0 where the size is under one element per rank: nothing moved.
      if (row.bytes == 0) continue;
      ValidationPoint p;
      p.source = file;
      p.config = group_text(run.collective, group);
      p.size_bytes = static_cast<double>(row.bytes);
      p.regime = collective_regime(group, p.size_bytes);
      p.role = field(entry, "role", manifest_path);
      p.published_s = row.time_s;
      predict_collective(p, cluster, run.collective, group, optional_field(entry, "algorithm"));
      points.push_back(p);
    }
  }
  if (manifest["collective_summary"]) {
    const CsvTable csv = read_csv(published_dir + "/collective_summary.csv");
    for (const YAML::Node& entry : manifest["collective_summary"]) {
      const std::string prefix = field(entry, "ids", manifest_path);
      const ClusterSpec& cluster = clusters.get(field(entry, "cluster", manifest_path));
      const bool from_label = entry["size_from_label"] && entry["size_from_label"].as<bool>();
      for (const auto& row : csv.rows) {
        const std::string id = csv.at(row, "id");
        if (!starts_with(id, prefix)) continue;
        const std::string where = csv.file + ":" + std::to_string(row.first);
        const auto op = bandwidth_collective(csv.at(row, "collective"));
        if (!op)
          throw InvalidArgument("unknown collective '" + csv.at(row, "collective") + "'", where);
        const double gpus_value = csv.number(row, "gpus");
        if (!(gpus_value >= 1 && gpus_value <= 1 << 20))
          throw InvalidArgument("gpus is not a GPU count", where);
        const int gpus = static_cast<int>(gpus_value);
        const GroupGeometry group =
            group_of(cluster, gpus, static_cast<int>(csv.number(row, "nodes")), where);
        ValidationPoint p;
        p.source = id;
        p.config = group_text(*op, group);
        p.size_bytes = csv.at(row, "size_bytes").empty()
                           ? (from_label ? size_from_label(csv.at(row, "size_label"), where) : 0)
                           : csv.number(row, "size_bytes");
        if (p.size_bytes <= 0) throw InvalidArgument("no exact size for " + id, where);
        p.regime = collective_regime(group, p.size_bytes);
        p.role = field(entry, "role", manifest_path);
        // busbw = size × factor / time (core/bus_bandwidth.hpp), so time = size × factor / busbw.
        const double busbw = csv.number(row, "busbw_gb_per_s") * 1e9;
        if (!(busbw > 0)) throw InvalidArgument("busbw is not positive", where);
        p.published_s = p.size_bytes * bus_bandwidth_factor(*op, gpus) / busbw;
        predict_collective(p, cluster, *op, group, optional_field(entry, "algorithm"));
        points.push_back(p);
      }
    }
  }
  if (manifest["gemm"]) {
    const CsvTable csv = read_csv(published_dir + "/gemm.csv");
    for (const YAML::Node& entry : manifest["gemm"]) {
      const std::string prefix = field(entry, "ids", manifest_path);
      const ClusterSpec& cluster = clusters.get(field(entry, "cluster", manifest_path));
      const DType dtype = parse_dtype(field(entry, "dtype", manifest_path), manifest_path);
      for (const auto& row : csv.rows) {
        const std::string id = csv.at(row, "id");
        if (!starts_with(id, prefix)) continue;
        MatmulWork work;
        work.m = static_cast<int64_t>(csv.number(row, "m"));
        work.n = static_cast<int64_t>(csv.number(row, "n"));
        work.k = static_cast<int64_t>(csv.number(row, "k"));
        work.dtype = dtype;
        const double flops = 2.0 * work.m * work.n * work.k;
        ValidationPoint p;
        p.source = id;
        p.config = to_string(dtype) + " " + std::to_string(work.m) + "x" + std::to_string(work.n) +
                   "x" + std::to_string(work.k);
        p.size_bytes = 0;
        p.regime = field(entry, "regime", manifest_path);
        p.role = field(entry, "role", manifest_path);
        p.published_s = csv.at(row, "seconds").empty() ? flops / (csv.number(row, "tflops") * 1e12)
                                                       : csv.number(row, "seconds");
        p.predicted_s = roofline::matmul_duration_s(cluster.gpu, work);
        p.note = "roofline";
        points.push_back(p);
      }
    }
  }
  if (manifest["hbm"]) {
    const CsvTable csv = read_csv(published_dir + "/hbm.csv");
    for (const YAML::Node& entry : manifest["hbm"]) {
      const std::string prefix = field(entry, "ids", manifest_path);
      const ClusterSpec& cluster = clusters.get(field(entry, "cluster", manifest_path));
      for (const auto& row : csv.rows) {
        const std::string id = csv.at(row, "id");
        if (!starts_with(id, prefix)) continue;
        ValidationPoint p;
        p.source = id;
        p.config = "HBM bandwidth";
        p.regime = field(entry, "regime", manifest_path);
        p.role = field(entry, "role", manifest_path);
        // Times of one byte: the error is that of any copy's time.
        p.published_s = 1 / (csv.number(row, "bandwidth_gb_per_s") * 1e9);
        p.predicted_s = 1 / roofline::hbm_bandwidth_bytes_per_s(cluster.gpu);
        p.note = "cluster HBM bandwidth";
        points.push_back(p);
      }
    }
  }
  return points;
}

std::string calibrated_clusters(const std::string& manifest_path) {
  const YAML::Node manifest = load_manifest(manifest_path);
  std::string out;
  for (const auto& kv : manifest["calibration"]) out += kv.first.as<std::string>() + "\n";
  return out;
}

std::string calibration_arguments(const std::string& manifest_path,
                                  const std::string& published_dir, const std::string& cluster) {
  const YAML::Node manifest = load_manifest(manifest_path);
  const YAML::Node entry = manifest["calibration"][cluster];
  if (!entry)
    throw InvalidArgument("the calibration: section names no '" + cluster + "'", manifest_path);
  std::string out;
  for (const YAML::Node& f : entry["nccl_tests"])
    out += "--nccl-tests\n" + published_dir + "/" + f.as<std::string>() + "\n";
  for (const YAML::Node& f : entry["nvls"])
    out += "--nvls\n" + published_dir + "/" + f.as<std::string>() + "\n";
  return out;
}

std::string gemm_fit_csv(const std::string& manifest_path, const std::string& published_dir,
                         const std::string& cluster) {
  const YAML::Node manifest = load_manifest(manifest_path);
  std::string out = "id,m,n,k,dtype,tflops,seconds\n";
  if (!manifest["gemm"]) return out;
  const CsvTable csv = read_csv(published_dir + "/gemm.csv");
  for (const YAML::Node& entry : manifest["gemm"]) {
    if (field(entry, "role", manifest_path) != "fit" ||
        field(entry, "cluster", manifest_path) != cluster)
      continue;
    const std::string prefix = field(entry, "ids", manifest_path);
    const std::string dtype = field(entry, "dtype", manifest_path);
    for (const auto& row : csv.rows) {
      const std::string id = csv.at(row, "id");
      if (!starts_with(id, prefix)) continue;
      out += id + "," + csv.at(row, "m") + "," + csv.at(row, "n") + "," + csv.at(row, "k") + "," +
             dtype + "," + csv.at(row, "tflops") + "," + csv.at(row, "seconds") + "\n";
    }
  }
  return out;
}

std::vector<RegimeSummary> summarise(const std::vector<ValidationPoint>& points) {
  std::vector<RegimeSummary> out;
  std::map<std::pair<std::string, std::string>, std::vector<double>> errors;
  for (const ValidationPoint& p : points) {
    const auto key = std::make_pair(p.regime, p.role);
    auto it = std::find_if(out.begin(), out.end(), [&](const RegimeSummary& s) {
      return s.regime == p.regime && s.role == p.role;
    });
    if (it == out.end()) it = out.insert(out.end(), {p.regime, p.role});
    if (p.predicted_s > 0)
      errors[key].push_back(std::abs(p.error()));
    else
      ++it->unpredicted;
  }
  // The fit's figures first, then what was held out.
  std::stable_sort(out.begin(), out.end(), [](const RegimeSummary& a, const RegimeSummary& b) {
    return (a.role == "fit") > (b.role == "fit");
  });
  for (RegimeSummary& s : out) {
    std::vector<double> e = errors[{s.regime, s.role}];
    s.count = static_cast<int>(e.size());
    if (e.empty()) continue;
    std::sort(e.begin(), e.end());
    const size_t n = e.size();
    s.median_abs_error = n % 2 ? e[n / 2] : (e[n / 2 - 1] + e[n / 2]) / 2;
    s.max_abs_error = e.back();
  }
  return out;
}

std::string validation_report(const std::vector<ValidationPoint>& points) {
  std::ostringstream out;
  char line[512];
  std::snprintf(line, sizeof line, "%-44s %-30s %12s %12s %12s %8s  %s\n", "source", "config",
                "size (B)", "published", "predicted", "error", "how");
  out << line;
  for (const ValidationPoint& p : points) {
    char size[32] = "-", predicted[32] = "-", error[32] = "-";
    if (p.size_bytes > 0) std::snprintf(size, sizeof size, "%.0f", p.size_bytes);
    if (p.predicted_s > 0) {
      std::snprintf(predicted, sizeof predicted, "%.4g s", p.predicted_s);
      std::snprintf(error, sizeof error, "%+.1f%%", 100 * p.error());
    }
    char published[32];
    std::snprintf(published, sizeof published, "%.4g s", p.published_s);
    std::snprintf(line, sizeof line, "%-44s %-30s %12s %12s %12s %8s  %s\n", p.source.c_str(),
                  p.config.c_str(), size, published, predicted, error, p.note.c_str());
    out << line;
  }
  out << "\nsummary (|error| = |predicted / published - 1|):\n";
  std::snprintf(line, sizeof line, "%-30s %-9s %6s %12s %10s %12s\n", "regime", "role", "count",
                "median |err|", "max |err|", "unpredicted");
  out << line;
  for (const RegimeSummary& s : summarise(points)) {
    char median[32] = "-", most[32] = "-";  // nothing predicted: no error to show
    if (s.count > 0) {
      std::snprintf(median, sizeof median, "%.1f%%", 100 * s.median_abs_error);
      std::snprintf(most, sizeof most, "%.1f%%", 100 * s.max_abs_error);
    }
    std::snprintf(line, sizeof line, "%-30s %-9s %6d %12s %10s %12d\n", s.regime.c_str(),
                  s.role.c_str(), s.count, median, most, s.unpredicted);
    out << line;
  }
  // Every point of a role at once: the goal is on the held-out ones.
  std::vector<ValidationPoint> all = points;
  for (ValidationPoint& p : all) p.regime = "all regimes";
  out << "\n";
  for (const RegimeSummary& s : summarise(all)) {
    if (s.count == 0) continue;
    std::snprintf(line, sizeof line, "%-30s %-9s %6d %11.1f%% %9.1f%% %12d\n", s.regime.c_str(),
                  s.role.c_str(), s.count, 100 * s.median_abs_error, 100 * s.max_abs_error,
                  s.unpredicted);
    out << line;
  }
  return out.str();
}

}  // namespace symmesh::validation
