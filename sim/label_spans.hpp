#pragma once
// Accumulates RunResult::label_spans while a simulation runs: each executed op adds its
// interval to its label's span and to its rank's communication or compute total. Each op's
// label is resolved once up front, so the per-op cost is a few array lookups.
#include <vector>

#include "core/program.hpp"
#include "sim/run_result.hpp"

namespace symmesh::sim {

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
    std::vector<double> comm_s_per_rank, compute_s_per_rank;  // sized on first use
  };
  // Per op, 2 * label index + (1 for a "comm" op), or -1 for a "sync" op.
  std::vector<std::vector<std::vector<int>>> slot_;  // [rank][stream][op]
  std::vector<Accumulator> labels_;
  int world_size_;
};

// The spans of a timeline recorded elsewhere (the hardware backend's measurement).
std::vector<LabelSpan> label_spans_of(const Program& program,
                                      const std::vector<TimelineEntry>& timeline);

}  // namespace symmesh::sim
