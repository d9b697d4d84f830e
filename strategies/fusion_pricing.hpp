#pragma once
// The time of an overlapped all-gather + matmul (strategies/collective_matmul.hpp), worked
// out by replaying its two streams on one rank of a symmetric ring: every shard taken as
// the largest (the slots are padded to it), puts of a piece taking α + rows · s/row on the
// comm stream, a piece's matmul its roofline time (launch included) on the compute stream.
//
//   comm:    p-1 rounds of (put a piece, wait the matching piece from the left) per piece
//   compute: own pieces; then each arriving piece as soon as it has landed
//
// The time is when both streams are done. With chunks = 1 and compute ≪ comm it is the
// all-gather's (p-1)(α + shard/β) plus one shard's matmul — the pipeline fill; with
// compute ≫ comm it is the whole matmul plus the first put; in between, the larger of the
// two plus a fill of one piece. Exact for the program the lowering writes when no other
// traffic shares its links (the simulator checks it: tests/sim/fused_matmul_sim_test.cpp).
#include <cstdint>
#include <functional>
#include <vector>

namespace symmesh::strategies {

struct FusedGatherTiming {
  int group_size = 1;
  int64_t shard_rows = 0;    // leading-dim rows of the largest shard
  double put_latency_s = 0;  // α of one put on the ring
  double s_per_row = 0;      // seconds to move one leading-dim row of a (bytes · s/B)
  std::function<double(int64_t rows)> matmul_s;  // a piece of `rows` rows, launch included
};

// The time with each shard moved and multiplied as `chunks` pieces.
double fused_allgather_matmul_s(const FusedGatherTiming& timing, int chunks);

struct FusedChoice {
  int chunks = 1;
  double time_s = 0;
};

// The fastest of `choices` (fusion_chunk_choices); ties to the fewest chunks.
FusedChoice best_fused_allgather_matmul(const FusedGatherTiming& timing,
                                        const std::vector<int>& choices);

// The overlapped matmul + reduce-scatter, replayed the same way on one rank of a symmetric
// ring (every block the largest):
//   compute: round 0: the first block's pieces; rounds 1..p-1: each piece's product, then
//            (once its accumulator has landed) its add
//   comm:    rounds 0..p-2: each piece's put once it is finished, then the wait for the
//            matching piece from the left
// With compute ≫ comm it is p products and p-1 adds plus one put; with comm ≫ compute,
// (p-1) puts plus a product and an add per round of fill.
struct FusedScatterTiming {
  int group_size = 2;
  int64_t block_rows = 0;    // leading-dim rows of the largest output block
  double put_latency_s = 0;  // α of one put on the ring
  double s_per_row = 0;      // seconds to move one leading-dim row of the output
  std::function<double(int64_t rows)> matmul_s;  // a piece's product, launch included
  std::function<double(int64_t rows)> reduce_s;  // a piece's add, launch included
};

double fused_matmul_reducescatter_s(const FusedScatterTiming& timing, int chunks);
FusedChoice best_fused_matmul_reducescatter(const FusedScatterTiming& timing,
                                            const std::vector<int>& choices);

}  // namespace symmesh::strategies
