#include "scenario/cluster_reader.hpp"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <filesystem>
#include <map>
#include <vector>

#include "core/errors.hpp"
#include "core/input_file.hpp"
#include "scenario/scenario_loader.hpp"

namespace symmesh::scenario {
namespace {

namespace fs = std::filesystem;

const std::vector<std::string> kClusterKeys{"name", "base",       "nodes",      "gpus_per_node",
                                            "gpu",  "intra_node", "inter_node", "collectives"};
const std::vector<std::string> kCollectiveScopes{"intra_node", "inter_node"};
const std::vector<std::string> kVariantKeys{"algorithm", "protocol", "base_latency", "step_latency",
                                            "bus_bandwidth"};
const std::vector<std::string> kAlgorithms{"ring", "tree", "nvls", "pairwise", "direct"};
const std::vector<std::string> kProtocols{"LL", "LL128", "Simple"};
const std::vector<std::string> kGpuKeys{"name",     "peak",           "memory", "gemm_efficiency",
                                        "sm_count", "launch_overhead"};
const std::vector<std::string> kMemoryKeys{"capacity", "bandwidth", "sustained_bandwidth"};
const std::vector<std::string> kIntraKeys{"kind", "bandwidth", "latency"};
const std::vector<std::string> kInterKeys{"kind",          "nics_per_node", "bandwidth",
                                          "latency",       "spine_latency", "oversubscription",
                                          "nodes_per_leaf"};
const std::vector<std::string> kIntraKinds{"nvswitch", "nvlink", "pcie"};
const std::vector<std::string> kInterKinds{"rail", "fat-tree"};

// Fields that a complete cluster names, base files included.
const std::vector<std::string> kRequired{"nodes",
                                         "gpus_per_node",
                                         "gpu.peak",
                                         "gpu.memory.capacity",
                                         "gpu.memory.bandwidth",
                                         "intra_node.kind",
                                         "intra_node.bandwidth",
                                         "intra_node.latency"};
const std::vector<std::string> kRequiredMultiNode{"inter_node.kind", "inter_node.nics_per_node",
                                                  "inter_node.bandwidth", "inter_node.latency"};

std::string stem_of(const std::string& path) {
  return fs::path(path).stem().string();
}

// A plain number such as 2 or 1.5 (a ratio: no unit).
double as_ratio(const Value& value) {
  const std::string text = value.as_string();
  double ratio = 0;
  const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), ratio);
  if (ec != std::errc() || end != text.data() + text.size() || !std::isfinite(ratio))
    value.fail(value.label() + ": expected a plain number such as 2 (downlink:uplink 2:1), got '" +
               text + "'");
  return ratio;
}

std::string one_of(const Value& value, const std::vector<std::string>& allowed) {
  const std::string text = value.as_string();
  if (std::find(allowed.begin(), allowed.end(), text) == allowed.end())
    value.fail("unknown " + value.path() + " '" + text + "'" + suggestion(text, allowed));
  return text;
}

// A fraction of a peak: a plain decimal in (0, 1] ("0.8"), naming the field when not.
double efficiency_of(const Value& value) {
  const std::string text = value.is_scalar() ? value.as_string() : "";
  double v = 0;
  const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), v);
  if (text.empty() || ec != std::errc() || end != text.data() + text.size() || !(v > 0 && v <= 1))
    value.fail(value.label() + ": expected a fraction of the peak in (0, 1], e.g. 0.8, got " +
               value.describe());
  return v;
}

// Applies cluster maps in order (base first, then the overrides that name it) and
// remembers where each field was last written, for messages about its value.
class ClusterBuilder {
 public:
  // Applies the file `reference` names; returns its root for messages about it.
  Value apply_file(const Value& reference, std::vector<std::string>& chain) {
    const std::string file = resolve_reference(reference);
    std::error_code ec;
    const std::string canonical = fs::weakly_canonical(file, ec).string();
    for (size_t i = 0; i < chain.size(); ++i) {
      if (chain[i] != canonical) continue;
      std::string cycle;
      for (size_t j = i; j < chain.size(); ++j) cycle.append(chain[j]).append(" -> ");
      reference.fail("cyclic cluster reference: " + cycle + canonical);
    }
    return apply_root(file, canonical, chain);
  }

  Value apply_root(const std::string& file, const std::string& canonical,
                   std::vector<std::string>& chain) {
    const Value root = file_root(file);
    spec_.source_files.push_back(file);
    chain.push_back(canonical);
    apply_map(root, /*is_file=*/true, chain);
    chain.pop_back();
    return root;
  }

