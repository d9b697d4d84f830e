#include "sim/simgrid_info.hpp"

// simgrid/version.h relies on macros from xbt/base.h without including it.
#include <xbt/base.h>

#include <simgrid/version.h>

namespace symmesh::sim {

std::string simgrid_description() {
  int major = 0, minor = 0, patch = 0;
  sg_version_get(&major, &minor, &patch);
  return "SimGrid " + std::to_string(major) + "." + std::to_string(minor) + "." +
         std::to_string(patch);
}

}  // namespace symmesh::sim
