// The ops of one stream, executed by its actor (see sim/simulation.hpp).
#include <cstring>
#include <memory>
#include <simgrid/s4u/Actor.hpp>
#include <simgrid/s4u/Comm.hpp>
#include <simgrid/s4u/Engine.hpp>

#include "core/errors.hpp"
#include "sim/compute_model.hpp"
#include "sim/emulated_ops.hpp"
#include "sim/platform_builder.hpp"
#include "sim/simulation.hpp"

namespace symmesh::sim {
namespace {

namespace sg4 = simgrid::s4u;

int64_t pair_key(int a, int b) {
  return (static_cast<int64_t>(a) << 32) | static_cast<uint32_t>(b);
}

// The last byte a strided copy touches through `stride` / `plane_stride`, plus one.
int64_t copy_extent(const CopyWork& w, int64_t plane_stride, int64_t stride) {
  if (w.bytes() <= 0) return 0;
  return (w.planes - 1) * plane_stride + (w.rows - 1) * stride + w.row_bytes;
}

}  // namespace

void Simulation::busy_for(double duration_s) {
  if (duration_s > 0) sg4::this_actor::execute(duration_s * kHostFlopsPerS);
}

// put_signal: the sender's stream is busy for the transfer (a flow between the two GPUs,
// or a local copy for a self-put) and continues when it completes; the receiver sees the
// bytes and then the signal when the put is delivered (sim/one_sided_state.hpp).
int64_t Simulation::put_signal(int rank, const StreamOp& op) {
  const int receiver = program_.group(op.handle.group).ranks.at(op.peer);
  memory_.check_live(rank, op.src, "the source of put_signal '" + op.label.name + "'");
  memory_.check_live(rank, op.dst, "put_signal '" + op.label.name + "'");
  const int64_t bytes = op.src.size_bytes;
  const uint64_t ticket = signals_.open_ticket(rank, receiver);
  if (receiver == rank)
    busy_for(local_copy_duration_s(cluster_.gpu, bytes));
  else
    sg4::Comm::sendto(hosts_[rank], hosts_[receiver], static_cast<uint64_t>(bytes));

  // A put delivered later (behind an earlier one to the same peer) reads a snapshot of its
  // source taken now: the sender may reuse the source as soon as its put completes.
  auto staged = std::make_shared<std::vector<unsigned char>>();
  signals_.complete_ticket(
      rank, receiver, ticket,
      [this, rank, receiver, &op, staged] {
        deliver(rank, receiver, op, staged->empty() ? nullptr : staged->data());
      },
      [&] {
        if (memory_.carries_data() && bytes > 0) {
          const unsigned char* src = memory_.bytes(rank, op.src, "put_signal source");
          staged->assign(src, src + bytes);
        }
      });
  return bytes;
}

void Simulation::deliver(int sender, int receiver, const StreamOp& op,
                         const unsigned char* staged) {
  const int handle = op.handle.id;
  if (memory_.is_freed(receiver, handle))
    throw InvalidArgument("use after free: put_signal '" + op.label.name + "' from rank " +
                              std::to_string(sender) + " lands on rank " +
                              std::to_string(receiver) + "'s copy of symmetric buffer " +
                              std::to_string(handle) + ", which rank " + std::to_string(receiver) +
                              " has already freed",
                          "simulation", sender);
  const int64_t bytes = op.src.size_bytes;
  if (memory_.carries_data() && bytes > 0) {
    unsigned char* dst = memory_.bytes(receiver, op.dst, "put_signal destination");
    const unsigned char* src = staged ? staged : memory_.bytes(sender, op.src, "put_signal source");
    std::memmove(dst, src, static_cast<size_t>(bytes));
  }
  SignalPair& pair = signals_.pair(handle, sender, receiver);
  ++pair.delivered;  // bytes first, then the signal
  for (Hazard& h : hazard_tracker_.on_delivery(receiver, handle, sender, pair.delivered,
                                               op.dst.offset_bytes, op.dst.offset_bytes + bytes,
                                               op.label.name, sg4::Engine::get_clock())) {
    if (options_.hazards_are_errors) throw HazardError(h.to_string(), "simulation", receiver);
    hazards_.push_back(std::move(h));
  }
  waits_.wake({WaitKey::Kind::signal, handle, sender, receiver});
}

// wait_signal: block until (peer → me) has delivered more signals than I consumed, then
// consume one. Checking and consuming happen without yielding, so two streams of one rank
// waiting on the same pair never take the same credit.
void Simulation::wait_signal(int rank, int stream, const StreamOp& op) {
  memory_.check_live(rank, op.handle.whole(), "wait_signal '" + op.label.name + "'");
  const int sender = program_.group(op.handle.group).ranks.at(op.peer);
  SignalPair& pair = signals_.pair(op.handle.id, sender, rank);
  const std::function<BlockedStream()> describe = [&, this] {
    return blocked_at(rank, stream, op);
  };
  waits_.block_until(
      {WaitKey::Kind::signal, op.handle.id, sender, rank},
      [&pair] { return pair.delivered > pair.consumed; }, describe);
  ++pair.consumed;
  hazard_tracker_.on_consumed(rank, op.handle.id, sender, pair.consumed);
}

int64_t Simulation::compute(int rank, const StreamOp& op) {
  const bool data = memory_.carries_data();
  switch (op.kind) {
    case StreamOp::Kind::matmul: {
      const MatmulWork& w = op.matmul;
      memory_.check_live(rank, w.a, "matmul a");
      memory_.check_live(rank, w.b, "matmul b");
      memory_.check_live(rank, w.c, "matmul c");
      busy_for(matmul_duration_s(cluster_.gpu, w));
      if (data)
        emulate_matmul(w, memory_.bytes(rank, w.a, "matmul a"),
                       memory_.bytes(rank, w.b, "matmul b"), memory_.bytes(rank, w.c, "matmul c"));
      return static_cast<int64_t>(matmul_bytes_moved(w));
    }
    case StreamOp::Kind::reduce: {
      const ReduceWork& w = op.reduce;
      memory_.check_live(rank, w.dst, "reduce dst");
      memory_.check_live(rank, w.src, "reduce src");
      busy_for(reduce_duration_s(cluster_.gpu, w));
      if (data)
        emulate_reduce(w, memory_.bytes(rank, w.dst, "reduce dst"),
                       memory_.bytes(rank, w.src, "reduce src"));
      return 3 * w.elements * element_size_bytes(w.dtype);
    }
    default: {
      const CopyWork& w = op.copy;
      memory_.check_live(rank, w.dst, "copy dst");
      memory_.check_live(rank, w.src, "copy src");
      if (copy_extent(w, w.src_plane_stride_bytes, w.src_stride_bytes) > w.src.size_bytes ||
          copy_extent(w, w.dst_plane_stride_bytes, w.dst_stride_bytes) > w.dst.size_bytes)
        throw InvalidArgument("strided copy '" + op.label.name + "' reaches beyond its ranges",
                              "simulation", rank);
      busy_for(copy_duration_s(cluster_.gpu, w));
      if (data)
        emulate_copy(w, memory_.bytes(rank, w.dst, "copy dst"),
                     memory_.bytes(rank, w.src, "copy src"));
      return 2 * w.bytes();
    }
  }
}

void Simulation::record_event(const StreamOp& op) {
  events_.at(op.event).recorded = true;
  waits_.wake({WaitKey::Kind::event, op.event, 0, 0});
}

void Simulation::wait_event(int rank, int stream, const StreamOp& op) {
  const EventSource& source = events_.at(op.event);
  const std::function<BlockedStream()> describe = [&, this] {
    return blocked_at(rank, stream, op);
  };
  waits_.block_until(
      {WaitKey::Kind::event, op.event, 0, 0}, [&source] { return source.recorded; }, describe);
}

// barrier: a member's k-th barrier on a group meets every other member's k-th one.
void Simulation::barrier(int rank, int stream, const StreamOp& op) {
  const int size = static_cast<int>(program_.group(op.group).ranks.size());
  const int round = barrier_rounds_[pair_key(rank, op.group)]++;
  int& arrived = barrier_arrived_[pair_key(op.group, round)];
  ++arrived;
  const WaitKey key{WaitKey::Kind::barrier, op.group, round, 0};
  waits_.wake(key);
  const std::function<BlockedStream()> describe = [&, this] {
    return blocked_at(rank, stream, op);
  };
  waits_.block_until(
      key, [&arrived, size] { return arrived >= size; }, describe);
}

void Simulation::free_buffer(int rank, const StreamOp& op) {
  memory_.free_symmetric(rank, op.handle.id);
  hazard_tracker_.on_free(rank, op.handle.id);
}

}  // namespace symmesh::sim
