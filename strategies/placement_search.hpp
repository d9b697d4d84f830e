#pragma once
// PyTorch's priority-queue search of an op's input placements
// (_dijkstra_expand_single_dim_strategy_to_mesh in torch/distributed/tensor/_ops/
// single_dim_strategy.py, wired into sharding propagation by PR 177799, March 2026),
// restated in docs/dtensor-strategies.md §6. Instead of expanding the single-dim rules
// over every mesh dim and pricing each combination with the greedy redistribution
// planner, it walks from the inputs' current placements one hop at a time (one input,
// one mesh dim) in order of the summed cost so far, and stops at the first state it pops
// where every mesh dim's input placements form a rule and every input is shardable.
//
// A hop is priced with DTensor's per-step cost (dtensor_transition_cost_us), the local
// size threaded along the path, so a path that chunks for free before an all-gather, or
// goes S(0)→R→S(1) instead of paying the all-to-all penalty, costs less than the
// redistribution that later runs. Hops (PyTorch's order: mesh dim outer, input inner):
//   from R:    each Shard the rules give that input, then each Partial they give it;
//   from S(k): R, then each other Shard;
//   from P:    R, then each Shard;
// never S→P or P→P'; no Shard of a tensor dim that a later mesh dim already shards (the
// left-to-right nesting), and no S(k) left while a later mesh dim shards k; and no hop
// whose net move from the original placement is impossible. Ties pop first in, first
// out. PyTorch iterates Python sets for "each Shard"/"each Partial"; here it is the order
// in which the rules first give them to that input.
#include <cstdint>
#include <optional>
#include <vector>

#include "strategies/dtensor_cost_model.hpp"
#include "strategies/einsum_rules.hpp"
#include "strategies/op_problem.hpp"

namespace symmesh::strategies {

// One hop of the path the search found.
struct SearchHop {
  int input = 0;
  int mesh_dim = 0;
  Placement from = Placement::replicate();
  Placement to = Placement::replicate();
  double cost_us = 0;
};

struct PlacementSearchResult {
  std::vector<Placements> input_placements;  // per input, op input order
  Placements output_placements;
  // The rule each mesh dim's input placements form (the first such rule, as PyTorch's
  // lookup keeps the first): with them the full expansion's candidate index.
  std::vector<int> rule_per_mesh_dim;
  std::vector<double> input_cost_us;  // per input, along the path
  double cost_us = 0;                 // their sum: what the queue was ordered by
  std::vector<SearchHop> path;
  int64_t states_popped = 0;
  int64_t states_pushed = 0;
};

// PyTorch has no cap; this one only keeps a hostile mesh from running away.
constexpr int64_t kMaxSearchStates = 1'000'000;

// The search over `rules` (op_single_dim_rules of the problem, R first). nullopt when no
// state is reachable (PyTorch then warns and falls back to the full expansion) or the cap
// is reached (then *capped, when given, is set).
std::optional<PlacementSearchResult> search_placements(const OpProblem& problem,
                                                       const std::vector<Rule>& rules,
                                                       const DTensorMeshTopology& topo,
                                                       bool* capped = nullptr);

}  // namespace symmesh::strategies
