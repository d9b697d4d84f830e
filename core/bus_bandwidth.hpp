#pragma once
// Algorithm and bus bandwidth of a collective, as nccl-tests reports them (NVIDIA/nccl-tests,
// doc/PERFORMANCE.md, "Performance reported by NCCL tests"), so that a simulated figure can
// be held next to an all_reduce_perf line:
//
//   algbw = S / t                       S: the collective's size in bytes, t: its time
//   busbw = algbw × factor(op, n)       n: the ranks in the group
//
// with S the nccl-tests size symmesh uses everywhere (CollectiveRecord::bytes): the whole
// buffer — the gathered output of an all-gather, the input of a reduce-scatter, the buffer
// of an all-reduce or all-to-all. Bandwidths are in bytes/s here; nccl-tests prints them in
// GB/s of 1e9 bytes (bytes_per_s * 1e-9).
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "core/collective_record.hpp"

namespace symmesh {

// The collectives nccl-tests measures that symmesh can name. sendrecv, broadcast and reduce
// are here for their factor (1) though the core writes none of them.
enum class BandwidthCollective : uint8_t {
  all_reduce,
  all_gather,
  reduce_scatter,
  all_to_all,
  broadcast,
  reduce,
  sendrecv,
};
// How many (the cluster file's tuning arrays are indexed by BandwidthCollective); each has
// a row in core/collective_descriptor.cpp.
inline constexpr int kBandwidthCollectiveCount =
    static_cast<int>(BandwidthCollective::sendrecv) + 1;

// nccl-tests' correction factor (doc/PERFORMANCE.md, "Summary"):
//   all-reduce 2(n-1)/n; reduce-scatter, all-gather, all-to-all (n-1)/n;
//   broadcast, reduce, send/receive 1.
// n >= 1; a single rank moves nothing over a bus, so every (n-1) factor is 0 there.
double bus_bandwidth_factor(BandwidthCollective op, int ranks);

// The kind a collective workload op or record names ("all_reduce", "all_gather",
// "reduce_scatter", "all_to_all", "broadcast", "reduce", "sendrecv"; nccl-tests' "alltoall"
// too); nullopt for anything else (a matmul, put_signal, a fused collective matmul).
std::optional<BandwidthCollective> bandwidth_collective(std::string_view op);
std::optional<BandwidthCollective> bandwidth_collective(CollectiveOp op);
// "all_reduce", "all_gather", "reduce_scatter", "all_to_all", "broadcast", "reduce",
// "sendrecv": the names bandwidth_collective(string) reads.
std::string to_string(BandwidthCollective op);

struct CollectiveBandwidth {
  double algbw_bytes_per_s = 0;
  double busbw_bytes_per_s = 0;
};
// Of a collective of `bytes` (nccl-tests size) over `ranks` that took `time_s`; nullopt when
// the time is not positive (nothing was measured).
std::optional<CollectiveBandwidth> collective_bandwidth(BandwidthCollective op, int64_t bytes,
                                                        int ranks, double time_s);

}  // namespace symmesh
