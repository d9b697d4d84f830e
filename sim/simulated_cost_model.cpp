#include "sim/simulated_cost_model.hpp"

#include <algorithm>
#include <cmath>
#include <memory>
#include <thread>

#include "core/errors.hpp"
#include "sim/forked_run.hpp"
#include "sim/simulation_pool.hpp"
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

// A candidate's plan lowered alone into a Program (timing only, no timeline), run as
// `implementation` with `chunks`.
Program candidate_program(strategies::Plan plan, strategies::Implementation implementation,
                          int chunks) {
  plan.candidates[plan.chosen].implementation = implementation;
  plan.candidates[plan.chosen].chunks = chunks;
  Program program(plan.problem.mesh.size());
  strategies::LoweringOptions lowering;
  lowering.name = "candidate " + std::to_string(plan.chosen_candidate().index);
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
  const strategies::Plan plan = strategies::build_plan_for(problem, pricing, candidate_index);
  const Candidate& c = plan.chosen_candidate();
  const Program program = candidate_program(plan, c.implementation, c.chunks);
  return run_simulation(program, cluster, timing_only()).makespan_s * 1e6;
}

SimulatedCostModel::SimulatedCostModel(ClusterSpec cluster, int rerank_count, bool fuse)
    : analytic_(std::move(cluster), fuse), rerank_count_(rerank_count), fuse_(fuse) {
  if (rerank_count_ < 1)
    throw InvalidArgument(
        "must simulate at least 1 candidate, got " + std::to_string(rerank_count_), "--rerank");
}

void SimulatedCostModel::price(const strategies::OpProblem& problem,
                               std::vector<Candidate>& candidates) const {
  analytic_.price(problem, candidates);
  const std::vector<int> chosen = cheapest(candidates, rerank_count_);

  // Every such candidate is simulated unfused and, where it can be, fused (at analytic's
  // chunk count): the simulator sees the overlap and decides.
  struct Variant {
    int row;
    strategies::Implementation implementation;
    int chunks;
  };
  std::vector<Variant> variants;
  for (int c : chosen) {
    variants.push_back({c, strategies::Implementation::unfused, 1});
    if (fuse_ && std::isfinite(candidates[c].fused_cost_us))
      variants.push_back({c, candidates[c].fused_implementation, candidates[c].fused_chunks});
  }

  // Each candidate's plan is built once and lowered once per variant.
  strategies::Plan plan;
  std::vector<Program> programs;
  for (size_t j = 0; j < variants.size(); ++j) {
    if (j == 0 || variants[j].row != variants[j - 1].row)
      plan = strategies::build_plan_for(problem, analytic_, candidates[variants[j].row].index);
    programs.push_back(candidate_program(plan, variants[j].implementation, variants[j].chunks));
  }
  // One simulation per variant, each in its own forked process, at most one per core at
  // a time (sim/simulation_pool.hpp).
  std::vector<const Program*> program_of;
  for (const Program& p : programs) program_of.push_back(&p);
  const auto results = run_simulations(program_of, analytic_.cluster(), timing_only(),
                                       std::max(1u, std::thread::hardware_concurrency()));
  std::vector<double> simulated;
  for (const RunResult& r : results) simulated.push_back(r.makespan_s * 1e6);

  std::vector<bool> simulated_row(candidates.size(), false);
  for (const int c : chosen) {
    candidates[c].cost_us = kInfiniteCost;
    candidates[c].implementation = strategies::Implementation::unfused;
    candidates[c].chunks = 1;
    simulated_row[c] = true;
  }
  for (size_t j = 0; j < variants.size(); ++j) {
    Candidate& c = candidates[variants[j].row];
    if (variants[j].implementation == strategies::Implementation::unfused)
      c.unfused_cost_us = simulated[j];
    else
      c.fused_cost_us = simulated[j];
    if (simulated[j] < c.cost_us) {
      c.cost_us = simulated[j];
      c.implementation = variants[j].implementation;
      c.chunks = variants[j].chunks;
    }
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