  void apply_map(const Value& cluster, bool is_file, std::vector<std::string>& chain) {
    const MapReader map(cluster, kClusterKeys);
    if (auto base = map.get("base")) apply_file(*base, chain);
    if (auto v = map.get("name"))
      spec_.name = v->as_string();
    else if (is_file)
      spec_.name = stem_of(cluster.file());
    if (auto v = map.get("nodes")) spec_.nodes = record("nodes", *v).as_int(1);
    if (auto v = map.get("gpus_per_node"))
      spec_.gpus_per_node = record("gpus_per_node", *v).as_int(1);
    if (auto v = map.get("gpu")) apply_gpu(*v);
    if (auto v = map.get("intra_node")) apply_intra(*v);
    if (auto v = map.get("inter_node")) apply_inter(*v);
    if (auto v = map.get("collectives")) apply_collectives(*v);
  }

  ClusterSpec finish(const Value& top) const {
    std::vector<std::string> required = kRequired;
    if (spec_.nodes > 1)
      required.insert(required.end(), kRequiredMultiNode.begin(), kRequiredMultiNode.end());
    for (const std::string& field : required)
      if (!written_at_.count(field)) top.fail(missing_message(field));
    ClusterSpec spec = spec_;
    if (spec.name.empty()) spec.name = "inline";
    if (spec.gpu.name.empty()) spec.gpu.name = "gpu";
    try {
      spec.validate();
    } catch (const InvalidArgument& e) {
      // where() is "cluster.intra_node.bandwidth": point at the figure that was written.
      std::string field = e.where();
      if (field.rfind("cluster.", 0) == 0) field = field.substr(8);
      auto it = written_at_.find(field);
      const SourceLocation where = it != written_at_.end() ? it->second : top.location();
      throw InvalidArgument(e.where() + ": " + e.message(), where.to_string());
    }
    return spec;
  }

 private:
  // The outermost part of `field` that is missing: "missing key 'inter_node' in cluster"
  // when nothing of inter_node was given, else "missing key 'latency' in cluster.inter_node".
  std::string missing_message(const std::string& field) const {
    std::string in = "cluster";
    size_t start = 0;
    for (;;) {
      const size_t dot = field.find('.', start);
      const std::string prefix = field.substr(0, dot);
      const bool any = std::any_of(written_at_.begin(), written_at_.end(), [&](const auto& w) {
        return w.first == prefix || w.first.rfind(prefix + ".", 0) == 0;
      });
      if (!any || dot == std::string::npos) {
        std::string why;
        if (field.rfind("inter_node", 0) == 0)
          why = " (needed with " + std::to_string(spec_.nodes) + " nodes)";
        return "missing key '" + field.substr(start, dot == std::string::npos ? dot : dot - start) +
               "' in " + in + why;
      }
      in = "cluster." + prefix;
      start = dot + 1;
    }
  }

  // A file named as a cluster (or a base:) that is not one — a text, a list, a map of
  // none of the cluster keys (a password file, a config of something else) — is refused
  // naming the file and position only: its content is not echoed into the message.
  static Value file_root(const std::string& file) {
    const Value root = read_yaml_file(file);
    if (root.node().IsNull())
      root.fail("empty cluster file; expected a map with nodes, gpus_per_node, gpu, …");
    const std::string expected = "is not a cluster description: expected a YAML map of " +
                                 listed(kClusterKeys);
    if (!root.is_map())
      root.fail("'" + file + "' " + expected + ", got " +
                (root.is_list() ? "a list" : "a text that is no map"));
    bool any_cluster_key = false;
    for (const auto& entry : root.node())
      any_cluster_key |= entry.first.IsScalar() &&
                         std::find(kClusterKeys.begin(), kClusterKeys.end(),
                                   entry.first.Scalar()) != kClusterKeys.end();
    if (!any_cluster_key) root.fail("'" + file + "' " + expected + ", and none of its keys is one");
    return root.with_path("cluster");
  }

  static std::string listed(const std::vector<std::string>& words) {
    std::string out;
    for (const auto& w : words) out.append(out.empty() ? "" : ", ").append(w);
    return out;
  }

  const Value& record(const std::string& field, const Value& value) {
    written_at_[field] = value.location();
    return value;
  }

