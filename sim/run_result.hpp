#pragma once
// What a simulation reports: times, per-op timeline, memory, hazards and (emulation) bytes.
#include <cstdint>
#include <string>
#include <vector>

#include "core/program.hpp"

namespace symmesh::sim {

// One executed op of one stream, in simulated seconds. For put_signal, [start, end] is the
// transfer as the sender's stream sees it (the put completes there; the signal may become
// visible later when an earlier put to the same peer is still in flight); for waits, the
// time spent blocked.
struct TimelineEntry {
  int rank = -1;
  int stream = -1;
  std::string stream_name;
  int op_index = -1;  // index in Program::streams(rank)[stream].ops
  StreamOp::Kind kind = StreamOp::Kind::barrier;
  OpLabel label;
  double start_s = 0;
  double end_s = 0;
  int64_t bytes = 0;  // bytes moved (put) or touched in HBM (compute, copy); 0 for sync ops
};

// A put that landed on bytes of the receiver's copy that an earlier put had delivered and
// the receiver had not yet consumed (see sim/hazard_tracker.hpp for the exact rule).
struct Hazard {
  int receiver = -1;        // world rank whose copy was overwritten
  int handle = -1;          // symmetric buffer id
  int earlier_sender = -1;  // world rank of the put whose bytes were still unconsumed
  int later_sender = -1;    // world rank of the put that overwrote them
  int64_t begin_bytes = 0;  // overwritten range [begin, end) in the receiver's copy
  int64_t end_bytes = 0;
  std::string earlier_label;  // op label names of the two puts
  std::string later_label;
  double time_s = 0;  // when the later put landed
  std::string to_string() const;
};

// The bytes of one Program::outputs() request after an emulated run.
struct OutputBytes {
  std::string name;
  int rank = -1;
  std::vector<unsigned char> bytes;
};

// Every op sharing one label name (one workload op: its transfers, waits and compute on all
// ranks), summarised. Computed in the simulation process whether or not the timeline is
// recorded, so a caller that needs only per-op figures (a sweep) never ships the timeline.
struct LabelSpan {
  std::string name;
  double start_s = 0;            // first start over all ranks
  double end_s = 0;              // last end over all ranks
  double busiest_comm_s = 0;     // max over ranks of the time in "comm" ops (puts, waits)
  double busiest_compute_s = 0;  // max over ranks of the time in other non-"sync" ops
};

struct RunResult {
  double makespan_s = 0;  // when the last stream finished
  std::vector<TimelineEntry> timeline;  // empty unless SimOptions::record_timeline
  std::vector<LabelSpan> label_spans;   // by name; "sync" ops are left out
  std::vector<int64_t> peak_memory_bytes;  // per rank: live symmetric + local allocations
  std::vector<Hazard> hazards;
  std::vector<OutputBytes> outputs;  // empty unless carry_data
  // Findings that are not errors, e.g. signals a receiver never consumed (credits left).
  std::vector<std::string> warnings;
  // What simulating cost the simulation process: its peak resident memory minus its
  // resident memory when the run began (Linux /proc; 0 where unknown), its wall time and
  // its CPU time (user + system), from engine creation to the result.
  int64_t simulator_memory_bytes = 0;
  double simulator_wall_s = 0;
  double simulator_cpu_s = 0;
  // The output named `name` on `rank`; throws InvalidArgument when there is none.
  const OutputBytes& output(const std::string& name, int rank) const;
};

// "put_signal", "wait_signal", "matmul", … (the StreamOp::Kind enumerator's name).
std::string kind_name(StreamOp::Kind kind);

// Fills each timeline entry's stream_name, kind and label from `program` (by rank, stream,
// op_index): the results cross the process boundary without the strings.
void attach_labels(const Program& program, RunResult& result);

}  // namespace symmesh::sim
