#pragma once
// The points of a capacity sweep (node count x mesh shape) and their evaluation, several
// at once. Each point is the scenario moved to that size (with_cluster_size) and
// evaluated end to end (evaluate_scenario, one forked simulation per point). A point that
// is invalid at its size (a put_signal rank outside the cluster, a shape that cannot be
// sharded that way, no listed mesh shape for that GPU count) is skipped with its reason,
// and so is one whose host memory estimate (evaluation/memory_estimate.hpp), taken before
// it is lowered, is more than the machine has available; points start only while the
// estimates of those in flight fit, so fewer than --jobs may run at once.
#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "core/run_result.hpp"
#include "core/scenario.hpp"
#include "evaluation/scenario_evaluation.hpp"

namespace symmesh::evaluation {

struct SweepPoint {
  int nodes = 0;
  int64_t gpus = 0;
  std::vector<int> mesh;                   // empty when no listed shape covers the GPUs
  std::optional<std::string> skip_reason;  // set when the point was not simulated
  SimulationReport report;                 // when simulated
  // A model scenario that left `recompute` open and did not fit at this size: the point
  // was planned again with every layer recomputed (model.recompute: full), and fit.
  bool recompute_fallback = false;
  // With sweep.micro_batch / sweep.zero: the micro-batch size and ZeRO stage of this point
  // (0 and -1: the scenario's own).
  int64_t micro_batch = 0;
  int zero = -1;

  bool simulated() const { return !skip_reason.has_value(); }
  double total_time_s() const { return report.total_time_s; }
};

// The points in output order: node counts as listed, then sweep_mesh_shapes' order, each
// mesh with every micro-batch size, then ZeRO stage, the sweep lists. A
// scenario without `sweep:` gives its own cluster size and mesh only.
std::vector<SweepPoint> sweep_points(const Scenario& scenario);

struct SweepProgress {
  size_t done = 0;
  size_t total = 0;
  bool finished = false;
};

struct SweepOptions {
  int jobs = 1;  // points evaluated at once
  // Called with the points done so far: after each point, and at least once a second
  // while points run; last with finished set. Empty: nothing is reported.
  std::function<void(const SweepProgress&)> on_progress;
  std::optional<double> max_time_s;
  EvaluationOptions evaluation;
  // Which points this process evaluates (a distributed sweep shares them out,
  // tools/cli/mpi_sweep.hpp); empty: all. The others keep skip_reason kNotEvaluatedHere,
  // count in no progress and are never `best`.
  std::function<bool(size_t point)> evaluates;
  // Whether the best point is simulated again for its trace (best_trace_json).
  bool trace_best = true;
};

// The skip_reason of a point SweepOptions::evaluates left to another process.
inline constexpr const char* kNotEvaluatedHere = "evaluated by another process";

struct SweepRun {
  std::vector<SweepPoint> points;
  std::optional<size_t> best;   // the point better_point ranks first (see sweep_answer.hpp)
  std::string best_trace_json;  // its simulated timeline as a Chrome trace
  double wall_s = 0;
};

// Evaluates every point. Points invalid at their size are skipped; any other error (a
// deadlock, a crashed simulation) is re-thrown after the running points finish, naming
// the point, and stops the sweep.
SweepRun run_sweep(const Scenario& scenario, const SweepOptions& options);

// The simulated timeline of `point` (one of sweep_points(scenario), simulated) as a Chrome
// trace, as run_sweep gives its best point's; empty when the simulation passes the
// wall-clock limit this time.
std::string sweep_point_trace(const Scenario& scenario, const SweepPoint& point,
                              const EvaluationOptions& options);

// "2x4"; "-" for no shape.
std::string mesh_text(const std::vector<int>& mesh);
// The point's mesh and, where the sweep varies them, its micro-batch size and ZeRO stage:
// "2x2x4 mb 2 zero 1".
std::string point_layout_text(const SweepPoint& point);

}  // namespace symmesh::evaluation
