#include "core/scenario.hpp"

namespace symmesh {

std::string SourceLocation::to_string() const {
  std::string out = file.empty() ? "<scenario>" : file;
  if (line > 0)
    out.append(":").append(std::to_string(line)).append(":").append(std::to_string(column));
  return out;
}

std::string to_string(WorkloadKind kind) {
  switch (kind) {
    case WorkloadKind::mm:
      return "mm";
    case WorkloadKind::bmm:
      return "bmm";
    case WorkloadKind::addmm:
      return "addmm";
    case WorkloadKind::baddbmm:
      return "baddbmm";
    case WorkloadKind::put_signal:
      return "put_signal";
    case WorkloadKind::all_gather:
      return "all_gather";
    case WorkloadKind::reduce_scatter:
      return "reduce_scatter";
    case WorkloadKind::all_reduce:
      return "all_reduce";
    case WorkloadKind::all_to_all:
      return "all_to_all";
  }
  return "?";
}

bool is_matmul(WorkloadKind kind) {
  return kind == WorkloadKind::mm || kind == WorkloadKind::bmm || kind == WorkloadKind::addmm ||
         kind == WorkloadKind::baddbmm;
}

bool is_collective(WorkloadKind kind) {
  return kind == WorkloadKind::all_gather || kind == WorkloadKind::reduce_scatter ||
         kind == WorkloadKind::all_reduce || kind == WorkloadKind::all_to_all;
}

}  // namespace symmesh
