#include "sim/one_sided_state.hpp"

namespace symmesh::sim {

SignalPair& OneSidedState::pair(int handle, int sender, int receiver) {
  return pairs_[PairKey{handle, sender, receiver}];
}

const SignalPair* OneSidedState::find_pair(int handle, int sender, int receiver) const {
  const auto it = pairs_.find(PairKey{handle, sender, receiver});
  return it == pairs_.end() ? nullptr : &it->second;
}

uint64_t OneSidedState::open_ticket(int sender, int receiver) {
  Queue& q = queues_[route_key(sender, receiver)];
  q.slots.emplace_back();
  return q.next_ticket++;
}

bool OneSidedState::complete_ticket(int sender, int receiver, uint64_t ticket,
                                    std::function<void()> deliver,
                                    const std::function<void()>& park) {
  Queue& q = queues_.at(route_key(sender, receiver));
  Slot& slot = q.slots.at(static_cast<size_t>(ticket - q.first_ticket));
  slot.finished = true;
  if (ticket != q.first_ticket) {
    park();
    slot.deliver = std::move(deliver);
    return false;
  }
  // This put is the oldest: deliver it, then every finished put parked behind it. A
  // delivery may throw (use after free); the queue is consistent before each call.
  q.slots.pop_front();
  ++q.first_ticket;
  deliver();
  while (!q.slots.empty() && q.slots.front().finished) {
    std::function<void()> next = std::move(q.slots.front().deliver);
    q.slots.pop_front();
    ++q.first_ticket;
    next();
  }
  return true;
}

size_t OneSidedState::parked(int sender, int receiver) const {
  const auto it = queues_.find(route_key(sender, receiver));
  if (it == queues_.end()) return 0;
  size_t n = 0;
  for (const Slot& s : it->second.slots) n += s.finished ? 1 : 0;
  return n;
}

}  // namespace symmesh::sim
