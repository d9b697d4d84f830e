#pragma once
// A Program lowered for the hardware executor, on the host only (no CUDA type here):
// which NCCL communicator every group uses, where every buffer lives on each GPU, and per
// rank the launches in the order the host enqueues them, every argument resolved (arena
// offsets, signal-counter slots, the signal count each wait needs, barrier generations).
//
// Everything that can be checked without a GPU is checked here, before any NCCL call:
// dtypes the GPU path cannot compute, use after free, event cycles, peers. What the plan
// builder accepts, the executor launches without further decisions.
//
// Device memory, per GPU:
//   local arena      every local buffer of the rank, 256-byte aligned (cudaMalloc);
//   symmetric arena  per communicator the rank is in (ncclMemAlloc + a window registered
//                    NCCL_WIN_COLL_SYMMETRIC): the signal counters first — one uint64 per
//                    (signal index, sender), shared by every buffer of the communicator
//                    as NCCL's are, one per sender for the Program's barriers and one
//                    per sender for the executor's start barrier — then every symmetric
//                    buffer of the communicator's groups, 256-byte aligned.
// A run may be repeated (warm-up): counters are never reset, so the executor adds, per
// run, `per_run` to what a wait or barrier expects (the puts into that slot per run, the
// barriers of that communicator per run).
// Buffers are not reused after a free: the arenas are allocated once per run (the plan
// says how much; the executor refuses a plan that does not fit).
#include <cstdint>
#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "core/backend.hpp"
#include "core/program.hpp"

namespace symmesh::hw {

struct ExecutionOptions {
  // How the Program's recorded collectives run: the core ring / pairwise algorithms on
  // put_signal / wait_signal kernels, or one NCCL collective each (the same data layout, so
  // results are identical up to reduction order) — for all, or only those of the named
  // workload ops, which lets one run measure both implementations side by side.
  CollectivesChoice collectives;
  int64_t cublaslt_workspace_bytes = int64_t{32} << 20;  // per stream that runs matmuls
};

// Device bytes: an offset in a rank's local arena, or in the symmetric arena of one
// communicator (the same offset in every member's copy).
struct DeviceRange {
  enum class Arena { local, symmetric };
  Arena arena = Arena::local;
  int comm = -1;  // symmetric: index in ExecutionPlan::comms
  int64_t offset_bytes = 0;
  int64_t size_bytes = 0;
};

// One NCCL communicator: a distinct ordered rank list among the Program's groups.
struct CommPlan {
  std::vector<int> ranks;       // world ranks, in communicator-rank order
  std::vector<GroupId> groups;  // Program groups with exactly this rank list
  // At offset 0 of its arena, kSignalIndices × size() uint64 signal counters shared by every
  // buffer of the communicator, as NCCL keeps them: slot i·size() + s counts the signals of
  // index i from comm rank s (signal_slot_offset_bytes).
  int64_t barrier_slots_offset_bytes = 0;  // size() slots for the Program's barriers
  int64_t origin_slots_offset_bytes = 0;   // size() slots for the executor's start barrier
  int64_t arena_bytes = 0;                 // per member
  bool one_sided = false;  // put / wait kernels use it: needs load/store reach (LSA)
  bool barriers = false;   // barrier kernels (LSA) or, across nodes, NCCL all-reduce barriers
  bool native = false;     // used by NCCL collectives
  int size() const { return static_cast<int>(ranks.size()); }
  int index_of(int world_rank) const;  // -1 when not a member
  // The counter of signals with index `signal` from comm rank `sender`, in each member's copy.
  int64_t signal_slot_offset_bytes(int signal, int sender) const {
    return (static_cast<int64_t>(signal) * size() + sender) * 8;
  }
};

struct SymmetricPlacement {
  int comm = -1;
  int64_t offset_bytes = 0;  // data, in the communicator's arena
  int64_t size_bytes = 0;
};

struct NativeCollective {
  enum class Kind { all_gather, reduce_scatter, all_reduce, all_to_all };
  Kind kind = Kind::all_gather;
  DeviceRange send, recv;
  int64_t count = 0;  // NCCL's count: per rank (all_gather, reduce_scatter), whole (all_reduce),
                      // per peer (all_to_all); in elements of `dtype`
  DType dtype = DType::int8;
  bool average = false;
};
std::string to_string(NativeCollective::Kind kind);

struct Launch {
  enum class Kind {
    put,      // copy + release + atomic add on the peer's counter slot (one kernel)
    wait,     // acquire poll on the own slot until it reaches `expected`, with timeout
    barrier,  // signal every member, wait for every member (generation `expected`)
    matmul,   // cuBLASLt (+ bias / fp8 kernels)
    reduce,   // dst = (dst + src) · scale
    copy,     // 3-level strided copy
    record_event,
    wait_event,
    free,    // no GPU work: buffers live until the run ends
    native,  // one NCCL collective replacing a recognised one-sided collective
  };
  Kind kind = Kind::free;
  int stream = -1;
  int op_index = -1;  // first Program op (Program::streams(rank)[stream].ops)
  int op_count = 1;
  int64_t bytes = 0;  // moved or touched, for the timeline
  std::string detail;

