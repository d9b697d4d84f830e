#pragma once
// The order in which one pipeline stage runs its forward and backward passes, as
// Megatron-LM's schedules run them (megatron/core/pipeline_parallel/schedules.py), and how
// the layers are split into the model chunks that the stages hold.
//
// p stages, m micro-batches, v model chunks per stage (virtual stages; 1 is plain 1F1B):
//   v = 1    stage s runs min(p - s - 1, m) forwards (warm-up), then alternates one forward
//            and one backward (steady state), then the remaining backwards (cool-down);
//            micro-batches in order 0..m-1 in both directions (Narayanan et al. 2021, §2.2).
//   v > 1    (requires m a multiple of p) the m·v virtual micro-batches k = 0..m·v-1 run in
//            groups of p: virtual micro-batch k is micro-batch (k / (p·v))·p + k % p of
//            chunk (k % (p·v)) / p, the chunk counted from the last one for backwards.
//            Warm-up is (p - s - 1)·2 + (v - 1)·p forwards (all m·v when m = p), then
//            one forward and one backward alternate, then the cool-down.
// Chunk c of stage s holds model chunk c·p + s: stage p-1's chunk c feeds stage 0's chunk
// c+1 in the forward and is fed by it in the backward.
#include <cstdint>
#include <vector>

#include "core/transformer_spec.hpp"

namespace symmesh::strategies {

struct PipelineTask {
  bool forward = true;
  int64_t micro_batch = 0;
  int chunk = 0;  // 0..v-1 on this stage
};

// Stage `stage`'s tasks in the order it runs them: 2·m·v of them, every (direction,
// micro-batch, chunk) once, each backward after its forward. Throws InvalidArgument for
// p, m or v < 1, a stage outside [0, p), or v > 1 with m not a multiple of p.
std::vector<PipelineTask> stage_schedule(int stages, int64_t micro_batches, int virtual_stages,
                                         int stage);

// The forwards stage `stage` runs before its first backward (the warm-up above), and the
// model chunks whose activations it holds at once at its peak: the warm-up's and the first
// steady-state forward's, at most m·v (Korthikanti et al. 2022, §4.2.3: the first stage holds
// p micro-batches under 1F1B, p + (p − 1)/v micro-batches' worth interleaved). Throws as
// stage_schedule does.
int64_t warmup_forwards(int stages, int64_t micro_batches, int virtual_stages, int stage);
int64_t chunks_in_flight(int stages, int64_t micro_batches, int virtual_stages, int stage);

// How the layers split into model chunks: chunk_layer_counts (core/transformer_spec.hpp).

}  // namespace symmesh::strategies
