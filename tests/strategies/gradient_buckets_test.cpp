// Gradient buckets (strategies/gradient_buckets.hpp): Megatron-Core's bucket size, the
// grouping of reductions in the order they are made, and the prices, on a cost model whose
// every collective costs 10 us plus 1 us per MB of its buffer, so each figure is worked by
// hand in the comments.
#include "strategies/gradient_buckets.hpp"

#include <gtest/gtest.h>

#include "core/errors.hpp"
#include "strategies/layout_search.hpp"

namespace symmesh::strategies {
namespace {

// 10 us + 1e-6 us per byte of the tensor as it stands (for a flat buffer Replicate or
// Partial on the moving dim: its buffer; Shard → Replicate: the gathered output).
class LinearModel : public CostModel {
 public:
  std::string name() const override { return "linear"; }
  void price(const OpProblem&, std::vector<Candidate>&) const override {}
  std::vector<double> step_costs_us(const TensorSpec& current, const std::vector<Transition>& steps,
                                    const DeviceMesh&) const override {
    std::vector<double> out;
    for (size_t k = 0; k < steps.size(); ++k)
      out.push_back(10.0 + 1e-6 * static_cast<double>(current.size_bytes()));
    return out;
  }
};

constexpr int64_t kMillion = 1'000'000;

// Mesh [dp 8, tp 2] on nodes of 8 GPUs: dp's groups span nodes (link class 2), tp's do not.
const DeviceMesh kMesh({8, 2}, {"dp", "tp"});

Redistribution all_reduce(int64_t bf16_elements, std::vector<int> dims) {
  Redistribution r;
  for (int d : dims) {
    r.steps.push_back({d, Placement::partial(), Placement::replicate(),
                       CollectiveKind::all_reduce, 0, 2 * bf16_elements});
  }
  return r;
}

// Op k (a wgrad, stage 0) makes the gradient of parameter k: tensors 2k (the parameter,
// read by op 10 + k) and 2k + 1 (its gradient).
struct Step {
  DataflowGraph graph;
  StepLayout layout;
};

Step step_of(const std::vector<std::pair<int64_t, std::vector<int>>>& gradients) {
  Step s;
  for (size_t k = 0; k < gradients.size(); ++k) {
    GraphTensor param;
    param.name = "w" + std::to_string(k);
    param.kind = GraphTensor::Kind::parameter;
    param.consumers = {static_cast<int>(10 + k)};
    GraphTensor grad;
    grad.name = "w" + std::to_string(k) + ".grad";
    grad.kind = GraphTensor::Kind::gradient;
    grad.of = static_cast<TensorId>(2 * k);
    s.graph.tensors.push_back(param);
    s.graph.tensors.push_back(grad);
    GraphOp op;
    op.name = "op" + std::to_string(k);
    op.pass = Pass::wgrad;
    s.graph.ops.push_back(op);
    GradientReduction r;
    r.parameter = static_cast<TensorId>(2 * k);
    r.gradient = static_cast<TensorId>(2 * k + 1);
    r.after_op = static_cast<int>(k);
    r.redistribution = all_reduce(gradients[k].first, gradients[k].second);
    // The share the search charged, as if each were alone (what apply_buckets takes off).
    for (const RedistributionStep& st : r.redistribution.steps)
      r.step_cost_us.push_back(10.0 + 1e-6 * static_cast<double>(st.buffer_bytes));
    s.layout.reductions.push_back(r);
  }
  s.layout.timings.assign(s.graph.ops.size(), OpTiming{});
  for (const GradientReduction& r : s.layout.reductions) {
    OpTiming& t = s.layout.timings[r.after_op];
    t.reduction_us = r.cost_us();
    t.reduction_link_us[1] = r.cost_us();
    t.reduction_links = 2;
  }
  return s;
}

TEST(GradientBuckets, MegatronsDefaultSizeGrowsWithTheDataParallelRanks) {
  // max(40 M, 1 M x dp) parameters (Megatron-Core's DistributedDataParallelConfig).
  EXPECT_EQ(bucket_parameters(1), 40 * kMillion);
  EXPECT_EQ(bucket_parameters(8), 40 * kMillion);
  EXPECT_EQ(bucket_parameters(40), 40 * kMillion);
  EXPECT_EQ(bucket_parameters(64), 64 * kMillion);
  EXPECT_EQ(bucket_parameters(1024), 1024 * kMillion);
}

TEST(GradientBuckets, GradientsFillBucketsInTheOrderMadeAndAlikeOnly) {
  // Over dp (8 ranks: buckets of 40 M): 30 M, 20 M — full at 50 M, closed after op 1; a 1 M
  // norm-like gradient all-reduced over tp then dp travels apart; 5 M over dp opens the next
  // bucket, which the end of the backward closes after op 3.
  Step s = step_of({{30 * kMillion, {0}}, {20 * kMillion, {0}}, {kMillion, {1, 0}},
                    {5 * kMillion, {0}}});
  LinearModel model;
  BucketPricer pricer(model, kMesh);
  const std::vector<GradientBucket> buckets =
      bucket_gradients(s.graph, s.layout.reductions, pricer);
  ASSERT_EQ(buckets.size(), 3u);
  EXPECT_EQ(buckets[0].members, (std::vector<int>{0, 1}));
  EXPECT_EQ(buckets[0].after_op, 1);
  EXPECT_EQ(buckets[0].first_reader, 10);  // w0's reader, op 10, before w1's (op 11)
  ASSERT_EQ(buckets[0].steps.size(), 1u);
  EXPECT_EQ(buckets[0].steps[0].buffer_bytes, 100 * kMillion);  // 50 M bf16
  // One collective of 100 MB: 10 + 100 = 110 us (alone they were 70 + 50 = 120 us).
  EXPECT_DOUBLE_EQ(buckets[0].reduction_us(), 110);
  EXPECT_EQ(buckets[1].members, (std::vector<int>{2}));
  EXPECT_EQ(buckets[1].after_op, 2);
  EXPECT_EQ(buckets[1].steps.size(), 2u);  // over tp, then over dp
  // Each step 10 + 2 = 12 us.
  EXPECT_DOUBLE_EQ(buckets[1].reduction_us(), 24);
  EXPECT_EQ(buckets[2].members, (std::vector<int>{3}));
  EXPECT_EQ(buckets[2].after_op, 3);
  EXPECT_DOUBLE_EQ(buckets[2].reduction_us(), 20);  // 10 + 10 MB
}

TEST(GradientBuckets, BucketsOfTheLargerGroupsHoldMore) {
  // Over dp 8 and tp 2 (16 ranks) the bucket is still 40 M; four 12 M gradients fill it at
  // the fourth (48 M), not the third (36 M).
  Step s = step_of({{12 * kMillion, {1, 0}}, {12 * kMillion, {1, 0}}, {12 * kMillion, {1, 0}},
                    {12 * kMillion, {1, 0}}});
  LinearModel model;
  BucketPricer pricer(model, kMesh);
  const std::vector<GradientBucket> buckets =
      bucket_gradients(s.graph, s.layout.reductions, pricer);
  ASSERT_EQ(buckets.size(), 1u);
  EXPECT_EQ(buckets[0].members.size(), 4u);
  EXPECT_EQ(buckets[0].after_op, 3);
}

TEST(GradientBuckets, ASmallGradientIsRankedAtItsShareOfAFullBucket) {
  LinearModel model;
  BucketPricer pricer(model, kMesh);
  // 10 M bf16 over dp 8: four fill a 40 M bucket of 80 MB, priced 10 + 80 = 90 us; its
  // share 22.5 us, where alone it costs 10 + 20 = 30 us.
  const Redistribution small = all_reduce(10 * kMillion, {0});
  EXPECT_DOUBLE_EQ(pricer.share_costs_us(small, DType::bf16, {30.0}).at(0), 22.5);
  // 50 M fills a bucket alone: its own price.
  const Redistribution large = all_reduce(50 * kMillion, {0});
  EXPECT_DOUBLE_EQ(pricer.share_costs_us(large, DType::bf16, {110.0}).at(0), 110.0);
}

TEST(GradientBuckets, ASmallModelsShareIsOfTheBucketItsParametersFill) {
  LinearModel model;
  BucketPricer pricer(model, kMesh);
  // A stage of 20 M parameters fills no 40 M bucket: a 10 M gradient is half of its one
  // bucket of 40 MB, (10 + 40) / 2 = 25 us.
  pricer.bound_elements(20 * kMillion);
  const Redistribution small = all_reduce(10 * kMillion, {0});
  EXPECT_DOUBLE_EQ(pricer.share_costs_us(small, DType::bf16, {30.0}).at(0), 25.0);
}

TEST(GradientBuckets, ABucketsWholePriceGoesToTheOpThatClosesIt) {
  Step s = step_of({{30 * kMillion, {0}}, {20 * kMillion, {0}}, {kMillion, {1, 0}},
                    {5 * kMillion, {0}}});
  LinearModel model;
  BucketPricer pricer(model, kMesh);
  apply_buckets(s.graph, kMesh, 8, s.layout, pricer);
  ASSERT_EQ(s.layout.buckets.size(), 3u);
  // Op 0's gradient waits in its bucket; op 1 closes it: 110 us, all between nodes (dp).
  EXPECT_DOUBLE_EQ(s.layout.timings[0].reduction_us, 0);
  EXPECT_EQ(s.layout.timings[0].reduction_links, 0u);
  EXPECT_DOUBLE_EQ(s.layout.timings[1].reduction_us, 110);
  EXPECT_DOUBLE_EQ(s.layout.timings[1].reduction_link_us[1], 110);
  EXPECT_EQ(s.layout.timings[1].reduction_links, 2u);
  // Op 2: 12 us over tp (within a node) and 12 us over dp.
  EXPECT_DOUBLE_EQ(s.layout.timings[2].reduction_link_us[0], 12);
  EXPECT_DOUBLE_EQ(s.layout.timings[2].reduction_link_us[1], 12);
  EXPECT_EQ(s.layout.timings[2].reduction_links, 3u);
  EXPECT_DOUBLE_EQ(s.layout.timings[3].reduction_us, 20);
}

TEST(GradientBuckets, OnlyTheCollectivesOfABucketArePriced) {
  LinearModel model;
  BucketPricer pricer(model, kMesh);
  EXPECT_THROW(pricer.step_cost_us(CollectiveKind::all_to_all, 0, DType::bf16, 1024),
               InvalidArgument);
  // A flat buffer is priced whole: 8 MB all-gathered over dp, 10 + 8 us.
  EXPECT_DOUBLE_EQ(pricer.step_cost_us(CollectiveKind::all_gather, 0, DType::bf16, 8 * kMillion),
                   18);
}

}  // namespace
}  // namespace symmesh::strategies
