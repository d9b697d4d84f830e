#include "evaluation/memory_estimate.hpp"

#include "core/errors.hpp"
#include "core/run_result.hpp"

namespace symmesh::evaluation {
namespace {

// SimGrid 3.32's default contexts/stack-size: 8192 KiB (its configuration documentation,
// "contexts/stack-size"; symmesh does not change it).
constexpr int64_t kSimGridStackBytes = int64_t{8192} << 10;

}  // namespace

HostMemoryEstimate estimate_host_memory(const Program& counted,
                                        const strategies::PlannedWorkload& planned, bool emulate,
                                        bool record_timeline) {
  const ProgramCounts& c = counted.counts();
  HostMemoryEstimate out;
  out.stream_ops = c.stream_ops;
  out.program_bytes = c.program_bytes();
  if (emulate) {
    out.emulated_bytes = c.buffer_bytes;
    // The report keeps every matmul's global inputs as doubles.
    for (const auto& plan : planned.plans)
      if (plan)
        for (const TensorSpec& t : plan->problem.inputs)
          out.emulated_bytes += numel(t.shape) * static_cast<int64_t>(sizeof(double));
  }
  out.simulator_bytes = int64_t{counted.world_size()} << 20;
  int64_t actors = counted.world_size();  // the ranks' anchors
  for (const auto& streams : counted.stream_op_counts())
    actors += static_cast<int64_t>(streams.size());
  out.stack_reserved_bytes = actors * kSimGridStackBytes;
  if (record_timeline)
    out.timeline_bytes = 2 * c.stream_ops * static_cast<int64_t>(sizeof(TimelineEntry));
  return out;
}

void check_host_memory(const Scenario& scenario, const HostMemoryEstimate& estimate, bool emulate,
                       const std::optional<HostMemory>& available) {
  if (admit(estimate.total_bytes(), 0, available, estimate.stack_reserved_bytes) != Admission::skip)
    return;
  std::string message =
      "scenario '" + scenario.name + "' " +
      not_enough_memory_text(estimate.total_bytes(), *available,
                             emulate ? "to emulate" : "to simulate", estimate.stack_reserved_bytes);
  if (emulate)
    message += " (every rank's real buffers: " + gigabytes_text(estimate.emulated_bytes) +
               "); emulation is meant for small shapes";
  else
    message += " (" + std::to_string(estimate.stream_ops) +
               " stream ops); try fewer GPUs or fewer workload ops";
  throw InvalidArgument(message, scenario.where());
}

}  // namespace symmesh::evaluation
