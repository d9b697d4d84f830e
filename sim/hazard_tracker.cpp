#include "sim/hazard_tracker.hpp"

#include <algorithm>

namespace symmesh::sim {

std::string Hazard::to_string() const {
  return "put '" + later_label + "' from rank " + std::to_string(later_sender) +
         " overwrote bytes [" + std::to_string(begin_bytes) + ", " + std::to_string(end_bytes) +
         ") of rank " + std::to_string(receiver) + "'s copy of symmetric buffer " +
         std::to_string(handle) + " that put '" + earlier_label + "' from rank " +
         std::to_string(earlier_sender) + " had delivered and rank " + std::to_string(receiver) +
         " had not consumed (no wait_signal covering it) at t=" + std::to_string(time_s) + " s";
}

std::vector<Hazard> HazardTracker::on_delivery(int receiver, int handle, int sender, int64_t seq,
                                               int64_t begin, int64_t end, const std::string& label,
                                               double now_s) {
  std::vector<Hazard> found;
  if (end <= begin) return found;
  BufferState& state = buffers_[key(receiver, handle)];
  auto& ranges = state.ranges;
  // The first range that could overlap [begin, end): the one starting at or before begin.
  auto it = ranges.upper_bound(begin);
  if (it != ranges.begin() && std::prev(it)->second.end > begin) --it;
  while (it != ranges.end() && it->first < end) {
    const Range& old = it->second;
    Hazard h;
    h.receiver = receiver;
    h.handle = handle;
    h.earlier_sender = old.sender;
    h.later_sender = sender;
    h.begin_bytes = std::max(begin, it->first);
    h.end_bytes = std::min(end, old.end);
    h.earlier_label = old.label;
    h.later_label = label;
    h.time_s = now_s;
    found.push_back(std::move(h));
    it = ranges.erase(it);  // its sender's Pending entry goes stale and is skipped later
  }
  ranges.emplace(begin, Range{end, sender, seq, label});
  state.by_sender[sender].push_back({begin, seq});
  return found;
}

void HazardTracker::on_consumed(int receiver, int handle, int sender, int64_t credit) {
  const auto buffer = buffers_.find(key(receiver, handle));
  if (buffer == buffers_.end()) return;
  BufferState& state = buffer->second;
  const auto queue = state.by_sender.find(sender);
  if (queue == state.by_sender.end()) return;
  auto& pending = queue->second;
  while (!pending.empty() && pending.front().seq <= credit) {
    const auto range = state.ranges.find(pending.front().begin);
    if (range != state.ranges.end() && range->second.sender == sender &&
        range->second.seq == pending.front().seq)
      state.ranges.erase(range);
    pending.pop_front();
  }
}

void HazardTracker::on_free(int receiver, int handle) {
  buffers_.erase(key(receiver, handle));
}

}  // namespace symmesh::sim
