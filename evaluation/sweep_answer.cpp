#include "evaluation/sweep_answer.hpp"

#include <cmath>
#include <cstdio>
#include <map>
#include <tuple>

#include "core/errors.hpp"
#include "strategies/dataflow_graph.hpp"

namespace symmesh::evaluation {
namespace {

std::string cluster_text(const SweepPoint& p, const std::vector<std::string>& names) {
  std::string out = std::to_string(p.nodes) + (p.nodes == 1 ? " node (" : " nodes (") +
                    std::to_string(p.gpus) + " GPUs), mesh " + named_mesh_text(p.mesh, names);
  if (p.micro_batch > 0) out += ", micro-batch " + std::to_string(p.micro_batch);
  if (p.zero >= 0) out += ", ZeRO " + std::to_string(p.zero);
  return out;
}

// "Strategies: qkv S(0),R x R,S(1) -> S(0),S(1); …\n", or "" without matmuls. A step
// with more matmuls than fit a line lists only the file's forward ops (a dataflow step's
// derived ops are named "<op>.dgrad", "<op>.wgrad", "<op>.recompute") and says where the
// rest are.
std::string strategies_line(const SweepPoint& p) {
  constexpr int kMaxListed = 8;
  int matmuls = 0;
  for (const auto& op : p.report.ops) matmuls += op.input_placements ? 1 : 0;
  const bool forward_only = matmuls > kMaxListed;
  std::string out;
  int listed = 0, left = 0;
  for (const auto& op : p.report.ops) {
    const std::string group = strategies::work_group_of(op.name);
    if (forward_only && (group == "backward" || group == "recompute")) continue;
    if (forward_only && op.input_placements && listed >= kMaxListed) {
      ++left;  // a whole model's forward is still too long for one line
      continue;
    }
    listed += op.input_placements ? 1 : 0;
    const std::string s = strategy_text(op);
    if (!s.empty()) out.append(out.empty() ? "" : "; ").append(op.name + " " + s);
  }
  if (out.empty()) return "";
  if (left > 0) out += "; and " + std::to_string(left) + " more";
  return "Strategies" + std::string(forward_only ? " (forward; all in summary.md)" : "") + ": " +
         out + ".\n";
}

}  // namespace

std::string format_time(double seconds) {
  char buffer[32];
  const double magnitude = std::abs(seconds);
  if (magnitude < 1e-3)
    std::snprintf(buffer, sizeof buffer, "%.4g us", seconds * 1e6);
  else if (magnitude < 1)
    std::snprintf(buffer, sizeof buffer, "%.4g ms", seconds * 1e3);
  else
    std::snprintf(buffer, sizeof buffer, "%.4g s", seconds);
  return buffer;
}

std::string named_mesh_text(const std::vector<int>& mesh, const std::vector<std::string>& names) {
  std::string out = mesh_text(mesh);
  if (mesh.empty() || names.size() != mesh.size()) return out;
  std::string joined;
  for (const auto& n : names) joined.append(joined.empty() ? "" : ",").append(n);
  return out + " (" + joined + ")";
}

bool meets_objective(const SweepPoint& point, std::optional<double> max_time_s) {
  return max_time_s && point.simulated() && point.total_time_s() <= *max_time_s;
}

bool better_point(const SweepPoint& a, size_t a_index, const SweepPoint& b, size_t b_index,
                  std::optional<double> max_time_s) {
  const bool a_meets = meets_objective(a, max_time_s);
  const bool b_meets = meets_objective(b, max_time_s);
  if (a_meets != b_meets) return a_meets;
  if (a_meets)
    return std::tie(a.gpus, a.report.total_time_s, a_index) <
           std::tie(b.gpus, b.report.total_time_s, b_index);
  return std::tie(a.report.total_time_s, a.gpus, a_index) <
         std::tie(b.report.total_time_s, b.gpus, b_index);
}

SweepAnswer answer_sweep(const std::vector<SweepPoint>& points, std::optional<double> max_time_s) {
  SweepAnswer answer;
  answer.max_time_s = max_time_s;
  std::map<int64_t, size_t> fastest;  // GPUs -> point
  for (size_t i = 0; i < points.size(); ++i) {
    const SweepPoint& p = points[i];
    if (!p.simulated()) {
      ++answer.skipped;
      continue;
    }
    ++answer.simulated;
    answer.meeting += meets_objective(p, max_time_s);
    if (!answer.best || better_point(p, i, points[*answer.best], *answer.best, max_time_s))
      answer.best = i;
    auto [it, inserted] = fastest.emplace(p.gpus, i);
    if (!inserted && p.total_time_s() < points[it->second].total_time_s()) it->second = i;
  }
  for (const auto& [gpus, i] : fastest) answer.fastest_per_gpu_count.push_back(i);
  if (answer.best && max_time_s) {
    answer.met = meets_objective(points[*answer.best], max_time_s);
    if (!answer.met) {
      answer.miss_s = points[*answer.best].total_time_s() - *max_time_s;
      answer.miss_percent = 100 * answer.miss_s / *max_time_s;
    }
  }
  return answer;
}

std::string answer_text(const SweepAnswer& answer, const std::vector<SweepPoint>& points,
                        const std::vector<std::string>& mesh_names) {
  if (!answer.best) return "Answer: none; every point was skipped.\n";
  const SweepPoint& best = points[*answer.best];
  const std::string where = cluster_text(best, mesh_names);
  if (!answer.max_time_s) {
    std::string per_count;
    for (size_t i : answer.fastest_per_gpu_count)
      per_count.append(per_count.empty() ? "" : "; ")
          .append(std::to_string(points[i].gpus) + " GPUs mesh " + point_layout_text(points[i]) +
                  ", " + format_time(points[i].total_time_s()));
    return "Answer (no objective): fastest " + where + ", " + format_time(best.total_time_s()) +
           " per step. Fastest per GPU count: " + per_count + ".\n" + strategies_line(best);
  }
  const std::string budget = format_time(*answer.max_time_s);
  if (answer.met)
    return "Answer: " + where + " meets the " + budget +
           " objective: " + format_time(best.total_time_s()) + " per step (" +
           std::to_string(answer.meeting) + " of " + std::to_string(answer.simulated) +
           " points meet it).\n" + strategies_line(best);
  char percent[32];
  std::snprintf(percent, sizeof percent, "%.1f%%", answer.miss_percent);
  return "Answer: no point meets the " + budget + " objective; the fastest, " + where + ", takes " +
         format_time(best.total_time_s()) + " per step: " + format_time(answer.miss_s) + " (" +
         percent + ") over.\n" + strategies_line(best);
}

void throw_all_skipped(const SweepRun& run, const std::string& scenario_path) {
  const std::string first = run.points.front().skip_reason.value_or("");
  bool same = true;
  for (const auto& p : run.points) same &= p.skip_reason == first;
  if (same && run.points.size() == 1) throw InvalidArgument(first, "");
  throw InvalidArgument("no point of the sweep can be simulated (" +
                            std::to_string(run.points.size()) + " skipped); " +
                            (same ? "every one: " : "the first: ") + first,
                        scenario_path);
}

}  // namespace symmesh::evaluation
