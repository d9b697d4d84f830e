#include "evaluation/sweep_runner.hpp"

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <exception>
#include <map>
#include <memory>
#include <stdexcept>

#include "core/errors.hpp"
#include "evaluation/backends.hpp"
#include "evaluation/host_memory.hpp"
#include "evaluation/sweep_answer.hpp"
#include "scenario/scenario_loader.hpp"
#include "sim/deadlock_report.hpp"
#include "sim/sim_options.hpp"
#include "sim/simulator.hpp"

namespace symmesh::evaluation {
namespace {

using Clock = std::chrono::steady_clock;

// Runs `step` for `point`; an error that makes the point invalid at its size
// (InvalidArgument, Unsupported) becomes its skip_reason. Returns whether `step` finished.
template <typename Step>
bool skipping_invalid(SweepPoint& point, Step&& step) {
  try {
    step();
    return true;
  } catch (const InvalidArgument& e) {
    point.skip_reason = e.what();
  } catch (const Unsupported& e) {
    point.skip_reason = e.what();
  }
  return false;
}

// The scenario at a point's size, with its micro-batch size and ZeRO stage; with
// `recompute`, its model recomputes every layer.
Scenario point_scenario(const Scenario& scenario, const SweepPoint& point, bool recompute) {
  Scenario variant = scenario;
  if (point.micro_batch > 0) {
    variant.model->micro_batch = point.micro_batch;
    variant.model->micro_batch_given = true;
  }
  if (point.zero >= 0) variant.training->zero_stage = point.zero;
  if (recompute) variant.model->full_recompute = true;
  return with_cluster_size(variant, point.nodes, point.mesh);
}

// A point moved to its size, planned and counted, waiting for room to run.
struct Sized {
  size_t index;
  std::unique_ptr<SizedScenario> sized;
  int64_t need_bytes() const { return sized->estimate.total_bytes(); }
  int64_t reserved_bytes() const { return sized->estimate.stack_reserved_bytes; }
};

// The point's scenario moved to its size, planned, and its lowering counted (the host
// memory estimate, before anything is lowered); nullopt (with the point's skip_reason set)
// when it is invalid at that size.
std::optional<Sized> size_point(const Scenario& scenario, size_t index, SweepPoint& point,
                                const EvaluationOptions& options) {
  Scenario resized;
  try {
    resized = point_scenario(scenario, point, false);
  } catch (const InvalidArgument& e) {
    point.skip_reason = e.message();
    return std::nullopt;
  }
  std::optional<Sized> out;
  skipping_invalid(point, [&] {
    try {
      out = Sized{index, size_scenario(resized, options)};
    } catch (const DoesNotFit&) {
      // Recomputation never makes a step faster, so it is tried only where the step does
      // not fit without it, and only when the model block left it open.
      if (!scenario.model || scenario.model->recompute_given) throw;
      out = Sized{index, size_scenario(point_scenario(scenario, point, true), options)};
      point.recompute_fallback = true;
    }
  });
  return out;
}

// The sized point lowered; nullptr (with the point's skip_reason set) when it is invalid
// at that size.
std::unique_ptr<PreparedScenario> prepare_point(std::unique_ptr<SizedScenario> sized,
                                                SweepPoint& point,
                                                const EvaluationOptions& options) {
  std::unique_ptr<PreparedScenario> out;
  skipping_invalid(point, [&] { out = lower_sized(std::move(sized), options); });
  return out;
}

// Fills the point's report from its finished simulation; invalid-at-this-size errors the
// simulation raised, and a simulation past its wall-clock limit, skip the point (a
// deadlock, also a Timeout, is an error). Returns whether it was simulated.
bool finish_point(SweepPoint& point, const PreparedScenario& prepared,
                  sim::SimulationPool::Finished& finished) {
  try {
    return skipping_invalid(point, [&] {
      if (finished.error) std::rethrow_exception(finished.error);
      point.report = report_evaluation(prepared, std::move(finished.result)).report;
    });
  } catch (const sim::DeadlockError&) {
    throw;
  } catch (const Timeout& e) {
    point.skip_reason = e.what();
  }
  return false;
}

// One point being simulated: its memory estimate and what its report needs.
struct InFlight {
  int64_t need_bytes;
  std::unique_ptr<PreparedScenario> prepared;
};

}  // namespace

std::string mesh_text(const std::vector<int>& mesh) {
  if (mesh.empty()) return "-";
  std::string out;
  for (int d : mesh) out.append(out.empty() ? "" : "x").append(std::to_string(d));
  return out;
}

std::string point_layout_text(const SweepPoint& p) {
  std::string out = mesh_text(p.mesh);
  if (p.micro_batch > 0) out += " mb " + std::to_string(p.micro_batch);
  if (p.zero >= 0) out += " zero " + std::to_string(p.zero);
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
      p.skip_reason = "no mesh shape listed in sweep.mesh" +
                      (scenario.sweep->mesh_where.known()
                           ? " (" + scenario.sweep->mesh_where.to_string() + ")"
                           : std::string()) +
                      " covers " + std::to_string(p.gpus) + " GPUs";
      points.push_back(p);
    }
    // Each mesh with every listed micro-batch size and ZeRO stage (0 and -1: the scenario's).
    const auto& spec = *scenario.sweep;
    const std::vector<int64_t> micro_batches =
        spec.micro_batches.empty() ? std::vector<int64_t>{0} : spec.micro_batches;
    const std::vector<int> zero_stages =
        spec.zero_stages.empty() ? std::vector<int>{-1} : spec.zero_stages;
    for (const auto& shape : shapes)
      for (int64_t micro_batch : micro_batches)
        for (int zero : zero_stages) {
          p.mesh = shape;
          p.micro_batch = micro_batch;
          p.zero = zero;
          points.push_back(p);
        }
  }
  return points;
}

