// DeviceMesh: ranks laid row-major over an N-D shape (last mesh dim fastest, as
// scenario-format.md says), groups along one dim, dim names, parse_mesh and its errors.
#include "core/device_mesh.hpp"

#include <gtest/gtest.h>

#include "tests/thrown.hpp"

#include <set>
#include <string>
#include <vector>

#include "core/errors.hpp"

namespace symmesh {
namespace {

using testing::thrown;

// Row-major coordinates written out independently of the implementation: the last dim
// varies fastest, so coord[d] = (rank / prod(shape[d+1:])) % shape[d].
std::vector<int> row_major_coords(const std::vector<int>& shape, int rank) {
  std::vector<int> coords(shape.size());
  for (size_t d = 0; d < shape.size(); ++d) {
    int inner = 1;
    for (size_t j = d + 1; j < shape.size(); ++j) inner *= shape[j];
    coords[d] = (rank / inner) % shape[d];
  }
  return coords;
}

void expect_row_major(const std::vector<int>& shape) {
  const DeviceMesh mesh(shape);
  int expected_size = 1;
  for (int n : shape) expected_size *= n;
  ASSERT_EQ(mesh.size(), expected_size);
  for (int r = 0; r < mesh.size(); ++r) {
    EXPECT_EQ(mesh.coordinates(r), row_major_coords(shape, r)) << "rank " << r;
    EXPECT_EQ(mesh.rank(mesh.coordinates(r)), r) << "rank " << r;
  }
}

// ---- shape and size -----------------------------------------------------------------

TEST(DeviceMesh, ShapeSizeAndNdim) {
  const DeviceMesh mesh({2, 3, 4});
  EXPECT_EQ(mesh.ndim(), 3);
  EXPECT_EQ(mesh.size(), 24);
  EXPECT_EQ(mesh.size(0), 2);
  EXPECT_EQ(mesh.size(1), 3);
  EXPECT_EQ(mesh.size(2), 4);
  EXPECT_EQ(mesh.shape(), (std::vector<int>{2, 3, 4}));
  EXPECT_TRUE(mesh.dim_names().empty());
}

TEST(DeviceMesh, SizeOfOutOfRangeDimThrows) {
  const DeviceMesh mesh({2, 4});
  EXPECT_THROW(mesh.size(2), InvalidArgument);
  EXPECT_THROW(mesh.size(-1), InvalidArgument);
}

TEST(DeviceMesh, SingleRankMesh) {
  const DeviceMesh mesh({1});
  EXPECT_EQ(mesh.size(), 1);
  EXPECT_EQ(mesh.coordinates(0), (std::vector<int>{0}));
  EXPECT_EQ(mesh.group_ranks(0, 0), (std::vector<int>{0}));
}

// ---- rank <-> coordinates -----------------------------------------------------------

TEST(DeviceMesh, OneDimCoordinatesAreTheRank) {
  const DeviceMesh mesh({8});
  for (int r = 0; r < 8; ++r) EXPECT_EQ(mesh.coordinates(r), (std::vector<int>{r}));
  expect_row_major({8});
}

TEST(DeviceMesh, TwoByFourIsRowMajor) {
  const DeviceMesh mesh({2, 4});
  // rank = 4*c0 + c1
  EXPECT_EQ(mesh.coordinates(0), (std::vector<int>{0, 0}));
  EXPECT_EQ(mesh.coordinates(3), (std::vector<int>{0, 3}));
  EXPECT_EQ(mesh.coordinates(4), (std::vector<int>{1, 0}));
  EXPECT_EQ(mesh.coordinates(5), (std::vector<int>{1, 1}));
  EXPECT_EQ(mesh.coordinates(7), (std::vector<int>{1, 3}));
  EXPECT_EQ(mesh.rank({1, 2}), 6);
  expect_row_major({2, 4});
}

TEST(DeviceMesh, TwoByTwoByTwoIsBinary) {
  const DeviceMesh mesh({2, 2, 2});
  // rank = 4*c0 + 2*c1 + c2: the coordinates are the rank's bits, most significant first.
  for (int r = 0; r < 8; ++r)
    EXPECT_EQ(mesh.coordinates(r), (std::vector<int>{(r >> 2) & 1, (r >> 1) & 1, r & 1}));
  expect_row_major({2, 2, 2});
}

TEST(DeviceMesh, FourDimMesh) {
  const DeviceMesh mesh({2, 3, 2, 2});
  // strides 12, 4, 2, 1: rank 23 = 12 + 2*4 + 2 + 1 -> (1,2,1,1); 17 = 12 + 4 + 1 -> (1,1,0,1)
  EXPECT_EQ(mesh.coordinates(23), (std::vector<int>{1, 2, 1, 1}));
  EXPECT_EQ(mesh.coordinates(17), (std::vector<int>{1, 1, 0, 1}));
  EXPECT_EQ(mesh.rank({0, 2, 1, 0}), 10);  // 2*4 + 1*2
  expect_row_major({2, 3, 2, 2});
}

TEST(DeviceMesh, UnevenShapesAreRowMajor) {
  expect_row_major({3, 5});
  expect_row_major({5, 1, 3});
  expect_row_major({1, 7});
  expect_row_major({4, 2, 3});
}

TEST(DeviceMesh, CoordinatesOfOutOfRangeRankThrow) {
  const DeviceMesh mesh({2, 4});
  EXPECT_THROW(mesh.coordinates(8), InvalidArgument);
  EXPECT_THROW(mesh.coordinates(-1), InvalidArgument);
}

TEST(DeviceMesh, RankOfOutOfRangeCoordinatesThrows) {
  const DeviceMesh mesh({2, 4});
  EXPECT_THROW(mesh.rank({2, 0}), InvalidArgument);
  EXPECT_THROW(mesh.rank({0, 4}), InvalidArgument);
  EXPECT_THROW(mesh.rank({-1, 0}), InvalidArgument);
  EXPECT_THROW(mesh.rank({0, -1}), InvalidArgument);
}

TEST(DeviceMesh, RankWithWrongCoordinateCountThrows) {
  const DeviceMesh mesh({2, 4});
  EXPECT_THROW(mesh.rank({1}), InvalidArgument);
  EXPECT_THROW(mesh.rank({0, 0, 0}), InvalidArgument);
  EXPECT_THROW(mesh.rank({}), InvalidArgument);
}

// ---- groups -------------------------------------------------------------------------

TEST(DeviceMesh, GroupRanksOnTwoByFour) {
  const DeviceMesh mesh({2, 4});
  EXPECT_EQ(mesh.group_ranks(5, 0), (std::vector<int>{1, 5}));
  EXPECT_EQ(mesh.group_ranks(5, 1), (std::vector<int>{4, 5, 6, 7}));
  EXPECT_EQ(mesh.group_ranks(0, 0), (std::vector<int>{0, 4}));
  EXPECT_EQ(mesh.group_ranks(2, 1), (std::vector<int>{0, 1, 2, 3}));
}

TEST(DeviceMesh, GroupRanksOnTwoByTwoByTwo) {
  const DeviceMesh mesh({2, 2, 2});
  // rank 5 = (1,0,1): vary dim 0 -> (0,0,1)=1,(1,0,1)=5; dim 1 -> 5,(1,1,1)=7; dim 2 -> 4,5
  EXPECT_EQ(mesh.group_ranks(5, 0), (std::vector<int>{1, 5}));
  EXPECT_EQ(mesh.group_ranks(5, 1), (std::vector<int>{5, 7}));
  EXPECT_EQ(mesh.group_ranks(5, 2), (std::vector<int>{4, 5}));
}

TEST(DeviceMesh, GroupRanksOnFourDimMesh) {
  const DeviceMesh mesh({2, 3, 2, 2});
  // rank 17 = (1,1,0,1), strides 12,4,2,1.
  EXPECT_EQ(mesh.group_ranks(17, 0), (std::vector<int>{5, 17}));
  EXPECT_EQ(mesh.group_ranks(17, 1), (std::vector<int>{13, 17, 21}));
  EXPECT_EQ(mesh.group_ranks(17, 2), (std::vector<int>{17, 19}));
  EXPECT_EQ(mesh.group_ranks(17, 3), (std::vector<int>{16, 17}));
}

TEST(DeviceMesh, GroupRanksAreInCoordinateOrderAndDifferOnlyAlongTheDim) {
  const DeviceMesh mesh({3, 2, 4});
  for (int r = 0; r < mesh.size(); ++r) {
    for (int d = 0; d < mesh.ndim(); ++d) {
      const auto group = mesh.group_ranks(r, d);
      ASSERT_EQ(static_cast<int>(group.size()), mesh.size(d));
      const auto mine = mesh.coordinates(r);
      for (int i = 0; i < mesh.size(d); ++i) {
        auto expected = mine;
        expected[d] = i;
        EXPECT_EQ(mesh.coordinates(group[i]), expected) << "rank " << r << " dim " << d;
      }
    }
  }
}

TEST(DeviceMesh, GroupRanksWithBadArgumentsThrow) {
  const DeviceMesh mesh({2, 4});
  EXPECT_THROW(mesh.group_ranks(8, 0), InvalidArgument);
  EXPECT_THROW(mesh.group_ranks(-1, 0), InvalidArgument);
  EXPECT_THROW(mesh.group_ranks(0, 2), InvalidArgument);
  EXPECT_THROW(mesh.group_ranks(0, -1), InvalidArgument);
}

TEST(DeviceMesh, GroupsOnTwoByFour) {
  const DeviceMesh mesh({2, 4});
  EXPECT_EQ(mesh.groups(0), (std::vector<std::vector<int>>{{0, 4}, {1, 5}, {2, 6}, {3, 7}}));
  EXPECT_EQ(mesh.groups(1), (std::vector<std::vector<int>>{{0, 1, 2, 3}, {4, 5, 6, 7}}));
}

TEST(DeviceMesh, GroupsOnTwoByTwoByTwo) {
  const DeviceMesh mesh({2, 2, 2});
  EXPECT_EQ(mesh.groups(0), (std::vector<std::vector<int>>{{0, 4}, {1, 5}, {2, 6}, {3, 7}}));
  EXPECT_EQ(mesh.groups(1), (std::vector<std::vector<int>>{{0, 2}, {1, 3}, {4, 6}, {5, 7}}));
  EXPECT_EQ(mesh.groups(2), (std::vector<std::vector<int>>{{0, 1}, {2, 3}, {4, 5}, {6, 7}}));
}

TEST(DeviceMesh, GroupsPartitionTheRanks) {
  const DeviceMesh mesh({2, 3, 2, 2});
  for (int d = 0; d < mesh.ndim(); ++d) {
    const auto groups = mesh.groups(d);
    EXPECT_EQ(static_cast<int>(groups.size()), mesh.size() / mesh.size(d)) << "dim " << d;
    std::multiset<int> seen;
    for (const auto& g : groups) {
      EXPECT_EQ(static_cast<int>(g.size()), mesh.size(d));
      EXPECT_EQ(g, mesh.group_ranks(g.front(), d));
      seen.insert(g.begin(), g.end());
    }
    ASSERT_EQ(static_cast<int>(seen.size()), mesh.size());
    for (int r = 0; r < mesh.size(); ++r) EXPECT_EQ(seen.count(r), 1u) << "rank " << r;
  }
}

TEST(DeviceMesh, GroupsOfSizeOneDim) {
  const DeviceMesh mesh({1, 4});
  EXPECT_EQ(mesh.groups(0), (std::vector<std::vector<int>>{{0}, {1}, {2}, {3}}));
  EXPECT_EQ(mesh.groups(1), (std::vector<std::vector<int>>{{0, 1, 2, 3}}));
}

TEST(DeviceMesh, GroupsOfOutOfRangeDimThrows) {
  const DeviceMesh mesh({2, 4});
  EXPECT_THROW(mesh.groups(2), InvalidArgument);
  EXPECT_THROW(mesh.groups(-1), InvalidArgument);
}

// ---- names --------------------------------------------------------------------------

TEST(DeviceMesh, DimIndexByName) {
  const DeviceMesh mesh({4, 8}, {"dp", "tp"});
  EXPECT_EQ(mesh.dim_names(), (std::vector<std::string>{"dp", "tp"}));
  EXPECT_EQ(mesh.dim_index("dp"), 0);
  EXPECT_EQ(mesh.dim_index("tp"), 1);
}

TEST(DeviceMesh, DimIndexByNumericString) {
  const DeviceMesh named({4, 8}, {"dp", "tp"});
  EXPECT_EQ(named.dim_index("0"), 0);
  EXPECT_EQ(named.dim_index("1"), 1);
  const DeviceMesh unnamed({2, 2, 2});
  EXPECT_EQ(unnamed.dim_index("2"), 2);
}

TEST(DeviceMesh, DimIndexUnknownThrows) {
  const DeviceMesh mesh({4, 8}, {"dp", "tp"});
  for (const char* name : {"pp", "2", "-1", "", "1x", " 1", "DP"})
    EXPECT_THROW(mesh.dim_index(name), InvalidArgument) << "'" << name << "'";
}

TEST(DeviceMesh, DimIndexUnknownMessageNamesIt) {
  const DeviceMesh mesh({4, 8}, {"dp", "tp"});
  const auto e = thrown<InvalidArgument>([&] { mesh.dim_index("ep"); });
  EXPECT_NE(e.message().find("ep"), std::string::npos) << e.message();
}

TEST(DeviceMesh, WrongNameCountThrows) {
  EXPECT_THROW(DeviceMesh({2, 4}, {"dp"}), InvalidArgument);
  EXPECT_THROW(DeviceMesh({2, 4}, {"dp", "tp", "pp"}), InvalidArgument);
}

TEST(DeviceMesh, DuplicateNamesThrow) {
  EXPECT_THROW(DeviceMesh({2, 4}, {"tp", "tp"}), InvalidArgument);
}

TEST(DeviceMesh, EmptyNameThrows) {
  EXPECT_THROW(DeviceMesh({2, 4}, {"dp", ""}), InvalidArgument);
}

TEST(DeviceMesh, EmptyShapeThrows) {
  EXPECT_THROW(DeviceMesh(std::vector<int>{}), InvalidArgument);
}

TEST(DeviceMesh, ZeroOrNegativeSizeThrows) {
  EXPECT_THROW(DeviceMesh({0}), InvalidArgument);
  EXPECT_THROW(DeviceMesh({2, 0}), InvalidArgument);
  EXPECT_THROW(DeviceMesh({-2, 4}), InvalidArgument);
  EXPECT_THROW(DeviceMesh({4, -1, 2}), InvalidArgument);
}

TEST(DeviceMesh, RankCountBeyondIntThrows) {
  // 65536 * 65536 = 2^32 > INT_MAX.
  EXPECT_THROW(DeviceMesh({65536, 65536}), InvalidArgument);
}

TEST(DeviceMesh, EqualityComparesShapeAndNames) {
  EXPECT_EQ(DeviceMesh({2, 4}), DeviceMesh({2, 4}));
  EXPECT_NE(DeviceMesh({2, 4}), DeviceMesh({4, 2}));
  EXPECT_NE(DeviceMesh({2, 4}), DeviceMesh({2, 4}, {"dp", "tp"}));
  EXPECT_EQ(DeviceMesh({2, 4}, {"dp", "tp"}), DeviceMesh({2, 4}, {"dp", "tp"}));
}

// ---- text ---------------------------------------------------------------------------

TEST(DeviceMeshText, ToString) {
  EXPECT_EQ(to_string(DeviceMesh({8})), "8");
  EXPECT_EQ(to_string(DeviceMesh({2, 4})), "2x4");
  EXPECT_EQ(to_string(DeviceMesh({2, 4}, {"dp", "tp"})), "2x4 (dp,tp)");
}

TEST(DeviceMeshText, ParseTwoByFour) {
  const DeviceMesh mesh = parse_mesh("2x4");
  EXPECT_EQ(mesh.shape(), (std::vector<int>{2, 4}));
  EXPECT_TRUE(mesh.dim_names().empty());
}

TEST(DeviceMeshText, ParseOneDimAndThreeDim) {
  EXPECT_EQ(parse_mesh("8").shape(), (std::vector<int>{8}));
  EXPECT_EQ(parse_mesh("2x2x2").shape(), (std::vector<int>{2, 2, 2}));
  EXPECT_EQ(parse_mesh("16x1").shape(), (std::vector<int>{16, 1}));
}

TEST(DeviceMeshText, ParseRoundTrips) {
  for (const char* text : {"8", "2x4", "2x2x2", "2x3x2x2", "1x8"})
    EXPECT_EQ(to_string(parse_mesh(text)), text);
}

TEST(DeviceMeshText, ParseRejectsMalformedShapesNamingWhere) {
  for (const char* text :
       {"", "2x", "x2", "0x2", "2x0", "ax2", "2xa", "2xx4", "-2x4", "2.5x4", "2x4x"}) {
    const auto e = thrown<InvalidArgument>([&] { parse_mesh(text, "--mesh"); });
    EXPECT_EQ(e.where(), "--mesh") << "'" << text << "'";
  }
}

TEST(DeviceMeshText, ParseDefaultWhereIsMesh) {
  EXPECT_EQ(thrown<InvalidArgument>([] { parse_mesh("ax2"); }).where(), "mesh");
}

TEST(DeviceMeshText, ParseRejectsTooManyRanksNamingWhere) {
  // 65536 x 65536 = 2^32 ranks does not fit an int; still an error about `where`.
  const auto e = thrown<InvalidArgument>([] { parse_mesh("65536x65536", "--mesh"); });
  EXPECT_EQ(e.where(), "--mesh");
}

TEST(DeviceMeshText, ParseRejectsDimBeyondInt) {
  const auto e = thrown<InvalidArgument>([] { parse_mesh("99999999999x2", "--mesh"); });
  EXPECT_EQ(e.where(), "--mesh");
}

}  // namespace
}  // namespace symmesh
