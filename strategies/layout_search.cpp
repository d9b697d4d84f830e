// The layout search's walk over the ops and its beam (layout_search_beam.hpp), and
// search_layout, the entry point.
#include "strategies/layout_search.hpp"

#include "strategies/layout_search_beam.hpp"
#include "strategies/pipeline_transfers.hpp"
#include "strategies/planned_step_price.hpp"

namespace symmesh::strategies::layout_search_detail {

Search::Search(const DataflowGraph& graph, const DeviceMesh& mesh, const CostModel& model,
               const LayoutSearchOptions& options, bool leanest, bool slots_keyed)
    : g_(graph),
      mesh_(mesh),
      model_(model),
      options_(options),
      leanest_(leanest),
      slots_keyed_(slots_keyed) {
  if (leanest_) options_.memory_capacity_bytes = 0;
  // A bucket gathers at most a stage's parameters (taken as an even share of the model's).
  int64_t parameter_elements = 0;
  for (const GraphTensor& t : g_.tensors)
    if (t.kind == GraphTensor::Kind::parameter) parameter_elements += numel(t.shape);
  buckets_.bound_elements(std::max<int64_t>(1, parameter_elements / std::max(1, g_.stages)));
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
  has_input_gradient_.assign(n, false);
  for (const GraphTensor& x : g_.tensors)
    if (x.is_parameter_gradient)
      has_gradient_[x.of] = true;
    else if (x.kind == GraphTensor::Kind::gradient)
      has_input_gradient_[x.of] = true;
  const int ops = static_cast<int>(g_.ops.size());
  for (int i = 0; i < ops; ++i)
    if (g_.ops[i].pass == Pass::forward && g_.ops[i].source != nullptr)
      forward_index_.try_emplace(g_.ops[i].source, i);
  slot_of_.assign(ops, -1);
  if (options_.periodic_layers) assign_layer_slots();
  last_.resize(ops);
  for (TensorId t = 0; t < n; ++t)
    if (last_use_[t] >= 0) last_[last_use_[t]].push_back(t);
}

std::optional<StepLayout> Search::run() {
  const auto start = std::chrono::steady_clock::now();
  State initial;
  initial.placed.assign(g_.tensors.size(), -1);
  initial.static_bytes.assign(std::max(1, g_.stages), 0);
  initial.live_bytes.assign(std::max(1, g_.stages), 0);
  initial.slot_choice.assign(slots_, -1);
  // ZeRO-2 and 3 run both streams in every micro-batch (step_streams.hpp).
  if (g_.reduces_every_micro_batch()) initial.streams.repeats = std::max<int64_t>(1, g_.micro_batches);
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

void Search::pass(std::vector<State>& beam, int i) {
  const bool barrier = g_.ops[i].source && g_.ops[i].source->kind == OpKind::barrier;
  for (State& s : beam) {
    int64_t live = 0;
    move_past(s, nullptr, i, live, s.key);
    settle_other_stages(s, i);
    s.live_bytes[stage_of(i)] = live;
    if (barrier) s.streams.main_us = s.streams.comm_us = s.streams.busy_us();
  }
}

std::vector<State> Search::advance(const std::vector<State>& beam, int i) {
  std::vector<Successor> next;
  const int slot = slot_of_[i];
  const bool every_micro_batch = g_.reduces_every_micro_batch();
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
      // In series: the op once per micro-batch, its reduction and update once (ZeRO-2: its
      // reduction in every micro-batch; ZeRO-3: its gathers and reduction).
      n.cost_us = s.cost_us + option->cost_us + option->update_us +
                  (g_.micro_batches - 1) *
                      (option->cost_us - (every_micro_batch ? 0.0 : option->reduction_us));
      // Ranked by the overlapped time, plus the reductions foreseen for parameters placed
      // so far (counted whole: how much of them the backward will hide is not known yet).
      n.streams = s.streams.after(option->timing(), every_micro_batch ? 1 : g_.micro_batches);
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
  // Equal ranks are common: while the comm stream is behind, main-stream work is hidden in
  // step_us, so a state that spends more on the main stream ranks the same as one that
  // spends less. The less busy main stream is the better future (every later op starts
  // after it), and the one kept: periodic_layers holds every later layer to the choice.
  const auto better = [this](const Successor& a, const Successor& b) {
    if (leanest_ && a.peak_bytes != b.peak_bytes) return a.peak_bytes < b.peak_bytes;
    return std::tie(a.rank_us, a.streams.main_us, a.cost_us) <
           std::tie(b.rank_us, b.streams.main_us, b.cost_us);
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

StepLayout Search::layout_of(const State& s) const {
  StepLayout out;
  out.ops.resize(g_.ops.size());
  out.transient_bytes.assign(g_.ops.size(), 0);
  out.timings.assign(g_.ops.size(), OpTiming{});
  out.placements.resize(g_.tensors.size());
  for (TensorId t = 0; t < static_cast<TensorId>(g_.tensors.size()); ++t)
    out.placements[t] = s.placed[t] >= 0 ? table_.at(s.placed[t])
                                         : Placements(mesh_.ndim(), Placement::replicate());
  for (const Choice* c = s.history.get(); c; c = c->parent.get()) {
    out.ops[c->op] = *c->option->layout;
    out.transient_bytes[c->op] = c->option->transient_bytes;
    out.timings[c->op] = c->option->timing();
    if (c->option->reduction) out.reductions.push_back(*c->option->reduction);
  }
  std::reverse(out.reductions.begin(), out.reductions.end());
  apply_buckets(g_, mesh_, options_.gpus_per_node, out, buckets_);
  out.serial_cost_us = s.cost_us;
  out.step_cost_us = s.streams.step_us();
  out.stage_memory = stage_memories(g_, out.placements, out.transient_bytes, mesh_);
  out.memory = busiest_stage(out.stage_memory);
  out.fits = !over_capacity(out.memory.peak_bytes());
  return out;
}

std::optional<StepLayout> Search::finish(const std::vector<State>& beam) const {
  const bool scheduled = g_.stages > 1 && options_.cluster && !leanest_;
  std::optional<StepLayout> best;
  int finalists = 0;
  for (const State& s : beam) {
    StepLayout layout = layout_of(s);
    if (!layout.fits) continue;
    if (!scheduled) return layout;
    layout.scheduled_us =
        price_planned_step(g_, layout, stage_transfers(g_, layout.placements, mesh_), mesh_,
                           *options_.cluster)
            .step_us;
    if (!best || layout.scheduled_us < best->scheduled_us) best = std::move(layout);
    if (++finalists == kScheduledFinalists) break;
  }
  return best;
}

}  // namespace symmesh::strategies::layout_search_detail

namespace symmesh::strategies {

using layout_search_detail::Search;

int gather_unit_of(const DataflowGraph& graph, int op) {
  const GraphOp& g = graph.ops.at(op);
  const int layer = g.source != nullptr ? g.source->layer : -1;
  if (layer < 0) return -2 - op;  // its own: apart from every layer's and from none
  return 2 * layer + (g.pass == Pass::forward ? 0 : 1);
}

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
      if (!found || keyed->ranking_us() < found->ranking_us()) found = std::move(keyed);
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
