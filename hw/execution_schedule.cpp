// Per rank: the order in which the host enqueues the Program's ops on the CUDA streams,
// and each launch with its arguments resolved. CUDA has no "wait for an event that will be
// recorded later" (cudaStreamWaitEvent on an unrecorded event returns at once), so a
// wait_event is enqueued only after its record_event; a cycle is an error here.
#include <algorithm>
#include <map>
#include <set>

#include "core/errors.hpp"
#include "hw/execution_plan.hpp"
#include "hw/native_collectives.hpp"

namespace symmesh::hw::detail {
namespace {

class RankScheduler {
 public:
  RankScheduler(const Program& program, ExecutionPlan& plan, int rank)
      : program_(program), plan_(plan), rank_(rank), out_(plan.ranks.at(rank)) {}

  void run() {
    const auto& streams = program_.streams(rank_);
    out_.streams.clear();
    for (const auto& s : streams) out_.streams.push_back({s.name, false, 0});
    std::vector<std::map<int, NativeSegment>> natives(streams.size());
    for (const NativeSegment& seg : native_segments(program_, rank_, plan_.options.collectives))
      natives[seg.stream][seg.begin] = seg;

    std::map<EventId, std::pair<int, int>> recorded_at;  // event → (stream, op)
    for (size_t s = 0; s < streams.size(); ++s)
      for (size_t i = 0; i < streams[s].ops.size(); ++i)
        if (streams[s].ops[i].kind() == StreamOp::Kind::record_event)
          recorded_at[streams[s].ops[i].event()] = {static_cast<int>(s), static_cast<int>(i)};

    std::vector<size_t> next(streams.size(), 0);
    std::set<EventId> recorded;
    for (;;) {
      bool progress = false, done = true;
      for (size_t s = 0; s < streams.size(); ++s) {
        const auto& ops = streams[s].ops;
        while (next[s] < ops.size()) {
          const StreamOp& op = ops[next[s]];
          if (op.kind() == StreamOp::Kind::wait_event && !recorded.count(op.event())) break;
          const int index = static_cast<int>(next[s]);
          if (auto it = natives[s].find(index); it != natives[s].end()) {
            emit_native(static_cast<int>(s), it->second);
            next[s] += it->second.count;
          } else {
            emit(static_cast<int>(s), index, op);
            if (op.kind() == StreamOp::Kind::record_event) recorded.insert(op.event());
            ++next[s];
          }
          progress = true;
        }
        done = done && next[s] == ops.size();
      }
      if (done) return;
      if (!progress) throw cycle_error(next, recorded_at);
    }
  }

 private:
  InvalidArgument cycle_error(const std::vector<size_t>& next,
                              const std::map<EventId, std::pair<int, int>>& recorded_at) const {
    const auto& streams = program_.streams(rank_);
    std::string text;
    for (size_t s = 0; s < streams.size(); ++s) {
      if (next[s] >= streams[s].ops.size()) continue;
      const StreamOp& op = streams[s].ops[next[s]];
      const auto [rs, ri] = recorded_at.at(op.event());
      text += (text.empty() ? "" : "; ") + std::string("stream '") + streams[s].name + "' op " +
              std::to_string(next[s]) + " waits for event " + std::to_string(op.event()) +
              ", recorded later by stream '" + streams[rs].name + "' op " + std::to_string(ri);
    }
    return InvalidArgument("the streams wait on each other's events in a cycle: " + text, "hw plan",
                           rank_);
  }

  std::string describe_op(const StreamOp& op) const {
    const OpLabel& label = program_.label_of(op.label());
    return "'" + label.name + "'" + (label.detail.empty() ? "" : " (" + label.detail + ")");
  }

  void check_live(const BufferRef& ref, const StreamOp& op) const {
    if (ref.space == BufferRef::Space::symmetric && ref.id >= 0 && freed_.count(ref.id))
      throw InvalidArgument(describe_op(op) + " uses symmetric buffer " + std::to_string(ref.id) +
                                " after its free (use after free)",
                            "hw plan", rank_);
  }

  DeviceRange resolve(const BufferRef& ref) const {
    DeviceRange out;
    out.size_bytes = ref.size_bytes;
    if (ref.space == BufferRef::Space::local) {
      out.arena = DeviceRange::Arena::local;
      out.offset_bytes = plan_.local_offsets.at(ref.id) + ref.offset_bytes;
    } else {
      const SymmetricPlacement& p = plan_.symmetric.at(ref.id);
      out.arena = DeviceRange::Arena::symmetric;
      out.comm = p.comm;
      out.offset_bytes = p.offset_bytes + ref.offset_bytes;
    }
    return out;
  }

