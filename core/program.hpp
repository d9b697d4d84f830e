#pragma once
// A Program is what a backend runs: for every rank, one or more in-order streams of
// operations — one-sided transfers (put_signal / wait_signal), local compute, events
// between streams, barriers — over symmetric and rank-local buffers. Building a program
// only records operations: like the CUDA-stream calls they mirror, put_signal and
// wait_signal "return at once"; the backend's streams do the waiting.
//
// Collectives (core/collectives.hpp), overlapped matmuls and plan lowering all write
// Programs, and record every collective they write (core/collective_record.hpp) so that a
// backend can run it another way (NCCL's own) without guessing it from the ops; sim/
// evaluates Programs in simulated time (optionally carrying real bytes) and hw/ executes
// them on GPUs. Semantics of the one-sided operations: docs/one-sided.md.
//
// Compact by design, since a 1,024-GPU all-reduce holds millions of ops: a StreamOp is 64
// bytes (a kind, an interned label, and a small payload; a matmul's or copy's work sits in
// a side table), labels are interned once per distinct text, identical groups are one
// group, and membership lookups are O(1). A Program can also only count what it would
// hold (Program::counting): the lowering then runs unchanged into it, which is how the
// host-memory estimate is made before anything is allocated.
#include <cstdint>
#include <map>
#include <string>
#include <unordered_map>
#include <vector>

#include "core/collective_record.hpp"
#include "core/dtype.hpp"
#include "core/errors.hpp"
#include "core/matmul_signature.hpp"
#include "core/replica_folding.hpp"
#include "core/tensor_op.hpp"
#include "core/tensor_op_reference.hpp"

namespace symmesh {

using GroupId = int;
using StreamId = int;  // index among one rank's streams
using EventId = int;   // program-wide
using LabelId = uint32_t;

// Bytes in one buffer: a symmetric buffer (same id on every member of its group, each
// rank addressing its own copy) or a buffer private to one rank.
struct BufferRef {
  enum class Space : uint8_t { local, symmetric };
  Space space = Space::local;
  int32_t id = -1;
  int64_t offset_bytes = 0;
  int64_t size_bytes = 0;
  // The sub-range [offset, offset + size) of this range; throws InvalidArgument if outside.
  BufferRef slice(int64_t offset, int64_t size) const;
};

// A symmetric allocation: `size_bytes` on every rank of `group`.
struct SymmetricHandle {
  int id = -1;
  GroupId group = -1;
  int64_t size_bytes = 0;
  BufferRef whole() const { return {BufferRef::Space::symmetric, id, 0, size_bytes}; }
};

// Local compute, described for both timing (roofline) and emulation (real bytes).
// Matrices are contiguous row-major: a [batch,m,k], b [batch,k,n] (or [batch,n,k] when
// transpose_b: a linear layer's weight), c [batch,m,n].
struct MatmulWork {
  int64_t batch = 1, m = 0, n = 0, k = 0;
  bool transpose_b = false;
  DType dtype = DType::fp32;
  BufferRef a, b, c;
  bool accumulate = false;  // c += a@b instead of c = a@b
  // The share of the GEMM's work performed: 0.5 for a causal product, which computes only
  // the lower triangle (FlashAttention skips the blocks above the diagonal: their FLOPs
  // and their loads and stores). Timing only: the simulator's emulation and the hardware
  // backend still multiply in full.
  double work_fraction = 1.0;
  // Optional bias added to every product (addmm/baddbmm): bias element of c[b][i][j] is
  // bias[b·bias_batch_stride + i·bias_row_stride + j·bias_col_stride] (strides in
  // elements; 0 broadcasts). Unused when bias.id < 0.
  BufferRef bias;
  int64_t bias_batch_stride = 0, bias_row_stride = 0, bias_col_stride = 0;
  double flops() const { return 2.0 * batch * m * n * k; }
};
// The work of a local GEMM (core/matmul_signature.hpp) in `dtype`; buffers left unset.
MatmulWork matmul_work(const LocalGemm& gemm, DType dtype);

// dst[i] = (dst[i] + src[i]) * scale over `elements` of `dtype`: the reduction step of
// reduce-scatter / all-reduce (scale 1/n on the last step turns a sum into an average).
struct ReduceWork {
  DType dtype = DType::fp32;
  int64_t elements = 0;
  BufferRef dst, src;
  double scale = 1.0;  // applied to the result, e.g. 1/n for an average
  // Fused into the transfer that delivered `src`, as NCCL's kernels reduce while they
  // copy at HBM speed far above the link's: costs no separate time (data still reduced).
  bool fused_with_transfer = false;
};
// A strided box copy of up to three levels: `planes` × `rows` runs of `row_bytes`, with
// source/destination strides per level. It moves any sub-box of a row-major tensor of
// rank <= 3 in one operation (re-layout between shard dims, concat/split, padding), and a
// stride of 0 broadcasts (a bias row copied into every row of an output).
struct CopyWork {
  BufferRef dst, src;
  int64_t planes = 1;
  int64_t rows = 1;
  int64_t row_bytes = 0;
  int64_t src_plane_stride_bytes = 0;
  int64_t dst_plane_stride_bytes = 0;
  int64_t src_stride_bytes = 0;  // between rows
  int64_t dst_stride_bytes = 0;
  int64_t bytes() const { return planes * rows * row_bytes; }
};

// A tensor op (core/tensor_op.hpp) on one rank's pieces: RMSNorm, a residual add, an
// activation, the fused attention, the embedding lookup, the loss, or one of their backward
// ops. Pieces are contiguous row-major; up to three inputs. Timing uses `cost` (the
// roofline, core/roofline.hpp); carrying data, the simulator computes the op on the bytes
// (core/tensor_op_reference.hpp) with the offsets that place the pieces in their global
// tensors (token ids and labels follow the global row).
struct TensorOpWork {
  static constexpr int kMaxInputs = 3;
  OpKind op = OpKind::add;
  DType dtype = DType::bf16;
  TensorOpAttrs attrs;
  int inputs = 0;
  std::array<BufferRef, kMaxInputs> in;
  std::array<Shape, kMaxInputs> in_shapes;
  BufferRef out;
  Shape out_shape;
  int64_t row_offset = 0;    // global row of the pieces' first row
  int64_t vocab_offset = 0;  // embedding (table piece) / embedding_wgrad (output piece)
  int64_t vocab = 0;         // the whole vocabulary
  int64_t total_rows = 0;    // cross_entropy(_dgrad): the tokens the loss averages over
  TensorOpCost cost;

