#pragma once
// What running a Program reports, whichever backend ran it (sim/ simulates, hw/ executes):
// the makespan, per-op spans of every workload op, memory, and — only when asked — the
// timeline of every executed op; the simulator also reports hazards, and emulated or
// checked runs the bytes of the requested outputs. Times in seconds on one clock per run.
#include <cstdint>
#include <string>
#include <vector>

namespace symmesh {

// One executed op of one stream: compact, and resolved to names only when a trace is
// written (core/trace_writer.hpp) from the Program that ran. For put_signal, [start, end]
// is the transfer as the sender's stream sees it (the signal may become visible later,
// behind an earlier put to the same peer); for waits, the time spent blocked.
struct TimelineEntry {
  int32_t rank = -1;
  int32_t stream = -1;
  int32_t op_index = -1;  // first op in Program::streams(rank)[stream].ops
  int32_t op_count = 1;   // > 1: one backend call ran several ops (an NCCL collective)
  double start_s = 0;
  double end_s = 0;
  int64_t bytes = 0;    // bytes moved (put) or touched in HBM (compute, copy); 0 for sync ops
  int32_t detail = -1;  // index in RunResult::details: what the backend did instead
};

// A put that landed on bytes of the receiver's copy that an earlier put had delivered and
// the receiver had not yet consumed (sim/hazard_tracker.hpp has the exact rule).
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

// The bytes of one Program::outputs() request after a run that carried data.
struct OutputBytes {
  std::string name;
  int rank = -1;
  std::vector<unsigned char> bytes;
};

// Every op sharing one label name (one workload op: its transfers, waits and compute on all
// ranks), summarised (core/label_spans.hpp). Backends compute them whether or not the
// timeline is kept, so a caller that needs only per-op figures (a sweep) never ships it.
struct LabelSpan {
  std::string name;
  double start_s = 0;            // first start over all ranks
  double end_s = 0;              // last end over all ranks
  double busiest_comm_s = 0;     // max over ranks of the time in "comm" ops (puts, waits)
  double busiest_compute_s = 0;  // max over ranks of the time in other non-"sync" ops
};

struct RunResult {
  double makespan_s = 0;                   // when the last stream finished
  std::vector<TimelineEntry> timeline;     // empty unless asked for
  std::vector<std::string> details;        // texts TimelineEntry::detail points at
  std::vector<LabelSpan> label_spans;      // by name; "sync" ops are left out
  std::vector<int64_t> peak_memory_bytes;  // per rank: live symmetric + local allocations
  std::vector<Hazard> hazards;
  std::vector<OutputBytes> outputs;  // empty unless data was carried
  // Findings that are not errors, e.g. signals a receiver never consumed (credits left).
  std::vector<std::string> warnings;
  // How the backend ran it, for reports (transport, collectives, devices, warm-up runs).
  std::vector<std::string> notes;
  // False in a process that took part but does not report (MPI ranks other than 0's).
  bool reporting = true;
  // What running cost the backend's own process: its peak resident memory minus its
  // resident memory when the run began (Linux /proc; 0 where unknown), its wall time and
  // its CPU time (user + system).
  int64_t backend_memory_bytes = 0;
  double backend_wall_s = 0;
  double backend_cpu_s = 0;
  // The output named `name` on `rank`; throws InvalidArgument when there is none.
  const OutputBytes& output(const std::string& name, int rank) const;
};

}  // namespace symmesh
