#include "strategies/fusion_pricing.hpp"

#include <algorithm>
#include <vector>

#include "core/tensor_spec.hpp"

namespace symmesh::strategies {

double fused_allgather_matmul_s(const FusedGatherTiming& t, int chunks) {
  const int p = t.group_size;
  std::vector<int64_t> rows;  // the non-empty pieces of a shard
  for (int q = 0; q < chunks; ++q) {
    const Chunk c = chunk_of(t.shard_rows, chunks, q);
    if (c.size > 0) rows.push_back(c.size);
  }
  const size_t n = rows.size();
  auto put_s = [&](size_t q) {
    return t.put_latency_s + static_cast<double>(rows[q]) * t.s_per_row;
  };
  // By symmetry, piece q of round s lands here when the left neighbour's put of it ends,
  // which is when this rank's own put of round s, piece q ends; the comm stream then
  // records its event, so the puts' running sum is when each piece can be multiplied.
  double comm = 0, compute = 0;
  for (size_t q = 0; q < n; ++q) compute += t.matmul_s(rows[q]);
  for (int s = 0; s < p - 1; ++s)
    for (size_t q = 0; q < n; ++q) {
      comm += put_s(q);
      compute = std::max(compute, comm) + t.matmul_s(rows[q]);
    }
  return std::max(comm, compute);
}

FusedChoice best_fused_allgather_matmul(const FusedGatherTiming& timing,
                                        const std::vector<int>& choices) {
  FusedChoice best{1, fused_allgather_matmul_s(timing, 1)};
  for (int c : choices) {
    const double time = fused_allgather_matmul_s(timing, c);
    if (time < best.time_s) best = {c, time};
  }
  return best;
}

}  // namespace symmesh::strategies
