#include "hw/rank_runtime.hpp"

#include <nccl_device/impl/comm__types.h>

#include <chrono>
#include <thread>

#include "core/errors.hpp"
#include "hw/checks.hpp"

namespace symmesh::hw {
namespace {

ncclDataType_t nccl_type(DType d) {
  switch (d) {
    case DType::bf16:
      return ncclBfloat16;
    case DType::fp16:
      return ncclFloat16;
    case DType::fp32:
      return ncclFloat32;
    case DType::fp64:
      return ncclFloat64;
    case DType::fp8_e4m3:
      return ncclFloat8e4m3;
    case DType::fp8_e5m2:
      return ncclFloat8e5m2;
    case DType::int8:
      return ncclInt8;
    case DType::int32:
      return ncclInt32;
    case DType::int64:
      return ncclInt64;
  }
  return ncclInt8;
}

std::string ranks_text(const std::vector<int>& ranks) {
  std::string out = "[";
  for (size_t i = 0; i < ranks.size(); ++i) out += (i ? ", " : "") + std::to_string(ranks[i]);
  return out + "]";
}

void release(ncclComm_t comm, bool orderly) {
  if (orderly)
    ncclCommDestroy(comm);
  else
    ncclCommAbort(comm);
}

unsigned long long timeout_ns(double seconds) {
  return static_cast<unsigned long long>(seconds * 1e9);
}

}  // namespace

struct RankRuntime::Comm {
  ncclComm_t comm = nullptr;
  bool owned = false;  // a split communicator (the world is destroyed last)
  void* arena = nullptr;
  size_t arena_bytes = 0;
  ncclWindow_t window = nullptr;
  ncclDevComm dev{};
  bool have_dev = false;
  bool lsa = false;  // every member reachable by load/store
};

RankRuntime::RankRuntime(const Program& program, const ExecutionPlan& plan, int rank, int device,
                         Bootstrap& bootstrap, const RunSettings& settings)
    : program_(program),
      plan_(plan),
      mine_(plan.ranks.at(rank)),
      rank_(rank),
      device_(device),
      bootstrap_(bootstrap),
      settings_(settings) {}

RankRuntime::~RankRuntime() {
  teardown();
}

void RankRuntime::agree_or_throw(const std::string& phase, const std::function<void()>& step) {
  std::string failure;
  std::exception_ptr own;
  try {
    step();
  } catch (const std::exception& e) {
    failure = "rank " + std::to_string(rank_) + ": " + e.what();
    own = std::current_exception();
  }
  const std::string first = bootstrap_.agree(rank_, failure);
  if (own) std::rethrow_exception(own);
  if (!first.empty())
    throw StoppedByPeer("stopped during " + phase + " because " + first, "hw", rank_);
}

void RankRuntime::setup(const ncclUniqueId& id) {
  agree_or_throw("device selection", [&] { CUDA_CHECK(cudaSetDevice(device_)); });
  create_comms(id);
  agree_or_throw("memory allocation", [&] { create_arenas(); });
  agree_or_throw("window registration", [&] {
    for (size_t c = 0; c < comms_.size(); ++c) {
      Comm* comm = comms_[c].get();
      if (!comm) continue;
      NCCL_CHECK(ncclCommWindowRegister(comm->comm, comm->arena, comm->arena_bytes, &comm->window,
                                        NCCL_WIN_COLL_SYMMETRIC));
    }
  });
  agree_or_throw("device communicators", [&] {
    for (size_t c = 0; c < comms_.size(); ++c) {
      Comm* comm = comms_[c].get();
      if (!comm) continue;
      const CommPlan& p = plan_.comms[c];
      comm->lsa = ncclTeamLsa(comm->comm).nRanks >= p.size();
      if (!p.one_sided) continue;
      ncclDevCommRequirements requirements{};
      NCCL_CHECK(ncclDevCommCreate(comm->comm, &requirements, &comm->dev));
      comm->have_dev = true;
      comm->lsa = comm->lsa && comm->dev.lsaSize >= p.size();
      if (!comm->lsa)
        throw Unsupported(
            "ranks " + ranks_text(p.ranks) + " exchange put_signal / wait_signal, but only " +
                std::to_string(comm->dev.lsaSize) +
                " of them share a load/store (NVLink) domain with rank " + std::to_string(rank_) +
                "; across nodes that needs GIN (a GIN-capable NIC), which symmesh does not "
                "drive on NCCL 2.28 yet — run collectives with --collectives nccl, and keep "
                "put_signal ops inside a node",
            "hw", rank_);
    }
  });
  agree_or_throw("streams and events", [&] { create_streams(); });
  // Every counter is zero on every rank before any rank may signal.
  agree_or_throw("the start synchronisation", [&] {
    CUDA_CHECK(cudaDeviceSynchronize());
    NCCL_CHECK(ncclAllReduce(block_counters_ + mine_.put_slots, block_counters_ + mine_.put_slots,
                             1, ncclUint32, ncclSum, world_, streams_[0]));
    CUDA_CHECK(cudaStreamSynchronize(streams_[0]));
  });
  healthy_ = true;
}

void RankRuntime::create_comms(const ncclUniqueId& id) {
  // Collective over the world in plan order: every rank calls every split (non-members
  // with NCCL_SPLIT_NOCOLOR), so no rank waits on one that is elsewhere.
  NCCL_CHECK(ncclCommInitRank(&world_, plan_.world_size, id, rank_));
  comms_.clear();
  comms_.resize(plan_.comms.size());
  comms_[0] = std::make_unique<Comm>();
  comms_[0]->comm = world_;
  for (size_t c = 1; c < plan_.comms.size(); ++c) {
    const int index = plan_.comms[c].index_of(rank_);
    ncclComm_t sub = nullptr;
    NCCL_CHECK(ncclCommSplit(world_, index >= 0 ? 0 : NCCL_SPLIT_NOCOLOR, index >= 0 ? index : 0,
                             &sub, nullptr));
    if (index < 0) continue;
    comms_[c] = std::make_unique<Comm>();
    comms_[c]->comm = sub;
    comms_[c]->owned = true;
  }
}

void RankRuntime::create_arenas() {
  for (size_t c = 0; c < comms_.size(); ++c) {
    Comm* comm = comms_[c].get();
    if (!comm) continue;
    comm->arena_bytes = static_cast<size_t>(plan_.comms[c].arena_bytes);
    NCCL_CHECK(ncclMemAlloc(&comm->arena, comm->arena_bytes));
    CUDA_CHECK(cudaMemset(comm->arena, 0, comm->arena_bytes));
  }
  CUDA_CHECK(cudaMalloc(&local_arena_, std::max<int64_t>(mine_.local_arena_bytes, 256)));
  CUDA_CHECK(cudaMemset(local_arena_, 0, std::max<int64_t>(mine_.local_arena_bytes, 256)));
  for (const auto& a : program_.local_allocations()) {
    if (a.rank != rank_ || a.initial.empty()) continue;
    CUDA_CHECK(cudaMemcpy(static_cast<char*>(local_arena_) + plan_.local_offsets[a.id],
                          a.initial.data(), a.initial.size(), cudaMemcpyHostToDevice));
  }
  // One block counter per put, plus one word for the NCCL start synchronisation.
  const size_t counters = sizeof(unsigned int) * (mine_.put_slots + 1);
  CUDA_CHECK(cudaMalloc(reinterpret_cast<void**>(&block_counters_), counters));
  CUDA_CHECK(cudaMemset(block_counters_, 0, counters));
  CUDA_CHECK(cudaMalloc(reinterpret_cast<void**>(&device_error_), sizeof(kernels::DeviceError)));
  CUDA_CHECK(cudaMemset(device_error_, 0, sizeof(kernels::DeviceError)));
}

void RankRuntime::create_streams() {
  const size_t count = std::max<size_t>(mine_.streams.size(), 1);
  for (size_t s = 0; s < count; ++s) {
    cudaStream_t stream = nullptr;
    CUDA_CHECK(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking));
    streams_.push_back(stream);
  }
  program_events_.assign(program_.event_count(), nullptr);
  for (EventId e = 0; e < program_.event_count(); ++e)
    if (program_.event_owner_rank(e) == rank_)
      CUDA_CHECK(cudaEventCreateWithFlags(&program_events_[e], cudaEventDisableTiming));
  CUDA_CHECK(cudaEventCreate(&origin_));
  starts_.assign(mine_.launches.size(), nullptr);
  ends_.assign(mine_.launches.size(), nullptr);
  for (size_t i = 0; i < mine_.launches.size(); ++i) {
    CUDA_CHECK(cudaEventCreate(&starts_[i]));
    CUDA_CHECK(cudaEventCreate(&ends_[i]));
  }
  scratch_.assign(count, {});
  for (size_t s = 0; s < mine_.streams.size(); ++s) {
    const StreamPlan& sp = mine_.streams[s];
    if (!sp.matmuls) continue;
    if (!matmul_) matmul_ = std::make_unique<MatmulRunner>();
    scratch_[s].workspace_bytes = static_cast<size_t>(plan_.options.cublaslt_workspace_bytes);
    if (scratch_[s].workspace_bytes) {
      CUDA_CHECK(cudaMalloc(&scratch_[s].workspace, scratch_[s].workspace_bytes));
      scratch_allocations_.push_back(scratch_[s].workspace);
    }
    if (sp.fp8_scratch_bytes > 0) {
      scratch_[s].fp8_bytes = static_cast<size_t>(sp.fp8_scratch_bytes);
      CUDA_CHECK(cudaMalloc(&scratch_[s].fp8, scratch_[s].fp8_bytes));
      scratch_allocations_.push_back(scratch_[s].fp8);
    }
  }
}

