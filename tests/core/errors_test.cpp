// The exception family: what() is "where: message (rank r)", each part optional, and
// every kind can be caught as symmesh::Error or std::runtime_error.
#include "core/errors.hpp"

#include <gtest/gtest.h>

#include <stdexcept>
#include <string>

namespace symmesh {
namespace {

TEST(Error, WhatComposesWhereMessageAndRank) {
  const Error e("peer out of range", "put_signal", 3);
  EXPECT_STREQ(e.what(), "put_signal: peer out of range (rank 3)");
}

TEST(Error, WhatWithoutRankHasNoRankSuffix) {
  const Error e("has a dim < 1", "shape");
  EXPECT_STREQ(e.what(), "shape: has a dim < 1");
}

TEST(Error, WhatWithoutWhereIsTheMessageAlone) {
  const Error e("something broke", "");
  EXPECT_STREQ(e.what(), "something broke");
}

TEST(Error, WhatWithRankButNoWhere) {
  const Error e("timed out", "", 0);
  EXPECT_STREQ(e.what(), "timed out (rank 0)");
}

TEST(Error, RankZeroIsKeptNotTreatedAsAbsent) {
  const Error e("m", "w", 0);
  ASSERT_TRUE(e.rank().has_value());
  EXPECT_EQ(*e.rank(), 0);
}

TEST(Error, AccessorsReturnThePartsUncomposed) {
  const Error e("bad value", "scenario.yaml:3:7", 5);
  EXPECT_EQ(e.message(), "bad value");
  EXPECT_EQ(e.where(), "scenario.yaml:3:7");
  ASSERT_TRUE(e.rank().has_value());
  EXPECT_EQ(*e.rank(), 5);
}

TEST(Error, RankIsAbsentByDefault) {
  const Error e("m", "w");
  EXPECT_FALSE(e.rank().has_value());
}

TEST(Error, CopiesKeepEveryPart) {
  const InvalidArgument original("m", "w", 2);
  const InvalidArgument copy = original;  // NOLINT(performance-unnecessary-copy-initialization)
  EXPECT_EQ(copy.message(), "m");
  EXPECT_EQ(copy.where(), "w");
  EXPECT_EQ(copy.rank(), std::optional<int>(2));
  EXPECT_STREQ(copy.what(), original.what());
}

TEST(Error, InvalidArgumentIsAnErrorAndARuntimeError) {
  try {
    throw InvalidArgument("bad", "arg");
  } catch (const Error& e) {
    EXPECT_EQ(e.where(), "arg");
    EXPECT_STREQ(e.what(), "arg: bad");
    return;
  }
  FAIL() << "InvalidArgument was not caught as Error";
}

TEST(Error, EveryKindIsCatchableAsRuntimeError) {
  EXPECT_THROW(throw InvalidArgument("m", "w"), std::runtime_error);
  EXPECT_THROW(throw Unsupported("m", "w"), std::runtime_error);
  EXPECT_THROW(throw Timeout("m", "w"), std::runtime_error);
  EXPECT_THROW(throw BackendError("m", "w"), std::runtime_error);
}

TEST(Error, EveryKindIsCatchableAsError) {
  EXPECT_THROW(throw InvalidArgument("m", "w"), Error);
  EXPECT_THROW(throw Unsupported("m", "w"), Error);
  EXPECT_THROW(throw Timeout("m", "w"), Error);
  EXPECT_THROW(throw BackendError("m", "w"), Error);
}

TEST(Error, KindsAreDistinct) {
  // An Unsupported must not be mistaken for an InvalidArgument (the CLI maps both to exit
  // code 2, but callers distinguish "malformed" from "well-formed but unsupported").
  bool caught_as_invalid = false;
  try {
    throw Unsupported("P(max)", "placement");
  } catch (const InvalidArgument&) {
    caught_as_invalid = true;
  } catch (const Unsupported&) {
  }
  EXPECT_FALSE(caught_as_invalid);
}

TEST(Error, SubclassesComposeWhatTheSameWay) {
  EXPECT_STREQ(Timeout("wait never satisfied", "wait_signal", 1).what(),
               "wait_signal: wait never satisfied (rank 1)");
  EXPECT_STREQ(BackendError("ncclInvalidUsage", "ncclCommInitRank").what(),
               "ncclCommInitRank: ncclInvalidUsage");
  EXPECT_STREQ(Unsupported("P(max)", "placement").what(), "placement: P(max)");
}

}  // namespace
}  // namespace symmesh
