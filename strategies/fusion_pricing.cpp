#include "strategies/fusion_pricing.hpp"

#include <algorithm>
#include <vector>

#include "core/tensor_spec.hpp"

namespace symmesh::strategies {

namespace {

// The non-empty pieces of `rows` rows cut into `chunks` (torch.chunk).
std::vector<int64_t> piece_rows(int64_t rows, int chunks) {
  std::vector<int64_t> out;
  for (int q = 0; q < chunks; ++q) {
    const Chunk c = chunk_of(rows, chunks, q);
    if (c.size > 0) out.push_back(c.size);
  }
  return out;
}

// Seconds of each piece's put: α + rows · s/row.
std::vector<double> put_seconds(const std::vector<int64_t>& rows, double alpha, double s_per_row) {
  std::vector<double> out;
  for (int64_t r : rows) out.push_back(alpha + static_cast<double>(r) * s_per_row);
  return out;
}

template <typename Time>
FusedChoice fastest(const std::vector<int>& choices, Time time) {
  FusedChoice best{1, time(1)};
  for (int c : choices) {
    const double t = time(c);
    if (t < best.time_s) best = {c, t};
  }
  return best;
}

}  // namespace

double fused_allgather_matmul_s(const FusedGatherTiming& t, int chunks) {
  const int p = t.group_size;
  const std::vector<int64_t> rows = piece_rows(t.shard_rows, chunks);
  const std::vector<double> put_s = put_seconds(rows, t.put_latency_s, t.s_per_row);
  const size_t n = rows.size();
  // By symmetry, piece q of round s lands here when the left neighbour's put of it ends,
  // which is when this rank's own put of round s, piece q ends; the comm stream then
  // records its event, so the puts' running sum is when each piece can be multiplied.
  double comm = 0, compute = 0;
  for (size_t q = 0; q < n; ++q) compute += t.matmul_s(rows[q]);
  for (int s = 0; s < p - 1; ++s)
    for (size_t q = 0; q < n; ++q) {
      comm += put_s[q];
      compute = std::max(compute, comm) + t.matmul_s(rows[q]);
    }
  return std::max(comm, compute);
}

FusedChoice best_fused_allgather_matmul(const FusedGatherTiming& timing,
                                        const std::vector<int>& choices) {
  return fastest(choices, [&](int c) { return fused_allgather_matmul_s(timing, c); });
}

double fused_matmul_reducescatter_s(const FusedScatterTiming& t, int chunks) {
  const int p = t.group_size;
  const std::vector<int64_t> rows = piece_rows(t.block_rows, chunks);
  const std::vector<double> put_s = put_seconds(rows, t.put_latency_s, t.s_per_row);
  const size_t n = rows.size();
  double compute = 0, comm = 0;
  std::vector<double> finished(n), landed(n);
  for (size_t q = 0; q < n; ++q) finished[q] = compute += t.matmul_s(rows[q]);
  for (int s = 0; s < p - 1; ++s) {
    // By symmetry the left neighbour's round-s put of piece q ends when this rank's does.
    for (size_t q = 0; q < n; ++q) landed[q] = comm = std::max(comm, finished[q]) + put_s[q];
    for (size_t q = 0; q < n; ++q) {
      compute += t.matmul_s(rows[q]);
      finished[q] = compute = std::max(compute, landed[q]) + t.reduce_s(rows[q]);
    }
  }
  return std::max(compute, comm);
}

FusedChoice best_fused_matmul_reducescatter(const FusedScatterTiming& timing,
                                            const std::vector<int>& choices) {
  return fastest(choices, [&](int c) { return fused_matmul_reducescatter_s(timing, c); });
}

}  // namespace symmesh::strategies
