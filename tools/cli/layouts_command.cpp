// symmesh layouts: the parallel layouts of a model's whole training step (tensor, pipeline,
// data parallelism, micro-batch, interleaving, recomputation, ZeRO), priced in closed form at
// each GPU count, the best ones printed with their throughput, MFU, memory and overheads,
// and the fewest GPUs that reach the objective.
#include <algorithm>
#include <iostream>
#include <memory>

#include "evaluation/training_layouts.hpp"
#include "reports/layouts_report.hpp"
#include "scenario/scenario_loader.hpp"
#include "tools/cli/command.hpp"

namespace symmesh::cli {
namespace {

struct LayoutsArgs {
  std::string scenario;
  std::vector<int> gpus;
  int top = 1;
  int simulate = 0;
  std::vector<int> tps, pps, virtual_stages, zero_stages;
  std::vector<int64_t> micro_batches;
  std::vector<std::string> recomputes;
  bool json = false;
};

int run_layouts(const LayoutsArgs& args) {
  const Scenario s = load_scenario(args.scenario);
  const std::vector<int> counts = evaluation::training_layout_gpu_counts(s, args.gpus);
  evaluation::LayoutChoices choices;
  choices.tps = args.tps;
  choices.pps = args.pps;
  choices.virtual_stages = args.virtual_stages;
  choices.zero_stages = args.zero_stages;
  choices.micro_batches = args.micro_batches;
  for (const std::string& how : args.recomputes)
    choices.recomputes.push_back(how == "full" ? Recompute::full : Recompute::none);
  const evaluation::TrainingLayoutsRun run = evaluation::run_training_layouts(
      s, counts, std::max(args.top, args.simulate), args.simulate, choices);
  if (args.json)
    std::cout << reports::layouts_json(s, run).dump(2) << "\n";
  else
    reports::print_layouts(std::cout, s, run, "symmesh layouts");
  return 0;
}

}  // namespace

void add_layouts_command(CLI::App& app, CommandAction& selected) {
  auto args = std::make_shared<LayoutsArgs>();
  CLI::App* cmd = app.add_subcommand(
      "layouts",
      "Price a model's whole training step for every tp/pp/dp/micro-batch/recompute/ZeRO "
      "layout at each GPU count; print the best and the fewest GPUs meeting the objective");
  cmd->add_option("scenario", args->scenario, "a scenario file with a model: block (YAML)")
      ->required();
  cmd->add_option("--gpus", args->gpus,
                  "GPU counts to try (default: the sweep's node counts x GPUs per node)");
  cmd->add_option("--top", args->top, "layouts printed per GPU count (default 1)")
      ->check(CLI::Range(1, 1000));
  // Each list replaces what the scenario says for its dimension (its declared value, held
  // fixed, or its sweep's list): evaluation/training_layouts.hpp. At most 64 values each.
  const auto at_most_64 = [](auto* option) { return option->expected(1, 64); };
  at_most_64(cmd->add_option("--tp", args->tps,
                             "tensor-parallel sizes to try (default: each power of two up to "
                             "a node, or the scenario's mesh at its own size)")
                 ->check(CLI::Range(1, 1 << 16)));
  at_most_64(cmd->add_option("--pp", args->pps,
                             "pipeline sizes to try (default: every one, or the scenario's mesh "
                             "at its own size)")
                 ->check(CLI::Range(1, 1 << 16)));
  at_most_64(cmd->add_option("--micro-batch", args->micro_batches,
                             "sequences per micro-batch to try (default: model.micro_batch, "
                             "else 1 2 4 8)")
                 ->check(CLI::Range(1, 1 << 20)));
  at_most_64(cmd->add_option("--virtual-stages", args->virtual_stages,
                             "model chunks per pipeline stage to try (default: "
                             "training.virtual_stages, else 1 2 4 8)")
                 ->check(CLI::Range(1, 512)));
  at_most_64(cmd->add_option("--recompute", args->recomputes,
                             "recomputation to try: none, full (default: model.recompute, else "
                             "both)")
                 ->check(CLI::IsMember({"none", "full"})));
  at_most_64(cmd->add_option("--zero", args->zero_stages,
                             "ZeRO stages to try (default: training.zero, else 0 1 2 3)")
                 ->check(CLI::Range(0, 3)));
  cmd->add_option("--simulate", args->simulate,
                  "also simulate the best K layouts of each GPU count (one data-parallel "
                  "replica and one stage's data-parallel rings, op by op)")
      ->check(CLI::Range(0, 100));
  cmd->add_flag("--json", args->json, "print the results as JSON");
  cmd->callback([args, &selected] { selected = [args] { return run_layouts(*args); }; });
}

}  // namespace symmesh::cli
