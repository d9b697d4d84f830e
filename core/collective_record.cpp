#include "core/collective_record.hpp"

namespace symmesh {

std::string to_string(CollectiveOp op) {
  switch (op) {
    case CollectiveOp::all_gather:
      return "all_gather";
    case CollectiveOp::reduce_scatter:
      return "reduce_scatter";
    case CollectiveOp::all_reduce:
      return "all_reduce";
    case CollectiveOp::all_to_all:
      return "all_to_all";
    case CollectiveOp::allgather_matmul:
      return "allgather_matmul";
    case CollectiveOp::matmul_reducescatter:
      return "matmul_reducescatter";
  }
  return "?";
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
  switch (record.op) {
    case CollectiveOp::all_gather:
    case CollectiveOp::reduce_scatter:
    case CollectiveOp::all_reduce:
    case CollectiveOp::all_to_all:
      return true;
    case CollectiveOp::allgather_matmul:
    case CollectiveOp::matmul_reducescatter:
      return false;
  }
  return false;
}

}  // namespace symmesh
