#include "evaluation/torch_parallel_plan.hpp"

#include <algorithm>

#include "core/errors.hpp"
#include "evaluation/scenario_evaluation.hpp"

namespace symmesh::evaluation {
namespace {

// An activation's [tokens, features] placement as torch's [batch, seq, features] one.
std::string activation_layout(const Placement& p) {
  if (p.is_replicate()) return "Replicate()";
  if (p.is_partial()) return "Partial()";
  return p.shard_dim() == 0 ? "Shard(1)" : "Shard(-1)";
}

const TpOpPlacements* find_op(const ModelTpLayout& layout, const std::string& name) {
  const auto it = layout.ops.find(name);
  return it == layout.ops.end() ? nullptr : &it->second;
}

std::string full_path(const std::string& prefix, const std::string& module) {
  return prefix.empty() ? module : prefix + "." + module;
}

// Builds the styles of one scope (the model, or one block), noting what torch cannot say.
class PlanBuilder {
 public:
  PlanBuilder(TorchParallelPlan& plan, std::string prefix)
      : plan_(plan), prefix_(std::move(prefix)) {}
  std::vector<TorchStyle> styles;

  void note_on(const std::string& module, const std::string& why) { note(module, why); }

  // A linear layer: its weight's split decides the style. `input_layouts` false: the
  // input's layout is left to a PrepareModuleInput of the parent (its default, Replicate).
  // `local_output`: torchtitan's explicit use_local_output (the output projection), or none.
  void linear(const TpOpPlacements& op, const std::string& module, bool input_layouts = true,
              std::optional<bool> local_output = std::nullopt, bool explicit_output = false) {
    const Placement& w = op.computed.at(op.rhs);
    const Placement& in_arriving = op.arriving.at(op.lhs);
    const Placement& in_computed = op.computed.at(op.lhs);
    // a @ w: w is [in, out]; linear: w is [out, in], as torch stores it.
    const int out_dim = op.kind == OpKind::linear ? 0 : 1;
    if (w.is_replicate()) return whole(op, module);
    if (op.output.is_partial())
      return note(module, "it hands on a partial sum, reduced only after a residual add (" +
                              std::string("torchtitan's block adds plain tensors, so the module ") +
                              "must reduce it)");
    TorchStyle s{module, "", {}};
    if (w.is_shard(out_dim)) {
      s.style = "ColwiseParallel";
      if (!in_computed.is_replicate())
        note(module, "its column-split weight multiplies an input at " + to_string(in_computed) +
                         " (ColwiseParallel gathers it whole)");
      if (input_layouts && !in_arriving.is_replicate())
        s.kwargs.emplace_back("input_layouts", activation_layout(in_arriving));
      if (explicit_output || !op.output.is_shard(1))
        s.kwargs.emplace_back("output_layouts", activation_layout(op.output));
    } else if (w.is_shard(1 - out_dim)) {
      s.style = "RowwiseParallel";
      if (!in_computed.is_shard(1))
        note(module, "its row-split weight multiplies an input at " + to_string(in_computed) +
                         " (RowwiseParallel needs it split by features)");
      if (input_layouts && !in_arriving.is_shard(1))
        s.kwargs.emplace_back("input_layouts", activation_layout(in_arriving));
      if (explicit_output || !op.output.is_replicate())
        s.kwargs.emplace_back("output_layouts", activation_layout(op.output));
    } else {
      return note(module, "its weight is at " + to_string(w) + " over tp");
    }
    if (local_output) s.kwargs.emplace_back("use_local_output", *local_output ? "True" : "False");
    styles.push_back(std::move(s));
  }

