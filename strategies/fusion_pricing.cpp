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
  double comm = 0, compute = 0;
  // By symmetry, piece q of step s lands here when the left neighbour's put of it ends,
  // which is when this rank's own put of its step-s piece q ends.
  std::vector<double> landed(n, 0);
  if (p > 1)
    for (size_t q = 0; q < n; ++q) landed[q] = comm += put_s(q);
  for (size_t q = 0; q < n; ++q) compute += t.matmul_s(rows[q]);
  for (int s = 0; s < p - 1; ++s) {
    std::vector<double> next(n, 0);
    for (size_t q = 0; q < n; ++q) {
      comm = std::max(comm, landed[q]);
      if (s < p - 2) next[q] = comm += put_s(q);
    }
    for (size_t q = 0; q < n; ++q) compute = std::max(compute, landed[q]) + t.matmul_s(rows[q]);
    landed = next;
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
