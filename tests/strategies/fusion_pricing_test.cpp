// The pipeline replay of the overlapped all-gather + mm against hand-worked timelines.
#include "strategies/fusion_pricing.hpp"

#include <gtest/gtest.h>

namespace symmesh::strategies {
namespace {

FusedGatherTiming timing(int p, int64_t rows, double alpha, double s_per_row,
                         std::function<double(int64_t)> mm) {
  FusedGatherTiming t;
  t.group_size = p;
  t.shard_rows = rows;
  t.put_latency_s = alpha;
  t.s_per_row = s_per_row;
  t.matmul_s = std::move(mm);
  return t;
}

TEST(FusedAllGatherPricing, CommBoundIsTheRingPlusOneShardsMatmul) {
  // p = 4, a put of a 10-row shard = 1 + 10 = 11, a shard's mm = 1. Comm: puts end at 11,
  // 22, 33 (each forward waits for the arrival); compute: 1, then max(1,11)+1 = 12,
  // max(12,22)+1 = 23, max(23,33)+1 = 34 = (p-1)·put + mm.
  const auto t = timing(4, 10, 1.0, 1.0, [](int64_t) { return 1.0; });
  EXPECT_DOUBLE_EQ(fused_allgather_matmul_s(t, 1), 34.0);
}

TEST(FusedAllGatherPricing, ComputeBoundIsTheWholeMatmul) {
  // Same ring, a shard's mm = 100: compute 100, 200, 300, 400 = p·mm; comm ends at 33.
  const auto t = timing(4, 10, 1.0, 1.0, [](int64_t) { return 100.0; });
  EXPECT_DOUBLE_EQ(fused_allgather_matmul_s(t, 1), 400.0);
}

TEST(FusedAllGatherPricing, ChunksShortenTheTailUntilLaunchesDominate) {
  // p = 2, 8-row shards, α = 0, 10 per row; a piece's mm = 5 (launch) + its rows.
  //  c=1: put 80; own mm 13; then max(13, 80) + 13 = 93.
  //  c=2: puts of 40 land at 40, 80; own 9 + 9 = 18; max(18,40)+9 = 49; max(49,80)+9 = 89.
  //  c=4: land at 20,40,60,80; own 4·7 = 28; 35, 47, 67, 87.
  //  c=8: land at 10..80; own 8·6 = 48; 54, 60, 66, 72, 78, 84, 90, 96.
  const auto t = timing(2, 8, 0.0, 10.0, [](int64_t rows) { return 5.0 + rows; });
  EXPECT_DOUBLE_EQ(fused_allgather_matmul_s(t, 1), 93.0);
  EXPECT_DOUBLE_EQ(fused_allgather_matmul_s(t, 2), 89.0);
  EXPECT_DOUBLE_EQ(fused_allgather_matmul_s(t, 4), 87.0);
  EXPECT_DOUBLE_EQ(fused_allgather_matmul_s(t, 8), 96.0);
  const FusedChoice best = best_fused_allgather_matmul(t, {1, 2, 4, 8});
  EXPECT_EQ(best.chunks, 4);
  EXPECT_DOUBLE_EQ(best.time_s, 87.0);
}

TEST(FusedAllGatherPricing, OneRankIsItsOwnMatmul) {
  const auto t = timing(1, 8, 1.0, 1.0, [](int64_t rows) { return 2.0 * rows; });
  EXPECT_DOUBLE_EQ(fused_allgather_matmul_s(t, 1), 16.0);
}

FusedScatterTiming scatter(int p, int64_t rows, double alpha, double s_per_row, double mm,
                           double add) {
  FusedScatterTiming t;
  t.group_size = p;
  t.block_rows = rows;
  t.put_latency_s = alpha;
  t.s_per_row = s_per_row;
  t.matmul_s = [mm](int64_t) { return mm; };
  t.reduce_s = [add](int64_t) { return add; };
  return t;
}

TEST(FusedReduceScatterPricing, CommBoundIsProductPutAndAdd) {
  // p = 2: the first block's product (5), its put (1 + 10 rows x 1 = 11), landing at 16;
  // meanwhile this rank's product of its own block (5 -> 10); then the add: 16 + 2 = 18.
  EXPECT_DOUBLE_EQ(fused_matmul_reducescatter_s(scatter(2, 10, 1.0, 1.0, 5.0, 2.0), 1), 18.0);
}

TEST(FusedReduceScatterPricing, ComputeBoundHidesEveryPut) {
  // p = 4, product 10, put 3, add 1. Compute 10 | 20, lands 13, add -> 21 | 31, lands
  // 21+3 = 24, add -> 32 | 42, lands 32+3 = 35, add -> 43 = p products + (p-1) adds.
  EXPECT_DOUBLE_EQ(fused_matmul_reducescatter_s(scatter(4, 10, 0.0, 0.3, 10.0, 1.0), 1), 43.0);
}

}  // namespace
}  // namespace symmesh::strategies
