#include "core/collective_record.hpp"

#include "core/collective_descriptor.hpp"

namespace symmesh {

// Names and library equivalents are the rows of core/collective_descriptor.cpp.
std::string to_string(CollectiveOp op) {
  return std::string(descriptor_of(op).name);
}

std::string to_string(CollectiveAlgorithm algorithm) {
  switch (algorithm) {
    case CollectiveAlgorithm::ring:
      return "ring";
    case CollectiveAlgorithm::pairwise:
      return "pairwise";
    case CollectiveAlgorithm::fused_ring:
      return "fused ring";
  }
  return "?";
}

bool has_library_equivalent(const CollectiveRecord& record) {
  if (record.algorithm == CollectiveAlgorithm::fused_ring) return false;
  return !descriptor_of(record.op).native_call.empty();
}

}  // namespace symmesh
