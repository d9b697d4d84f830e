#pragma once
// What a hardware run measured: per executed op, its CUDA-event interval on its stream,
// on one clock per run (every rank's times start at the same world barrier). The CLI
// turns it into the simulator's RunResult shape, so reports and traces are alike.
#include <cstdint>
#include <string>
#include <vector>

namespace symmesh::hw {

struct MeasuredOp {
  int rank = -1;
  int stream = -1;
  int op_index = -1;  // first Program op it executed (Program::streams(rank)[stream].ops)
  int op_count = 1;   // > 1 when one NCCL collective replaced several one-sided ops
  double start_s = 0;
  double end_s = 0;
  int64_t bytes = 0;   // bytes moved (put) or touched in HBM (compute, copy); 0 for sync
  std::string detail;  // non-empty where the hardware did something else than the label
};

struct MeasuredOutput {
  std::string name;
  int rank = -1;
  std::vector<unsigned char> bytes;
};

struct Measurement {
  double makespan_s = 0;  // the measured run: first start to last end over all ranks
  std::vector<MeasuredOp> timeline;
  std::vector<int64_t> device_memory_bytes;  // per rank: what the run allocated on its GPU
  std::vector<MeasuredOutput> outputs;       // Program::outputs(), after the measured run
  std::vector<std::string> notes;            // how it ran (transport, collectives, devices)
  int warmup_runs = 0;
  // False on MPI processes other than rank 0's: the results are reported there.
  bool reporting = true;
};

// Latest end minus earliest start over the timeline (0 when empty).
double timeline_span_s(const std::vector<MeasuredOp>& timeline);

}  // namespace symmesh::hw