void* RankRuntime::device_pointer(const DeviceRange& range, Comm** comm) const {
  if (range.arena == DeviceRange::Arena::local)
    return static_cast<char*>(local_arena_) + range.offset_bytes;
  Comm* c = comms_.at(range.comm).get();
  if (!c)
    throw BackendError("rank is not a member of communicator " + std::to_string(range.comm), "hw",
                       rank_);
  if (comm) *comm = c;
  return static_cast<char*>(c->arena) + range.offset_bytes;
}

void RankRuntime::enqueue_barrier(Comm& comm, size_t slots_offset, uint64_t generation, int launch,
                                  cudaStream_t stream) {
  if (comm.lsa) {
    kernels::BarrierArgs args;
    args.window = comm.window;
    args.slots_offset = slots_offset;
    int size = 0, me = 0;
    NCCL_CHECK(ncclCommCount(comm.comm, &size));
    NCCL_CHECK(ncclCommUserRank(comm.comm, &me));
    args.size = size;
    args.me = me;
    args.generation = generation;
    args.timeout_ns = timeout_ns(settings_.wait_timeout_s);
    args.error = device_error_;
    args.launch = launch;
    kernels::barrier(args, stream);
  } else {
    // Across nodes: an all-reduce of one word is a barrier (no device timeout; the run's
    // host deadline bounds it).
    unsigned int* word = block_counters_ + mine_.put_slots;
    NCCL_CHECK(ncclAllReduce(word, word, 1, ncclUint32, ncclSum, comm.comm, stream));
  }
}

