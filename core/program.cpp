#include "core/program.hpp"

#include <algorithm>
#include <cstdlib>
#include <set>

#include "core/errors.hpp"

namespace symmesh {
namespace {

std::string range_text(const BufferRef& ref) {
  return std::string(ref.space == BufferRef::Space::symmetric ? "symmetric" : "local") +
         " buffer " + std::to_string(ref.id) + " [" + std::to_string(ref.offset_bytes) + ", " +
         std::to_string(ref.offset_bytes + ref.size_bytes) + ")";
}

std::string label_key(const OpLabel& label) {
  std::string key = label.name;
  key.push_back('\0');
  key.push_back(static_cast<char>(label.category));
  key.append(label.detail);
  return key;
}

}  // namespace

int64_t max_stream_ops() {
  const char* text = std::getenv("SYMMESH_MAX_STREAM_OPS");
  if (!text || !*text) return kDefaultMaxStreamOps;
  char* end = nullptr;
  const long long value = std::strtoll(text, &end, 10);
  if (*end != '\0' || value < 1)
    throw InvalidArgument("expected a whole number >= 1, got '" + std::string(text) + "'",
                          "SYMMESH_MAX_STREAM_OPS");
  return value;
}

namespace {

std::string too_many_text(int64_t ops, int64_t cap) {
  return "the workload lowers to more than " + std::to_string(cap) +
         " stream operations (" + (ops > cap ? std::to_string(ops) + " at least" : "the bound") +
         "): too large to simulate; use fewer GPUs or ops, or set SYMMESH_MAX_STREAM_OPS "
         "(about 64 B of host memory each)";
}

}  // namespace

void Program::check_room_for(int64_t more, const std::string& what) const {
  if (more > max_stream_ops_ - counts_.stream_ops)
    throw TooManyStreamOps(too_many_text(counts_.stream_ops + more, max_stream_ops_), what);
}

Program::Program(int world_size) : world_size_(world_size), max_stream_ops_(max_stream_ops()) {
  if (world_size < 1)
    throw InvalidArgument("world size must be >= 1, got " + std::to_string(world_size), "Program");
  streams_.resize(world_size);
  stream_ops_.resize(world_size);
  allocated_.assign(world_size, 0);
  labels_.push_back({});  // LabelId 0: no label
  label_ids_.emplace(label_key({}), 0);
}

Program Program::counting(int world_size) {
  Program p(world_size);
  p.counting_ = true;
  return p;
}

void Program::check_rank(int rank, const char* where) const {
  if (rank < 0 || rank >= world_size_)
    throw InvalidArgument(
        "rank " + std::to_string(rank) + " out of range [0, " + std::to_string(world_size_) + ")",
        where);
}

GroupId Program::add_group(std::vector<int> world_ranks) {
  if (world_ranks.empty())
    throw InvalidArgument("a group needs at least one rank", "Program::add_group");
  if (const auto it = group_ids_.find(world_ranks); it != group_ids_.end()) return it->second;
  std::set<int> seen;
  for (int r : world_ranks) {
    check_rank(r, "Program::add_group");
    if (!seen.insert(r).second)
      throw InvalidArgument("rank " + std::to_string(r) + " appears twice", "Program::add_group");
  }
  Group g;
  g.ranks = world_ranks;
  g.first_rank = *seen.begin();
  g.position.assign(*seen.rbegin() - g.first_rank + 1, -1);
  for (size_t i = 0; i < g.ranks.size(); ++i)
    g.position[g.ranks[i] - g.first_rank] = static_cast<int32_t>(i);
  groups_.push_back(std::move(g));
  const GroupId id = static_cast<GroupId>(groups_.size() - 1);
  group_ids_.emplace(std::move(world_ranks), id);
  return id;
}

GroupId Program::world_group() {
  if (world_group_ < 0) {
    std::vector<int> all(world_size_);
    for (int r = 0; r < world_size_; ++r) all[r] = r;
    world_group_ = add_group(std::move(all));
  }
  return world_group_;
}

const Group& Program::group(GroupId id) const {
  if (id < 0 || id >= static_cast<int>(groups_.size()))
    throw InvalidArgument("unknown group " + std::to_string(id), "Program::group");
  return groups_[id];
}

namespace {

// total += bytes, refusing what int64 cannot hold (a 999999 TiB put on 8 ranks does not
// fit the program's byte counts; signed overflow would be undefined).
void add_bytes(int64_t& total, int64_t bytes, const char* where) {
  if (__builtin_add_overflow(total, bytes, &total))
    throw InvalidArgument("the program's buffers exceed 2^63 bytes", where);
}

int64_t times(int64_t bytes, size_t count, const char* where) {
  int64_t out = 0;
  if (__builtin_mul_overflow(bytes, static_cast<int64_t>(count), &out))
    throw InvalidArgument("the program's buffers exceed 2^63 bytes", where);
  return out;
}

}  // namespace

SymmetricHandle Program::symm_alloc(GroupId group_id, int64_t bytes) {
  const Group& g = group(group_id);
  if (bytes < 0) throw InvalidArgument("negative size", "Program::symm_alloc");
  const int64_t all_ranks = times(bytes, g.ranks.size(), "Program::symm_alloc");
  for (int r : g.ranks)  // a folded member's copy is its copy's in replica 0 (local_alloc)
    if (holds(r)) add_bytes(allocated_[r], bytes, "Program::symm_alloc");
  add_bytes(counts_.buffer_bytes, all_ranks, "Program::symm_alloc");
  SymmetricHandle handle{static_cast<int>(symmetric_.size()), group_id, bytes};
  symmetric_.push_back(handle);
  ++counts_.symmetric_allocations;
  return handle;
}

BufferRef Program::local_alloc(int rank, int64_t bytes) {
  check_rank(rank, "Program::local_alloc");
  if (bytes < 0) throw InvalidArgument("negative size", "Program::local_alloc");
  // A folded rank's buffer is its copy's in replica 0: no op of it is kept, so nothing is
  // made (id -1) or counted (add_folded_bytes counts what differs).
  if (!holds(rank)) return {BufferRef::Space::local, -1, 0, bytes};
  add_bytes(allocated_[rank], bytes, "Program::local_alloc");
  add_bytes(counts_.buffer_bytes, bytes, "Program::local_alloc");
  const int id = static_cast<int>(local_.size());
  local_.push_back({id, rank, bytes, {}});
  ++counts_.local_allocations;
  return {BufferRef::Space::local, id, 0, bytes};
}

void Program::set_initial_bytes(int rank, const BufferRef& local,
                                std::vector<unsigned char> bytes) {
  check_range(rank, local, "Program::set_initial_bytes");
  if (local.space != BufferRef::Space::local || local.offset_bytes != 0 ||
      static_cast<int64_t>(bytes.size()) != local_[local.id].size_bytes)
    throw InvalidArgument("initial bytes must cover a whole local buffer",
                          "Program::set_initial_bytes");
  counts_.initial_bytes += static_cast<int64_t>(bytes.size());
  if (!counting_) local_[local.id].initial = std::move(bytes);
}

void Program::count_initial_bytes(int rank, const BufferRef& local) {
  check_range(rank, local, "Program::count_initial_bytes");
  counts_.initial_bytes += local.size_bytes;
}

void Program::request_output(std::string name, int rank, const BufferRef& range) {
  check_range(rank, range, "Program::request_output");
  if (!counting_) outputs_.push_back({std::move(name), rank, range});
}

StreamId Program::stream(int rank, const std::string& name) {
  check_rank(rank, "Program::stream");
  auto& list = streams_[rank];
  for (size_t i = 0; i < list.size(); ++i)
    if (list[i].name == name) return static_cast<StreamId>(i);
  list.push_back({name, {}});
  stream_ops_[rank].push_back(0);
  return static_cast<StreamId>(list.size() - 1);
}

void Program::reserve_like(const Program& counted) {
  if (counted.world_size_ != world_size_)
    throw InvalidArgument("reserve_like: a program of another world size", "Program");
  for (int rank = 0; rank < world_size_; ++rank) {
    const auto& streams = counted.streams_[rank];
    for (size_t s = 0; s < streams.size(); ++s)
      streams_[rank][stream(rank, streams[s].name)].ops.reserve(
          static_cast<size_t>(counted.stream_ops_[rank][s]));
  }
  matmuls_.reserve(static_cast<size_t>(counted.counts_.matmuls));
  copies_.reserve(static_cast<size_t>(counted.counts_.copies));
  tensor_ops_.reserve(static_cast<size_t>(counted.counts_.tensor_ops));
  local_.reserve(static_cast<size_t>(counted.counts_.local_allocations));
  symmetric_.reserve(static_cast<size_t>(counted.counts_.symmetric_allocations));
}

LabelId Program::label(const OpLabel& label) {
  auto [it, fresh] = label_ids_.try_emplace(label_key(label), static_cast<LabelId>(labels_.size()));
  if (fresh) labels_.push_back(label);
  return it->second;
}

const std::vector<Stream>& Program::streams(int rank) const {
  check_rank(rank, "Program::streams");
  return streams_[rank];
}

const TensorOpWork& Program::tensor_op_of(const StreamOp& op) const {
  if (op.kind() != StreamOp::Kind::tensor_op)
    throw InvalidArgument("not a tensor_op op", "StreamOp");
  return tensor_ops_.at(op.work_index());
}

const MatmulWork& Program::matmul_of(const StreamOp& op) const {
  if (op.kind() != StreamOp::Kind::matmul) throw InvalidArgument("not a matmul op", "StreamOp");
  return matmuls_.at(op.work_index());
}

const CopyWork& Program::copy_of(const StreamOp& op) const {
  if (op.kind() != StreamOp::Kind::copy) throw InvalidArgument("not a copy op", "StreamOp");
  return copies_.at(op.work_index());
}

const SymmetricHandle& Program::symmetric(int id) const {
  if (id < 0 || id >= static_cast<int>(symmetric_.size()))
    throw InvalidArgument("unknown symmetric buffer " + std::to_string(id), "Program");
  return symmetric_[id];
}

int Program::event_owner_rank(EventId event) const {
  if (event < 0 || event >= next_event_)
    throw InvalidArgument("unknown event " + std::to_string(event), "Program");
  return event_rank_[event];
}

int Program::op_count(int rank, StreamId stream) const {
  check_rank(rank, "Program::op_count");
  return static_cast<int>(stream_ops_[rank].at(stream));
}

CollectiveId Program::record_collective(CollectiveRecord record) {
  counts_.collective_spans += static_cast<int64_t>(record.spans.size());
  if (counting_) return -1;
  collectives_.push_back(std::move(record));
  return static_cast<CollectiveId>(collectives_.size() - 1);
}

void Program::check_range(int rank, const BufferRef& ref, const char* where) const {
  check_rank(rank, where);
  int64_t size = 0;
  if (ref.space == BufferRef::Space::local) {
    if (ref.id < 0 || ref.id >= static_cast<int>(local_.size()))
      throw InvalidArgument("unknown local buffer " + std::to_string(ref.id), where, rank);
    if (local_[ref.id].rank != rank)
      throw InvalidArgument("local buffer " + std::to_string(ref.id) + " belongs to rank " +
                                std::to_string(local_[ref.id].rank),
                            where, rank);
    size = local_[ref.id].size_bytes;
  } else {
    if (ref.id < 0 || ref.id >= static_cast<int>(symmetric_.size()))
      throw InvalidArgument("unknown symmetric buffer " + std::to_string(ref.id), where, rank);
    const SymmetricHandle& h = symmetric_[ref.id];
    if (groups_[h.group].index_of(rank) < 0)
      throw InvalidArgument("symmetric buffer " + std::to_string(ref.id) +
                                " belongs to a group rank " + std::to_string(rank) + " is not in",
                            where, rank);
    size = h.size_bytes;
  }
  if (ref.offset_bytes < 0 || ref.size_bytes < 0 || ref.offset_bytes + ref.size_bytes > size)
    throw InvalidArgument(
        range_text(ref) + " is beyond the buffer's " + std::to_string(size) + " bytes", where,
        rank);
}

void Program::check_peer(const SymmetricHandle& handle, int peer, const char* where,
                         int rank) const {
  const Group& g = group(handle.group);
  if (peer < 0 || peer >= static_cast<int>(g.ranks.size()))
    throw InvalidArgument("peer " + std::to_string(peer) + " out of range for a group of " +
                              std::to_string(g.ranks.size()),
                          where, rank);
}

void Program::check_within(const SymmetricHandle& handle, int64_t offset, int64_t bytes,
                           const char* where, int rank) {
  if (offset < 0 || offset + bytes > handle.size_bytes)
    throw InvalidArgument("offset " + std::to_string(offset) + " + " + std::to_string(bytes) +
                              " bytes is beyond the symmetric buffer's " +
                              std::to_string(handle.size_bytes) + " bytes",
                          where, rank);
}

void Program::check_group_peer(GroupId group_id, int peer, const char* where, int rank) const {
  check_rank(rank, where);
  if (group_id < 0 || group_id >= group_count())
    throw InvalidArgument("unknown group " + std::to_string(group_id), where, rank);
  const Group& g = group(group_id);
  if (g.index_of(rank) < 0)
    throw InvalidArgument(
        "rank " + std::to_string(rank) + " is not a member of group " + std::to_string(group_id),
        where, rank);
  if (peer < 0 || peer >= static_cast<int>(g.ranks.size()))
    throw InvalidArgument("peer " + std::to_string(peer) + " out of range for a group of " +
                              std::to_string(g.ranks.size()),
                          where, rank);
}

void Program::check_signal_index(int signal, const char* where, int rank) {
  if (signal < 0 || signal >= kSignalIndices)
    throw InvalidArgument("signal index " + std::to_string(signal) + " is outside [0, " +
                              std::to_string(kSignalIndices) + ")",
                          where, rank);
}

GroupId Program::group_of(const StreamOp& op) const {
  switch (op.kind()) {
    case StreamOp::Kind::put_signal:
      return symmetric(op.put().handle).group;
    case StreamOp::Kind::get:
      return symmetric(op.get().handle).group;
    case StreamOp::Kind::wait_signal:
      return op.wait().group;
    case StreamOp::Kind::signal:
      return op.signal().group;
    case StreamOp::Kind::barrier:
      return op.group();
    default:
      throw InvalidArgument(to_string(op.kind()) + " has no group", "Program");
  }
}

void Program::append(int rank, StreamId stream, const StreamOp& op) {
  check_rank(rank, "Program");
  if (stream < 0 || stream >= static_cast<int>(streams_[rank].size()))
    throw InvalidArgument("unknown stream " + std::to_string(stream), "Program", rank);
  if (op.label_ >= labels_.size())
    throw InvalidArgument("unknown label " + std::to_string(op.label_), "Program", rank);
  if (!holds(rank)) return;
  if (counts_.stream_ops >= max_stream_ops_)
    throw TooManyStreamOps(too_many_text(counts_.stream_ops + 1, max_stream_ops_), "Program");
  ++stream_ops_[rank][stream];
  ++counts_.stream_ops;
  if (!counting_) streams_[rank][stream].ops.push_back(op);
}

void Program::fold_replicas(const ReplicaFolding& folding) {
  if (counts_.stream_ops > 0)
    throw InvalidArgument("replicas are folded before any op is appended", "Program");
  folding.check(world_size_);
  folding_ = folding;
}

void Program::add_folded_bytes(int rank, int64_t bytes) {
  check_rank(rank, "Program::add_folded_bytes");
  if (holds(rank)) throw InvalidArgument("rank " + std::to_string(rank) + " is not folded",
                                         "Program::add_folded_bytes");
  add_bytes(allocated_[rank], bytes, "Program::add_folded_bytes");
}

int Program::held_members(GroupId group_id) const {
  const std::vector<int>& ranks = group(group_id).ranks;
  if (!folding_.folds()) return static_cast<int>(ranks.size());
  int held = 0;
  for (int rank : ranks) held += holds(rank) ? 1 : 0;
  return held;
}

template <typename Work>
void Program::append_work(int rank, StreamId stream, StreamOp::Kind kind, LabelId label,
                          std::vector<Work>& table, int64_t& count, const Work& work) {
  StreamOp op;
  op.kind_ = kind;
  op.label_ = label;
  op.index_ = static_cast<int32_t>(counting_ ? 0 : table.size());
  append(rank, stream, op);
  ++count;
  if (!counting_) table.push_back(work);
}

void Program::put_signal(int rank, StreamId stream, const BufferRef& src,
                         const SymmetricHandle& handle, int64_t dst_offset, int peer, LabelId label,
                         int signal) {
  if (!holds(rank)) return;  // folded: its ops are its mirror's (checked there)
  check_range(rank, src, "put_signal src");
  check_peer(handle, peer, "put_signal", rank);
  check_signal_index(signal, "put_signal", rank);
  check_within(handle, dst_offset, src.size_bytes, "put_signal", rank);
  check_range(rank, handle.whole(), "put_signal handle");
  StreamOp op;
  op.kind_ = StreamOp::Kind::put_signal;
  op.label_ = label;
  op.put_ = PutSignalArgs{src, dst_offset, handle.id, peer, signal};
  append(rank, stream, op);
}

void Program::wait_signal(int rank, StreamId stream, const SymmetricHandle& handle, int peer,
                          LabelId label, int signal) {
  if (!holds(rank)) return;  // folded: its ops are its mirror's (checked there)
  check_range(rank, handle.whole(), "wait_signal handle");
  check_peer(handle, peer, "wait_signal", rank);
  append_wait(rank, stream, WaitSignalArgs{handle.id, handle.group, peer, signal}, label);
}

void Program::wait_signal(int rank, StreamId stream, GroupId group, int peer, LabelId label,
                          int signal) {
  if (!holds(rank)) return;  // folded: its ops are its mirror's (checked there)
  check_group_peer(group, peer, "wait_signal", rank);
  append_wait(rank, stream, WaitSignalArgs{-1, group, peer, signal}, label);
}

void Program::append_wait(int rank, StreamId stream, const WaitSignalArgs& wait, LabelId label) {
  check_signal_index(wait.signal, "wait_signal", rank);
  StreamOp op;
  op.kind_ = StreamOp::Kind::wait_signal;
  op.label_ = label;
  op.wait_ = wait;
  append(rank, stream, op);
}

void Program::signal(int rank, StreamId stream, GroupId group, int peer, LabelId label,
                     int signal) {
  if (!holds(rank)) return;  // folded: its ops are its mirror's (checked there)
  check_group_peer(group, peer, "signal", rank);
  check_signal_index(signal, "signal", rank);
  StreamOp op;
  op.kind_ = StreamOp::Kind::signal;
  op.label_ = label;
  op.signal_ = SignalArgs{group, peer, signal};
  append(rank, stream, op);
}

void Program::get(int rank, StreamId stream, const BufferRef& dst, const SymmetricHandle& handle,
                  int64_t src_offset, int peer, LabelId label) {
  if (!holds(rank)) return;  // folded: its ops are its mirror's (checked there)
  check_range(rank, dst, "get dst");
  check_range(rank, handle.whole(), "get handle");  // rank is a member of the handle's group
  check_peer(handle, peer, "get", rank);
  check_within(handle, src_offset, dst.size_bytes, "get", rank);
  StreamOp op;
  op.kind_ = StreamOp::Kind::get;
  op.label_ = label;
  op.get_ = GetArgs{dst, src_offset, handle.id, peer};
  append(rank, stream, op);
}

void Program::matmul(int rank, StreamId stream, const MatmulWork& work, LabelId label) {
  if (!holds(rank)) return;  // folded: its ops are its mirror's (checked there)
  const int64_t e = element_size_bytes(work.dtype);
  if (work.batch < 0 || work.m < 0 || work.n < 0 || work.k < 0)
    throw InvalidArgument("negative matmul dims", "matmul", rank);
  auto need = [&](const BufferRef& ref, int64_t elements, const char* what) {
    if (ref.size_bytes < elements * e)
      throw InvalidArgument(std::string(what) + " range holds " + std::to_string(ref.size_bytes) +
                                " bytes, needs " + std::to_string(elements * e),
                            "matmul", rank);
    check_range(rank, ref, "matmul");
  };
  need(work.a, work.batch * work.m * work.k, "a");
  need(work.b, work.batch * work.k * work.n, "b");
  need(work.c, work.batch * work.m * work.n, "c");
  if (work.bias.id >= 0 && work.batch > 0 && work.m > 0 && work.n > 0) {
    if (work.bias_batch_stride < 0 || work.bias_row_stride < 0 || work.bias_col_stride < 0)
      throw InvalidArgument("negative bias stride", "matmul", rank);
    need(work.bias,
         (work.batch - 1) * work.bias_batch_stride + (work.m - 1) * work.bias_row_stride +
             (work.n - 1) * work.bias_col_stride + 1,
         "bias");
  }
  append_work(rank, stream, StreamOp::Kind::matmul, label, matmuls_, counts_.matmuls, work);
}

void Program::reduce(int rank, StreamId stream, const ReduceWork& work, LabelId label) {
  if (!holds(rank)) return;  // folded: its ops are its mirror's (checked there)
  const int64_t bytes = work.elements * element_size_bytes(work.dtype);
  if (work.elements < 0 || work.dst.size_bytes < bytes || work.src.size_bytes < bytes)
    throw InvalidArgument("reduce ranges are smaller than " + std::to_string(bytes) + " bytes",
                          "reduce", rank);
  check_range(rank, work.dst, "reduce dst");
  check_range(rank, work.src, "reduce src");
  StreamOp op;
  op.kind_ = StreamOp::Kind::reduce;
  op.label_ = label;
  op.dtype_ = static_cast<uint8_t>(work.dtype);
  op.fused_ = work.fused_with_transfer;
  op.reduce_ = ReduceArgs{work.dst.slice(0, bytes), work.src.slice(0, bytes), work.scale};
  append(rank, stream, op);
}

void Program::copy(int rank, StreamId stream, const CopyWork& work, LabelId label) {
  if (!holds(rank)) return;  // folded: its ops are its mirror's (checked there)
  check_range(rank, work.dst, "copy dst");
  check_range(rank, work.src, "copy src");
  auto reach = [&](int64_t plane_stride, int64_t row_stride) {
    return (work.planes - 1) * plane_stride + (work.rows - 1) * row_stride + work.row_bytes;
  };
  if (work.planes < 0 || work.rows < 0 || work.row_bytes < 0 || work.src_plane_stride_bytes < 0 ||
      work.dst_plane_stride_bytes < 0 || work.src_stride_bytes < 0 || work.dst_stride_bytes < 0)
    throw InvalidArgument("strided copy with a negative count or stride", "copy", rank);
  if (work.planes > 0 && work.rows > 0 &&
      (reach(work.src_plane_stride_bytes, work.src_stride_bytes) > work.src.size_bytes ||
       reach(work.dst_plane_stride_bytes, work.dst_stride_bytes) > work.dst.size_bytes))
    throw InvalidArgument("strided copy reaches beyond its ranges", "copy", rank);
  append_work(rank, stream, StreamOp::Kind::copy, label, copies_, counts_.copies, work);
}

void Program::tensor_op(int rank, StreamId stream, const TensorOpWork& work, LabelId label) {
  if (!holds(rank)) return;  // folded: its ops are its mirror's (checked there)
  if (!is_tensor_op(work.op))
    throw InvalidArgument("'" + to_string(work.op) + "' is not a tensor op", "tensor_op", rank);
  if (work.inputs < 1 || work.inputs > TensorOpWork::kMaxInputs)
    throw InvalidArgument("a tensor op takes 1 to 3 inputs, got " + std::to_string(work.inputs),
                          "tensor_op", rank);
  const int64_t e = element_size_bytes(work.dtype);
  auto need = [&](const BufferRef& ref, const Shape& shape, const std::string& what) {
    if (ref.size_bytes < numel(shape) * e)
      throw InvalidArgument(what + " range holds " + std::to_string(ref.size_bytes) +
                                " bytes, needs " + std::to_string(numel(shape) * e),
                            "tensor_op " + to_string(work.op), rank);
    check_range(rank, ref, "tensor_op");
  };
  for (int k = 0; k < work.inputs; ++k)
    need(work.in[k], work.in_shapes[k], "input " + std::to_string(k));
  need(work.out, work.out_shape, "output");
  append_work(rank, stream, StreamOp::Kind::tensor_op, label, tensor_ops_, counts_.tensor_ops,
              work);
}

EventId Program::record_event(int rank, StreamId stream, LabelId label) {
  StreamOp op;
  op.kind_ = StreamOp::Kind::record_event;
  op.label_ = label;
  op.index_ = next_event_;
  append(rank, stream, op);
  event_rank_.push_back(rank);
  return next_event_++;
}

void Program::wait_event(int rank, StreamId stream, EventId event, LabelId label) {
  if (!holds(rank)) return;  // folded: its ops are its mirror's (checked there)
  if (event_owner_rank(event) != rank)
    throw InvalidArgument("event " + std::to_string(event) + " was recorded on rank " +
                              std::to_string(event_owner_rank(event)) +
                              "; events order streams of one rank",
                          "wait_event", rank);
  StreamOp op;
  op.kind_ = StreamOp::Kind::wait_event;
  op.label_ = label;
  op.index_ = event;
  append(rank, stream, op);
}

void Program::barrier(GroupId group_id, const std::string& stream_name, const OpLabel& label) {
  const LabelId id = this->label(label);
  StreamOp op;
  op.kind_ = StreamOp::Kind::barrier;
  op.label_ = id;
  op.index_ = group_id;
  for (int rank : group(group_id).ranks) append(rank, stream(rank, stream_name), op);
}

void Program::barrier(int rank, StreamId stream, GroupId group_id, LabelId label) {
  if (!holds(rank)) return;  // folded: its ops are its mirror's (checked there)
  check_group_peer(group_id, 0, "barrier", rank);  // rank is a member
  StreamOp op;
  op.kind_ = StreamOp::Kind::barrier;
  op.label_ = label;
  op.index_ = group_id;
  append(rank, stream, op);
}

void Program::symm_free(const SymmetricHandle& handle, const std::string& stream_name,
                        const OpLabel& label) {
  const std::vector<int>& members = group(handle.group).ranks;
  for (int rank : members) check_range(rank, handle.whole(), "symm_free");  // a real handle
  StreamOp op;
  op.kind_ = StreamOp::Kind::free;
  op.label_ = this->label(label);
  op.index_ = handle.id;
  for (int rank : members) append(rank, stream(rank, stream_name), op);
}

}  // namespace symmesh
