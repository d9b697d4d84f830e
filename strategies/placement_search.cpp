#include "strategies/placement_search.hpp"

#include <algorithm>
#include <memory>
#include <queue>
#include <string>
#include <unordered_map>
#include <unordered_set>

#include "strategies/candidate.hpp"

namespace symmesh::strategies {
namespace {

// One byte per placement: R 0, P(sum) 1, P(avg) 2, S(d) 3+d. A state is its inputs'
// placements, input-major; a lookup key one mesh dim's placements, in input order.
char code_of(const Placement& p) {
  if (p.is_shard()) return static_cast<char>(3 + p.shard_dim());
  if (p.is_partial()) return p.reduce_op() == ReduceOp::sum ? 1 : 2;
  return 0;
}

Placement placement_of(char code) {
  if (code == 0) return Placement::replicate();
  if (code == 1) return Placement::partial(ReduceOp::sum);
  if (code == 2) return Placement::partial(ReduceOp::avg);
  return Placement::shard(code - 3);
}

// A pushed state. The path is kept as the hop from the parent entry, so an entry costs
// its key and two numbers per input, not a copy of the path.
struct Entry {
  double cost_us = 0;
  int64_t order = 0;  // insertion counter: equal costs pop first in, first out
  std::string key;    // the state, input-major (code_of per placement)
  std::vector<double> input_cost_us;
  std::vector<double> input_gib;  // local size after the path so far
  int64_t parent = -1;
  SearchHop hop;
};

struct Later {
  bool operator()(const Entry* a, const Entry* b) const {
    if (a->cost_us != b->cost_us) return a->cost_us > b->cost_us;
    return a->order > b->order;
  }
};

class Search {
 public:
  Search(const OpProblem& problem, const std::vector<Rule>& rules, const DTensorMeshTopology& topo)
      : problem_(problem),
        rules_(rules),
        topo_(topo),
        inputs_(problem.inputs.size()),
        ndim_(problem.mesh.ndim()),
        hop_order_(hop_order(problem)) {
    allowed_shards_.resize(inputs_);
    allowed_partials_.resize(inputs_);
    for (size_t r = 0; r < rules.size(); ++r) {
      std::string key(inputs_, '\0');
      for (size_t i = 0; i < inputs_; ++i) {
        const Placement& p = rules[r][i + 1];
        key[i] = code_of(p);
        auto& allowed = p.is_shard() ? allowed_shards_[i] : allowed_partials_[i];
        if (!p.is_replicate() && std::find(allowed.begin(), allowed.end(), p) == allowed.end())
          allowed.push_back(p);
      }
      lookup_.emplace(key, static_cast<int>(r));  // the first rule with these inputs wins
    }
  }

  bool capped() const { return capped_; }

  std::optional<PlacementSearchResult> run() {
    auto start = std::make_unique<Entry>();
    std::vector<Placements> state;
    for (const TensorSpec& in : problem_.inputs) {
      state.push_back(in.placements);
      start->input_gib.push_back(dtensor_local_gib(in, problem_.mesh));
    }
    start->key = key_of(state);
    start->input_cost_us.assign(inputs_, 0.0);
    original_ = state;
    original_gib_ = start->input_gib;
    push(std::move(start));
    while (!queue_.empty()) {
      const Entry* e = queue_.top();
      queue_.pop();
      if (!visited_.insert(e->key).second) continue;
      ++popped_;
      state = state_of(e->key);
      if (auto result = goal(*e, state)) return result;
      if (pushed_ >= kMaxSearchStates) {
        capped_ = true;
        return std::nullopt;
      }
      for (int d = 0; d < ndim_; ++d)
        for (size_t i : hop_order_)
          for (const Placement& q : hops(i, state[i], d))
            try_hop(*e, state, static_cast<int>(i), d, q);
    }
    return std::nullopt;
  }

 private:
  // The inputs in the order PyTorch generates their hops and sums their costs: its argument
  // order, which puts a bias first. addmm and baddbmm already list theirs first; a linear
  // with a bias runs in torch as addmm(bias, a, w.t()) (ATen's decomposition of
  // aten.linear), so equal-cost paths are pushed, summed and popped as torch's are.
  static std::vector<size_t> hop_order(const OpProblem& problem) {
    std::vector<size_t> order;
    if (problem.has_bias()) order.push_back(static_cast<size_t>(problem.bias_index()));
    for (size_t i = 0; i < problem.inputs.size(); ++i)
      if (std::find(order.begin(), order.end(), i) == order.end()) order.push_back(i);
    return order;
  }

  std::string key_of(const std::vector<Placements>& state) const {
    std::string key;
    key.reserve(inputs_ * ndim_);
    for (const Placements& p : state)
      for (const Placement& x : p) key.push_back(code_of(x));
    return key;
  }

  std::vector<Placements> state_of(const std::string& key) const {
    std::vector<Placements> state(inputs_, Placements(ndim_, Placement::replicate()));
    for (size_t i = 0; i < inputs_; ++i)
      for (int d = 0; d < ndim_; ++d) state[i][d] = placement_of(key[i * ndim_ + d]);
    return state;
  }

