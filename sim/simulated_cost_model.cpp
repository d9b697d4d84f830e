#include "sim/simulated_cost_model.hpp"

#include <algorithm>
#include <atomic>
#include <cmath>
#include <future>
#include <thread>

#include "core/errors.hpp"
#include "sim/forked_run.hpp"
#include "strategies/plan.hpp"
#include "strategies/plan_lowering.hpp"

namespace symmesh::sim {
namespace {

using strategies::Candidate;
using strategies::CandidateDetail;
using strategies::kInfiniteCost;

std::string us_text(double us) {
  char text[48];
  std::snprintf(text, sizeof text, "%.3f us", us);
  return text;
}

// Positions of the k cheapest finite candidates, cheapest first, ties to the lowest index.
std::vector<int> cheapest(const std::vector<Candidate>& candidates, int k) {
  std::vector<int> order;
  for (int i = 0; i < static_cast<int>(candidates.size()); ++i)
    if (candidates[i].kept() && std::isfinite(candidates[i].cost_us)) order.push_back(i);
  std::stable_sort(order.begin(), order.end(),
                   [&](int x, int y) { return candidates[x].cost_us < candidates[y].cost_us; });
  if (static_cast<int>(order.size()) > k) order.resize(k);
  return order;
}

}  // namespace

double simulate_candidate_us(const strategies::OpProblem& problem,
                             const strategies::CostModel& pricing, const ClusterSpec& cluster,
                             int candidate_index) {
  const strategies::Plan plan = strategies::build_plan_for(problem, pricing, candidate_index);
  Program program(problem.mesh.size());
  strategies::LoweringOptions lowering;
  lowering.name = "candidate " + std::to_string(candidate_index);
  strategies::lower_plan(plan, program, lowering);
  SimOptions options;
  options.record_timeline = false;
  return run_simulation(program, cluster, options).makespan_s * 1e6;
}

SimulatedCostModel::SimulatedCostModel(ClusterSpec cluster, int rerank_count)
    : analytic_(std::move(cluster)), rerank_count_(rerank_count) {
  if (rerank_count_ < 1)
    throw InvalidArgument(
        "must simulate at least 1 candidate, got " + std::to_string(rerank_count_), "--rerank");
}

void SimulatedCostModel::price(const strategies::OpProblem& problem,
                               std::vector<Candidate>& candidates) const {
  analytic_.price(problem, candidates);
  const std::vector<int> chosen = cheapest(candidates, rerank_count_);

  // One simulation per candidate, each in its own forked process; at most one worker per
  // core, each taking the next candidate not yet simulated.
  std::vector<double> simulated(chosen.size(), kInfiniteCost);
  std::atomic<size_t> next{0};
  auto worker = [&] {
    for (size_t j = next++; j < chosen.size(); j = next++)
      simulated[j] = simulate_candidate_us(problem, analytic_, analytic_.cluster(),
                                           candidates[chosen[j]].index);
  };
  const size_t workers =
      std::min<size_t>(chosen.size(), std::max(1u, std::thread::hardware_concurrency()));
  std::vector<std::future<void>> running;
  for (size_t w = 0; w < workers; ++w) running.push_back(std::async(std::launch::async, worker));
  for (auto& r : running) r.get();  // rethrows the first failure

  std::vector<bool> simulated_row(candidates.size(), false);
  for (size_t j = 0; j < chosen.size(); ++j) {
    candidates[chosen[j]].cost_us = simulated[j];
    simulated_row[chosen[j]] = true;
  }
  for (size_t i = 0; i < candidates.size(); ++i)
    if (candidates[i].kept() && !simulated_row[i]) candidates[i].cost_us = kInfiniteCost;
}

std::vector<double> SimulatedCostModel::step_costs_us(const TensorSpec& current,
                                                      const std::vector<Transition>& steps,
                                                      const DeviceMesh& mesh) const {
  return analytic_.step_costs_us(current, steps, mesh);
}

std::vector<CandidateDetail> SimulatedCostModel::details(
    const strategies::OpProblem& problem, const std::vector<Candidate>& candidates) const {
  std::vector<CandidateDetail> out = analytic_.details(problem, candidates);
  for (size_t i = 0; i < candidates.size(); ++i) {
    const Candidate& c = candidates[i];
    CandidateDetail& d = out[i];
    if (!c.kept() || !d.feasible) continue;
    const double analytic_us = d.comm_us + d.compute_us;
    if (std::isfinite(c.cost_us))
      d.note = "simulated; analytic " + us_text(analytic_us);
    else
      d.note = "not simulated (analytic " + us_text(analytic_us) + ", outside the " +
               std::to_string(rerank_count_) + " cheapest)";
  }
  return out;
}

}  // namespace symmesh::sim
