#include "hw/program_executor.hpp"

#include <cuda_runtime_api.h>
#include <nccl.h>

#include <cmath>
#include <cstring>
#include <exception>
#include <thread>

#include "hw/bootstrap.hpp"
#include "hw/checks.hpp"
#include "hw/rank_runtime.hpp"
#include "hw/toolkit_info.hpp"

namespace symmesh::hw {
namespace {

// Headroom per GPU for NCCL's own buffers, the CUDA context and cuBLASLt.
constexpr int64_t kReservedBytes = int64_t{2} << 30;

std::string gib(int64_t bytes) {
  char buffer[32];
  std::snprintf(buffer, sizeof buffer, "%.2f GiB", static_cast<double>(bytes) / (1 << 30));
  return buffer;
}

// A rank's results as bytes, so that MPI can carry them like threads do.
class Writer {
 public:
  template <typename T>
  void put(const T& v) {
    out_.append(reinterpret_cast<const char*>(&v), sizeof v);
  }
  void put_string(const std::string& s) {
    put<uint64_t>(s.size());
    out_ += s;
  }
  std::string take() { return std::move(out_); }

 private:
  std::string out_;
};

class Reader {
 public:
  explicit Reader(const std::string& in) : in_(in) {}
  template <typename T>
  T get() {
    T v;
    need(sizeof v);
    std::memcpy(&v, in_.data() + at_, sizeof v);
    at_ += sizeof v;
    return v;
  }
  std::string get_string() {
    const auto n = static_cast<size_t>(get<uint64_t>());
    need(n);
    std::string s = in_.substr(at_, n);
    at_ += n;
    return s;
  }

