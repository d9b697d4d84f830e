#pragma once
// The executor: a Program run on the modelled cluster inside one SimGrid engine.
//
// Each (rank, stream) of the Program is one SimGrid actor on that rank's host, executing
// its ops in order: a put is a flow between the two GPUs' hosts (a self-put a local copy),
// compute ops are executions timed by sim/compute_model.hpp, waits suspend the actor until
// the state they wait on changes (sim/wait_registry.hpp). With SimOptions::carry_data the
// bytes move and compute for real (sim/emulated_ops.hpp).
//
// SimGrid 3.32 has one engine per process and its clock never resets: call
// simulate_in_this_process at most once per process. run_simulation (sim/forked_run.hpp)
// does it in a forked child and is what callers use.
#include <simgrid/forward.h>
#include <exception>
#include <optional>
#include <unordered_map>
#include <vector>

#include "core/cluster_spec.hpp"
#include "core/label_spans.hpp"
#include "core/program.hpp"
#include "core/run_result.hpp"
#include "sim/hazard_tracker.hpp"
#include "sim/one_sided_state.hpp"
#include "sim/rank_memory.hpp"
#include "sim/sim_options.hpp"
#include "sim/wait_registry.hpp"

namespace symmesh::sim {

// Runs `program` on `cluster` in this process's (only) SimGrid engine. Throws what the run
// found: DeadlockError, HazardError (hazards_are_errors), InvalidArgument (use after free,
// a program wider than the cluster, a dtype without a peak), Unsupported (emulation).
RunResult simulate_in_this_process(const Program& program, const ClusterSpec& cluster,
                                   const SimOptions& options);

class Simulation {
 public:
  Simulation(const Program& program, const ClusterSpec& cluster, const SimOptions& options,
             std::vector<simgrid::s4u::Host*> hosts);
  Simulation(const Simulation&) = delete;
  Simulation& operator=(const Simulation&) = delete;

  // Creates one actor per (rank, stream); Engine::run() then executes them.
  void spawn_actors();
  // After Engine::run(): the result, or the error that ended the run.
  RunResult collect();

 private:
  // What a stream's last put and last wait resolved to. Consecutive ops of a collective
  // mostly reuse one buffer and peer, so they skip the lookups (pointers into signals_,
  // which never move).
  struct StreamLinks {
    int put_group = -1, put_peer = -1, put_signal = -1, receiver = -1;
    Route* route = nullptr;
    SignalPair* put_pair = nullptr;
    int wait_group = -1, wait_peer = -1, wait_signal = -1, sender = -1;
    SignalPair* wait_pair = nullptr;
  };

  void run_stream(int rank, int stream);
  void fail(std::exception_ptr error);
  // Executes one op on the calling actor; returns the bytes it moved or touched.
  int64_t execute(int rank, int stream, const StreamOp& op, StreamLinks& links);

  // stream_ops.cpp
  // put_signal and signal (a put of no data).
  int64_t put_signal(int rank, const StreamOp& op, StreamLinks& links);
  void deliver(int sender, int receiver, const StreamOp& op, SignalPair& pair,
               const unsigned char* staged);
  void wait_signal(int rank, int stream, const StreamOp& op, StreamLinks& links);
  // get: a flow from the peer's GPU to mine; my stream goes on when the bytes have arrived.
  int64_t get(int rank, const StreamOp& op);
  int64_t compute(int rank, const StreamOp& op);
  void record_event(const StreamOp& op);
  void wait_event(int rank, int stream, const StreamOp& op);
  SignalPair& wait_pair(int receiver, GroupId group, int sender, int signal);
  void barrier(int rank, int stream, const StreamOp& op);
  void free_buffer(int rank, const StreamOp& op);
  void busy_for(double duration_s);

  // library_collectives.cpp: collectives run as NCCL runs them (core/library_collectives.hpp).
  void find_library_collectives();
  // The library collective whose span on (rank, stream) starts at op `index`, and the ops
  // that span holds; {nullptr, 0} when none starts there.
  struct LibraryRun;
  std::pair<LibraryRun*, int> library_run_at(int rank, int stream, int index);
  // Meets every member, then the stream is busy for the estimate; the data moves at the end.
  void run_library_collective(int rank, int stream, int index, LibraryRun& run);
  void apply_library_collective(const CollectiveRecord& record);
  void make_route_mailboxes();
  simgrid::s4u::ActorPtr anchor(int rank);
  const std::string& name_of(const StreamOp& op) const {
    return program_.label_of(op.label()).name;
  }
  BlockedStream blocked_at(int rank, int stream, const StreamOp& op) const;
  std::string rank_state(int rank) const;

  const Program& program_;
  const ClusterSpec& cluster_;
  SimOptions options_;
  std::vector<simgrid::s4u::Host*> hosts_;

  RankMemory memory_;
  OneSidedState signals_;
  HazardTracker hazard_tracker_;
  WaitRegistry waits_;

  struct EventSource {
    int stream = -1;  // the stream of the event's rank that records it
    bool recorded = false;
    WaitList waiters;
  };
  struct BarrierRound {
    int arrived = 0;
    WaitList waiters;
  };
  std::vector<EventSource> events_;                            // by event id
  std::unordered_map<int64_t, int> barrier_rounds_;            // (rank, group) → barriers reached
  std::unordered_map<int64_t, BarrierRound> barrier_arrived_;  // (group, round)
  std::vector<int> live_streams_;                              // per rank: streams not yet finished
  std::vector<simgrid::s4u::ActorPtr> anchors_;  // per rank, made when a route needs it

  struct LibraryRun {
    int record = -1;  // in program_.collectives()
    double duration_s = 0;
    int detail = -1;  // in library_details_
    int members = 0;  // spans with ops: the members that must arrive
    int arrived = 0;
    bool applied = false;
    WaitList waiters;
  };
  std::vector<LibraryRun> library_runs_;  // one per record run as NCCL's
  struct LibraryStart {
    int run = -1;      // in library_runs_
    int op_count = 0;  // ops of this member's span
  };
  std::unordered_map<int64_t, LibraryStart> library_start_;  // (rank, stream, first op)
  std::vector<std::string> library_details_;                 // RunResult::details

  std::vector<TimelineEntry> timeline_;  // only with SimOptions::record_timeline
  LabelSpans label_spans_;
  std::vector<Hazard> hazards_;
  // Waits named on one buffer that took the signal of a put into another buffer of the
  // group (sim/one_sided_state.hpp), and the first one, for the warning.
  int64_t crossed_credits_ = 0;
  std::string first_crossed_credit_;
  double makespan_s_ = 0;
  std::exception_ptr error_;
  std::optional<std::vector<BlockedStream>> deadlock_;
};

}  // namespace symmesh::sim
