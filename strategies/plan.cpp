#include "strategies/plan.hpp"

#include <stdexcept>

#include "core/collectives.hpp"
#include "core/errors.hpp"
#include "strategies/dtensor_cost_model.hpp"
#include "strategies/selection.hpp"

namespace symmesh::strategies {

bool Plan::runs_fused(const PlannedRedistribution& r, size_t step) const {
  const Implementation impl = chosen_candidate().implementation;
  if (impl == Implementation::fused_allgather_mm)
    return r.input == problem.lhs_index() && step + 1 == r.redistribution.steps.size();
  return impl == Implementation::fused_mm_reducescatter && r.input < 0;
}

std::optional<CollectiveAlgorithm> Plan::step_algorithm(const PlannedRedistribution& r,
                                                        size_t step) const {
  if (runs_fused(r, step)) return CollectiveAlgorithm::fused_ring;
  const auto op = collective_op_of(r.redistribution.steps.at(step).collective);
  if (!op) return std::nullopt;
  return algorithm_of(*op);
}

int Plan::kept_count() const {
  int n = 0;
  for (const auto& c : candidates) n += c.kept() ? 1 : 0;
  return n;
}

LocalGemm local_compute_of(const OpProblem& problem,
                           const std::vector<Placements>& input_placements, int rank) {
  TensorSpec a = problem.inputs[problem.lhs_index()];
  TensorSpec b = problem.inputs[problem.rhs_index()];
  a.placements = input_placements[problem.lhs_index()];
  b.placements = input_placements[problem.rhs_index()];
  return problem.equation().local_gemm(local_view(a, problem.mesh, rank).shape,
                                       local_view(b, problem.mesh, rank).shape);
}

namespace {

// The op's single-dim rules, once the problem is known to be valid.
std::vector<Rule> validated_rules(const OpProblem& problem) {
  problem.validate();
  return op_single_dim_rules(problem);
}

Plan priced_candidates(const OpProblem& problem, const CostModel& model,
                       const std::vector<Rule>& rules) {
  Plan plan{problem, model.name(), {}, 0, {}, std::nullopt, {}};
  plan.candidates = expand_candidates(problem, rules);
  model.price(problem, plan.candidates);
  return plan;
}

// Fills in the redistributions and local compute of the chosen candidate.
Plan finish(Plan plan, const CostModel& model) {
  const OpProblem& problem = plan.problem;
  const Candidate& chosen = plan.chosen_candidate();
  for (size_t i = 0; i < problem.inputs.size(); ++i) {
    const TensorSpec& current = problem.inputs[i];
    const Placements& target = chosen.input_placements[i];
    if (current.placements == target) continue;
    PlannedRedistribution r;
    r.input = static_cast<int>(i);
    r.redistribution = plan_redistribution(current, target, problem.mesh);
    r.step_cost_us = model.step_costs_us(
        current, plan_transitions(current.placements, target, problem.mesh), problem.mesh);
    plan.redistributions.push_back(std::move(r));
  }
  if (problem.output_target && chosen.output_placements != *problem.output_target) {
    const TensorSpec out{problem.output_shape(), problem.dtype(), chosen.output_placements};
    PlannedRedistribution r;
    r.input = -1;
    r.redistribution = plan_redistribution(out, *problem.output_target, problem.mesh);
    r.step_cost_us = model.step_costs_us(
        out, plan_transitions(out.placements, *problem.output_target, problem.mesh), problem.mesh);
    plan.output_redistribution = std::move(r);
  }
  if (problem.is_tensor_op()) return plan;  // its work per rank: the lowering's (tensor_op_cost)
  const MatmulEquation eq = problem.equation();
  TensorSpec a = problem.inputs[problem.lhs_index()];
  TensorSpec b = problem.inputs[problem.rhs_index()];
  a.placements = chosen.input_placements[problem.lhs_index()];
  b.placements = chosen.input_placements[problem.rhs_index()];
  for (int rank = 0; rank < problem.mesh.size(); ++rank)
    plan.local_compute.push_back(eq.local_gemm(local_view(a, problem.mesh, rank).shape,
                                               local_view(b, problem.mesh, rank).shape));
  return plan;
}

}  // namespace

std::string to_string(PlacementSelection selection) {
  return selection == PlacementSelection::priority_queue ? "priority-queue" : "full-expansion";
}

PlacementSelection parse_placement_selection(std::string_view text, std::string_view where) {
  for (PlacementSelection s :
       {PlacementSelection::full_expansion, PlacementSelection::priority_queue})
    if (text == to_string(s)) return s;
  throw InvalidArgument("unknown placement search '" + std::string(text) +
                            "' (expected full-expansion or priority-queue)",
                        std::string(where));
}

std::string pytorch_behaviour(PlacementSelection selection) {
  if (selection == PlacementSelection::priority_queue)
    return "PyTorch DTensor with PR 177799 (March 2026): "
           "_dijkstra_expand_single_dim_strategy_to_mesh "
           "searches input placements by summed hop cost and takes the first that forms a "
           "rule on every mesh dim; the full expansion only when it finds none";
  return "PyTorch DTensor before PR 177799: expand_to_full_mesh_op_strategy prices every "
         "combination of the single-dim rules, _select_min_cost_strategy picks one";
}

Plan build_plan(const OpProblem& problem, const CostModel& model, PlacementSelection selection) {
  const auto* dtensor = dynamic_cast<const DTensorCostModel*>(&model);
  if (selection == PlacementSelection::priority_queue && !dtensor)
    throw InvalidArgument(
        "the priority-queue search prices its hops with DTensor's cost model; "
        "use it with the dtensor cost model, not " +
            model.name(),
        "--placement-search");
  const std::vector<Rule> rules = validated_rules(problem);
  Plan plan = priced_candidates(problem, model, rules);
  plan.selection = selection;
  if (selection == PlacementSelection::priority_queue) {
    const auto topo = DTensorMeshTopology::of(problem.mesh, dtensor->devices_per_host());
    plan.search = search_placements(problem, rules, topo, &plan.search_capped);
  }
  if (plan.search) {
    // The full expansion's candidate of the same rules: the last mesh dim varies fastest.
    int index = 0;
    for (int rule : plan.search->rule_per_mesh_dim)
      index = index * static_cast<int>(rules.size()) + rule;
    const Candidate& c = plan.candidates.at(index);
    // The search's goal test is the expansion's filter (shardability), so it is kept.
    if (!c.kept() || c.input_placements != plan.search->input_placements)
      throw std::logic_error("placement search: candidate #" + std::to_string(index) +
                             " does not match the state the search found");
    plan.chosen = index;
  } else {
    plan.chosen = select_candidate(problem, plan.candidates);
  }
  return finish(std::move(plan), model);
}

Plan build_plan_for(const OpProblem& problem, const CostModel& model, int candidate_index) {
  Plan plan = priced_candidates(problem, model, validated_rules(problem));
  if (candidate_index < 0 || candidate_index >= static_cast<int>(plan.candidates.size()))
    throw InvalidArgument("no candidate #" + std::to_string(candidate_index) + " (there are " +
                              std::to_string(plan.candidates.size()) + ")",
                          "candidate");
  if (!plan.candidates[candidate_index].kept())
    throw InvalidArgument("candidate #" + std::to_string(candidate_index) +
                              " is filtered: " + plan.candidates[candidate_index].filtered,
                          "candidate");
  plan.chosen = candidate_index;
  return finish(std::move(plan), model);
}

Plan build_plan_with(const OpProblem& problem, const CostModel& model, Candidate chosen) {
  problem.validate();
  Plan plan{problem, model.name(), {std::move(chosen)}, 0, {}, std::nullopt, {}};
  model.price(problem, plan.candidates);
  return finish(std::move(plan), model);
}

}  // namespace symmesh::strategies