 private:
  void need(size_t n) const {
    if (at_ + n > in_.size()) throw BackendError("truncated rank result", "hw executor");
  }
  const std::string& in_;
  size_t at_ = 0;
};

std::string encode(const std::vector<MeasuredOp>& timeline,
                   const std::vector<MeasuredOutput>& outputs) {
  Writer w;
  w.put<char>('R');
  w.put<uint64_t>(timeline.size());
  for (const MeasuredOp& op : timeline) {
    w.put(op.rank), w.put(op.stream), w.put(op.op_index), w.put(op.op_count);
    w.put(op.start_s), w.put(op.end_s), w.put(op.bytes);
    w.put_string(op.detail);
  }
  w.put<uint64_t>(outputs.size());
  for (const MeasuredOutput& o : outputs) {
    w.put_string(o.name);
    w.put(o.rank);
    w.put_string(std::string(o.bytes.begin(), o.bytes.end()));
  }
  return w.take();
}

void decode(const std::string& bytes, Measurement& out) {
  Reader r(bytes);
  if (r.get<char>() != 'R') throw BackendError("malformed rank result", "hw executor");
  const auto ops = r.get<uint64_t>();
  for (uint64_t i = 0; i < ops; ++i) {
    MeasuredOp op;
    op.rank = r.get<int>(), op.stream = r.get<int>(), op.op_index = r.get<int>();
    op.op_count = r.get<int>();
    op.start_s = r.get<double>(), op.end_s = r.get<double>(), op.bytes = r.get<int64_t>();
    op.detail = r.get_string();
    out.timeline.push_back(std::move(op));
  }
  const auto outputs = r.get<uint64_t>();
  for (uint64_t i = 0; i < outputs; ++i) {
    MeasuredOutput o;
    o.name = r.get_string();
    o.rank = r.get<int>();
    const std::string data = r.get_string();
    o.bytes.assign(data.begin(), data.end());
    out.outputs.push_back(std::move(o));
  }
}

// The error to report: the failing rank's own (not "stopped because rank R failed"),
// the lowest such rank first.
std::exception_ptr root_cause(const std::vector<std::exception_ptr>& errors) {
  std::exception_ptr fallback;
  for (const auto& e : errors) {
    if (!e) continue;
    if (!fallback) fallback = e;
    try {
      std::rethrow_exception(e);
    } catch (const StoppedByPeer&) {
    } catch (...) {
      return e;
    }
  }
  return fallback;
}

}  // namespace

void ExecutorOptions::validate() const {
  if (!(wait_timeout_s > 0) || !std::isfinite(wait_timeout_s))
    throw InvalidArgument("wait timeout must be a positive number of seconds", "--timeout");
  if (!(host_deadline_s > 0)) throw InvalidArgument("host deadline must be positive", "executor");
  if (warmup_runs < 0) throw InvalidArgument("warm-up runs must be >= 0", "--warmup");
  if (cublaslt_workspace_bytes < 0)
    throw InvalidArgument("negative cuBLASLt workspace", "executor");
}

ExecutionPlan plan_for_hardware(const Program& program, const ExecutorOptions& options) {
  options.validate();
  ExecutionOptions plan_options;
  plan_options.collectives = options.collectives;
  plan_options.cublaslt_workspace_bytes = options.cublaslt_workspace_bytes;
  return build_execution_plan(program, plan_options);
}

void check_devices_for(const ExecutionPlan& plan, const GpuInventory& gpus,
                       const std::vector<int>& local_ranks, int ranks_on_node,
                       const std::vector<int>& device_of_rank, const std::string& command) {
  check_world_fits(ranks_on_node, gpus.count(), command);
  for (size_t i = 0; i < local_ranks.size(); ++i) {
    const int rank = local_ranks[i];
    const int device = device_of_rank.at(i);
    if (device < 0 || device >= gpus.count())
      throw DeviceUnavailable("rank " + std::to_string(rank) + " would use GPU " +
                                  std::to_string(device) + " but " + std::to_string(gpus.count()) +
                                  " are visible",
                              command, rank);
    const GpuInfo& gpu = gpus.gpus[device];
    const int64_t need = plan.device_bytes(rank);
    if (need + kReservedBytes > gpu.memory_bytes)
      throw DeviceUnavailable("rank " + std::to_string(rank) + " needs " + gib(need) +
                                  " of device memory (buffers are not reused after a free) plus " +
                                  gib(kReservedBytes) + " for NCCL and CUDA, but GPU " +
                                  std::to_string(device) + " (" + gpu.name + ") has " +
                                  gib(gpu.memory_bytes),
                              command, rank);
    if (plan.ranks.at(rank).fp8 && gpu.compute_capability < 89)
      throw Unsupported("rank " + std::to_string(rank) +
                            " has fp8 matmuls, which need compute capability 8.9 or newer; GPU " +
                            std::to_string(device) + " (" + gpu.name + ") is " +
                            std::to_string(gpu.compute_capability / 10) + "." +
                            std::to_string(gpu.compute_capability % 10),
                        command, rank);
  }
}

Measurement execute_program(const Program& program, const ExecutorOptions& options) {
  const ExecutionPlan plan = plan_for_hardware(program, options);
  const int world = program.world_size();
  std::unique_ptr<Bootstrap> boot = make_mpi_bootstrap_if_launched(world);
  const bool mpi = boot != nullptr;
  if (!boot) boot = make_thread_bootstrap(world);
  const std::vector<int> local = boot->local_ranks();
  std::vector<int> devices;
  for (int r : local) devices.push_back(boot->device_of(r));
  const GpuInventory gpus = visible_gpus();
  if (gpus.count() == 0)
    throw DeviceUnavailable(no_gpu_message(options.command, gpus.why_none), options.command);
  check_devices_for(plan, gpus, local, boot->ranks_on_node(), devices, options.command);

  // Only now the first NCCL call.
  ncclUniqueId id{};
  if (local.front() == 0) NCCL_CHECK(ncclGetUniqueId(&id));
  RunSettings settings;
  settings.wait_timeout_s = options.wait_timeout_s;
  settings.host_deadline_s = options.host_deadline_s;

  std::vector<std::exception_ptr> errors(local.size());
  std::vector<std::string> gathered;
  std::string transport;
  std::vector<std::thread> threads;
  for (size_t i = 0; i < local.size(); ++i)
    threads.emplace_back([&, i] {
      const int rank = local[i];
      std::string payload;
      try {
        ncclUniqueId mine = id;
        boot->share_unique_id(rank, mine);
        RankRuntime runtime(program, plan, rank, devices[i], *boot, settings);
        runtime.setup(mine);
        for (int run = 0; run <= options.warmup_runs; ++run) runtime.run(run);
        payload = encode(runtime.timeline(), runtime.outputs());
        if (rank == 0) transport = runtime.transport();
      } catch (const std::exception& e) {
        errors[i] = std::current_exception();
        payload = std::string("E") + e.what();
      }
      auto all = boot->gather(rank, payload);
      if (!all.empty()) gathered = std::move(all);
    });
  for (auto& t : threads) t.join();
  if (auto e = root_cause(errors)) std::rethrow_exception(e);

  Measurement out;
  out.warmup_runs = options.warmup_runs;
  if (!boot->reports()) {  // rank 0's process reports
    out.reporting = false;
    return out;
  }
  for (const std::string& payload : gathered) {
    if (!payload.empty() && payload[0] == 'E')
      throw BackendError(payload.substr(1), "hw executor (remote rank)");
    decode(payload, out);
  }
  out.makespan_s = timeline_span_s(out.timeline);
  for (int r = 0; r < world; ++r) out.device_memory_bytes.push_back(plan.device_bytes(r));
  out.notes.push_back(transport);
  out.notes.push_back("collectives: " + options.collectives.kind() +
                      (options.collectives.native
                           ? " (NCCL collectives where a core collective is recognised)"
                           : " (core ring / pairwise algorithms on put_signal / wait_signal)"));
  out.notes.push_back(std::string("ranks: ") + (mpi ? "MPI processes" : "threads of one process") +
                      ", one GPU each (" + gpus.gpus[0].name + ")");
  out.notes.push_back("measured run after " + std::to_string(options.warmup_runs) + " warm-up run" +
                      (options.warmup_runs == 1 ? "" : "s"));
  return out;
}

}  // namespace symmesh::hw
