#include "strategies/layout_search.hpp"

#include <algorithm>
#include <chrono>
#include <map>
#include <memory>
#include <numeric>
#include <tuple>
#include <unordered_map>

#include "core/errors.hpp"
#include "strategies/op_rules.hpp"

namespace symmesh::strategies {
namespace {

// Placements interned as small ids, so a state is a vector of ints.
class PlacementTable {
 public:
  int intern(const Placements& p) {
    auto [it, inserted] = ids_.emplace(to_string(p), static_cast<int>(all_.size()));
    if (inserted) all_.push_back(p);
    return it->second;
  }
  const Placements& at(int id) const { return all_.at(id); }

 private:
  std::unordered_map<std::string, int> ids_;
  std::vector<Placements> all_;
};

// An input redistributed by an op and kept for later readers of the same tensor on the same
// pipeline stage (Megatron-SP all-gathers the attention output once for both MLP
// projections).
struct Copy {
  TensorId tensor = -1;
  int id = -1;    // interned placements
  int stage = 0;  // where it is held
  auto operator<=>(const Copy&) const = default;
};

// One priced way to run an op from given input placements.
struct Option {
  std::shared_ptr<const OpLayout> layout;
  std::vector<std::pair<TensorId, int>> places;  // free parameters and the output, placed
  std::optional<GradientReduction> reduction;
  int64_t transient_bytes = 0;
  int64_t new_static_bytes = 0;  // free parameters placed here
  double cost_us = 0;            // the op's, plus its gradient reduction's
  double reduction_us = 0;       // the gradient reduction's share, on the comm stream
  double update_us = 0;          // the optimizer update of the parameter settled here
  double compute_us = 0;         // the op's local matmul (the rest of its cost moves data)
  uint32_t net_links = 0;        // link classes the op's own redistributions use
  uint32_t reduction_links = 0;  // and its gradient reduction
  // Training: the gradient reductions the parameters placed here will need, foreseen
  // (ranking only), and the parameter whose foreseen reduction this op settles.
  std::vector<std::pair<TensorId, double>> foreseen_us;
  TensorId settles = -1;
  // Inputs redistributed here: the copies stay for later readers of the same tensor.
  std::vector<Copy> copies;
  // The strategy as placements (inputs as computed, output as made), interned: what a later
  // layer's op in the same slot is held to (LayoutSearchOptions::periodic_layers).
  int signature = -1;
};

struct Choice {
  std::shared_ptr<const Choice> parent;
  int op = -1;
  std::shared_ptr<const Option> option;
};

// The two streams of every rank as the lowering runs them: matrix ops one after another
// on `main`; each gradient reduction on `comm` once its gradient is made (after its
// wgrad's main-stream time) and after the reductions before it. A reduction hides under
// main-stream compute, but not under main-stream communication over the same links
// (NVLink, or the NICs between nodes): there the two share the bandwidth, so while both
// run each goes at half speed (fair share) and the overlap is paid by both.
// The optimizer updates run after both, once every gradient is reduced (tail_us). With
// gradient accumulation the streams above are the last micro-batch's; the earlier ones
// run before it, each op once per micro-batch on the main stream alone (earlier_us).
struct Streams {
  double main_us = 0;
  double comm_us = 0;       // when the comm stream is free
  uint32_t comm_links = 0;  // link classes the comm stream's work in flight uses
  double tail_us = 0;       // the optimizer updates, after both streams
  double earlier_us = 0;    // the micro-batches before the last
  double busy_us() const { return std::max(main_us, comm_us); }
  double step_us() const { return earlier_us + busy_us() + tail_us; }
  Streams after(const Option& op, int micro_batches) const {
    const double op_us = op.cost_us - op.reduction_us;
    const double net_us = std::max(0.0, op_us - op.compute_us);
    const double in_flight_us = std::max(0.0, comm_us - main_us);
    const double shared_us = (op.net_links & comm_links) ? std::min(net_us, in_flight_us) : 0.0;
    Streams n{main_us + op_us + shared_us, comm_us + shared_us, comm_links, tail_us + op.update_us,
              earlier_us + (micro_batches - 1) * op_us};
    if (op.reduction_us > 0) {
      if (n.comm_us <= n.main_us) n.comm_links = 0;  // idle when the gradient is made
      n.comm_us = std::max(n.comm_us, n.main_us) + op.reduction_us;
      n.comm_links |= op.reduction_links;
    }
    return n;
  }
};

struct State {
  std::vector<int> placed;  // per tensor: interned placements, -1 while unknown
  double cost_us = 0;       // every op and reduction in series
  Streams streams;          // the same, overlapped as the schedule runs them
  // Per pipeline stage (one without stages): its parameters' bytes, and the tensors (and
  // copies) it holds alive at the last op processed; the peak is over the ops so far, each
  // against its own stage's.
  std::vector<int64_t> static_bytes;
  std::vector<int64_t> live_bytes;
  int64_t peak_bytes = 0;  // static + live + transient, the most so far
  uint64_t key = 0;        // hash of the placements still to be read (see Search::contribution)
  std::shared_ptr<const Choice> history;
  // Foreseen gradient reductions not yet priced: ranking by cost alone would take, in the
  // forward, the layouts whose price comes only in the backward (replicated weights).
  std::vector<std::pair<TensorId, double>> foreseen_us;
  std::vector<Copy> copies;  // also held, sorted
  // periodic_layers: per layer slot, the signature of the strategy chosen (-1: not yet).
  std::vector<int> slot_choice;
};

Placements without_partial(Placements p) {
  for (Placement& x : p)
    if (x.is_partial()) x = Placement::replicate();
  return p;
}

bool has_partial(const Placements& p) {
  return std::any_of(p.begin(), p.end(), [](const Placement& x) { return x.is_partial(); });
}

class Search {
 public:
  // `leanest`: minimise the peak memory instead of the time, with no capacity (what the
  // step needs at least, when nothing fits).
  // `slots_keyed` (periodic_layers): a state's slot choices are part of its future, so
  // states that differ only in them are not merged.
  Search(const DataflowGraph& graph, const DeviceMesh& mesh, const CostModel& model,
         const LayoutSearchOptions& options, bool leanest, bool slots_keyed = false)
      : g_(graph),
        mesh_(mesh),
        model_(model),
        options_(options),
        leanest_(leanest),
        slots_keyed_(slots_keyed) {
    if (leanest_) options_.memory_capacity_bytes = 0;
    const int n = static_cast<int>(g_.tensors.size());
    build_memory_entries();
    last_use_.assign(n, -1);
    seed_of_.assign(n, -1);
    for (TensorId t = 0; t < n; ++t) {
      const GraphTensor& x = g_.tensors[t];
      if (!x.consumers.empty()) last_use_[t] = x.consumers.back();
      if (x.kind == GraphTensor::Kind::seed) seed_of_[x.of] = t;
    }
    // A forward output's placements are read again through its seed.
    for (TensorId t = 0; t < n; ++t)
      if (seed_of_[t] >= 0) last_use_[t] = std::max(last_use_[t], last_use_[seed_of_[t]]);
    has_gradient_.assign(n, false);
    for (const GraphTensor& x : g_.tensors)
      if (x.is_parameter_gradient) has_gradient_[x.of] = true;
    const int ops = static_cast<int>(g_.ops.size());
    slot_of_.assign(ops, -1);
    if (options_.periodic_layers) assign_layer_slots();
    last_.resize(ops);
    for (TensorId t = 0; t < n; ++t)
      if (last_use_[t] >= 0) last_[last_use_[t]].push_back(t);
  }

