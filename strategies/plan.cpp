#include "strategies/plan.hpp"

#include "strategies/selection.hpp"

namespace symmesh::strategies {

int Plan::kept_count() const {
  int n = 0;
  for (const auto& c : candidates) n += c.kept() ? 1 : 0;
  return n;
}

LocalCompute local_compute_of(const OpProblem& problem,
                              const std::vector<Placements>& input_placements, int rank) {
  TensorSpec a = problem.inputs[problem.lhs_index()];
  TensorSpec b = problem.inputs[problem.rhs_index()];
  a.placements = input_placements[problem.lhs_index()];
  b.placements = input_placements[problem.rhs_index()];
  const Shape la = local_view(a, problem.mesh, rank).shape;
  const Shape lb = local_view(b, problem.mesh, rank).shape;
  if (la.size() == 2) return {1, la[0], lb[1], la[1]};
  return {la[0], la[1], lb[2], la[2]};
}

Plan build_plan(const OpProblem& problem, const CostModel& model) {
  problem.validate();
  Plan plan{problem, model.name(), {}, 0, {}, {}};
  plan.candidates = expand_candidates(problem, op_single_dim_rules(problem));
  model.price(problem, plan.candidates);
  plan.chosen = select_candidate(problem, plan.candidates);

  const Candidate& chosen = plan.chosen_candidate();
  for (size_t i = 0; i < problem.inputs.size(); ++i) {
    const TensorSpec& current = problem.inputs[i];
    const Placements& target = chosen.input_placements[i];
    if (current.placements == target) continue;
    PlannedRedistribution r;
    r.input = static_cast<int>(i);
    r.redistribution = plan_redistribution(current, target, problem.mesh);
    r.step_cost_us =
        model.step_costs_us(current, plan_transitions(current.placements, target), problem.mesh);
    plan.redistributions.push_back(std::move(r));
  }
  for (int rank = 0; rank < problem.mesh.size(); ++rank)
    plan.local_compute.push_back(local_compute_of(problem, chosen.input_placements, rank));
  return plan;
}

}  // namespace symmesh::strategies
