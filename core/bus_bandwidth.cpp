#include "core/bus_bandwidth.hpp"

#include <cmath>

#include "core/collective_descriptor.hpp"

namespace symmesh {

// The factors, names and aliases are the rows of core/collective_descriptor.cpp.
double bus_bandwidth_factor(BandwidthCollective op, int ranks) {
  return bus_bandwidth_factor(descriptor_of(op), ranks);
}

std::optional<BandwidthCollective> bandwidth_collective(std::string_view op) {
  const CollectiveDescriptor* d = find_collective(op);
  return d ? d->bandwidth : std::nullopt;
}

std::string to_string(BandwidthCollective op) {
  return std::string(descriptor_of(op).name);
}

std::optional<BandwidthCollective> bandwidth_collective(CollectiveOp op) {
  return descriptor_of(op).bandwidth;  // none for a fused one: its time is not the collective's
}

std::optional<CollectiveBandwidth> collective_bandwidth(BandwidthCollective op, int64_t bytes,
                                                        int ranks, double time_s) {
  if (!(time_s > 0) || !std::isfinite(time_s)) return std::nullopt;
  CollectiveBandwidth out;
  out.algbw_bytes_per_s = static_cast<double>(bytes) / time_s;
  out.busbw_bytes_per_s = out.algbw_bytes_per_s * bus_bandwidth_factor(op, ranks);
  return out;
}

}  // namespace symmesh