  // What each stage holds, when (step_memory.hpp): one entry per (tensor, stage holding
  // it), weighted by the micro-batches in flight when the stage keeps it for its backward.
  struct MemoryEntry {
    TensorId tensor = -1;
    int stage = 0;
    Lifetime life;
    MicroBatchesInFlight weight;  // one micro-batch unless kept for the backward
  };
  void build_memory_entries() {
    const int ops = static_cast<int>(g_.ops.size());
    const int stages = std::max(1, g_.stages);
    born_.resize(ops);
    dying_.resize(ops + 1);
    entries_of_.resize(g_.tensors.size());
    for (int s = 0; s < stages; ++s) {
      const std::vector<HeldTensor> held = held_tensors(g_, stages > 1 ? s : -1);
      for (TensorId t = 0; t < static_cast<TensorId>(held.size()); ++t) {
        const Lifetime& life = held[t].life;
        if (life.birth < 0) continue;
        const int e = static_cast<int>(entries_.size());
        entries_.push_back({t, s, life, held[t].weight});
        entries_of_[t].push_back(e);
        if (life.birth < ops) born_[life.birth].push_back(e);
        if (life.death <= ops) dying_[life.death].push_back(e);
      }
    }
  }

  // The lifetime of `t` on `stage` (birth -1 when the stage does not hold it).
  Lifetime life_on(TensorId t, int stage) const {
    for (int e : entries_of_[t])
      if (entries_[e].stage == stage) return entries_[e].life;
    return {};
  }

  int stage_of(int op) const { return g_.stages > 1 ? g_.ops[op].stage : 0; }

  // Ops named "l<k>_<rest>" share the slot <rest> with every other layer's (the model
  // expansion's names: scenario/model_expansion.hpp); other ops have none (-1).
  void assign_layer_slots() {
    std::unordered_map<std::string, int> slots;
    for (size_t i = 0; i < g_.ops.size(); ++i) {
      const std::string& name = g_.ops[i].name;
      size_t k = 1;
      while (k < name.size() && name[k] >= '0' && name[k] <= '9') ++k;
      if (name.empty() || name[0] != 'l' || k == 1 || k >= name.size() || name[k] != '_') continue;
      slot_of_[i] = slots.try_emplace(name.substr(k + 1), static_cast<int>(slots.size()))
                        .first->second;
    }
    slots_ = static_cast<int>(slots.size());
  }

  // The interned signature of a strategy: its inputs' placements as computed and its output's.
  int signature_of(const Candidate& c) {
    std::string text;
    for (const Placements& p : c.input_placements) text += to_string(p) + "|";
    text += "->" + to_string(c.output_placements);
    return signatures_.try_emplace(text, static_cast<int>(signatures_.size())).first->second;
  }

