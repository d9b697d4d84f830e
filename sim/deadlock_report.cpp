#include "sim/deadlock_report.hpp"

namespace symmesh::sim {

std::string describe_deadlock(const std::vector<BlockedStream>& blocked) {
  std::string text = "deadlock: " + std::to_string(blocked.size()) +
                     (blocked.size() == 1 ? " stream waits" : " streams wait") +
                     " forever and nothing running can release them";
  for (const BlockedStream& b : blocked) {
    text.append("\n  rank ").append(std::to_string(b.rank));
    text.append(" stream '").append(b.stream).append("'");
    text.append(" at ").append(b.op_kind);
    if (!b.op_name.empty()) text.append(" '").append(b.op_name).append("'");
    text.append(": ").append(b.description);
  }
  return text;
}

DeadlockError::DeadlockError(std::vector<BlockedStream> blocked)
    : Timeout(describe_deadlock(blocked), "simulation"), blocked_(std::move(blocked)) {}

}  // namespace symmesh::sim
