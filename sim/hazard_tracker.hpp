#pragma once
// Overwrite-hazard detection — what the simulator sees and hardware cannot.
//
// The rule. Every put that lands on a receiver R's copy of symmetric buffer H at bytes
// [a, b) is the k-th signal on the counter (H, S → R), k = 1, 2, … . Its bytes stay
// *unconsumed* until R completes a wait_signal on (H, S) that consumes credit number c ≥ k
// (R's c-th wait on that pair: after it, R may read everything the first c puts delivered).
// A put that lands on any unconsumed byte — from the same sender or another one — is a
// hazard: the receiver could not yet have read what is overwritten, and on hardware the
// two writes race. The report names the receiver, both senders, the overlapping byte range
// and both puts' labels. The later put's bytes then replace every overlapped earlier
// record (each overwritten put is reported once, not again for its remaining bytes).
//
// State: per (receiver, buffer) an ordered map of disjoint unconsumed ranges; per signal
// pair (H, S → R) the ranges it delivered in signal order (a PendingPuts the caller keeps
// with the pair's counter), so a wait consumes in O(ranges it frees). Nothing per byte.
#include <cstdint>
#include <map>
#include <string>
#include <unordered_map>
#include <vector>

#include "core/run_result.hpp"

namespace symmesh::sim {

// One unconsumed range of a receiver's copy: who put it, as which signal of its pair.
struct HazardRange {
  int64_t end = 0;
  int sender = -1;
  int64_t seq = 0;
  const std::string* label = nullptr;
};

// The puts of one signal pair whose bytes are not yet consumed, oldest first.
class PendingPuts {
 public:
  bool empty() const { return head_ == entries_.size(); }

 private:
  friend class HazardTracker;
  struct Entry {
    int64_t begin;
    int64_t seq;
  };
  std::vector<Entry> entries_;
  size_t head_ = 0;  // entries_[0, head_) are consumed
  // The receiver's ranges of the pair's buffer, found once (the tracker never erases one).
  std::map<int64_t, HazardRange>* ranges_ = nullptr;
};

class HazardTracker {
 public:
  // A put from `sender` delivering signal number `seq` of its pair landed on [begin, end)
  // of the receiver's copy of `handle` at `now_s`; `pending` is that pair's list and
  // `label` (which must outlive the tracker) names the put. Returns the hazards it caused.
  std::vector<Hazard> on_delivery(int receiver, int handle, int sender, int64_t seq, int64_t begin,
                                  int64_t end, const std::string* label, double now_s,
                                  PendingPuts& pending);
  // The receiver consumed credit number `credit` of the pair whose list is `pending`: the
  // bytes of that pair's puts 1..credit are consumed.
  void on_consumed(int receiver, int handle, int sender, int64_t credit, PendingPuts& pending);
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
