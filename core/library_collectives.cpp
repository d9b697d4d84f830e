#include "core/library_collectives.hpp"

#include "core/errors.hpp"

namespace symmesh {

bool runs_as_library(const ClusterSpec& cluster, const CollectivesChoice& choice,
                     const CollectiveRecord& record) {
  if (!has_library_equivalent(record)) return false;
  if (choice.given) return choice.hands_to_library(record);
  return !cluster.collectives.empty();
}

ClusterSpec cluster_for_collectives(ClusterSpec cluster, const CollectivesChoice& choice) {
  if (choice.given && !choice.native) cluster.collectives = {};
  return cluster;
}

LibraryEstimate estimate_recorded_collective(const ClusterSpec& cluster, const Program& program,
                                             const CollectiveRecord& record) {
  const auto op = bandwidth_collective(record.op);
  if (!op)
    throw InvalidArgument(to_string(record.op) + " has no library equivalent",
                          "collective '" + record.name + "'");
  const GroupGeometry geometry =
      geometry_of(cluster, program.group(record.group).ranks, program.world_size());
  return estimate_library_collective(cluster, *op, geometry, static_cast<double>(record.bytes));
}

std::string simulated_implementation(const ClusterSpec& cluster, const CollectivesChoice& choice,
                                     const Program& program, const CollectiveRecord& record) {
  if (!runs_as_library(cluster, choice, record)) return to_string(record.algorithm);
  if (cluster.collectives.empty()) return "nccl";
  return "nccl " + estimate_recorded_collective(cluster, program, record).name();
}

}  // namespace symmesh