  // Every mesh dim's input placements form a rule, and every input can be split so.
  std::optional<PlacementSearchResult> goal(const Entry& e,
                                            const std::vector<Placements>& state) const {
    PlacementSearchResult r;
    for (int d = 0; d < ndim_; ++d) {
      std::string key(inputs_, '\0');
      for (size_t i = 0; i < inputs_; ++i) key[i] = code_of(state[i][d]);
      const auto it = lookup_.find(key);
      if (it == lookup_.end()) return std::nullopt;
      r.rule_per_mesh_dim.push_back(it->second);
      r.output_placements.push_back(rules_[it->second][0]);
    }
    for (size_t i = 0; i < inputs_; ++i)
      if (!is_shardable(problem_.inputs[i].shape, state[i], problem_.mesh)) return std::nullopt;
    r.input_placements = state;
    r.input_cost_us = e.input_cost_us;
    r.cost_us = e.cost_us;
    for (const Entry* at = &e; at->parent >= 0; at = entries_[at->parent].get())
      r.path.push_back(at->hop);
    std::reverse(r.path.begin(), r.path.end());
    r.states_popped = popped_;
    r.states_pushed = pushed_;
    return r;
  }

  // Where input `input`, placed `row`, may go on mesh dim d in one hop, in PyTorch's order.
  std::vector<Placement> hops(size_t input, const Placements& row, int d) const {
    std::vector<bool> sharded_later;  // tensor dims a later mesh dim shards
    for (int later = d + 1; later < ndim_; ++later)
      if (row[later].is_shard()) {
        const int t = row[later].shard_dim();
        if (static_cast<int>(sharded_later.size()) <= t) sharded_later.resize(t + 1, false);
        sharded_later[t] = true;
      }
    const auto later = [&](int t) {
      return t < static_cast<int>(sharded_later.size()) && sharded_later[t];
    };
    const Placement& cur = row[d];
    std::vector<Placement> out;
    const auto shards_except = [&](const Placement& skip) {
      for (const Placement& s : allowed_shards_[input])
        if (s != skip && !later(s.shard_dim())) out.push_back(s);
    };
    if (cur.is_replicate()) {
      shards_except(cur);
      for (const Placement& p : allowed_partials_[input]) out.push_back(p);
    } else if (cur.is_shard()) {
      if (later(cur.shard_dim())) return out;
      out.push_back(Placement::replicate());
      shards_except(cur);
    } else {
      out.push_back(Placement::replicate());
      shards_except(cur);
    }
    return out;
  }

  // Pushes the state one hop from `from` (whose placements are `state`): input i on mesh
  // dim d to q.
  void try_hop(const Entry& from, const std::vector<Placements>& state, int i, int d,
               const Placement& q) {
    // Refused hops are most of them: decide before allocating an entry.
    std::string key = from.key;
    key[i * ndim_ + d] = code_of(q);
    if (visited_.count(key)) return;
    // The net move from where the input started must be possible (S(0)→R→P is two
    // possible hops but an impossible S→P).
    double net_gib = original_gib_[i];
    if (dtensor_transition_cost_us(original_[i][d], q, d, topo_, &net_gib) == kInfiniteCost) return;
    double gib = from.input_gib[i];
    const double step = dtensor_transition_cost_us(state[i][d], q, d, topo_, &gib);
    if (step == kInfiniteCost) return;
    auto next = std::make_unique<Entry>();
    next->key = std::move(key);
    next->input_gib = from.input_gib;
    next->input_gib[i] = gib;
    next->input_cost_us = from.input_cost_us;
    next->input_cost_us[i] += step;
    // Summed in torch's argument order: equal-cost paths then compare equal, or unequal
    // in the last bit, exactly as PyTorch's sum(new_per_input_costs) does.
    next->cost_us = 0;
    for (size_t k : hop_order_) next->cost_us += next->input_cost_us[k];
    next->parent = from.order;
    next->hop = {i, d, state[i][d], q, step};
    push(std::move(next));
  }

  void push(std::unique_ptr<Entry> e) {
    e->order = pushed_++;
    queue_.push(e.get());
    entries_.push_back(std::move(e));
  }

  const OpProblem& problem_;
  const std::vector<Rule>& rules_;
  const DTensorMeshTopology& topo_;
  const size_t inputs_;
  const int ndim_;
  const std::vector<size_t> hop_order_;
  std::vector<std::vector<Placement>> allowed_shards_, allowed_partials_;
  std::unordered_map<std::string, int> lookup_;
  std::vector<Placements> original_;
  std::vector<double> original_gib_;
  std::vector<std::unique_ptr<Entry>> entries_;
  std::priority_queue<const Entry*, std::vector<const Entry*>, Later> queue_;
  std::unordered_set<std::string> visited_;
  int64_t popped_ = 0;
  int64_t pushed_ = 0;
  bool capped_ = false;
};

}  // namespace

std::optional<PlacementSearchResult> search_placements(const OpProblem& problem,
                                                       const std::vector<Rule>& rules,
                                                       const DTensorMeshTopology& topo,
                                                       bool* capped) {
  Search search(problem, rules, topo);
  auto result = search.run();
  if (capped) *capped = search.capped();
  return result;
}

}  // namespace symmesh::strategies