  static void check_matmul_dtype(const MatmulWork& w, const StreamOp& op, int rank,
                                 const std::string& what) {
    switch (w.dtype) {
      case DType::bf16:
      case DType::fp16:
      case DType::fp32:
      case DType::fp64:
        return;
      case DType::fp8_e4m3:
        if (w.m % 16 || w.n % 16 || w.k % 16)
          throw Unsupported(
              what + ": an fp8 matmul needs m, n and k multiples of 16 (cuBLASLt), got " +
                  std::to_string(w.m) + "x" + std::to_string(w.n) + "x" + std::to_string(w.k),
              "hw plan", rank);
        return;
      default:
        break;
    }
    (void)op;
    throw Unsupported(what + ": no GPU matmul for " + to_string(w.dtype) +
                          " (bf16, fp16, fp32, fp64 and fp8_e4m3 are supported; cuBLASLt has no "
                          "e5m2 x e5m2 and symmesh no integer GEMM)",
                      "hw plan", rank);
  }

  Launch base(int stream, int index, const StreamOp& op, Launch::Kind kind) const {
    Launch l;
    l.kind = kind;
    l.stream = stream;
    l.op_index = index;
    (void)op;
    return l;
  }

  void emit(int stream, int index, const StreamOp& op) {
    Launch l;
    switch (op.kind()) {
      case StreamOp::Kind::put_signal:
      case StreamOp::Kind::signal: {
        // A signal (ncclSignal) is a put of no bytes into the comm's counters.
        l = base(stream, index, op, Launch::Kind::put);
        l.comm = plan_.group_comm.at(program_.group_of(op));
        CommPlan& comm = plan_.comms[l.comm];
        l.dst = DeviceRange{DeviceRange::Arena::symmetric, l.comm, 0, 0};
        if (op.kind() == StreamOp::Kind::put_signal) {
          const PutSignalArgs& put = op.put();
          check_live(put.src, op);
          check_live(put.dst(), op);
          l.handle = put.handle;
          l.src = resolve(put.src);
          l.dst = resolve(put.dst());
          l.bytes = put.src.size_bytes;
        }
        l.peer = op.peer();
        l.signal = op.signal_index();
        l.signal_offset_bytes = comm.signal_slot_offset_bytes(l.signal, comm.index_of(rank_));
        l.put_slot = out_.put_slots++;
        comm.one_sided = true;
        break;
      }
      case StreamOp::Kind::wait_signal: {
        const WaitSignalArgs& wait = op.wait();
        if (wait.handle >= 0 && freed_.count(wait.handle))
          check_live(program_.symmetric(wait.handle).whole(), op);
        l = base(stream, index, op, Launch::Kind::wait);
        l.comm = plan_.group_comm.at(wait.group);
        l.peer = wait.peer;
        l.handle = wait.handle;
        l.signal = wait.signal;
        l.signal_offset_bytes =
            plan_.comms[l.comm].signal_slot_offset_bytes(wait.signal, wait.peer);
        l.expected = ++consumed_[{l.comm, wait.signal, wait.peer}];
        plan_.comms[l.comm].one_sided = true;
        ++out_.waits;
        break;
      }
      case StreamOp::Kind::matmul: {
        const MatmulWork& w = program_.matmul_of(op);
        for (const BufferRef* r : {&w.a, &w.b, &w.c}) check_live(*r, op);
        check_matmul_dtype(w, op, rank_, describe_op(op));
        l = base(stream, index, op, Launch::Kind::matmul);
        l.matmul = w;
        l.a = resolve(w.a);
        l.b = resolve(w.b);
        l.c = resolve(w.c);
        if (w.bias.id >= 0) {
          check_live(w.bias, op);
          l.bias = resolve(w.bias);
        }
        const int64_t e = element_size_bytes(w.dtype);
        l.bytes = e * w.batch * (w.m * w.k + w.k * w.n + w.m * w.n * (w.accumulate ? 2 : 1));
        StreamPlan& s = out_.streams[stream];
        s.matmuls = true;
        if (w.dtype == DType::fp8_e4m3) {
          out_.fp8 = true;
          const int64_t scratch = w.batch * (w.k * w.n + 4 * w.m * w.n) + 512;
          s.fp8_scratch_bytes = std::max(s.fp8_scratch_bytes, scratch);
        }
        break;
      }
      case StreamOp::Kind::reduce: {
        const ReduceWork w = op.reduce();
        check_live(w.dst, op);
        check_live(w.src, op);
        l = base(stream, index, op, Launch::Kind::reduce);
        l.reduce = w;
        l.dst = resolve(w.dst);
        l.src = resolve(w.src);
        l.bytes = 3 * w.elements * element_size_bytes(w.dtype);
        break;
      }
      case StreamOp::Kind::copy: {
        const CopyWork& w = program_.copy_of(op);
        check_live(w.dst, op);
        check_live(w.src, op);
        l = base(stream, index, op, Launch::Kind::copy);
        l.copy = w;
        l.dst = resolve(w.dst);
        l.src = resolve(w.src);
        l.bytes = 2 * w.bytes();
        break;
      }
      case StreamOp::Kind::tensor_op:
        // The memory-bound kernels, attention, embedding and loss of a model step are timed
        // and emulated by the simulator only (core/tensor_op.hpp): no GPU kernel runs them yet.
        throw Unsupported(describe_op(op) + ": the hardware backend has no kernel for '" +
                              to_string(program_.tensor_op_of(op).op) +
                              "' yet (tensor ops run in the simulator only)",
                          "hw plan", rank_);
      case StreamOp::Kind::get:
        // A one-sided read (core/program.hpp) runs in the simulator only: no GPU kernel
        // loads through a peer's pointer yet.
        throw Unsupported(describe_op(op) +
                              ": the hardware backend has no get yet (the simulator runs it)",
                          "hw plan", rank_);
      case StreamOp::Kind::record_event:
        l = base(stream, index, op, Launch::Kind::record_event);
        l.event = op.event();
        break;
      case StreamOp::Kind::wait_event:
        l = base(stream, index, op, Launch::Kind::wait_event);
        l.event = op.event();
        break;
      case StreamOp::Kind::barrier: {
        l = base(stream, index, op, Launch::Kind::barrier);
        l.comm = plan_.group_comm.at(op.group());
        CommPlan& comm = plan_.comms[l.comm];
        l.signal_offset_bytes = comm.barrier_slots_offset_bytes;
        l.expected = ++barrier_generation_[l.comm];
        comm.barriers = true;
        break;
      }
      case StreamOp::Kind::free:
        if (!freed_.insert(op.handle()).second)
          throw InvalidArgument(
              "symmetric buffer " + std::to_string(op.handle()) + " is freed twice", "hw plan",
              rank_);
        l = base(stream, index, op, Launch::Kind::free);
        l.handle = op.handle();
        break;
    }
    out_.launches.push_back(std::move(l));
  }

