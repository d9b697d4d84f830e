// A transformer's training step as a version-2 dataflow (model_expansion.hpp).
//
// Per layer l, the matrix work of a Llama decoder layer, forward (the backward follows from
// `training:`, strategies/dataflow_graph.hpp):
//   l<l>_qkv      x_l [T, h] @ w_qkv [h, (heads + 2 kv_heads) · d]       (addmm with qkv_bias)
//   l<l>_scores   q [B·heads, s, d] @ kT [B·heads, d, s]                  (bmm, K repeated per
//   l<l>_context  probs [B·heads, s, s] @ v [B·heads, s, d]                group as HF's eager)
//   l<l>_out      ctx [T, heads · d] @ w_o [heads · d, h]  -> a_l
//   l<l>_gate     a_l @ w_gate [h, f]                                     (SwiGLU only)
//   l<l>_up       a_l @ w_up [h, f]
//   l<l>_down     up [T, f] @ w_down [f, h]               -> x_(l+1)
// and after the last layer the output projection x_L @ w_out [h, vocab] -> logits.
// T = dp · micro_batch · seq tokens, B = dp · micro_batch sequences.
//
// What a version-2 file cannot yet say is stood in for, as the hand-written
// llama3-70b-layer-train.yaml does: the attention core's q, kT, v and ctx are step inputs
// of each layer (no view op joins them to the projections; they are kept for the backward,
// as Korthikanti et al. count them), and the norms, residual adds, rotary embedding,
// softmax and activation are not priced (each consumer reads its producer's output
// directly). The attention products are `causal: true`: half their FLOPs, priced so.
#include "scenario/model_expansion.hpp"

#include <algorithm>
#include <cstdio>

#include "core/device_mesh.hpp"
#include "core/errors.hpp"
#include "core/text.hpp"
#include "scenario/cluster_writer.hpp"
#include "scenario/workload_reader.hpp"
#include "scenario/yaml_reader.hpp"

