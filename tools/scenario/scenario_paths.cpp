// Scenario loader home (yaml-cpp → symmesh::Scenario); filled by the scenario issue work.
namespace symmesh::scenario {
const char* shipped_scenarios_dir() {
  return SYMMESH_SCENARIOS_DIR;
}
}  // namespace symmesh::scenario
