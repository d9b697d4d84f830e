#include "sim/simgrid_info.hpp"

#include <simgrid/version.h>
#include <simgrid/s4u/Engine.hpp>  // brings the macros simgrid/version.h relies on

namespace symmesh::sim {

std::string simgrid_description() {
  int major = 0, minor = 0, patch = 0;
  sg_version_get(&major, &minor, &patch);
  return "SimGrid " + std::to_string(major) + "." + std::to_string(minor) + "." +
         std::to_string(patch);
}

}  // namespace symmesh::sim
