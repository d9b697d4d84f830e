#include "sim/hazard_tracker.hpp"

#include <algorithm>

namespace symmesh::sim {

HazardTracker::Ranges& HazardTracker::ranges_of(int receiver, int handle, PendingPuts& pending) {
  if (pending.last_handle_ != handle || !pending.last_ranges_) {
    pending.last_handle_ = handle;
    pending.last_ranges_ = &buffers_[key(receiver, handle)];
  }
  return *pending.last_ranges_;
}

std::vector<Hazard> HazardTracker::on_delivery(int receiver, int handle, int sender, int64_t seq,
                                               int64_t begin, int64_t end, const std::string* label,
                                               double now_s, PendingPuts& pending) {
  std::vector<Hazard> found;
  if (end <= begin) return found;
  Ranges& ranges = ranges_of(receiver, handle, pending);
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
    h.earlier_label = *old.label;
    h.later_label = *label;
    h.time_s = now_s;
    found.push_back(std::move(h));
    it = ranges.erase(it);  // its pair's pending entry goes stale and is skipped later
  }
  ranges.emplace_hint(it, begin, Range{end, sender, seq, &pending, label});
  pending.entries_.push_back({&ranges, begin, seq});
  return found;
}

void HazardTracker::on_consumed(int64_t credit, PendingPuts& pending) {
  if (pending.empty()) return;
  auto& entries = pending.entries_;
  while (pending.head_ < entries.size() && entries[pending.head_].seq <= credit) {
    const PendingPuts::Entry e = entries[pending.head_++];
    Ranges& ranges = *e.ranges;
    const auto range = ranges.find(e.begin);
    if (range != ranges.end() && range->second.counter == &pending && range->second.seq == e.seq)
      ranges.erase(range);
  }
  if (pending.head_ == entries.size()) {
    entries.clear();
    pending.head_ = 0;
  } else if (pending.head_ > 64 && pending.head_ * 2 > entries.size()) {
    entries.erase(entries.begin(), entries.begin() + static_cast<std::ptrdiff_t>(pending.head_));
    pending.head_ = 0;
  }
}

void HazardTracker::on_free(int receiver, int handle) {
  const auto it = buffers_.find(key(receiver, handle));
  if (it != buffers_.end()) it->second.clear();
}

}  // namespace symmesh::sim
