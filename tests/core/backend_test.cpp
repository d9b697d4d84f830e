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

}  // namespace
}  // namespace symmesh
