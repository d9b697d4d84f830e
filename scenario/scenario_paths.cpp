// Where the shipped scenarios live: the scenarios/ folder of the source tree.
#include "scenario/scenario_loader.hpp"

namespace symmesh {

std::string shipped_scenarios_dir() {
  return SYMMESH_SCENARIOS_DIR;
}

}  // namespace symmesh
