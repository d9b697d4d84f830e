#include "hw/execution_plan.hpp"

#include <algorithm>
#include <tuple>

#include "core/errors.hpp"

namespace symmesh::hw {
namespace {

constexpr int64_t kAlignment = 256;
constexpr int64_t kSlotBytes = 8;           // one uint64 signal counter
constexpr int64_t kWindowAlignment = 4096;  // NCCL_WIN_REQUIRED_ALIGNMENT

int64_t align_up(int64_t bytes) {
  return (bytes + kAlignment - 1) / kAlignment * kAlignment;
}

// The groups that need a communicator: those of symmetric buffers and of barriers.
std::vector<bool> used_groups(const Program& program) {
  std::vector<bool> used(program.group_count(), false);
  for (const auto& h : program.symmetric_allocations()) used[h.group] = true;
  for (int r = 0; r < program.world_size(); ++r)
    for (const auto& stream : program.streams(r))
      for (const auto& op : stream.ops)
        if (op.kind() == StreamOp::Kind::barrier || op.kind() == StreamOp::Kind::signal ||
            op.kind() == StreamOp::Kind::wait_signal)
          used[program.group_of(op)] = true;
  return used;
}

}  // namespace

std::string to_string(NativeCollective::Kind kind) {
  switch (kind) {
    case NativeCollective::Kind::all_gather:
      return "all_gather";
    case NativeCollective::Kind::reduce_scatter:
      return "reduce_scatter";
    case NativeCollective::Kind::all_reduce:
      return "all_reduce";
    case NativeCollective::Kind::all_to_all:
      return "all_to_all";
  }
  return "unknown";
}

std::string to_string(Launch::Kind kind) {
  switch (kind) {
    case Launch::Kind::put:
      return "put";
    case Launch::Kind::wait:
      return "wait";
    case Launch::Kind::barrier:
      return "barrier";
    case Launch::Kind::matmul:
      return "matmul";
    case Launch::Kind::reduce:
      return "reduce";
    case Launch::Kind::copy:
      return "copy";
    case Launch::Kind::record_event:
      return "record_event";
    case Launch::Kind::wait_event:
      return "wait_event";
    case Launch::Kind::free:
      return "free";
    case Launch::Kind::native:
      return "native";
  }
  return "unknown";
}

int CommPlan::index_of(int world_rank) const {
  for (size_t i = 0; i < ranks.size(); ++i)
    if (ranks[i] == world_rank) return static_cast<int>(i);
  return -1;
}

int64_t ExecutionPlan::device_bytes(int rank) const {
  const RankPlan& r = ranks.at(rank);
  int64_t bytes = r.local_arena_bytes;
  for (int c : r.comms) bytes += comms[c].arena_bytes;
  for (const auto& s : r.streams)
    bytes += s.fp8_scratch_bytes + (s.matmuls ? options.cublaslt_workspace_bytes : 0);
  return bytes;
}

namespace detail {

void place_buffers(const Program& program, ExecutionPlan& plan) {
  const int world = program.world_size();
  plan.comms.clear();
  CommPlan world_comm;
  for (int r = 0; r < world; ++r) world_comm.ranks.push_back(r);
  plan.comms.push_back(world_comm);

  // One communicator per distinct ordered rank list (many collectives reuse a mesh dim's
  // ranks under fresh group ids).
  const auto used = used_groups(program);
  plan.group_comm.assign(program.group_count(), -1);
  for (GroupId g = 0; g < program.group_count(); ++g) {
    if (!used[g]) continue;
    const auto& ranks = program.group(g).ranks;
    auto it = std::find_if(plan.comms.begin(), plan.comms.end(),
                           [&](const CommPlan& c) { return c.ranks == ranks; });
    if (it == plan.comms.end()) {
      CommPlan comm;
      comm.ranks = ranks;
      plan.comms.push_back(comm);
      it = plan.comms.end() - 1;
    }
    it->groups.push_back(g);
    plan.group_comm[g] = static_cast<int>(it - plan.comms.begin());
  }

  // Signal counters first (per communicator, not per buffer), then data.
  const auto& handles = program.symmetric_allocations();
  plan.symmetric.assign(handles.size(), {});
  for (const auto& h : handles) plan.symmetric[h.id].comm = plan.group_comm[h.group];
  for (CommPlan& comm : plan.comms) {
    comm.barrier_slots_offset_bytes = int64_t{kSignalIndices} * comm.size() * kSlotBytes;
    comm.origin_slots_offset_bytes = comm.barrier_slots_offset_bytes + comm.size() * kSlotBytes;
    comm.arena_bytes = align_up(comm.origin_slots_offset_bytes + comm.size() * kSlotBytes);
  }
  for (const auto& h : handles) {
    SymmetricPlacement& p = plan.symmetric[h.id];
    CommPlan& comm = plan.comms[p.comm];
    p.offset_bytes = comm.arena_bytes;
    p.size_bytes = h.size_bytes;
    comm.arena_bytes += align_up(std::max<int64_t>(h.size_bytes, 1));
  }
  // Windows are registered whole: keep each arena a multiple of NCCL's window alignment.
  for (CommPlan& comm : plan.comms)
    comm.arena_bytes =
        (comm.arena_bytes + kWindowAlignment - 1) / kWindowAlignment * kWindowAlignment;

  plan.ranks.assign(world, {});
  plan.local_offsets.assign(program.local_allocations().size(), 0);
  for (const auto& a : program.local_allocations()) {
    RankPlan& r = plan.ranks[a.rank];
    plan.local_offsets[a.id] = r.local_arena_bytes;
    r.local_arena_bytes += align_up(std::max<int64_t>(a.size_bytes, 1));
  }
  for (int r = 0; r < world; ++r) {
    plan.ranks[r].rank = r;
    for (size_t c = 0; c < plan.comms.size(); ++c)
      if (plan.comms[c].index_of(r) >= 0) plan.ranks[r].comms.push_back(static_cast<int>(c));
  }
}

}  // namespace detail

namespace {

// Every member of a communicator must call its NCCL collectives in the same order with the
// same arguments, or NCCL hangs: checked here rather than discovered on the GPUs.
void check_native_agreement(const ExecutionPlan& plan) {
  using Call = std::tuple<NativeCollective::Kind, int64_t, DType, bool>;
  std::vector<std::vector<std::vector<Call>>> calls(plan.comms.size());
  for (size_t c = 0; c < plan.comms.size(); ++c) calls[c].resize(plan.comms[c].size());
  for (const RankPlan& r : plan.ranks)
    for (const Launch& l : r.launches)
      if (l.kind == Launch::Kind::native)
        calls[l.comm][plan.comms[l.comm].index_of(r.rank)].push_back(
            {l.native.kind, l.native.count, l.native.dtype, l.native.average});
  for (size_t c = 0; c < plan.comms.size(); ++c)
    for (size_t m = 1; m < calls[c].size(); ++m)
      if (calls[c][m] != calls[c][0])
        throw InvalidArgument("the members of communicator " + std::to_string(c) +
                                  " would call different NCCL collectives (rank " +
                                  std::to_string(plan.comms[c].ranks[m]) + " differs from rank " +
                                  std::to_string(plan.comms[c].ranks[0]) +
                                  "); run with --collectives one-sided",
                              "hw plan");
}

// What each slot receives per run: signals on (comm, index, sender → receiver) and barriers
// per communicator, so that repeated runs know what to expect.
void count_per_run(ExecutionPlan& plan) {
  // (comm, signal index, sender, receiver), comm ranks
  std::map<std::tuple<int, int, int, int>, uint64_t> puts;
  std::map<std::pair<int, int>, uint64_t> barriers;  // (rank, comm)
  for (const RankPlan& r : plan.ranks)
    for (const Launch& l : r.launches) {
      if (l.kind == Launch::Kind::put)
        ++puts[{l.comm, l.signal, plan.comms[l.comm].index_of(r.rank), l.peer}];
      if (l.kind == Launch::Kind::barrier) ++barriers[{r.rank, l.comm}];
    }
  for (RankPlan& r : plan.ranks)
    for (Launch& l : r.launches) {
      if (l.kind == Launch::Kind::wait) {
        const auto it = puts.find({l.comm, l.signal, l.peer, plan.comms[l.comm].index_of(r.rank)});
        l.per_run = it == puts.end() ? 0 : it->second;
      }
      if (l.kind == Launch::Kind::barrier) l.per_run = barriers[{r.rank, l.comm}];
    }
}

}  // namespace

ExecutionPlan build_execution_plan(const Program& program, const ExecutionOptions& options) {
  if (options.cublaslt_workspace_bytes < 0)
    throw InvalidArgument("negative cuBLASLt workspace", "ExecutionOptions");
  ExecutionPlan plan;
  plan.world_size = program.world_size();
  plan.options = options;
  detail::place_buffers(program, plan);
  for (int r = 0; r < program.world_size(); ++r) detail::schedule_rank(program, plan, r);
  check_native_agreement(plan);
  count_per_run(plan);
  return plan;
}

std::map<std::string, int> launch_counts(const ExecutionPlan& plan) {
  std::map<std::string, int> counts;
  for (const RankPlan& r : plan.ranks)
    for (const Launch& l : r.launches)
      ++counts[l.kind == Launch::Kind::native ? "nccl " + to_string(l.native.kind)
                                              : to_string(l.kind)];
  return counts;
}

}  // namespace symmesh::hw
