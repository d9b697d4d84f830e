#include "sim/sim_options.hpp"

#include <cmath>
#include <string>

#include "core/errors.hpp"

namespace symmesh::sim {

void SimOptions::validate() const {
  if (!std::isfinite(wall_clock_limit_s) || wall_clock_limit_s < 0)
    throw InvalidArgument(
        "must be >= 0 seconds (0 = no limit), got " + std::to_string(wall_clock_limit_s),
        "SimOptions::wall_clock_limit_s");
}

}  // namespace symmesh::sim