  // nullopt when no layout fits in the GPU's memory.
  std::optional<StepLayout> run() {
    const auto start = std::chrono::steady_clock::now();
    State initial;
    initial.placed.assign(g_.tensors.size(), -1);
    initial.static_bytes.assign(std::max(1, g_.stages), 0);
    initial.live_bytes.assign(std::max(1, g_.stages), 0);
    initial.slot_choice.assign(slots_, -1);
    for (TensorId t = 0; t < static_cast<TensorId>(g_.tensors.size()); ++t) {
      const GraphTensor& x = g_.tensors[t];
      if (!x.declared) continue;
      initial.placed[t] = table_.intern(*x.declared);
      if (x.kind == GraphTensor::Kind::parameter && !x.consumers.empty())
        initial.static_bytes[stage_of(x.consumers.front())] +=
            parameter_static_bytes(g_, t, *x.declared, mesh_);
    }
    for (TensorId t = 0; t < static_cast<TensorId>(g_.tensors.size()); ++t)
      if (initial.placed[t] >= 0 && last_use_[t] >= 0)
        initial.key += contribution(t, initial.placed[t], kPlacedSalt);
    std::vector<State> beam{initial};
    for (int i = 0; i < static_cast<int>(g_.ops.size()); ++i) {
      if (g_.ops[i].output < 0) {  // no tensors, nothing to choose
        pass(beam, i);
        continue;
      }
      beam = advance(beam, i);
      memo_.clear();  // its keys name op i; the beam's history keeps the options it chose
      if (beam.empty()) return std::nullopt;
    }
    std::optional<StepLayout> found = finish(beam);
    if (!found) return std::nullopt;
    StepLayout& out = *found;
    out.stats.seconds =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    out.stats.beam_width = options_.beam_width;
    out.stats.layouts_priced = priced_;
    out.stats.states_expanded = expanded_;
    out.stats.periodic_fallbacks = periodic_fallbacks_;
    return found;
  }

 private:
  bool over_capacity(int64_t bytes) const {
    return options_.memory_capacity_bytes > 0 && bytes > options_.memory_capacity_bytes;
  }

  // Placements input `k` of op `i` is read with in `state`; nullopt for a free parameter.
  std::optional<Placements> read_placements(const State& state, const GraphInput& in) const {
    const int id = placed_after(state, nullptr, in.tensor);
    if (id < 0) {
      if (g_.tensors[in.tensor].kind != GraphTensor::Kind::parameter)
        throw InvalidArgument(
            "tensor '" + g_.tensors[in.tensor].name + "' is read before it is placed",
            "layout search");
      return std::nullopt;
    }
    return as_read(table_.at(id), in);
  }

  // Placements of `in`'s tensor as `in` reads them (a transposed read swaps them; the
  // swap is its own inverse, so this also turns read placements back into stored ones).
  Placements as_read(const Placements& p, const GraphInput& in) const {
    return in.transposed
               ? transposed_placements(p, static_cast<int>(g_.tensors[in.tensor].shape.size()))
               : p;
  }

  // Where a produced tensor must end up, given the strategy's output placements.
  std::optional<Placements> output_target(const GraphTensor& out,
                                          const Placements& produced) const {
    if (out.required) return out.required;
    if (out.is_parameter_gradient || !out.consumers.empty()) return std::nullopt;
    // A step output (or a step input's gradient) ends non-Partial.
    if (has_partial(produced)) return without_partial(produced);
    return std::nullopt;
  }