void RankRuntime::enqueue(const Launch& l, int index, int run) {
  cudaStream_t stream = streams_.at(l.stream);
  const uint64_t base = static_cast<uint64_t>(run) * l.per_run;
  switch (l.kind) {
    case Launch::Kind::put: {
      Comm& comm = *comms_.at(l.comm);
      kernels::PutArgs args;
      args.src = device_pointer(l.src);
      args.window = comm.window;
      args.dst_offset = static_cast<size_t>(l.dst.offset_bytes);
      args.bytes = static_cast<size_t>(l.bytes);
      args.peer = l.peer;
      args.signal_offset = static_cast<size_t>(l.signal_offset_bytes);
      args.block_counter = block_counters_ + l.put_slot;
      kernels::put_signal(args, stream);
      break;
    }
    case Launch::Kind::wait: {
      Comm& comm = *comms_.at(l.comm);
      kernels::WaitArgs args;
      args.slot = reinterpret_cast<const unsigned long long*>(static_cast<char*>(comm.arena) +
                                                              l.signal_offset_bytes);
      args.expected = base + l.expected;
      args.timeout_ns = timeout_ns(settings_.wait_timeout_s);
      args.error = device_error_;
      args.launch = index;
      args.peer = l.peer;
      kernels::wait_signal(args, stream);
      break;
    }
    case Launch::Kind::barrier:
      enqueue_barrier(*comms_.at(l.comm), static_cast<size_t>(l.signal_offset_bytes),
                      base + l.expected, index, stream);
      break;
    case Launch::Kind::matmul: {
      MatmulPointers p;
      p.a = device_pointer(l.a);
      p.b = device_pointer(l.b);
      p.c = device_pointer(l.c);
      if (l.matmul.bias.id >= 0) p.bias = device_pointer(l.bias);
      matmul_->run(l.matmul, p, scratch_.at(l.stream), stream);
      break;
    }
    case Launch::Kind::reduce:
      kernels::reduce(l.reduce.dtype, device_pointer(l.dst), device_pointer(l.src),
                      l.reduce.elements, l.reduce.scale, stream);
      break;
    case Launch::Kind::copy: {
      kernels::CopyArgs args;
      args.dst = device_pointer(l.dst);
      args.src = device_pointer(l.src);
      args.planes = l.copy.planes, args.rows = l.copy.rows, args.row_bytes = l.copy.row_bytes;
      args.src_plane_stride = l.copy.src_plane_stride_bytes;
      args.dst_plane_stride = l.copy.dst_plane_stride_bytes;
      args.src_stride = l.copy.src_stride_bytes;
      args.dst_stride = l.copy.dst_stride_bytes;
      kernels::strided_copy(args, stream);
      break;
    }
    case Launch::Kind::record_event:
      CUDA_CHECK(cudaEventRecord(program_events_.at(l.event), stream));
      break;
    case Launch::Kind::wait_event:
      CUDA_CHECK(cudaStreamWaitEvent(stream, program_events_.at(l.event), 0));
      break;
    case Launch::Kind::free:
      break;
    case Launch::Kind::native: {
      const NativeCollective& n = l.native;
      ncclComm_t comm = comms_.at(l.comm)->comm;
      const void* send = device_pointer(n.send);
      void* recv = device_pointer(n.recv);
      const ncclDataType_t type = nccl_type(n.dtype);
      const size_t count = static_cast<size_t>(n.count);
      const ncclRedOp_t op = n.average ? ncclAvg : ncclSum;
      switch (n.kind) {
        case NativeCollective::Kind::all_gather:
          NCCL_CHECK(ncclAllGather(send, recv, count, type, comm, stream));
          break;
        case NativeCollective::Kind::reduce_scatter:
          NCCL_CHECK(ncclReduceScatter(send, recv, count, type, op, comm, stream));
          break;
        case NativeCollective::Kind::all_reduce:
          NCCL_CHECK(ncclAllReduce(send, recv, count, type, op, comm, stream));
          break;
        case NativeCollective::Kind::all_to_all:
          NCCL_CHECK(ncclAlltoAll(send, recv, count, type, comm, stream));
          break;
      }
      break;
    }
  }
}

