// The top level of a scenario file: version, name, cluster, mesh, dtype, cost model,
// tensors and training (version 2), workload, sweep and objective
// (docs/scenario-format.md).
#include "scenario/scenario_loader.hpp"

#include <algorithm>
#include <charconv>
#include <filesystem>
#include <limits>

#include "core/device_mesh.hpp"
#include "core/errors.hpp"
#include "core/roofline.hpp"
#include "scenario/cluster_reader.hpp"
#include "scenario/model_expansion.hpp"
#include "scenario/model_reader.hpp"
#include "scenario/workload_reader.hpp"
#include "scenario/yaml_reader.hpp"

namespace symmesh {
namespace {

using scenario::MapReader;
using scenario::Value;

const std::vector<std::string> kScenarioKeys{
    "version", "name",    "cluster",  "mesh",     "dtype", "cost_model", "placement_search",
    "model",   "tensors", "training", "workload", "sweep", "objective"};
const std::vector<std::string> kPlacementSearches{"full-expansion", "priority-queue"};
const std::vector<std::string> kOptimizers{"adam", "sgd"};
const std::vector<std::string> kTrainingKeys{"backward", "optimizer", "zero", "micro_batches",
                                             "virtual_stages"};
const std::vector<std::string> kCostModels{"dtensor", "analytic", "simulated"};

std::string shape_text(const std::vector<int>& shape) {
  std::string out;
  for (int d : shape) out.append(out.empty() ? "" : "x").append(std::to_string(d));
  return out;
}

// The rank count of a mesh shape (dims >= 1), or -1 when it overflows 64 bits.
int64_t product(const std::vector<int>& shape) {
  int64_t n = 1;
  for (int d : shape) {
    if (n > std::numeric_limits<int64_t>::max() / d) return -1;
    n *= d;
  }
  return n;
}

std::string ranks_text(int64_t ranks) {
  return ranks < 0 ? std::string("more than 2^63") : std::to_string(ranks);
}

bool is_integer(const std::string& text) {
  int value = 0;
  auto [ptr, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
  return ec == std::errc() && ptr == text.data() + text.size();
}

void read_mesh(const Value& value, const ClusterSpec& cluster, Scenario& out) {
  std::optional<Value> shape_value;
  if (value.is_list()) {
    shape_value = value;
  } else {
    if (!value.is_map())
      value.fail(
          "mesh: expected a list of dim sizes ([2, 4]) or a map ({shape: [2, 4], "
          "names: [dp, tp]}), got " +
          value.describe());
    const MapReader mesh(value, {"shape", "names"});
    shape_value = mesh.require("shape");
    out.mesh_shape = shape_value->as_int_list(-1, 1, "[4, 8]");
    if (auto names = mesh.get("names")) {
      const auto items = names->items();
      if (items.size() != out.mesh_shape.size())
        names->fail(names->path() + ": " + std::to_string(items.size()) + " names for the " +
                    std::to_string(out.mesh_shape.size()) + "-D mesh " +
                    shape_text(out.mesh_shape) + "; give one per mesh dim, e.g. [dp, tp]");
      for (const Value& item : items) {
        const std::string name = item.as_string();
        if (name.empty() || is_integer(name))
          item.fail(item.path() + ": a mesh dim name must be a word such as 'tp', got '" + name +
                    "'");
        if (std::find(out.mesh_names.begin(), out.mesh_names.end(), name) != out.mesh_names.end())
          item.fail(item.path() + ": duplicate mesh dim name '" + name + "'");
        out.mesh_names.push_back(name);
      }
    }
  }
  if (out.mesh_shape.empty()) out.mesh_shape = shape_value->as_int_list(-1, 1, "[4, 8]");
  if (product(out.mesh_shape) != cluster.num_gpus())
    shape_value->fail("mesh " + shape_text(out.mesh_shape) + " has " +
                      ranks_text(product(out.mesh_shape)) + " ranks but the cluster has " +
                      std::to_string(cluster.num_gpus()) + " GPUs (" +
                      std::to_string(cluster.nodes) + " node" + (cluster.nodes == 1 ? "" : "s") +
                      " x " + std::to_string(cluster.gpus_per_node) + ")");
}

// Version 2: a mesh dim named pp holds pipeline stages (core/scenario.hpp, kPipelineDim):
// it comes first, as Megatron-LM orders ranks (each stage a contiguous block), and some
// other dim holds each stage's ranks.
void check_pipeline_dim(const Value& mesh, const Scenario& s) {
  const auto at = std::find(s.mesh_names.begin(), s.mesh_names.end(), kPipelineDim);
  if (at == s.mesh_names.end()) return;
  const Value names = MapReader(mesh, {"shape", "names"}).require("names");
  const Value item = names.items().at(static_cast<size_t>(at - s.mesh_names.begin()));
  if (at != s.mesh_names.begin())
    item.fail(item.path() +
              ": mesh dim 'pp' holds pipeline stages and comes first (outermost): each "
              "stage's ranks are a contiguous block, as Megatron-LM orders them, e.g. "
              "{shape: [2, 4], names: [pp, tp]}");
  if (s.mesh_names.size() == 1)
    item.fail(item.path() +
              ": a pipeline needs a mesh dim beside pp for each stage's ranks, e.g. "
              "{shape: [2, 1], names: [pp, tp]}");
}

// A list of ints >= `min`, each once, at most kMaxSearchValues of them (a layouts search
// multiplies its lists: this bounds each factor).
constexpr int kMaxSearchValues = 64;
std::vector<int> distinct_int_list(const Value& list, const std::string& key, int min,
                                   const char* example) {
  const std::vector<int> values = list.as_int_list(-1, min, example);
  const auto items = list.items();
  if (values.size() > kMaxSearchValues)
    items[kMaxSearchValues].fail(key + ": at most " + std::to_string(kMaxSearchValues) +
                                 " values, got " + std::to_string(values.size()));
  for (size_t i = 0; i < values.size(); ++i)
    for (size_t j = 0; j < i; ++j)
      if (values[j] == values[i]) items[i].fail(key + ": " + std::to_string(values[i]) + " twice");
  return values;
}

SweepSpec read_sweep(const Value& value, const Scenario& s) {
  const MapReader sweep(value, {"nodes", "mesh", "layouts", "micro_batch", "zero"});
  SweepSpec spec;
  // micro_batch and zero: further dims of a model scenario's search, over each mesh.
  for (const char* key : {"micro_batch", "zero"}) {
    const auto list = sweep.get(key);
    if (!list) continue;
    if (!s.model)
      sweep.key(key)->fail(std::string("sweep.") + key +
                           " varies a model's training step: the scenario has no model: block");
    const bool zero = std::string(key) == "zero";
    // With layouts: the values its search tries.
    const std::vector<int> values = distinct_int_list(
        *list, std::string("sweep.") + key, zero ? 0 : 1, zero ? "[0, 1]" : "[1, 2, 4]");
    const auto items = list->items();
    for (size_t i = 0; i < values.size(); ++i)
      if (zero && values[i] > 3) items[i].fail("sweep.zero: a ZeRO stage is 0, 1, 2 or 3");
    if (zero)
      spec.zero_stages = values;
    else if (!s.model->global_batch)
      list->fail(
          "sweep.micro_batch needs model.global_batch: the step's sequences, which each "
          "micro-batch size splits into micro-batches");
    else
      spec.micro_batches.assign(values.begin(), values.end());
  }
  std::vector<Value> node_items;
  if (auto nodes = sweep.get("nodes")) {
    // Distinct and at most kMaxSearchValues: each count is a cluster validated here and a
    // set of points simulated later.
    spec.nodes = distinct_int_list(*nodes, "sweep.nodes", 1, "[1, 2, 4, 8]");
    node_items = nodes->items();
  } else {
    spec.nodes = {s.cluster.nodes};
    node_items.assign(1, value);
  }
  const int gpus = s.cluster.gpus_per_node;
  for (size_t i = 0; i < spec.nodes.size(); ++i) {
    const int n = spec.nodes[i];
    ClusterSpec resized = s.cluster;
    resized.nodes = n;
    try {
      resized.validate();
    } catch (const InvalidArgument& e) {
      // A one-node cluster file may leave the fabric between nodes out; say that, not
      // which of its fields is missing.
      if (s.cluster.nodes == 1 && n > 1 && e.where().starts_with("cluster.inter_node"))
        node_items[i].fail("the cluster has no inter_node fabric, which " + std::to_string(n) +
                           " nodes need (cluster.inter_node: kind, nics_per_node, bandwidth, "
                           "latency; " +
                           e.where() + ": " + e.message() + ")");
      node_items[i].fail("the cluster is invalid at " + std::to_string(n) + " nodes: " + e.where() +
                         ": " + e.message());
    }
  }
  const auto mesh = sweep.get("mesh");
  if (auto layouts = sweep.get("layouts")) {
    if (!s.model)
      sweep.key("layouts")->fail(
          "sweep.layouts searches a model's training layouts: the scenario has no model: block");
    if (mesh)
      sweep.key("mesh")->fail(
          "sweep.mesh and sweep.layouts: give one (layouts choose tp, pp and dp themselves)");
    if (!s.model->global_batch)
      layouts->fail("sweep.layouts needs model.global_batch: the sequences of one step");
    const MapReader options(*layouts, {"simulate", "tp", "pp", "virtual_stages"});
    spec.layouts = true;
    spec.layouts_where = sweep.key("layouts")->location();
    if (auto v = options.get("tp"))
      spec.layouts_tps = distinct_int_list(*v, "sweep.layouts.tp", 1, "[4, 8]");
    if (auto v = options.get("pp"))
      spec.layouts_pps = distinct_int_list(*v, "sweep.layouts.pp", 1, "[1, 4, 16]");
    if (auto v = options.get("virtual_stages"))
      spec.layouts_virtual_stages =
          distinct_int_list(*v, "sweep.layouts.virtual_stages", 1, "[1, 2, 5]");
    if (auto simulate = options.get("simulate")) {
      spec.layouts_simulate = simulate->as_int(0, "a count, e.g. 2");
      if (spec.layouts_simulate > 100)
        simulate->fail("sweep.layouts.simulate: at most 100 layouts per node count, got " +
                       std::to_string(spec.layouts_simulate));
    }
    return spec;
  }
  // Every point is simulated: their number (node counts × each count's shapes ×
  // micro-batch sizes × ZeRO stages) is bounded before any runs, at the sweep's key.
  const auto bound_points = [&](const std::vector<int64_t>& shapes_per_count) {
    int64_t points = 0;
    const int64_t per_shape = static_cast<int64_t>(std::max<size_t>(spec.micro_batches.size(), 1)) *
                              static_cast<int64_t>(std::max<size_t>(spec.zero_stages.size(), 1));
    for (int64_t shapes : shapes_per_count) points += shapes * per_shape;
    if (points <= kMaxSweepPoints) return;
    std::string factors = std::to_string(spec.nodes.size()) + " node counts × their mesh shapes";
    if (!spec.micro_batches.empty())
      factors += " × " + std::to_string(spec.micro_batches.size()) + " micro-batch sizes";
    if (!spec.zero_stages.empty())
      factors += " × " + std::to_string(spec.zero_stages.size()) + " ZeRO stages";
    (sweep.has("nodes") ? *sweep.key("nodes") : value)
        .fail("sweep: " + std::to_string(points) + " points (" + factors + "), more than the " +
              std::to_string(kMaxSweepPoints) +
              " a sweep simulates; list fewer node counts, shapes or values");
  };
  if (!mesh || (mesh->is_scalar() && mesh->as_string() == "auto")) {
    spec.mesh_auto = true;
    std::vector<int64_t> shapes;
    for (int n : spec.nodes)
      shapes.push_back(count_mesh_shapes(int64_t{n} * gpus, static_cast<int>(s.mesh_shape.size()),
                                         kMaxSweepPoints));
    bound_points(shapes);
    return spec;
  }
  spec.mesh_where = mesh->location();
  if (!mesh->is_list())
    mesh->fail("sweep.mesh: expected 'auto' or a list of mesh shapes, e.g. [[2, 8], [4, 4]], got " +
               mesh->describe());
  const int ndim = static_cast<int>(s.mesh_shape.size());
  // The scenario's own mesh as the example: "[4, 8]".
  std::string example("[");
  for (int d : s.mesh_shape)
    example.append(example.size() > 1 ? ", " : "").append(std::to_string(d));
  example.append("]");
  for (const Value& item : mesh->items()) {
    const std::vector<int> shape = item.as_int_list(ndim, 1, example);
    const int64_t ranks = product(shape);
    const bool fits = std::any_of(spec.nodes.begin(), spec.nodes.end(),
                                  [&](int n) { return ranks == int64_t{n} * gpus; });
    if (!fits) {
      std::string sizes;
      for (int n : spec.nodes)
        sizes.append(sizes.empty() ? "" : ", ").append(std::to_string(int64_t{n} * gpus));
      item.fail("sweep mesh " + shape_text(shape) + " has " + ranks_text(ranks) +
                " ranks, which matches no swept cluster (" + sizes + " GPUs at " +
                std::to_string(gpus) + " per node)");
    }
    if (std::find(spec.mesh_shapes.begin(), spec.mesh_shapes.end(), shape) !=
        spec.mesh_shapes.end())
      item.fail("sweep mesh " + shape_text(shape) + " twice");
    spec.mesh_shapes.push_back(shape);
  }
  std::vector<int64_t> shapes;
  for (int n : spec.nodes)
    shapes.push_back(std::count_if(
        spec.mesh_shapes.begin(), spec.mesh_shapes.end(),
        [&](const std::vector<int>& shape) { return product(shape) == int64_t{n} * gpus; }));
  bound_points(shapes);
  return spec;
}

ObjectiveSpec read_objective(const Value& value) {
  const MapReader objective(value, {"max_time"});
  ObjectiveSpec spec;
  const Value max_time = objective.require("max_time");
  spec.max_time_s = max_time.as_quantity(QuantityKind::time);
  if (!(*spec.max_time_s > 0)) max_time.fail("objective.max_time must be > 0");
  return spec;
}

TrainingSpec read_training(const Value& value) {
  const MapReader training(value, kTrainingKeys);
  TrainingSpec spec;
  spec.where = value.location();
  if (auto v = training.get("backward")) spec.backward = v->as_bool();
  if (auto v = training.get("optimizer")) {
    const std::string name = v->as_string();
    if (name == "adam")
      spec.optimizer = Optimizer::adam;
    else if (name == "sgd")
      spec.optimizer = Optimizer::sgd;
    else
      v->fail("unknown training.optimizer '" + name + "'" +
              scenario::suggestion(name, kOptimizers));
  }
  if (auto v = training.get("zero")) {
    spec.zero_stage = v->as_int(0, "a ZeRO stage: 0, 1, 2 or 3");
    spec.zero_where = v->location();
    if (spec.zero_stage > 3) v->fail("training.zero must be 0, 1, 2 or 3 (a ZeRO stage)");
  }
  if (auto v = training.get("micro_batches"))
    spec.micro_batches = v->as_int(1, "a number of micro-batches >= 1");
  if (auto v = training.get("virtual_stages")) {
    spec.virtual_stages = v->as_int(1, "a number of model chunks per pipeline stage >= 1");
    spec.virtual_stages_where = v->location();
  }
  return spec;
}

// Every matrix op (and attention, whose products are GEMMs) computes in a dtype its GPU has a
// peak rate for: simulate cannot time it otherwise, so the file is refused here — by validate
// as by simulate — at the op.
void check_matmul_peaks(const Scenario& s) {
  for (const WorkloadOp& op : s.workload) {
    if (!is_matmul(op.kind) && op.kind != OpKind::attention) continue;
    const DType dtype = s.dtype_of(op);
    try {
      roofline::peak_flops_per_s(s.cluster.gpu, dtype);
    } catch (const InvalidArgument& e) {
      const std::string key = peak_key(dtype);
      const auto& keys = scenario::kPeakKeys;
      const bool timed = std::find(keys.begin(), keys.end(), key) != keys.end();
      std::string listed;
      for (const auto& [name, rate] : s.cluster.gpu.peak_flops_per_s)
        listed.append(listed.empty() ? "" : ", ").append(name);
      throw InvalidArgument(
          "op '" + op.name + "' computes in " + to_string(dtype) + ", but " +
              (timed ? "the cluster's GPU '" + s.cluster.gpu.name + "' has no '" + key +
                           "' peak rate (gpu.peak lists: " + (listed.empty() ? "none" : listed) +
                           "); add one, or give the op a listed dtype"
                     : "symmesh cannot time " + to_string(dtype) +
                           " matmuls (gpu.peak takes bf16, fp16, fp32, fp64, fp8 and int8)"),
          op.where.to_string());
    }
  }
}

Scenario read_scenario(const Value& root, const std::string& path) {
  if (root.node().IsNull())
    root.fail("empty scenario; expected a map with cluster, mesh and workload");
  // A cluster file given where a scenario belongs (symmesh validate clusters/x.yaml) would
  // otherwise read as "unknown key 'base' — did you mean 'name'?".
  if (root.is_map() && !root.node()["cluster"] && !root.node()["workload"])
    for (const char* key : {"base", "nodes", "gpus_per_node", "gpu", "intra_node", "inter_node"})
      if (root.node()[key])
        root.fail(std::string("this looks like a cluster file (it has '") + key +
                  "'), not a scenario; a scenario names it under 'cluster:', e.g. 'cluster: " +
                  std::filesystem::path(path).filename().string() + "'");
  const MapReader top(root, kScenarioKeys);
  Scenario s;
  s.path = path;
  if (auto v = top.get("version")) {
    s.version = v->as_int(1);
    if (s.version != 1 && s.version != 2)
      v->fail("version " + v->as_string() +
              " is not supported (this symmesh reads versions 1 and 2)");
  }
  // Said before anything else is read: without the version the rest of the file reads as
  // version 1, and the first complaint would be about its ops rather than the cause.
  if (s.version < 2) {
    if (auto key = top.key("tensors"))
      key->fail("'tensors' needs 'version: 2' (named tensors are a version-2 feature)");
    if (auto key = top.key("training"))
      key->fail("'training' needs 'version: 2' (the training step is a version-2 feature)");
    if (auto key = top.key("model"))
      key->fail("'model' needs 'version: 2' (a model expands into a version-2 dataflow)");
  }
  if (top.key("model"))
    for (const char* generated : {"tensors", "workload"})
      if (auto key = top.key(generated))
        key->fail(std::string("'") + generated +
                  "' is generated from 'model'; give one or the other (symmesh expand prints "
                  "what a model generates)");
  s.name =
      top.get("name") ? top.get("name")->as_string() : std::filesystem::path(path).stem().string();
  s.cluster = scenario::read_cluster(top.require("cluster"));
  read_mesh(top.require("mesh"), s.cluster, s);
  if (s.is_dataflow()) check_pipeline_dim(top.require("mesh"), s);
  const DeviceMesh mesh(s.mesh_shape, s.mesh_names);
  if (auto v = top.get("dtype")) {
    try {
      s.dtype = parse_dtype(v->as_string(), "dtype");
    } catch (const InvalidArgument& e) {
      v->fail(e.message());
    }
  }
  if (auto v = top.get("cost_model")) {
    s.cost_model = v->as_string();
    s.cost_model_given = true;
    if (std::find(kCostModels.begin(), kCostModels.end(), s.cost_model) == kCostModels.end())
      v->fail("unknown cost_model '" + s.cost_model + "'" +
              scenario::suggestion(s.cost_model, kCostModels));
  }
  if (auto v = top.get("placement_search")) {
    s.placement_search = v->as_string();
    if (std::find(kPlacementSearches.begin(), kPlacementSearches.end(), s.placement_search) ==
        kPlacementSearches.end())
      v->fail("unknown placement_search '" + s.placement_search +
              "' (expected full-expansion or priority-queue)" +
              scenario::suggestion(s.placement_search, kPlacementSearches));
    if (s.placement_search == "priority-queue" && s.cost_model != "dtensor")
      v->fail(
          "placement_search: priority-queue prices its hops with DTensor's cost model; it "
          "needs cost_model: dtensor, not " +
          s.cost_model);
    if (s.placement_search == "priority-queue" && s.is_dataflow())
      v->fail(
          "placement_search: priority-queue chooses one op at a time from its inputs' "
          "placements (version 1); version 2 places the whole step with the layout search");
  }
  if (auto v = top.get("training")) {
    s.training = read_training(*v);
    if (s.training->virtual_stages > 1 && s.pipeline_stages() == 1)
      MapReader(*v, kTrainingKeys)
          .require("virtual_stages")
          .fail("training.virtual_stages " + std::to_string(s.training->virtual_stages) +
                " needs pipeline stages: a first mesh dim named pp");
  }
  if (auto v = top.get("model")) {
    // Checked at the mesh before the model is read: the mesh decides what can be generated.
    const Value mesh_value = top.require("mesh");
    try {
      scenario::check_model_mesh(s.mesh_shape, s.mesh_names, "");
    } catch (const InvalidArgument& e) {
      // At the offending name when there is one, else at the mesh.
      if (mesh_value.is_map())
        if (auto names = MapReader(mesh_value, {"shape", "names"}).get("names"))
          for (const Value& item : names->items())
            if (!scenario::model_mesh_dim_problem(item.as_string()).empty()) item.fail(e.message());
      mesh_value.fail(e.message());
    }
    s.model = scenario::read_model(*v, s.dtype, &s.model_files);
    s.model_where = v->location();
    if (!s.cost_model_given) s.cost_model = "analytic";
    if (!s.training) s.training = TrainingSpec{.where = v->location()};
    if (s.training->micro_batches > 0)
      MapReader(*top.get("training"), kTrainingKeys)
          .require("micro_batches")
          .fail(
              "training.micro_batches follows from the model: global_batch / (dp x "
              "micro_batch) micro-batches per replica; give those in model: instead");
    scenario::expand_model(s, v->where());
  } else if (s.is_dataflow()) {
    const DeviceMesh stage_mesh(s.stage_mesh_shape(), s.stage_mesh_names());
    scenario::Dataflow flow =
        scenario::read_dataflow(top.get("tensors"), top.require("workload"), stage_mesh, s.cluster,
                                {s.pipeline_stages(), s.virtual_stages()});
    s.tensors = std::move(flow.tensors);
    s.workload = std::move(flow.workload);
  } else {
    s.workload = scenario::read_workload(top.require("workload"), mesh, s.cluster);
  }
  check_matmul_peaks(s);
  if (auto v = top.get("sweep")) s.sweep = read_sweep(*v, s);
  if (auto v = top.get("objective")) s.objective = read_objective(*v);
  return s;
}

}  // namespace

Scenario load_scenario(const std::string& path) {
  return read_scenario(scenario::read_yaml_file(path), path);
}

Scenario load_scenario_text(const std::string& yaml, const std::string& file) {
  return read_scenario(scenario::parse_yaml_text(yaml, file), file);
}

ClusterSpec load_cluster(const std::string& path) {
  return scenario::read_cluster_file(path);
}

ClusterSpec load_cluster_text(const std::string& yaml, const std::string& file) {
  const Value root = scenario::parse_yaml_text(yaml, file);
  if (root.node().IsNull()) root.fail("empty cluster; expected a map with nodes, gpu, …");
  return scenario::read_cluster(root.with_path("cluster"));
}

}  // namespace symmesh
