#pragma once
// The `simulated` cost model: the analytic model's cheapest candidates re-ranked by
// simulating them. Each of the k cheapest feasible candidates (analytic order, ties to the
// lowest index; k = CostModelOptions::rerank_count, 4 by default) is planned
// (build_plan_for), lowered to a Program of its own (timing only) and run on the SimGrid
// cluster in its own forked process; its cost becomes the simulated makespan in µs. The
// simulations run in parallel, at most one per core.
//
// What the simulator sees and the analytic model does not: flows of different steps that
// overlap once ranks drift apart (a rank starts its next step as soon as its own put and
// wait are done), max-min sharing of links among flows that start and end at different
// times, and the re-layout copies of every rank rather than the busiest one's.
//
// Candidates outside the k are not simulated: their cost is infinity (so selection picks
// among the simulated ones: the cheapest, ties to the lowest index) and details() names
// their analytic cost. Step costs in reports are the analytic model's.
#include <string>
#include <vector>

#include "core/cluster_spec.hpp"
#include "strategies/analytic_cost_model.hpp"
#include "strategies/cost_model.hpp"

namespace symmesh::sim {

class SimulatedCostModel final : public strategies::CostModel,
                                 public strategies::CandidateExplainer {
 public:
  // fuse = false: candidates are simulated unfused only (`--no-fuse`).
  SimulatedCostModel(ClusterSpec cluster, int rerank_count, bool fuse = true);

  std::string name() const override { return "simulated"; }
  void price(const strategies::OpProblem& problem,
             std::vector<strategies::Candidate>& candidates) const override;
  std::vector<double> step_costs_us(const TensorSpec& current, const std::vector<Transition>& steps,
                                    const DeviceMesh& mesh) const override;
  std::vector<strategies::CandidateDetail> details(
      const strategies::OpProblem& problem,
      const std::vector<strategies::Candidate>& candidates) const override;

  const strategies::AnalyticCostModel& analytic() const { return analytic_; }
  int rerank_count() const { return rerank_count_; }

 private:
  strategies::AnalyticCostModel analytic_;
  int rerank_count_;
  bool fuse_ = true;
};

// The simulated time of one candidate alone (its plan lowered and run), in µs.
double simulate_candidate_us(const strategies::OpProblem& problem,
                             const strategies::CostModel& pricing, const ClusterSpec& cluster,
                             int candidate_index);

}  // namespace symmesh::sim
