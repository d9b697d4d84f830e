// The compiled half of `import symmesh` (python/symmesh/__init__.py is the other): scenarios
// loaded and validated by the library, `symmesh plan`, `simulate`, `sweep` and `layouts` run
// in-process through the same library calls as the CLI, a model step's torch plan (of its
// own mesh or of a layout `layouts` chose), and the Program that
// symmesh.symm_mem writes (python/program_bindings.hpp). Results cross as
// the CLI's own JSON text (reports/'s writers, which the CLI prints), which __init__.py turns
// into Python data.
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include <algorithm>
#include <mutex>
#include <thread>

#include "core/dtype.hpp"
#include "core/errors.hpp"
#include "core/op_kind.hpp"
#include "evaluation/folded_training_step.hpp"
#include "evaluation/scenario_evaluation.hpp"
#include "evaluation/sweep_answer.hpp"
#include "evaluation/sweep_runner.hpp"
#include "evaluation/torch_parallel_plan.hpp"
#include "evaluation/training_layouts.hpp"
#include "python/errors.hpp"
#include "python/library_mutex.hpp"
#include "python/program_bindings.hpp"
#include "reports/layouts_report.hpp"
#include "reports/plan_op.hpp"
#include "reports/simulation_output.hpp"
#include "reports/sweep_report.hpp"
#include "scenario/scenario_loader.hpp"

namespace py = pybind11;