void RankRuntime::run(int index) {
  agree_or_throw("run " + std::to_string(index + 1), [&] {
    cudaStream_t first = streams_[0];
    enqueue_barrier(*comms_[0], static_cast<size_t>(plan_.comms[0].origin_slots_offset_bytes),
                    static_cast<uint64_t>(index) + 1, -1, first);
    CUDA_CHECK(cudaEventRecord(origin_, first));
    for (size_t s = 1; s < streams_.size(); ++s)
      CUDA_CHECK(cudaStreamWaitEvent(streams_[s], origin_, 0));
    for (size_t i = 0; i < mine_.launches.size(); ++i) {
      const Launch& l = mine_.launches[i];
      CUDA_CHECK(cudaEventRecord(starts_[i], streams_.at(l.stream)));
      enqueue(l, static_cast<int>(i), index);
      CUDA_CHECK(cudaEventRecord(ends_[i], streams_.at(l.stream)));
    }
    wait_for_completion();
    check_device_error();
  });
}

void RankRuntime::wait_for_completion() {
  const auto deadline =
      std::chrono::steady_clock::now() + std::chrono::duration<double>(settings_.host_deadline_s);
  for (cudaStream_t stream : streams_) {
    for (;;) {
      const cudaError_t status = cudaStreamQuery(stream);
      if (status == cudaSuccess) break;
      if (status != cudaErrorNotReady) CUDA_CHECK(status);
      if (std::chrono::steady_clock::now() > deadline) {
        healthy_ = false;
        throw Timeout("the run did not finish within " + std::to_string(settings_.host_deadline_s) +
                          " s (an NCCL collective or kernel that never completes); its "
                          "communicators are aborted",
                      "hw", rank_);
      }
      std::this_thread::sleep_for(std::chrono::microseconds(200));
    }
  }
}

void RankRuntime::check_device_error() {
  kernels::DeviceError error;
  CUDA_CHECK(cudaMemcpy(&error, device_error_, sizeof error, cudaMemcpyDeviceToHost));
  if (error.code == kernels::kNoError) return;
  const double seconds = settings_.wait_timeout_s;
  if (error.launch < 0)
    throw Timeout("the start barrier timed out after " + std::to_string(seconds) +
                      " s waiting for communicator rank " + std::to_string(error.peer),
                  "hw", rank_);
  const Launch& l = mine_.launches.at(error.launch);
  const StreamOp& op = program_.streams(rank_).at(l.stream).ops.at(l.op_index);
  const CommPlan& comm = plan_.comms.at(l.comm);
  const OpLabel& op_label = program_.label_of(op.label());
  const std::string label =
      "'" + op_label.name + "'" + (op_label.detail.empty() ? "" : " (" + op_label.detail + ")");
  const int peer_world = comm.ranks.at(error.peer);
  if (error.code == kernels::kWaitTimeout)
    throw Timeout("wait_signal " + label + " for rank " + std::to_string(peer_world) +
                      (l.handle >= 0 ? " on symmetric buffer " + std::to_string(l.handle)
                                     : " on communicator " + std::to_string(l.comm)) +
                      (l.signal ? " (signal " + std::to_string(l.signal) + ")" : "") +
                      " timed out after " + std::to_string(seconds) +
                      " s: " + std::to_string(error.observed) + " signal(s) arrived, " +
                      std::to_string(error.expected) + " needed — a wait no put_signal satisfies",
                  "hw", rank_);
  throw Timeout("barrier " + label + " on ranks " + ranks_text(comm.ranks) + " timed out after " +
                    std::to_string(seconds) + " s waiting for rank " + std::to_string(peer_world),
                "hw", rank_);
}

