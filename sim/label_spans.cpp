#include "sim/label_spans.hpp"

#include <algorithm>
#include <map>

namespace symmesh::sim {

LabelSpans::LabelSpans(const Program& program) : world_size_(program.world_size()) {
  std::map<std::string, int> index;  // sorted, so spans() comes out sorted by name
  for (int rank = 0; rank < world_size_; ++rank)
    for (const Stream& stream : program.streams(rank))
      for (const StreamOp& op : stream.ops)
        if (op.label.category != "sync") index.emplace(op.label.name, 0);
  int next = 0;
  for (auto& [name, i] : index) {
    i = next++;
    labels_.emplace_back().span.name = name;
  }
  slot_.resize(world_size_);
  for (int rank = 0; rank < world_size_; ++rank)
    for (const Stream& stream : program.streams(rank)) {
      auto& slots = slot_[rank].emplace_back();
      slots.reserve(stream.ops.size());
      for (const StreamOp& op : stream.ops)
        slots.push_back(op.label.category == "sync"
                            ? -1
                            : 2 * index.at(op.label.name) + (op.label.category == "comm"));
    }
}

void LabelSpans::add(int rank, int stream, int op_index, double start_s, double end_s) {
  const int slot = slot_[rank][stream][op_index];
  if (slot < 0) return;
  Accumulator& a = labels_[slot / 2];
  auto& per_rank = slot % 2 ? a.comm_s_per_rank : a.compute_s_per_rank;
  if (per_rank.empty()) per_rank.assign(world_size_, 0.0);
  per_rank[rank] += end_s - start_s;
  a.span.start_s = a.seen ? std::min(a.span.start_s, start_s) : start_s;
  a.span.end_s = a.seen ? std::max(a.span.end_s, end_s) : end_s;
  a.seen = true;
}

std::vector<LabelSpan> LabelSpans::spans() const {
  auto busiest = [](const std::vector<double>& per_rank) {
    return per_rank.empty() ? 0.0 : *std::max_element(per_rank.begin(), per_rank.end());
  };
  std::vector<LabelSpan> out;
  for (const Accumulator& a : labels_) {
    if (!a.seen) continue;
    LabelSpan s = a.span;
    s.busiest_comm_s = busiest(a.comm_s_per_rank);
    s.busiest_compute_s = busiest(a.compute_s_per_rank);
    out.push_back(std::move(s));
  }
  return out;
}

std::vector<LabelSpan> label_spans_of(const Program& program,
                                      const std::vector<TimelineEntry>& timeline) {
  LabelSpans spans(program);
  for (const TimelineEntry& e : timeline) spans.add(e.rank, e.stream, e.op_index, e.start_s, e.end_s);
  return spans.spans();
}

}  // namespace symmesh::sim
