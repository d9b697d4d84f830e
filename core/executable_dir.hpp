#pragma once
// The folder of the running executable, for finding what is installed beside it (the
// backend modules, the shipped scenarios) wherever its install tree was put or moved.
#include <filesystem>

namespace symmesh {

// The folder of /proc/self/exe; empty when it cannot be read (not Linux, no /proc).
std::filesystem::path executable_dir();

}  // namespace symmesh
