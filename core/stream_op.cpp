// The value types of a Program (core/program.hpp): its ops' names and accessors, buffer
// slices, matmul work, groups and the counts a counting Program keeps. Program's own
// methods (building, checking and folding a program) are program.cpp's.
#include <algorithm>
#include <string>

#include "core/errors.hpp"
#include "core/program.hpp"

namespace symmesh {
namespace {

// A typical op, a put of a ring step, stays one cache line.
static_assert(sizeof(StreamOp) <= 64, "StreamOp must stay compact");

void wrong_kind(const char* what) {
  throw InvalidArgument(std::string("not a ") + what + " op", "StreamOp");
}

}  // namespace

std::string to_string(OpCategory category) {
  switch (category) {
    case OpCategory::none:
      return "";
    case OpCategory::comm:
      return "comm";
    case OpCategory::compute:
      return "compute";
    case OpCategory::sync:
      return "sync";
  }
  return "";
}

std::string to_string(StreamOp::Kind kind) {
  switch (kind) {
    case StreamOp::Kind::put_signal:
      return "put_signal";
    case StreamOp::Kind::wait_signal:
      return "wait_signal";
    case StreamOp::Kind::signal:
      return "signal";
    case StreamOp::Kind::matmul:
      return "matmul";
    case StreamOp::Kind::reduce:
      return "reduce";
    case StreamOp::Kind::copy:
      return "copy";
    case StreamOp::Kind::tensor_op:
      return "tensor_op";
    case StreamOp::Kind::record_event:
      return "record_event";
    case StreamOp::Kind::wait_event:
      return "wait_event";
    case StreamOp::Kind::barrier:
      return "barrier";
    case StreamOp::Kind::free:
      return "free";
    case StreamOp::Kind::get:
      return "get";
  }
  return "unknown";
}

const PutSignalArgs& StreamOp::put() const {
  if (kind_ != Kind::put_signal) wrong_kind("put_signal");
  return put_;
}

const WaitSignalArgs& StreamOp::wait() const {
  if (kind_ != Kind::wait_signal) wrong_kind("wait_signal");
  return wait_;
}

const SignalArgs& StreamOp::signal() const {
  if (kind_ != Kind::signal) wrong_kind("signal");
  return signal_;
}

const GetArgs& StreamOp::get() const {
  if (kind_ != Kind::get) wrong_kind("get");
  return get_;
}

ReduceWork StreamOp::reduce() const {
  if (kind_ != Kind::reduce) wrong_kind("reduce");
  ReduceWork w;
  w.dtype = static_cast<DType>(dtype_);
  w.elements = reduce_.dst.size_bytes / element_size_bytes(w.dtype);
  w.dst = reduce_.dst;
  w.src = reduce_.src;
  w.scale = reduce_.scale;
  w.fused_with_transfer = fused_;
  return w;
}

int StreamOp::handle() const {
  switch (kind_) {
    case Kind::put_signal:
      return put_.handle;
    case Kind::wait_signal:
      return wait_.handle;
    case Kind::free:
      return index_;
    case Kind::get:
      return get_.handle;
    default:
      wrong_kind("put_signal, wait_signal, get or free");
  }
  return -1;
}

int StreamOp::peer() const {
  if (kind_ == Kind::put_signal) return put_.peer;
  if (kind_ == Kind::wait_signal) return wait_.peer;
  if (kind_ == Kind::signal) return signal_.peer;
  if (kind_ == Kind::get) return get_.peer;
  wrong_kind("put_signal, signal, wait_signal or get");
  return -1;
}

int StreamOp::signal_index() const {
  if (kind_ == Kind::put_signal) return put_.signal;
  if (kind_ == Kind::wait_signal) return wait_.signal;
  if (kind_ == Kind::signal) return signal_.signal;
  wrong_kind("put_signal, signal or wait_signal");
  return -1;
}

EventId StreamOp::event() const {
  if (kind_ != Kind::record_event && kind_ != Kind::wait_event) wrong_kind("event");
  return index_;
}

GroupId StreamOp::group() const {
  if (kind_ != Kind::barrier) wrong_kind("barrier");
  return index_;
}

int StreamOp::work_index() const {
  if (kind_ != Kind::matmul && kind_ != Kind::copy && kind_ != Kind::tensor_op)
    wrong_kind("matmul, copy or tensor_op");
  return index_;
}

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
  const int64_t at = static_cast<int64_t>(world_rank) - first_rank;
  if (at < 0 || at >= static_cast<int64_t>(position.size())) return -1;
  return position[at];
}

int64_t ProgramCounts::program_bytes() const {
  // Each counted thing at its size in memory; labels and groups are few and left out.
  return stream_ops * static_cast<int64_t>(sizeof(StreamOp)) +
         matmuls * static_cast<int64_t>(sizeof(MatmulWork)) +
         copies * static_cast<int64_t>(sizeof(CopyWork)) +
         tensor_ops * static_cast<int64_t>(sizeof(TensorOpWork)) +
         local_allocations * static_cast<int64_t>(sizeof(LocalAllocation)) +
         symmetric_allocations * static_cast<int64_t>(sizeof(SymmetricHandle)) +
         collective_spans * static_cast<int64_t>(sizeof(CollectiveSpan)) + initial_bytes;
}

}  // namespace symmesh