  // `held`: a slot choice's signature the op is held to (periodic_layers), -1 for none: then
  // only that strategy is priced and offered.
  const std::vector<std::shared_ptr<const Option>>& options_for(const State& state, int i,
                                                                int held = -1) {
    const GraphOp& op = g_.ops[i];
    std::vector<std::optional<Placements>> current;
    std::vector<std::vector<Placements>> copies;  // per input, as read
    std::string key = std::to_string(i);
    if (held >= 0) key += "#" + std::to_string(held);
    for (const GraphInput& in : op.inputs) {
      current.push_back(read_placements(state, in));
      key += "|" + (current.back() ? to_string(*current.back()) : std::string("?"));
      copies.emplace_back();
      for (const Copy& c : state.copies)
        if (c.tensor == in.tensor && c.stage == stage_of(i)) {
          copies.back().push_back(as_read(table_.at(c.id), in));
          key += "+" + std::to_string(c.id);
        }
    }
    const GraphTensor& produced = g_.tensors[op.output];
    if (produced.is_parameter_gradient && produced.consumers.empty())
      key += "|param " + std::to_string(state.placed[produced.of]);  // its reduction's target
    auto hit = memo_.find(key);
    if (hit != memo_.end()) return hit->second;
    auto& options = memo_[key];

    OpProblem base;
    base.op = op.kind;
    base.mesh = mesh_;
    // A causal op's backward products are causal too (FlashAttention's dq, dk, dv).
    base.work_fraction = op.source != nullptr ? op.source->work_fraction() : 1.0;
    base.attrs = op.attrs;
    for (size_t k = 0; k < op.inputs.size(); ++k)
      base.inputs.push_back(
          TensorSpec{g_.shape_read(op.inputs[k]), op.dtype,
                     current[k].value_or(Placements(mesh_.ndim(), Placement::replicate()))});
    const GraphTensor& out = g_.tensors[op.output];
    std::vector<Candidate> candidates =
        expand_candidates(base, op_single_dim_rules(base, /*any_input_sharded=*/true));
    // Each kept candidate's problem: free inputs where it wants them, copies read free,
    // its own output target. Candidates whose problems agree are priced in one call (the
    // model vectorises over candidates).
    struct Pending {
      std::shared_ptr<Option> option;
      OpProblem problem;
      Candidate candidate;
    };
    std::vector<Pending> pending;
    std::map<std::string, std::vector<size_t>> groups;  // problem text -> pending indices
    for (Candidate& c : candidates) {
      if (!c.kept()) continue;
      const int signature = slot_of_[i] >= 0 ? signature_of(c) : -1;
      if (held >= 0 && signature != held) continue;
      Pending item{std::make_shared<Option>(), base, c};
      Option& option = *item.option;
      option.signature = signature;
      OpProblem& problem = item.problem;
      std::string group;
      for (size_t k = 0; k < op.inputs.size(); ++k) {
        if (current[k]) {
          if (std::find(copies[k].begin(), copies[k].end(), c.input_placements[k]) !=
              copies[k].end())
            problem.inputs[k].placements = c.input_placements[k];  // a copy made earlier
        } else {
          problem.inputs[k].placements = c.input_placements[k];
          const GraphInput& in = op.inputs[k];
          const Placements stored = as_read(c.input_placements[k], in);
          option.places.emplace_back(in.tensor, table_.intern(stored));
          option.new_static_bytes += parameter_static_bytes(g_, in.tensor, stored, mesh_);
          if (has_gradient_[in.tensor])  // a bias has none derived: nothing to foresee
            option.foreseen_us.emplace_back(in.tensor, foreseen_reduction_us(op, k, c, stored));
        }
        group += to_string(problem.inputs[k].placements) + "|";
      }
      problem.output_target = output_target(out, c.output_placements);
      if (problem.output_target) group += "->" + to_string(*problem.output_target);
      groups[group].push_back(pending.size());
      pending.push_back(std::move(item));
    }
    for (const auto& [text, members] : groups) {
      std::vector<Candidate> priced;
      for (size_t m : members) priced.push_back(pending[m].candidate);
      try {
        model_.price(pending[members.front()].problem, priced);
      } catch (const Unsupported& e) {
        // No candidate of this group fits in memory (the model throws rather than return
        // them all infinite): e.g. a free weight stored Partial makes every output whole.
        // Other groups — the free inputs placed elsewhere — may fit; what this one needed
        // is said only if none does.
        if (!refusal_.contains(i)) refusal_.emplace(i, e);
        for (Candidate& c : priced) c.cost_us = kInfiniteCost;
      }
      priced_ += static_cast<int64_t>(priced.size());
      for (size_t j = 0; j < members.size(); ++j) pending[members[j]].candidate = priced[j];
    }
    for (Pending& item : pending) {
      const Candidate& priced = item.candidate;
      if (!(priced.cost_us < kInfiniteCost)) continue;
      const OpProblem& problem = item.problem;
      Option& option = *item.option;
      const Placements ends = problem.output_target.value_or(priced.output_placements);
      option.places.emplace_back(op.output, table_.intern(ends));
      option.cost_us = priced.cost_us;
      option.compute_us = priced.compute_us;
      for (int d = 0; d < mesh_.ndim(); ++d) {
        bool moves = ends[d] != priced.output_placements[d];
        for (size_t k = 0; k < op.inputs.size(); ++k)
          moves = moves || problem.inputs[k].placements[d] != priced.input_placements[k][d];
        if (moves) option.net_links |= links(d);
      }
      for (size_t k = 0; k < op.inputs.size(); ++k)
        if (problem.inputs[k].placements != priced.input_placements[k]) {
          option.transient_bytes +=
              local_bytes(problem.inputs[k].shape, op.dtype, priced.input_placements[k], mesh_);
          if (g_.tensors[op.inputs[k].tensor].consumers.size() > 1)
            option.copies.push_back(
                {op.inputs[k].tensor,
                 table_.intern(as_read(priced.input_placements[k], op.inputs[k])), stage_of(i)});
        }
      if (problem.output_target && *problem.output_target != priced.output_placements)
        option.transient_bytes +=
            local_bytes(problem.output_shape(), op.dtype, priced.output_placements, mesh_);
      if (out.is_parameter_gradient && out.consumers.empty()) {
        if (!add_reduction(option, state, op, i, ends)) continue;
        option.settles = out.of;
      }
      option.layout = std::make_shared<const OpLayout>(OpLayout{problem, priced});
      options.push_back(std::move(item.option));
    }
    return options;
  }

  // What reducing the gradient of parameter input `k` of forward op `op` will cost when the
  // parameter is stored at `stored` and the strategy `c` runs: on each mesh dim where the
  // parameter is replicated but another input is sharded (the data is split there), the
  // gradient comes out Partial and is all-reduced.
  double foreseen_reduction_us(const GraphOp& op, size_t k, const Candidate& c,
                               const Placements& stored) const {
    const GraphTensor& param = g_.tensors[op.inputs[k].tensor];
    double us = 0;
    for (int d = 0; d < mesh_.ndim(); ++d) {
      if (!stored[d].is_replicate() || mesh_.shape()[d] == 1) continue;
      bool data_split = false;
      for (size_t j = 0; j < op.inputs.size(); ++j)
        if (j != k && c.input_placements[j][d].is_shard()) data_split = true;
      if (!data_split) continue;
      Placements partial = stored;
      partial[d] = Placement::partial();
      const TensorSpec spec{param.shape, param.dtype, partial};
      for (double step :
           model_.step_costs_us(spec, plan_transitions(partial, stored, mesh_), mesh_))
        us += step;
    }
    return us;
  }