  // The reference's call on these pieces (shapes and offsets; the values come apart).
  TensorOpCall reference_call() const {
    TensorOpCall call;
    call.op = op;
    call.attrs = attrs;
    call.inputs.assign(in_shapes.begin(), in_shapes.begin() + inputs);
    call.output = out_shape;
    call.row_offset = row_offset;
    call.vocab_offset = vocab_offset;
    call.vocab = vocab;
    call.total_rows = total_rows;
    return call;
  }
};

// What an op is for, in reports: communication, local compute, or synchronisation (events,
// barriers, frees). `none` is an op built without a label.
enum class OpCategory : uint8_t { none, comm, compute, sync };
std::string to_string(OpCategory category);  // "", "comm", "compute", "sync"

// An op's label as callers write it; the Program keeps each distinct one once (LabelId).
struct OpLabel {
  std::string name;  // e.g. "qkv", "grads": the workload op it belongs to
  OpCategory category = OpCategory::none;
  std::string detail;  // e.g. "ring all_gather step 3/7"
};

// Signal counters are kept per (group, sender → receiver, signal index), as NCCL 2.29 keeps
// them per communicator (ncclPutSignal / ncclSignal / ncclWaitSignal take a `sigIdx`) and
// PyTorch's symmetric memory per group: every buffer of a group shares them, so a put into
// one buffer satisfies a wait issued on another. NCCL's documentation names no maximum
// index; symmesh keeps this many per pair (the hardware backend lays out one slot each).
constexpr int kSignalIndices = 8;

// The payloads of the ops that carry more than an index.
struct PutSignalArgs {
  BufferRef src;                 // local or symmetric
  int64_t dst_offset_bytes = 0;  // in the peer's copy of the handle
  int32_t handle = -1;           // symmetric buffer id
  int32_t peer = -1;             // receiver's index IN THE HANDLE'S GROUP
  int32_t signal = 0;            // signal index in [0, kSignalIndices)
  BufferRef dst() const {
    return {BufferRef::Space::symmetric, handle, dst_offset_bytes, src.size_bytes};
  }
};
// wait_signal, on a buffer's group (PyTorch's wait_signal(hdl, peer)) or on a group alone
// (NCCL's ncclWaitSignal on a communicator): then `handle` is -1.
struct WaitSignalArgs {
  int32_t handle = -1;
  int32_t group = -1;
  int32_t peer = -1;  // sender's index in the group
  int32_t signal = 0;
};
// A signal with no data (NCCL's ncclSignal): bumps (me → peer) of `group`.
struct SignalArgs {
  int32_t group = -1;
  int32_t peer = -1;  // receiver's index in the group
  int32_t signal = 0;
};
struct ReduceArgs {
  BufferRef dst, src;  // exactly the reduced bytes
  double scale = 1.0;
};
// A one-sided read: the bytes [src_offset, src_offset + dst.size) of `peer`'s copy of
// symmetric buffer `handle` are copied into `dst` on the reader's rank; the reader's stream
// goes on once they have arrived (as an LSA load kernel would: PyTorch's NCCL extension
// nccl_get, NCCL 2.30's ncclGin::get). No signal is involved on either side.
struct GetArgs {
  BufferRef dst;                 // local or symmetric, on the reader's rank
  int64_t src_offset_bytes = 0;  // in the peer's copy of the handle
  int32_t handle = -1;           // symmetric buffer id
  int32_t peer = -1;             // the rank read from, as an index IN THE HANDLE'S GROUP
  BufferRef src() const {
    return {BufferRef::Space::symmetric, handle, src_offset_bytes, dst.size_bytes};
  }
};

// One operation of a stream: a kind, a label and a payload (a tagged union of the small
// structs above, or an index: the matmul's or copy's work in the Program's side tables,
// the event, the barrier's group, the freed handle).
class StreamOp {
 public:
  enum class Kind : uint8_t {
    put_signal,   // copy src into peer's copy of dst, then bump (me -> peer) counter
    wait_signal,  // block the stream until (peer -> me) counter exceeds waits consumed
    signal,       // bump (me -> peer) counter, no data (ncclSignal)
    matmul,
    reduce,
    copy,
    tensor_op,  // core/tensor_op.hpp: its work in the Program's side table
    record_event,
    wait_event,
    barrier,  // every member of the group reaches it before any continues
    free,     // release a symmetric allocation (collective over its group)
    get,      // copy peer's copy of a symmetric range into a buffer of mine (no signal)
  };