SweepRun run_sweep(const Scenario& scenario, const SweepOptions& options) {
  const auto start = Clock::now();
  SweepRun run;
  run.points = sweep_points(scenario);
  size_t total = 0;
  for (size_t i = 0; i < run.points.size(); ++i) {
    if (!options.evaluates || options.evaluates(i))
      ++total;
    else
      run.points[i].skip_reason = kNotEvaluatedHere;
  }
  size_t done = 0;
  auto report = [&](bool finished) {
    if (options.on_progress) options.on_progress({done, total, finished});
  };
  report(false);

  // Per-op figures only: the parent holds no point's timeline (the best point is simulated
  // again below for its trace).
  EvaluationOptions summary_only = options.evaluation;
  summary_only.record_timeline = false;

  // Host memory: read once, before any point runs (a running point lowers MemAvailable).
  // A point that needs more than all of it is skipped; points start while the estimates of
  // those in flight fit, so fewer than `jobs` may run at once (evaluation/host_memory.hpp).
  const std::optional<HostMemory> memory =
      options.evaluation.host_memory ? options.evaluation.host_memory : host_memory();
  summary_only.host_memory = memory;

  // Everything happens on this thread: points are planned and lowered here one at a time
  // while up to `jobs` simulations run in their own processes (sim/forked_run.hpp says why
  // no thread may fork while another runs).
  const auto pool_owner = simulator().make_pool(static_cast<size_t>(std::max(1, options.jobs)));
  sim::SimulationPool& pool = *pool_owner;
  std::map<size_t, InFlight> in_flight;  // by point
  int64_t committed_bytes = 0;           // the estimates of the points in flight
  std::optional<Sized> waiting_point;    // sized, waiting for memory
  std::optional<size_t> failed;          // the first point whose evaluation failed
  std::exception_ptr error;
  size_t next = 0;
  auto record = [&](size_t i, bool simulated) {
    if (simulated && (!run.best || better_point(run.points[i], i, run.points[*run.best], *run.best,
                                                options.max_time_s)))
      run.best = i;
    ++done;
    report(false);
  };
  auto fail = [&](size_t i) {
    if (!failed || i < *failed) failed = i, error = std::current_exception();
  };
  for (;;) {
    while (!failed && !pool.full()) {
      if (!waiting_point) {
        while (next < run.points.size() && options.evaluates && !options.evaluates(next)) ++next;
        if (next >= run.points.size()) break;
        const size_t i = next++;
        SweepPoint& point = run.points[i];
        if (point.skip_reason) {
          record(i, false);
          continue;
        }
        try {
          waiting_point = size_point(scenario, i, point, summary_only);
        } catch (...) {
          fail(i);
          continue;
        }
        if (!waiting_point) {
          record(i, false);
          continue;
        }
      }
      const Admission admission = admit(waiting_point->need_bytes(), committed_bytes, memory,
                                        waiting_point->reserved_bytes());
      if (admission == Admission::wait) break;  // until a point in flight finishes
      Sized sized = std::move(*waiting_point);
      waiting_point.reset();
      SweepPoint& point = run.points[sized.index];
      const int64_t need_bytes = sized.need_bytes();
      if (admission == Admission::skip) {
        point.skip_reason =
            not_enough_memory_text(need_bytes, *memory, "to simulate", sized.reserved_bytes());
        record(sized.index, false);
        continue;
      }
      try {
        auto prepared = prepare_point(std::move(sized.sized), point, summary_only);
        if (!prepared) {
          record(sized.index, false);
          continue;
        }
        pool.start(sized.index, prepared->workload.program, prepared->scenario.cluster,
                   sim::sim_options_for(prepared->request));
        // The child has its copy and the report needs only the lowered ops: at 512 GPUs the
        // Program is gigabytes, so the parent keeps none of the points in flight.
        prepared->workload.program = Program(1);
        in_flight.emplace(sized.index, InFlight{need_bytes, std::move(prepared)});
        committed_bytes += need_bytes;
      } catch (...) {
        fail(sized.index);
      }
    }
    if (pool.empty()) break;
    // Wakes at least once a second so that a progress display's elapsed time moves.
    for (sim::SimulationPool::Finished& f : pool.wait(options.on_progress ? 1000 : -1)) {
      InFlight& point = in_flight.at(f.key);
      try {
        record(f.key, finish_point(run.points[f.key], *point.prepared, f));
      } catch (...) {
        fail(f.key);
      }
      committed_bytes -= point.need_bytes;
      in_flight.erase(f.key);
    }
    report(false);
  }
  report(true);
  if (failed) {
    const SweepPoint& p = run.points[*failed];
    const std::string where = "sweep point " + std::to_string(p.nodes) + " node" +
                              (p.nodes == 1 ? "" : "s") + ", mesh " + mesh_text(p.mesh);
    try {
      std::rethrow_exception(error);
    } catch (const std::exception& e) {
      throw BackendError(e.what(), where);
    }
  }

  // The best point once more, with its timeline, for the trace: one extra simulation keeps
  // the sweep's memory at one timeline instead of one per point in flight. Simulations are
  // deterministic, so its report is the one already kept.
  if (run.best && options.trace_best)
    run.best_trace_json = sweep_point_trace(scenario, run.points[*run.best], options.evaluation);
  run.wall_s = std::chrono::duration<double>(Clock::now() - start).count();
  return run;
}

std::string sweep_point_trace(const Scenario& scenario, const SweepPoint& point,
                              const EvaluationOptions& options) {
  EvaluationOptions with_timeline = options;
  with_timeline.record_timeline = true;
  try {
    return evaluate_scenario(point_scenario(scenario, point, point.recompute_fallback),
                             with_timeline)
        .trace_json;
  } catch (const Timeout&) {
    return "";  // past --time-limit this time: the answer stands; its trace stays empty
  }
}

}  // namespace symmesh::evaluation
