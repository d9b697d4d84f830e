#pragma once
// Where a module (libsymmesh_sim.so, libsymmesh_hw.so, libsymmesh_mpi.so) is looked for, in order:
//   1. the path in its environment variable ($SYMMESH_SIM_MODULE, $SYMMESH_HW_MODULE,
//      $SYMMESH_MPI_MODULE), as given;
//   2. next to the running executable (the build folder's symmesh);
//   3. <folder of the running executable>/../lib/symmesh (an installed symmesh, wherever its
//      tree was installed or moved);
//   4. the build folder it was built in (tests under build/tests).
#include <filesystem>
#include <string>
#include <string_view>
#include <vector>

namespace symmesh::evaluation {

struct ModuleSearch {
  std::filesystem::path found;                // empty when no candidate exists
  std::vector<std::filesystem::path> looked;  // every candidate, in order, for messages
};

// That order with its inputs given: `from_bin` is the installed module folder relative to
// the executable's folder (../lib/symmesh). An environment path is taken as it is (found
// whether or not it exists, so that a wrong one is reported as such).
ModuleSearch search_module(std::string_view env_value, const std::filesystem::path& exe_dir,
                           const std::filesystem::path& from_bin,
                           const std::filesystem::path& build_dir, std::string_view file);

// That order for this process: `env` names the variable, `file` the module
// (libsymmesh_sim.so, libsymmesh_hw.so, libsymmesh_mpi.so).
ModuleSearch find_module(const char* env, const char* file);

// "a, b, c": the candidates a search looked at, for a message saying the module is missing.
std::string looked_text(const ModuleSearch& search);

}  // namespace symmesh::evaluation
