// DTensor's communication cost model (reference §3). Expected values are the reference's
// formulas evaluated by hand (arithmetic in the comments) or by the independent restatement
// in strategy_test_support.hpp; identities come from the reference's table.
#include "strategies/dtensor_cost_model.hpp"

#include <cmath>

#include <gtest/gtest.h>

#include "core/errors.hpp"
#include "tests/strategies/strategy_test_support.hpp"

namespace symmesh::strategies {
namespace {

using namespace testing;

constexpr double kEps = 1e-9;

double cost(const TensorSpec& src, std::string_view dst, const DeviceMesh& mesh,
            int devices_per_host = 8, std::vector<double>* steps = nullptr) {
  return dtensor_redistribute_cost_us(src, pl(dst), mesh,
                                      DTensorMeshTopology::of(mesh, devices_per_host), steps);
}

// ---- topology ----

void expect_intra(const DTensorMeshTopology& t, int d) {
  EXPECT_NEAR(t.bandwidth_gb_per_s[d], 87.7, kEps) << "dim " << d;
  EXPECT_NEAR(t.latency_us[d], 0.6, kEps) << "dim " << d;
}
void expect_inter(const DTensorMeshTopology& t, int d) {
  EXPECT_NEAR(t.bandwidth_gb_per_s[d], 19.294, kEps) << "dim " << d;  // 0.22 · 87.7
  EXPECT_NEAR(t.latency_us[d], 2.7, kEps) << "dim " << d;
}

TEST(DTensorTopology, TwoByEightWithEightPerHost) {
  // Walking last → first: dim 1 product 8 ≤ 8 → intra; dim 0 product 16 > 8 → inter.
  const auto t = DTensorMeshTopology::of(DeviceMesh({2, 8}), 8);
  EXPECT_EQ(t.devices, (std::vector<int>{2, 8}));
  expect_inter(t, 0);
  expect_intra(t, 1);
}

TEST(DTensorTopology, FourByFourWithEightPerHost) {
  // dim 1: product 4 ≤ 8 → intra; dim 0: product 16 > 8 → inter (although 4 ≤ 8 alone).
  const auto t = DTensorMeshTopology::of(DeviceMesh({4, 4}), 8);
  expect_inter(t, 0);
  expect_intra(t, 1);
}

TEST(DTensorTopology, ThreeDimsAndOneDim) {
  // 2x2x2 with 4 per host: products 2, 4, 8 → intra, intra, inter (dims 2, 1, 0).
  const auto t = DTensorMeshTopology::of(DeviceMesh({2, 2, 2}), 4);
  expect_inter(t, 0);
  expect_intra(t, 1);
  expect_intra(t, 2);
  expect_intra(DTensorMeshTopology::of(DeviceMesh({8}), 8), 0);
  expect_inter(DTensorMeshTopology::of(DeviceMesh({16}), 8), 0);
}

TEST(DTensorTopology, OneDevicePerHostMakesEveryDimInterHost) {
  const auto t = DTensorMeshTopology::of(DeviceMesh({2, 2}), 1);
  expect_inter(t, 0);
  expect_inter(t, 1);
  expect_inter(DTensorMeshTopology::of(DeviceMesh({4}), 1), 0);
  // The rule is about the running product, so a trailing size-1 dim stays intra (1 ≤ 1).
  const auto t41 = DTensorMeshTopology::of(DeviceMesh({4, 1}), 1);
  expect_inter(t41, 0);
  expect_intra(t41, 1);
}

// ---- collective formulas ----

TEST(DTensorCollectives, HandComputedValues) {
  const auto t = DTensorMeshTopology::of(DeviceMesh({2, 4}), 4);  // dim 1 intra, dim 0 inter
  // AG, n=4 intra, B = 1 GiB: 6.6 + 3·0.6 + 1e6·1·3/(4·87.7) = 8.4 + 8551.88141391106
  EXPECT_NEAR(dtensor_allgather_cost_us(1.0, t, 1), 8560.28141391106, 1e-6);
  EXPECT_NEAR(dtensor_reduce_scatter_cost_us(1.0, t, 1), 8560.28141391106, 1e-6);
  // AR: 6.6 + 6·0.6 + 1e6·2·3/(4·87.7) = 10.2 + 17103.76282782212
  EXPECT_NEAR(dtensor_allreduce_cost_us(1.0, t, 1), 17113.96282782212, 1e-6);
  // AG, n=2 inter, 1 GiB: 6.6 + 2.7 + 1e6·1/(2·19.294) = 9.3 + 25914.792163366848
  EXPECT_NEAR(dtensor_allgather_cost_us(1.0, t, 0), 25924.092163366848, 1e-6);
}

TEST(DTensorCollectives, MatchTheReferenceFormulasOnAGrid) {
  for (int n : {1, 2, 3, 4, 8}) {
    const auto t = DTensorMeshTopology::of(DeviceMesh({n, n}), n);  // dim 1 intra, dim 0 inter
    for (double b : {0.0, 1e-6, 0.25, 3.0}) {
      EXPECT_NEAR(dtensor_allgather_cost_us(b, t, 1),
                  ref_allgather_us(b, n, kIntraGbPerS, kIntraHopUs), 1e-9);
      EXPECT_NEAR(dtensor_reduce_scatter_cost_us(b, t, 1),
                  ref_reduce_scatter_us(b, n, kIntraGbPerS, kIntraHopUs), 1e-9);
      EXPECT_NEAR(dtensor_allreduce_cost_us(b, t, 1),
                  ref_allreduce_us(b, n, kIntraGbPerS, kIntraHopUs), 1e-9);
      if (n > 1) {  // with n = 1 the product 1 ≤ 1 keeps dim 0 intra
        EXPECT_NEAR(dtensor_allgather_cost_us(b, t, 0),
                    ref_allgather_us(b, n, kInterGbPerS, kInterHopUs), 1e-9);
        EXPECT_NEAR(dtensor_allreduce_cost_us(b, t, 0),
                    ref_allreduce_us(b, n, kInterGbPerS, kInterHopUs), 1e-9);
      }
    }
  }
}

// ---- redistribute_cost ----

// (1024,1024) fp32 = 4 MiB = 1/256 GiB on a 1-D mesh of 4, 8 per host (intra).
const DeviceMesh kMesh4({4});
const Shape kSquare{1024, 1024};

TEST(DTensorRedistributeCost, SameSpecIsFree) {
  for (const char* p : {"R", "S(0)", "S(1)", "P(sum)", "P(avg)"})
    EXPECT_EQ(cost(tensor(kSquare, p), p, kMesh4), 0.0) << p;
  const DeviceMesh m22({2, 2});
  for (const char* p : {"S(0),S(0)", "P(sum),S(1)", "P(avg),P(sum)"})
    EXPECT_EQ(cost(tensor(kSquare, p), p, m22), 0.0) << p;
}

TEST(DTensorRedistributeCost, ReplicatedSourceIsFreeWhateverTheTarget) {
  for (const char* p : {"R", "S(0)", "S(1)", "P(sum)", "P(avg)"})
    EXPECT_EQ(cost(tensor(kSquare, "R"), p, kMesh4, 1), 0.0) << p;
  EXPECT_EQ(cost(tensor(kSquare, "R,R"), "S(0),P(avg)", DeviceMesh({2, 2}), 1), 0.0);
}

TEST(DTensorRedistributeCost, OneDimHandComputed) {
  // S(0) → R: local 1 MiB, priced on the gathered 4 MiB:
  //   6.6 + 3·0.6 + 1e6·(4/1024)·3/(4·87.7) = 8.4 + 33.40578677309008
  EXPECT_NEAR(cost(tensor(kSquare, "S(0)"), "R", kMesh4), 41.80578677309008, 1e-9);
  // P(sum) → S(0): RS on the full 4 MiB held by each rank: the same number.
  EXPECT_NEAR(cost(tensor(kSquare, "P(sum)"), "S(0)", kMesh4), 41.80578677309008, 1e-9);
  // P(avg) → R: AR(4 MiB) = 6.6 + 6·0.6 + 2·33.40578677309008
  EXPECT_NEAR(cost(tensor(kSquare, "P(avg)"), "R", kMesh4), 77.01157354618016, 1e-9);
  // S(0) → S(1): AG on the local 1 MiB + 1: 6.6 + 1.8 + 8.35144669327252 + 1
  EXPECT_NEAR(cost(tensor(kSquare, "S(0)"), "S(1)", kMesh4), 17.75144669327252, 1e-9);
}

TEST(DTensorRedistributeCost, AShardOnASizeOneDimAloneTakesTheDirectPath) {
  // Mesh [1, 4], 4 MiB (S(0), P(sum)) -> (R, S(0)). num_shards = 1, so PyTorch skips the
  // misalignment pass: dim 0 S(0)->R on one device (6.6 us base latency, no hops, no
  // bytes — priced, though nothing runs), then dim 1 P->S(0), a reduce-scatter of the
  // full 4 MiB: 6.6 + 3·0.6 + 33.40578677309008 (as in OneDimHandComputed). With the pass
  // it would have been an all-reduce (77.01 us) first.
  std::vector<double> steps;
  EXPECT_NEAR(cost(tensor(kSquare, "S(0),P(sum)"), "R,S(0)", DeviceMesh({1, 4}), 8, &steps),
              6.6 + 41.80578677309008, 1e-9);
  ASSERT_EQ(steps.size(), 2u);
  EXPECT_NEAR(steps[0], 6.6, 1e-9);
  EXPECT_NEAR(steps[1], 41.80578677309008, 1e-9);
}

TEST(DTensorRedistributeCost, AllGatherEqualsReduceScatterForTheSameBytes) {
  // S→R is priced on the gathered size n·B_local = the full tensor; P→S on the full tensor.
  for (const Shape& s : {Shape{1024, 1024}, Shape{10, 7}, Shape{4096, 3}})
    EXPECT_DOUBLE_EQ(cost(tensor(s, "S(0)"), "R", kMesh4),
                     cost(tensor(s, "P(sum)"), "S(1)", kMesh4));
}

TEST(DTensorRedistributeCost, AllReducePlusOneIsBelowAllGatherPlusReduceScatter) {
  // AR = AG + RS − 6.6 for the same B, so AR + 1 < AG + RS.
  const double ar = cost(tensor(kSquare, "P(sum)"), "R", kMesh4);
  const double rs = cost(tensor(kSquare, "P(sum)"), "S(0)", kMesh4);
  const double ag = cost(tensor(kSquare, "S(0)"), "R", kMesh4);
  EXPECT_LT(ar + 1.0, ag + rs);
  EXPECT_NEAR(ar, ag + rs - 6.6, 1e-9);
}

TEST(DTensorRedistributeCost, ImpossibleTransitionsAreInfinite) {
  EXPECT_TRUE(std::isinf(cost(tensor(kSquare, "S(0)"), "P(sum)", kMesh4)));
  EXPECT_TRUE(std::isinf(cost(tensor(kSquare, "S(1)"), "P(avg)", kMesh4)));
  EXPECT_TRUE(std::isinf(cost(tensor(kSquare, "P(sum)"), "P(avg)", kMesh4)));
  EXPECT_TRUE(std::isinf(cost(tensor(kSquare, "P(avg)"), "P(sum)", kMesh4)));
  // One impossible step makes the whole redistribution impossible: (S0,R) → (P,R) has the
  // single step dim 0 S0→P.
  EXPECT_TRUE(std::isinf(cost(tensor(kSquare, "S(0),R"), "P(sum),R", DeviceMesh({2, 2}))));
  // (S0,R) → (R,P) is not: dim 1 R→P (free), then dim 0 S0→R (a gather of 4 MiB, n = 2).
  EXPECT_NEAR(cost(tensor(kSquare, "S(0),R"), "R,P(sum)", DeviceMesh({2, 2})),
              ref_allgather_us(4.0 / 1024, 2, kIntraGbPerS, kIntraHopUs), 1e-9);
}

TEST(DTensorRedistributeCost, UndoingNestedShardingCostsMore) {
  // (16,16) fp32 = 1024 bytes on 2x2 (intra); local 256 bytes.
  const DeviceMesh m22({2, 2});
  const auto src = tensor({16, 16}, "S(0),S(0)");
  // (S0,S0) → (S0,R): dim 1 S0→R, gathered 512 bytes: AG_1(512 B).
  const double ag512 = ref_allgather_us(gib(512), 2, kIntraGbPerS, kIntraHopUs);
  const double ag1024 = ref_allgather_us(gib(1024), 2, kIntraGbPerS, kIntraHopUs);
  std::vector<double> steps;
  EXPECT_NEAR(cost(src, "S(0),R", m22, 8, &steps), ag512, 1e-12);
  EXPECT_EQ(steps.size(), 1u);
  // (S0,S0) → (R,S0): dim 1 S0→R (512 B), dim 0 S0→R (1024 B), dim 1 R→S0 (free).
  steps.clear();
  EXPECT_NEAR(cost(src, "R,S(0)", m22, 8, &steps), ag512 + ag1024, 1e-12);
  ASSERT_EQ(steps.size(), 3u);
  EXPECT_NEAR(steps[0], ag512, 1e-12);
  EXPECT_NEAR(steps[1], ag1024, 1e-12);
  EXPECT_EQ(steps[2], 0.0);
  EXPECT_GT(cost(src, "R,S(0)", m22), cost(src, "S(0),R", m22));
}

TEST(DTensorRedistributeCost, ReplicateToShardDividesTheBytesOfLaterSteps) {
  // (R,P) → (S0,R) on 2x2, (64,64) fp32 = 16384 bytes, no shard in the source: steps outer
  // → inner: dim 0 R→S0 (free, B 16384 → 8192), dim 1 P→R: AR_1(8192 bytes).
  const DeviceMesh m22({2, 2});
  const double ar_half = ref_allreduce_us(gib(8192), 2, kIntraGbPerS, kIntraHopUs);
  const double ar_full = ref_allreduce_us(gib(16384), 2, kIntraGbPerS, kIntraHopUs);
  EXPECT_NEAR(cost(tensor({64, 64}, "R,P(sum)"), "S(0),R", m22), ar_half, 1e-12);
  EXPECT_LT(ar_half, ar_full);
  // (R,S1,R) → (S1,R,S0) on 2x2x2, (64,128) fp32 = 32768 bytes, sharded 2 ways: B0 = 16384.
  // Inner → outer: dim 2 R→S0 (free, B → 8192), dim 1 S1→R gathers 2·8192 = 16384 bytes,
  // dim 0 R→S1 (free). Without the halving it would be AG(32768 bytes).
  const double ag16k = ref_allgather_us(gib(16384), 2, kIntraGbPerS, kIntraHopUs);
  EXPECT_NEAR(cost(tensor({64, 128}, "R,S(1),R"), "S(1),R,S(0)", DeviceMesh({2, 2, 2})), ag16k,
              1e-12);
}

TEST(DTensorRedistributeCost, PartialToShardDividesTheBytesOfLaterSteps) {
  // (P,P) → (S0,R) on 2x2, 16384 bytes: dim 0 P→S0: RS_0(16384 B), B → 8192;
  // dim 1 P→R: AR_1(8192 B).
  const DeviceMesh m22({2, 2});
  const double expected = ref_reduce_scatter_us(gib(16384), 2, kIntraGbPerS, kIntraHopUs) +
                          ref_allreduce_us(gib(8192), 2, kIntraGbPerS, kIntraHopUs);
  EXPECT_NEAR(cost(tensor({64, 64}, "P(sum),P(sum)"), "S(0),R", m22), expected, 1e-12);
}

TEST(DTensorRedistributeCost, InterHostDimsUseInterHostNumbers) {
  // 2x8 with 8 per host: dim 0 is inter-host. (1024,1024) fp32, S(0) on dim 0: local 2 MiB,
  // gathered 4 MiB: 6.6 + 2.7 + 1e6·(4/1024)/(2·19.294) = 9.3 + 101.2296…
  const DeviceMesh m28({2, 8});
  const double inter = ref_allgather_us(4.0 / 1024, 2, kInterGbPerS, kInterHopUs);
  EXPECT_NEAR(inter, 9.3 + 1e6 * (4.0 / 1024) / (2 * 19.294), 1e-9);
  EXPECT_NEAR(cost(tensor(kSquare, "S(0),R"), "R,R", m28), inter, 1e-9);
  // Dim 1 stays intra: S(0) on dim 1, 8 ways: 6.6 + 7·0.6 + 1e6·(4/1024)·7/(8·87.7).
  EXPECT_NEAR(cost(tensor(kSquare, "R,S(0)"), "R,R", m28),
              6.6 + 7 * 0.6 + 1e6 * (4.0 / 1024) * 7 / (8 * 87.7), 1e-9);
  // The same shard with every device on its own host costs the inter-host price on dim 1.
  EXPECT_NEAR(cost(tensor(kSquare, "R,S(0)"), "R,R", m28, 1),
              ref_allgather_us(4.0 / 1024, 8, kInterGbPerS, kInterHopUs), 1e-9);
}

TEST(DTensorRedistributeCost, BytesUseTheDtypeAndUnevenShapes) {
  // bf16 (10,7) = 140 bytes; S(1) over 4 ranks: B0 = 140/4 bytes, gathered 140 bytes.
  EXPECT_NEAR(cost(tensor({10, 7}, "S(1)", DType::bf16), "R", kMesh4),
              ref_allgather_us(gib(140), 4, kIntraGbPerS, kIntraHopUs), 1e-12);
  // S(0) → S(1) is priced on B0 = 140/4 bytes, not on a padded chunk.
  EXPECT_NEAR(cost(tensor({10, 7}, "S(0)", DType::bf16), "S(1)", kMesh4),
              ref_allgather_us(gib(35), 4, kIntraGbPerS, kIntraHopUs) + 1.0, 1e-12);
}

TEST(DTensorCostModel, PricesEveryKeptCandidate) {
  const auto p = problem(OpKind::mm, {4}, {tensor({6, 8}, "S(0)"), tensor({8, 12}, "R")});
  auto cs = expand_candidates(p, op_single_dim_rules(p));
  DTensorCostModel(8).price(p, cs);
  // Candidate 0 [R,R,R]: a S0→R on (6,8) fp32 = 192 bytes gathered; b free.
  EXPECT_NEAR(cs[0].cost_us, ref_allgather_us(gib(192), 4, kIntraGbPerS, kIntraHopUs), 1e-12);
  EXPECT_EQ(cs[0].input_cost_us, (std::vector<double>{cs[0].cost_us, 0.0}));
  // Candidate 4 [P,P,R]: a S0 → P(sum) is impossible.
  EXPECT_TRUE(std::isinf(cs[4].cost_us));
  // Candidate 2 [S0,S0,R]: nothing moves.
  EXPECT_EQ(cs[2].cost_us, 0.0);
  for (const auto& c : cs) {
    double sum = 0;
    for (double x : c.input_cost_us) sum += x;
    EXPECT_EQ(sum, c.cost_us) << c.index;
  }
}

TEST(DTensorCostModel, StepCostsFollowTheGivenTransitions) {
  const DTensorCostModel model(8);
  const DeviceMesh m22({2, 2});
  const auto src = tensor({16, 16}, "S(0),S(0)");
  const auto steps =
      model.step_costs_us(src, plan_transitions(src.placements, pl("R,S(0)"), m22), m22);
  ASSERT_EQ(steps.size(), 3u);
  EXPECT_NEAR(steps[0] + steps[1] + steps[2], cost(src, "R,S(0)", m22), 1e-12);
  // A replicated source prices every step at 0.
  const auto r = tensor({16, 16}, "R,R");
  EXPECT_EQ(model.step_costs_us(r, plan_transitions(r.placements, pl("S(0),P(sum)"), m22), m22),
            (std::vector<double>{0.0, 0.0}));
}

TEST(CostModelFactory, NamesAndErrors) {
  EXPECT_EQ(make_cost_model("dtensor", {8})->name(), "dtensor");
  EXPECT_THROW(make_cost_model("nope", {8}), InvalidArgument);
  // analytic prices the real topology, so it needs the cluster the mesh runs on.
  EXPECT_THROW(make_cost_model("analytic", {8}), InvalidArgument);
  EXPECT_THROW(make_cost_model("dtensor", {0}), InvalidArgument);
}

}  // namespace
}  // namespace symmesh::strategies
