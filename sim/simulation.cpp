#include "sim/simulation.hpp"

#include <sys/resource.h>

#include <algorithm>
#include <chrono>
#include <fstream>
#include <simgrid/Exception.hpp>
#include <simgrid/s4u/Actor.hpp>
#include <simgrid/s4u/Engine.hpp>
#include <simgrid/s4u/Mailbox.hpp>
#include <string>

#include "core/errors.hpp"
#include "sim/compute_model.hpp"
#include "sim/platform_builder.hpp"

namespace symmesh::sim {

namespace sg4 = simgrid::s4u;

namespace {

double cpu_seconds() {
  rusage usage{};
  getrusage(RUSAGE_SELF, &usage);
  return static_cast<double>(usage.ru_utime.tv_sec + usage.ru_stime.tv_sec) +
         1e-6 * static_cast<double>(usage.ru_utime.tv_usec + usage.ru_stime.tv_usec);
}

// A "VmRSS:" / "VmHWM:" line of /proc/self/status, in bytes (0 when unavailable).
int64_t proc_status_bytes(const std::string& key) {
  std::ifstream status("/proc/self/status");
  std::string word;
  while (status >> word)
    if (word == key) {
      int64_t kib = 0;
      status >> kib;
      return kib * 1024;
    }
  return 0;
}

}  // namespace

Simulation::Simulation(const Program& program, const ClusterSpec& cluster,
                       const SimOptions& options, std::vector<sg4::Host*> hosts)
    : program_(program),
      cluster_(cluster),
      options_(options),
      hosts_(std::move(hosts)),
      memory_(program, options.carry_data),
      waits_([this](const WaitSite& site) { return blocked_at(site.rank, site.stream, *site.op); },
             [this](std::vector<BlockedStream> blocked) { deadlock_ = std::move(blocked); }),
      events_(program.event_count()),
      live_streams_(program.world_size(), 0),
      anchors_(program.world_size()),
      label_spans_(program) {
  for (int rank = 0; rank < program.world_size(); ++rank) {
    const auto& streams = program.streams(rank);
    for (size_t s = 0; s < streams.size(); ++s)
      for (const StreamOp& op : streams[s].ops)
        if (op.kind() == StreamOp::Kind::record_event)
          events_.at(op.event()).stream = static_cast<int>(s);
  }
}

// The transport of one route (sender → receiver). A put to another rank is a comm on the
// route's mailbox, whose permanent receiver is the receiving rank's anchor (below): the comm
// starts the moment it is put, flows to the anchor's host, and waits in the mailbox's done
// list once delivered, until the sender takes it out. Why not Comm::sendto (a host-to-host
// comm): SimGrid 3.32 detaches those and keeps every one in flight in a single list that it
// scans linearly as each finishes, which made a 1,024-GPU ring spend a sixth of its time in
// that scan. Made before the run, for every route the program uses: made lazily, a stream
// would yield inside the making (a simcall) and another could find it half made.
void Simulation::make_route_mailboxes() {
  for (int rank = 0; rank < program_.world_size(); ++rank)
    for (const Stream& s : program_.streams(rank))
      for (const StreamOp& op : s.ops) {
        if (op.kind() != StreamOp::Kind::put_signal && op.kind() != StreamOp::Kind::signal)
          continue;
        const int receiver = program_.peer_rank_of(op);
        if (receiver == rank) continue;
        Route& route = signals_.route(rank, receiver);
        if (route.mailbox) continue;
        std::string name = "route ";  // append(): GCC 12 warns falsely on "a" + string
        name.append(std::to_string(rank)).append(">").append(std::to_string(receiver));
        route.mailbox = sg4::Mailbox::by_name(name);
        route.mailbox->set_receiver(anchor(receiver));
      }
}

// A rank's anchor: a daemon actor on its host that sleeps until the last stream ends, the
// permanent receiver of the routes into the rank. Not one of the rank's stream actors:
// those suspend themselves while they wait, and SimGrid starts a comm suspended when its
// receiver actor is suspended (and nothing would resume it).
sg4::ActorPtr Simulation::anchor(int rank) {
  sg4::ActorPtr& a = anchors_.at(rank);
  if (!a) {
    a = sg4::Actor::create("anchor" + std::to_string(rank), hosts_.at(rank),
                           [] { sg4::this_actor::sleep_for(1e300); });
    a->daemonize();
  }
  return a;
}

void Simulation::spawn_actors() {
  make_route_mailboxes();
  find_library_collectives();
  for (int rank = 0; rank < program_.world_size(); ++rank) {
    const auto& streams = program_.streams(rank);
    for (size_t s = 0; s < streams.size(); ++s) {
      // An empty stream (every stream of a folded rank, core/replica_folding.hpp) has
      // nothing to run: no actor, whose stack would cost a mapping for nothing.
      if (streams[s].ops.empty()) continue;
      const int stream = static_cast<int>(s);
      waits_.actor_started();
      ++live_streams_[rank];
      std::string name = "r";  // built with append(): GCC 12 warns falsely on "r" + string
      name.append(std::to_string(rank)).append(".").append(streams[s].name);
      sg4::Actor::create(name, hosts_.at(rank), [this, rank, stream] { run_stream(rank, stream); });
    }
  }
}

void Simulation::run_stream(int rank, int stream) {
  const auto& ops = program_.streams(rank)[stream].ops;
  StreamLinks links;
  bool finished = false;
  try {
    for (size_t i = 0; i < ops.size(); ++i) {
      if (waits_.aborted()) throw RunAborted{};
      const double start = sg4::Engine::get_clock();
      if (const auto [run, count] = library_run_at(rank, stream, static_cast<int>(i)); run) {
        // The whole span is one NCCL call: timed and labelled as its first op.
        run_library_collective(rank, stream, static_cast<int>(i), *run);
        const double end = sg4::Engine::get_clock();
        const CollectiveRecord& record = program_.collectives()[run->record];
        label_spans_.add(rank, stream, static_cast<int>(i), start, end);
        if (options_.record_timeline)
          timeline_.push_back(
              {rank, stream, static_cast<int>(i), count, start, end, record.bytes, run->detail});
        i += count - 1;
        continue;
      }
      const int64_t bytes = execute(rank, stream, ops[i], links);
      const double end = sg4::Engine::get_clock();
      label_spans_.add(rank, stream, static_cast<int>(i), start, end);
      if (options_.record_timeline)
        timeline_.push_back({rank, stream, static_cast<int>(i), 1, start, end, bytes, -1});
    }
    finished = true;
  } catch (const RunAborted&) {
  } catch (const simgrid::ForcefulKillException&) {
    --live_streams_[rank];
    waits_.actor_finished();
    throw;  // SimGrid is unwinding a killed actor; it must not survive
  } catch (...) {
    fail(std::current_exception());
  }
  if (finished) makespan_s_ = std::max(makespan_s_, sg4::Engine::get_clock());
  --live_streams_[rank];
  waits_.actor_finished();
}

void Simulation::fail(std::exception_ptr error) {
  if (!error_) error_ = std::move(error);
  waits_.abort_all();
}

int64_t Simulation::execute(int rank, int stream, const StreamOp& op, StreamLinks& links) {
  switch (op.kind()) {
    case StreamOp::Kind::put_signal:
    case StreamOp::Kind::signal:
      return put_signal(rank, op, links);
    case StreamOp::Kind::wait_signal:
      wait_signal(rank, stream, op, links);
      return 0;
    case StreamOp::Kind::matmul:
    case StreamOp::Kind::reduce:
    case StreamOp::Kind::copy:
    case StreamOp::Kind::tensor_op:
      return compute(rank, op);
    case StreamOp::Kind::record_event:
      record_event(op);
      return 0;
    case StreamOp::Kind::wait_event:
      wait_event(rank, stream, op);
      return 0;
    case StreamOp::Kind::barrier:
      barrier(rank, stream, op);
      return 0;
    case StreamOp::Kind::free:
      free_buffer(rank, op);
      return 0;
    case StreamOp::Kind::get:
      return get(rank, op);
  }
  throw InvalidArgument("unknown op kind " + std::to_string(static_cast<int>(op.kind())),
                        "simulation", rank);
}

RunResult Simulation::collect() {
  if (error_) std::rethrow_exception(error_);
  if (deadlock_) throw DeadlockError(*deadlock_);
  RunResult result;
  result.makespan_s = makespan_s_;
  result.timeline = std::move(timeline_);
  result.label_spans = label_spans_.spans();
  result.details = library_details_;
  for (int rank = 0; rank < program_.world_size(); ++rank)
    result.peak_memory_bytes.push_back(memory_.peak_bytes(rank));
  result.hazards = hazards_;
  if (options_.carry_data)
    for (const OutputRequest& out : program_.outputs()) {
      memory_.check_live(out.rank, out.range, out.name, "output");
      const unsigned char* p = memory_.bytes(out.rank, out.range);
      result.outputs.push_back(
          {out.name, out.rank, std::vector<unsigned char>(p, p + out.range.size_bytes)});
    }
  signals_.for_each_pair([&](int group, int sender, int receiver, int signal, const SignalPair& p) {
    if (p.delivered > p.consumed)
      result.warnings.push_back(
          "rank " + std::to_string(receiver) + " left " + std::to_string(p.delivered - p.consumed) +
          " of " + std::to_string(p.delivered) + " signals from rank " + std::to_string(sender) +
          " on group " + std::to_string(group) +
          (signal ? " (signal " + std::to_string(signal) + ")" : "") + " unconsumed");
  });
  if (crossed_credits_ > 0)
    result.warnings.push_back(
        std::to_string(crossed_credits_) + " wait_signal" + (crossed_credits_ == 1 ? "" : "s") +
        " took a signal that came with a put into another buffer of the same group (first: " +
        first_crossed_credit_ +
        "): signal counters are per (group, sender, receiver, signal index) on NCCL too, so such "
        "a wait may read its buffer before the put meant for it lands; give operations that "
        "can run at once on one group different signal indices");
  std::sort(result.warnings.begin(), result.warnings.end());
  return result;
}

RunResult simulate_in_this_process(const Program& program, const ClusterSpec& cluster,
                                   const SimOptions& options) {
  options.validate();
  cluster.validate();
  if (program.world_size() > cluster.num_gpus())
    throw InvalidArgument("the program has " + std::to_string(program.world_size()) +
                              " ranks but the cluster only " + std::to_string(cluster.num_gpus()) +
                              " GPUs",
                          "simulation");
  if (options.carry_data && program.folding().folds())
    throw InvalidArgument("a Program that folds replicas (core/replica_folding.hpp) holds no "
                          "folded rank's ops, so it carries no data: emulate it unfolded",
                          "simulation");
  // A dtype the cluster has no peak for is a clear error before anything runs.
  for (int rank = 0; rank < program.world_size(); ++rank)
    for (const Stream& s : program.streams(rank))
      for (const StreamOp& op : s.ops)
        if (op.kind() == StreamOp::Kind::matmul)
          peak_flops_per_s(cluster.gpu, program.matmul_of(op).dtype);
        else if (op.kind() == StreamOp::Kind::tensor_op &&
                 !program.tensor_op_of(op).cost.products.empty())
          peak_flops_per_s(cluster.gpu, program.tensor_op_of(op).dtype);

  // Reset the peak-RSS mark (what a forked child inherits says nothing about this run).
  std::ofstream("/proc/self/clear_refs") << "5";
  const int64_t rss_at_start = proc_status_bytes("VmRSS:");
  const auto wall_start = std::chrono::steady_clock::now();
  const double cpu_start = cpu_seconds();
#ifdef SYMMESH_SANITIZE
  // AddressSanitizer cannot follow SimGrid's default stack-switching contexts (an exception
  // thrown inside an actor is reported as stack-use-after-scope: google/sanitizers#189);
  // one system thread per actor is SimGrid's sanitizer-friendly factory. It is read when the
  // engine starts, so it goes on the command line.
  std::string arg0 = "symmesh-sim", quiet = "--log=xbt_cfg.thres:warning",
              factory = "--cfg=contexts/factory:thread";
  char* args[] = {arg0.data(), quiet.data(), factory.data(), nullptr};
  int arg_count = 3;
  sg4::Engine engine(&arg_count, args);
#else
  sg4::Engine engine("symmesh-sim");
#endif
  configure_network_model();
  Simulation simulation(program, cluster, options, build_platform(cluster));
  simulation.spawn_actors();
  engine.run();
  RunResult result = simulation.collect();
  result.backend_wall_s =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - wall_start).count();
  result.backend_cpu_s = cpu_seconds() - cpu_start;
  result.backend_memory_bytes = std::max<int64_t>(0, proc_status_bytes("VmHWM:") - rss_at_start);
  return result;
}

}  // namespace symmesh::sim
