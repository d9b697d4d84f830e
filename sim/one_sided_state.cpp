#include "sim/one_sided_state.hpp"

namespace symmesh::sim {

SignalPair& OneSidedState::pair(int group, int sender, int receiver, int signal) {
  return pairs_[PairKey{group, sender, receiver, signal}];
}

const SignalPair* OneSidedState::find_pair(int group, int sender, int receiver, int signal) const {
  const auto it = pairs_.find(PairKey{group, sender, receiver, signal});
  return it == pairs_.end() ? nullptr : &it->second;
}

uint64_t OneSidedState::open_ticket(Route& r) {
  r.slots_.emplace_back();
  return r.next_ticket_++;
}

bool OneSidedState::finish_ticket(Route& r, uint64_t ticket) {
  if (ticket == r.first_ticket_) {
    r.slots_.pop_front();
    ++r.first_ticket_;
    return true;
  }
  r.slots_.at(static_cast<size_t>(ticket - r.first_ticket_)).finished = true;
  return false;
}

void OneSidedState::park(Route& r, uint64_t ticket, std::function<void()> deliver) {
  r.slots_.at(static_cast<size_t>(ticket - r.first_ticket_)).deliver = std::move(deliver);
}

void OneSidedState::drain(Route& r) {
  // A delivery may throw (use after free); the route is consistent before each call.
  while (!r.slots_.empty() && r.slots_.front().finished) {
    std::function<void()> deliver = std::move(r.slots_.front().deliver);
    r.slots_.pop_front();
    ++r.first_ticket_;
    deliver();
  }
}

size_t OneSidedState::parked(int sender, int receiver) const {
  const auto it = routes_.find(route_key(sender, receiver));
  if (it == routes_.end()) return 0;
  size_t n = 0;
  for (const Route::Slot& s : it->second.slots_) n += s.finished ? 1 : 0;
  return n;
}

}  // namespace symmesh::sim
