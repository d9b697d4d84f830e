#pragma once
// Recognising the core collectives (core/collectives.hpp) in a rank's stream, so that
// `--collectives nccl` can run each as one NCCL collective on the same buffers instead of
// its put_signal / wait_signal steps. A run of ops is replaced only when it is exactly what
// the core algorithm emits — every step present, in order, with the ring's peers, chunk
// offsets and buffers — so a replacement never changes where the data ends up:
//   ring all_gather        → ncclAllGather in place on the data buffer
//   ring reduce_scatter    → ncclReduceScatter in place (sum, or avg when the last step
//                            scales by 1/p)
//   reduce_scatter + all_gather on one buffer (ring_all_reduce) → ncclAllReduce in place
//   pairwise all_to_all    → ncclAlltoAll from the data buffer into the result buffer (which
//                            then also holds the rank's own chunk in its own slot)
// Anything else stays one-sided.
#include <string>
#include <vector>

#include "core/program.hpp"
#include "hw/execution_plan.hpp"

namespace symmesh::hw {

struct NativeSegment {
  int begin = 0;  // first op index in the stream
  int count = 0;  // ops replaced
  NativeCollective::Kind kind = NativeCollective::Kind::all_gather;
  GroupId group = -1;
  int member_index = -1;    // the rank's index in the group
  int data_handle = -1;     // symmetric buffer holding the data (the input)
  int result_handle = -1;   // where the result lands (all_to_all: the receive buffer)
  int64_t chunk_bytes = 0;  // per rank
  DType dtype = DType::int8;
  bool average = false;
  std::string detail;  // e.g. "nccl all_reduce of 8 MiB (replaces 21 one-sided ops)"
};

// The replaceable collectives of one stream, in order, non-overlapping.
std::vector<NativeSegment> find_native_segments(const Program& program, int rank, StreamId stream);

}  // namespace symmesh::hw