std::vector<MeasuredOp> RankRuntime::timeline() const {
  std::vector<MeasuredOp> out;
  for (size_t i = 0; i < mine_.launches.size(); ++i) {
    const Launch& l = mine_.launches[i];
    float start_ms = 0, end_ms = 0;
    CUDA_CHECK(cudaEventElapsedTime(&start_ms, origin_, starts_[i]));
    CUDA_CHECK(cudaEventElapsedTime(&end_ms, origin_, ends_[i]));
    out.push_back({rank_, l.stream, l.op_index, l.op_count, start_ms * 1e-3, end_ms * 1e-3, l.bytes,
                   l.detail});
  }
  return out;
}

std::vector<MeasuredOutput> RankRuntime::outputs() const {
  std::vector<MeasuredOutput> out;
  for (const OutputRequest& request : program_.outputs()) {
    if (request.rank != rank_) continue;
    const BufferRef& ref = request.range;
    DeviceRange range;
    if (ref.space == BufferRef::Space::local) {
      range.arena = DeviceRange::Arena::local;
      range.offset_bytes = plan_.local_offsets.at(ref.id) + ref.offset_bytes;
    } else {
      const SymmetricPlacement& p = plan_.symmetric.at(ref.id);
      range.arena = DeviceRange::Arena::symmetric;
      range.comm = p.comm;
      range.offset_bytes = p.offset_bytes + ref.offset_bytes;
    }
    MeasuredOutput o{request.name, rank_, std::vector<unsigned char>(ref.size_bytes)};
    if (ref.size_bytes > 0)
      CUDA_CHECK(cudaMemcpy(o.bytes.data(), device_pointer(range), o.bytes.size(),
                            cudaMemcpyDeviceToHost));
    out.push_back(std::move(o));
  }
  return out;
}

std::string RankRuntime::transport() const {
  return "put_signal / wait_signal as CUDA kernels on NCCL " + std::to_string(NCCL_MAJOR) + "." +
         std::to_string(NCCL_MINOR) + "." + std::to_string(NCCL_PATCH) +
         "'s device API (LSA pointers of NCCL_WIN_COLL_SYMMETRIC windows)";
}

void RankRuntime::teardown() noexcept {
  if (device_ >= 0) cudaSetDevice(device_);
  if (healthy_) cudaDeviceSynchronize();
  matmul_.reset();
  for (void* p : scratch_allocations_) cudaFree(p);
  scratch_allocations_.clear();
  for (cudaEvent_t e : starts_)
    if (e) cudaEventDestroy(e);
  for (cudaEvent_t e : ends_)
    if (e) cudaEventDestroy(e);
  for (cudaEvent_t e : program_events_)
    if (e) cudaEventDestroy(e);
  if (origin_) cudaEventDestroy(origin_);
  starts_.clear(), ends_.clear(), program_events_.clear(), origin_ = nullptr;
  for (cudaStream_t s : streams_) cudaStreamDestroy(s);
  streams_.clear();
  if (local_arena_) cudaFree(local_arena_);
  if (block_counters_) cudaFree(block_counters_);
  if (device_error_) cudaFree(device_error_);
  local_arena_ = nullptr, block_counters_ = nullptr, device_error_ = nullptr;
  // Communicators: an orderly, collective teardown in plan order when every rank got here
  // healthy; otherwise abort (local, never waits for a peer).
  for (auto& comm : comms_) {
    if (!comm) continue;
    if (healthy_) {
      if (comm->have_dev) ncclDevCommDestroy(comm->comm, &comm->dev);
      if (comm->window) ncclCommWindowDeregister(comm->comm, comm->window);
    }
    if (comm->owned) release(comm->comm, healthy_);
  }
  if (world_) release(world_, healthy_);
  world_ = nullptr;
  for (auto& comm : comms_)
    if (comm && comm->arena) ncclMemFree(comm->arena);
  comms_.clear();
}

}  // namespace symmesh::hw
