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
// State is per (receiver, buffer): an ordered map of disjoint unconsumed ranges plus, per
// sender, the ranges in signal order, so a wait consumes in O(ranges it frees). Nothing is
// kept per byte.
#include <cstdint>
#include <deque>
#include <map>
#include <string>
#include <unordered_map>
#include <vector>

#include "sim/run_result.hpp"

namespace symmesh::sim {

class HazardTracker {
 public:
  // A put from `sender` delivering signal number `seq` on (handle, sender → receiver) landed
  // on [begin, end) of the receiver's copy at `now_s`. Returns the hazards it caused.
  std::vector<Hazard> on_delivery(int receiver, int handle, int sender, int64_t seq, int64_t begin,
                                  int64_t end, const std::string& label, double now_s);
  // The receiver consumed credit number `credit` on (handle, sender → receiver): the bytes
  // of that pair's puts 1..credit are consumed.
  void on_consumed(int receiver, int handle, int sender, int64_t credit);
  // The receiver freed its copy: nothing on it is pending any more.
  void on_free(int receiver, int handle);

 private:
  struct Range {
    int64_t end = 0;
    int sender = -1;
    int64_t seq = 0;
    std::string label;
  };
  struct Pending {
    int64_t begin = 0;
    int64_t seq = 0;
  };
  struct BufferState {
    std::map<int64_t, Range> ranges;                         // begin → range, disjoint
    std::unordered_map<int, std::deque<Pending>> by_sender;  // in signal order
  };
  static int64_t key(int receiver, int handle) {
    return (static_cast<int64_t>(receiver) << 32) | static_cast<uint32_t>(handle);
  }
  std::unordered_map<int64_t, BufferState> buffers_;
};

}  // namespace symmesh::sim
