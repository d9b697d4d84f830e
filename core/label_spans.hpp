#pragma once
// Accumulates RunResult::label_spans while a backend runs a Program: each executed op adds
// its interval to its label's span and to its rank's communication or compute total. The
// label of each op is resolved through the Program's interned labels, so the per-op cost
// is a few array lookups.
#include <vector>

#include "core/program.hpp"
#include "core/run_result.hpp"

namespace symmesh {

class LabelSpans {
 public:
  explicit LabelSpans(const Program& program);

  void add(int rank, int stream, int op_index, double start_s, double end_s);
  // One entry per label name with at least one executed non-"sync" op, sorted by name.
  std::vector<LabelSpan> spans() const;

 private:
  struct Accumulator {
    LabelSpan span;
    bool seen = false;
    // By slot_of_rank_, sized on first use.
    std::vector<double> comm_s_per_rank, compute_s_per_rank;
  };
  const Program& program_;
  // Per label id: 2 * name index + (1 for a "comm" label), or -1 for a "sync" one.
  std::vector<int> slot_of_label_;
  // Per world rank: its index among the ranks that hold ops, which size the per-rank
  // totals (a Program that folds replicas holds one replica's: 128 of 16,384 ranks, and
  // 64 k labels · 16,384 ranks of doubles would be 16 GB).
  std::vector<int> slot_of_rank_;
  int ranks_with_ops_ = 0;
  std::vector<Accumulator> names_;
};

// The spans of a timeline recorded elsewhere (the hardware backend's measurement).
std::vector<LabelSpan> label_spans_of(const Program& program,
                                      const std::vector<TimelineEntry>& timeline);

}  // namespace symmesh