  void apply_gpu(const Value& value) {
    const MapReader gpu(value, kGpuKeys);
    if (auto v = gpu.get("name")) spec_.gpu.name = v->as_string();
    if (auto v = gpu.get("peak")) {
      const MapReader peak(*v, kPeakKeys);
      for (const std::string& key : kPeakKeys)
        if (auto rate = peak.get(key))
          spec_.gpu.peak_flops_per_s[key] =
              record("gpu.peak", *rate).as_quantity(QuantityKind::compute);
      if (!written_at_.count("gpu.peak")) record("gpu.peak", *v);
    }
    if (auto v = gpu.get("memory")) {
      const MapReader memory(*v, kMemoryKeys);
      if (auto c = memory.get("capacity"))
        spec_.gpu.memory_capacity_bytes =
            static_cast<double>(record("gpu.memory.capacity", *c).as_size_bytes());
      if (auto b = memory.get("bandwidth")) {
        spec_.gpu.memory_bandwidth_bytes_per_s =
            record("gpu.memory.bandwidth", *b).as_quantity(QuantityKind::bandwidth);
        // A sustained figure belongs to the memory it was measured on: a file that gives a
        // new datasheet bandwidth (an H200 on top of an H100) without its own sustained one
        // does not inherit the base's.
        spec_.gpu.memory_sustained_bandwidth_bytes_per_s = 0;
        written_at_.erase("gpu.memory.sustained_bandwidth");
      }
      if (auto b = memory.get("sustained_bandwidth"))
        spec_.gpu.memory_sustained_bandwidth_bytes_per_s =
            record("gpu.memory.sustained_bandwidth", *b).as_quantity(QuantityKind::bandwidth);
    }
    if (auto v = gpu.get("gemm_efficiency")) {
      const MapReader efficiency(*v, kPeakKeys);
      for (const std::string& key : kPeakKeys)
        if (auto e = efficiency.get(key))
          spec_.gpu.gemm_efficiency[key] = efficiency_of(record("gpu.gemm_efficiency." + key, *e));
    }
    if (auto v = gpu.get("sm_count")) spec_.gpu.sm_count = record("gpu.sm_count", *v).as_int(1);
    if (auto v = gpu.get("launch_overhead"))
      spec_.gpu.launch_overhead_s =
          record("gpu.launch_overhead", *v).as_quantity(QuantityKind::time);
  }

  void apply_intra(const Value& value) {
    const MapReader intra(value, kIntraKeys);
    if (auto v = intra.get("kind"))
      spec_.intra_node.kind = one_of(record("intra_node.kind", *v), kIntraKinds);
    if (auto v = intra.get("bandwidth"))
      spec_.intra_node.bandwidth_bytes_per_s =
          record("intra_node.bandwidth", *v).as_quantity(QuantityKind::bandwidth);
    if (auto v = intra.get("latency"))
      spec_.intra_node.latency_s = record("intra_node.latency", *v).as_quantity(QuantityKind::time);
  }

  void apply_inter(const Value& value) {
    const MapReader inter(value, kInterKeys);
    if (auto v = inter.get("kind"))
      spec_.inter_node.kind = one_of(record("inter_node.kind", *v), kInterKinds);
    if (auto v = inter.get("nics_per_node"))
      spec_.inter_node.nics_per_node = record("inter_node.nics_per_node", *v).as_int(1);
    if (auto v = inter.get("bandwidth"))
      spec_.inter_node.bandwidth_bytes_per_s =
          record("inter_node.bandwidth", *v).as_quantity(QuantityKind::bandwidth);
    if (auto v = inter.get("latency"))
      spec_.inter_node.latency_s = record("inter_node.latency", *v).as_quantity(QuantityKind::time);
    if (auto v = inter.get("spine_latency"))
      spec_.inter_node.spine_latency_s =
          record("inter_node.spine_latency", *v).as_quantity(QuantityKind::time);
    if (auto v = inter.get("oversubscription"))
      spec_.inter_node.oversubscription = as_ratio(record("inter_node.oversubscription", *v));
    if (auto v = inter.get("nodes_per_leaf"))
      spec_.inter_node.nodes_per_leaf = record("inter_node.nodes_per_leaf", *v).as_int(1);
  }

  // collectives: {intra_node: {all_reduce: [variant, …], …}, inter_node: {…}}. A list
  // given replaces the base file's list for that scope and collective.
  void apply_collectives(const Value& value) {
    const MapReader scopes(value, kCollectiveScopes);
    for (const std::string& scope_name : kCollectiveScopes) {
      const auto scope_value = scopes.get(scope_name);
      if (!scope_value) continue;
      CollectiveScopeTuning& scope =
          scope_name == "intra_node" ? spec_.collectives.intra_node : spec_.collectives.inter_node;
      std::vector<std::string> names;
      for (int i = 0; i < kBandwidthCollectiveCount; ++i)
        names.push_back(to_string(static_cast<BandwidthCollective>(i)));
      const MapReader ops(*scope_value, names);
      for (int i = 0; i < kBandwidthCollectiveCount; ++i) {
        const auto op = static_cast<BandwidthCollective>(i);
        const auto list = ops.get(names[i]);
        if (!list) continue;
        if (!list->is_list())
          list->fail(list->label() +
                     ": expected a list of {algorithm, protocol, base_latency, "
                     "step_latency, bus_bandwidth}, got " +
                     list->describe());
        std::vector<CollectiveVariant>& variants = scope.of(op);
        variants.clear();
        const std::string field = "collectives." + scope_name + "." + names[i];
        int index = 0;
        for (const Value& item : list->items()) {
          const std::string at = field + "[" + std::to_string(index++) + "]";
          record(at, item);
          const MapReader v(item, kVariantKeys);
          CollectiveVariant variant;
          parse_library_algorithm(
              one_of(record(at + ".algorithm", v.require("algorithm")), kAlgorithms),
              variant.algorithm);
          if (auto p = v.get("protocol"))
            variant.protocol = one_of(record(at + ".protocol", *p), kProtocols);
          variant.base_latency_s = record(at + ".base_latency", v.require("base_latency"))
                                       .as_quantity(QuantityKind::time);
          if (auto l = v.get("step_latency"))
            variant.step_latency_s =
                record(at + ".step_latency", *l).as_quantity(QuantityKind::time);
          variant.bus_bandwidth_bytes_per_s =
              record(at + ".bus_bandwidth", v.require("bus_bandwidth"))
                  .as_quantity(QuantityKind::bandwidth);
          variants.push_back(std::move(variant));
        }
      }
    }
  }