  Kind kind() const { return kind_; }
  LabelId label() const { return label_; }

  const PutSignalArgs& put() const;    // put_signal
  const WaitSignalArgs& wait() const;  // wait_signal
  const SignalArgs& signal() const;    // signal
  const GetArgs& get() const;          // get
  ReduceWork reduce() const;           // reduce
  // The symmetric buffer of a put, wait, get or free.
  int handle() const;
  // The peer index (in the group) of a put, signal, wait or get.
  int peer() const;
  // The signal index of a put, signal or wait.
  int signal_index() const;
  EventId event() const;   // record_event, wait_event
  GroupId group() const;   // barrier
  int work_index() const;  // matmul, copy, tensor_op: index in the Program's side table

 private:
  friend class Program;
  StreamOp() : index_(0) {}

  Kind kind_ = Kind::barrier;
  uint8_t dtype_ = 0;   // reduce: its DType
  bool fused_ = false;  // reduce: fused with the transfer
  LabelId label_ = 0;
  union {
    PutSignalArgs put_;
    WaitSignalArgs wait_;
    SignalArgs signal_;
    ReduceArgs reduce_;
    GetArgs get_;
    int32_t index_;  // matmul / copy work, event, barrier group, freed handle
  };
};

std::string to_string(StreamOp::Kind kind);  // "put_signal", "wait_signal", "matmul", …

struct Stream {
  std::string name;
  std::vector<StreamOp> ops;
};

struct LocalAllocation {
  int id = -1;
  int rank = -1;
  int64_t size_bytes = 0;
  std::vector<unsigned char> initial;  // emulation: initial contents ("" = zeros)
};

struct Group {
  std::vector<int> ranks;              // world ranks in group order
  int index_of(int world_rank) const;  // -1 when not a member; O(1)

