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

SimOptions sim_options_for(const RunRequest& request) {
  SimOptions options;
  options.carry_data = request.carry_data;
  options.record_timeline = request.record_timeline;
  options.wall_clock_limit_s = request.wall_clock_limit_s;
  options.collectives = request.collectives;
  options.validate();
  return options;
}

}  // namespace symmesh::sim
