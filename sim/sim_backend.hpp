#pragma once
// The simulator behind the Backend seam (core/backend.hpp): each run is one forked
// simulation on the cluster the backend was made for (sim/forked_run.hpp).
#include "core/backend.hpp"
#include "core/cluster_spec.hpp"
#include "sim/sim_options.hpp"

namespace symmesh::sim {

class SimBackend final : public Backend {
 public:
  // The cluster is validated here (throws InvalidArgument naming the field).
  explicit SimBackend(ClusterSpec cluster);

  std::string name() const override { return "sim"; }
  RunResult run(const Program& program, const RunRequest& request) override;
  const RunPlanner* planner() const override { return nullptr; }
  DeviceBenchmarks* device_benchmarks() override { return nullptr; }

 private:
  ClusterSpec cluster_;
};

}  // namespace symmesh::sim