 private:
  friend class Program;
  int first_rank = 0;
  std::vector<int32_t> position;  // index by world_rank - first_rank; -1 for non-members
};

// Named data the caller wants back after an emulated run, per rank.
struct OutputRequest {
  std::string name;
  int rank = -1;
  BufferRef range;
};

// What a counting Program saw (or a real one holds): enough to size the real one.
struct ProgramCounts {
  int64_t stream_ops = 0;
  int64_t matmuls = 0;
  int64_t copies = 0;
  int64_t tensor_ops = 0;
  int64_t local_allocations = 0;
  int64_t symmetric_allocations = 0;
  int64_t collective_spans = 0;
  int64_t initial_bytes = 0;  // emulation: local buffers' initial contents
  // Bytes of buffers every rank holds when data is carried (local ones on their rank,
  // symmetric ones on every member), summed over ranks.
  int64_t buffer_bytes = 0;
  // Host memory the Program itself takes (ops, side tables, allocations, labels, records).
  int64_t program_bytes() const;
};

// The most stream ops one Program holds (and a counting one counts): a ring all-reduce
// over p ranks writes about 4p² of them, so a 1-D mesh of 65,536 GPUs would write 1.7e10
// (a terabyte, weeks of simulation) and take half an hour only to count. 2^27 ops hold
// about 8.6 GB; an all-reduce over 4,096 GPUs (some 70 M ops) simulates in 20 s and 5.3 GB.
// SYMMESH_MAX_STREAM_OPS raises (or lowers) it.
inline constexpr int64_t kDefaultMaxStreamOps = int64_t{1} << 27;
int64_t max_stream_ops();  // the bound in force (throws InvalidArgument for a bad variable)

// Thrown when a Program would hold more stream ops than max_stream_ops(): bad input (the
// scenario is too large to write), which the lowering reports at the op that grew it.
class TooManyStreamOps : public InvalidArgument {
 public:
  using InvalidArgument::InvalidArgument;
};

class Program {
 public:
  explicit Program(int world_size);
  // A Program that checks and counts everything it is given but keeps no op, initial
  // bytes or output: ops(), outputs() and initial contents stay empty, counts() holds the
  // totals, and stream_op_counts() the ops each stream would hold.
  static Program counting(int world_size);
  bool is_counting() const { return counting_; }

  int world_size() const { return world_size_; }

  // Folds identical replicas (core/replica_folding.hpp): from now on the ops appended to a
  // folded rank are dropped unchecked (its mirror's, the same ops, are checked) and counted
  // in neither counts() nor the bound; its local_alloc returns a buffer of id -1 and counts
  // nothing (its copy in replica 0 holds the same). Groups, symmetric buffers, streams and
  // events are kept for every rank. Throws InvalidArgument
  // once an op has been appended, or for a folding that does not tile the world.
  void fold_replicas(const ReplicaFolding& folding);
  const ReplicaFolding& folding() const { return folding_; }
  // Whether `rank`'s ops are held: every rank's unless folded.
  bool holds(int rank) const { return folding_.represented(rank); }
  // What a folded rank holds beyond its copy in replica 0 (a local Partial's zeros off
  // coordinate 0), added to its allocated_bytes(); throws InvalidArgument for a held rank.
  void add_folded_bytes(int rank, int64_t bytes);
  // The members of `group` whose ops are held: all of them unless the Program folds.
  int held_members(GroupId group) const;

  // Groups and buffers. Adding a group whose rank list already exists returns that group.
  GroupId add_group(std::vector<int> world_ranks);  // distinct ranks in [0, world)
  GroupId world_group();                            // all ranks
  const Group& group(GroupId id) const;
  // Collective over `group`: every member gets `bytes` under the same id.
  SymmetricHandle symm_alloc(GroupId group, int64_t bytes);
  BufferRef local_alloc(int rank, int64_t bytes);
  // Emulation: a local buffer's initial contents (a counting Program only counts them).
  void set_initial_bytes(int rank, const BufferRef& local, std::vector<unsigned char> bytes);
  // Counts the initial contents a whole local buffer would get (a counting lowering).
  void count_initial_bytes(int rank, const BufferRef& local);
  void request_output(std::string name, int rank, const BufferRef& range);

  // Streams: created on first use by name; "compute" and "comm" are conventional.
  StreamId stream(int rank, const std::string& name);
  // Reserves what `counted` (a counting Program that ran the same lowering) saw: the same
  // streams in the same order, each with its exact op count, so nothing grows later.
  void reserve_like(const Program& counted);

  // The id of a label (interned: one entry per distinct name, category and detail).
  LabelId label(const OpLabel& label);
  const OpLabel& label_of(LabelId id) const { return labels_.at(id); }
  int label_count() const { return static_cast<int>(labels_.size()); }

