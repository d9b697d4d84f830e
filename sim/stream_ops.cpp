// The ops of one stream, executed by its actor (see sim/simulation.hpp).
#include <cstring>
#include <memory>
#include <simgrid/s4u/Actor.hpp>
#include <simgrid/s4u/Comm.hpp>
#include <simgrid/s4u/Engine.hpp>
#include <simgrid/s4u/Mailbox.hpp>

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
// bytes and then the signal when the put is delivered (sim/one_sided_state.hpp). A signal
// (ncclSignal) is a put of no bytes: it pays the route's latency and keeps its place in
// the route's order, so it too implies every earlier put of the route is delivered.
int64_t Simulation::put_signal(int rank, const StreamOp& op, StreamLinks& links) {
  const bool has_data = op.kind() == StreamOp::Kind::put_signal;
  const int group = program_.group_of(op);
  if (group != links.put_group || op.peer() != links.put_peer ||
      op.signal_index() != links.put_signal) {
    links.put_group = group;
    links.put_peer = op.peer();
    links.put_signal = op.signal_index();
    links.receiver = program_.group(group).ranks.at(op.peer());
    links.route = &signals_.route(rank, links.receiver);
    links.put_pair = &signals_.pair(group, rank, links.receiver, links.put_signal);
  }
  const int receiver = links.receiver;
  Route& route = *links.route;
  SignalPair& pair = *links.put_pair;
  int64_t bytes = 0;
  if (has_data) {
    const PutSignalArgs& put = op.put();
    memory_.check_live(rank, put.src, name_of(op), "the source of put_signal");
    memory_.check_live(rank, put.dst(), name_of(op), "put_signal");
    bytes = put.src.size_bytes;
  }
  const uint64_t ticket = OneSidedState::open_ticket(route);
  if (receiver == rank) {
    busy_for(local_copy_duration_s(cluster_.gpu, bytes));
  } else {
    static int payload = 0;  // a comm must carry a pointer; only its simulated size matters
    route.mailbox->put_init(&payload, static_cast<uint64_t>(bytes))->wait();
    // Take the delivered comms out of the done list, oldest first; one still in flight
    // (another stream's earlier put on this route) stops it, and its sender drains later.
    while (route.mailbox->ready()) {
      void* taken = nullptr;
      route.mailbox->get_init()->set_dst_data(&taken, sizeof taken)->wait();
    }
  }

  if (OneSidedState::finish_ticket(route, ticket)) {
    deliver(rank, receiver, op, pair, nullptr);
    OneSidedState::drain(route);
  } else {
    // Delivered later, behind an earlier put to the same peer: snapshot the source now,
    // since the sender may reuse it as soon as its put completes.
    auto staged = std::make_shared<std::vector<unsigned char>>();
    if (memory_.carries_data() && bytes > 0) {
      const unsigned char* src = memory_.bytes(rank, op.put().src);
      staged->assign(src, src + bytes);
    }
    OneSidedState::park(route, ticket, [this, rank, receiver, &op, &pair, staged] {
      deliver(rank, receiver, op, pair, staged->empty() ? nullptr : staged->data());
    });
  }
  return bytes;
}

void Simulation::deliver(int sender, int receiver, const StreamOp& op, SignalPair& pair,
                         const unsigned char* staged) {
  if (op.kind() == StreamOp::Kind::signal) {
    ++pair.delivered;
    pair.handles.push_back(-1);
    waits_.wake(pair.waiters);
    return;
  }
  const PutSignalArgs& put = op.put();
  const int handle = put.handle;
  if (memory_.is_freed(receiver, handle))
    throw InvalidArgument("use after free: put_signal '" + name_of(op) + "' from rank " +
                              std::to_string(sender) + " lands on rank " +
                              std::to_string(receiver) + "'s copy of symmetric buffer " +
                              std::to_string(handle) + ", which rank " + std::to_string(receiver) +
                              " has already freed",
                          "simulation", sender);
  const int64_t bytes = put.src.size_bytes;
  if (memory_.carries_data() && bytes > 0) {
    unsigned char* dst = memory_.bytes(receiver, put.dst());
    const unsigned char* src = staged ? staged : memory_.bytes(sender, put.src);
    std::memmove(dst, src, static_cast<size_t>(bytes));
  }
  ++pair.delivered;  // bytes first, then the signal
  pair.handles.push_back(handle);
  if (bytes > 0) {
    for (Hazard& h : hazard_tracker_.on_delivery(
             receiver, handle, sender, pair.delivered, put.dst_offset_bytes,
             put.dst_offset_bytes + bytes, &name_of(op), sg4::Engine::get_clock(), pair.pending)) {
      if (options_.hazards_are_errors) throw HazardError(h.to_string(), "simulation", receiver);
      hazards_.push_back(std::move(h));
    }
  }
  waits_.wake(pair.waiters);
}

