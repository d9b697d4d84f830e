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
  Route& r = routes_[route_key(sender, receiver)];
  r.slots.emplace_back();
  return r.next_ticket++;
}

bool OneSidedState::finish_ticket(int sender, int receiver, uint64_t ticket) {
  Route& r = routes_.at(route_key(sender, receiver));
  if (ticket == r.first_ticket) {
    r.slots.pop_front();
    ++r.first_ticket;
    return true;
  }
  r.slots.at(static_cast<size_t>(ticket - r.first_ticket)).finished = true;
  return false;
}

void OneSidedState::park(int sender, int receiver, uint64_t ticket, std::function<void()> deliver) {
  Route& r = routes_.at(route_key(sender, receiver));
  r.slots.at(static_cast<size_t>(ticket - r.first_ticket)).deliver = std::move(deliver);
}

void OneSidedState::drain(int sender, int receiver) {
  Route& r = routes_.at(route_key(sender, receiver));
  // A delivery may throw (use after free); the route is consistent before each call.
  while (!r.slots.empty() && r.slots.front().finished) {
    std::function<void()> deliver = std::move(r.slots.front().deliver);
    r.slots.pop_front();
    ++r.first_ticket;
    deliver();
  }
}

size_t OneSidedState::parked(int sender, int receiver) const {
  const auto it = routes_.find(route_key(sender, receiver));
  if (it == routes_.end()) return 0;
  size_t n = 0;
  for (const Slot& s : it->second.slots) n += s.finished ? 1 : 0;
  return n;
}

}  // namespace symmesh::sim
