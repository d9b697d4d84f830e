// A transformer's training step as a version-2 dataflow (model_expansion.hpp).
//
// The forward of a Llama decoder (the backward follows from `training:`,
// strategies/dataflow_graph.hpp), T = dp · micro_batch · seq tokens:
//   embed          w_embed [vocab, h] looked up for the T tokens        -> x0 [T, h]
// per layer l, the ops of the layer table (core/transformer_layer.hpp) that the dataflow
// has (all but rotary, which its attention op applies), in the table's order, each named
// l<l>_<op> (l0_norm1 … l0_residual2), marked `layer: l` (the layout search plans the
// alike layers once), and reading its parameters l<l>_w_…, from x_l to x_(l+1);
// then norm (rms_norm with w_norm), output (@ w_out [h, vocab] -> logits; with tied
// embeddings `linear` over w_embed, logits = xn · w_embedᵀ, as Hugging Face ties lm_head to
// embed_tokens: one table, its gradient the sum of both readers') and loss
// (cross_entropy over the logits). With `recompute: full` each layer's ops carry
// `checkpoint: l<l>`: the layer keeps its input x_l and recomputes the rest in its backward
// (strategies/dataflow_graph.hpp). Every op is a matrix op or a tensor op
// (core/tensor_op.hpp) the planner places; x0 is declared split by tokens over dp and tp (the
// data each replica takes; Megatron's sequence-parallel residual stream), every weight's
// layout is the planner's.
#include "scenario/model_expansion.hpp"

#include <algorithm>
#include <cstdio>

#include "core/device_mesh.hpp"
#include "core/errors.hpp"
#include "core/text.hpp"
#include "core/transformer_layer.hpp"
#include "scenario/cluster_writer.hpp"
#include "scenario/workload_reader.hpp"
#include "scenario/yaml_reader.hpp"

