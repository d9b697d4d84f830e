#pragma once
// Overlapped collective matmul ("async tensor parallelism"): the all-gather of a matmul's
// input a fused into the matmul that consumes it, written once on the core API —
// put_signal / wait_signal on a communication stream, events, and local matmuls on the
// compute stream — so the simulator evaluates it and the hardware backend executes it.
//
// The all-gather + mm of one group of p ranks (group index i, ring to i+1):
//   comm stream     p-1 rounds; round s puts a shard to i+1 (its own in round 0, then the
//                   one that arrived in round s-1) and waits for shard i-1-s from i-1
//                   (recording an event when it has landed);
//   compute stream  mm(own shard), then for each shard in arrival order: wait its event,
//                   mm(that shard) into its rows of the output.
// Each shard lands in its own slot of one symmetric buffer (written once: no credits, no
// hazards). With chunks = c, every shard travels and is multiplied as c pieces (torch.chunk
// of its rows), piece by piece (put piece q, wait piece q, put piece q+1, ...), so the first
// product starts after 1/c of a ring step and the last one is 1/c of a shard: more chunks hide
// more, but each piece costs a put's latency and a kernel launch, and a thin matmul runs below peak
// — the cost model chooses c.
//
// The result is the same as all-gather then mm: output row block j is shard j of a times
// b, computed by the same kernel on the same bytes.
//
// The mm + reduce-scatter of one group (the output Partial(sum) on the mesh dim, wanted
// Shard(0) there): member i ends with row block i of the sum. A ring of accumulators:
//   compute stream  round 0: mm(block i-1) into a send buffer; round s = 1..p-1:
//                   mm(block i-1-s) into scratch, wait for the accumulator of that block
//                   from i-1, add the product into it (in its slot);
//   comm stream     round s = 0..p-2: put the block finished in round s to i+1's slot s,
//                   wait for i-1's into this rank's slot s.
// Every product but the first is computed while the previous accumulator travels; the
// last round leaves block i summed in slot p-2. Slots are written once each.
#include <optional>
#include <string>
#include <vector>

#include "core/program.hpp"
#include "strategies/op_problem.hpp"

namespace symmesh::strategies {

// Where an all-gather can be fused: a's redistribution ends with an all-gather of a's
// leading dim (m for mm/addmm, the batch for bmm/baddbmm) on one mesh dim of size >= 2,
// and no other mesh dim shards that dim, so the shards are contiguous row blocks of the
// gathered a and the output.
struct AllGatherFusion {
  int mesh_dim = 0;
  int group_size = 0;
};

// The fusion site of candidate placements `lhs_target` of a, if it has one.
std::optional<AllGatherFusion> allgather_fusion(const OpProblem& problem,
                                                const Placements& lhs_target);

// The chunk counts a cost model may choose from for shards of `smallest_shard_rows` rows
// (each piece keeps at least one row): 1, 2, 4, ... up to kMaxFusionChunks.
inline constexpr int kMaxFusionChunks = 16;
std::vector<int> fusion_chunk_choices(int64_t smallest_shard_rows);

// Where a reduce-scatter can be fused: the output's redistribution (candidate output
// placements -> problem.output_target) is one step, Partial(sum) -> Shard(0) of the
// output's leading dim on a mesh dim of size >= 2, and no other mesh dim shards that dim.
struct ReduceScatterFusion {
  int mesh_dim = 0;
  int group_size = 0;
};
std::optional<ReduceScatterFusion> reducescatter_fusion(const OpProblem& problem,
                                                        const Placements& output_placements);

// One member of an overlapped all-gather + matmul.
struct GatherMatmulMember {
  int rank = -1;  // world rank
  StreamId compute_stream = -1;
  StreamId comm_stream = -1;
  BufferRef a_shard;  // its own shard of a: contiguous leading-dim slices
  BufferRef c;        // its whole output: every member's rows, in group order
  // Members may hold different columns of b (b sharded along n on the same mesh dim), so
  // the output's and b's slices are per member.
  int64_t c_row_bytes = 0;  // one leading-dim slice of the output
  int64_t b_row_bytes = 0;  // bmm: one batch of b (sliced with a's); mm: 0 (b shared)
  // Everything of the local matmul but its leading extent and a/c: b, dtype, the other
  // dims, bias and its strides (in elements).
  MatmulWork work;
};

struct GatherMatmulSpec {
  GroupId group = -1;
  std::vector<int64_t> shard_rows;  // leading extent of each member's shard, group order
  int64_t a_row_bytes = 0;          // one leading-dim slice of a (the same on every member)
  bool leading_is_batch = false;    // bmm: the leading dim is the batch, else m
  int64_t gemm_per_leading = 1;     // GEMM batches or rows per leading-dim index
  int chunks = 1;
  std::string name = "op";  // label of every operation
  int signal = 0;           // signal index of its puts and waits (core/collectives.hpp, `signal`)
  std::vector<GatherMatmulMember> members;  // group order
};

// Appends the overlapped all-gather + matmul of every member. Throws InvalidArgument for
// inconsistent sizes (members vs shard_rows, chunks < 1).
void overlapped_allgather_matmul(Program& program, const GatherMatmulSpec& spec);

// One member of an overlapped matmul + reduce-scatter.
struct ScatterMatmulMember {
  int rank = -1;  // world rank
  StreamId compute_stream = -1;
  StreamId comm_stream = -1;
  BufferRef a;  // its whole a (every block's rows; its own piece of k)
  // The local matmul but its leading extent and a/c: b, dtype, the other dims, bias.
  MatmulWork work;
  int64_t a_row_bytes = 0;  // one leading-dim slice of a (members may hold different k)
  int64_t b_row_bytes = 0;  // bmm: one batch of b; mm: 0
};

struct ScatterMatmulSpec {
  GroupId group = -1;
  std::vector<int64_t> block_rows;  // leading extent of each member's output block
  int64_t c_row_bytes = 0;          // one leading-dim slice of the output (same on all)
  bool leading_is_batch = false;
  int64_t gemm_per_leading = 1;  // GEMM batches or rows per leading-dim index
  int chunks = 1;
  std::string name = "op";
  int signal = 0;  // signal index of its puts and waits (core/collectives.hpp, `signal`)
  std::vector<ScatterMatmulMember> members;  // group order
};

// Appends the overlapped matmul + reduce-scatter of every member; returns, per member, the
// range holding its summed block (block_rows[i] leading-dim slices). Throws
// InvalidArgument for inconsistent sizes.
std::vector<BufferRef> overlapped_matmul_reducescatter(Program& program,
                                                       const ScatterMatmulSpec& spec);

}  // namespace symmesh::strategies
