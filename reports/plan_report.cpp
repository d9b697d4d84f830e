#include "reports/plan_report.hpp"

#include <algorithm>
#include <cmath>
#include <map>

#include "reports/text_table.hpp"
#include "strategies/analytic_cost_model.hpp"

namespace symmesh::reports {
namespace {

using strategies::Candidate;
using strategies::Plan;

nlohmann::json placements_json(const Placements& placements) {
  nlohmann::json out = nlohmann::json::array();
  for (const auto& p : placements) out.push_back(to_string(p));
  return out;
}

nlohmann::json inputs_placements_json(const std::vector<Placements>& inputs) {
  nlohmann::json out = nlohmann::json::array();
  for (const auto& p : inputs) out.push_back(placements_json(p));
  return out;
}

// JSON has no infinity: an impossible cost is null.
nlohmann::json cost_json(double cost_us) {
  if (!std::isfinite(cost_us)) return nullptr;
  return cost_us;
}

// "ag+mm" / "mm+rs", for the --explain column.
std::string fusion_short_name(strategies::Implementation implementation) {
  return implementation == strategies::Implementation::fused_mm_reducescatter ? "mm+rs" : "ag+mm";
}

// A redistribution step's implementation, as the lowering runs it; "nccl" for a plain
// collective on a cluster that runs them as NCCL's.
std::string implementation_text(const Plan& plan, const strategies::PlannedRedistribution& r,
                                size_t step, bool library) {
  const auto algorithm = plan.step_algorithm(r, step);
  if (!algorithm) return "local";
  if (library && *algorithm != CollectiveAlgorithm::fused_ring) return "nccl";
  return to_string(*algorithm);
}

const char* kImplementationNote =
    "  (ring, pairwise, fused ring: put_signal/wait_signal steps written by the core; nccl: "
    "as NCCL runs it, at the cluster's collectives: figures; local: nothing moves)\n";

std::string compute_text(const LocalGemm& c, bool batched) {
  std::string text = batched ? "batch=" + std::to_string(c.batch) + " " : "";
  return text + "m=" + std::to_string(c.m) + " n=" + std::to_string(c.n) +
         " k=" + std::to_string(c.k);
}

// "ranks 0-3,6" style list.
std::string rank_list(const std::vector<int>& ranks) {
  std::string out;
  for (size_t i = 0; i < ranks.size();) {
    size_t j = i;
    while (j + 1 < ranks.size() && ranks[j + 1] == ranks[j] + 1) ++j;
    if (!out.empty()) out.append(",");
    out.append(std::to_string(ranks[i]));
    if (j > i) out.append("-").append(std::to_string(ranks[j]));
    i = j + 1;
  }
  return out;
}

std::string candidate_inputs_text(const Plan& plan, const Candidate& c) {
  const auto names = plan.problem.input_names();
  std::string out;
  for (size_t i = 0; i < names.size(); ++i)
    out += (i ? "  " : "") + names[i] + " " + to_string(c.input_placements[i]);
  return out;
}

}  // namespace

namespace {

// How the chosen candidate was found: the mode, and for the priority-queue search its
// path, what it cost along the path and how many states it took.
std::string search_text(const Plan& plan, const std::vector<std::string>& names, bool explain) {
  std::string out;
  if (explain || plan.selection != strategies::PlacementSelection::full_expansion)
    out += "placement search: " + to_string(plan.selection) + " (reproduces " +
           strategies::pytorch_behaviour(plan.selection) + ")\n";
  if (plan.selection != strategies::PlacementSelection::priority_queue) return out;
  if (!plan.search) {
    out += plan.search_capped
               ? "  the search stopped after " + std::to_string(strategies::kMaxSearchStates) +
                     " states (a cap PyTorch does not have); the full expansion chose\n"
               : "  the search reached no placement; the full expansion chose, as PyTorch falls "
                 "back\n";
    return out;
  }
  const auto& s = *plan.search;
  out += "  path cost " + format_fixed(s.cost_us, 3) + " us in " + std::to_string(s.path.size()) +
         (s.path.size() == 1 ? " hop" : " hops") + " (" + std::to_string(s.states_popped) +
         " states popped, " + std::to_string(s.states_pushed) +
         " pushed); the redistributions below are the greedy planner's, as PyTorch runs them\n";
  for (const auto& hop : s.path)
    out += "  hop: " + names.at(hop.input) + " mesh dim " + std::to_string(hop.mesh_dim) + " " +
           to_string(hop.from) + "->" + to_string(hop.to) + "  " + format_fixed(hop.cost_us, 3) +
           " us\n";
  return out;
}

nlohmann::json search_json(const Plan& plan, const std::vector<std::string>& names) {
  nlohmann::json j = {{"mode", to_string(plan.selection)},
                      {"reproduces", strategies::pytorch_behaviour(plan.selection)}};
  if (plan.selection != strategies::PlacementSelection::priority_queue) return j;
  j["found"] = plan.search.has_value();
  j["capped"] = plan.search_capped;
  if (!plan.search) return j;
  const auto& s = *plan.search;
  j["path_cost_us"] = cost_json(s.cost_us);
  j["input_path_cost_us"] = s.input_cost_us;
  j["states_popped"] = s.states_popped;
  j["states_pushed"] = s.states_pushed;
  j["path"] = nlohmann::json::array();
  for (const auto& hop : s.path)
    j["path"].push_back({{"input", names.at(hop.input)},
                         {"mesh_dim", hop.mesh_dim},
                         {"from", to_string(hop.from)},
                         {"to", to_string(hop.to)},
                         {"cost_us", cost_json(hop.cost_us)}});
  return j;
}

}  // namespace

std::string plan_summary_text(const Plan& plan, int devices_per_host, bool explain) {
  PlanReportOptions options;
  options.devices_per_host = devices_per_host;
  options.explain = explain;
  return plan_summary_text(plan, options);
}

nlohmann::json plan_to_json(const Plan& plan, int devices_per_host) {
  PlanReportOptions options;
  options.devices_per_host = devices_per_host;
  return plan_to_json(plan, options);
}

std::string plan_summary_text(const Plan& plan, const PlanReportOptions& options) {
  const bool explain = options.explain;
  const auto& details = options.details;
  const auto& problem = plan.problem;
  const auto names = problem.input_names();
  const Candidate& chosen = plan.chosen_candidate();
  const bool batched = problem.equation().leading_is_batch();

  std::string out;
  out += "symmesh plan: " + to_string(problem.op);
  for (size_t i = 0; i < names.size(); ++i)
    out += (i ? ", " : " ") + names[i] + " " + to_string(problem.inputs[i].shape) + " [" +
           to_string(problem.inputs[i].placements) + "]";
  out += " -> out " + to_string(problem.output_shape()) +
         (problem.output_target ? " [to " + to_string(*problem.output_target) + "]" : "") + ", " +
         to_string(problem.dtype()) + ", mesh " + to_string(problem.mesh) + ", cost model " +
         plan.cost_model + ", " +
         (options.cluster.empty() ? std::to_string(options.devices_per_host) + " devices per host"
                                  : "cluster " + options.cluster) +
         "\n";
  out += "chosen:   " + candidate_inputs_text(plan, chosen) + "  ->  out " +
         to_string(chosen.output_placements) + "   cost " + format_fixed(chosen.cost_us, 3) +
         " us   (candidate #" + std::to_string(chosen.index) +
         (options.auto_inputs.empty()
              ? "; " + std::to_string(plan.kept_count()) + " of " +
                    std::to_string(plan.candidates.size()) + " kept after filters)\n"
              : " of every rule, chosen with the layout)\n");
  if (!details.empty()) {  // a model that prices compute: the op's whole cost
    const auto& d = details.at(plan.chosen);
    out += "full cost: " + format_fixed(chosen.cost_us, 3) + " us = communication " +
           format_fixed(d.comm_us, 3) + " us + compute " + format_fixed(d.compute_us, 3) + " us (" +
           strategies::gib_text(d.memory_bytes_per_rank) + " per GPU)\n";
  }
  if (!options.auto_layouts.empty()) out += options.auto_layouts + "\n";
  out += search_text(plan, names, explain);
  if (chosen.implementation != strategies::Implementation::unfused)
    out += "implementation: " + to_string(chosen.implementation) + ", " +
           std::to_string(chosen.chunks) + (chosen.chunks == 1 ? " chunk" : " chunks") +
           " per block (unfused: " + format_fixed(chosen.unfused_cost_us, 3) + " us)\n";

  std::vector<const strategies::PlannedRedistribution*> moves;
  for (const auto& r : plan.redistributions) moves.push_back(&r);
  if (plan.output_redistribution) moves.push_back(&*plan.output_redistribution);
  if (moves.empty()) {
    out += "redistributions: none (inputs are already in place)\n";
  } else {
    out += "redistributions:\n";
    std::vector<double> costs_s;
    for (const strategies::PlannedRedistribution* move : moves)
      for (double us : move->step_cost_us) costs_s.push_back(us * 1e-6);
    const TimeUnit unit = time_unit_for(costs_s);
    TextTable table({"input", "from", "to", "mesh dim", "step", "collective", "implementation",
                     "bytes/rank", unit.header("cost")});
    for (const strategies::PlannedRedistribution* move : moves) {
      const auto& r = *move;
      const auto& steps = r.redistribution.steps;
      for (size_t s = 0; s < steps.size(); ++s) {
        const bool fused = plan.runs_fused(r, s);
        table.add_row({s == 0 ? (r.input < 0 ? "out" : names[r.input]) : "",
                       s == 0 ? to_string(r.redistribution.from) : "",
                       s == 0 ? to_string(r.redistribution.to) : "",
                       std::to_string(steps[s].mesh_dim),
                       to_string(steps[s].from) + "->" + to_string(steps[s].to),
                       to_string(steps[s].collective) + (fused ? " (fused into the mm)" : ""),
                       implementation_text(plan, r, s, options.library_collectives),
                       std::to_string(steps[s].bytes), unit.cell(r.step_cost_us[s] * 1e-6)});
      }
    }
    out += table.render();
    out += kImplementationNote;
  }

  // Ranks grouped by identical local work.
  std::map<std::tuple<int64_t, int64_t, int64_t, int64_t>, std::vector<int>> groups;
  for (int rank = 0; rank < static_cast<int>(plan.local_compute.size()); ++rank) {
    const auto& c = plan.local_compute[rank];
    groups[{c.batch, c.m, c.n, c.k}].push_back(rank);
  }
  out += "local " + std::string(batched ? "bmm" : "mm") + " per rank:";
  if (groups.size() == 1) {
    out += " " + compute_text(plan.local_compute[0], batched) + " on every rank\n";
  } else {
    out += "\n";
    std::vector<std::vector<int>> ordered;
    for (const auto& entry : groups) ordered.push_back(entry.second);
    std::sort(ordered.begin(), ordered.end());  // by first rank
    for (const auto& ranks : ordered)
      out += std::string(ranks.size() == 1 ? "  rank " : "  ranks ") + rank_list(ranks) + ": " +
             compute_text(plan.local_compute[ranks[0]], batched) + "\n";
  }

  if (explain) {
    std::vector<const Candidate*> kept, dropped;
    for (const auto& c : plan.candidates) (c.kept() ? kept : dropped).push_back(&c);
    std::stable_sort(kept.begin(), kept.end(), [](const Candidate* x, const Candidate* y) {
      return x->cost_us < y->cost_us;
    });
    const bool detailed = !details.empty();
    // One unit for the table's times: the largest of what it shows decides (text_table.hpp).
    std::vector<double> times_s;
    for (const Candidate* c : kept) {
      times_s.push_back(c->cost_us * 1e-6);
      if (detailed) {
        const auto& d = details.at(c - plan.candidates.data());
        times_s.insert(times_s.end(), {d.comm_us * 1e-6, d.compute_us * 1e-6,
                                       c->unfused_cost_us * 1e-6, c->fused_cost_us * 1e-6});
      }
    }
    const TimeUnit unit = time_unit_for(times_s);
    const auto in_unit = [&](double us) { return unit.cell(us * 1e-6); };
    std::vector<std::string> headers{"#", "out"};
    for (const auto& n : names) headers.push_back(n);
    if (detailed) {
      headers.push_back(unit.header("comm"));
      headers.push_back(unit.header("compute"));
      headers.push_back("memory/GPU");
      headers.push_back(unit.header("unfused"));
      headers.push_back(unit.header("fused"));
    }
    headers.push_back(unit.header("cost"));
    headers.push_back("note");
    TextTable table(headers);
    auto row = [&](const Candidate& c, const std::string& cost, const std::string& note) {
      std::vector<std::string> cells{std::to_string(c.index), to_string(c.output_placements)};
      for (const auto& p : c.input_placements) cells.push_back(to_string(p));
      if (detailed) {
        const auto& d = details.at(&c - plan.candidates.data());
        const bool known = c.kept() && (d.feasible || d.memory_bytes_per_rank > 0);
        cells.push_back(known ? in_unit(d.comm_us) : "-");
        cells.push_back(known ? in_unit(d.compute_us) : "-");
        cells.push_back(known ? strategies::gib_text(d.memory_bytes_per_rank) : "-");
        cells.push_back(c.kept() && d.feasible ? in_unit(c.unfused_cost_us) : "-");
        cells.push_back(c.kept() && d.feasible && std::isfinite(c.fused_cost_us)
                            ? in_unit(c.fused_cost_us) + " (" +
                                  fusion_short_name(c.fused_implementation) + " x" +
                                  std::to_string(c.fused_chunks) + ")"
                            : "-");
      }
      cells.push_back(cost);
      cells.push_back(note);
      table.add_row(cells);
    };
    for (const Candidate* c : kept) {
      std::string note = c->index == chosen.index ? "<- chosen" : "";
      if (detailed && !details.at(c - plan.candidates.data()).note.empty())
        note += (note.empty() ? "" : "; ") + details.at(c - plan.candidates.data()).note;
      row(*c, in_unit(c->cost_us), note);
    }
    for (const Candidate* c : dropped) row(*c, "-", "filtered: " + c->filtered);
    out += "candidates (kept ones by cost, ties in index order; then filtered ones):\n";
    out += table.render();
    out += kImplementationNote;
  }
  return out;
}

nlohmann::json plan_to_json(const Plan& plan, const PlanReportOptions& options) {
  const auto& problem = plan.problem;
  const auto names = problem.input_names();
  const Candidate& chosen = plan.chosen_candidate();
  nlohmann::json j;
  j["op"] = to_string(problem.op);
  j["mesh"] = problem.mesh.shape();
  j["cost_model"] = plan.cost_model;
  j["dtype"] = to_string(problem.dtype());
  j["devices_per_host"] = options.devices_per_host;
  if (!options.cluster.empty()) j["cluster"] = options.cluster;
  j["output_shape"] = problem.output_shape();
  j["inputs"] = nlohmann::json::array();
  for (size_t i = 0; i < problem.inputs.size(); ++i)
    j["inputs"].push_back({{"name", names[i]},
                           {"shape", problem.inputs[i].shape},
                           {"placements", placements_json(problem.inputs[i].placements)}});

  auto redistribution_json = [&plan, &options](const strategies::PlannedRedistribution& r) {
    nlohmann::json steps = nlohmann::json::array();
    for (size_t s = 0; s < r.redistribution.steps.size(); ++s) {
      const auto& step = r.redistribution.steps[s];
      steps.push_back(
          {{"mesh_dim", step.mesh_dim},
           {"from", to_string(step.from)},
           {"to", to_string(step.to)},
           {"collective", to_string(step.collective)},
           {"implementation", implementation_text(plan, r, s, options.library_collectives)},
           {"bytes", step.bytes},
           {"buffer_bytes", step.buffer_bytes},
           {"cost_us", cost_json(r.step_cost_us[s])}});
    }
    return nlohmann::json{{"input", r.input},
                          {"from", placements_json(r.redistribution.from)},
                          {"to", placements_json(r.redistribution.to)},
                          {"steps", steps}};
  };
  nlohmann::json redistributions = nlohmann::json::array();
  for (const auto& r : plan.redistributions) redistributions.push_back(redistribution_json(r));
  nlohmann::json local = nlohmann::json::array();
  for (const auto& c : plan.local_compute)
    local.push_back({{"batch", c.batch}, {"m", c.m}, {"n", c.n}, {"k", c.k}});

  if (!options.details.empty()) {
    const auto& d = options.details.at(plan.chosen);
    j["full_cost"] = {{"cost_us", cost_json(chosen.cost_us)},
                      {"comm_us", d.comm_us},
                      {"compute_us", d.compute_us},
                      {"memory_bytes_per_rank", d.memory_bytes_per_rank}};
  }
  if (!options.auto_inputs.empty()) j["auto_inputs"] = options.auto_inputs;
  j["chosen"] = {{"index", chosen.index},
                 {"input_placements", inputs_placements_json(chosen.input_placements)},
                 {"output_placements", placements_json(chosen.output_placements)},
                 {"cost_us", cost_json(chosen.cost_us)},
                 {"implementation", to_string(chosen.implementation)},
                 {"chunks", chosen.chunks},
                 {"redistributions", redistributions},
                 {"local_compute", local}};
  if (problem.output_target) {
    j["output_target"] = placements_json(*problem.output_target);
    j["chosen"]["output_redistribution"] =
        plan.output_redistribution ? redistribution_json(*plan.output_redistribution) : nullptr;
  }

  nlohmann::json candidates = nlohmann::json::array();
  for (const auto& c : plan.candidates) {
    nlohmann::json entry = {{"index", c.index},
                            {"input_placements", inputs_placements_json(c.input_placements)},
                            {"output_placements", placements_json(c.output_placements)},
                            {"cost_us", c.kept() ? cost_json(c.cost_us) : nullptr}};
    if (!c.kept()) entry["filtered"] = c.filtered;
    if (c.kept()) {
      if (problem.output_target) entry["output_cost_us"] = cost_json(c.output_cost_us);
      entry["implementation"] = to_string(c.implementation);
      entry["chunks"] = c.chunks;
    }
    if (c.kept() && !options.details.empty()) {
      entry["unfused_cost_us"] = cost_json(c.unfused_cost_us);
      entry["fused_cost_us"] = cost_json(c.fused_cost_us);
      if (std::isfinite(c.fused_cost_us)) {
        entry["fused_implementation"] = to_string(c.fused_implementation);
        entry["fused_chunks"] = c.fused_chunks;
      }
      const auto& d = options.details.at(&c - plan.candidates.data());
      entry["comm_us"] = d.comm_us;
      entry["compute_us"] = d.compute_us;
      entry["memory_bytes_per_rank"] = d.memory_bytes_per_rank;
      entry["feasible"] = d.feasible;
      if (!d.note.empty()) entry["note"] = d.note;
    }
    candidates.push_back(entry);
  }
  j["candidates"] = candidates;
  j["placement_search"] = search_json(plan, names);
  return j;
}

}  // namespace symmesh::reports
