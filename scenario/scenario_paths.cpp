// Where the shipped scenarios live: see scenario/scenario_paths.hpp for the order.
#include "scenario/scenario_paths.hpp"

#include <cstdlib>
#include <system_error>

#include "core/executable_dir.hpp"
#include "scenario/scenario_loader.hpp"

// The installed layout (cmake/SymmeshLayout.cmake computes it from GNUInstallDirs); the
// default is what GNUInstallDirs gives under any prefix but /usr's multiarch libdir.
#ifndef SYMMESH_SCENARIOS_FROM_BIN
#define SYMMESH_SCENARIOS_FROM_BIN "../share/symmesh/scenarios"
#endif

namespace symmesh {

namespace fs = std::filesystem;

fs::path choose_scenarios_dir(std::string_view override_dir, const fs::path& exe_dir,
                              const fs::path& from_bin, const fs::path& source_dir) {
  if (!override_dir.empty()) return fs::path(override_dir);
  if (!exe_dir.empty()) {
    std::error_code ec;
    const fs::path installed = (exe_dir / from_bin).lexically_normal();
    if (fs::is_directory(installed, ec)) return installed;
  }
  return source_dir;
}

std::string shipped_scenarios_dir() {
  const char* override_dir = std::getenv("SYMMESH_SCENARIOS_DIR");
  return choose_scenarios_dir(override_dir ? override_dir : "", executable_dir(),
                              SYMMESH_SCENARIOS_FROM_BIN, SYMMESH_SCENARIOS_DIR)
      .string();
}

}  // namespace symmesh