  // The final gradient of a parameter, at `grad`, brought to the parameter's placements.
  bool add_reduction(Option& option, const State& state, const GraphOp& op, int i,
                     const Placements& grad) {
    const GraphTensor& out = g_.tensors[op.output];
    const TensorId param = out.of;
    int id = state.placed[param];
    for (const auto& [t, placed] : option.places)
      if (t == param) id = placed;
    const Placements& placed = table_.at(id);
    // The update runs where the optimizer state is, at the roofline's HBM time (memoised:
    // the beam asks for the same parameter at the same placements many times).
    if (options_.gpu) {
      const uint64_t key = static_cast<uint64_t>(param) << 32 | static_cast<uint32_t>(id);
      auto [at, fresh] = update_us_.try_emplace(key, 0.0);
      if (fresh) at->second = 1e6 * optimizer_update_s(g_, param, placed, mesh_, *options_.gpu);
      option.update_us = at->second;
    }
    // ZeRO: the gradient goes to where the optimizer state is, and the updated shard of
    // the parameter comes back.
    const Placements target = optimizer_state_placements(g_, param, placed, mesh_);
    if (grad == target && target == placed) return true;
    GradientReduction r;
    r.parameter = param;
    r.gradient = op.output;
    r.after_op = i;
    const TensorSpec spec{out.shape, out.dtype, grad};
    try {
      r.redistribution = plan_redistribution(spec, target, mesh_);
    } catch (const InvalidArgument&) {
      return false;  // e.g. a sharded gradient for a Partial parameter: not this strategy
    }
    r.step_cost_us = model_.step_costs_us(spec, plan_transitions(grad, target, mesh_), mesh_);
    if (target != placed) {
      const TensorSpec state{out.shape, out.dtype, target};
      r.parameter_gather = plan_redistribution(state, placed, mesh_);
      r.gather_step_cost_us =
          model_.step_costs_us(state, plan_transitions(target, placed, mesh_), mesh_);
    }
    option.cost_us += r.cost_us();
    option.reduction_us = r.cost_us();
    const auto uses_links = [&](const Redistribution& moves) {
      for (const RedistributionStep& step : moves.steps)
        if (step.collective != CollectiveKind::local_chunk &&
            step.collective != CollectiveKind::none)
          option.reduction_links |= links(step.mesh_dim);
    };
    uses_links(r.redistribution);
    if (r.parameter_gather) uses_links(*r.parameter_gather);
    option.reduction = std::move(r);
    return true;
  }

  // A successor of a beam state, not materialised: the beam keeps few of many.
  struct Successor {
    int parent = -1;
    std::shared_ptr<const Option> option;
    double cost_us = 0, rank_us = 0;
    Streams streams;
    int64_t static_bytes = 0, live_bytes = 0;  // op i's stage's, after it
    int64_t peak_bytes = 0;
    uint64_t key = 0;
  };

  // A placed tensor still to be read contributes to a state's key; two states with the
  // same key have the same future (up to hash collisions, 2^-64 per pair).
  // Placements that differ only on mesh dims of size 1 hold the same data (a shard of one,
  // a partial sum of one), so they key alike: otherwise on a 8x1 mesh the beam fills with
  // copies of one layout and loses the better ones.
  uint64_t contribution(TensorId t, int id, uint64_t salt) {
    return mixed(t, canonical_id(id), salt);
  }
  static uint64_t mixed(int high, int low, uint64_t salt) {
    uint64_t x = (static_cast<uint64_t>(high) << 32 | static_cast<uint32_t>(low)) ^ salt;
    x ^= x >> 33;  // splitmix-style finaliser
    x *= 0xff51afd7ed558ccdULL;
    x ^= x >> 33;
    x *= 0xc4ceb9fe1a85ec53ULL;
    return x ^ (x >> 33);
  }
  static constexpr uint64_t kPlacedSalt = 0x9e3779b97f4a7c15ULL;
  static constexpr uint64_t kCopySalt = 0x632be59bd9b4e019ULL;
  static constexpr uint64_t kSlotSalt = 0x2545f4914f6cdd1dULL;

  // The link class mesh dim d's collectives are bound by: NVLink inside a node (bit 0) or
  // the NICs between nodes (bit 1), mesh ranks laid on GPUs node-major. Without the node
  // size every dim shares one class.
  uint32_t links(int d) const {
    if (options_.gpus_per_node <= 0) return 1;
    int64_t stride = 1;
    for (int e = d + 1; e < mesh_.ndim(); ++e) stride *= mesh_.shape()[e];
    return stride * mesh_.shape()[d] > options_.gpus_per_node ? 2 : 1;
  }

  int canonical_id(int id) {
    if (id >= static_cast<int>(canonical_.size())) canonical_.resize(id + 1, -1);
    if (canonical_[id] < 0) {
      Placements p = table_.at(id);
      for (int d = 0; d < mesh_.ndim(); ++d)
        if (mesh_.shape()[d] == 1) p[d] = Placement::replicate();
      const int c = table_.intern(p);
      if (c >= static_cast<int>(canonical_.size())) canonical_.resize(c + 1, -1);
      canonical_[id] = c;
      canonical_[c] = c;
    }
    return canonical_[id];
  }

