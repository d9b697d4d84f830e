// Fuzz target: the scenario loader. Every error it documents is an InvalidArgument naming
// file:line:col; a text it accepts must hold a cluster that validates and a mesh that covers
// exactly the cluster's GPUs.
#include <string>

#include "core/device_mesh.hpp"
#include "core/errors.hpp"
#include "scenario/scenario_loader.hpp"
#include "tests/fuzz/fuzz_targets.hpp"

namespace symmesh::fuzz {
namespace {

// Relative cluster paths resolve next to this name, then under the shipped scenarios/.
constexpr const char* kFile = "fuzz-input.yaml";

void check(const Scenario& s) {
  s.cluster.validate();
  const DeviceMesh mesh(s.mesh_shape, s.mesh_names);
  require(mesh.size() == s.cluster.num_gpus(), "the mesh does not cover the cluster's GPUs");
}

}  // namespace

void scenario_loader(std::string_view data) {
  const std::string text(data);
  bool loaded = false;
  Scenario scenario;
  try {
    scenario = load_scenario_text(text, kFile);
    loaded = true;
  } catch (const InvalidArgument&) {
  }
  if (loaded) check(scenario);

  loaded = false;
  ClusterSpec cluster;
  try {
    cluster = load_cluster_text(text, kFile);
    loaded = true;
  } catch (const InvalidArgument&) {
  }
  if (loaded) cluster.validate();
}

}  // namespace symmesh::fuzz
