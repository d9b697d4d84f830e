#pragma once
// Overwrite-hazard detection — what the simulator sees and hardware cannot.
//
// The rule. Every put that lands on a receiver R's copy of symmetric buffer H at bytes
// [a, b) is the k-th signal on its counter (G, S → R, i) — G the group of H, i the signal
// index — k = 1, 2, … . Its bytes stay *unconsumed* until R completes a wait on that
// counter that consumes credit number c ≥ k (R's c-th wait on it, on whichever buffer of G
// the wait names: after it, R may read everything the first c signals delivered).
// A put that lands on any unconsumed byte — from the same sender or another one — is a
// hazard: the receiver could not yet have read what is overwritten, and on hardware the
// two writes race. The report names the receiver, both senders, the overlapping byte range
// and both puts' labels. The later put's bytes then replace every overlapped earlier
// record (each overwritten put is reported once, not again for its remaining bytes).
//
// State: per (receiver, buffer) an ordered map of disjoint unconsumed ranges; per counter
// (G, S → R, i) the ranges it delivered in signal order, in any buffers of G (a PendingPuts
// the caller keeps with the counter), so a wait consumes in O(ranges it frees). Nothing per
// byte.
#include <cstdint>
#include <map>
#include <string>
#include <unordered_map>
#include <vector>

#include "core/run_result.hpp"

namespace symmesh::sim {

// One unconsumed range of a receiver's copy: who put it, as which signal of which counter.
class PendingPuts;
struct HazardRange {
  int64_t end = 0;
  int sender = -1;
  int64_t seq = 0;
  const PendingPuts* counter = nullptr;  // whose signal number `seq` is
  const std::string* label = nullptr;
};

// The puts of one signal counter whose bytes are not yet consumed, oldest first.
class PendingPuts {
 public:
  bool empty() const { return head_ == entries_.size(); }

 private:
  friend class HazardTracker;
  struct Entry {
    // The receiver's ranges of the put's buffer (the tracker never erases one).
    std::map<int64_t, HazardRange>* ranges;
    int64_t begin;
    int64_t seq;
  };
  std::vector<Entry> entries_;
  size_t head_ = 0;  // entries_[0, head_) are consumed
  // The last buffer's ranges, found once for a run of puts into one buffer.
  int last_handle_ = -1;
  std::map<int64_t, HazardRange>* last_ranges_ = nullptr;
};

class HazardTracker {
 public:
  // A put from `sender` delivering signal number `seq` of its counter landed on
  // [begin, end) of the receiver's copy of `handle` at `now_s`; `pending` is the counter's
  // list and
  // `label` (which must outlive the tracker) names the put. Returns the hazards it caused.
  std::vector<Hazard> on_delivery(int receiver, int handle, int sender, int64_t seq, int64_t begin,
                                  int64_t end, const std::string* label, double now_s,
                                  PendingPuts& pending);
  // The receiver consumed credit number `credit` of the counter whose list is `pending`:
  // the bytes of that counter's signals 1..credit are consumed, in whichever buffers.
  void on_consumed(int64_t credit, PendingPuts& pending);
  // The receiver freed its copy: nothing on it is pending any more.
  void on_free(int receiver, int handle);

 private:
  using Range = HazardRange;
  using Ranges = std::map<int64_t, Range>;  // begin → range, disjoint
  Ranges& ranges_of(int receiver, int handle, PendingPuts& pending);
  static int64_t key(int receiver, int handle) {
    return (static_cast<int64_t>(receiver) << 32) | static_cast<uint32_t>(handle);
  }
  std::unordered_map<int64_t, Ranges> buffers_;  // never erased: PendingPuts point into it
};

}  // namespace symmesh::sim