namespace symmesh::python {
namespace {

py::dict cluster_dict(const ClusterSpec& c) {
  py::dict d;
  d["name"] = c.name;
  d["nodes"] = c.nodes;
  d["gpus_per_node"] = c.gpus_per_node;
  d["gpu"] = c.gpu.name;
  d["gpu_memory_bytes"] = c.gpu.memory_capacity_bytes;
  d["intra_node"] = c.intra_node.kind;
  d["inter_node"] = c.nodes > 1 ? py::cast(c.inter_node.kind) : py::none();
  return d;
}

py::object model_dict(const Scenario& s) {
  if (!s.model) return py::none();
  const TransformerSpec& m = *s.model;
  py::dict d;
  d["name"] = m.name;
  d["layers"] = m.layers;
  d["hidden"] = m.hidden;
  d["heads"] = m.heads;
  d["kv_heads"] = m.kv_heads;
  d["head_dim"] = m.head_dim;
  d["ffn"] = m.ffn;
  d["vocab"] = m.vocab;
  d["seq"] = m.seq;
  d["global_batch"] = m.global_batch;
  return d;
}

// symmesh plan's arguments, as the Python keyword arguments name them.
std::string plan_json(const std::string& op, const std::string& a, const std::string& b,
                      const std::string& mesh, const std::vector<std::string>& in,
                      const std::string& bias, const std::string& bias_in,
                      const std::string& out_in, const std::string& dtype,
                      std::optional<int> gpus_per_host, const std::string& cluster, int rerank,
                      const std::string& cost_model, bool fuse,
                      const std::string& placement_search) {
  reports::PlanArgs args;
  args.op = op, args.a = a, args.b = b, args.mesh = mesh, args.in = in;
  args.bias = bias, args.bias_in = bias_in, args.out_in = out_in, args.dtype = dtype;
  if (gpus_per_host) args.gpus_per_host = *gpus_per_host, args.gpus_per_host_given = true;
  args.cluster = cluster, args.rerank = rerank, args.cost_model = cost_model;
  args.no_fuse = !fuse, args.placement_search = placement_search;
  if (args.in.size() != 2)
    throw InvalidArgument("expected placements for a and b, got " + std::to_string(in.size()),
                          "--in");
  const reports::PlannedOp planned = [&] {
    py::gil_scoped_release unlocked;
    const std::lock_guard<std::mutex> one_at_a_time(library_mutex());
    return reports::plan_op(args);
  }();
  return reports::plan_to_json(planned.plan, planned.report).dump();
}

evaluation::EvaluationOptions evaluation_options(bool emulate, double time_limit_s, bool fuse) {
  if (!(time_limit_s >= 0))
    throw InvalidArgument("expected a number >= 0, got " + std::to_string(time_limit_s),
                          "time_limit_s");
  evaluation::EvaluationOptions options;
  options.emulate = emulate;
  options.wall_clock_limit_s = time_limit_s;
  options.fuse = fuse;
  return options;
}

// As `symmesh simulate --json`: `folded` runs the closed form's folded step; a model's step
// beyond 256 GPUs (or any, with `fold_replicas`) is the planned step with its data-parallel
// replicas folded into one (evaluation/folded_training_step.hpp).
std::string simulate_json(const Scenario& scenario, bool emulate, double time_limit_s, bool fuse,
                          bool folded, bool fold_replicas) {
  if (evaluation::simulates_closed_form_step(scenario, folded, fold_replicas, emulate)) {
    evaluation::check_folded_request(
        {.emulate = emulate, .fuse = fuse, .time_limit_s = time_limit_s});
    py::gil_scoped_release unlocked;
    const std::lock_guard<std::mutex> one_at_a_time(library_mutex());
    return reports::layouts_json(scenario, evaluation::run_folded_step(scenario)).dump();
  }
  auto options = evaluation_options(emulate, time_limit_s, fuse);
  options.fold_replicas = fold_replicas;
  py::gil_scoped_release unlocked;
  const std::lock_guard<std::mutex> one_at_a_time(library_mutex());
  return reports::simulation_report_json(evaluation::evaluate_scenario(scenario, options).report)
      .dump();
}

// What `symmesh sweep` writes to results.json, without the output folder.
std::string sweep_json(const Scenario& scenario, int jobs, double time_limit_s, bool fuse) {
  using namespace evaluation;
  if (jobs < 0)
    throw InvalidArgument("expected a number >= 0, got " + std::to_string(jobs), "jobs");
  py::gil_scoped_release unlocked;
  const std::lock_guard<std::mutex> one_at_a_time(library_mutex());
  if (scenario.sweep && scenario.sweep->layouts) {
    const TrainingLayoutsRun run = sweep_training_layouts(scenario);
    return reports::layouts_json(scenario, run).dump();
  }
  SweepOptions options;
  options.jobs =
      jobs > 0 ? jobs : static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
  options.evaluation = evaluation_options(false, time_limit_s, fuse);
  if (scenario.objective) options.max_time_s = scenario.objective->max_time_s;
  const SweepRun run = run_sweep(scenario, options);
  const SweepAnswer answer = answer_sweep(run.points, options.max_time_s);
  if (!answer.best) throw_all_skipped(run, scenario.path);  // as the CLI says it
  const reports::SweepOutcome outcome{scenario, run, answer, {}};
  return reports::sweep_results_json(outcome).dump();
}

// A list keyword's values within [lo, hi], at most 64 of them, as `symmesh layouts` checks
// its options (tools/cli/layouts_command.cpp).
template <typename T>
void check_values(const std::vector<T>& values, T lo, T hi, const std::string& keyword) {
  if (values.size() > 64)
    throw InvalidArgument("at most 64 values, got " + std::to_string(values.size()), keyword);
  for (T v : values)
    if (v < lo || v > hi)
      throw InvalidArgument("expected values in [" + std::to_string(lo) + ", " +
                                std::to_string(hi) + "], got " + std::to_string(v),
                            keyword);
}

// What `symmesh layouts FILE --json` prints, its options as keywords (empty lists: not
// given).
std::string layouts_json(const Scenario& scenario, const std::vector<int>& gpus, int top,
                         int simulate, const std::vector<int>& tps, const std::vector<int>& pps,
                         const std::vector<int64_t>& micro_batches,
                         const std::vector<int>& virtual_stages,
                         const std::vector<std::string>& recomputes,
                         const std::vector<int>& zero_stages) {
  using namespace evaluation;
  if (top < 1 || top > 1000)
    throw InvalidArgument("expected a number in [1, 1000], got " + std::to_string(top), "top");
  if (simulate < 0 || simulate > 100)
    throw InvalidArgument("expected a number in [0, 100], got " + std::to_string(simulate),
                          "simulate");
  check_values(tps, 1, 1 << 16, "tp");
  check_values(pps, 1, 1 << 16, "pp");
  check_values(micro_batches, int64_t{1}, int64_t{1} << 20, "micro_batch");
  check_values(virtual_stages, 1, 512, "virtual_stages");
  check_values(zero_stages, 0, 3, "zero");
  if (recomputes.size() > 64)
    throw InvalidArgument("at most 64 values, got " + std::to_string(recomputes.size()),
                          "recompute");
  LayoutChoices choices;
  choices.tps = tps, choices.pps = pps, choices.virtual_stages = virtual_stages;
  choices.zero_stages = zero_stages, choices.micro_batches = micro_batches;
  for (const std::string& how : recomputes) {
    if (how != "none" && how != "full")
      throw InvalidArgument("expected none or full, got '" + how + "'", "recompute");
    choices.recomputes.push_back(how == "full" ? Recompute::full : Recompute::none);
  }
  py::gil_scoped_release unlocked;
  const std::lock_guard<std::mutex> one_at_a_time(library_mutex());
  const std::vector<int> counts = training_layout_gpu_counts(scenario, gpus);
  const TrainingLayoutsRun run =
      run_training_layouts(scenario, counts, std::max(top, simulate), simulate, choices);
  return reports::layouts_json(scenario, run).dump();
}

// The layout torch_plan plans for, as symmesh.torch_plan passes it (tp unset: the
// scenario's own mesh). What it leaves unset is the scenario's: its micro-batch (else one
// pass of global_batch / dp sequences), virtual stages, recomputation and ZeRO stage.
struct LayoutKeywords {
  std::optional<int> tp, pp, dp, virtual_stages, zero_stage;
  std::optional<int64_t> micro_batch;
  std::optional<std::string> recompute;
};

Scenario scenario_to_plan(const Scenario& s, const LayoutKeywords& k) {
  if (!k.tp) return s;
  if (!s.model)
    throw InvalidArgument("a torch plan needs a model scenario (one with a model: block)",
                          s.where());
  if (!k.pp || !k.dp) throw InvalidArgument("a layout needs tp, pp and dp", "layout");
  strategies::TrainingLayout l;
  l.tp = *k.tp, l.pp = *k.pp, l.dp = *k.dp;
  const TransformerSpec& m = *s.model;
  l.micro_batch = k.micro_batch ? *k.micro_batch
                  : m.micro_batch_given || m.global_batch <= 0 || l.dp < 1
                      ? m.micro_batch
                      : std::max<int64_t>(1, m.global_batch / l.dp);
  l.virtual_stages = k.virtual_stages ? *k.virtual_stages : l.pp > 1 ? s.virtual_stages() : 1;
  l.zero_stage = k.zero_stage ? *k.zero_stage : s.training ? s.training->zero_stage : 0;
  l.recompute = m.full_recompute ? Recompute::full : Recompute::none;
  if (k.recompute) {
    if (*k.recompute != "none" && *k.recompute != "full")
      throw InvalidArgument("recompute is none or full, got '" + *k.recompute + "'", "layout");
    l.recompute = *k.recompute == "full" ? Recompute::full : Recompute::none;
  }
  return evaluation::training_layout_scenario(s, l);
}

evaluation::TorchParallelPlan torch_plan(const Scenario& s, const LayoutKeywords& layout) {
  py::gil_scoped_release unlocked;
  const std::lock_guard<std::mutex> one_at_a_time(library_mutex());
  return evaluation::torch_parallel_plan(scenario_to_plan(s, layout));
}

// Binds `name`(scenario, tp=None, pp=None, dp=None, micro_batch=None, virtual_stages=None,
// recompute=None, zero_stage=None): the torch plan of that layout, as `render` writes it.
template <typename Render>
void def_torch_plan(py::module_& m, const char* name, Render render) {
  using OptInt = std::optional<int>;
  m.def(
      name,
      [render](const Scenario& s, OptInt tp, OptInt pp, OptInt dp,
               std::optional<int64_t> micro_batch, OptInt virtual_stages,
               std::optional<std::string> recompute, OptInt zero_stage) {
        return render(torch_plan(s, LayoutKeywords{tp, pp, dp, virtual_stages, zero_stage,
                                                   micro_batch, recompute}));
      },
      py::arg("scenario"), py::arg("tp") = py::none(), py::arg("pp") = py::none(),
      py::arg("dp") = py::none(), py::arg("micro_batch") = py::none(),
      py::arg("virtual_stages") = py::none(), py::arg("recompute") = py::none(),
      py::arg("zero_stage") = py::none());
}

}  // namespace
}  // namespace symmesh::python

