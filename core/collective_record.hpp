#pragma once
// A collective as the Program records it: what the lowering wrote (kind, group, bytes,
// dtype, reduction, the one-sided algorithm that implements it, its buffers) and the span
// of stream ops each member owns for it. Backends choose from the record — the hardware
// backend hands a ring to NCCL's own collective on the same buffers without reading a
// label — and reports count collectives from it.
#include <cstdint>
#include <string>
#include <vector>

#include "core/dtype.hpp"
#include "core/placement.hpp"

namespace symmesh {

using CollectiveId = int;

enum class CollectiveOp : uint8_t {
  all_gather,
  reduce_scatter,
  all_reduce,
  all_to_all,
  allgather_matmul,      // an all-gather overlapped with the matmul that consumes it
  matmul_reducescatter,  // a matmul whose partial sums are reduce-scattered as they form
};
std::string to_string(CollectiveOp op);  // "all_gather", …, "allgather_matmul"

// How the ops implement it (core/collectives.hpp, strategies/collective_matmul.hpp).
enum class CollectiveAlgorithm : uint8_t {
  ring,        // put_signal to the next member, wait_signal from the previous, p-1 steps
  pairwise,    // all-to-all: step s exchanges with the members s apart
  fused_ring,  // a ring of pieces on a comm stream, matmuls on the compute stream
};
// "ring", "pairwise", "fused ring" (all on put_signal / wait_signal).
std::string to_string(CollectiveAlgorithm algorithm);

// The ops one member owns on one of its streams: [first_op, first_op + op_count).
struct CollectiveSpan {
  int32_t rank = -1;  // world rank
  int32_t stream = -1;
  int32_t first_op = 0;
  int32_t op_count = 0;
};

struct CollectiveRecord {
  CollectiveOp op = CollectiveOp::all_gather;
  CollectiveAlgorithm algorithm = CollectiveAlgorithm::ring;
  int group = -1;
  // The nccl-tests size: the gathered output (all-gather), the input (reduce-scatter,
  // all-reduce, all-to-all); for fused ones, the gathered or scattered tensor.
  int64_t bytes = 0;
  int64_t chunk_bytes = 0;  // what one member contributes or receives per peer
  DType dtype = DType::fp32;
  ReduceOp reduction = ReduceOp::sum;  // reduce-scatter, all-reduce
  std::string name;                    // the workload op it belongs to
  // Buffers (symmetric ids, -1 when unused): data (the input, and the result in place),
  // staging (receive slots), result (where the result lands: data, or the all-to-all's
  // receive buffer).
  int data = -1;
  int staging = -1;
  int result = -1;
  std::vector<CollectiveSpan> spans;  // every member's, in group order
};

// Whether a collective library (NCCL) has the same collective: the plain ones, not those
// fused with a matmul.
bool has_library_equivalent(const CollectiveRecord& record);

// How many collectives of one kind a Program ran one way, for reports. A collective over a
// mesh dimension counts once per group of that dimension (each group runs its own).
struct CollectiveCount {
  CollectiveOp op = CollectiveOp::all_gather;
  std::string implementation;  // "ring", "pairwise", "fused ring", "nccl"
  int count = 0;
  int64_t bytes = 0;  // summed over them (CollectiveRecord::bytes)
};
// Counts `records` by kind and implementation, in order of first appearance;
// `implementation` names how each one runs.
template <typename Implementation>
std::vector<CollectiveCount> count_collectives(const std::vector<CollectiveRecord>& records,
                                               Implementation&& implementation) {
  std::vector<CollectiveCount> out;
  for (const CollectiveRecord& r : records) {
    std::string how = implementation(r);
    auto it = out.begin();
    while (it != out.end() && !(it->op == r.op && it->implementation == how)) ++it;
    if (it == out.end()) it = out.insert(out.end(), CollectiveCount{r.op, std::move(how), 0, 0});
    ++it->count;
    it->bytes += r.bytes;
  }
  return out;
}

}  // namespace symmesh
