#include "hw/nccl_backend.hpp"

#include "core/label_spans.hpp"
#include "hw/devices.hpp"
#include "hw/microbench.hpp"

namespace symmesh::hw {

ExecutorOptions executor_options_for(const RunRequest& request) {
  ExecutorOptions options;
  options.collectives = request.collectives;
  options.wait_timeout_s = request.wait_timeout_s;
  options.warmup_runs = request.warmup_runs;
  options.command = request.command;
  return options;
}

RunResult run_result_of(const Measurement& m, const Program& program) {
  RunResult r;
  r.makespan_s = m.makespan_s;
  for (const MeasuredOp& op : m.timeline) {
    TimelineEntry e;
    e.rank = op.rank;
    e.stream = op.stream;
    e.op_index = op.op_index;
    e.op_count = op.op_count;
    e.start_s = op.start_s;
    e.end_s = op.end_s;
    e.bytes = op.bytes;
    if (!op.detail.empty()) {
      e.detail = static_cast<int32_t>(r.details.size());
      r.details.push_back(op.detail);
    }
    r.timeline.push_back(e);
  }
  r.label_spans = label_spans_of(program, r.timeline);
  r.peak_memory_bytes = m.device_memory_bytes;
  for (const MeasuredOutput& o : m.outputs) r.outputs.push_back({o.name, o.rank, o.bytes});
  r.notes = m.notes;
  r.reporting = m.reporting;
  return r;
}

RunResult NcclBackend::run(const Program& program, const RunRequest& request) {
  const ExecutorOptions options = executor_options_for(request);
  plan_for_hardware(program, options);  // bad programs are bad input, GPU or not
  const GpuInventory gpus = visible_gpus();
  if (gpus.count() == 0)
    throw DeviceUnavailable(no_gpu_message(request.command, gpus.why_none), request.command);
  RunResult result = run_result_of(execute_program(program, options), program);
  if (!request.record_timeline) result.timeline.clear();
  return result;
}

std::string NcclBackend::describe(const Program& program, const RunRequest& request) const {
  return hw::describe(plan_for_hardware(program, executor_options_for(request)), program);
}

std::vector<symmesh::DeviceInfo> NcclBackend::devices(const std::string& command) {
  const GpuInventory gpus = visible_gpus();
  if (gpus.count() == 0)
    throw DeviceUnavailable(no_gpu_message(command, gpus.why_none, "a GPU to measure"), command);
  std::vector<symmesh::DeviceInfo> out;
  for (const GpuInfo& g : gpus.gpus) out.push_back({g.name, g.memory_bytes});
  return out;
}

symmesh::GemmTiming NcclBackend::gemm(DType dtype, int64_t m, int64_t n, int64_t k,
                                      int iterations) {
  const auto t = benchmark_gemm(dtype, m, n, k, iterations);
  return {t.heuristic_s, t.best_s};
}

}  // namespace symmesh::hw