  int64_t bytes_of(TensorId t, int id) {
    const int64_t key = static_cast<int64_t>(t) << 32 | id;
    auto it = bytes_.find(key);
    if (it == bytes_.end()) {
      const GraphTensor& x = g_.tensors[t];
      it = bytes_.emplace(key, local_bytes(x.shape, x.dtype, table_.at(id), mesh_)).first;
    }
    return it->second;
  }

  // The placements of `t` after `option` runs on `s` (-1 while unknown).
  int placed_after(const State& s, const Option* option, TensorId t) const {
    if (option)
      for (const auto& [u, id] : option->places)
        if (u == t || (seed_of_[u] >= 0 && seed_of_[u] == t)) return id;
    int id = s.placed[t];
    if (id < 0 && g_.tensors[t].kind == GraphTensor::Kind::seed) {
      const TensorId of = g_.tensors[t].of;
      if (option)
        for (const auto& [u, placed] : option->places)
          if (u == of) return placed;
      id = s.placed[of];
    }
    return id;
  }

  // Live bytes (of op i's stage) and key of `s` moved past op `i` with `option` (none: an op
  // that places nothing), from the parent's figures: what dies or stops being read at i
  // leaves, what is born or placed at i arrives. (What another stage holds dies at i only
  // when that stage's last op was i − 1: settle_other_stages.)
  void move_past(const State& s, const Option* option, int i, int64_t& live, uint64_t& key) {
    const int stage = stage_of(i);
    live = s.live_bytes[stage];
    key = s.key;
    for (int e : dying_[i])
      if (entries_[e].stage == stage) live -= entry_bytes(s, e);
    for (int e : born_[i]) {
      const int id = placed_after(s, option, entries_[e].tensor);
      if (id >= 0) live += entries_[e].weight.of(bytes_of(entries_[e].tensor, id));
    }
    for (TensorId t : last_[i])
      if (s.placed[t] >= 0) key -= contribution(t, s.placed[t], kPlacedSalt);
    for (const Copy& c : s.copies)
      if (last_use_[c.tensor] == i) key -= contribution(c.tensor, c.id, kCopySalt);
    if (!option) return;
    const auto change = [&](TensorId t, int id) {
      if (last_use_[t] <= i) return;
      if (s.placed[t] >= 0) key -= contribution(t, s.placed[t], kPlacedSalt);
      key += contribution(t, id, kPlacedSalt);
    };
    for (const auto& [t, id] : option->places) {
      change(t, id);
      if (seed_of_[t] >= 0) change(seed_of_[t], id);
    }
    for (const Copy& copy : option->copies) {
      if (std::find(s.copies.begin(), s.copies.end(), copy) != s.copies.end()) continue;
      if (life_on(copy.tensor, copy.stage).alive_at(i)) live += bytes_of(copy.tensor, copy.id);
      if (last_use_[copy.tensor] > i) key += contribution(copy.tensor, copy.id, kCopySalt);
    }
  }

  // What entry e holds in `s` (its tensor at its placements, weighted) and the copies of
  // its tensor its stage holds.
  int64_t entry_bytes(const State& s, int e) {
    const MemoryEntry& m = entries_[e];
    int64_t bytes = 0;
    const int id = placed_after(s, nullptr, m.tensor);
    if (id >= 0) bytes += m.weight.of(bytes_of(m.tensor, id));
    for (const Copy& c : s.copies)
      if (c.tensor == m.tensor && c.stage == m.stage) bytes += bytes_of(c.tensor, c.id);
    return bytes;
  }

  // Entries of other stages than op i's that die at i leave their stage's live bytes.
  void settle_other_stages(State& s, int i) {
    for (int e : dying_[i])
      if (entries_[e].stage != stage_of(i)) s.live_bytes[entries_[e].stage] -= entry_bytes(s, e);
  }

  State materialise(const State& s, const Successor& n, int i) {
    const Option& option = *n.option;
    State out{s.placed,     n.cost_us,
              n.streams,    s.static_bytes,
              s.live_bytes, n.peak_bytes,
              n.key,        std::make_shared<const Choice>(Choice{s.history, i, n.option})};
    out.copies = s.copies;
    out.slot_choice = s.slot_choice;
    if (const int slot = slot_of_[i]; slot >= 0 && out.slot_choice[slot] < 0)
      out.slot_choice[slot] = option.signature;
    settle_other_stages(out, i);  // before the copies change: theirs are the parent's
    out.static_bytes[stage_of(i)] = n.static_bytes;
    out.live_bytes[stage_of(i)] = n.live_bytes;
    for (const auto& [t, id] : option.places) {
      out.placed[t] = id;
      if (seed_of_[t] >= 0) out.placed[seed_of_[t]] = id;
    }
    for (const auto& copy : option.copies)
      if (std::find(out.copies.begin(), out.copies.end(), copy) == out.copies.end())
        out.copies.push_back(copy);
    // A copy is read until its tensor's last use and held until the tensor dies (its
    // bytes leave the live count then, in move_past).
    out.copies.erase(std::remove_if(out.copies.begin(), out.copies.end(),
                                    [&](const Copy& c) {
                                      const Lifetime life = life_on(c.tensor, c.stage);
                                      return last_use_[c.tensor] <= i &&
                                             (life.birth < 0 || life.death <= i);
                                    }),
                     out.copies.end());
    std::sort(out.copies.begin(), out.copies.end());
    out.foreseen_us = s.foreseen_us;
    out.foreseen_us.insert(out.foreseen_us.end(), option.foreseen_us.begin(),
                           option.foreseen_us.end());
    if (option.settles >= 0)
      out.foreseen_us.erase(
          std::remove_if(out.foreseen_us.begin(), out.foreseen_us.end(),
                         [&](const auto& f) { return f.first == option.settles; }),
          out.foreseen_us.end());
    return out;
  }

