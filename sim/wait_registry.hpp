#pragma once
// Blocking and waking the stream actors, and knowing when nothing can ever wake them.
//
// A stream actor that must wait (for a signal, an event or a barrier) registers under a key
// and suspends itself; whoever changes the state behind that key wakes its waiters, which
// re-check their condition. The registry counts live and blocked actors: an actor is
// blocked only here, never while it computes or transfers, and only actors change the
// state waits depend on. So when every live actor is blocked — at the moment the last one
// blocks, or when a running one finishes and leaves only blocked ones — no wait can ever
// complete: that is a deadlock, reported exactly (no time-out, no guess), and every blocked
// actor is released to end the run. SimGrid's own deadlock path (a critical log line and
// actors killed at the end of Engine::run) is therefore never reached.
#include <cstdint>
#include <functional>
#include <optional>
#include <unordered_map>
#include <vector>

#include "sim/deadlock_report.hpp"

namespace simgrid::s4u {
class Actor;
}

namespace symmesh::sim {

// Thrown inside a stream actor to unwind it when the run is being aborted (an error or a
// deadlock elsewhere); caught at the top of the actor.
struct RunAborted {};

struct WaitKey {
  enum class Kind : int { signal, event, barrier } kind = Kind::signal;
  int a = 0, b = 0, c = 0;  // signal: handle, sender, receiver; event: id; barrier: group, round
  bool operator==(const WaitKey&) const = default;
};
struct WaitKeyHash {
  size_t operator()(const WaitKey& k) const {
    uint64_t h = static_cast<uint64_t>(k.kind);
    for (int v : {k.a, k.b, k.c}) h = h * 0x9E3779B97F4A7C15ull + static_cast<uint32_t>(v);
    return static_cast<size_t>(h ^ (h >> 29));
  }
};

class WaitRegistry {
 public:
  // Called with the blocked streams when a deadlock is found (before they are released).
  explicit WaitRegistry(std::function<void(std::vector<BlockedStream>)> on_deadlock);

  void actor_started() { ++live_; }
  // The calling actor is done (normally or not). May find a deadlock among the others.
  void actor_finished();

  // Blocks the calling actor until `ready()` holds, re-checking whenever `key` is woken.
  // `describe` says what it waits for, should the run deadlock. Throws RunAborted when the
  // run is aborted while (or before) it waits.
  void block_until(const WaitKey& key, const std::function<bool()>& ready,
                   const std::function<BlockedStream()>& describe);
  // Re-checks every actor waiting on `key`.
  void wake(const WaitKey& key);
  // Ends the run: every blocked actor wakes up into RunAborted; later waits throw at once.
  void abort_all();
  bool aborted() const { return aborted_; }

 private:
  struct Waiter {
    simgrid::s4u::Actor* actor = nullptr;
    const std::function<BlockedStream()>* describe = nullptr;
  };
  void release(Waiter* waiter);
  void report_deadlock();

  std::function<void(std::vector<BlockedStream>)> on_deadlock_;
  // Every blocked actor is in exactly one list here, under the key it waits on.
  std::unordered_map<WaitKey, std::vector<Waiter*>, WaitKeyHash> waiters_;
  int blocked_ = 0;
  int live_ = 0;
  bool aborted_ = false;
};

}  // namespace symmesh::sim
