// The run request's collectives choice, parsed once for every command: one-sided, nccl, or
// nccl for the named workload ops only.
#include "core/backend.hpp"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "core/errors.hpp"

namespace symmesh {
namespace {

using ::testing::HasSubstr;

TEST(CollectivesChoice, ParsesTheThreeForms) {
  EXPECT_FALSE(parse_collectives("one-sided").native);
  EXPECT_FALSE(parse_collectives("one_sided").native);
  const CollectivesChoice all = parse_collectives("nccl");
  EXPECT_TRUE(all.native);
  EXPECT_TRUE(all.ops.empty());
  const CollectivesChoice some = parse_collectives("nccl:grads,qkv");
  EXPECT_EQ(some.ops, (std::vector<std::string>{"grads", "qkv"}));
  EXPECT_EQ(some.to_string(), "nccl:grads,qkv");
  EXPECT_EQ(some.kind(), "nccl");
  EXPECT_EQ(all.to_string(), "nccl");
  EXPECT_EQ(CollectivesChoice{}.to_string(), "one-sided");
}

TEST(CollectivesChoice, AnythingElseNamesTheOptionAndTheForms) {
  for (const char* bad : {"mpi", "native", "one-sided:a", "nccl:", "nccl:a,,b", "nccl:a,", ""}) {
    try {
      parse_collectives(bad);
      ADD_FAILURE() << "accepted '" << bad << "'";
    } catch (const InvalidArgument& e) {
      EXPECT_EQ(e.where(), "--collectives") << bad;
      EXPECT_THAT(e.message(), HasSubstr("expected one-sided, nccl or nccl:NAME,NAME")) << bad;
    }
  }
}

CollectiveRecord record_of(CollectiveOp op, CollectiveAlgorithm algorithm, std::string name) {
  CollectiveRecord r;
  r.op = op;
  r.algorithm = algorithm;
  r.name = std::move(name);
  return r;
}

TEST(CollectivesChoice, HandsToNcclOnlyPlainCollectivesOfTheNamedOps) {
  const auto grads = record_of(CollectiveOp::all_reduce, CollectiveAlgorithm::ring, "grads");
  const auto qkv = record_of(CollectiveOp::all_gather, CollectiveAlgorithm::ring, "qkv");
  // A fused all-gather-matmul has no NCCL equivalent: it stays one-sided under "nccl" too.
  const auto fused =
      record_of(CollectiveOp::allgather_matmul, CollectiveAlgorithm::fused_ring, "grads");
  const CollectivesChoice one_sided = parse_collectives("one-sided");
  const CollectivesChoice all = parse_collectives("nccl");
  const CollectivesChoice some = parse_collectives("nccl:grads");
  EXPECT_FALSE(one_sided.hands_to_library(grads));
  EXPECT_TRUE(all.hands_to_library(grads));
  EXPECT_TRUE(all.hands_to_library(qkv));
  EXPECT_FALSE(all.hands_to_library(fused));
  EXPECT_TRUE(some.hands_to_library(grads));
  EXPECT_FALSE(some.hands_to_library(qkv));
  EXPECT_EQ(some.implementation_of(grads), "nccl");
  EXPECT_EQ(some.implementation_of(qkv), "ring");
  EXPECT_EQ(all.implementation_of(fused), "fused ring");
}

TEST(CountCollectives, ByKindAndImplementationInFirstAppearanceOrder) {
  std::vector<CollectiveRecord> records = {
      record_of(CollectiveOp::all_gather, CollectiveAlgorithm::ring, "a"),
      record_of(CollectiveOp::all_to_all, CollectiveAlgorithm::pairwise, "b"),
      record_of(CollectiveOp::all_gather, CollectiveAlgorithm::ring, "c"),
  };
  records[0].bytes = 100;
  records[2].bytes = 20;
  const CollectivesChoice only_c = parse_collectives("nccl:c");
  const auto counts = count_collectives(
      records, [&](const CollectiveRecord& r) { return only_c.implementation_of(r); });
  ASSERT_EQ(counts.size(), 3u);
  EXPECT_EQ(counts[0].op, CollectiveOp::all_gather);
  EXPECT_EQ(counts[0].implementation, "ring");
  EXPECT_EQ(counts[0].count, 1);
  EXPECT_EQ(counts[0].bytes, 100);
  EXPECT_EQ(counts[1].implementation, "pairwise");
  EXPECT_EQ(counts[2].implementation, "nccl");
  EXPECT_EQ(counts[2].bytes, 20);
  const auto one_sided =
      count_collectives(records, [](const CollectiveRecord& r) { return to_string(r.algorithm); });
  ASSERT_EQ(one_sided.size(), 2u);
  EXPECT_EQ(one_sided[0].count, 2);
  EXPECT_EQ(one_sided[0].bytes, 120);
}

}  // namespace
}  // namespace symmesh