namespace symmesh::scenario {
namespace {

std::string shape(std::initializer_list<int64_t> dims) {
  std::string out = "[";
  for (int64_t d : dims) out.append(out.size() > 1 ? ", " : "").append(std::to_string(d));
  return out + "]";
}

// One placement per mesh dim: `dp` and `tp` get theirs, in mesh order.
std::string placements(const std::vector<std::string>& names, const char* on_dp,
                       const char* on_tp) {
  std::string out = "[";
  for (const std::string& name : names) {
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
  if (name == kDataParallelDim || name == kTensorParallelDim) return "";
  return "mesh dim '" + name +
         "': a model scenario generates data (dp) and tensor (tp) parallelism only; " +
         (name == "pp"   ? "pipeline parallelism is not generated yet"
          : name == "cp" ? "context parallelism is not generated yet"
                         : "name each dim dp or tp");
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

// The op cap and a bound on the step's largest tensor, before any text is generated.
static void check_model_size(const TransformerSpec& spec, int64_t dp, const std::string& where) {
  const int64_t ops = int64_t{spec.layers} * (spec.activation == MlpActivation::swiglu ? 7 : 6) + 1;
  if (const int64_t cap = workload_op_cap(); ops > cap)
    throw InvalidArgument("model.layers " + std::to_string(spec.layers) + " generates " +
                              std::to_string(ops) + " ops, more than the " + std::to_string(cap) +
                              " symmesh reads (set SYMMESH_MAX_OPS to raise the cap)",
                          where);
  // The largest tensor of the step, in elements: the attention probabilities
  // [B·heads, seq, seq], the logits [T, vocab], the MLP's [T, ffn].
  const long double sequences =
      static_cast<long double>(dp) * sequences_per_replica(spec, dp, where);
  const long double tokens = sequences * spec.seq;
  const long double largest =
      std::max({sequences * spec.heads * spec.seq * spec.seq, tokens * spec.vocab,
                tokens * spec.ffn, tokens * spec.qkv_width()});
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
                                const std::vector<std::string>& names) {
  const int64_t dp = data_parallel_size(mesh_shape, names);
  check_model_size(spec, dp, "model");
  const int64_t sequences = dp * sequences_per_replica(spec, dp, "model.global_batch");
  const int64_t tokens = sequences * spec.seq;
  const int64_t h = spec.hidden;
  const int64_t d = spec.head_dim;
  const int64_t heads = sequences * spec.heads;
  // Tokens over dp and (sequence parallel) over tp; heads over dp and then tp.
  const std::string rows = placements(names, "S(0)", "S(0)");
  const std::string by_head = rows;
  const std::string ctx_split = placements(names, "S(0)", "S(1)");

  std::string tensors = "tensors:\n";
  std::string ops = "workload:\n";
  const auto tensor = [&](const std::string& name, const std::string& body) {
    tensors.append("  ").append(name).append(": {").append(body).append("}\n");
  };
  const auto parameter = [&](const std::string& name, std::initializer_list<int64_t> dims) {
    tensor(name, "shape: " + shape(dims) + ", parameter: true");
  };
  const auto input = [&](const std::string& name, std::initializer_list<int64_t> dims,
                         const std::string& where) {
    tensor(name, "shape: " + shape(dims) + ", placements: " + where);
  };
  const auto op = [&](const std::string& name, const char* kind, const std::string& a,
                      const std::string& b, const std::string& out, const std::string& bias = "",
                      bool causal = false) {
    ops.append("  - {name: ").append(name).append(", op: ").append(kind);
    if (!bias.empty()) ops.append(", bias: ").append(bias);
    ops.append(", a: ").append(a).append(", b: ").append(b).append(", output: ").append(out);
    if (causal) ops.append(", causal: true");
    ops.append("}\n");
  };

  input("x0", {tokens, h}, rows);
  for (int l = 0; l < spec.layers; ++l) {
    const std::string p = "l" + std::to_string(l) + "_";
    const std::string x = "x" + std::to_string(l);
    const std::string next = "x" + std::to_string(l + 1);
    parameter(p + "w_qkv", {h, spec.qkv_width()});
    if (spec.qkv_bias) parameter(p + "b_qkv", {spec.qkv_width()});
    input(p + "q", {heads, spec.seq, d}, by_head);
    input(p + "kT", {heads, d, spec.seq}, by_head);
    input(p + "v", {heads, spec.seq, d}, by_head);
    input(p + "ctx", {tokens, spec.q_width()}, ctx_split);
    parameter(p + "w_o", {spec.q_width(), h});
    if (spec.activation == MlpActivation::swiglu) parameter(p + "w_gate", {h, spec.ffn});
    parameter(p + "w_up", {h, spec.ffn});
    parameter(p + "w_down", {spec.ffn, h});

    if (spec.qkv_bias)
      op(p + "qkv", "addmm", x, p + "w_qkv", p + "qkv_out", p + "b_qkv");
    else
      op(p + "qkv", "mm", x, p + "w_qkv", p + "qkv_out");
    op(p + "scores", "bmm", p + "q", p + "kT", p + "probs", "", /*causal=*/true);
    op(p + "context", "bmm", p + "probs", p + "v", p + "ctx_heads", "", /*causal=*/true);
    op(p + "out", "mm", p + "ctx", p + "w_o", p + "a");
    if (spec.activation == MlpActivation::swiglu)
      op(p + "gate", "mm", p + "a", p + "w_gate", p + "gate_out");
    op(p + "up", "mm", p + "a", p + "w_up", p + "up_out");
    op(p + "down", "mm", p + "up_out", p + "w_down", next);
  }
  parameter("w_out", {h, spec.vocab});
  op("output", "mm", "x" + std::to_string(spec.layers), "w_out", "logits");
  return tensors + ops;
}

void expand_model(Scenario& scenario, const std::string& where) {
  check_model_mesh(scenario.mesh_shape, scenario.mesh_names, where);
  check_model_size(*scenario.model, data_parallel_size(scenario.mesh_shape, scenario.mesh_names),
                   where);
  const std::string text =
      model_dataflow_yaml(*scenario.model, scenario.mesh_shape, scenario.mesh_names);
  const Value root = parse_yaml_text(text, where + " (generated from model)");
  const MapReader top(root, {"tensors", "workload"});
  const DeviceMesh mesh(scenario.mesh_shape, scenario.mesh_names);
  Dataflow flow =
      read_dataflow(top.get("tensors"), top.require("workload"), mesh, scenario.cluster);
  scenario.tensors = std::move(flow.tensors);
  scenario.workload = std::move(flow.workload);
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
                          s.path.empty() ? std::string("scenario") : s.path);
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
        .append("}\n");
  out.append(model_dataflow_yaml(m, s.mesh_shape, s.mesh_names));
  if (s.objective && s.objective->max_time_s) {
    char time[64];
    std::snprintf(time, sizeof time, "%.17g s", *s.objective->max_time_s);
    out.append("objective: {max_time: ").append(time).append("}\n");
  }
  return out;
}

}  // namespace symmesh::scenario
