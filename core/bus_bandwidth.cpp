#include "core/bus_bandwidth.hpp"

#include <cmath>

namespace symmesh {

double bus_bandwidth_factor(BandwidthCollective op, int ranks) {
  const double n = ranks < 1 ? 1 : ranks;
  // NVIDIA/nccl-tests doc/PERFORMANCE.md: an all-reduce needs 2(n-1) transfers per element
  // over n links, t = (S/B)·2(n-1)/n, so B = algbw·2(n-1)/n; a reduce-scatter or all-gather
  // is half of it, (n-1)/n, as is an all-to-all; a broadcast or reduce is bound by the root's
  // one link, B = S/t; a send/receive moves S once.
  switch (op) {
    case BandwidthCollective::all_reduce:
      return 2 * (n - 1) / n;
    case BandwidthCollective::all_gather:
    case BandwidthCollective::reduce_scatter:
    case BandwidthCollective::all_to_all:
      return (n - 1) / n;
    case BandwidthCollective::broadcast:
    case BandwidthCollective::reduce:
    case BandwidthCollective::sendrecv:
      return 1;
  }
  return 1;
}

std::optional<BandwidthCollective> bandwidth_collective(std::string_view op) {
  if (op == "all_reduce") return BandwidthCollective::all_reduce;
  if (op == "all_gather") return BandwidthCollective::all_gather;
  if (op == "reduce_scatter") return BandwidthCollective::reduce_scatter;
  if (op == "all_to_all" || op == "alltoall") return BandwidthCollective::all_to_all;
  if (op == "broadcast") return BandwidthCollective::broadcast;
  if (op == "reduce") return BandwidthCollective::reduce;
  if (op == "sendrecv") return BandwidthCollective::sendrecv;
  return std::nullopt;
}

std::string to_string(BandwidthCollective op) {
  switch (op) {
    case BandwidthCollective::all_reduce:
      return "all_reduce";
    case BandwidthCollective::all_gather:
      return "all_gather";
    case BandwidthCollective::reduce_scatter:
      return "reduce_scatter";
    case BandwidthCollective::all_to_all:
      return "all_to_all";
    case BandwidthCollective::broadcast:
      return "broadcast";
    case BandwidthCollective::reduce:
      return "reduce";
    case BandwidthCollective::sendrecv:
      return "sendrecv";
  }
  return "?";
}

std::optional<BandwidthCollective> bandwidth_collective(CollectiveOp op) {
  switch (op) {
    case CollectiveOp::all_gather:
      return BandwidthCollective::all_gather;
    case CollectiveOp::reduce_scatter:
      return BandwidthCollective::reduce_scatter;
    case CollectiveOp::all_reduce:
      return BandwidthCollective::all_reduce;
    case CollectiveOp::all_to_all:
      return BandwidthCollective::all_to_all;
    case CollectiveOp::allgather_matmul:
    case CollectiveOp::matmul_reducescatter:
      return std::nullopt;  // overlapped with a matmul: the time is not the collective's
  }
  return std::nullopt;
}

std::optional<CollectiveBandwidth> collective_bandwidth(BandwidthCollective op, int64_t bytes,
                                                        int ranks, double time_s) {
  if (!(time_s > 0) || !std::isfinite(time_s)) return std::nullopt;
  CollectiveBandwidth out;
  out.algbw_bytes_per_s = static_cast<double>(bytes) / time_s;
  out.busbw_bytes_per_s = out.algbw_bytes_per_s * bus_bandwidth_factor(op, ranks);
  return out;
}

}  // namespace symmesh
