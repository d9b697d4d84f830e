#include "sim/simulated_cost_model.hpp"

#include <algorithm>
#include <cmath>
#include <memory>
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

namespace {

// One candidate's plan lowered alone into a Program (timing only, no timeline).
Program candidate_program(const strategies::OpProblem& problem,
                          const strategies::CostModel& pricing, int candidate_index) {
  const strategies::Plan plan = strategies::build_plan_for(problem, pricing, candidate_index);
  Program program(problem.mesh.size());
  strategies::LoweringOptions lowering;
  lowering.name = "candidate " + std::to_string(candidate_index);
  strategies::lower_plan(plan, program, lowering);
  return program;
}

SimOptions timing_only() {
  SimOptions options;
  options.record_timeline = false;
  return options;
}

}  // namespace

double simulate_candidate_us(const strategies::OpProblem& problem,
                             const strategies::CostModel& pricing, const ClusterSpec& cluster,
                             int candidate_index) {
  const Program program = candidate_program(problem, pricing, candidate_index);
  return run_simulation(program, cluster, timing_only()).makespan_s * 1e6;
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

  // One simulation per candidate, each in its own forked process, at most one per core at
  // a time, all started and collected from this thread (see sim/forked_run.hpp).
  std::vector<Program> programs;
  for (int c : chosen) programs.push_back(candidate_program(problem, analytic_, candidates[c].index));
  std::vector<double> simulated(chosen.size(), kInfiniteCost);
  const size_t at_once = std::max(1u, std::thread::hardware_concurrency());
  std::vector<std::pair<size_t, std::unique_ptr<SimulationProcess>>> running;
  size_t next = 0;
  while (next < chosen.size() || !running.empty()) {
    while (next < chosen.size() && running.size() < at_once) {
      running.emplace_back(next, std::make_unique<SimulationProcess>(
                                     programs[next], analytic_.cluster(), timing_only()));
      ++next;
    }
    std::vector<SimulationProcess*> waiting;
    for (auto& [j, process] : running) waiting.push_back(process.get());
    wait_for_any(waiting, -1);
    for (auto it = running.begin(); it != running.end();)
      if (it->second->finished()) {
        simulated[it->first] = it->second->result().makespan_s * 1e6;  // throws on failure
        it = running.erase(it);
      } else {
        ++it;
      }
  }

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
