// What a blocked stream waits for, in words, for the deadlock report (sim/deadlock_report.hpp).
#include "core/errors.hpp"
#include "sim/simulation.hpp"

namespace symmesh::sim {
namespace {

int64_t pair_key(int a, int b) {
  return (static_cast<int64_t>(a) << 32) | static_cast<uint32_t>(b);
}

std::string list_ranks(const std::vector<int>& ranks) {
  std::string text;
  for (int r : ranks) text.append(text.empty() ? "" : ", ").append(std::to_string(r));
  return text;
}

}  // namespace

// Only called during a deadlock, when every live stream is blocked.
std::string Simulation::rank_state(int rank) const {
  const int live = live_streams_.at(rank);
  if (live == 0) return "rank " + std::to_string(rank) + " has finished all its streams";
  return "rank " + std::to_string(rank) + " is itself blocked (" + std::to_string(live) +
         (live == 1 ? " stream)" : " streams)");
}

BlockedStream Simulation::blocked_at(int rank, int stream, const StreamOp& op) const {
  BlockedStream b;
  b.rank = rank;
  b.stream = program_.streams(rank).at(stream).name;
  b.op_name = name_of(op);
  b.op_kind = to_string(op.kind());
  if (op.kind() == StreamOp::Kind::wait_signal) {
    const WaitSignalArgs& wait = op.wait();
    const int sender = program_.peer_rank_of(op);
    const SignalPair* p = signals_.find_pair(wait.group, sender, rank, wait.signal);
    const int64_t delivered = p ? p->delivered : 0;
    const int64_t consumed = p ? p->consumed : 0;
    const size_t parked = signals_.parked(sender, rank);
    b.handle = wait.handle;
    b.waits_for = {sender};
    b.description =
        "waits for signal #" + std::to_string(consumed + 1) + " from rank " +
        std::to_string(sender) + " (peer " + std::to_string(wait.peer) + " of group " +
        std::to_string(wait.group) +
        (wait.signal ? ", signal " + std::to_string(wait.signal) : std::string()) + ")" +
        (wait.handle >= 0 ? " on symmetric buffer " + std::to_string(wait.handle) : std::string()) +
        "; " + std::to_string(delivered) + " delivered so far" +
        (parked ? ", " + std::to_string(parked) + " queued behind an earlier put" : "") + "; " +
        rank_state(sender);
  } else if (op.kind() == StreamOp::Kind::wait_event) {
    const EventSource& source = events_.at(op.event());
    b.waits_for = {rank};
    b.description = "waits for event " + std::to_string(op.event()) + ", recorded by stream '" +
                    (source.stream >= 0 ? program_.streams(rank).at(source.stream).name : "?") +
                    "' of rank " + std::to_string(rank) + ", which has not reached it";
  } else if (op.kind() == StreamOp::Kind::barrier) {
    const std::vector<int>& members = program_.group(op.group()).ranks;
    const auto mine = barrier_rounds_.find(pair_key(rank, op.group()));
    const int round = mine == barrier_rounds_.end() ? 0 : mine->second - 1;
    for (int m : members) {
      const auto it = barrier_rounds_.find(pair_key(m, op.group()));
      if (it == barrier_rounds_.end() || it->second <= round) b.waits_for.push_back(m);
    }
    b.description = "waits at barrier #" + std::to_string(round + 1) + " of group " +
                    std::to_string(op.group()) + " for ranks " + list_ranks(b.waits_for) + " (" +
                    std::to_string(members.size() - b.waits_for.size()) + " of " +
                    std::to_string(members.size()) + " arrived)";
  } else {
    b.description = "is blocked";
  }
  return b;
}

}  // namespace symmesh::sim
