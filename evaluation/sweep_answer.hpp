#pragma once
// The capacity-planning answer of a sweep. With `objective.max_time`: the smallest cluster
// (fewest GPUs; then the fastest; then the first in sweep order) whose step time meets
// it, or — when none does — the fastest point and by how much it misses. Without an
// objective: the fastest point per GPU count, and the fastest overall.
#include <optional>
#include <string>
#include <vector>

#include "evaluation/sweep_runner.hpp"

namespace symmesh::evaluation {

// Step time within the budget (no objective: false).
bool meets_objective(const SweepPoint& point, std::optional<double> max_time_s);

// The ranking behind `SweepAnswer::best`, over simulated points with their sweep indices:
// points meeting the objective first, by GPUs, then time; the others by time, then GPUs;
// the sweep index last. Without an objective every point is ranked by time, then GPUs.
bool better_point(const SweepPoint& a, size_t a_index, const SweepPoint& b, size_t b_index,
                  std::optional<double> max_time_s);

struct SweepAnswer {
  std::optional<double> max_time_s;
  // Met: the answer. Not met: the fastest point. No objective: the fastest point. Empty
  // when no point was simulated.
  std::optional<size_t> best;
  bool met = false;
  double miss_s = 0;                          // not met: best's time - max_time
  double miss_percent = 0;                    // … as a percentage of max_time
  std::vector<size_t> fastest_per_gpu_count;  // ascending GPU count
  int simulated = 0;
  int skipped = 0;
  int meeting = 0;  // points meeting the objective
};

SweepAnswer answer_sweep(const std::vector<SweepPoint>& points, std::optional<double> max_time_s);

// A sweep with no answer because every point was skipped: the scenario cannot be evaluated
// at any size, which is bad input. Throws InvalidArgument with the skip reason (one point:
// its reason as it is; several: how many, and the reason they share or the first one).
[[noreturn]] void throw_all_skipped(const SweepRun& run, const std::string& scenario_path);

// The answer in one or two lines (each ending in a newline), e.g.
//   Answer: 2 nodes (16 GPUs), mesh 2x8 (dp,tp): 8.21 ms per step, within the 10 ms objective.
//   Strategies: qkv S(0),S(0) x R,S(1) -> S(0),S(1); …
std::string answer_text(const SweepAnswer& answer, const std::vector<SweepPoint>& points,
                        const std::vector<std::string>& mesh_names);

// A duration with 4 significant digits in us, ms or s: "9.5 us", "12.34 ms", "1.5 s".
std::string format_time(double seconds);
// "2x4 (dp,tp)" when the mesh dims have names.
std::string named_mesh_text(const std::vector<int>& mesh, const std::vector<std::string>& names);

}  // namespace symmesh::evaluation