  // Operations, appended in order to (rank, stream). Arguments are checked here where
  // the program alone can tell (ranks, streams, buffer bounds, group membership, peer
  // range); what only execution can tell (unsatisfiable waits, hazards) is the backend's.
  // `signal` is the signal index (default 0) of the counter (group, sender → receiver) a
  // put bumps or a wait consumes; the handle's group is the group.
  void put_signal(int rank, StreamId stream, const BufferRef& src, const SymmetricHandle& handle,
                  int64_t dst_offset, int peer, LabelId label, int signal = 0);
  void wait_signal(int rank, StreamId stream, const SymmetricHandle& handle, int peer,
                   LabelId label, int signal = 0);
  // A signal with no data to `peer` of `group` (ncclSignal), and a wait on a group's
  // counter with no buffer named (ncclWaitSignal).
  void signal(int rank, StreamId stream, GroupId group, int peer, LabelId label, int signal = 0);
  void wait_signal(int rank, StreamId stream, GroupId group, int peer, LabelId label,
                   int signal = 0);
  // A one-sided read (StreamOp::Kind::get): `dst` (a buffer of `rank`) receives the bytes
  // [src_offset, src_offset + dst.size) of `peer`'s copy of `handle`; `peer` is an index
  // in the handle's group, of which `rank` must be a member.
  void get(int rank, StreamId stream, const BufferRef& dst, const SymmetricHandle& handle,
           int64_t src_offset, int peer, LabelId label);
  void matmul(int rank, StreamId stream, const MatmulWork& work, LabelId label);
  void reduce(int rank, StreamId stream, const ReduceWork& work, LabelId label);
  void copy(int rank, StreamId stream, const CopyWork& work, LabelId label);
  void tensor_op(int rank, StreamId stream, const TensorOpWork& work, LabelId label);
  EventId record_event(int rank, StreamId stream, LabelId label);
  void wait_event(int rank, StreamId stream, EventId event, LabelId label);
  // The same with a label given as text (interned first).
  void put_signal(int rank, StreamId stream, const BufferRef& src, const SymmetricHandle& handle,
                  int64_t dst_offset, int peer, const OpLabel& label, int signal = 0) {
    put_signal(rank, stream, src, handle, dst_offset, peer, this->label(label), signal);
  }
  void wait_signal(int rank, StreamId stream, const SymmetricHandle& handle, int peer,
                   const OpLabel& label, int signal = 0) {
    wait_signal(rank, stream, handle, peer, this->label(label), signal);
  }
  void signal(int rank, StreamId stream, GroupId group, int peer, const OpLabel& label,
              int signal = 0) {
    this->signal(rank, stream, group, peer, this->label(label), signal);
  }
  void wait_signal(int rank, StreamId stream, GroupId group, int peer, const OpLabel& label,
                   int signal = 0) {
    wait_signal(rank, stream, group, peer, this->label(label), signal);
  }
  void get(int rank, StreamId stream, const BufferRef& dst, const SymmetricHandle& handle,
           int64_t src_offset, int peer, const OpLabel& label) {
    get(rank, stream, dst, handle, src_offset, peer, this->label(label));
  }
  void matmul(int rank, StreamId stream, const MatmulWork& work, const OpLabel& label) {
    matmul(rank, stream, work, this->label(label));
  }
  void reduce(int rank, StreamId stream, const ReduceWork& work, const OpLabel& label) {
    reduce(rank, stream, work, this->label(label));
  }
  void copy(int rank, StreamId stream, const CopyWork& work, const OpLabel& label) {
    copy(rank, stream, work, this->label(label));
  }
  void tensor_op(int rank, StreamId stream, const TensorOpWork& work, const OpLabel& label) {
    tensor_op(rank, stream, work, this->label(label));
  }
  EventId record_event(int rank, StreamId stream, const OpLabel& label = {}) {
    return record_event(rank, stream, this->label(label));
  }
  void wait_event(int rank, StreamId stream, EventId event, const OpLabel& label = {}) {
    wait_event(rank, stream, event, this->label(label));
  }
  // Appends a barrier to `stream` of every member of `group` (stream by name).
  void barrier(GroupId group, const std::string& stream_name, const OpLabel& label = {});
  // Appends one member's barrier to (rank, stream): for callers that write a program rank
  // by rank (python/symmesh/symm_mem.py); every member must append its own, or the run
  // reports the others waiting for it.
  void barrier(int rank, StreamId stream, GroupId group, LabelId label);
  // Appends a free to `stream` of every member (use after free is then an error).
  void symm_free(const SymmetricHandle& handle, const std::string& stream_name,
                 const OpLabel& label = {});

  // Ops (rank, stream) holds so far (also in a counting Program): where a collective's
  // span starts.
  int op_count(int rank, StreamId stream) const;
  // Records a collective whose ops have been appended (core/collective_record.hpp).
  CollectiveId record_collective(CollectiveRecord record);