  ClusterSpec spec_;
  std::map<std::string, SourceLocation> written_at_;
};

std::vector<std::string> shipped_names(const ReferenceKind& kind, bool with_folder) {
  std::vector<std::string> names;
  std::error_code ec;
  for (const auto& entry :
       fs::directory_iterator(fs::path(shipped_scenarios_dir()) / kind.folder, ec))
    if (entry.path().extension() == kind.extension)
      names.push_back((with_folder ? kind.folder + "/" : "") + entry.path().filename().string());
  std::sort(names.begin(), names.end());
  return names;
}

}  // namespace

const ReferenceKind kClusterFiles{"cluster file", "clusters", ".yaml"};
const ReferenceKind kModelConfigs{"Hugging Face config", "models", ".json"};

const std::vector<std::string> kPeakKeys{"bf16", "fp16", "fp32", "fp64", "fp8", "int8"};

std::string resolve_reference(const Value& reference, const ReferenceKind& kind) {
  const std::string text = reference.as_string();
  if (text.empty()) reference.fail(reference.label() + ": expected a path to a " + kind.noun);
  const fs::path ref(text);
  std::vector<fs::path> candidates;
  if (ref.is_absolute()) {
    candidates.push_back(ref);
  } else {
    candidates.push_back(fs::path(reference.file()).parent_path() / ref);
    candidates.push_back(fs::path(shipped_scenarios_dir()) / ref);
    candidates.push_back(fs::path(shipped_scenarios_dir()) / kind.folder / ref);
  }
  std::string looked;
  for (const fs::path& candidate : candidates) {
    std::error_code ec;
    if (fs::is_regular_file(candidate, ec)) {
      const std::string path = candidate.lexically_normal().string();
      if (const std::string fault = input_size_fault(path); !fault.empty())
        reference.fail(kind.noun + " " + fault);
      return path;
    }
    // There but not a file it can read (a FIFO, a device, a link loop): that, not "not
    // found". A folder is passed over (a shipped name may sit beside a folder of it).
    const std::string fault = input_file_fault(candidate.lexically_normal().string());
    if (!fault.empty() && !fs::is_directory(candidate, ec))
      reference.fail(kind.noun + " " + fault);
    if (!looked.empty()) looked.append(", ");
    looked.append(candidate.lexically_normal().string());
    if (fs::is_directory(candidate, ec)) looked.append(" (a folder)");
  }
  std::string message = kind.noun + " '" + text + "' not found (looked in " + looked + ")";
  const std::string best = closest(text, shipped_names(kind, text.find('/') != std::string::npos));
  if (!best.empty()) message += " \u2014 did you mean '" + best + "'?";
  reference.fail(message);
}

std::string resolve_reference(const Value& reference) {
  return resolve_reference(reference, kClusterFiles);
}

ClusterSpec read_cluster(const Value& value) {
  ClusterBuilder builder;
  std::vector<std::string> chain;
  if (value.is_scalar()) {
    // Missing keys are reported at the cluster file they are missing from.
    const Value root = builder.apply_file(value, chain);
    return builder.finish(root);
  }
  if (!value.is_map())
    value.fail(value.label() +
               ": expected a map or a path to a cluster file, e.g. clusters/dgx-h100.yaml, got " +
               value.describe());
  builder.apply_map(value, /*is_file=*/false, chain);
  return builder.finish(value);
}

ClusterSpec read_cluster_file(const std::string& path) {
  ClusterBuilder builder;
  std::vector<std::string> chain;
  std::error_code ec;
  const Value root = builder.apply_root(path, fs::weakly_canonical(path, ec).string(), chain);
  return builder.finish(root);
}

}  // namespace symmesh::scenario
