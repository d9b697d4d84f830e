// Collectives the simulation runs as the collective library (NCCL) runs them: one call per
// member instead of the put_signal / wait_signal steps the Program records, timed by
// core/nccl_cost_model.hpp and moving the data where the one-sided steps would have put it
// (core/collectives.hpp's layout), so an emulated run checks the same numbers.
//
// Timing: an NCCL collective starts when its last member arrives (every rank's kernel
// waits for its peers), and each member's stream is then busy for the estimate. It holds no
// simulated link: two library collectives at once, or a library collective beside
// one-sided puts, do not slow each other down (core/nccl_cost_model.hpp shares NICs among
// the groups of one collective only).
#include <algorithm>
#include <simgrid/s4u/Actor.hpp>
#include <vector>

#include "core/collective_descriptor.hpp"
#include "core/collectives.hpp"
#include "core/errors.hpp"
#include "core/library_collectives.hpp"
#include "sim/emulated_ops.hpp"
#include "sim/simulation.hpp"

namespace symmesh::sim {
namespace {

namespace sg4 = simgrid::s4u;

int64_t start_key(int rank, int stream, int op) {
  return (static_cast<int64_t>(rank) << 40) ^ (static_cast<int64_t>(stream) << 32) ^
         static_cast<uint32_t>(op);
}

}  // namespace

void Simulation::find_library_collectives() {
  const auto& records = program_.collectives();
  for (size_t r = 0; r < records.size(); ++r) {
    const CollectiveRecord& record = records[r];
    if (!runs_as_library(cluster_, options_.collectives, record)) continue;
    const LibraryEstimate estimate = estimate_recorded_collective(cluster_, program_, record);
    LibraryRun run;
    run.record = static_cast<int>(r);
    run.duration_s = estimate.time_s;
    run.detail = static_cast<int>(library_details_.size());
    int ops = 0;
    for (const CollectiveSpan& span : record.spans) {
      ops = std::max(ops, span.op_count);
      if (span.op_count > 0) ++run.members;
    }
    library_details_.push_back("nccl " + to_string(record.op) + " " + estimate.name() +
                               " (replaces " + std::to_string(ops) + " one-sided ops)");
    const int index = static_cast<int>(library_runs_.size());
    library_runs_.push_back(std::move(run));
    for (const CollectiveSpan& span : record.spans)
      if (span.op_count > 0)
        library_start_[start_key(span.rank, span.stream, span.first_op)] = {index, span.op_count};
  }
}

std::pair<Simulation::LibraryRun*, int> Simulation::library_run_at(int rank, int stream,
                                                                   int index) {
  if (library_start_.empty()) return {nullptr, 0};
  const auto it = library_start_.find(start_key(rank, stream, index));
  if (it == library_start_.end()) return {nullptr, 0};
  return {&library_runs_[it->second.run], it->second.op_count};
}

void Simulation::run_library_collective(int rank, int stream, int index, LibraryRun& run) {
  const CollectiveRecord& record = program_.collectives()[run.record];
  const int members = run.members;
  ++run.arrived;
  waits_.wake(run.waiters);
  const StreamOp& first = program_.streams(rank)[stream].ops[index];
  waits_.block_until(
      run.waiters, [&run, members] { return run.arrived >= members; },
      WaitSite{rank, stream, &first});
  if (run.duration_s > 0) sg4::this_actor::sleep_for(run.duration_s);
  if (!run.applied) {
    run.applied = true;
    if (memory_.carries_data()) apply_library_collective(record);
  }
}

void Simulation::apply_library_collective(const CollectiveRecord& r) {
  const std::vector<int>& ranks = program_.group(r.group).ranks;
  const int p = static_cast<int>(ranks.size());
  const int64_t c = r.chunk_bytes;
  const int64_t element = element_size_bytes(r.dtype);
  const auto slot = [&](int handle, int rank, int i) {
    const BufferRef whole = program_.symmetric(handle).whole();
    memory_.check_live(rank, whole, r.name, "the library collective's buffer");
    return memory_.bytes(rank, whole) + static_cast<int64_t>(i) * c;
  };
  // Σ over members of slot i of the data buffer (avg: × 1/p at the last addition, as the
  // ring's last reduce does), in the collective's dtype.
  const auto reduced_slot = [&](int i) {
    std::vector<unsigned char> sum(slot(r.data, ranks[0], i), slot(r.data, ranks[0], i) + c);
    ReduceWork work;
    work.dtype = r.dtype;
    work.elements = c / element;
    for (int j = 1; j < p; ++j) {
      work.scale = (r.reduction == ReduceOp::avg && j == p - 1) ? 1.0 / p : 1.0;
      emulate_reduce(work, sum.data(), slot(r.data, ranks[j], i));
    }
    return sum;
  };
  // Where the data lands is the row's (core/collective_descriptor.cpp, core/collectives.hpp).
  const LibraryDataMove move = descriptor_of(r.op).library_move;
  if (!move)
    throw InvalidArgument(to_string(r.op) + " has no library equivalent",
                          "collective '" + r.name + "'");
  LibrarySlots slots;
  slots.members = p;
  slots.chunk_bytes = c;
  slots.slot = [&](LibrarySlots::Buffer buffer, int member, int i) {
    return slot(buffer == LibrarySlots::Buffer::data ? r.data : r.result, ranks[member], i);
  };
  slots.reduced = reduced_slot;
  move(slots);
}

}  // namespace symmesh::sim