  // Read access for backends.
  const std::vector<Stream>& streams(int rank) const;
  const MatmulWork& matmul_of(const StreamOp& op) const;
  const CopyWork& copy_of(const StreamOp& op) const;
  const TensorOpWork& tensor_op_of(const StreamOp& op) const;
  const SymmetricHandle& symmetric(int id) const;
  // The world rank of member `peer` of symmetric buffer `handle`'s group: the rank a
  // put_signal's or wait_signal's peer names.
  int peer_rank(int handle, int peer) const {
    return group(symmetric(handle).group).ranks.at(peer);
  }
  // The world rank a put's, signal's, wait's or get's peer names, and the group whose
  // counter it uses (a get's: its handle's group; it uses no counter).
  int peer_rank_of(const StreamOp& op) const { return group(group_of(op)).ranks.at(op.peer()); }
  GroupId group_of(const StreamOp& op) const;
  const std::vector<SymmetricHandle>& symmetric_allocations() const { return symmetric_; }
  const std::vector<LocalAllocation>& local_allocations() const { return local_; }
  const std::vector<OutputRequest>& outputs() const { return outputs_; }
  const std::vector<CollectiveRecord>& collectives() const { return collectives_; }
  int event_count() const { return next_event_; }
  int event_owner_rank(EventId event) const;
  int group_count() const { return static_cast<int>(groups_.size()); }
  // Bytes allocated on `rank` so far: its local buffers and its copies of symmetric ones (a
  // folded rank: what it holds beyond its copy in replica 0).
  int64_t allocated_bytes(int rank) const { return allocated_.at(rank); }

  // What this Program holds or, counting, would hold.
  const ProgramCounts& counts() const { return counts_; }
  // Throws TooManyStreamOps, before any is written, when `more` stream ops would take the
  // Program past max_stream_ops() (a collective's lower bound, so that a huge one is
  // refused at once rather than after counting to the bound).
  void check_room_for(int64_t more, const std::string& what) const;
  // Counting: the ops each (rank, stream) would hold.
  const std::vector<std::vector<int64_t>>& stream_op_counts() const { return stream_ops_; }

 private:
  void check_rank(int rank, const char* where) const;
  // Checks and appends; drops the op of a folded rank (the ops every member of a group
  // gets: barriers, frees; and events).
  void append(int rank, StreamId stream, const StreamOp& op);
  // An op whose work sits in a side table (matmuls, copies, tensor ops).
  template <typename Work>
  void append_work(int rank, StreamId stream, StreamOp::Kind kind, LabelId label,
                   std::vector<Work>& table, int64_t& count, const Work& work);
  void check_range(int rank, const BufferRef& ref, const char* where) const;
  void check_peer(const SymmetricHandle& handle, int peer, const char* where, int rank) const;
  // [offset, offset + bytes) lies inside the symmetric buffer (a put's or a get's range).
  static void check_within(const SymmetricHandle& handle, int64_t offset, int64_t bytes,
                           const char* where, int rank);
  void check_group_peer(GroupId group, int peer, const char* where, int rank) const;
  // A wait_signal whose buffer or group and peer are checked: its index checked, appended.
  void append_wait(int rank, StreamId stream, const WaitSignalArgs& wait, LabelId label);
  static void check_signal_index(int signal, const char* where, int rank);

  int world_size_;
  bool counting_ = false;
  ReplicaFolding folding_;
  int64_t max_stream_ops_ = kDefaultMaxStreamOps;
  std::vector<Group> groups_;
  std::map<std::vector<int>, GroupId> group_ids_;
  GroupId world_group_ = -1;
  std::vector<SymmetricHandle> symmetric_;
  std::vector<LocalAllocation> local_;
  std::vector<std::vector<Stream>> streams_;      // [rank][stream]
  std::vector<std::vector<int64_t>> stream_ops_;  // [rank][stream]: ops appended
  std::vector<MatmulWork> matmuls_;
  std::vector<CopyWork> copies_;
  std::vector<TensorOpWork> tensor_ops_;
  std::vector<OpLabel> labels_;
  std::unordered_map<std::string, LabelId> label_ids_;
  std::vector<int> event_rank_;
  int next_event_ = 0;
  std::vector<OutputRequest> outputs_;
  std::vector<CollectiveRecord> collectives_;
  std::vector<int64_t> allocated_;
  ProgramCounts counts_;
};

}  // namespace symmesh