// wait_signal: block until (peer → me) of the group and signal index has delivered more
// signals than I consumed, then consume one — whichever buffer of the group the signals
// came with. Checking and consuming happen without yielding, so two streams of one rank
// waiting on the same counter never take the same credit.
void Simulation::wait_signal(int rank, int stream, const StreamOp& op, StreamLinks& links) {
  const WaitSignalArgs& wait = op.wait();
  if (wait.handle >= 0)
    memory_.check_live(rank, program_.symmetric(wait.handle).whole(), name_of(op), "wait_signal");
  if (wait.group != links.wait_group || wait.peer != links.wait_peer ||
      wait.signal != links.wait_signal) {
    links.wait_group = wait.group;
    links.wait_peer = wait.peer;
    links.wait_signal = wait.signal;
    links.sender = program_.group(wait.group).ranks.at(wait.peer);
    links.wait_pair = &wait_pair(rank, wait.group, links.sender, wait.signal);
  }
  SignalPair& pair = *links.wait_pair;
  waits_.block_until(
      pair.waiters, [&pair] { return pair.delivered > pair.consumed; },
      WaitSite{rank, stream, &op});
  ++pair.consumed;
  const int32_t came_with = pair.handles.front();
  pair.handles.pop_front();
  if (wait.handle >= 0 && came_with >= 0 && came_with != wait.handle) {
    if (crossed_credits_++ == 0)
      first_crossed_credit_ = "rank " + std::to_string(rank) + "'s wait_signal '" + name_of(op) +
                              "' on symmetric buffer " + std::to_string(wait.handle) +
                              " took the signal of a put from rank " +
                              std::to_string(links.sender) + " into buffer " +
                              std::to_string(came_with);
  }
  hazard_tracker_.on_consumed(pair.consumed, pair.pending);
}

// The counter a wait of `receiver` on `sender` reads. From a folded sender p it is, by the
// replicas' symmetry (core/replica_folding.hpp), the counter of the put that p's mirror
// makes to `receiver` moved back by p's replica: the n-th put p makes to the receiver is
// the n-th the mirror makes there, at the same time.
SignalPair& Simulation::wait_pair(int receiver, GroupId group, int sender, int signal) {
  const ReplicaFolding& folding = program_.folding();
  if (program_.holds(sender)) return signals_.pair(group, sender, receiver, signal);
  const int mirror = folding.mirror(sender);
  const int image = folding.shifted(receiver, -folding.replica_of(sender));
  const Group& members = program_.group(group);
  if (members.index_of(mirror) < 0 || members.index_of(image) < 0)
    throw InvalidArgument("rank " + std::to_string(receiver) + " waits on folded rank " +
                              std::to_string(sender) + " of a group that does not hold its " +
                              "copy in replica 0 (rank " + std::to_string(mirror) + " → " +
                              std::to_string(image) +
                              "): only groups a translation of the replicas maps onto "
                              "themselves can be folded",
                          "simulation", receiver);
  return signals_.pair(group, mirror, image, signal);
}

// get: the bytes flow from the peer's GPU to the reader's (Comm::sendto: no actor on the
// peer takes part, as a load through the peer's LSA pointer needs none), or are a local
// copy when the peer is the reader; the reader's stream is busy until they have arrived.
// They are read from the peer's copy when the transfer ends. A get neither bumps nor
// consumes a signal, and the hazard tracker does not look at it.
int64_t Simulation::get(int rank, const StreamOp& op) {
  const GetArgs& get = op.get();
  const int peer = program_.peer_rank_of(op);
  const BufferRef src = get.src();
  memory_.check_live(rank, get.dst, name_of(op), "the destination of get");
  memory_.check_live(peer, src, name_of(op), "the source of get");
  const int64_t bytes = get.dst.size_bytes;
  if (peer == rank)
    busy_for(local_copy_duration_s(cluster_.gpu, bytes));
  else
    sg4::Comm::sendto(hosts_.at(peer), hosts_.at(rank), static_cast<uint64_t>(bytes));
  if (memory_.carries_data() && bytes > 0) {
    // The peer may have freed its copy meanwhile (its free is on its own streams).
    memory_.check_live(peer, src, name_of(op), "the source of get");
    std::memmove(memory_.bytes(rank, get.dst), memory_.bytes(peer, src),
                 static_cast<size_t>(bytes));
  }
  return bytes;
}

