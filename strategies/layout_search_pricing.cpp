// Pricing an op's strategies from a beam state (layout_search_beam.hpp).
#include "strategies/layout_search_beam.hpp"

namespace symmesh::strategies::layout_search_detail {

int Search::signature_of(const Candidate& c) {
  std::string text;
  for (const Placements& p : c.input_placements) text += to_string(p) + "|";
  text += "->" + to_string(c.output_placements);
  return signatures_.try_emplace(text, static_cast<int>(signatures_.size())).first->second;
}

bool Search::over_capacity(int64_t bytes) const {
  return options_.memory_capacity_bytes > 0 && bytes > options_.memory_capacity_bytes;
}

std::optional<Placements> Search::read_placements(const State& state, const GraphInput& in) const {
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

Placements Search::as_read(const Placements& p, const GraphInput& in) const {
  return in.transposed
             ? transposed_placements(p, static_cast<int>(g_.tensors[in.tensor].shape.size()))
             : p;
}

std::optional<Placements> Search::output_target(const GraphTensor& out,
                                                const Placements& produced) const {
  if (out.required) return out.required;
  if (out.is_parameter_gradient || !out.consumers.empty()) return std::nullopt;
  // A step output (or a step input's gradient) ends non-Partial.
  if (has_partial(produced)) return without_partial(produced);
  return std::nullopt;
}

const std::vector<std::shared_ptr<const Option>>& Search::options_for(const State& state, int i,
                                                                      int held) {
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
    double inputs_us = 0;  // the activation inputs' foreseen gradient reductions
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
      if (g_.zero_stage == 3 &&
          g_.tensors[op.inputs[k].tensor].kind == GraphTensor::Kind::parameter) {
        const Placements stored = as_read(problem.inputs[k].placements, op.inputs[k]);
        add_gather(option, op.inputs[k].tensor, stored);
        option.gather_unit = gather_unit_of(g_, i);
        // Its weights gathered while it runs, and the next reader's arriving (taken as
        // alike): FSDP's one unit ahead.
        option.transient_bytes +=
            2 * local_bytes(g_.tensors[op.inputs[k].tensor].shape, op.dtype, stored, mesh_);
      }
      if (op.pass == Pass::forward && current[k] && has_input_gradient_[op.inputs[k].tensor])
        inputs_us += foreseen_input_reduction_us(op, k, c, *current[k]);
      group += to_string(problem.inputs[k].placements) + "|";
    }
    if (inputs_us > 0) option.foreseen_us.emplace_back(foreseen_input_key(op), inputs_us);
    for (const auto& f : option.foreseen_us) option.foreseen_total_us += f.second;
    if (op.pass == Pass::dgrad) option.settles_input = foreseen_input_key(op);
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
    option.cost_us = priced.cost_us + option.gather_link_us[0] + option.gather_link_us[1];
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

std::vector<int> Search::broadcast_dims(const GraphOp& op, size_t k, const Candidate& c,
                                       const Placements& held) const {
  std::vector<int> dims;
  for (int d = 0; d < mesh_.ndim(); ++d) {
    if (!held[d].is_replicate() || mesh_.shape()[d] == 1) continue;
    for (size_t j = 0; j < op.inputs.size(); ++j)
      if (j != k && c.input_placements[j][d].is_shard()) {
        dims.push_back(d);
        break;
      }
  }
  return dims;
}

double Search::moves_us(const Shape& shape, DType dtype, const Placements& from,
                        const Placements& to) const {
  const TensorSpec spec{shape, dtype, from};
  double us = 0;
  for (double step : model_.step_costs_us(spec, plan_transitions(from, to, mesh_), mesh_))
    us += step;
  return us;
}

std::vector<double> Search::bucket_share_us(const TensorSpec& spec, const Redistribution& moves,
                                            const Placements& to) const {
  return buckets_.share_costs_us(
      moves, spec.dtype,
      model_.step_costs_us(spec, plan_transitions(spec.placements, to, mesh_), mesh_));
}

double Search::foreseen_reduction_us(const GraphOp& op, size_t k, const Candidate& c,
                                     const Placements& stored) const {
  const GraphTensor& param = g_.tensors[op.inputs[k].tensor];
  double us = 0;
  for (int d : broadcast_dims(op, k, c, stored)) {
    Placements partial = stored;
    partial[d] = Placement::partial();
    // At its share of its gradient bucket, as add_reduction will price it; a move the
    // planner cannot make at the cost model's price of it as laid out.
    const TensorSpec spec{param.shape, param.dtype, partial};
    std::vector<double> share_us;
    try {
      share_us = bucket_share_us(spec, plan_redistribution(spec, stored, mesh_), stored);
    } catch (const InvalidArgument&) {
      share_us = model_.step_costs_us(spec, plan_transitions(partial, stored, mesh_), mesh_);
    }
    us += std::accumulate(share_us.begin(), share_us.end(), 0.0);
  }
  return us;
}

double Search::foreseen_input_reduction_us(const GraphOp& op, size_t k, const Candidate& c,
                                           const Placements& arrives) const {
  const Placements& read = c.input_placements[k];
  const Shape shape = g_.shape_read(op.inputs[k]);
  double us = 0;
  for (int d : broadcast_dims(op, k, c, read)) {
    // Only where the forward gathers the input between nodes (Shard there before the op):
    // the backward then reduce-scatters its gradient back over the NICs, as an
    // all-gather's backward does. Foreseen more widely, it moved the beam to slower
    // layouts, the alternatives' own backward costs not being foreseen alike (Llama 3.1
    // 8B on one node, [dp 4, tp 2]: 429 ms simulated became 495 ms; without the gather
    // condition, tp 32 over 4 nodes: 769 ms became 858 ms).
    if (links(d) < 2 || !arrives[d].is_shard()) continue;
    // The least the backward can do with a Partial gradient: reduce-scatter it over d
    // along a dim that divides (all-reduce when none does).
    Placements partial = read;
    partial[d] = Placement::partial();
    Placements target = read;
    for (int dim = 0; dim < static_cast<int>(shape.size()); ++dim) {
      int64_t local = shape[dim];
      for (int e = 0; e < mesh_.ndim(); ++e)
        if (read[e].is_shard(dim)) local /= mesh_.shape()[e];
      if (local % mesh_.shape()[d] == 0) {
        target[d] = Placement::shard(dim);
        break;
      }
    }
    us += moves_us(shape, op.dtype, partial, target);
  }
  return us;
}

int Search::foreseen_input_key(const GraphOp& op) const {
  if (op.source == nullptr) return -1;
  const auto at = forward_index_.find(op.source);
  return at == forward_index_.end() ? -1 : static_cast<int>(g_.tensors.size()) + at->second;
}

void Search::add_gather(Option& option, TensorId param, const Placements& stored) {
  const uint64_t key =
      static_cast<uint64_t>(param) << 32 | static_cast<uint32_t>(table_.intern(stored));
  auto [at, fresh] = gather_us_.try_emplace(key, std::array<double, 2>{0, 0});
  if (fresh) {
    const GraphTensor& t = g_.tensors[param];
    const Placements state = optimizer_state_placements(g_, param, stored, mesh_);
    if (state != stored) {
      const TensorSpec spec{t.shape, t.dtype, state};
      const Redistribution moves = plan_redistribution(spec, stored, mesh_);
      const std::vector<double> costs =
          model_.step_costs_us(spec, plan_transitions(state, stored, mesh_), mesh_);
      for (size_t k = 0; k < moves.steps.size() && k < costs.size(); ++k)
        if (moves.steps[k].collective != CollectiveKind::local_chunk &&
            moves.steps[k].collective != CollectiveKind::none)
          at->second[link_class_index(links(moves.steps[k].mesh_dim))] += costs[k];
    }
  }
  option.gather_link_us[0] += at->second[0];
  option.gather_link_us[1] += at->second[1];
}

bool Search::add_reduction(Option& option, const State& state, const GraphOp& op, int i,
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
  // ZeRO: the gradient goes to where the optimizer state is, and (ZeRO-1 and 2) the updated
  // shard of the parameter comes back; ZeRO-3 keeps the shard and gathers it per use.
  const Placements target = optimizer_state_placements(g_, param, placed, mesh_);
  // (ZeRO-3 gathers no parameter after the update: a gradient made at the state's
  // placements needs nothing.)
  if (grad == target && (target == placed || g_.zero_stage >= 3)) return true;
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
  // Each at its share of its gradient bucket's collectives (gradient_buckets.hpp).
  r.step_cost_us = bucket_share_us(spec, r.redistribution, target);
  if (target != placed && g_.zero_stage < 3) {
    const TensorSpec state{out.shape, out.dtype, target};
    r.parameter_gather = plan_redistribution(state, placed, mesh_);
    r.gather_step_cost_us = bucket_share_us(state, *r.parameter_gather, placed);
  }
  // ZeRO-2 reduce-scatters every micro-batch's gradients (DeepSpeed's stage 2), so its
  // reduction runs in each; its gather runs once and is counted with the update, after both
  // streams (the schedule runs it under the next forward: the price's and the simulator's
  // rule). Otherwise both run once, on the comm stream.
  const bool every_micro_batch = g_.reduces_every_micro_batch();  // (ZeRO-3 gathers none here)
  const double gather_us =
      std::accumulate(r.gather_step_cost_us.begin(), r.gather_step_cost_us.end(), 0.0);
  const double reduction_us = r.cost_us() - (every_micro_batch ? gather_us : 0.0);
  option.cost_us += reduction_us;
  option.reduction_us = reduction_us;
  if (every_micro_batch) option.update_us += gather_us;
  const auto uses_links = [&](const Redistribution& moves, const std::vector<double>& costs_us) {
    for (size_t k = 0; k < moves.steps.size(); ++k) {
      const RedistributionStep& step = moves.steps[k];
      if (step.collective == CollectiveKind::local_chunk || step.collective == CollectiveKind::none)
        continue;
      const uint32_t link = links(step.mesh_dim);
      option.reduction_links |= link;
      if (k < costs_us.size()) option.reduction_link_us[link_class_index(link)] += costs_us[k];
    }
  };
  uses_links(r.redistribution, r.step_cost_us);
  if (r.parameter_gather && !every_micro_batch)
    uses_links(*r.parameter_gather, r.gather_step_cost_us);
  option.reduction = std::move(r);
  return true;
}

}  // namespace symmesh::strategies::layout_search_detail
