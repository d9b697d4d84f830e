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

// One priced way to run an op from given input placements.
struct Option {
  std::shared_ptr<const OpLayout> layout;
  std::vector<std::pair<TensorId, int>> places;  // free parameters and the output, placed
  std::optional<GradientReduction> reduction;
  int64_t transient_bytes = 0;
  int64_t new_static_bytes = 0;  // free parameters placed here
  double cost_us = 0;            // the op's, plus its gradient reduction's
  // Training: the gradient reductions the parameters placed here will need, foreseen
  // (ranking only), and the parameter whose foreseen reduction this op settles.
  std::vector<std::pair<TensorId, double>> foreseen_us;
  TensorId settles = -1;
  // Inputs redistributed here: the copies stay for later readers of the same tensor
  // (Megatron-SP all-gathers the attention output once for both MLP projections).
  std::vector<std::pair<TensorId, int>> copies;
};

struct Choice {
  std::shared_ptr<const Choice> parent;
  int op = -1;
  std::shared_ptr<const Option> option;
};

struct State {
  std::vector<int> placed;  // per tensor: interned placements, -1 while unknown
  double cost_us = 0;
  int64_t static_bytes = 0;
  int64_t peak_bytes = 0;  // static + live + transient, the most so far
  std::shared_ptr<const Choice> history;
  // Foreseen gradient reductions not yet priced: ranking by cost alone would take, in the
  // forward, the layouts whose price comes only in the backward (replicated weights).
  std::vector<std::pair<TensorId, double>> foreseen_us;
  std::vector<std::pair<TensorId, int>> copies;  // (tensor, placements) also held, sorted
  double rank_us() const {
    double r = cost_us;
    for (const auto& f : foreseen_us) r += f.second;
    return r;
  }
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
  Search(const DataflowGraph& graph, const DeviceMesh& mesh, const CostModel& model,
         const LayoutSearchOptions& options, bool leanest)
      : g_(graph), mesh_(mesh), model_(model), options_(options), leanest_(leanest) {
    if (leanest_) options_.memory_capacity_bytes = 0;
    const int n = static_cast<int>(g_.tensors.size());
    lives_ = tensor_lifetimes(g_);
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
  }

