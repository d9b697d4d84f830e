// The bound on a Program's stream ops (core/program.hpp, max_stream_ops): a collective over
// tens of thousands of ranks writes billions of ops, so it is refused — at once when even
// its lower bound (p - 1 steps of one op per member) is past the bound, else when an append
// would go past it — in real and counting Programs alike.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <chrono>
#include <cstdlib>

#include "core/collectives.hpp"
#include "core/program.hpp"

namespace symmesh {
namespace {

using ::testing::HasSubstr;

// Sets SYMMESH_MAX_STREAM_OPS for one test; the default again afterwards.
struct MaxStreamOps {
  explicit MaxStreamOps(const char* value) { setenv("SYMMESH_MAX_STREAM_OPS", value, 1); }
  ~MaxStreamOps() { unsetenv("SYMMESH_MAX_STREAM_OPS"); }
};

TEST(StreamOpBound, AnAppendPastTheBoundIsRefused) {
  const MaxStreamOps bound("2");
  Program p = Program::counting(1);
  const GroupId one = p.add_group({0});
  p.barrier(one, "main");
  p.barrier(one, "main");
  try {
    p.barrier(one, "main");
    FAIL() << "a third op went past a bound of 2";
  } catch (const TooManyStreamOps& e) {
    EXPECT_THAT(e.message(), HasSubstr("more than 2 stream operations"));
    EXPECT_THAT(e.message(), HasSubstr("SYMMESH_MAX_STREAM_OPS"));
  }
  EXPECT_EQ(p.counts().stream_ops, 2);
}

TEST(StreamOpBound, AHugeCollectiveIsRefusedBeforeItWritesAnything) {
  // 65,536 ranks (a 1-D mesh of 8,192 DGX nodes): a ring all-reduce would write some
  // 1.7e10 ops; p (p - 1) = 4.3e9 alone is past the default bound of 2^27.
  constexpr int kRanks = 65536;
  Program p = Program::counting(kRanks);
  const auto start = std::chrono::steady_clock::now();
  try {
    ring_all_reduce(p, {p.world_group(), 1 << 30, DType::bf16, ReduceOp::sum, "main", "grads"});
    FAIL() << "no error";
  } catch (const TooManyStreamOps& e) {
    EXPECT_EQ(e.where(), "grads");
    EXPECT_THAT(e.message(), HasSubstr("more than 134217728 stream operations (4294901760"));
  }
  EXPECT_EQ(p.counts().stream_ops, 0);
  EXPECT_LT(std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count(), 5.0);
}

TEST(StreamOpBound, AMalformedBoundIsRefusedNamingTheVariable) {
  const MaxStreamOps bound("lots");
  try {
    Program p(1);
    FAIL() << "no error";
  } catch (const InvalidArgument& e) {
    EXPECT_EQ(e.where(), "SYMMESH_MAX_STREAM_OPS");
  }
}

}  // namespace
}  // namespace symmesh
