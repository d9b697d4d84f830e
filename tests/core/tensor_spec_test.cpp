// TensorSpec and local views. Expectations follow torch.chunk as DTensor uses it: a dim
// of n split k ways gives chunks of ceil(n/k) starting at i*ceil(n/k); trailing chunks are
// smaller or empty, and an empty chunk sits at offset n. A tensor dim sharded over several
// mesh dims is chunked by the outer mesh dim first, then each piece by the inner one.
#include "core/tensor_spec.hpp"

#include <gtest/gtest.h>

#include "tests/thrown.hpp"

#include <algorithm>
#include <string>
#include <vector>

#include "core/errors.hpp"

namespace symmesh {
namespace {

using testing::thrown;

Placements P(std::initializer_list<Placement> list) {
  return Placements(list);
}
const Placement R = Placement::replicate();
const Placement S0 = Placement::shard(0);
const Placement S1 = Placement::shard(1);
const Placement S2 = Placement::shard(2);
const Placement Psum = Placement::partial(ReduceOp::sum);

struct Expected {
  int64_t size;
  int64_t offset;
};

void expect_chunks(int64_t dim_size, const std::vector<Expected>& expected) {
  const auto k = static_cast<int64_t>(expected.size());
  for (int64_t i = 0; i < k; ++i) {
    const Chunk c = chunk_of(dim_size, k, i);
    EXPECT_EQ(c.size, expected[i].size) << dim_size << " over " << k << ", chunk " << i;
    EXPECT_EQ(c.offset, expected[i].offset) << dim_size << " over " << k << ", chunk " << i;
  }
}

// ---- shapes -------------------------------------------------------------------------

TEST(Shape, Numel) {
  EXPECT_EQ(numel({10, 4}), 40);
  EXPECT_EQ(numel({2, 3, 4}), 24);
  EXPECT_EQ(numel({7}), 7);
  EXPECT_EQ(numel({5, 0}), 0);
}

TEST(Shape, ToString) {
  EXPECT_EQ(to_string(Shape{64, 32}), "64x32");
  EXPECT_EQ(to_string(Shape{64}), "64");
  EXPECT_EQ(to_string(Shape{8, 2048, 4096}), "8x2048x4096");
}

TEST(Shape, ParseForms) {
  EXPECT_EQ(parse_shape("64x32"), (Shape{64, 32}));
  EXPECT_EQ(parse_shape("64"), (Shape{64}));
  EXPECT_EQ(parse_shape("8x2048x4096"), (Shape{8, 2048, 4096}));
}

TEST(Shape, ParseRoundTrips) {
  for (const char* text : {"1", "64x32", "3x5x7x11", "8192x28672"})
    EXPECT_EQ(to_string(parse_shape(text)), text);
}

TEST(Shape, ParseHandlesDimsBeyond32Bits) {
  // 2^33 = 8589934592 rows: fine as long as the byte count fits in 64 bits.
  EXPECT_EQ(parse_shape("8589934592x2"), (Shape{8589934592LL, 2}));
}

TEST(Shape, ParseRejectsMalformedNamingWhere) {
  for (const char* text : {"", "64x", "x32", "64xx32", "-1x4", "4x-2", "ax4", "4xb", "4.0", "4.5x2",
                           "64x32x", "[", "[ ]", "[]x4", "4x[]"}) {
    const auto e = thrown<InvalidArgument>([&] { parse_shape(text, "--a"); });
    EXPECT_EQ(e.where(), "--a") << "'" << text << "'";
  }
}

TEST(Shape, ParseDefaultWhereIsShape) {
  EXPECT_EQ(thrown<InvalidArgument>([] { parse_shape("-1"); }).where(), "shape");
}

TEST(Shape, ParseAcceptsZeroSizeDimsAnd0dAsPyTorchDoes) {
  // torch.empty(0, 4) and torch.empty(()) are tensors: a zero-size dim and a 0-d scalar.
  EXPECT_EQ(parse_shape("0x4"), (Shape{0, 4}));
  EXPECT_EQ(parse_shape("4x0"), (Shape{4, 0}));
  EXPECT_EQ(parse_shape("0"), (Shape{0}));
  EXPECT_EQ(parse_shape("[]"), Shape{});
  // A zero dim ends the overflow check's product, and must not divide it: 0 x 2^62 is 0 bytes.
  EXPECT_EQ(parse_shape("0x4611686018427387904"), (Shape{0, 4611686018427387904LL}));
  EXPECT_EQ(to_string(Shape{}), "[]");
  for (const char* text : {"0x4", "[]", "8x0x2"}) EXPECT_EQ(to_string(parse_shape(text)), text);
  // A 0-d tensor has one element (numel of torch.Size([]) is 1); a zero-size one none.
  EXPECT_EQ(numel(Shape{}), 1);
  EXPECT_EQ(numel(Shape{0, 4}), 0);
}

TEST(Shape, ParseAcceptsTheLargestShapeWhoseFp64BytesFit) {
  // INT64_MAX = 2^63 - 1, so at most floor((2^63 - 1) / 8) = 2^60 - 1 elements of 8 bytes.
  EXPECT_EQ(parse_shape("1152921504606846975"), (Shape{1152921504606846975LL}));
  // 2^30 * (2^30 - 1) = 2^60 - 2^30 elements: fits.
  EXPECT_NO_THROW(parse_shape("1073741824x1073741823"));
}

TEST(Shape, ParseRejectsByteCountOverflow) {
  // 2^60 elements * 8 bytes = 2^63 > INT64_MAX.
  EXPECT_THROW(parse_shape("1152921504606846976"), InvalidArgument);
  EXPECT_THROW(parse_shape("1073741824x1073741824"), InvalidArgument);  // 2^30 * 2^30
  // 2^32 * 2^32 = 2^64 wraps a 64-bit product to 0; must still be rejected.
  EXPECT_THROW(parse_shape("4294967296x4294967296"), InvalidArgument);
  EXPECT_THROW(parse_shape("1024x1024x1024x1024x1024x1024x1024"), InvalidArgument);  // 2^70
}

TEST(Shape, ParseRejectsDimBeyondInt64) {
  const auto e = thrown<InvalidArgument>([] { parse_shape("99999999999999999999x2", "--b"); });
  EXPECT_EQ(e.where(), "--b");
}

// ---- chunk_of (torch.chunk) ---------------------------------------------------------

TEST(ChunkOf, EvenSplit) {
  expect_chunks(8, {{2, 0}, {2, 2}, {2, 4}, {2, 6}});  // 8/4 = 2
}

TEST(ChunkOf, TenOverFourIsThreeThreeThreeOne) {
  expect_chunks(10, {{3, 0}, {3, 3}, {3, 6}, {1, 9}});  // ceil(10/4)=3: starts 0,3,6,9
}

TEST(ChunkOf, FiveOverFourEndsWithAnEmptyChunkAtTheEnd) {
  // ceil(5/4)=2: starts 0,2,4,6 -> sizes 2,2,1 and an empty fourth chunk at offset 5.
  expect_chunks(5, {{2, 0}, {2, 2}, {1, 4}, {0, 5}});
}

TEST(ChunkOf, ThreeOverFour) {
  expect_chunks(3, {{1, 0}, {1, 1}, {1, 2}, {0, 3}});  // ceil(3/4)=1
}

TEST(ChunkOf, SixOverFourHasOnlyThreeNonEmptyChunks) {
  // torch.chunk(6 rows, 4) returns 3 chunks of 2: the fourth rank's chunk is empty.
  expect_chunks(6, {{2, 0}, {2, 2}, {2, 4}, {0, 6}});
}

TEST(ChunkOf, OneOverFourLeavesThreeEmpty) {
  expect_chunks(1, {{1, 0}, {0, 1}, {0, 1}, {0, 1}});
}

TEST(ChunkOf, ThirteenOverFive) {
  expect_chunks(13, {{3, 0}, {3, 3}, {3, 6}, {3, 9}, {1, 12}});  // ceil(13/5)=3
}

TEST(ChunkOf, OneChunkIsTheWholeDim) {
  expect_chunks(7, {{7, 0}});
}

TEST(ChunkOf, ChunksTileTheDimInOrder) {
  for (int64_t n = 1; n <= 40; ++n) {
    for (int64_t k = 1; k <= 9; ++k) {
      const int64_t full = (n + k - 1) / k;
      int64_t covered = 0;
      for (int64_t i = 0; i < k; ++i) {
        const Chunk c = chunk_of(n, k, i);
        EXPECT_GE(c.size, 0);
        EXPECT_LE(c.size, full);
        if (c.size > 0) {
          EXPECT_EQ(c.offset, covered) << n << " over " << k << " chunk " << i;
          covered += c.size;
        } else {
          EXPECT_EQ(c.offset, n) << n << " over " << k << " chunk " << i;
        }
      }
      EXPECT_EQ(covered, n) << n << " over " << k;
    }
  }
}

// ---- TensorSpec basics --------------------------------------------------------------

TEST(TensorSpec, SizeBytes) {
  EXPECT_EQ((TensorSpec{{10, 4}, DType::fp32, {R}}).size_bytes(), 160);    // 40 * 4
  EXPECT_EQ((TensorSpec{{8, 6, 8}, DType::bf16, {R}}).size_bytes(), 768);  // 384 * 2
  EXPECT_EQ((TensorSpec{{3}, DType::fp8_e4m3, {R}}).size_bytes(), 3);
}

TEST(TensorSpec, DefaultDtypeIsFp32) {
  EXPECT_EQ(TensorSpec{}.dtype, DType::fp32);
}

TEST(TensorSpec, ValidateAcceptsAMatchingSpec) {
  const DeviceMesh mesh({2, 4});
  EXPECT_NO_THROW((TensorSpec{{6, 8}, DType::fp32, P({S0, S1})}).validate(mesh));
  EXPECT_NO_THROW((TensorSpec{{6, 8}, DType::fp32, P({Psum, R})}).validate(mesh));
  EXPECT_NO_THROW((TensorSpec{{6, 8}, DType::fp32, P({S1, S1})}).validate(mesh));
}

TEST(TensorSpec, ValidateAcceptsUnevenAndOversplitDims) {
  // Uneven and even empty shards are legal layouts (torch.chunk); only the strategy filter
  // drops 3 rows over 4 ranks.
  const DeviceMesh mesh({4});
  EXPECT_NO_THROW((TensorSpec{{10, 4}, DType::fp32, P({S0})}).validate(mesh));
  EXPECT_NO_THROW((TensorSpec{{3, 4}, DType::fp32, P({S0})}).validate(mesh));
}

TEST(TensorSpec, ValidateRejectsTooFewPlacementsNamingWhere) {
  const DeviceMesh mesh({2, 4});
  const TensorSpec spec{{6, 8}, DType::fp32, P({S0})};
  const auto e = thrown<InvalidArgument>([&] { spec.validate(mesh, "a"); });
  EXPECT_EQ(e.where(), "a");
  EXPECT_NE(std::string(e.what()).find("a: "), std::string::npos) << e.what();
}

TEST(TensorSpec, ValidateRejectsTooManyPlacements) {
  const DeviceMesh mesh({4});
  EXPECT_THROW((TensorSpec{{6, 8}, DType::fp32, P({S0, R})}).validate(mesh), InvalidArgument);
  EXPECT_THROW((TensorSpec{{6, 8}, DType::fp32, {}}).validate(mesh), InvalidArgument);
}

TEST(TensorSpec, ValidateRejectsShardBeyondRankNamingWhere) {
  const DeviceMesh mesh({2, 4});
  const TensorSpec spec{{6, 8}, DType::fp32, P({R, S2})};
  const auto e = thrown<InvalidArgument>([&] { spec.validate(mesh, "b"); });
  EXPECT_EQ(e.where(), "b");
  EXPECT_NE(e.message().find("S(2)"), std::string::npos) << e.message();
}

TEST(TensorSpec, ValidateDefaultWhereIsTensor) {
  const DeviceMesh mesh({4});
  const TensorSpec spec{{6}, DType::fp32, P({S1})};
  EXPECT_EQ(thrown<InvalidArgument>([&] { spec.validate(mesh); }).where(), "tensor");
}

TEST(TensorSpec, ValidateRejectsNegativeDims) {
  const DeviceMesh mesh({4});
  EXPECT_THROW((TensorSpec{{-4, 2}, DType::fp32, P({R})}).validate(mesh), InvalidArgument);
  EXPECT_THROW((TensorSpec{{4, -1}, DType::fp32, P({R})}).validate(mesh), InvalidArgument);
}

TEST(TensorSpec, ZeroSizeAnd0dTensorsAreValid) {
  const DeviceMesh mesh({4});
  EXPECT_NO_THROW((TensorSpec{{}, DType::fp32, P({R})}).validate(mesh));
  EXPECT_NO_THROW((TensorSpec{{4, 0}, DType::fp32, P({R})}).validate(mesh));
  // A 0-d tensor has no dim to shard.
  EXPECT_THROW((TensorSpec{{}, DType::fp32, P({S0})}).validate(mesh), InvalidArgument);
  // torch.chunk of a zero-size dim over 4 ranks: four empty pieces at offset 0.
  const TensorSpec empty_rows{{0, 8}, DType::fp32, P({S0})};
  for (int r = 0; r < 4; ++r) {
    EXPECT_EQ(local_view(empty_rows, mesh, r).shape, (Shape{0, 8}));
    EXPECT_EQ(local_view(empty_rows, mesh, r).offset, (Shape{0, 0}));
  }
  EXPECT_EQ(max_local_bytes(empty_rows, mesh), 0);
  // A 0-d fp32 tensor is 4 bytes on every rank.
  EXPECT_EQ(max_local_bytes(TensorSpec{{}, DType::fp32, P({R})}, mesh), 4);
}

TEST(TensorSpec, NumShards) {
  const DeviceMesh mesh({2, 4});
  EXPECT_EQ((TensorSpec{{6, 8}, DType::fp32, P({R, R})}).num_shards(mesh), 1);
  EXPECT_EQ((TensorSpec{{6, 8}, DType::fp32, P({S0, R})}).num_shards(mesh), 2);
  EXPECT_EQ((TensorSpec{{6, 8}, DType::fp32, P({Psum, S0})}).num_shards(mesh), 4);
  EXPECT_EQ((TensorSpec{{6, 8}, DType::fp32, P({S0, S1})}).num_shards(mesh), 8);
  EXPECT_EQ((TensorSpec{{6, 8}, DType::fp32, P({S0, S0})}).num_shards(mesh), 8);
  EXPECT_EQ((TensorSpec{{6, 8}, DType::fp32, P({Psum, Psum})}).num_shards(mesh), 1);
}

TEST(TensorSpec, ShardsPerDim) {
  const DeviceMesh mesh({2, 4});
  using V = std::vector<int64_t>;
  EXPECT_EQ((TensorSpec{{6, 8}, DType::fp32, P({R, R})}).shards_per_dim(mesh), (V{1, 1}));
  EXPECT_EQ((TensorSpec{{6, 8}, DType::fp32, P({S0, S1})}).shards_per_dim(mesh), (V{2, 4}));
  EXPECT_EQ((TensorSpec{{6, 8}, DType::fp32, P({S1, S0})}).shards_per_dim(mesh), (V{4, 2}));
  EXPECT_EQ((TensorSpec{{6, 8}, DType::fp32, P({S0, S0})}).shards_per_dim(mesh), (V{8, 1}));
  EXPECT_EQ((TensorSpec{{2, 6, 8}, DType::fp32, P({Psum, S2})}).shards_per_dim(mesh), (V{1, 1, 4}));
}

// ---- local_view ---------------------------------------------------------------------

TEST(LocalView, ReplicateIsTheWholeTensorEverywhere) {
  const DeviceMesh mesh({4});
  const TensorSpec spec{{10, 4}, DType::fp32, P({R})};
  for (int r = 0; r < 4; ++r) {
    const LocalView v = local_view(spec, mesh, r);
    EXPECT_EQ(v.shape, (Shape{10, 4}));
    EXPECT_EQ(v.offset, (Shape{0, 0}));
    EXPECT_EQ(v.numel(), 40);
  }
}

TEST(LocalView, PartialIsTheWholeTensorEverywhere) {
  const DeviceMesh mesh({2, 2});
  const TensorSpec spec{{10, 4}, DType::fp32, P({Psum, Placement::partial(ReduceOp::avg)})};
  for (int r = 0; r < 4; ++r) {
    EXPECT_EQ(local_view(spec, mesh, r).shape, (Shape{10, 4}));
    EXPECT_EQ(local_view(spec, mesh, r).offset, (Shape{0, 0}));
  }
}

TEST(LocalView, TenRowsOverFour) {
  const DeviceMesh mesh({4});
  const TensorSpec spec{{10, 4}, DType::fp32, P({S0})};
  // ceil(10/4)=3 -> rows 3,3,3,1 at 0,3,6,9
  const int64_t rows[] = {3, 3, 3, 1}, offs[] = {0, 3, 6, 9};
  for (int r = 0; r < 4; ++r) {
    const LocalView v = local_view(spec, mesh, r);
    EXPECT_EQ(v.shape, (Shape{rows[r], 4})) << "rank " << r;
    EXPECT_EQ(v.offset, (Shape{offs[r], 0})) << "rank " << r;
  }
}

TEST(LocalView, FiveRowsOverFourHasAnEmptyLastShard) {
  const DeviceMesh mesh({4});
  const TensorSpec spec{{5, 3}, DType::fp32, P({S0})};
  // ceil(5/4)=2 -> rows 2,2,1,0; the empty shard sits at row 5.
  const int64_t rows[] = {2, 2, 1, 0}, offs[] = {0, 2, 4, 5};
  for (int r = 0; r < 4; ++r) {
    const LocalView v = local_view(spec, mesh, r);
    EXPECT_EQ(v.shape, (Shape{rows[r], 3})) << "rank " << r;
    EXPECT_EQ(v.offset, (Shape{offs[r], 0})) << "rank " << r;
  }
  EXPECT_EQ(local_view(spec, mesh, 3).numel(), 0);
}

TEST(LocalView, ThreeRowsOverFour) {
  const DeviceMesh mesh({4});
  const TensorSpec spec{{3, 2}, DType::fp32, P({S0})};
  const int64_t rows[] = {1, 1, 1, 0}, offs[] = {0, 1, 2, 3};
  for (int r = 0; r < 4; ++r) {
    EXPECT_EQ(local_view(spec, mesh, r).shape, (Shape{rows[r], 2})) << "rank " << r;
    EXPECT_EQ(local_view(spec, mesh, r).offset, (Shape{offs[r], 0})) << "rank " << r;
  }
}

TEST(LocalView, ShardColumns) {
  const DeviceMesh mesh({4});
  const TensorSpec spec{{4, 10}, DType::fp32, P({S1})};
  const int64_t cols[] = {3, 3, 3, 1}, offs[] = {0, 3, 6, 9};
  for (int r = 0; r < 4; ++r) {
    EXPECT_EQ(local_view(spec, mesh, r).shape, (Shape{4, cols[r]})) << "rank " << r;
    EXPECT_EQ(local_view(spec, mesh, r).offset, (Shape{0, offs[r]})) << "rank " << r;
  }
}

TEST(LocalView, OneTensorDimOverTwoMeshDims) {
  // 2x2 mesh, (S0,S0), 10 rows: the outer mesh dim splits 5/5, then each 5 splits 3/2.
  const DeviceMesh mesh({2, 2});
  const TensorSpec spec{{10, 4}, DType::fp32, P({S0, S0})};
  const struct {
    std::vector<int> coords;
    int64_t rows, offset;
  } cases[] = {{{0, 0}, 3, 0}, {{0, 1}, 2, 3}, {{1, 0}, 3, 5}, {{1, 1}, 2, 8}};
  for (const auto& c : cases) {
    const LocalView v = local_view(spec, mesh, mesh.rank(c.coords));
    EXPECT_EQ(v.shape, (Shape{c.rows, 4})) << c.coords[0] << "," << c.coords[1];
    EXPECT_EQ(v.offset, (Shape{c.offset, 0})) << c.coords[0] << "," << c.coords[1];
  }
}

TEST(LocalView, NestedShardingIsNotTheSameAsFlatSharding) {
  // 2x4 mesh, (S0,S0), 10 rows. Nested: outer 5/5, each 5 over 4 -> 2,2,1,0.
  // (A flat 10-over-8 split would give 2,2,2,2,2,0,0,0 instead.)
  const DeviceMesh mesh({2, 4});
  const TensorSpec spec{{10}, DType::fp32, P({S0, S0})};
  const int64_t rows[] = {2, 2, 1, 0, 2, 2, 1, 0};
  const int64_t offs[] = {0, 2, 4, -1, 5, 7, 9, -1};  // -1: empty, not checked
  for (int r = 0; r < 8; ++r) {
    EXPECT_EQ(local_view(spec, mesh, r).shape, (Shape{rows[r]})) << "rank " << r;
    if (rows[r] > 0) {
      EXPECT_EQ(local_view(spec, mesh, r).offset, (Shape{offs[r]})) << "rank " << r;
    }
  }
}

TEST(LocalView, NestedEmptyShardAtTheEndSitsAtTheDimSize) {
  // 2x2 mesh, (S0,S0), 3 rows: outer ceil(3/2)=2 -> 2/1; the second half (1 row) splits
  // 1/0. Coordinates (1,1) hold nothing, at offset 3 = the dim size.
  const DeviceMesh mesh({2, 2});
  const TensorSpec spec{{3, 2}, DType::fp32, P({S0, S0})};
  const LocalView v = local_view(spec, mesh, mesh.rank({1, 1}));
  EXPECT_EQ(v.shape, (Shape{0, 2}));
  EXPECT_EQ(v.offset, (Shape{3, 0}));
  EXPECT_EQ(local_view(spec, mesh, mesh.rank({1, 0})).offset, (Shape{2, 0}));
}

TEST(LocalView, TwoDifferentDimsSharded) {
  // 2x4 mesh, (S0,S1) on 6x8: rows 3/3 by mesh dim 0, columns 2/2/2/2 by mesh dim 1.
  const DeviceMesh mesh({2, 4});
  const TensorSpec spec{{6, 8}, DType::fp32, P({S0, S1})};
  for (int r = 0; r < 8; ++r) {
    const int c0 = r / 4, c1 = r % 4;
    const LocalView v = local_view(spec, mesh, r);
    EXPECT_EQ(v.shape, (Shape{3, 2})) << "rank " << r;
    EXPECT_EQ(v.offset, (Shape{3 * c0, 2 * c1})) << "rank " << r;
  }
}

TEST(LocalView, TwoDifferentDimsShardedUnevenlyInReverseOrder) {
  // 2x4 mesh, (S1,S0) on 10x6: columns split by mesh dim 0 (3/3), rows by mesh dim 1
  // (ceil(10/4)=3 -> 3,3,3,1 at 0,3,6,9). Rank 7 = (1,3): 1 row at 9, 3 columns at 3.
  const DeviceMesh mesh({2, 4});
  const TensorSpec spec{{10, 6}, DType::fp32, P({S1, S0})};
  EXPECT_EQ(local_view(spec, mesh, 7).shape, (Shape{1, 3}));
  EXPECT_EQ(local_view(spec, mesh, 7).offset, (Shape{9, 3}));
  EXPECT_EQ(local_view(spec, mesh, 2).shape, (Shape{3, 3}));  // (0,2)
  EXPECT_EQ(local_view(spec, mesh, 2).offset, (Shape{6, 0}));
}

TEST(LocalView, ThreeDimTensorOnThreeDimMesh) {
  // 2x2x2 mesh, (S0,R,S2) on 5x4x7: dim 0 -> 3/2 by mesh dim 0; dim 2 -> 4/3 by mesh dim 2.
  const DeviceMesh mesh({2, 2, 2});
  const TensorSpec spec{{5, 4, 7}, DType::bf16, P({S0, R, S2})};
  for (int r = 0; r < 8; ++r) {
    const auto c = mesh.coordinates(r);
    const LocalView v = local_view(spec, mesh, r);
    EXPECT_EQ(v.shape, (Shape{c[0] == 0 ? 3 : 2, 4, c[2] == 0 ? 4 : 3})) << "rank " << r;
    EXPECT_EQ(v.offset, (Shape{c[0] == 0 ? 0 : 3, 0, c[2] == 0 ? 0 : 4})) << "rank " << r;
  }
}

TEST(LocalView, ReplicatedMeshDimsHoldCopies) {
  // (R,S0) on 2x4: ranks r and r+4 hold the same piece.
  const DeviceMesh mesh({2, 4});
  const TensorSpec spec{{10, 3}, DType::fp32, P({R, S0})};
  for (int r = 0; r < 4; ++r) {
    EXPECT_EQ(local_view(spec, mesh, r).shape, local_view(spec, mesh, r + 4).shape);
    EXPECT_EQ(local_view(spec, mesh, r).offset, local_view(spec, mesh, r + 4).offset);
  }
}

// Every element is held by exactly prod(mesh sizes of non-Shard dims) ranks, whatever the
// placements: shards tile, replicas and partials copy.
TEST(LocalView, PiecesCoverEveryElementTheRightNumberOfTimes) {
  const std::vector<Placement> options = {R, S0, S1, Psum};
  const std::vector<std::vector<int>> meshes = {{3}, {2, 2}, {2, 3}, {3, 2}, {2, 2, 2}};
  const std::vector<Shape> shapes = {{7, 5}, {2, 3}, {9, 1}, {4, 4}};
  for (const auto& mesh_shape : meshes) {
    const DeviceMesh mesh(mesh_shape);
    std::vector<int> choice(mesh.ndim(), 0);
    for (;;) {
      Placements placements;
      int copies = 1;
      for (int d = 0; d < mesh.ndim(); ++d) {
        placements.push_back(options[choice[d]]);
        if (!options[choice[d]].is_shard()) copies *= mesh.size(d);
      }
      for (const Shape& shape : shapes) {
        const TensorSpec spec{shape, DType::fp32, placements};
        std::vector<int> count(numel(shape), 0);
        for (int r = 0; r < mesh.size(); ++r) {
          const LocalView v = local_view(spec, mesh, r);
          ASSERT_LE(v.offset[0] + v.shape[0], shape[0]);
          ASSERT_LE(v.offset[1] + v.shape[1], shape[1]);
          for (int64_t i = 0; i < v.shape[0]; ++i)
            for (int64_t j = 0; j < v.shape[1]; ++j)
              ++count[(v.offset[0] + i) * shape[1] + v.offset[1] + j];
        }
        for (size_t e = 0; e < count.size(); ++e)
          ASSERT_EQ(count[e], copies)
              << "mesh " << to_string(mesh) << " placements " << to_string(placements) << " shape "
              << to_string(shape) << " element " << e;
      }
      int d = mesh.ndim() - 1;
      while (d >= 0 && ++choice[d] == static_cast<int>(options.size())) choice[d--] = 0;
      if (d < 0) break;
    }
  }
}

TEST(LocalView, ValidatesTheSpec) {
  const DeviceMesh mesh({2, 4});
  EXPECT_THROW(local_view(TensorSpec{{6, 8}, DType::fp32, P({S0})}, mesh, 0), InvalidArgument);
  EXPECT_THROW(local_view(TensorSpec{{6, 8}, DType::fp32, P({S0, S2})}, mesh, 0), InvalidArgument);
}

TEST(LocalView, RejectsOutOfRangeRank) {
  const DeviceMesh mesh({4});
  const TensorSpec spec{{8}, DType::fp32, P({S0})};
  EXPECT_THROW(local_view(spec, mesh, 4), InvalidArgument);
  EXPECT_THROW(local_view(spec, mesh, -1), InvalidArgument);
}

// ---- max_local_bytes ----------------------------------------------------------------

TEST(MaxLocalBytes, TenByFourFp32OverFour) {
  // 3 rows x 4 cols x 4 B = 48 B
  EXPECT_EQ(max_local_bytes(TensorSpec{{10, 4}, DType::fp32, P({S0})}, DeviceMesh({4})), 48);
}

TEST(MaxLocalBytes, ReplicatedIsTheWholeTensor) {
  EXPECT_EQ(max_local_bytes(TensorSpec{{10, 4}, DType::fp32, P({R})}, DeviceMesh({4})), 160);
  EXPECT_EQ(max_local_bytes(TensorSpec{{10, 4}, DType::fp64, P({Psum})}, DeviceMesh({4})), 320);
}

TEST(MaxLocalBytes, TwoDimsShardedBf16) {
  // (S0,S1) on 2x4, 6x8 bf16: 3 x 2 x 2 B = 12 B
  EXPECT_EQ(max_local_bytes(TensorSpec{{6, 8}, DType::bf16, P({S0, S1})}, DeviceMesh({2, 4})), 12);
}

TEST(MaxLocalBytes, NestedShardingFp64) {
  // (S0,S0) on 2x2, 5x3 fp64: outer ceil(5/2)=3, inner ceil(3/2)=2 rows -> 2x3x8 = 48 B
  EXPECT_EQ(max_local_bytes(TensorSpec{{5, 3}, DType::fp64, P({S0, S0})}, DeviceMesh({2, 2})), 48);
}

TEST(MaxLocalBytes, IsAtLeastEveryRanksPiece) {
  const DeviceMesh mesh({2, 3});
  for (const Placements& placements :
       {P({S0, S1}), P({S1, S0}), P({S0, S0}), P({R, S1}), P({S1, S1})}) {
    const TensorSpec spec{{7, 5}, DType::fp16, placements};
    const int64_t most = max_local_bytes(spec, mesh);
    int64_t observed = 0;
    for (int r = 0; r < mesh.size(); ++r)
      observed = std::max(observed, local_view(spec, mesh, r).numel() * 2);
    EXPECT_EQ(most, observed) << to_string(placements);
  }
}

}  // namespace
}  // namespace symmesh