  // nullopt when no layout fits in the GPU's memory.
  std::optional<StepLayout> run() {
    const auto start = std::chrono::steady_clock::now();
    State initial;
    initial.placed.assign(g_.tensors.size(), -1);
    for (TensorId t = 0; t < static_cast<TensorId>(g_.tensors.size()); ++t) {
      const GraphTensor& x = g_.tensors[t];
      if (!x.declared) continue;
      initial.placed[t] = table_.intern(*x.declared);
      if (x.kind == GraphTensor::Kind::parameter)
        initial.static_bytes += parameter_static_bytes(g_, t, *x.declared, mesh_);
    }
    std::vector<State> beam{initial};
    for (int i = 0; i < static_cast<int>(g_.ops.size()); ++i) {
      if (g_.ops[i].output < 0) continue;  // no tensors, nothing to choose
      beam = advance(beam, i);
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
    return found;
  }

 private:
  bool over_capacity(int64_t bytes) const {
    return options_.memory_capacity_bytes > 0 && bytes > options_.memory_capacity_bytes;
  }

  // Placements input `k` of op `i` is read with in `state`; nullopt for a free parameter.
  std::optional<Placements> read_placements(const State& state, const GraphInput& in) const {
    int id = state.placed[in.tensor];
    if (id < 0 && g_.tensors[in.tensor].kind == GraphTensor::Kind::seed)
      id = state.placed[g_.tensors[in.tensor].of];
    if (id < 0) {
      if (g_.tensors[in.tensor].kind != GraphTensor::Kind::parameter)
        throw InvalidArgument(
            "tensor '" + g_.tensors[in.tensor].name + "' is read before it is placed",
            "layout search");
      return std::nullopt;
    }
    const Placements& p = table_.at(id);
    return in.transposed
               ? transposed_placements(p, static_cast<int>(g_.tensors[in.tensor].shape.size()))
               : p;
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

  const std::vector<std::shared_ptr<const Option>>& options_for(const State& state, int i) {
    const GraphOp& op = g_.ops[i];
    std::vector<std::optional<Placements>> current;
    std::vector<std::vector<Placements>> copies;  // per input, as read
    std::string key = std::to_string(i);
    for (const GraphInput& in : op.inputs) {
      current.push_back(read_placements(state, in));
      key += "|" + (current.back() ? to_string(*current.back()) : std::string("?"));
      copies.emplace_back();
      for (const auto& [t, id] : state.copies)
        if (t == in.tensor) {
          copies.back().push_back(as_read(table_.at(id), in));
          key += "+" + std::to_string(id);
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
    for (size_t k = 0; k < op.inputs.size(); ++k)
      base.inputs.push_back(
          TensorSpec{g_.shape_read(op.inputs[k]), op.dtype,
                     current[k].value_or(Placements(mesh_.ndim(), Placement::replicate()))});
    const GraphTensor& out = g_.tensors[op.output];
    std::vector<Candidate> candidates =
        expand_candidates(base, op_single_dim_rules(base, /*any_input_sharded=*/true));
    for (Candidate& c : candidates) {
      if (!c.kept()) continue;
      auto option = std::make_shared<Option>();
      OpProblem problem = base;
      for (size_t k = 0; k < op.inputs.size(); ++k) {
        if (current[k]) continue;
        problem.inputs[k].placements = c.input_placements[k];
        const GraphInput& in = op.inputs[k];
        const Placements stored =
            in.transposed
                ? transposed_placements(c.input_placements[k],
                                        static_cast<int>(g_.tensors[in.tensor].shape.size()))
                : c.input_placements[k];
        option->places.emplace_back(in.tensor, table_.intern(stored));
        option->new_static_bytes += parameter_static_bytes(g_, in.tensor, stored, mesh_);
        if (g_.training)
          option->foreseen_us.emplace_back(in.tensor, foreseen_reduction_us(op, k, c, stored));
      }
      for (size_t k = 0; k < op.inputs.size(); ++k)  // a copy made earlier is free to read
        if (current[k] &&
            std::find(copies[k].begin(), copies[k].end(), c.input_placements[k]) != copies[k].end())
          problem.inputs[k].placements = c.input_placements[k];
      problem.output_target = output_target(out, c.output_placements);
      std::vector<Candidate> one{c};
      model_.price(problem, one);
      ++priced_;
      if (!(one[0].cost_us < kInfiniteCost)) continue;
      const Placements ends = problem.output_target.value_or(one[0].output_placements);
      option->places.emplace_back(op.output, table_.intern(ends));
      option->cost_us = one[0].cost_us;
      for (size_t k = 0; k < op.inputs.size(); ++k)
        if (problem.inputs[k].placements != one[0].input_placements[k]) {
          option->transient_bytes +=
              local_bytes(problem.inputs[k].shape, op.dtype, one[0].input_placements[k], mesh_);
          if (g_.tensors[op.inputs[k].tensor].consumers.size() > 1)
            option->copies.emplace_back(
                op.inputs[k].tensor,
                table_.intern(as_read(one[0].input_placements[k], op.inputs[k])));
        }
      if (problem.output_target && *problem.output_target != one[0].output_placements)
        option->transient_bytes +=
            local_bytes(problem.output_shape(), op.dtype, one[0].output_placements, mesh_);
      if (out.is_parameter_gradient && out.consumers.empty()) {
        if (!add_reduction(*option, state, op, i, ends)) continue;
        option->settles = out.of;
      }
      option->layout = std::make_shared<const OpLayout>(OpLayout{problem, one[0]});
      options.push_back(std::move(option));
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
      for (double step : model_.step_costs_us(spec, plan_transitions(partial, stored), mesh_))
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
    const Placements& target = table_.at(id);
    if (grad == target) return true;
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
    r.step_cost_us = model_.step_costs_us(spec, plan_transitions(grad, target), mesh_);
    option.cost_us += r.cost_us();
    option.reduction = std::move(r);
    return true;
  }

  // Bytes of the tensors alive at op `i` whose placements are known.
  int64_t live_bytes(const State& s, int i) {
    int64_t bytes = 0;
    for (TensorId t = 0; t < static_cast<TensorId>(s.placed.size()); ++t) {
      if (!lives_[t].alive_at(i)) continue;
      int id = s.placed[t];
      if (id < 0 && g_.tensors[t].kind == GraphTensor::Kind::seed) id = s.placed[g_.tensors[t].of];
      if (id < 0) continue;
      const int64_t key = static_cast<int64_t>(t) << 32 | id;
      auto it = bytes_.find(key);
      if (it == bytes_.end()) {
        const GraphTensor& x = g_.tensors[t];
        it = bytes_.emplace(key, local_bytes(x.shape, x.dtype, table_.at(id), mesh_)).first;
      }
      bytes += it->second;
    }
    for (const auto& [t, id] : s.copies)
      if (lives_[t].alive_at(i)) {
        const GraphTensor& x = g_.tensors[t];
        bytes += local_bytes(x.shape, x.dtype, table_.at(id), mesh_);
      }
    return bytes;
  }

  std::string live_key(const State& s, int i) const {
    std::string key;
    for (TensorId t = 0; t < static_cast<TensorId>(s.placed.size()); ++t)
      if (last_use_[t] > i) key += std::to_string(s.placed[t]) + ",";
    for (const auto& [t, id] : s.copies) key += "+" + std::to_string(t) + ":" + std::to_string(id);
    return key;
  }

  std::vector<State> advance(const std::vector<State>& beam, int i) {
    std::vector<State> next;
    for (const State& s : beam) {
      for (const auto& option : options_for(s, i)) {
        ++expanded_;
        const int64_t static_bytes = s.static_bytes + option->new_static_bytes;
        if (over_capacity(static_bytes)) {
          ++dropped_for_memory_;
          continue;
        }
        State n{s.placed, s.cost_us + option->cost_us, static_bytes, 0,
                std::make_shared<const Choice>(Choice{s.history, i, option})};
        for (const auto& [t, id] : option->places) {
          n.placed[t] = id;
          if (seed_of_[t] >= 0) n.placed[seed_of_[t]] = id;
        }
        n.copies = s.copies;
        for (const auto& copy : option->copies)
          if (std::find(n.copies.begin(), n.copies.end(), copy) == n.copies.end())
            n.copies.push_back(copy);
        n.copies.erase(std::remove_if(n.copies.begin(), n.copies.end(),
                                      [&](const auto& c) { return last_use_[c.first] <= i; }),
                       n.copies.end());
        std::sort(n.copies.begin(), n.copies.end());
        n.foreseen_us = s.foreseen_us;
        n.foreseen_us.insert(n.foreseen_us.end(), option->foreseen_us.begin(),
                             option->foreseen_us.end());
        if (option->settles >= 0)
          n.foreseen_us.erase(
              std::remove_if(n.foreseen_us.begin(), n.foreseen_us.end(),
                             [&](const auto& f) { return f.first == option->settles; }),
              n.foreseen_us.end());
        n.peak_bytes =
            std::max(s.peak_bytes, static_bytes + live_bytes(n, i) + option->transient_bytes);
        if (over_capacity(n.peak_bytes)) {
          ++dropped_for_memory_;
          continue;
        }
        next.push_back(std::move(n));
      }
    }
    if (next.empty()) {
      if (dropped_for_memory_ > 0) return {};  // nothing fits: the caller asks for the leanest
      throw Unsupported("op '" + g_.ops[i].name + "' has no strategy left",
                        g_.ops[i].source ? g_.ops[i].source->where.to_string() : "layout search");
    }
    std::stable_sort(next.begin(), next.end(), [this](const State& a, const State& b) {
      return leanest_ ? std::make_pair(a.peak_bytes, a.rank_us()) <
                            std::make_pair(b.peak_bytes, b.rank_us())
                      : a.rank_us() < b.rank_us();
    });
    // Merge states with the same future (the cheaper kept), then keep the cheapest. With a
    // memory limit, a quarter of the beam goes to the leanest states, so that layouts
    // that pay more to need less (weights sharded over dp) survive until the peak.
    std::vector<State> merged;
    std::unordered_map<std::string, bool> seen;
    for (State& s : next)
      if (seen.emplace(live_key(s, i), true).second) merged.push_back(std::move(s));
    const int width = options_.beam_width;
    if (static_cast<int>(merged.size()) <= width) return merged;
    const int lean = options_.memory_capacity_bytes > 0 ? width / 4 : 0;
    std::vector<State> kept(std::make_move_iterator(merged.begin()),
                            std::make_move_iterator(merged.begin() + (width - lean)));
    std::vector<State> rest(std::make_move_iterator(merged.begin() + (width - lean)),
                            std::make_move_iterator(merged.end()));
    std::stable_sort(rest.begin(), rest.end(),
                     [](const State& a, const State& b) { return a.peak_bytes < b.peak_bytes; });
    for (int k = 0; k < lean && k < static_cast<int>(rest.size()); ++k)
      kept.push_back(std::move(rest[k]));
    std::stable_sort(kept.begin(), kept.end(), [this](const State& a, const State& b) {
      return leanest_ ? std::make_pair(a.peak_bytes, a.rank_us()) <
                            std::make_pair(b.peak_bytes, b.rank_us())
                      : a.rank_us() < b.rank_us();
    });
    return kept;
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
    out.memory = step_memory(g_, out.placements, out.transient_bytes, mesh_);
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
  PlacementTable table_;
  std::vector<Lifetime> lives_;
  std::unordered_map<int64_t, int64_t> bytes_;  // (tensor, placements id) -> local bytes
  std::vector<int> last_use_;
  std::vector<TensorId> seed_of_;
  std::map<std::string, std::vector<std::shared_ptr<const Option>>> memo_;
  int64_t priced_ = 0;
  int64_t expanded_ = 0;
  int64_t dropped_for_memory_ = 0;
};

}  // namespace

double GradientReduction::cost_us() const {
  return std::accumulate(step_cost_us.begin(), step_cost_us.end(), 0.0);
}

StepLayout search_layout(const DataflowGraph& graph, const DeviceMesh& mesh, const CostModel& model,
                         const LayoutSearchOptions& options) {
  if (options.beam_width < 1)
    throw InvalidArgument("beam width " + std::to_string(options.beam_width) + " must be >= 1",
                          "layout search");
  if (auto layout = Search(graph, mesh, model, options, false).run()) return std::move(*layout);
  // Nothing fits: the leanest layout found, with its need, marked as not fitting.
  StepLayout leanest = *Search(graph, mesh, model, options, true).run();
  leanest.fits = options.memory_capacity_bytes <= 0 ||
                 leanest.memory.peak_bytes() <= options.memory_capacity_bytes;
  return leanest;
}

}  // namespace symmesh::strategies
