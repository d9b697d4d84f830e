#include "core/program.hpp"

#include <set>

#include "core/errors.hpp"

namespace symmesh {
namespace {

std::string range_text(const BufferRef& ref) {
  return std::string(ref.space == BufferRef::Space::symmetric ? "symmetric" : "local") +
         " buffer " + std::to_string(ref.id) + " [" + std::to_string(ref.offset_bytes) + ", " +
         std::to_string(ref.offset_bytes + ref.size_bytes) + ")";
}

}  // namespace

BufferRef BufferRef::slice(int64_t offset, int64_t size) const {
  if (offset < 0 || size < 0 || offset + size > size_bytes)
    throw InvalidArgument("slice [" + std::to_string(offset) + ", " +
                              std::to_string(offset + size) + ") is outside a range of " +
                              std::to_string(size_bytes) + " bytes",
                          "BufferRef::slice");
  BufferRef out = *this;
  out.offset_bytes += offset;
  out.size_bytes = size;
  return out;
}

MatmulWork matmul_work(const LocalGemm& gemm, DType dtype) {
  MatmulWork w;
  w.batch = gemm.batch;
  w.m = gemm.m;
  w.n = gemm.n;
  w.k = gemm.k;
  w.transpose_b = gemm.transpose_b;
  w.dtype = dtype;
  return w;
}

int Group::index_of(int world_rank) const {
  for (size_t i = 0; i < ranks.size(); ++i)
    if (ranks[i] == world_rank) return static_cast<int>(i);
  return -1;
}

Program::Program(int world_size) : world_size_(world_size) {
  if (world_size < 1)
    throw InvalidArgument("world size must be >= 1, got " + std::to_string(world_size), "Program");
  streams_.resize(world_size);
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
  std::set<int> seen;
  for (int r : world_ranks) {
    check_rank(r, "Program::add_group");
    if (!seen.insert(r).second)
      throw InvalidArgument("rank " + std::to_string(r) + " appears twice", "Program::add_group");
  }
  groups_.push_back({std::move(world_ranks)});
  return static_cast<GroupId>(groups_.size() - 1);
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

SymmetricHandle Program::symm_alloc(GroupId group_id, int64_t bytes) {
  group(group_id);
  if (bytes < 0) throw InvalidArgument("negative size", "Program::symm_alloc");
  SymmetricHandle handle{static_cast<int>(symmetric_.size()), group_id, bytes};
  symmetric_.push_back(handle);
  return handle;
}

BufferRef Program::local_alloc(int rank, int64_t bytes) {
  check_rank(rank, "Program::local_alloc");
  if (bytes < 0) throw InvalidArgument("negative size", "Program::local_alloc");
  const int id = static_cast<int>(local_.size());
  local_.push_back({id, rank, bytes, {}});
  return {BufferRef::Space::local, id, 0, bytes};
}

void Program::set_initial_bytes(int rank, const BufferRef& local,
                                std::vector<unsigned char> bytes) {
  check_range(rank, local, "Program::set_initial_bytes");
  if (local.space != BufferRef::Space::local || local.offset_bytes != 0 ||
      static_cast<int64_t>(bytes.size()) != local_[local.id].size_bytes)
    throw InvalidArgument("initial bytes must cover a whole local buffer",
                          "Program::set_initial_bytes");
  local_[local.id].initial = std::move(bytes);
}

void Program::request_output(std::string name, int rank, const BufferRef& range) {
  check_range(rank, range, "Program::request_output");
  outputs_.push_back({std::move(name), rank, range});
}

StreamId Program::stream(int rank, const std::string& name) {
  check_rank(rank, "Program::stream");
  auto& list = streams_[rank];
  for (size_t i = 0; i < list.size(); ++i)
    if (list[i].name == name) return static_cast<StreamId>(i);
  list.push_back({name, {}});
  return static_cast<StreamId>(list.size() - 1);
}

const std::vector<Stream>& Program::streams(int rank) const {
  check_rank(rank, "Program::streams");
  return streams_[rank];
}

int Program::event_owner_rank(EventId event) const {
  if (event < 0 || event >= next_event_)
    throw InvalidArgument("unknown event " + std::to_string(event), "Program");
  return event_rank_[event];
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

StreamOp& Program::append(int rank, StreamId stream, StreamOp op) {
  check_rank(rank, "Program");
  if (stream < 0 || stream >= static_cast<int>(streams_[rank].size()))
    throw InvalidArgument("unknown stream " + std::to_string(stream), "Program", rank);
  auto& ops = streams_[rank][stream].ops;
  ops.push_back(std::move(op));
  return ops.back();
}

void Program::put_signal(int rank, StreamId stream, const BufferRef& src,
                         const SymmetricHandle& handle, int64_t dst_offset, int peer,
                         OpLabel label) {
  check_range(rank, src, "put_signal src");
  const Group& g = group(handle.group);
  if (peer < 0 || peer >= static_cast<int>(g.ranks.size()))
    throw InvalidArgument("peer " + std::to_string(peer) + " out of range for a group of " +
                              std::to_string(g.ranks.size()),
                          "put_signal", rank);
  const BufferRef dst = handle.whole();
  if (dst_offset < 0 || dst_offset + src.size_bytes > handle.size_bytes)
    throw InvalidArgument("offset " + std::to_string(dst_offset) + " + " +
                              std::to_string(src.size_bytes) +
                              " bytes is beyond the symmetric buffer's " +
                              std::to_string(handle.size_bytes) + " bytes",
                          "put_signal", rank);
  check_range(rank, dst, "put_signal handle");
  StreamOp op;
  op.kind = StreamOp::Kind::put_signal;
  op.label = std::move(label);
  op.src = src;
  op.dst = dst.slice(dst_offset, src.size_bytes);
  op.handle = handle;
  op.peer = peer;
  append(rank, stream, std::move(op));
}

void Program::wait_signal(int rank, StreamId stream, const SymmetricHandle& handle, int peer,
                          OpLabel label) {
  check_range(rank, handle.whole(), "wait_signal handle");
  const Group& g = group(handle.group);
  if (peer < 0 || peer >= static_cast<int>(g.ranks.size()))
    throw InvalidArgument("peer " + std::to_string(peer) + " out of range for a group of " +
                              std::to_string(g.ranks.size()),
                          "wait_signal", rank);
  StreamOp op;
  op.kind = StreamOp::Kind::wait_signal;
  op.label = std::move(label);
  op.handle = handle;
  op.peer = peer;
  append(rank, stream, std::move(op));
}

void Program::matmul(int rank, StreamId stream, const MatmulWork& work, OpLabel label) {
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
  StreamOp op;
  op.kind = StreamOp::Kind::matmul;
  op.label = std::move(label);
  op.matmul = work;
  append(rank, stream, std::move(op));
}

void Program::reduce(int rank, StreamId stream, const ReduceWork& work, OpLabel label) {
  const int64_t bytes = work.elements * element_size_bytes(work.dtype);
  if (work.dst.size_bytes < bytes || work.src.size_bytes < bytes)
    throw InvalidArgument("reduce ranges are smaller than " + std::to_string(bytes) + " bytes",
                          "reduce", rank);
  check_range(rank, work.dst, "reduce dst");
  check_range(rank, work.src, "reduce src");
  StreamOp op;
  op.kind = StreamOp::Kind::reduce;
  op.label = std::move(label);
  op.reduce = work;
  append(rank, stream, std::move(op));
}

void Program::copy(int rank, StreamId stream, const CopyWork& work, OpLabel label) {
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
  StreamOp op;
  op.kind = StreamOp::Kind::copy;
  op.label = std::move(label);
  op.copy = work;
  append(rank, stream, std::move(op));
}

EventId Program::record_event(int rank, StreamId stream, OpLabel label) {
  StreamOp op;
  op.kind = StreamOp::Kind::record_event;
  op.label = std::move(label);
  op.event = next_event_;
  append(rank, stream, std::move(op));
  event_rank_.push_back(rank);
  return next_event_++;
}

void Program::wait_event(int rank, StreamId stream, EventId event, OpLabel label) {
  if (event_owner_rank(event) != rank)
    throw InvalidArgument("event " + std::to_string(event) + " was recorded on rank " +
                              std::to_string(event_owner_rank(event)) +
                              "; events order streams of one rank",
                          "wait_event", rank);
  StreamOp op;
  op.kind = StreamOp::Kind::wait_event;
  op.label = std::move(label);
  op.event = event;
  append(rank, stream, std::move(op));
}

void Program::barrier(GroupId group_id, const std::string& stream_name, OpLabel label) {
  for (int rank : group(group_id).ranks) {
    StreamOp op;
    op.kind = StreamOp::Kind::barrier;
    op.label = label;
    op.group = group_id;
    append(rank, stream(rank, stream_name), std::move(op));
  }
}

void Program::symm_free(const SymmetricHandle& handle, const std::string& stream_name,
                        OpLabel label) {
  const std::vector<int>& members = group(handle.group).ranks;
  for (int rank : members) check_range(rank, handle.whole(), "symm_free");  // a real handle
  for (int rank : members) {
    StreamOp op;
    op.kind = StreamOp::Kind::free;
    op.label = label;
    op.handle = handle;
    op.group = handle.group;
    append(rank, stream(rank, stream_name), std::move(op));
  }
}

}  // namespace symmesh
