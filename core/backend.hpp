#pragma once
// The one seam between whoever asks for a Program to be run and what runs it: the
// SimGrid-modelled cluster (sim/sim_backend.hpp) or this machine's GPUs through NCCL
// (hw/nccl_backend.hpp, built as a module loaded at run time, so that a process that only
// plans or simulates never maps a CUDA library). One interface, one factory
// (evaluation/backends.hpp); both return the same RunResult (core/run_result.hpp).
// Optional capabilities are queries that return nullptr where a backend has none.
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "core/dtype.hpp"
#include "core/program.hpp"
#include "core/run_result.hpp"

namespace symmesh {

// Which collectives a backend may run its own way (NCCL's) instead of the core's one-sided
// algorithms, chosen from the Program's collective records.
struct CollectivesChoice {
  bool native = false;           // "nccl"; false: "one-sided"
  std::vector<std::string> ops;  // only the collectives of these workload ops (empty: all)
  // Set by parse_collectives: the user chose. The simulator's default (not given) runs the
  // plain collectives as NCCL does wherever the cluster has a collectives: section
  // (core/library_collectives.hpp).
  bool given = false;
  std::string kind() const;       // "one-sided" or "nccl"
  std::string to_string() const;  // kind(), with the ops: "nccl:grads,qkv"
  // Whether a hardware run with this choice hands `record` to NCCL.
  bool hands_to_library(const CollectiveRecord& record) const;
  // "nccl" when handed to NCCL, else the one-sided algorithm ("ring", "pairwise", …).
  std::string implementation_of(const CollectiveRecord& record) const;
};
// "one-sided" (or "one_sided"), "nccl", "nccl:NAME,NAME"; throws InvalidArgument naming
// `where` for anything else.
CollectivesChoice parse_collectives(std::string_view text,
                                    std::string_view where = "--collectives");

struct RunRequest {
  bool carry_data = false;        // buffers hold real bytes; Program::outputs() come back
  bool record_timeline = false;   // one TimelineEntry per executed op
  double wall_clock_limit_s = 0;  // the simulator's limit (0: none)
  int warmup_runs = 0;            // hardware: unmeasured runs first
  double wait_timeout_s = 10;     // hardware: a wait_signal or barrier this long is an error
  CollectivesChoice collectives;
  std::string command = "symmesh";  // who asks, for messages ("symmesh run")
};

// How a backend would run a Program, without running it (the hardware's dry run).
class RunPlanner {
 public:
  virtual ~RunPlanner() = default;
  // Throws InvalidArgument / Unsupported for a Program the backend cannot run.
  virtual std::string describe(const Program& program, const RunRequest& request) const = 0;
};

struct DeviceInfo {
  std::string name;
  int64_t memory_bytes = 0;
};
struct GemmTiming {
  double heuristic_s = 0;  // per GEMM, the algorithm runs use
  double best_s = 0;       // per GEMM, the fastest candidate found
};

// Measurements of this machine's devices, for calibration.
class DeviceBenchmarks {
 public:
  virtual ~DeviceBenchmarks() = default;
  // The visible devices; throws Unavailable ("no GPU visible: COMMAND needs a GPU to
  // measure (…)") when there is none.
  virtual std::vector<DeviceInfo> devices(const std::string& command) = 0;
  // c = a @ b on device 0, `iterations` timed after a warm-up.
  virtual GemmTiming gemm(DType dtype, int64_t m, int64_t n, int64_t k, int iterations) = 0;
};

class Backend {
 public:
  virtual ~Backend() = default;
  virtual std::string name() const = 0;  // "sim", "nccl"
  // Runs `program`. Throws InvalidArgument / Unsupported for what it cannot run,
  // Unavailable when it cannot run here, Timeout / BackendError when the run fails.
  virtual RunResult run(const Program& program, const RunRequest& request) = 0;
  virtual const RunPlanner* planner() const = 0;
  virtual DeviceBenchmarks* device_benchmarks() = 0;
};

}  // namespace symmesh