namespace symmesh::scenario {
namespace {

std::string shape(const std::vector<int64_t>& dims) {
  std::string out = "[";
  for (int64_t d : dims) out.append(out.size() > 1 ? ", " : "").append(std::to_string(d));
  return out + "]";
}

// One placement per mesh dim of a stage: `dp` and `tp` get theirs, in mesh order (a pp dim
// is the stages, not a placement).
std::string placements(const std::vector<std::string>& names, const char* on_dp,
                       const char* on_tp) {
  std::string out = "[";
  for (const std::string& name : names) {
    if (name == kPipelineDim) continue;
    out.append(out.size() > 1 ? ", " : "");
    out.append("\"").append(name == kDataParallelDim ? on_dp : on_tp).append("\"");
  }
  return out + "]";
}

}  // namespace

int64_t data_parallel_size(const std::vector<int>& shape, const std::vector<std::string>& names) {
  for (size_t i = 0; i < names.size() && i < shape.size(); ++i)
    if (names[i] == kDataParallelDim) return shape[i];
  return 1;
}

void check_model_mesh(const std::vector<int>& shape, const std::vector<std::string>& names,
                      const std::string& where) {
  if (names.size() != shape.size())
    throw InvalidArgument(
        "a model scenario names its mesh dims, dp (data parallel) and tp (tensor parallel): "
        "e.g. mesh: {shape: [4, 8], names: [dp, tp]}",
        where);
  for (const std::string& name : names)
    if (const std::string problem = model_mesh_dim_problem(name); !problem.empty())
      throw InvalidArgument(problem, where);
}

std::string model_mesh_dim_problem(const std::string& name) {
  if (name == kDataParallelDim || name == kTensorParallelDim || name == kPipelineDim) return "";
  return "mesh dim '" + name +
         "': a model scenario generates pipeline (pp), data (dp) and tensor (tp) parallelism "
         "only; " +
         (name == "cp" ? "context parallelism is not generated yet" : "name each dim pp, dp or tp");
}

int64_t sequences_per_replica(const TransformerSpec& spec, int64_t dp, const std::string& where) {
  if (spec.global_batch <= 0) return spec.micro_batch;
  const int64_t per_pass = spec.micro_batch_given ? dp * spec.micro_batch : dp;
  if (spec.global_batch % per_pass != 0)
    throw InvalidArgument(
        "model.global_batch " + std::to_string(spec.global_batch) +
            " sequences do not split evenly over dp " + std::to_string(dp) +
            " data-parallel replicas" +
            (spec.micro_batch_given
                 ? " of micro_batch " + std::to_string(spec.micro_batch) + " sequences each"
                 : ""),
        where);
  return spec.micro_batch_given ? spec.micro_batch : spec.global_batch / dp;
}

// Ops generated per layer: the layer table's that have a dataflow op.
static int64_t ops_per_layer(const TransformerSpec& spec) {
  int64_t out = 0;
  for (const LayerOp& op : transformer_layer_ops(spec)) out += op.dataflow_op.empty() ? 0 : 1;
  return out;
}

// The op cap and a bound on the step's largest tensor, before any text is generated.
static void check_model_size(const TransformerSpec& spec, int64_t dp, const std::string& where) {
  const int64_t ops = int64_t{spec.layers} * ops_per_layer(spec) + 4;
  if (const int64_t cap = workload_op_cap(); ops > cap)
    throw InvalidArgument("model.layers " + std::to_string(spec.layers) + " generates " +
                              std::to_string(ops) + " ops, more than the " + std::to_string(cap) +
                              " symmesh reads (set SYMMESH_MAX_OPS to raise the cap)",
                          where);
  // The largest tensor of the step, in elements: the logits [T, vocab], the MLP's [T, ffn],
  // the qkv projection's [T, qkv width] (the fused attention keeps no [seq, seq] scores).
  const long double sequences =
      static_cast<long double>(dp) * sequences_per_replica(spec, dp, where);
  const long double tokens = sequences * spec.seq;
  const long double largest =
      std::max({tokens * spec.vocab, tokens * spec.ffn, tokens * spec.qkv_width()});
  constexpr long double kMaxElements = static_cast<long double>(int64_t{1} << 50);
  if (largest > kMaxElements) {
    char count[32];
    std::snprintf(count, sizeof count, "%.3g", static_cast<double>(largest));
    throw InvalidArgument("the step's largest tensor would hold " + std::string(count) +
                              " elements, more than the 2^50 symmesh handles; fewer sequences, "
                              "a shorter seq or a smaller dp",
                          where);
  }
}

std::string model_dataflow_yaml(const TransformerSpec& spec, const std::vector<int>& mesh_shape,
                                const std::vector<std::string>& names, int virtual_stages) {
  const int64_t dp = data_parallel_size(mesh_shape, names);
  check_model_size(spec, dp, "model");
  const int64_t sequences = dp * sequences_per_replica(spec, dp, "model.global_batch");
  const int64_t tokens = sequences * spec.seq;
  const int64_t h = spec.hidden;
  // The embedding's output, the residual stream's start: tokens over dp and (Megatron's
  // sequence parallelism) over tp.
  const std::string rows = placements(names, "S(0)", "S(0)");

  std::string tensors = "tensors:\n";
  std::string ops = "workload:\n";
  const auto parameter = [&](const std::string& name, const std::vector<int64_t>& dims) {
    tensors.append("  ").append(name).append(": {shape: ").append(shape(dims));
    tensors.append(", parameter: true}\n");
  };
  // One op: its kind, the tensors it reads as (key, name) pairs, what it makes, and extra
  // keys ("heads: 32").
  // The layer being written; with full recomputation its ops form one checkpoint segment.
  std::string segment;
  // With pipeline stages, the (virtual) stage of the ops being written: the embedding on
  // the first, the layers split over the pp × virtual_stages model chunks as Megatron-LM
  // splits them (chunk_layer_counts), the head on the last.
  const int stages = pipeline_dim_size(mesh_shape, names) * std::max(1, virtual_stages);
  int stage = 0;
  // The decoder layer of the ops being written (-1 outside the layers).
  int layer_index = -1;
  // The keys every op ends with: its layer, checkpoint segment and stage, when there are.
  const auto end_op = [&] {
    if (layer_index >= 0) ops.append(", layer: ").append(std::to_string(layer_index));
    if (!segment.empty()) ops.append(", checkpoint: ").append(segment);
    if (stages > 1) ops.append(", stage: ").append(std::to_string(stage));
    ops.append("}\n");
  };
  const auto op = [&](const std::string& name, const char* kind,
                      std::initializer_list<std::pair<const char*, std::string>> reads,
                      const std::string& out, const std::string& extra = "") {
    ops.append("  - {name: ").append(name).append(", op: ").append(kind);
    for (const auto& [key, tensor] : reads)
      ops.append(", ").append(key).append(": ").append(tensor);
    ops.append(", output: ").append(out);
    if (!extra.empty()) ops.append(", ").append(extra);
    end_op();
  };

  parameter("w_embed", {spec.vocab, h});
  tensors.append("  x0: {placements: ").append(rows).append("}\n");
  op("embed", "embedding", {{"a", "w_embed"}}, "x0", "tokens: " + std::to_string(tokens));
  const std::string attention_keys =
      "heads: " + std::to_string(spec.heads) + ", kv_heads: " + std::to_string(spec.kv_heads) +
      ", head_dim: " + std::to_string(spec.head_dim) + ", seq: " + std::to_string(spec.seq);
  const std::vector<LayerOp> layer = transformer_layer_ops(spec);  // core/transformer_layer.hpp
  const std::vector<int64_t> stage_layers = chunk_layer_counts(spec.layers, stages);
  int64_t stage_end = stage_layers.front();  // the first layer past the current stage
  for (int l = 0; l < spec.layers; ++l) {
    if (l == stage_end) stage_end += stage_layers.at(++stage);
    const std::string p = "l" + std::to_string(l) + "_";
    const std::string x = "x" + std::to_string(l);
    const std::string next = "x" + std::to_string(l + 1);
    if (spec.full_recompute) segment = "l" + std::to_string(l);
    layer_index = l;
    // The layer table's ops: their parameters first, then each op that the dataflow has,
    // its tensors named for this layer.
    for (const LayerOp& layer_op : layer)
      for (const LayerParameter& w : layer_op.parameters)
        parameter(p + std::string(w.name), w.shape);
    const auto tensor = [&](std::string_view name) {
      if (name == kLayerInput) return x;
      if (name == kLayerOutput) return next;
      return p + std::string(name);
    };
    for (const LayerOp& layer_op : layer) {
      if (layer_op.dataflow_op.empty()) continue;
      ops.append("  - {name: ").append(p).append(layer_op.name);
      ops.append(", op: ").append(layer_op.dataflow_op);
      for (const DataflowRead& read : layer_op.reads)
        ops.append(", ").append(read.key).append(": ").append(tensor(read.tensor));
      ops.append(", output: ").append(tensor(layer_op.output));
      if (layer_op.work == LayerWork::attention) ops.append(", ").append(attention_keys);
      end_op();
    }
  }
  segment.clear();
  layer_index = -1;
  parameter("w_norm", {h});
  if (!spec.tie_embeddings) parameter("w_out", {h, spec.vocab});
  op("norm", "rms_norm", {{"a", "x" + std::to_string(spec.layers)}, {"b", "w_norm"}}, "xn");
  if (spec.tie_embeddings)
    op("output", "linear", {{"a", "xn"}, {"b", "w_embed"}}, "logits");
  else
    op("output", "mm", {{"a", "xn"}, {"b", "w_out"}}, "logits");
  op("loss", "cross_entropy", {{"a", "logits"}}, "loss");
  return tensors + ops;
}

int micro_batches_per_replica(const TransformerSpec& spec, int64_t dp, const std::string& where) {
  if (spec.global_batch <= 0 || !spec.micro_batch_given) return 1;
  const int64_t sequences = spec.global_batch / dp;  // whole: sequences_per_replica checks
  (void)sequences_per_replica(spec, dp, where);
  return static_cast<int>(sequences / spec.micro_batch);
}

void expand_model(Scenario& scenario, const std::string& where) {
  check_model_mesh(scenario.mesh_shape, scenario.mesh_names, where);
  const int stages = scenario.pipeline_stages();
  if (stages > 1 && scenario.model->tie_embeddings)
    throw InvalidArgument(
        "tied embeddings over " + std::to_string(stages) +
            " pipeline stages are not modelled yet: the table would be read on the first stage "
            "and the last (Megatron-LM keeps a copy on each and all-reduces their gradients)",
        where);
  if (const int chunks = stages * scenario.virtual_stages(); chunks > scenario.model->layers)
    throw InvalidArgument(
        "model.layers " + std::to_string(scenario.model->layers) + " cannot fill " +
            std::to_string(chunks) +
            (scenario.virtual_stages() > 1
                 ? " virtual stages (pp " + std::to_string(stages) + " x virtual_stages " +
                       std::to_string(scenario.virtual_stages()) + ")"
                 : " pipeline stages") +
            ": each needs a layer",
        where);
  check_model_size(*scenario.model, data_parallel_size(scenario.mesh_shape, scenario.mesh_names),
                   where);
  const std::string text = model_dataflow_yaml(*scenario.model, scenario.mesh_shape,
                                               scenario.mesh_names, scenario.virtual_stages());
  const Value root = parse_yaml_text(text, where + " (generated from model)");
  const MapReader top(root, {"tensors", "workload"});
  const DeviceMesh stage_mesh(scenario.stage_mesh_shape(), scenario.stage_mesh_names());
  Dataflow flow =
      read_dataflow(top.get("tensors"), top.require("workload"), stage_mesh, scenario.cluster,
                    {scenario.pipeline_stages(), scenario.virtual_stages()});
  scenario.tensors = std::move(flow.tensors);
  scenario.workload = std::move(flow.workload);
  if (scenario.training)
    scenario.training->micro_batches = micro_batches_per_replica(
        *scenario.model, data_parallel_size(scenario.mesh_shape, scenario.mesh_names), where);
}

namespace {

// A YAML double-quoted scalar.
std::string quoted(const std::string& text) {
  std::string out = "\"";
  for (char c : text) {
    if (c == '"' || c == '\\') out.push_back('\\');
    out.push_back(c);
  }
  return out + "\"";
}

std::string list(const std::vector<std::string>& items) {
  return "[" + join(items, ", ", [](const std::string& s) { return s; }) + "]";
}

}  // namespace

std::string expanded_scenario_text(const Scenario& s) {
  if (!s.model)
    throw InvalidArgument("the scenario has no model: block to expand (it is its own dataflow)",
                          s.where());
  const TransformerSpec& m = *s.model;
  std::string out;
  out.append("# Generated by symmesh expand")
      .append(s.path.empty() ? "" : " from " + s.path)
      .append(": model ")
      .append(m.name)
      .append(", ")
      .append(std::to_string(m.layers))
      .append(" layers, ")
      .append(std::to_string(m.parameters()))
      .append(" parameters, seq ")
      .append(std::to_string(m.seq))
      .append(", micro_batch ")
      .append(std::to_string(m.micro_batch))
      .append(m.global_batch > 0 ? ", global_batch " + std::to_string(m.global_batch) : "")
      .append(".\n");
  if (s.sweep)
    out.append(
        "# The file's sweep is left out: a model's step is generated again for each mesh it "
        "tries,\n# and this written-out step has the tokens of this mesh.\n");
  out.append("version: 2\nname: ").append(quoted(s.name)).append("\ncluster:\n");
  std::string cluster = cluster_file_text(s.cluster);
  for (size_t begin = 0; begin < cluster.size();) {
    size_t end = cluster.find('\n', begin);
    if (end == std::string::npos) end = cluster.size();
    const std::string line = cluster.substr(begin, end - begin);
    if (!line.empty() && line[0] != '#') out.append("  ").append(line).append("\n");
    begin = end + 1;
  }
  std::vector<std::string> shape;
  for (int d : s.mesh_shape) shape.push_back(std::to_string(d));
  out.append("mesh: {shape: ").append(list(shape));
  if (!s.mesh_names.empty()) out.append(", names: ").append(list(s.mesh_names));
  out.append("}\ndtype: ").append(to_string(s.dtype));
  out.append("\ncost_model: ").append(s.cost_model).append("\n");
  if (s.training)
    out.append("training: {backward: ")
        .append(s.training->backward ? "true" : "false")
        .append(", optimizer: ")
        .append(to_string(s.training->optimizer))
        .append(", zero: ")
        .append(std::to_string(s.training->zero_stage))
        .append(s.training->micro_batch_count() > 1
                    ? ", micro_batches: " + std::to_string(s.training->micro_batch_count())
                    : "")
        .append(s.virtual_stages() > 1 ? ", virtual_stages: " + std::to_string(s.virtual_stages())
                                       : "")
        .append("}\n");
  out.append(model_dataflow_yaml(m, s.mesh_shape, s.mesh_names, s.virtual_stages()));
  if (s.objective && s.objective->max_time_s) {
    char time[64];
    std::snprintf(time, sizeof time, "%.17g s", *s.objective->max_time_s);
    out.append("objective: {max_time: ").append(time).append("}\n");
  }
  return out;
}

}  // namespace symmesh::scenario