  // A linear whose weight is whole on every tp rank. On a whole input every rank repeats the
  // same product: the module is replicated and keeps no style. On token rows (S(0)) each
  // rank multiplies its own rows: SequenceParallel makes the weight a replicated DTensor, so
  // that its gradient (each rank's rows only) is summed over tp; an input arriving otherwise
  // is moved onto the rows first, and an output its reader takes otherwise moved after, by a
  // preparation applied before SequenceParallel (the module's two styles, in that order:
  // hooks run in the order they are registered).
  void whole(const TpOpPlacements& op, const std::string& module) {
    const Placement& in = op.computed.at(op.lhs);
    const Placement& arriving = op.arriving.at(op.lhs);
    const Placement out = op.read_as.value_or(op.output);
    if (in.is_replicate()) {
      if (!arriving.is_replicate())
        return note(module, "its whole weight multiplies an input gathered from " +
                                to_string(arriving) +
                                " over tp (a module without a style takes its input as it arrives)");
      if (!out.is_replicate())
        return note(module, "its whole output is read at " + to_string(out) + " over tp");
      return replicated(module);
    }
    if (!in.is_shard(0))
      return note(module, "its whole weight multiplies an input at " + to_string(in) + " over tp");
    const bool move_in = !arriving.is_shard(0), move_out = !out.is_shard(0);
    const std::string in_layouts = "(" + activation_layout(arriving) + ",)";
    if (move_in && move_out)
      styles.push_back({module,
                        "PrepareModuleInputOutput",
                        {{"input_layouts", in_layouts},
                         {"desired_input_layouts", "(Shard(1),)"},
                         {"output_layouts", "Shard(1)"},
                         {"desired_output_layouts", activation_layout(out)}}});
    else if (move_in)
      styles.push_back({module,
                        "PrepareModuleInput",
                        {{"input_layouts", in_layouts}, {"desired_input_layouts", "(Shard(1),)"}}});
    else if (move_out)
      styles.push_back({module,
                        "PrepareModuleOutput",
                        {{"output_layouts", "Shard(1)"},
                         {"desired_output_layouts", activation_layout(out)}}});
    // The output as a plain tensor, as the other styles leave theirs; a preparation of the
    // output makes it plain itself, its hook running first.
    TorchStyle sp{module, "SequenceParallel", {}};
    if (!move_out) sp.kwargs.emplace_back("use_local_output", "True");
    styles.push_back(std::move(sp));
  }

  // The embedding: a [vocab, hidden] table looked up by token ids every tp rank holds.
  void embedding(const TpOpPlacements& op, const std::string& module) {
    const Placement& w = op.computed.at(0);
    if (w.is_replicate()) {
      replicated(module);
      // Every rank looks up every token; the output is then cut as the next module reads it
      // (a plain tensor reaching SequenceParallel is taken as its own shard).
      if (!op.output.is_replicate())
        styles.push_back({module,
                          "PrepareModuleOutput",
                          {{"output_layouts", "Replicate()"},
                           {"desired_output_layouts", activation_layout(op.output)}}});
      return;
    }
    if (!w.is_shard()) return note(module, "its table is at " + to_string(w) + " over tp");
    // nn.Embedding's weight is [vocab, hidden] as symmesh's: rows are RowwiseParallel.
    TorchStyle s{module, w.shard_dim() == 0 ? "RowwiseParallel" : "ColwiseParallel", {}};
    s.kwargs.emplace_back("input_layouts", "Replicate()");
    const bool default_output =
        w.shard_dim() == 0 ? op.output.is_replicate() : op.output.is_shard(1);
    if (!default_output) s.kwargs.emplace_back("output_layouts", activation_layout(op.output));
    styles.push_back(std::move(s));
  }

  // An RMSNorm: sequence parallel when it normalises tokens split over tp.
  // Its input is the plain tensor the residual stream holds (the block's input, or the sum
  // the block adds), which the residual add reads too: it must arrive as it is computed.
  void norm(const TpOpPlacements& op, const std::string& module) {
    const Placement& x = op.computed.at(0);
    const Placement& w = op.computed.at(1);
    const Placement& arriving = op.arriving.at(0);
    if ((x.is_replicate() || x.is_shard(0)) && w.is_replicate() && arriving != x)
      return note(module, "it normalises its input at " + to_string(x) + " over tp, arriving at " +
                              to_string(arriving) +
                              " (the residual stream is a plain tensor its add reads too)");
    if (x.is_replicate() && w.is_replicate()) return replicated(module);
    if (x.is_shard(0) && w.is_replicate())
      return styles.push_back({module, "SequenceParallel", {}});
    note(module, "it normalises an input at " + to_string(x) + " with its weight at " +
                     to_string(w) + " over tp");
  }

  // The parent's PrepareModuleInput: its first argument arrives at `from` and its linears
  // take it whole; `extra` more arguments (freqs_cis) are passed through (None).
  void prepare_input(const std::string& module, const Placement& from, int extra) {
    std::string in = "(" + activation_layout(from), want = "(Replicate()";
    for (int k = 0; k < extra; ++k) in += ", None", want += ", None";
    if (extra == 0) in += ",", want += ",";
    styles.push_back({module,
                      "PrepareModuleInput",
                      {{"input_layouts", in + ")"}, {"desired_input_layouts", want + ")"}}});
  }