PYBIND11_MODULE(_symmesh, m) {
  using namespace symmesh;
  m.doc() = "symmesh's library, compiled; use the symmesh package (python/symmesh/__init__.py)";
  python::register_errors(m);
  python::register_program(m);  // symmesh.symm_mem's Program and simulate_program

  py::class_<Scenario>(m, "Scenario", "A loaded, validated scenario (read-only).")
      .def_property_readonly("name", [](const Scenario& s) { return s.name; })
      .def_property_readonly("path", [](const Scenario& s) { return s.path; })
      .def_property_readonly("version", [](const Scenario& s) { return s.version; })
      .def_property_readonly("mesh_shape", [](const Scenario& s) { return s.mesh_shape; })
      .def_property_readonly("mesh_names", [](const Scenario& s) { return s.mesh_names; })
      .def_property_readonly(
          "gpus", [](const Scenario& s) { return s.cluster.nodes * s.cluster.gpus_per_node; })
      .def_property_readonly("dtype", [](const Scenario& s) { return to_string(s.dtype); })
      .def_property_readonly("cost_model", [](const Scenario& s) { return s.cost_model; })
      .def_property_readonly("cluster",
                             [](const Scenario& s) { return python::cluster_dict(s.cluster); })
      .def_property_readonly("model", [](const Scenario& s) { return python::model_dict(s); })
      .def_property_readonly("tensors",
                             [](const Scenario& s) {
                               std::vector<std::string> names;
                               for (const TensorDecl& t : s.tensors) names.push_back(t.name);
                               return names;
                             })
      .def_property_readonly(
          "ops",
          [](const Scenario& s) {
            std::vector<std::pair<std::string, std::string>> ops;
            for (const WorkloadOp& op : s.workload) ops.emplace_back(op.name, to_string(op.kind));
            return ops;
          },
          "(name, kind) of every op of the workload, in file order (a model's as generated)")
      .def_property_readonly("training", [](const Scenario& s) { return s.training.has_value(); })
      .def_property_readonly(
          "sweep_nodes",
          [](const Scenario& s) { return s.sweep ? s.sweep->nodes : std::vector<int>{}; })
      .def_property_readonly("objective_max_time_s",
                             [](const Scenario& s) -> py::object {
                               if (s.objective && s.objective->max_time_s)
                                 return py::cast(*s.objective->max_time_s);
                               return py::none();
                             })
      .def("__repr__", [](const Scenario& s) {
        std::string mesh;
        for (int d : s.mesh_shape) mesh += (mesh.empty() ? "" : "x") + std::to_string(d);
        return "<symmesh.Scenario '" + s.name + "' mesh " + mesh + ", " +
               std::to_string(s.workload.size()) + " ops>";
      });

  m.def(
      "load_scenario_file", [](const std::string& path) { return load_scenario(path); },
      py::arg("path"));
  m.def(
      "load_scenario_text",
      [](const std::string& text, const std::string& file) {
        return load_scenario_text(text, file);
      },
      py::arg("text"), py::arg("file"));
  m.def("plan_json", &python::plan_json, py::arg("op"), py::arg("a"), py::arg("b"), py::arg("mesh"),
        py::arg("inputs"), py::arg("bias"), py::arg("bias_in"), py::arg("out_in"), py::arg("dtype"),
        py::arg("gpus_per_host"), py::arg("cluster"), py::arg("rerank"), py::arg("cost_model"),
        py::arg("fuse"), py::arg("placement_search"));
  m.def("simulate_json", &python::simulate_json, py::arg("scenario"), py::arg("emulate"),
        py::arg("time_limit_s"), py::arg("fuse"), py::arg("folded"), py::arg("fold_replicas"));
  m.def("sweep_json", &python::sweep_json, py::arg("scenario"), py::arg("jobs"),
        py::arg("time_limit_s"), py::arg("fuse"));
  m.def("layouts_json", &python::layouts_json, py::arg("scenario"), py::arg("gpus"),
        py::arg("top"), py::arg("simulate"), py::arg("tp"), py::arg("pp"), py::arg("micro_batch"),
        py::arg("virtual_stages"), py::arg("recompute"), py::arg("zero"));
  // The torch plan of the scenario's own mesh, or of the layout the keywords give (tp set),
  // as JSON or as Python source.
  python::def_torch_plan(m, "torch_plan_json", [](const evaluation::TorchParallelPlan& plan) {
    return evaluation::torch_plan_json(plan).dump();
  });
  python::def_torch_plan(m, "torch_plan_python", [](const evaluation::TorchParallelPlan& plan) {
    return evaluation::torch_plan_python(plan);
  });
  m.attr("shipped_scenarios_dir") = shipped_scenarios_dir();
}
