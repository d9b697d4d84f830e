// The training-layout search's speed (strategies/training_step_estimate.hpp): every layout
// of Llama 3.1 70B over the 64 … 1,024 H100s of scenarios/training/llama3-70b-train.yaml
// (the target: the whole search in 60 s or less), and of Llama 3.1 405B on 16,384.
// Only the searches are timed (the scenario is loaded once). Prints Google Benchmark's
// table with the layouts priced and the fitting ones.
#include <benchmark/benchmark.h>

#include <string>

#include "scenario/scenario_loader.hpp"
#include "strategies/training_step_estimate.hpp"

namespace {

using namespace symmesh;

const std::string kTraining = std::string(SYMMESH_SOURCE_DIR) + "/scenarios/training/";

void search_over(benchmark::State& state, const std::string& file, std::vector<int> gpus) {
  const Scenario s = load_scenario(kTraining + file);
  int64_t priced = 0, fitting = 0;
  for (auto _ : state) {
    priced = fitting = 0;
    for (int n : gpus) {
      const auto r =
          strategies::search_training_layouts(*s.model, s.model->global_batch, s.cluster, n);
      priced += r.priced;
      fitting += static_cast<int64_t>(r.fitting.size());
      benchmark::DoNotOptimize(r.fitting.data());
    }
  }
  state.counters["layouts_priced"] = static_cast<double>(priced);
  state.counters["layouts_fitting"] = static_cast<double>(fitting);
}

void BM_Llama70bOver64To1024Gpus(benchmark::State& state) {
  search_over(state, "llama3-70b-train.yaml", {64, 128, 256, 512, 1024});
}
BENCHMARK(BM_Llama70bOver64To1024Gpus)->Unit(benchmark::kMillisecond);

void BM_Llama405bOn16384Gpus(benchmark::State& state) {
  search_over(state, "llama3-405b-train.yaml", {16384});
}
BENCHMARK(BM_Llama405bOn16384Gpus)->Unit(benchmark::kMillisecond);

}  // namespace

BENCHMARK_MAIN();
