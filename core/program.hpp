#pragma once
// A Program is what a backend runs: for every rank, one or more in-order streams of
// operations — one-sided transfers (put_signal / wait_signal), local compute, events
// between streams, barriers — over symmetric and rank-local buffers. Building a program
// only records operations: like the CUDA-stream calls they mirror, put_signal and
// wait_signal "return at once"; the backend's streams do the waiting.
//
// Collectives (core/collectives.hpp), overlapped matmuls and plan lowering all write
// Programs; sim/ evaluates them in simulated time (optionally carrying real bytes) and
// hw/ will execute them on GPUs. Semantics of the one-sided operations:
// shared/reference/one-sided.md.
#include <cstdint>
#include <string>
#include <vector>

#include "core/dtype.hpp"
#include "core/matmul_signature.hpp"

namespace symmesh {

using GroupId = int;
using StreamId = int;  // index among one rank's streams
using EventId = int;   // program-wide

// Bytes in one buffer: a symmetric buffer (same id on every member of its group, each
// rank addressing its own copy) or a buffer private to one rank.
struct BufferRef {
  enum class Space { local, symmetric };
  Space space = Space::local;
  int id = -1;
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

struct OpLabel {
  std::string name;      // e.g. "qkv", "grads"
  std::string category;  // "comm" | "compute" | "sync"
  std::string detail;    // e.g. "all_gather step 3/7"
};

struct StreamOp {
  enum class Kind {
    put_signal,   // copy src into peer's copy of dst, then bump (me -> peer) counter
    wait_signal,  // block the stream until (peer -> me) counter exceeds waits consumed
    matmul,
    reduce,
    copy,
    record_event,
    wait_event,
    barrier,  // every member of `group` reaches it before any continues
    free,     // release a symmetric allocation (collective over its group)
  };
  Kind kind = Kind::barrier;
  OpLabel label;
  // put_signal: src is local or symmetric; dst is a range of a symmetric buffer; peer is
  // the receiver's index IN THE HANDLE'S GROUP (as PyTorch's put_signal(src, hdl, peer)).
  // wait_signal: handle + peer index in its group.
  BufferRef src;
  BufferRef dst;
  SymmetricHandle handle;
  int peer = -1;
  MatmulWork matmul;
  ReduceWork reduce;
  CopyWork copy;
  EventId event = -1;
  GroupId group = -1;
};

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
  int index_of(int world_rank) const;  // -1 when not a member
};

// Named data the caller wants back after an emulated run, per rank.
struct OutputRequest {
  std::string name;
  int rank = -1;
  BufferRef range;
};

class Program {
 public:
  explicit Program(int world_size);

  int world_size() const { return world_size_; }

  // Groups and buffers.
  GroupId add_group(std::vector<int> world_ranks);  // distinct ranks in [0, world)
  GroupId world_group();                            // all ranks, created once
  const Group& group(GroupId id) const;
  // Collective over `group`: every member gets `bytes` under the same id.
  SymmetricHandle symm_alloc(GroupId group, int64_t bytes);
  BufferRef local_alloc(int rank, int64_t bytes);
  void set_initial_bytes(int rank, const BufferRef& local, std::vector<unsigned char> bytes);
  void request_output(std::string name, int rank, const BufferRef& range);

  // Streams: created on first use by name; "compute" and "comm" are conventional.
  StreamId stream(int rank, const std::string& name);

  // Operations, appended in order to (rank, stream). Arguments are checked here where
  // the program alone can tell (ranks, streams, buffer bounds, group membership, peer
  // range); what only execution can tell (unsatisfiable waits, hazards) is the backend's.
  void put_signal(int rank, StreamId stream, const BufferRef& src, const SymmetricHandle& handle,
                  int64_t dst_offset, int peer, OpLabel label);
  void wait_signal(int rank, StreamId stream, const SymmetricHandle& handle, int peer,
                   OpLabel label);
  void matmul(int rank, StreamId stream, const MatmulWork& work, OpLabel label);
  void reduce(int rank, StreamId stream, const ReduceWork& work, OpLabel label);
  void copy(int rank, StreamId stream, const CopyWork& work, OpLabel label);
  EventId record_event(int rank, StreamId stream, OpLabel label = {});
  void wait_event(int rank, StreamId stream, EventId event, OpLabel label = {});
  // Appends a barrier to `stream` of every member of `group` (stream by name).
  void barrier(GroupId group, const std::string& stream_name, OpLabel label = {});
  // Appends a free to `stream` of every member (use after free is then an error).
  void symm_free(const SymmetricHandle& handle, const std::string& stream_name, OpLabel label = {});

  // Read access for backends.
  const std::vector<Stream>& streams(int rank) const;
  const std::vector<SymmetricHandle>& symmetric_allocations() const { return symmetric_; }
  const std::vector<LocalAllocation>& local_allocations() const { return local_; }
  const std::vector<OutputRequest>& outputs() const { return outputs_; }
  int event_count() const { return next_event_; }
  int event_owner_rank(EventId event) const;
  int group_count() const { return static_cast<int>(groups_.size()); }

 private:
  void check_rank(int rank, const char* where) const;
  StreamOp& append(int rank, StreamId stream, StreamOp op);
  void check_range(int rank, const BufferRef& ref, const char* where) const;

  int world_size_;
  std::vector<Group> groups_;
  GroupId world_group_ = -1;
  std::vector<SymmetricHandle> symmetric_;
  std::vector<LocalAllocation> local_;
  std::vector<std::vector<Stream>> streams_;  // [rank][stream]
  std::vector<int> event_rank_;
  int next_event_ = 0;
  std::vector<OutputRequest> outputs_;
};

}  // namespace symmesh