 private:
  void replicated(const std::string& module) {
    plan_.replicated.push_back(full_path(prefix_, module));
  }
  void note(const std::string& module, const std::string& why) {
    plan_.notes.push_back(full_path(prefix_, module) + ": no ParallelStyle expresses this: " + why);
  }
  TorchParallelPlan& plan_;
  std::string prefix_;
};

// Whether a colwise linear reads an input its parent should gather (then the parent gets a
// PrepareModuleInput and the linears the default input, as torchtitan writes it).
bool gathers_sharded_input(const TpOpPlacements* op) {
  if (!op || op->kind == OpKind::linear || !op->computed.at(op->rhs).is_shard(1)) return false;
  return !op->arriving.at(op->lhs).is_replicate() && op->computed.at(op->lhs).is_replicate();
}

std::vector<TorchStyle> layer_plan(TorchParallelPlan& plan, const ModelTpLayout& layout, int l) {
  const std::string p = "l" + std::to_string(l) + "_";
  PlanBuilder b(plan, "layers." + std::to_string(l));
  if (const auto* op = find_op(layout, p + "norm1")) b.norm(*op, "attention_norm");
  if (const auto* op = find_op(layout, p + "attention"); op && op->computed.at(0).is_shard(0))
    b.note_on("attention",
              "it computes attention over whole sequences split by tp (torch's Shard(0), the "
              "batch), where the plan's token rows are Shard(1), the sequence");
  if (const auto* qkv = find_op(layout, p + "qkv")) {
    const bool prepare = gathers_sharded_input(qkv);
    // attention.forward(x, freqs_cis): the rotary table is not a DTensor (None).
    if (prepare) b.prepare_input("attention", qkv->arriving.at(qkv->lhs), 1);
    for (const char* w : {"attention.wq", "attention.wk", "attention.wv"})
      b.linear(*qkv, w, !prepare);
  }
  if (const auto* op = find_op(layout, p + "out")) b.linear(*op, "attention.wo");
  if (const auto* op = find_op(layout, p + "norm2")) b.norm(*op, "ffn_norm");
  const auto* gate = find_op(layout, p + "gate");
  const auto* up = find_op(layout, p + "up");
  const auto* down = find_op(layout, p + "down");
  // SwiGLU: w2(silu(w1 x) * w3 x); a GELU MLP has only up (w1) and down (w2).
  const auto* w1 = gate ? gate : up;
  const auto* w3 = gate ? up : nullptr;
  // w3 reads the same input: arriving as w1's does, or already whole because the planner
  // reuses the copy w1's gather made (one gather for both, as the PrepareModuleInput does).
  const auto shares_gather = [&](const TpOpPlacements* w) {
    if (!w || w->kind == OpKind::linear || !w->computed.at(w->rhs).is_shard(1) ||
        !w->computed.at(w->lhs).is_replicate())
      return false;
    const Placement& in = w->arriving.at(w->lhs);
    return in.is_replicate() || in == w1->arriving.at(w1->lhs);
  };
  const bool prepare = gathers_sharded_input(w1) && (!w3 || shares_gather(w3));
  if (prepare) b.prepare_input("feed_forward", w1->arriving.at(w1->lhs), 0);
  if (w1) b.linear(*w1, "feed_forward.w1", !prepare);
  if (down) b.linear(*down, "feed_forward.w2");
  if (w3) b.linear(*w3, "feed_forward.w3", !prepare);
  return b.styles;
}

// How an op splits over the mesh dims other than tp, when not as data parallelism does
// (every activation by tokens, S(0); every weight whole): "input 1 at S(1) over dp", or
// empty. Dims of size 1 split nothing.
std::string other_dims_split(OpKind kind, const strategies::Candidate& chosen, int rhs, int tp,
                             const std::vector<int>& shape, const std::vector<std::string>& names) {
  // The ops of the modules and of their forward (the loss, computed outside the model, is
  // the user's: its sums over dp are data parallelism's).
  static const OpKind kModel[] = {OpKind::mm,      OpKind::linear,    OpKind::addmm,
                                  OpKind::rms_norm, OpKind::embedding, OpKind::attention,
                                  OpKind::swiglu,   OpKind::gelu,      OpKind::add};
  if (std::find(std::begin(kModel), std::end(kModel), kind) == std::end(kModel)) return "";
  // The weight among the inputs: b of a product, the norm's scale, the embedding's table.
  int weight = -1;
  if (kind == OpKind::mm || kind == OpKind::linear || kind == OpKind::addmm) weight = rhs;
  if (kind == OpKind::rms_norm) weight = 1;
  if (kind == OpKind::embedding) weight = 0;
  for (size_t d = 0; d < shape.size(); ++d) {
    if (static_cast<int>(d) == tp || shape[d] == 1) continue;
    const std::string over = " over " + names.at(d);
    for (size_t k = 0; k < chosen.input_placements.size(); ++k) {
      const Placement& p = chosen.input_placements[k].at(d);
      const bool ok = static_cast<int>(k) == weight ? p.is_replicate() : p.is_shard(0);
      if (!ok) return "input " + std::to_string(k) + " at " + to_string(p) + over;
    }
    const Placement& o = chosen.output_placements.at(d);
    if (!o.is_shard(0)) return "output at " + to_string(o) + over;
  }
  return "";
}

int tp_dim_of(const Scenario& s) {
  const auto names = s.stage_mesh_names();
  const auto it = std::find(names.begin(), names.end(), "tp");
  return it == names.end() ? -1 : static_cast<int>(it - names.begin());
}

}  // namespace

bool TorchParallelPlan::uniform_layers() const {
  return std::all_of(layers.begin(), layers.end(),
                     [&](const auto& l) { return l == layers.front(); });
}

ModelTpLayout model_tp_layout(const Scenario& scenario,
                              const strategies::PlannedWorkload& planned) {
  const std::string where = scenario.where();
  if (!scenario.model)
    throw InvalidArgument("a torch plan needs a model scenario (one with a model: block)", where);
  const int tp = tp_dim_of(scenario);
  if (tp < 0)
    throw InvalidArgument(
        "a torch plan is a tensor-parallel plan, but the scenario's mesh has no "
        "tp dim (mesh: {shape: [...], names: [dp, tp]})",
        where);
  ModelTpLayout out;
  const std::vector<int> shape = scenario.stage_mesh_shape();
  const std::vector<std::string> names = scenario.stage_mesh_names();
  out.tp_size = shape.at(tp);
  out.layers = scenario.model->layers;
  const auto over_tp = [&](const Placements& p) { return p.at(tp); };
  std::map<std::string, std::string> output_of;  // op name -> the tensor it makes
  for (size_t i = 0; i < planned.ops.size(); ++i) {
    const bool forward =
        planned.phase.empty() || planned.phase[i] == strategies::StepPhase::forward;
    const WorkloadOp& op = planned.ops[i];
    // Derived ops are named "<op>.dgrad.a", "<op>.recompute"…; the forward ones as generated.
    if (!forward || !planned.plans[i] || op.name.find('.') != std::string::npos ||
        out.ops.count(op.name))
      continue;
    const strategies::Plan& plan = *planned.plans[i];
    const strategies::Candidate& chosen = plan.chosen_candidate();
    TpOpPlacements t;
    t.kind = op.kind;
    for (const TensorSpec& in : plan.problem.inputs) t.arriving.push_back(over_tp(in.placements));
    for (const Placements& in : chosen.input_placements) t.computed.push_back(over_tp(in));
    t.output = over_tp(plan.problem.output_target.value_or(chosen.output_placements));
    t.lhs = plan.problem.lhs_index();
    t.rhs = plan.problem.is_tensor_op() ? 1 : plan.problem.rhs_index();
    t.other_dims = other_dims_split(op.kind, chosen, t.rhs, tp, shape, names);
    out.ops.emplace(op.name, std::move(t));
    output_of.emplace(op.name, op.output_tensor);
  }
  // Where each output's first forward reader computes with it. A partial sum (a
  // row-parallel product) is reduced where that reader needs it (the residual add
  // reduce-scatters it); a torch module reduces its own output, so that reader's placement
  // is the module's output layout.
  for (auto& [name, t] : out.ops) {
    const std::string& tensor = output_of.at(name);
    for (size_t i = 0; i < planned.ops.size() && i < planned.reads.size(); ++i) {
      const bool forward =
          planned.phase.empty() || planned.phase[i] == strategies::StepPhase::forward;
      const auto& reads = planned.reads[i];
      const auto read = std::find_if(reads.begin(), reads.end(),
                                     [&](const auto& r) { return r.tensor == tensor; });
      if (!forward || read == reads.end() || !planned.plans[i]) continue;
      const auto& placements = planned.plans[i]->chosen_candidate().input_placements;
      t.read_as = over_tp(placements.at(read - reads.begin()));
      if (t.output.is_partial()) t.output = *t.read_as;
      break;
    }
  }
  return out;
}

TorchParallelPlan torch_parallel_plan(const ModelTpLayout& layout) {
  TorchParallelPlan plan;
  plan.tp_size = layout.tp_size;
  PlanBuilder top(plan, "");
  if (const auto* op = find_op(layout, "embed")) top.embedding(*op, "tok_embeddings");
  if (const auto* op = find_op(layout, "norm")) top.norm(*op, "norm");
  if (const auto* op = find_op(layout, "output")) {
    // Logits left split by vocabulary: the loss reads them as a DTensor (loss parallel), so
    // torchtitan keeps the DTensor (use_local_output=False) and names both layouts.
    top.linear(*op, "output", true, !op->output.is_shard(1), true);
  }
  plan.model = top.styles;
  for (int l = 0; l < layout.layers; ++l) plan.layers.push_back(layer_plan(plan, layout, l));
  // A tp plan leaves the other mesh dims to data parallelism (each rank its own sequences,
  // the weights whole, or sharded and gathered whole before use, as FSDP does).
  std::vector<std::string> split_elsewhere;
  for (const auto& [name, op] : layout.ops)
    if (!op.other_dims.empty()) split_elsewhere.push_back(name + " (" + op.other_dims + ")");
  if (!split_elsewhere.empty()) {
    std::string list;
    for (size_t k = 0; k < split_elsewhere.size() && k < 3; ++k)
      list += (k ? ", " : "") + split_elsewhere[k];
    if (split_elsewhere.size() > 3)
      list += " and " + std::to_string(split_elsewhere.size() - 3) + " more ops";
    plan.other_dims.push_back(
        "the planner also splits " + list +
        " over the other mesh dims, other than as data parallelism does (activations by "
        "tokens, weights whole); this plan covers tp only, and torch's data parallelism "
        "will not split them so");
  }
  return plan;
}

TorchParallelPlan torch_parallel_plan(const Scenario& scenario) {
  const auto model = scenario_cost_model(scenario, true);
  const strategies::PlannedWorkload planned = strategies::plan_workload(scenario, *model);
  return torch_parallel_plan(model_tp_layout(scenario, planned));
}

nlohmann::ordered_json torch_plan_json(const TorchParallelPlan& plan) {
  const auto styles = [](const std::vector<TorchStyle>& list) {
    nlohmann::ordered_json out = nlohmann::ordered_json::object();
    for (const TorchStyle& s : list) {
      nlohmann::ordered_json kwargs = nlohmann::ordered_json::object();
      for (const auto& [k, v] : s.kwargs) kwargs[k] = v;
      nlohmann::ordered_json entry = {{"style", s.style}, {"kwargs", kwargs}};
      if (out.contains(s.module))
        out[s.module]["then"] = std::move(entry);  // the module's second style
      else
        out[s.module] = std::move(entry);
    }
    return out;
  };
  nlohmann::ordered_json layers = nlohmann::ordered_json::array();
  for (const auto& l : plan.layers) layers.push_back(styles(l));
  return {{"tp_size", plan.tp_size},
          {"model", styles(plan.model)},
          {"layers", layers},
          {"replicated", plan.replicated},
          {"notes", plan.notes},
          {"other_dims", plan.other_dims}};
}

namespace {

std::string style_call(const TorchStyle& s) {
  std::string out = s.style + "(";
  for (size_t k = 0; k < s.kwargs.size(); ++k)
    out += (k ? ", " : "") + s.kwargs[k].first + "=" + s.kwargs[k].second;
  return out + ")";
}

void write_dict(std::string& out, const std::vector<TorchStyle>& styles,
                const std::string& indent) {
  out += "{\n";
  for (const TorchStyle& s : styles)
    out += indent + "    \"" + s.module + "\": " + style_call(s) + ",\n";
  out += indent + "}";
}

// A scope's styles as two dicts: each module's first style, then the second styles of the
// modules that have two (applied by a second call, so that their hooks run after).
std::pair<std::vector<TorchStyle>, std::vector<TorchStyle>> passes(
    const std::vector<TorchStyle>& styles) {
  std::pair<std::vector<TorchStyle>, std::vector<TorchStyle>> out;
  for (const TorchStyle& s : styles) {
    const bool seen = std::any_of(out.first.begin(), out.first.end(),
                                  [&](const TorchStyle& f) { return f.module == s.module; });
    (seen ? out.second : out.first).push_back(s);
  }
  return out;
}

constexpr const char* kSecondPass =
    "# Second styles, after the first: SequenceParallel behind a preparation of the same "
    "module.\n";

}  // namespace

std::string torch_plan_python(const TorchParallelPlan& plan) {
  // The imports the plan uses, in the order torchtitan lists them.
  std::string all_text;
  std::vector<std::string> styles;
  const auto uses = [&](const std::vector<TorchStyle>& list) {
    for (const TorchStyle& s : list) {
      all_text += style_call(s);
      if (std::find(styles.begin(), styles.end(), s.style) == styles.end())
        styles.push_back(s.style);
    }
  };
  uses(plan.model);
  for (const auto& l : plan.layers) uses(l);
  std::string placements;
  for (const char* p : {"Partial", "Replicate", "Shard"})
    if (all_text.find(std::string(p) + "(") != std::string::npos)
      placements += (placements.empty() ? "" : ", ") + std::string(p);
  std::string parallel;
  for (const char* s : {"ColwiseParallel", "parallelize_module", "PrepareModuleInput",
                        "PrepareModuleInputOutput", "PrepareModuleOutput", "RowwiseParallel",
                        "SequenceParallel"})
    if (std::string(s) == "parallelize_module" ||
        std::find(styles.begin(), styles.end(), s) != styles.end())
      parallel += std::string("    ") + s + ",\n";
  std::string out =
      "# Generated by symmesh from the placements its planner chose over the tp mesh dim\n"
      "# (tp size " +
      std::to_string(plan.tp_size) + "); module names as in torchtitan's Llama.\n";
  if (!placements.empty()) out += "from torch.distributed.tensor import " + placements + "\n";
  out += "from torch.distributed.tensor.parallel import (\n" + parallel + ")\n\n\n" +
         "def apply_tp(model, tp_mesh):\n";
  for (const std::string& n : plan.notes) out += "    # NOTE: " + n + "\n";
  for (const std::string& n : plan.other_dims) out += "    # Other mesh dims: " + n + "\n";
  for (const std::string& r : plan.replicated) out += "    # replicated over tp: " + r + "\n";
  const auto [model_first, model_second] = passes(plan.model);
  out += "    parallelize_module(model, tp_mesh, ";
  write_dict(out, model_first, "    ");
  out += ")\n";
  if (!model_second.empty()) {
    out += std::string("    ") + kSecondPass + "    parallelize_module(model, tp_mesh, ";
    write_dict(out, model_second, "    ");
    out += ")\n";
  }
  if (plan.layers.empty()) return out;
  if (plan.uniform_layers()) {
    const auto [first, second] = passes(plan.layers.front());
    out += "    for transformer_block in model.layers.values():\n        layer_plan = ";
    write_dict(out, first, "        ");
    out += "\n        parallelize_module(transformer_block, tp_mesh, layer_plan)\n";
    if (!second.empty()) {
      out += std::string("        ") + kSecondPass +
             "        parallelize_module(transformer_block, tp_mesh, ";
      write_dict(out, second, "        ");
      out += ")\n";
    }
    return out;
  }
  // Blocks differ: one plan with every block's modules by full path (and one more with the
  // second styles).
  std::vector<TorchStyle> first, second;
  for (size_t l = 0; l < plan.layers.size(); ++l) {
    auto [f, s] = passes(plan.layers[l]);
    for (auto* list : {&f, &s})
      for (TorchStyle& style : *list) style.module = "layers." + std::to_string(l) + "." + style.module;
    first.insert(first.end(), f.begin(), f.end());
    second.insert(second.end(), s.begin(), s.end());
  }
  out += "    parallelize_module(model, tp_mesh, ";
  write_dict(out, first, "    ");
  out += ")\n";
  if (!second.empty()) {
    out += std::string("    ") + kSecondPass + "    parallelize_module(model, tp_mesh, ";
    write_dict(out, second, "    ");
    out += ")\n";
  }
  return out;
}

}  // namespace symmesh::evaluation
