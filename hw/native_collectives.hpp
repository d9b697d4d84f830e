#pragma once
// The collectives of a rank's streams that NCCL can run instead of their put_signal /
// wait_signal steps (`--collectives nccl`), read from the Program's collective records
// (core/collective_record.hpp): a ring or pairwise collective whose member owns a span of
// ops on one stream becomes one NCCL call on the same buffers, so the data ends up where
// the one-sided steps would have put it:
//   ring all_gather        → ncclAllGather in place on the data buffer
//   ring reduce_scatter    → ncclReduceScatter in place (sum or avg)
//   ring all_reduce        → ncclAllReduce in place
//   pairwise all_to_all    → ncclAlltoAll from the data buffer into the result buffer (which
//                            then also holds the rank's own chunk in its own slot)
// Fused rings (a collective overlapped with its matmul) stay one-sided.
#include <string>
#include <vector>

#include "core/backend.hpp"
#include "core/program.hpp"
#include "hw/execution_plan.hpp"

namespace symmesh::hw {

struct NativeSegment {
  int stream = -1;
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
  std::string name;    // the workload op the collective belongs to
  std::string detail;  // e.g. "nccl all_reduce (replaces 21 one-sided ops)"
};

// The collectives of `rank` that `choice` hands to NCCL, in stream order, from the records.
std::vector<NativeSegment> native_segments(const Program& program, int rank,
                                           const CollectivesChoice& choice);

}  // namespace symmesh::hw
