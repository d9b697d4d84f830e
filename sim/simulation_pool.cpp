#include "sim/simulation_pool.hpp"

#include <algorithm>

namespace symmesh::sim {

ForkedSimulationPool::ForkedSimulationPool(size_t max_running)
    : max_running_(std::max<size_t>(1, max_running)) {}

void ForkedSimulationPool::start(size_t key, const Program& program, const ClusterSpec& cluster,
                                 const SimOptions& options) {
  running_.push_back({key, std::make_unique<SimulationProcess>(program, cluster, options)});
}

std::vector<SimulationPool::Finished> ForkedSimulationPool::wait(int max_wait_ms) {
  std::vector<Finished> out;
  if (running_.empty()) return out;
  std::vector<SimulationProcess*> processes;
  for (const Running& r : running_) processes.push_back(r.process.get());
  wait_for_any(processes, max_wait_ms);
  for (auto it = running_.begin(); it != running_.end();) {
    if (!it->process->finished()) {
      ++it;
      continue;
    }
    Finished f;
    f.key = it->key;
    try {
      f.result = it->process->result();
    } catch (...) {
      f.error = std::current_exception();
    }
    out.push_back(std::move(f));
    it = running_.erase(it);
  }
  return out;
}

std::vector<RunResult> run_simulations(const std::vector<const Program*>& programs,
                                       const ClusterSpec& cluster, const SimOptions& options,
                                       size_t max_running) {
  std::vector<RunResult> results(programs.size());
  ForkedSimulationPool pool(max_running);
  size_t next = 0;
  while (next < programs.size() || !pool.empty()) {
    while (next < programs.size() && !pool.full()) {
      pool.start(next, *programs[next], cluster, options);
      ++next;
    }
    for (SimulationPool::Finished& f : pool.wait()) {
      if (f.error) std::rethrow_exception(f.error);  // the pool's destructor kills the rest
      results[f.key] = std::move(f.result);
    }
  }
  return results;
}

}  // namespace symmesh::sim