int64_t Simulation::compute(int rank, const StreamOp& op) {
  const bool data = memory_.carries_data();
  switch (op.kind()) {
    case StreamOp::Kind::matmul: {
      const MatmulWork& w = program_.matmul_of(op);
      memory_.check_live(rank, w.a, name_of(op), "matmul (a)");
      memory_.check_live(rank, w.b, name_of(op), "matmul (b)");
      memory_.check_live(rank, w.c, name_of(op), "matmul (c)");
      const bool has_bias = w.bias.id >= 0;
      if (has_bias) memory_.check_live(rank, w.bias, name_of(op), "matmul (bias)");
      busy_for(matmul_duration_s(cluster_.gpu, w));
      if (data)
        emulate_matmul(w, memory_.bytes(rank, w.a), memory_.bytes(rank, w.b),
                       memory_.bytes(rank, w.c), has_bias ? memory_.bytes(rank, w.bias) : nullptr);
      return static_cast<int64_t>(matmul_bytes_moved(w));
    }
    case StreamOp::Kind::reduce: {
      const ReduceWork w = op.reduce();
      memory_.check_live(rank, w.dst, name_of(op), "reduce (dst)");
      memory_.check_live(rank, w.src, name_of(op), "reduce (src)");
      busy_for(reduce_duration_s(cluster_.gpu, w));
      if (data) emulate_reduce(w, memory_.bytes(rank, w.dst), memory_.bytes(rank, w.src));
      return 3 * w.elements * element_size_bytes(w.dtype);
    }
    case StreamOp::Kind::tensor_op: {
      const TensorOpWork& w = program_.tensor_op_of(op);
      std::vector<const unsigned char*> inputs;
      for (int k = 0; k < w.inputs; ++k) {
        memory_.check_live(rank, w.in[k], name_of(op), "tensor op (input)");
        if (data) inputs.push_back(memory_.bytes(rank, w.in[k]));
      }
      memory_.check_live(rank, w.out, name_of(op), "tensor op (output)");
      busy_for(tensor_op_duration_s(cluster_.gpu, w.dtype, w.cost));
      if (data) emulate_tensor_op(w, inputs, memory_.bytes(rank, w.out));
      return static_cast<int64_t>(w.cost.bytes);
    }
    default: {
      const CopyWork& w = program_.copy_of(op);
      memory_.check_live(rank, w.dst, name_of(op), "copy (dst)");
      memory_.check_live(rank, w.src, name_of(op), "copy (src)");
      if (copy_extent(w, w.src_plane_stride_bytes, w.src_stride_bytes) > w.src.size_bytes ||
          copy_extent(w, w.dst_plane_stride_bytes, w.dst_stride_bytes) > w.dst.size_bytes)
        throw InvalidArgument("strided copy '" + name_of(op) + "' reaches beyond its ranges",
                              "simulation", rank);
      busy_for(copy_duration_s(cluster_.gpu, w));
      if (data) emulate_copy(w, memory_.bytes(rank, w.dst), memory_.bytes(rank, w.src));
      return 2 * w.bytes();
    }
  }
}

void Simulation::record_event(const StreamOp& op) {
  EventSource& source = events_.at(op.event());
  source.recorded = true;
  waits_.wake(source.waiters);
}

void Simulation::wait_event(int rank, int stream, const StreamOp& op) {
  EventSource& source = events_.at(op.event());
  waits_.block_until(
      source.waiters, [&source] { return source.recorded; }, WaitSite{rank, stream, &op});
}

// barrier: a member's k-th barrier on a group meets every other member's k-th one.
void Simulation::barrier(int rank, int stream, const StreamOp& op) {
  // Folded members reach it when their mirrors do: the held ones are the whole meeting.
  const int size = program_.held_members(op.group());
  const int round = barrier_rounds_[pair_key(rank, op.group())]++;
  BarrierRound& state = barrier_arrived_[pair_key(op.group(), round)];
  ++state.arrived;
  waits_.wake(state.waiters);
  waits_.block_until(
      state.waiters, [&state, size] { return state.arrived >= size; }, WaitSite{rank, stream, &op});
}

void Simulation::free_buffer(int rank, const StreamOp& op) {
  memory_.free_symmetric(rank, op.handle());
  hazard_tracker_.on_free(rank, op.handle());
}

}  // namespace symmesh::sim