  int comm = -1;    // put / wait / barrier / native
  int peer = -1;    // put: receiver, wait: sender (communicator ranks)
  int handle = -1;  // put / wait: symmetric buffer id (-1: a signal, or a wait on a comm)
  int signal = 0;   // put / wait: signal index
  DeviceRange src;  // put: source; reduce / copy: source
  DeviceRange dst;  // put: destination in the peer's copy; reduce / copy: destination
  int64_t signal_offset_bytes = 0;  // put: peer's slot for me; wait: my slot for the peer;
                                    // barrier: first barrier slot
  uint64_t expected = 0;            // wait: signal count to reach; barrier: generation
  uint64_t per_run = 0;             // wait: puts into the slot per run; barrier: barriers
  int put_slot = -1;                // put: its block-completion counter

  MatmulWork matmul;  // sizes, dtype, accumulate, bias strides (buffers below)
  DeviceRange a, b, c, bias;
  ReduceWork reduce;  // dtype, elements, scale
  CopyWork copy;      // counts and strides (ranges in src / dst)
  int event = -1;
  NativeCollective native;
};
std::string to_string(Launch::Kind kind);

struct StreamPlan {
  std::string name;
  bool matmuls = false;           // needs a cuBLASLt workspace
  int64_t fp8_scratch_bytes = 0;  // transposed B and the fp32 product of its fp8 matmuls
};

struct RankPlan {
  int rank = -1;
  std::vector<StreamPlan> streams;  // as Program::streams(rank)
  std::vector<Launch> launches;     // in host enqueue order
  std::vector<int> comms;           // communicators this rank belongs to
  int64_t local_arena_bytes = 0;
  int put_slots = 0;
  int waits = 0;
  bool fp8 = false;  // has fp8 matmuls (needs compute capability 8.9+)
};

struct ExecutionPlan {
  int world_size = 0;
  ExecutionOptions options;
  std::vector<CommPlan> comms;                // comms[0] is the world
  std::vector<int> group_comm;                // by Program group: its communicator (-1: unused)
  std::vector<SymmetricPlacement> symmetric;  // by symmetric buffer id
  std::vector<int64_t> local_offsets;         // by local buffer id, in its rank's arena
  std::vector<RankPlan> ranks;
  // Device memory the run allocates on `rank`: arenas, workspaces, scratch.
  int64_t device_bytes(int rank) const;
};

// Throws InvalidArgument (use after free, event cycles) or Unsupported (a matmul dtype the
// GPU path cannot compute), naming the rank and the op's label.
ExecutionPlan build_execution_plan(const Program& program, const ExecutionOptions& options = {});

// Launches by kind over all ranks ("put" → 12, …), for summaries and tests.
std::map<std::string, int> launch_counts(const ExecutionPlan& plan);

// The plan as text (what `symmesh run --dry-run` prints): communicators, memory per GPU,
// and per rank every stream's launches.
std::string describe(const ExecutionPlan& plan, const Program& program);

namespace detail {
// Steps of build_execution_plan, exposed for the tests.
void place_buffers(const Program& program, ExecutionPlan& plan);
void schedule_rank(const Program& program, ExecutionPlan& plan, int rank);
}  // namespace detail

}  // namespace symmesh::hw
