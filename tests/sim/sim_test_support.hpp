#pragma once
// Shared helpers for the simulator's tests: a DGX-H100-like cluster, byte patterns, and
// lookups into a RunResult.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "core/cluster_spec.hpp"
#include "core/program.hpp"
#include "sim/forked_run.hpp"

namespace symmesh::sim::testing {

inline constexpr double kIntraBandwidth = 450e9;  // bytes/s, per GPU per direction
inline constexpr double kIntraLatency = 1e-6;
inline constexpr double kInterBandwidth = 50e9;  // 400 Gb/s per NIC
inline constexpr double kInterLatency = 3e-6;
inline constexpr double kHbmBandwidth = 3.35e12;

inline ClusterSpec test_cluster(int nodes = 2, int gpus_per_node = 8,
                                const std::string& inter_kind = "rail") {
  ClusterSpec c;
  c.name = "test-dgx";
  c.nodes = nodes;
  c.gpus_per_node = gpus_per_node;
  c.gpu.name = "H100-SXM";
  c.gpu.peak_flops_per_s = {
      {"bf16", 989.4e12}, {"fp16", 989.4e12}, {"fp32", 67e12}, {"fp64", 34e12}};
  c.gpu.memory_capacity_bytes = 80.0 * (1ull << 30);
  c.gpu.memory_bandwidth_bytes_per_s = kHbmBandwidth;
  c.intra_node = {"nvswitch", kIntraBandwidth, kIntraLatency};
  c.inter_node = {inter_kind, inter_kind == "rail" ? gpus_per_node : 4, kInterBandwidth,
                  kInterLatency};
  return c;
}

// Rank 0 puts `bytes` to rank 1, which waits for it: the smallest complete simulation.
inline Program one_put_program(int64_t bytes) {
  Program p(2);
  const SymmetricHandle h = p.symm_alloc(p.world_group(), bytes);
  p.put_signal(0, p.stream(0, "comm"), p.local_alloc(0, bytes), h, 0, 1,
               {"put", OpCategory::comm, ""});
  p.wait_signal(1, p.stream(1, "comm"), h, 0, {"wait", OpCategory::comm, ""});
  return p;
}

inline std::vector<unsigned char> pattern(size_t n, unsigned seed) {
  std::vector<unsigned char> v(n);
  unsigned x = seed * 2654435761u + 12345u;
  for (auto& b : v) {
    x = x * 1103515245u + 12345u;
    b = static_cast<unsigned char>(x >> 16);
  }
  return v;
}

// A simulation with its timeline, and the Program that names the timeline's ops.
struct TracedRun : RunResult {
  const Program* program = nullptr;
};
inline TracedRun traced(const Program& p, const ClusterSpec& c, SimOptions o = {}) {
  o.record_timeline = true;
  TracedRun t;
  static_cast<RunResult&>(t) = run_simulation(p, c, o);
  t.program = &p;
  return t;
}

// The label of a timeline entry's op.
inline const OpLabel& label_of(const TracedRun& r, const TimelineEntry& e) {
  return r.program->label_of(r.program->streams(e.rank).at(e.stream).ops.at(e.op_index).label());
}

// The timeline entry of the op labelled `name` on `rank` (the first one, if several).
inline const TimelineEntry& entry(const TracedRun& r, int rank, const std::string& name) {
  for (const TimelineEntry& e : r.timeline)
    if (e.rank == rank && label_of(r, e).name == name) return e;
  ADD_FAILURE() << "no op '" << name << "' on rank " << rank;
  static const TimelineEntry none;
  return none;
}

inline double duration(const TracedRun& r, int rank, const std::string& name) {
  const TimelineEntry& e = entry(r, rank, name);
  return e.end_s - e.start_s;
}

inline SimOptions with_data() {
  SimOptions o;
  o.carry_data = true;
  return o;
}

// A local buffer on `rank` holding `bytes`.
inline BufferRef local_with(Program& p, int rank, const std::vector<unsigned char>& bytes) {
  const BufferRef ref = p.local_alloc(rank, static_cast<int64_t>(bytes.size()));
  p.set_initial_bytes(rank, ref, bytes);
  return ref;
}

}  // namespace symmesh::sim::testing
