#pragma once
// The state behind put_signal / wait_signal (docs/one-sided.md): a monotone
// counter per (group, sender → receiver, signal index) — shared by every buffer of the group,
// as NCCL keeps one per communicator — with the receiver's consumed credits, and the
// per-pair FIFO that makes "a visible signal implies every earlier put from the same sender
// to the same peer is delivered" true.
//
// FIFO: each put takes a ticket on its (sender → receiver) route when its transfer starts.
// Transfers run concurrently and may finish in any order (a small put issued after a large
// one from another stream of the sender finishes first), but a put is *delivered* — bytes
// written, counter bumped, waiters woken — only once every earlier ticket of its route is
// delivered. A put that finishes early is parked (with a snapshot of its source bytes when
// carrying data) and delivered, in the same simulated instant, right after the put that
// unblocks it. Different routes never wait for each other.
#include <cstdint>
#include <deque>
#include <functional>
#include <unordered_map>

#include "sim/hazard_tracker.hpp"
#include "sim/wait_registry.hpp"

namespace simgrid::s4u {
class Mailbox;
}

namespace symmesh::sim {

// One counter: (group, sender → receiver, signal index), world ranks.
struct SignalPair {
  int64_t delivered = 0;  // puts delivered so far (the counter)
  int64_t consumed = 0;   // waits completed so far
  // The buffer each delivered, unconsumed signal came with (-1: a signal with no data),
  // oldest first: a wait named on another buffer of the group takes it all the same, as on
  // NCCL, and the simulator reports that crossing (it hides a race on hardware).
  std::deque<int32_t> handles;
  WaitList waiters;     // the receiver's streams blocked on this pair
  PendingPuts pending;  // delivered bytes not yet consumed (hazard detection)
};

// One (sender → receiver) route: its puts' order, and the mailbox that carries them.
class Route {
 public:
  simgrid::s4u::Mailbox* mailbox = nullptr;  // set by the simulation before the run

 private:
  friend class OneSidedState;
  struct Slot {
    bool finished = false;
    std::function<void()> deliver;  // set when parked
  };
  uint64_t next_ticket_ = 0;   // ticket the next put will take
  uint64_t first_ticket_ = 0;  // ticket of slots_.front()
  std::deque<Slot> slots_;     // tickets [first_ticket_, next_ticket_) not yet delivered
};

class OneSidedState {
 public:
  // The counter of (group, sender → receiver, signal); created at zero. References stay
  // valid.
  SignalPair& pair(int group, int sender, int receiver, int signal);
  const SignalPair* find_pair(int group, int sender, int receiver, int signal) const;
  template <typename F>
  void for_each_pair(F&& f) const {
    for (const auto& [k, p] : pairs_) f(k.group, k.sender, k.receiver, k.signal, p);
  }

  // The route sender → receiver; created empty. References stay valid.
  Route& route(int sender, int receiver) { return routes_[route_key(sender, receiver)]; }

  // A put starts its transfer on `route`: its place in the route's order.
  static uint64_t open_ticket(Route& route);
  // The transfer of `ticket` finished. True when every earlier put of the route is
  // delivered: the caller delivers it now, then calls drain(). False: the caller must
  // park() it.
  static bool finish_ticket(Route& route, uint64_t ticket);
  static void park(Route& route, uint64_t ticket, std::function<void()> deliver);
  // Delivers, in ticket order, the parked puts that are now at the head of the route.
  static void drain(Route& route);
  // Puts of the route sender → receiver whose transfer finished but wait for an earlier one.
  size_t parked(int sender, int receiver) const;

 private:
  struct PairKey {
    int group, sender, receiver, signal;
    bool operator==(const PairKey&) const = default;
  };
  struct PairKeyHash {
    size_t operator()(const PairKey& k) const {
      uint64_t h = static_cast<uint32_t>(k.group) * 16u + static_cast<uint32_t>(k.signal);
      h = h * 0x9E3779B97F4A7C15ull + static_cast<uint32_t>(k.sender);
      h = h * 0x9E3779B97F4A7C15ull + static_cast<uint32_t>(k.receiver);
      return static_cast<size_t>(h ^ (h >> 31));
    }
  };
  static int64_t route_key(int sender, int receiver) {
    return (static_cast<int64_t>(sender) << 32) | static_cast<uint32_t>(receiver);
  }

  std::unordered_map<PairKey, SignalPair, PairKeyHash> pairs_;
  std::unordered_map<int64_t, Route> routes_;
};

}  // namespace symmesh::sim