  static double foreseen_sum(const State& s, const Option& o) {
    double sum = 0;
    for (const auto& f : s.foreseen_us)
      if (f.first != o.settles) sum += f.second;
    for (const auto& f : o.foreseen_us) sum += f.second;
    return sum;
  }

  // Past an op with no tensors (put_signal, collectives): only lifetimes move, and a
  // barrier waits for the reductions issued before it.
  void pass(std::vector<State>& beam, int i) {
    const bool barrier = g_.ops[i].source && g_.ops[i].source->kind == OpKind::barrier;
    for (State& s : beam) {
      int64_t live = 0;
      move_past(s, nullptr, i, live, s.key);
      settle_other_stages(s, i);
      s.live_bytes[stage_of(i)] = live;
      if (barrier) s.streams.main_us = s.streams.comm_us = s.streams.busy_us();
    }
  }

  std::vector<State> advance(const std::vector<State>& beam, int i) {
    std::vector<Successor> next;
    const int slot = slot_of_[i];
    for (int p = 0; p < static_cast<int>(beam.size()); ++p) {
      const State& s = beam[p];
      const int held = slot >= 0 ? s.slot_choice[slot] : -1;
      const auto* offered = &options_for(s, i, held);
      if (held >= 0 && offered->empty()) {  // the slot's strategy is impossible here
        ++periodic_fallbacks_;
        offered = &options_for(s, i);
      }
      for (const auto& option : *offered) {
        ++expanded_;
        Successor n;
        n.parent = p;
        n.option = option;
        n.static_bytes = s.static_bytes[stage_of(i)] + option->new_static_bytes;
        if (over_capacity(n.static_bytes)) {
          ++dropped_for_memory_;
          continue;
        }
        // In series: the op once per micro-batch, its reduction and update once.
        n.cost_us = s.cost_us + option->cost_us + option->update_us +
                    (g_.micro_batches - 1) * (option->cost_us - option->reduction_us);
        // Ranked by the overlapped time, plus the reductions foreseen for parameters placed
        // so far (counted whole: how much of them the backward will hide is not known yet).
        n.streams = s.streams.after(*option, g_.micro_batches);
        n.rank_us = n.streams.step_us() + foreseen_sum(s, *option);
        move_past(s, option.get(), i, n.live_bytes, n.key);
        if (slots_keyed_ && slot >= 0 && s.slot_choice[slot] < 0)
          n.key += mixed(slot, option->signature, kSlotSalt);
        n.peak_bytes =
            std::max(s.peak_bytes, n.static_bytes + n.live_bytes + option->transient_bytes);
        if (over_capacity(n.peak_bytes)) {
          ++dropped_for_memory_;
          continue;
        }
        next.push_back(std::move(n));
      }
    }
    if (next.empty()) {
      if (dropped_for_memory_ > 0) return {};  // nothing fits: the caller asks for the leanest
      // Every strategy of the op was refused for memory by the model: say what it needed.
      if (const auto refused = refusal_.find(i); refused != refusal_.end()) throw refused->second;
      throw Unsupported("op '" + g_.ops[i].name + "' has no strategy left",
                        g_.ops[i].source ? g_.ops[i].source->where.to_string() : "layout search");
    }
    const auto better = [this](const Successor& a, const Successor& b) {
      return leanest_
                 ? std::make_pair(a.peak_bytes, a.rank_us) < std::make_pair(b.peak_bytes, b.rank_us)
                 : a.rank_us < b.rank_us;
    };
    std::stable_sort(next.begin(), next.end(), better);
    // Merge successors with the same future (the better kept), then keep the best. With a
    // memory limit, a quarter of the beam goes to the leanest, so that layouts that pay
    // more to need less (weights sharded over dp) survive until the peak.
    std::vector<const Successor*> merged;
    std::unordered_map<uint64_t, bool> seen;
    for (const Successor& n : next)
      if (seen.emplace(n.key, true).second) merged.push_back(&n);
    const int width = options_.beam_width;
    std::vector<const Successor*> kept;
    if (static_cast<int>(merged.size()) <= width) {
      kept = merged;
    } else {
      const int lean = options_.memory_capacity_bytes > 0 ? width / 4 : 0;
      kept.assign(merged.begin(), merged.begin() + (width - lean));
      std::vector<const Successor*> rest(merged.begin() + (width - lean), merged.end());
      std::stable_sort(rest.begin(), rest.end(), [](const Successor* a, const Successor* b) {
        return a->peak_bytes < b->peak_bytes;
      });
      for (int k = 0; k < lean && k < static_cast<int>(rest.size()); ++k) kept.push_back(rest[k]);
      std::stable_sort(kept.begin(), kept.end(),
                       [&](const Successor* a, const Successor* b) { return better(*a, *b); });
    }
    std::vector<State> out;
    out.reserve(kept.size());
    for (const Successor* n : kept) out.push_back(materialise(beam[n->parent], *n, i));
    return out;
  }

