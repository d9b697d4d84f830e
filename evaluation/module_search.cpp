#include "evaluation/module_search.hpp"

#include <cstdlib>
#include <system_error>

#include "core/executable_dir.hpp"

#ifndef SYMMESH_MODULES_FROM_BIN
#define SYMMESH_MODULES_FROM_BIN "../lib/symmesh"
#endif

namespace symmesh::evaluation {

namespace fs = std::filesystem;

ModuleSearch search_module(std::string_view env_value, const fs::path& exe_dir,
                           const fs::path& from_bin, const fs::path& build_dir,
                           std::string_view file) {
  ModuleSearch search;
  if (!env_value.empty()) {
    search.found = fs::path(env_value);
    search.looked.push_back(search.found);
    return search;
  }
  if (!exe_dir.empty()) {
    search.looked.push_back(exe_dir / file);
    search.looked.push_back((exe_dir / from_bin / file).lexically_normal());
  }
  search.looked.push_back(build_dir / file);
  for (const fs::path& candidate : search.looked) {
    std::error_code ec;
    if (fs::is_regular_file(candidate, ec)) {
      search.found = candidate;
      break;
    }
  }
  return search;
}

ModuleSearch find_module(const char* env, const char* file) {
  const char* given = std::getenv(env);
  return search_module(given ? given : "", executable_dir(), SYMMESH_MODULES_FROM_BIN,
                       SYMMESH_MODULE_DIR, file);
}

std::string looked_text(const ModuleSearch& search) {
  std::string looked;
  for (const fs::path& candidate : search.looked)
    looked += (looked.empty() ? "" : ", ") + candidate.string();
  return looked;
}

}  // namespace symmesh::evaluation
