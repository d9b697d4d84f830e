// Placement vocabulary (DESIGN.md "Core vocabulary"): one canonical text form
// S(d) / R / P(sum) / P(avg), a lenient parser (P = P(sum), long names, spaces), lists,
// and errors that say whether the text was malformed (InvalidArgument) or well-formed
// but unsupported (Unsupported), always naming the argument they came from.
#include "core/placement.hpp"

#include <gtest/gtest.h>

#include "tests/thrown.hpp"

#include <string>

#include "core/errors.hpp"

namespace symmesh {
namespace {

using testing::thrown;

bool contains(const std::string& text, const std::string& part) {
  return text.find(part) != std::string::npos;
}

// ---- values -------------------------------------------------------------------------

TEST(Placement, ShardKnowsItsDim) {
  const Placement p = Placement::shard(2);
  EXPECT_TRUE(p.is_shard());
  EXPECT_TRUE(p.is_shard(2));
  EXPECT_FALSE(p.is_shard(0));
  EXPECT_FALSE(p.is_replicate());
  EXPECT_FALSE(p.is_partial());
  EXPECT_EQ(p.kind(), Placement::Kind::shard);
  EXPECT_EQ(p.shard_dim(), 2);
}

TEST(Placement, ReplicateIsNeitherShardNorPartial) {
  const Placement p = Placement::replicate();
  EXPECT_TRUE(p.is_replicate());
  EXPECT_FALSE(p.is_shard());
  EXPECT_FALSE(p.is_shard(0));
  EXPECT_FALSE(p.is_partial());
  EXPECT_EQ(p.kind(), Placement::Kind::replicate);
}

TEST(Placement, PartialDefaultsToSum) {
  const Placement p = Placement::partial();
  EXPECT_TRUE(p.is_partial());
  EXPECT_EQ(p.reduce_op(), ReduceOp::sum);
  EXPECT_EQ(Placement::partial(ReduceOp::avg).reduce_op(), ReduceOp::avg);
}

TEST(Placement, NegativeShardDimIsRejected) {
  EXPECT_THROW(Placement::shard(-1), InvalidArgument);
}

TEST(Placement, ShardDimOfNonShardThrows) {
  EXPECT_THROW(Placement::replicate().shard_dim(), InvalidArgument);
  EXPECT_THROW(Placement::partial().shard_dim(), InvalidArgument);
}

TEST(Placement, ReduceOpOfNonPartialThrows) {
  EXPECT_THROW(Placement::replicate().reduce_op(), InvalidArgument);
  EXPECT_THROW(Placement::shard(0).reduce_op(), InvalidArgument);
}

TEST(Placement, EqualityComparesKindAndArgument) {
  EXPECT_EQ(Placement::shard(0), Placement::shard(0));
  EXPECT_NE(Placement::shard(0), Placement::shard(1));
  EXPECT_EQ(Placement::replicate(), Placement::replicate());
  EXPECT_EQ(Placement::partial(ReduceOp::sum), Placement::partial(ReduceOp::sum));
  EXPECT_NE(Placement::partial(ReduceOp::sum), Placement::partial(ReduceOp::avg));
  EXPECT_NE(Placement::shard(0), Placement::replicate());
  EXPECT_NE(Placement::replicate(), Placement::partial());
  EXPECT_NE(Placement::shard(0), Placement::partial());
}

// ---- canonical text -----------------------------------------------------------------

TEST(PlacementText, CanonicalForms) {
  EXPECT_EQ(to_string(Placement::shard(0)), "S(0)");
  EXPECT_EQ(to_string(Placement::shard(3)), "S(3)");
  EXPECT_EQ(to_string(Placement::shard(12)), "S(12)");
  EXPECT_EQ(to_string(Placement::replicate()), "R");
  EXPECT_EQ(to_string(Placement::partial(ReduceOp::sum)), "P(sum)");
  EXPECT_EQ(to_string(Placement::partial(ReduceOp::avg)), "P(avg)");
}

TEST(PlacementText, ReduceOpNames) {
  EXPECT_EQ(to_string(ReduceOp::sum), "sum");
  EXPECT_EQ(to_string(ReduceOp::avg), "avg");
}

TEST(PlacementText, ListIsCommaSeparatedWithoutSpaces) {
  EXPECT_EQ(to_string(Placements{Placement::shard(0), Placement::replicate()}), "S(0),R");
  EXPECT_EQ(to_string(Placements{Placement::partial(), Placement::shard(1),
                                 Placement::partial(ReduceOp::avg)}),
            "P(sum),S(1),P(avg)");
  EXPECT_EQ(to_string(Placements{Placement::replicate()}), "R");
}

// ---- parsing: accepted forms --------------------------------------------------------

TEST(PlacementParse, CanonicalForms) {
  EXPECT_EQ(parse_placement("S(0)"), Placement::shard(0));
  EXPECT_EQ(parse_placement("S(7)"), Placement::shard(7));
  EXPECT_EQ(parse_placement("R"), Placement::replicate());
  EXPECT_EQ(parse_placement("P(sum)"), Placement::partial(ReduceOp::sum));
  EXPECT_EQ(parse_placement("P(avg)"), Placement::partial(ReduceOp::avg));
}

TEST(PlacementParse, BarePIsPartialSum) {
  EXPECT_EQ(parse_placement("P"), Placement::partial(ReduceOp::sum));
}

TEST(PlacementParse, MultiDigitShardDim) {
  EXPECT_EQ(parse_placement("S(10)"), Placement::shard(10));
}

TEST(PlacementParse, LongNames) {
  EXPECT_EQ(parse_placement("Shard(0)"), Placement::shard(0));
  EXPECT_EQ(parse_placement("Shard(2)"), Placement::shard(2));
  EXPECT_EQ(parse_placement("Replicate"), Placement::replicate());
  EXPECT_EQ(parse_placement("Replicate()"), Placement::replicate());
  EXPECT_EQ(parse_placement("Partial"), Placement::partial(ReduceOp::sum));
  EXPECT_EQ(parse_placement("Partial(sum)"), Placement::partial(ReduceOp::sum));
  EXPECT_EQ(parse_placement("Partial(avg)"), Placement::partial(ReduceOp::avg));
}

TEST(PlacementParse, SpacesAnywhereAreIgnored) {
  EXPECT_EQ(parse_placement(" S(0) "), Placement::shard(0));
  EXPECT_EQ(parse_placement("S ( 1 )"), Placement::shard(1));
  EXPECT_EQ(parse_placement("  R  "), Placement::replicate());
  EXPECT_EQ(parse_placement("P( avg )"), Placement::partial(ReduceOp::avg));
  EXPECT_EQ(parse_placement("\tShard( 3 )\n"), Placement::shard(3));
}

TEST(PlacementParse, RoundTripsThroughCanonicalText) {
  for (const char* text : {"S(0)", "S(1)", "S(11)", "R", "P(sum)", "P(avg)"})
    EXPECT_EQ(to_string(parse_placement(text)), text);
}

TEST(PlacementParse, NonCanonicalInputPrintsCanonically) {
  EXPECT_EQ(to_string(parse_placement("P")), "P(sum)");
  EXPECT_EQ(to_string(parse_placement("Shard( 2 )")), "S(2)");
  EXPECT_EQ(to_string(parse_placement("Replicate()")), "R");
  EXPECT_EQ(to_string(parse_placement("Partial")), "P(sum)");
  EXPECT_EQ(to_string(parse_placement("Partial(avg)")), "P(avg)");
}

// ---- parsing: rejections ------------------------------------------------------------

TEST(PlacementParse, NegativeShardDimIsInvalid) {
  const auto e = thrown<InvalidArgument>([] { parse_placement("S(-1)", "a_placements"); });
  EXPECT_EQ(e.where(), "a_placements");
  EXPECT_TRUE(contains(e.what(), "a_placements")) << e.what();
  EXPECT_TRUE(contains(e.message(), "S(-1)")) << e.message();
}

TEST(PlacementParse, NonIntegerShardDimIsInvalid) {
  for (const char* text : {"S(x)", "S(1.5)", "S(1a)", "S(0x1)", "Shard(one)"}) {
    const auto e = thrown<InvalidArgument>([&] { parse_placement(text, "--in"); });
    EXPECT_EQ(e.where(), "--in") << text;
    EXPECT_TRUE(contains(e.what(), "--in")) << text;
  }
}

TEST(PlacementParse, ShardWithoutDimIsInvalid) {
  for (const char* text : {"S()", "S", "Shard", "Shard()", "S( )"})
    EXPECT_THROW(parse_placement(text), InvalidArgument) << text;
}

TEST(PlacementParse, ShardDimTooLargeForIntIsInvalid) {
  EXPECT_THROW(parse_placement("S(99999999999999999999)"), InvalidArgument);
}

TEST(PlacementParse, EmptyTextIsInvalid) {
  const auto e = thrown<InvalidArgument>([] { parse_placement("", "b_placements[1]"); });
  EXPECT_EQ(e.where(), "b_placements[1]");
  EXPECT_THROW(parse_placement("   "), InvalidArgument);
}

TEST(PlacementParse, UnknownNameIsInvalid) {
  for (const char* text : {"Q", "X(0)", "s(0)", "r", "p", "Sharded(0)", "(0)"})
    EXPECT_THROW(parse_placement(text), InvalidArgument) << text;
}

TEST(PlacementParse, UnknownNameMessageNamesTheInputAndWhere) {
  const auto e = thrown<InvalidArgument>([] { parse_placement("Q", "placement of a"); });
  EXPECT_EQ(e.where(), "placement of a");
  EXPECT_TRUE(contains(e.message(), "'Q'")) << e.message();
}

TEST(PlacementParse, DefaultWhereIsPlacement) {
  EXPECT_EQ(thrown<InvalidArgument>([] { parse_placement("Q"); }).where(), "placement");
}

TEST(PlacementParse, ReduceOpOtherThanSumOrAvgIsUnsupported) {
  for (const char* text : {"P(max)", "P(min)", "Partial(max)", "P(product)"}) {
    const auto e = thrown<Unsupported>([&] { parse_placement(text, "out"); });
    EXPECT_EQ(e.where(), "out") << text;
    EXPECT_TRUE(contains(e.what(), "out")) << text;
  }
}

TEST(PlacementParse, PMaxIsNotInvalidArgument) {
  // Well-formed but unsupported: must not be reported as malformed.
  bool invalid = false, unsupported = false;
  try {
    parse_placement("P(max)");
  } catch (const InvalidArgument&) {
    invalid = true;
  } catch (const Unsupported&) {
    unsupported = true;
  }
  EXPECT_FALSE(invalid);
  EXPECT_TRUE(unsupported);
}

TEST(PlacementParse, ReplicateTakesNoArgument) {
  EXPECT_THROW(parse_placement("R(0)"), InvalidArgument);
  EXPECT_THROW(parse_placement("Replicate(1)"), InvalidArgument);
}

TEST(PlacementParse, UnbalancedOrTrailingTextIsInvalid) {
  for (const char* text : {"S(0", "S0)", "S(0))", "S((0))", "S(0)x", "S(0)R", "R)", "P(sum"})
    EXPECT_THROW(parse_placement(text), InvalidArgument) << text;
}

TEST(PlacementParse, ListSyntaxIsNotASinglePlacement) {
  EXPECT_THROW(parse_placement("S(0),R"), InvalidArgument);
}

// ---- lists --------------------------------------------------------------------------

TEST(PlacementListParse, CommaSeparated) {
  EXPECT_EQ(parse_placements("S(0),R"), (Placements{Placement::shard(0), Placement::replicate()}));
}

TEST(PlacementListParse, Bracketed) {
  EXPECT_EQ(parse_placements("[S(0), R]"),
            (Placements{Placement::shard(0), Placement::replicate()}));
  EXPECT_EQ(parse_placements(" [ P , S(1) ] "),
            (Placements{Placement::partial(), Placement::shard(1)}));
}

TEST(PlacementListParse, SingleItem) {
  EXPECT_EQ(parse_placements("S(1)"), (Placements{Placement::shard(1)}));
  EXPECT_EQ(parse_placements("[R]"), (Placements{Placement::replicate()}));
}

TEST(PlacementListParse, ThreeItemsWithLongNamesAndSpaces) {
  EXPECT_EQ(
      parse_placements("Shard(0), Replicate(), Partial(avg)"),
      (Placements{Placement::shard(0), Placement::replicate(), Placement::partial(ReduceOp::avg)}));
}

TEST(PlacementListParse, CommaInsideParenthesesDoesNotSplit) {
  // "S(0,1)" is one malformed item, not "S(0" and "1)".
  EXPECT_THROW(parse_placements("S(0,1)"), InvalidArgument);
}

TEST(PlacementListParse, RoundTrips) {
  for (const char* text : {"S(0),R", "R,S(1)", "P(sum),P(avg)", "S(0),S(0),S(1),R", "R"})
    EXPECT_EQ(to_string(parse_placements(text)), text);
}

TEST(PlacementListParse, EmptyListIsInvalid) {
  EXPECT_THROW(parse_placements(""), InvalidArgument);
  EXPECT_THROW(parse_placements("[]"), InvalidArgument);
  EXPECT_THROW(parse_placements(" [ ] "), InvalidArgument);
  EXPECT_EQ(thrown<InvalidArgument>([] { parse_placements("", "--in"); }).where(), "--in");
}

TEST(PlacementListParse, EmptyItemIsInvalidAndNamesItsIndex) {
  const auto e = thrown<InvalidArgument>([] { parse_placements("S(0),,R", "a_placements"); });
  EXPECT_TRUE(contains(e.where(), "a_placements")) << e.where();
  EXPECT_TRUE(contains(e.where(), "1")) << e.where();  // the second item
  EXPECT_TRUE(contains(e.what(), "a_placements")) << e.what();
}

TEST(PlacementListParse, LeadingOrTrailingCommaIsInvalid) {
  EXPECT_THROW(parse_placements(",S(0)"), InvalidArgument);
  EXPECT_THROW(parse_placements("S(0),"), InvalidArgument);
  EXPECT_THROW(parse_placements("[S(0),]"), InvalidArgument);
}

TEST(PlacementListParse, BadItemErrorNamesWhereAndIndex) {
  const auto e = thrown<InvalidArgument>([] { parse_placements("R,S(x)", "b_placements"); });
  EXPECT_TRUE(contains(e.where(), "b_placements")) << e.where();
  EXPECT_TRUE(contains(e.where(), "1")) << e.where();
}

TEST(PlacementListParse, UnsupportedItemStaysUnsupported) {
  const auto e = thrown<Unsupported>([] { parse_placements("R,P(max)", "out"); });
  EXPECT_TRUE(contains(e.where(), "out")) << e.where();
}

TEST(PlacementListParse, MissingCommaIsInvalid) {
  EXPECT_THROW(parse_placements("S(0) R"), InvalidArgument);
}

TEST(PlacementListParse, UnbalancedBracketIsInvalid) {
  EXPECT_THROW(parse_placements("[S(0),R"), InvalidArgument);
  EXPECT_THROW(parse_placements("S(0),R]"), InvalidArgument);
}

}  // namespace
}  // namespace symmesh
