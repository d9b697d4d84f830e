#pragma once
// Where the shipped scenarios (scenarios/: the examples, clusters/, models/, training/)
// are: shipped_scenarios_dir() (scenario/scenario_loader.hpp) looks, in this order, at
//   1. $SYMMESH_SCENARIOS_DIR, when set and non-empty, as it is;
//   2. <folder of the running executable>/../share/symmesh/scenarios, when it is a folder:
//      an installed symmesh (cmake --install), wherever its tree was installed or moved;
//   3. the scenarios/ folder of the source tree it was built from.
#include <filesystem>
#include <string_view>

namespace symmesh {

// That order with its inputs given (the tests' entry): `from_bin` is the installed
// scenarios folder relative to the executable's folder (../share/symmesh/scenarios).
std::filesystem::path choose_scenarios_dir(std::string_view override_dir,
                                           const std::filesystem::path& exe_dir,
                                           const std::filesystem::path& from_bin,
                                           const std::filesystem::path& source_dir);

}  // namespace symmesh
