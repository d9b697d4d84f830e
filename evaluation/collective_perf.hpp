#pragma once
// A collective over a range of sizes on a simulated cluster, one simulation per size, as
// nccl-tests' *_perf programs measure it (all_reduce_perf -b MIN -e MAX -f FACTOR): for
// `symmesh simulate --nccl-tests`, whose table a user holds next to their all_reduce_perf
// output.
#include <cstdint>
#include <string>
#include <vector>

#include "core/backend.hpp"
#include "core/bus_bandwidth.hpp"
#include "core/cluster_spec.hpp"
#include "core/dtype.hpp"
#include "core/op_kind.hpp"

namespace symmesh::evaluation {

struct CollectivePerfRequest {
  OpKind op = OpKind::all_reduce;  // all_gather, reduce_scatter, all_reduce, all_to_all
  ClusterSpec cluster;             // sized to the GPUs already (perf_cluster)
  int64_t min_bytes = 8;
  int64_t max_bytes = 128LL << 20;
  int64_t step_factor = 2;
  DType dtype = DType::fp32;
  double wall_clock_limit_s = 0;  // per simulation; 0: none
  CollectivesChoice collectives;  // --collectives (default: NCCL's where the cluster says how)
};

// One line of the table, in nccl-tests' conventions: `bytes` the whole buffer (for an
// all-gather the gathered output, for a reduce-scatter the input), `count` the elements
// nccl-tests prints (the whole buffer's for all-reduce; one rank's share for all-gather,
// reduce-scatter and all-to-all), `time_s` the simulated collective's.
struct CollectivePerfRow {
  int64_t bytes = 0;
  int64_t count = 0;
  double time_s = 0;
  CollectiveBandwidth bandwidth;
  std::string implementation;  // how it ran: "nccl ring/LL", "ring", … (the report's)
};

struct CollectivePerf {
  int ranks = 0;
  std::vector<CollectivePerfRow> rows;
  // Sizes left out: under one element per rank, which nccl-tests would run as an empty
  // collective and symmesh cannot express (a collective moves bytes > 0).
  std::vector<int64_t> skipped_bytes;
};

// `cluster` with `gpus` GPUs: nodes = gpus / gpus_per_node when gpus is a multiple of a
// node; a single node of `gpus` GPUs when fewer than a node (the node's other GPUs idle,
// as when all_reduce_perf -g 4 runs on an 8-GPU node); 0 keeps the file's size. Throws
// InvalidArgument naming --gpus otherwise.
ClusterSpec perf_cluster(ClusterSpec cluster, int gpus);

// The sizes min, min·f, min·f², … up to max, each rounded down as nccl-tests rounds it
// (whole elements; for all-gather, reduce-scatter and all-to-all whole elements per rank),
// simulated one collective per size over every GPU of the cluster. Throws InvalidArgument
// for min > max, min < 1, a factor < 2, or an op that is no plain collective.
CollectivePerf simulate_collective_perf(const CollectivePerfRequest& request);

}  // namespace symmesh::evaluation
