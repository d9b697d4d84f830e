#include "sim/sim_backend.hpp"

#include "sim/forked_run.hpp"

namespace symmesh::sim {

SimBackend::SimBackend(ClusterSpec cluster) : cluster_(std::move(cluster)) {
  cluster_.validate();
}

RunResult SimBackend::run(const Program& program, const RunRequest& request) {
  return run_simulation(program, cluster_, sim_options_for(request));
}

}  // namespace symmesh::sim