  StepLayout layout_of(const State& s) const {
    StepLayout out;
    out.ops.resize(g_.ops.size());
    out.transient_bytes.assign(g_.ops.size(), 0);
    out.placements.resize(g_.tensors.size());
    for (TensorId t = 0; t < static_cast<TensorId>(g_.tensors.size()); ++t)
      out.placements[t] = s.placed[t] >= 0 ? table_.at(s.placed[t])
                                           : Placements(mesh_.ndim(), Placement::replicate());
    for (const Choice* c = s.history.get(); c; c = c->parent.get()) {
      out.ops[c->op] = *c->option->layout;
      out.transient_bytes[c->op] = c->option->transient_bytes;
      if (c->option->reduction) out.reductions.push_back(*c->option->reduction);
    }
    std::reverse(out.reductions.begin(), out.reductions.end());
    out.serial_cost_us = s.cost_us;
    out.step_cost_us = s.streams.step_us();
    out.stage_memory = stage_memories(g_, out.placements, out.transient_bytes, mesh_);
    out.memory = busiest_stage(out.stage_memory);
    out.fits = !over_capacity(out.memory.peak_bytes());
    return out;
  }

  // The first (cheapest, or leanest) finished state; its exact peak may still exceed
  // the capacity when the bound seen during the search did not (then the next is tried).
  std::optional<StepLayout> finish(const std::vector<State>& beam) const {
    for (const State& s : beam) {
      StepLayout layout = layout_of(s);
      if (layout.fits) return layout;
    }
    return std::nullopt;
  }

  const DataflowGraph& g_;
  const DeviceMesh& mesh_;
  const CostModel& model_;
  LayoutSearchOptions options_;
  bool leanest_ = false;
  bool slots_keyed_ = false;
  PlacementTable table_;
  std::vector<MemoryEntry> entries_;
  std::vector<std::vector<int>> entries_of_;  // by tensor
  std::vector<bool> has_gradient_;            // by parameter: a wgrad derives its gradient
  // By op index: tensors born there, dying there (alive before, not at it), read there
  // for the last time.
  std::vector<std::vector<int>> born_, dying_;  // by op: memory entries
  std::vector<std::vector<TensorId>> last_;
  std::unordered_map<int64_t, int64_t> bytes_;  // (tensor, placements id) -> local bytes
  std::vector<int> canonical_;  // placements id -> id with size-1 mesh dims replicated
  std::vector<int> last_use_;
  std::unordered_map<uint64_t, double> update_us_;  // by (parameter, placements id)
  std::vector<TensorId> seed_of_;
  std::map<std::string, std::vector<std::shared_ptr<const Option>>> memo_;
  int64_t priced_ = 0;
  int64_t expanded_ = 0;
  int64_t dropped_for_memory_ = 0;
  int64_t periodic_fallbacks_ = 0;
  std::vector<int> slot_of_;  // by op: its layer slot (periodic_layers), -1 for none
  int slots_ = 0;
  std::unordered_map<std::string, int> signatures_;  // strategy text -> signature
  // By op: the first pricing the model refused outright (no candidate of a group fits).
  std::map<int, Unsupported> refusal_;
};

}  // namespace

double GradientReduction::cost_us() const {
  return std::accumulate(step_cost_us.begin(), step_cost_us.end(), 0.0) +
         std::accumulate(gather_step_cost_us.begin(), gather_step_cost_us.end(), 0.0);
}

StepLayout search_layout(const DataflowGraph& graph, const DeviceMesh& mesh, const CostModel& model,
                         const LayoutSearchOptions& options) {
  if (options.beam_width < 1)
    throw InvalidArgument("beam width " + std::to_string(options.beam_width) + " must be >= 1",
                          "layout search");
  std::optional<StepLayout> found = Search(graph, mesh, model, options, false).run();
  // Periodic: merging states that share a future but not their slot choices keeps the beam's
  // other decisions diverse (a tied embedding's table), not merging them keeps the layers'
  // plans diverse; neither is always better (Llama 3.2 1B, 2 layers: +3.8 % and +17 % over
  // the unconstrained search; Llama 3.1 8B on [dp 2, tp 8]: +0.8 % and −0.5 %), so both run
  // and the cheaper step that fits is taken — together still a fraction of the unconstrained
  // search (0.7 + 1.2 s against 7.3 s for the 8B step).
  if (options.periodic_layers)
    if (auto keyed = Search(graph, mesh, model, options, false, true).run()) {
      const LayoutSearchStats first = found ? found->stats : LayoutSearchStats{};
      if (!found || keyed->step_cost_us < found->step_cost_us) found = std::move(keyed);
      found->stats.layouts_priced += first.layouts_priced;
      found->stats.states_expanded += first.states_expanded;
      found->stats.periodic_fallbacks += first.periodic_fallbacks;
      found->stats.seconds += first.seconds;
    }
  if (found) return std::move(*found);
  // Nothing fits: the leanest layout found, with its need, marked as not fitting.
  StepLayout leanest = *Search(graph, mesh, model, options, true).run();
  leanest.fits = options.memory_capacity_bytes <= 0 ||
                 leanest.memory.peak_bytes() <= options.memory_capacity_bytes;
  return leanest;
}

}  // namespace symmesh::strategies