  void emit_native(int stream, const NativeSegment& seg) {
    const auto& ops = program_.streams(rank_)[stream].ops;
    for (int i = seg.begin; i < seg.begin + seg.count; ++i) {
      const StreamOp& op = ops[i];
      if (op.kind() == StreamOp::Kind::put_signal) {
        check_live(op.put().src, op);
        check_live(op.put().dst(), op);
      } else if (op.kind() == StreamOp::Kind::wait_signal && op.wait().handle >= 0) {
        check_live(program_.symmetric(op.wait().handle).whole(), op);
      } else if (op.kind() == StreamOp::Kind::reduce) {
        check_live(op.reduce().dst, op);
        check_live(op.reduce().src, op);
      }
    }
    Launch l;
    l.kind = Launch::Kind::native;
    l.stream = stream;
    l.op_index = seg.begin;
    l.op_count = seg.count;
    l.detail = seg.detail;
    l.comm = plan_.group_comm.at(seg.group);
    l.handle = seg.data_handle;
    plan_.comms[l.comm].native = true;
    const int p = plan_.comms[l.comm].size();
    const int64_t c = seg.chunk_bytes;
    const SymmetricHandle data = program_.symmetric_allocations()[seg.data_handle];
    const SymmetricHandle result = program_.symmetric_allocations()[seg.result_handle];
    const int64_t e = element_size_bytes(seg.dtype);
    NativeCollective& n = l.native;
    n.kind = seg.kind;
    n.dtype = seg.dtype;
    n.average = seg.average;
    switch (seg.kind) {
      case NativeCollective::Kind::all_gather:
        n.send = resolve(data.whole().slice(seg.member_index * c, c));
        n.recv = resolve(data.whole().slice(0, p * c));
        n.count = c;
        n.dtype = DType::int8;
        l.bytes = (p - 1) * c;
        break;
      case NativeCollective::Kind::reduce_scatter:
        n.send = resolve(data.whole().slice(0, p * c));
        n.recv = resolve(data.whole().slice(seg.member_index * c, c));
        n.count = c / e;
        l.bytes = (p - 1) * c;
        break;
      case NativeCollective::Kind::all_reduce:
        n.send = n.recv = resolve(data.whole().slice(0, p * c));
        n.count = p * c / e;
        l.bytes = 2 * (p - 1) * c;
        break;
      case NativeCollective::Kind::all_to_all:
        n.send = resolve(data.whole().slice(0, p * c));
        n.recv = resolve(result.whole().slice(0, p * c));
        n.count = c;
        n.dtype = DType::int8;
        l.bytes = (p - 1) * c;
        break;
    }
    out_.launches.push_back(std::move(l));
  }

  const Program& program_;
  ExecutionPlan& plan_;
  int rank_;
  RankPlan& out_;
  // (comm, signal index, peer) → waits so far
  std::map<std::tuple<int, int, int>, uint64_t> consumed_;
  std::map<int, uint64_t> barrier_generation_;  // comm → barriers so far
  std::set<int> freed_;
};

}  // namespace

void schedule_rank(const Program& program, ExecutionPlan& plan, int rank) {
  RankScheduler(program, plan, rank).run();
}

}  // namespace symmesh::hw::detail
