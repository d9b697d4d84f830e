#pragma once
// Blocking and waking the stream actors, and knowing when nothing can ever wake them.
//
// A stream actor that must wait (for a signal, an event or a barrier) joins the WaitList
// kept by the state it waits on (a signal pair, an event, a barrier round) and suspends
// itself; whoever changes that state wakes the list, and each waiter re-checks its
// condition. The registry counts live and blocked actors: an actor is blocked only here,
// never while it computes or transfers, and only actors change the state waits depend on.
// So when every live actor is blocked — at the moment the last one blocks, or when a
// running one finishes and leaves only blocked ones — no wait can ever complete: that is a
// deadlock, reported exactly (no time-out, no guess), and every blocked actor is released
// to end the run. SimGrid's own deadlock path (a critical log line, actors killed at the
// end of Engine::run) is therefore never reached.
//
// Waiters live on their actor's stack and are linked intrusively (no allocation per wait).
#include <functional>
#include <vector>

#include "sim/deadlock_report.hpp"

namespace simgrid::s4u {
class Actor;
}

namespace symmesh {
struct StreamOp;
}

namespace symmesh::sim {

// Thrown inside a stream actor to unwind it when the run is being aborted (an error or a
// deadlock elsewhere); caught at the top of the actor.
struct RunAborted {};

// Where a blocked actor stands: enough to describe it in a deadlock report.
struct WaitSite {
  int rank = -1;
  int stream = -1;
  const StreamOp* op = nullptr;
};

struct Waiter;

// The actors waiting on one piece of state, in arrival order.
class WaitList {
 public:
  bool empty() const { return head_ == nullptr; }

 private:
  friend class WaitRegistry;
  Waiter* head_ = nullptr;
  Waiter* tail_ = nullptr;
};

struct Waiter {
  simgrid::s4u::Actor* actor = nullptr;
  WaitSite site;
  WaitList* list = nullptr;
  Waiter* next_in_list = nullptr;
  Waiter* prev_blocked = nullptr;  // the registry's list of every blocked waiter
  Waiter* next_blocked = nullptr;
};

class WaitRegistry {
 public:
  using Describe = std::function<BlockedStream(const WaitSite&)>;
  using OnDeadlock = std::function<void(std::vector<BlockedStream>)>;
  WaitRegistry(Describe describe, OnDeadlock on_deadlock);

  void actor_started() { ++live_; }
  // The calling actor is done (normally or not). May find a deadlock among the others.
  void actor_finished();

  // Blocks the calling actor until `ready()` holds, re-checking whenever `list` is woken.
  // Throws RunAborted when the run is aborted while (or before) it waits.
  template <typename Ready>
  void block_until(WaitList& list, Ready&& ready, const WaitSite& site) {
    while (!ready()) block_once(list, site);
  }
  // Re-checks every actor waiting on `list`.
  void wake(WaitList& list);
  // Ends the run: every blocked actor wakes up into RunAborted; later waits throw at once.
  void abort_all();
  bool aborted() const { return aborted_; }

 private:
  void block_once(WaitList& list, const WaitSite& site);
  void unlink_blocked(Waiter* w);
  void report_deadlock();

  Describe describe_;
  OnDeadlock on_deadlock_;
  Waiter* blocked_head_ = nullptr;
  int blocked_ = 0;
  int live_ = 0;
  bool aborted_ = false;
};

}  // namespace symmesh::sim
