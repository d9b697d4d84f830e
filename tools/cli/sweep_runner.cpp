#include "tools/cli/sweep_runner.hpp"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <exception>
#include <mutex>
#include <stdexcept>
#include <thread>

#include "core/errors.hpp"
#include "tools/cli/sweep_answer.hpp"
#include "tools/cli/sweep_progress.hpp"
#include "tools/scenario/scenario_loader.hpp"

namespace symmesh::cli {
namespace {

using Clock = std::chrono::steady_clock;

// Simulates one point and fills its report; returns the evaluation (its timeline only when
// options ask for it). Invalid-at-this-size errors skip the point.
std::optional<Evaluation> evaluate_point(const Scenario& scenario, SweepPoint& point,
                                         const EvaluationOptions& options) {
  Scenario resized;
  try {
    resized = with_cluster_size(scenario, point.nodes, point.mesh);
  } catch (const InvalidArgument& e) {
    point.skip_reason = e.message();
    return std::nullopt;
  }
  try {
    Evaluation evaluation = evaluate_scenario(resized, options);
    point.report = evaluation.report;
    return evaluation;
  } catch (const InvalidArgument& e) {
    point.skip_reason = e.what();
  } catch (const Unsupported& e) {
    point.skip_reason = e.what();
  }
  return std::nullopt;
}

}  // namespace

std::string mesh_text(const std::vector<int>& mesh) {
  if (mesh.empty()) return "-";
  std::string out;
  for (int d : mesh) out.append(out.empty() ? "" : "x").append(std::to_string(d));
  return out;
}

std::vector<SweepPoint> sweep_points(const Scenario& scenario) {
  std::vector<SweepPoint> points;
  if (!scenario.sweep) {
    SweepPoint p;
    p.nodes = scenario.cluster.nodes;
    p.gpus = scenario.cluster.num_gpus();
    p.mesh = scenario.mesh_shape;
    points.push_back(p);
    return points;
  }
  for (int nodes : scenario.sweep->nodes) {
    SweepPoint p;
    p.nodes = nodes;
    p.gpus = int64_t{nodes} * scenario.cluster.gpus_per_node;
    const auto shapes = sweep_mesh_shapes(scenario, nodes);
    if (shapes.empty()) {
      p.skip_reason = "no listed mesh shape covers " + std::to_string(p.gpus) + " GPUs";
      points.push_back(p);
    }
    for (const auto& shape : shapes) {
      p.mesh = shape;
      points.push_back(p);
    }
  }
  return points;
}

SweepRun run_sweep(const Scenario& scenario, const SweepOptions& options) {
  const auto start = Clock::now();
  SweepRun run;
  run.points = sweep_points(scenario);
  const size_t total = run.points.size();

  std::mutex mutex;  // guards best and errors
  std::vector<std::exception_ptr> errors(total);
  std::atomic<size_t> next{0};
  std::atomic<bool> failed{false};
  ProgressBar progress(options.progress, total);

  auto work = [&] {
    for (;;) {
      const size_t i = next.fetch_add(1);
      if (i >= total || failed) return;
      SweepPoint& point = run.points[i];
      bool simulated = false;
      std::exception_ptr error;
      if (!point.skip_reason) {
        try {
          // Per-op figures only: the parent holds no point's timeline (see below).
          EvaluationOptions summary_only = options.evaluation;
          summary_only.record_timeline = false;
          simulated = evaluate_point(scenario, point, summary_only).has_value();
        } catch (...) {
          error = std::current_exception();
        }
      }
      const std::lock_guard lock(mutex);
      if (error) {
        errors[i] = error;
        failed = true;
      } else if (simulated && (!run.best || better_point(point, i, run.points[*run.best],
                                                          *run.best, options.max_time_s))) {
        run.best = i;
      }
      progress.advance();
    }
  };
  const size_t jobs = std::clamp<size_t>(options.jobs, 1, std::max<size_t>(total, 1));
  {
    std::vector<std::jthread> workers;
    for (size_t t = 1; t < jobs; ++t) workers.emplace_back(work);
    work();
  }
  for (size_t i = 0; i < total; ++i) {
    if (!errors[i]) continue;
    progress.finish();
    const SweepPoint& p = run.points[i];
    const std::string where = "sweep point " + std::to_string(p.nodes) + " node" +
                              (p.nodes == 1 ? "" : "s") + ", mesh " + mesh_text(p.mesh);
    try {
      std::rethrow_exception(errors[i]);
    } catch (const std::exception& e) {
      throw BackendError(e.what(), where);
    }
  }
  progress.finish();
  // The best point once more, with its timeline, for the trace: one extra simulation keeps
  // the sweep's memory at one timeline instead of one per point in flight. Simulations are
  // deterministic, so its report is the one already kept.
  if (run.best) {
    SweepPoint again = run.points[*run.best];
    EvaluationOptions with_timeline = options.evaluation;
    with_timeline.record_timeline = true;
    if (auto evaluation = evaluate_point(scenario, again, with_timeline))
      run.best_result = std::move(evaluation->result);
  }
  run.wall_s = std::chrono::duration<double>(Clock::now() - start).count();
  return run;
}

}  // namespace symmesh::cli
