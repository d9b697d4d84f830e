#pragma once
// The state behind put_signal / wait_signal (shared/reference/one-sided.md): a monotone
// counter per (buffer, sender → receiver) with the receiver's consumed credits, and the
// per-pair FIFO that makes "a visible signal implies every earlier put from the same sender
// to the same peer is delivered" true.
//
// FIFO: each put takes a ticket from its (sender, receiver) queue when its transfer starts.
// Transfers run concurrently and may finish in any order (a small put issued after a large
// one from another stream of the sender finishes first), but a put is *delivered* — bytes
// written, counter bumped, waiters woken — only once every earlier ticket of its pair is
// delivered. A put that finishes early parks with a snapshot of its source bytes (emulation
// only) and is delivered, in the same simulated instant, by the put that unblocks it.
// Different pairs never wait for each other.
#include <cstdint>
#include <deque>
#include <functional>
#include <unordered_map>
#include <vector>

namespace symmesh::sim {

struct SignalPair {
  int64_t delivered = 0;  // puts delivered so far (the counter)
  int64_t consumed = 0;   // waits completed so far
};

class OneSidedState {
 public:
  // The counter of (handle, sender → receiver), world ranks; created at zero.
  SignalPair& pair(int handle, int sender, int receiver);
  const SignalPair* find_pair(int handle, int sender, int receiver) const;

  // A put from sender to receiver starts its transfer: its place in the pair's order.
  uint64_t open_ticket(int sender, int receiver);
  // The transfer of `ticket` finished. `deliver(snapshot)` performs its delivery; it is
  // called now if every earlier ticket is delivered (snapshot = false: read the source in
  // place), else later (snapshot = true) — `park()` is called first, now, so the caller can
  // copy what the delayed delivery will need. Returns whether delivery happened now.
  bool complete_ticket(int sender, int receiver, uint64_t ticket, std::function<void()> deliver,
                       const std::function<void()>& park);
  // Puts of (sender → receiver) whose transfer finished but wait for an earlier one.
  size_t parked(int sender, int receiver) const;
  // Every pair with delivered > consumed (unconsumed credits at the end of a run).
  template <typename F>
  void for_each_pair(F&& f) const {
    for (const auto& [k, p] : pairs_) f(k.handle, k.sender, k.receiver, p);
  }

 private:
  struct PairKey {
    int handle, sender, receiver;
    bool operator==(const PairKey&) const = default;
  };
  struct PairKeyHash {
    size_t operator()(const PairKey& k) const {
      uint64_t h = static_cast<uint32_t>(k.handle);
      h = h * 0x9E3779B97F4A7C15ull + static_cast<uint32_t>(k.sender);
      h = h * 0x9E3779B97F4A7C15ull + static_cast<uint32_t>(k.receiver);
      return static_cast<size_t>(h ^ (h >> 31));
    }
  };
  struct Slot {
    bool finished = false;
    std::function<void()> deliver;
  };
  struct Queue {
    uint64_t next_ticket = 0;   // ticket the next put will take
    uint64_t first_ticket = 0;  // ticket of slots.front()
    std::deque<Slot> slots;     // tickets [first_ticket, next_ticket) not yet delivered
  };
  static int64_t route_key(int sender, int receiver) {
    return (static_cast<int64_t>(sender) << 32) | static_cast<uint32_t>(receiver);
  }

  std::unordered_map<PairKey, SignalPair, PairKeyHash> pairs_;
  std::unordered_map<int64_t, Queue> queues_;
};

}  // namespace symmesh::sim
