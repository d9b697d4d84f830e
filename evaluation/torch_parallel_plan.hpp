#pragma once
// A model scenario's chosen layout as the PyTorch tensor-parallel plan it stands for: the
// `parallelize_module` plan of torchtitan's Llama (module paths tok_embeddings,
// layers.N.attention_norm, layers.N.attention.wq/wk/wv/wo, layers.N.ffn_norm,
// layers.N.feed_forward.w1/w2/w3, norm, output) with ColwiseParallel, RowwiseParallel,
// SequenceParallel and PrepareModuleInput styles, read off the placements the planner
// chose over the mesh's `tp` dim.
//
// How symmesh's generated ops (scenario/model_expansion.hpp) map to modules: embed →
// tok_embeddings; l<l>_norm1 → attention_norm; l<l>_qkv (one fused weight) → wq, wk and
// wv alike; l<l>_out → wo; l<l>_norm2 → ffn_norm; l<l>_gate → w1, l<l>_up → w3 (a GELU MLP's
// up → w1), l<l>_down → w2; norm → norm; output → output.
//
// Placements: symmesh's weights are [in, out] (a @ w), a torch Linear's are [out, in], so a
// weight split over its columns, S(1), is ColwiseParallel and over its rows, S(0),
// RowwiseParallel (a `linear` reads [out, in] as torch does: S(0) colwise). Activations
// are [tokens, features] in symmesh and [batch, seq, features] in torch: S(0) over tp, the
// tokens (Megatron's sequence parallelism), is Shard(1); S(1), the features, Shard(-1).
//
// torchtitan's Llama plan (pytorch/torchtitan, torchtitan/models/llama3/infra/parallelize.py,
// apply_tp) is what the Megatron layout with sequence parallelism gives: wq/wk/wv/w1/w3
// colwise behind a PrepareModuleInput that all-gathers the Shard(1) input, wo/w2 rowwise
// with output_layouts=Shard(1), the norms SequenceParallel, the embedding rowwise over the
// vocabulary, the output projection colwise (use_local_output=False when its logits stay
// sharded: loss parallel).
//
// A linear whose weight the planner keeps whole and multiplies by token rows (each tp rank
// its own rows, as the norms do under sequence parallelism) is SequenceParallel too: it
// makes the weight a replicated DTensor, so that its gradient, on each rank a sum over that
// rank's rows only, is summed over tp. When such an input arrives otherwise (attention's
// output split by heads) or the output is read otherwise (attention reading q/k/v by heads),
// a PrepareModuleInput / PrepareModuleOutput / PrepareModuleInputOutput moves it first, and
// SequenceParallel is the module's second style (`then`), applied by a second
// parallelize_module call so that its hooks run after the preparation's.
//
// What torchtitan's modules cannot run as planned becomes a note rather than a style: a
// partial sum a module would hand on unreduced (its block adds plain tensors), a whole
// weight on an input that arrives split but is computed whole, attention over sequences
// split by tp. Any op the planner also splits over another mesh dim (dp) other than as
// data parallelism does (activations by tokens, weights whole) is listed in other_dims: a
// tp plan says nothing of those dims, but runs as written.
//
// Torch holds every activation between modules as a plain tensor, so whatever the planner
// redistributes between a module and a tensor op (the residual add, SwiGLU, attention) is
// the module's own input or output layout.
#include <map>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "core/placement.hpp"
#include "core/scenario.hpp"
#include "strategies/workload_lowering.hpp"

namespace symmesh::evaluation {

// One generated op's placements over the tp mesh dim, as the planner chose them.
struct TpOpPlacements {
  OpKind kind = OpKind::mm;
  std::vector<Placement> arriving;  // per input (ATen order): as its producer left it
  std::vector<Placement> computed;  // per input: as the chosen strategy computes with it
  // Where the output goes: its target if it has one, else where the strategy leaves it, and
  // for a partial sum where its first reader takes it (the reduction is the module's).
  Placement output = Placement::replicate();
  int lhs = 0, rhs = 1;  // positions of a and b among the inputs
  // Where the output's first forward reader computes with it (after its redistribution):
  // unset when nothing reads it.
  std::optional<Placement> read_as = std::nullopt;
  // Over the mesh's other dims (dp): empty when the op splits as data parallelism does
  // (activations by tokens, weights whole), else what it does instead ("input 1 at S(1)
  // over dp").
  std::string other_dims{};
};

// A model step's layout over tp, by generated op name (embed, l0_qkv, …, norm, output).
struct ModelTpLayout {
  int tp_size = 1;
  int layers = 0;
  std::map<std::string, TpOpPlacements> ops;
};

// One entry of a parallelize_module plan: the module (relative to what the plan is applied
// to), the ParallelStyle class and its non-default keyword arguments as Python source
// ("Shard(1)", "(Shard(1), None)", "False"), in the order they are written. A module may
// appear twice in a list: its second style is applied after the first, by a second
// parallelize_module call (a dict holds one style per module).
struct TorchStyle {
  std::string module;
  std::string style;
  std::vector<std::pair<std::string, std::string>> kwargs;
  bool operator==(const TorchStyle&) const = default;
};

struct TorchParallelPlan {
  int tp_size = 1;
  std::vector<TorchStyle> model;  // applied to the model: tok_embeddings, norm, output
  std::vector<std::vector<TorchStyle>> layers;  // per transformer block, relative to it
  // Modules whose weight the planner left whole on every tp rank, full paths (no style, or
  // only a PrepareModuleOutput that cuts a whole output as the next module reads it).
  std::vector<std::string> replicated;
  // Choices no ParallelStyle expresses (e.g. a colwise weight computed on a sharded input),
  // one sentence each naming the module; empty for a plan torch can run as written.
  std::vector<std::string> notes;
  // How the planner splits ops over the mesh's other dims (dp) where data parallelism would
  // not (activations by tokens, weights whole): the plan still runs as written, but torch's
  // data parallelism will not reproduce that part of the layout. One sentence, or empty.
  std::vector<std::string> other_dims;
  // Every block's plan is the same (then the Python source loops over model.layers).
  bool uniform_layers() const;
};

// The placements over `scenario`'s tp mesh dim of every forward op of a planned model step.
// Throws InvalidArgument (where the scenario's path) for a scenario without `model:` or
// without a tp dim.
ModelTpLayout model_tp_layout(const Scenario& scenario, const strategies::PlannedWorkload& planned);

// The torch plan of a layout (the header comment says how). Pure: no planning.
TorchParallelPlan torch_parallel_plan(const ModelTpLayout& layout);

// Plans the scenario's step (its cost model, as simulate does; nothing is simulated) and
// derives its torch plan.
TorchParallelPlan torch_parallel_plan(const Scenario& scenario);

// {"tp_size", "model": {module: {"style", "kwargs": {name: source}}}, "layers": [...],
//  "replicated", "notes", "other_dims"}: plain data for Python, modules and kwargs in the plan's order. A
// module's second style is its entry's "then": {"style", "kwargs"}.
nlohmann::ordered_json torch_plan_json(const TorchParallelPlan& plan);

// The Python source of a function `apply_tp(model, tp_mesh)` that applies the plan with
// torch.distributed.tensor.parallel.parallelize_module, as torchtitan's apply_tp does.
// Second styles come in a second parallelize_module call on the same scope.
std::string torch_plan_python(const TorchParallelPlan& plan);

}  // namespace symmesh::evaluation
