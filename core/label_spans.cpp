#include "core/label_spans.hpp"

#include <algorithm>
#include <map>

namespace symmesh {

LabelSpans::LabelSpans(const Program& program) : program_(program) {
  std::map<std::string, int> index;  // sorted, so spans() comes out sorted by name
  const int labels = program.label_count();
  for (LabelId id = 0; id < static_cast<LabelId>(labels); ++id)
    if (program.label_of(id).category != OpCategory::sync)
      index.emplace(program.label_of(id).name, 0);
  int next = 0;
  for (auto& [name, i] : index) {
    i = next++;
    names_.emplace_back().span.name = name;
  }
  slot_of_rank_.assign(program.world_size(), -1);
  for (int rank = 0; rank < program.world_size(); ++rank)
    for (const Stream& stream : program.streams(rank))
      if (!stream.ops.empty()) {
        slot_of_rank_[rank] = ranks_with_ops_++;
        break;
      }
  slot_of_label_.resize(labels);
  for (LabelId id = 0; id < static_cast<LabelId>(labels); ++id) {
    const OpLabel& l = program.label_of(id);
    slot_of_label_[id] = l.category == OpCategory::sync
                             ? -1
                             : 2 * index.at(l.name) + (l.category == OpCategory::comm);
  }
}

void LabelSpans::add(int rank, int stream, int op_index, double start_s, double end_s) {
  const int slot = slot_of_label_[program_.streams(rank)[stream].ops[op_index].label()];
  if (slot < 0) return;
  Accumulator& a = names_[slot / 2];
  auto& per_rank = slot % 2 ? a.comm_s_per_rank : a.compute_s_per_rank;
  if (per_rank.empty()) per_rank.assign(ranks_with_ops_, 0.0);
  per_rank[slot_of_rank_[rank]] += end_s - start_s;
  a.span.start_s = a.seen ? std::min(a.span.start_s, start_s) : start_s;
  a.span.end_s = a.seen ? std::max(a.span.end_s, end_s) : end_s;
  a.seen = true;
}

std::vector<LabelSpan> LabelSpans::spans() const {
  auto busiest = [](const std::vector<double>& per_rank) {
    return per_rank.empty() ? 0.0 : *std::max_element(per_rank.begin(), per_rank.end());
  };
  std::vector<LabelSpan> out;
  for (const Accumulator& a : names_) {
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
  for (const TimelineEntry& e : timeline)
    spans.add(e.rank, e.stream, e.op_index, e.start_s, e.end_s);
  return spans.spans();
}

}  // namespace symmesh
