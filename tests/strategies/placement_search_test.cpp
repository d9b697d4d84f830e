// The priority-queue placement search (PyTorch PR 177799) against hand-worked cases, and
// beside the full expansion. mm a 64x32, b 32x64, fp32 (8192 B each) throughout; one
// device per host, as on PyTorch's "cpu" test meshes, so every mesh dim is inter-host:
// 19.294 GB/s and 2.7 µs per hop. With B the bytes moved:
//   on 4 ranks  AG(B) = 6.6 + 3·2.7 + 1e6·(B/2^30)·(3/4)/19.294
//               AR(B) = 6.6 + 6·2.7 + 1e6·2·(B/2^30)·(3/4)/19.294
//   on 2 ranks  AG(B) = 6.6 + 2.7 + 1e6·(B/2^30)·(1/2)/19.294
// The mm rules, per mesh dim [out | a | b]: 0 R; 1 [P|S1|S0]; 2 [S0|S0|R]; 3 [S1|R|S1];
// 4 [P|P|R]; 5 [P|R|P]; 6, 7 the same with P(avg).
#include <gtest/gtest.h>

#include <cmath>
#include <string>

#include "core/errors.hpp"
#include "strategies/dtensor_cost_model.hpp"
#include "strategies/op_rules.hpp"
#include "strategies/placement_search.hpp"
#include "strategies/plan.hpp"
#include "tests/strategies/analytic_test_support.hpp"
#include "tests/strategies/strategy_test_support.hpp"

namespace symmesh::strategies {
namespace {

using namespace testing;

OpProblem mm(std::vector<int> mesh, std::string_view a, std::string_view b) {
  return problem(OpKind::mm, std::move(mesh), {tensor({64, 32}, a), tensor({32, 64}, b)});
}

Plan plan_with(const OpProblem& p, PlacementSelection selection) {
  return build_plan(p, *make_cost_model("dtensor", {1}), selection);
}

std::string inputs_text(const Candidate& c) {
  return to_string(c.input_placements[0]) + " x " + to_string(c.input_placements[1]) + " -> " +
         to_string(c.output_placements);
}

double ag4(double bytes) {
  return ref_allgather_us(gib(bytes), 4, kInterGbPerS, kInterHopUs);
}
double ag2(double bytes) {
  return ref_allgather_us(gib(bytes), 2, kInterGbPerS, kInterHopUs);
}

TEST(PlacementSearch, InputsAlreadyFormingARuleCostNothing) {
  // a S(0), b R on 4 ranks is rule 2 as it stands: the start state is the first goal.
  const Plan plan = plan_with(mm({4}, "S(0)", "R"), PlacementSelection::priority_queue);
  ASSERT_TRUE(plan.search.has_value());
  EXPECT_EQ(inputs_text(plan.chosen_candidate()), "S(0) x R -> S(0)");
  EXPECT_EQ(plan.search->cost_us, 0.0);
  EXPECT_TRUE(plan.search->path.empty());
  EXPECT_EQ(plan.search->states_popped, 1);
  EXPECT_TRUE(plan.redistributions.empty());
}

TEST(PlacementSearch, EqualCostsPopFirstInFirstOutWhereTheExpansionTakesTheFirstIndex) {
  // a S(0), b S(1) on 4 ranks form no rule. The start's hops, in order (mesh dim 0; a, then
  // b): a→R AG(8192), a→S(1) AG(2048)+1, b→R AG(8192), b→S(0) AG(2048)+1. The first two
  // pushed at AG(8192) are a→R, giving [R | S(1)] = rule 3, and b→R, giving rule 2; the
  // first pushed pops first, so the search takes rule 3. The full expansion prices rule 2
  // (b S1→R) and rule 3 (a S0→R) alike at AG(8192) and takes the lower index: rule 2.
  const OpProblem p = mm({4}, "S(0)", "S(1)");
  const Plan pq = plan_with(p, PlacementSelection::priority_queue);
  const Plan full = plan_with(p, PlacementSelection::full_expansion);
  EXPECT_EQ(inputs_text(pq.chosen_candidate()), "R x S(1) -> S(1)");
  EXPECT_EQ(inputs_text(full.chosen_candidate()), "S(0) x R -> S(0)");
  EXPECT_EQ(full.chosen, 2);
  EXPECT_EQ(pq.chosen, 3);
  ASSERT_TRUE(pq.search.has_value());
  EXPECT_NEAR(pq.search->cost_us, ag4(8192), 1e-9);  // 14.99657 µs
  EXPECT_NEAR(full.chosen_candidate().cost_us, ag4(8192), 1e-9);
  // Popped: the start, then a→R, a goal.
  EXPECT_EQ(pq.search->states_popped, 2);
  ASSERT_EQ(pq.search->path.size(), 1u);
  EXPECT_EQ(pq.search->path[0].input, 0);
  EXPECT_EQ(to_string(pq.search->path[0].from) + "->" + to_string(pq.search->path[0].to),
            "S(0)->R");
}

TEST(PlacementSearch, PartialInputsTieTheSameWay) {
  // a P, b P on 4 ranks: rules 4 [P|P|R] and 5 [P|R|P] each all-reduce one input, AR(8192)
  // = 23.393 µs. Cheaper states first (P→S reduce-scatters, 14.997 µs) are no goals, and
  // every goal beyond them costs more than 23.393; of the two all-reduces a→R was pushed
  // first, so the search keeps b Partial (rule 5), the expansion a (rule 4).
  const OpProblem p = mm({4}, "P(sum)", "P(sum)");
  const Plan pq = plan_with(p, PlacementSelection::priority_queue);
  const Plan full = plan_with(p, PlacementSelection::full_expansion);
  EXPECT_EQ(inputs_text(pq.chosen_candidate()), "R x P(sum) -> P(sum)");
  EXPECT_EQ(inputs_text(full.chosen_candidate()), "P(sum) x R -> P(sum)");
  const double ar = ref_allreduce_us(gib(8192), 4, kInterGbPerS, kInterHopUs);
  EXPECT_NEAR(pq.search->cost_us, ar, 1e-9);
  EXPECT_NEAR(full.chosen_candidate().cost_us, ar, 1e-9);
}

TEST(PlacementSearch, APathThatGathersLessBeatsTheGreedyPlannersPrice) {
  // 2x2 mesh, a (S0,S0) [2048 B per rank], b (R,S0) [4096 B]. d0 forms a rule only as
  // [S0|R] (rule 2); on d1 a S0 with b S0 is none. The full expansion's cheapest:
  //   a (S0,S0), b (R,R): b's d1 S0→R all-gathers 8192 B: AG2(8192) = 9.4977 µs;
  //   a (S0,S1), b (R,S0): the greedy planner moves a's d1 S0→S1 in one all-to-all step,
  //   AG2(2048) + 1 = 10.349 µs.
  // The search finds a cheaper way to the second: a's d1 S0→R all-gathers 4096 B
  // (AG2(4096) = 9.3989 µs), then R→S(1) chunks for free. Every other goal needs an
  // all-gather of at least as many bytes (a's d0 cannot move while d1 shards its dim 0).
  const OpProblem p = mm({2, 2}, "S(0),S(0)", "R,S(0)");
  const Plan pq = plan_with(p, PlacementSelection::priority_queue);
  const Plan full = plan_with(p, PlacementSelection::full_expansion);
  EXPECT_EQ(inputs_text(full.chosen_candidate()), "S(0),S(0) x R,R -> S(0),S(0)");
  EXPECT_NEAR(full.chosen_candidate().cost_us, ag2(8192), 1e-9);
  EXPECT_EQ(inputs_text(pq.chosen_candidate()), "S(0),S(1) x R,S(0) -> S(0),P(sum)");
  ASSERT_TRUE(pq.search.has_value());
  EXPECT_NEAR(pq.search->cost_us, ag2(4096), 1e-9);
  EXPECT_NEAR(pq.search->input_cost_us[0], ag2(4096), 1e-9);
  EXPECT_EQ(pq.search->input_cost_us[1], 0.0);
  ASSERT_EQ(pq.search->path.size(), 2u);
  EXPECT_EQ(pq.search->path[0].mesh_dim, 1);
  EXPECT_EQ(to_string(pq.search->path[0].to), "R");
  EXPECT_EQ(to_string(pq.search->path[1].to), "S(1)");
  EXPECT_EQ(pq.search->path[1].cost_us, 0.0);
  // What runs is the greedy planner's redistribution of the chosen candidate, as PyTorch
  // runs it: one S0→S1 step priced AG2(2048) + 1.
  EXPECT_NEAR(pq.chosen_candidate().cost_us, ag2(2048) + 1.0, 1e-9);
  ASSERT_EQ(pq.redistributions.size(), 1u);
  ASSERT_EQ(pq.redistributions[0].redistribution.steps.size(), 1u);
  EXPECT_NEAR(pq.redistributions[0].step_cost_us[0], ag2(2048) + 1.0, 1e-9);
}

TEST(PlacementSearch, ShardsAreNotTakenOutOfOrderAcrossMeshDims) {
  // a (S0,S0) on d0 may not leave S(0) while d1 still shards tensor dim 0 (PyTorch's
  // left-to-right nesting): from the start, a's only hops are on d1.
  const OpProblem p = mm({2, 2}, "S(0),S(0)", "S(0),S(0)");
  const auto topo = DTensorMeshTopology::of(p.mesh, 1);
  const auto found = search_placements(p, op_single_dim_rules(p), topo);
  ASSERT_TRUE(found.has_value());
  for (const SearchHop& hop : found->path)
    if (hop.input == 0 && hop.mesh_dim == 0) FAIL() << "a moved on mesh dim 0";
  // b must give up its d0 S(0) (rules pair a S0 with b R only), which needs its d1 first:
  // b (S0,S0) → (S0,R) [AG2 of 4096 B] → (R,R) [AG2 of 8192 B]. a stays: rule 2 twice.
  EXPECT_EQ(to_string(found->input_placements[0]) + " x " + to_string(found->input_placements[1]),
            "S(0),S(0) x R,R");
  EXPECT_NEAR(found->cost_us, ag2(4096) + ag2(8192), 1e-9);
}

TEST(PlacementSearch, AHopWhoseNetMoveIsImpossibleIsNotTakenAndNothingReachableIsNullopt) {
  // A rule set of one rule, [P | P | R], from a S(0), b R: S(0)→R→P is two possible hops,
  // but its net move S→P is impossible, so the search may not take it (PyTorch checks
  // every hop against the original placement); with no other goal it finds nothing, and
  // PyTorch falls back to the full expansion.
  const OpProblem p = mm({4}, "S(0)", "R");
  const auto topo = DTensorMeshTopology::of(p.mesh, 1);
  const std::vector<Rule> only_partial{
      {Placement::partial(), Placement::partial(), Placement::replicate()}};
  EXPECT_FALSE(search_placements(p, only_partial, topo).has_value());
  // From a R the same rule is a free R→P hop away.
  const OpProblem from_replicate = mm({4}, "R", "R");
  const auto found = search_placements(from_replicate, only_partial, topo);
  ASSERT_TRUE(found.has_value());
  EXPECT_EQ(to_string(found->input_placements[0]), "P(sum)");
  EXPECT_EQ(found->cost_us, 0.0);
}

TEST(PlacementSearch, PastItsCapTheFullExpansionChooses) {
  // addmm on a 2^6 mesh from a S(1) everywhere, b and the bias Partial: the cheapest goals
  // lie beyond a million pushed states. PyTorch has no cap; symmesh stops, says so, and
  // chooses as the full expansion does.
  const std::string six_s1 = "S(1),S(1),S(1),S(1),S(1),S(1)", six_p = "P,P,P,P,P,P";
  const OpProblem p =
      problem(OpKind::addmm, {2, 2, 2, 2, 2, 2},
              {tensor({64, 64}, six_p), tensor({64, 32}, six_s1), tensor({32, 64}, six_p)});
  const Plan pq = plan_with(p, PlacementSelection::priority_queue);
  const Plan full = plan_with(p, PlacementSelection::full_expansion);
  EXPECT_FALSE(pq.search.has_value());
  EXPECT_TRUE(pq.search_capped);
  EXPECT_EQ(pq.chosen, full.chosen);
}

TEST(PlacementSearch, NeverCostsMoreThanTheFullExpansionsCheapest) {
  // The assertion of PyTorch's own data-driven test (test_pq_vs_full_expansion_data_driven):
  // over every a, b in {S0, S1, R, P} per mesh dim on 1-D (4), 2-D (2,2) and 3-D (2,2,2)
  // meshes — 16 + 256 + 4096 cases — the search's path cost is at most the expansion's
  // minimum.
  const std::vector<std::string> options{"S(0)", "S(1)", "R", "P(sum)"};
  int cases = 0;
  for (const std::vector<int>& mesh :
       {std::vector<int>{4}, std::vector<int>{2, 2}, std::vector<int>{2, 2, 2}}) {
    const int nd = static_cast<int>(mesh.size());
    int combos = 1;
    for (int d = 0; d < 2 * nd; ++d) combos *= 4;
    for (int c = 0; c < combos; ++c) {
      std::string a, b;
      for (int d = 0, code = c; d < 2 * nd; ++d, code /= 4)
        (d < nd ? a : b) += (d % nd ? "," : "") + options[code % 4];
      const OpProblem p = mm(mesh, a, b);
      const Plan pq = plan_with(p, PlacementSelection::priority_queue);
      const Plan full = plan_with(p, PlacementSelection::full_expansion);
      ASSERT_TRUE(pq.search.has_value()) << a << " x " << b;
      EXPECT_LE(pq.search->cost_us, full.chosen_candidate().cost_us + 1e-9) << a << " x " << b;
      ++cases;
    }
  }
  EXPECT_EQ(cases, 16 + 256 + 4096);
}

TEST(PlacementSearch, ALinearWithABiasSearchesAsTorchsAddmmOfTheTransposedWeight) {
  // torch has no strategy for aten.linear; ATen runs linear(a, w, bias) as
  // addmm(bias, a, w.t()), so PyTorch's search pushes the bias's hops first and sees w
  // transposed (w's S(0) is w.t()'s S(1)). Found live against torch 2.13
  // (tools/torch_peer/strategy_agreement.py): on a 1-rank mesh, a S(0), w S(0), bias P(sum)
  // has two goals at 2 × 6.6 µs (a size-1 mesh dim prices each collective at its base
  // latency alone); torch's push order reaches bias P→R and w.t() S(1)→R first, output S(0).
  // The reference here is symmesh's own addmm search on the transposed problem, whose
  // inputs are already in torch's order.
  const auto swap = [](std::string text) {
    for (char& c : text)
      if (c == '0') c = '1'; else if (c == '1') c = '0';
    return text;
  };
  struct Case { std::vector<int> mesh; std::string a, w, bias; };
  for (const Case& c : {Case{{1}, "S(0)", "S(0)", "P(sum)"}, Case{{4}, "S(1)", "S(1)", "P(sum)"},
                        Case{{2, 2}, "S(0),P(sum)", "R,S(0)", "P(sum),R"},
                        Case{{1, 4}, "P(sum),S(1)", "S(1),R", "R,P(sum)"},
                        // Size-1 mesh dims price every collective alike, so goals tie, and
                        // the path costs must be summed in torch's order (bias, a, w.t())
                        // to tie or not as torch's sum(new_per_input_costs) does.
                        Case{{1, 4}, "S(0),S(0)", "S(1),S(1)", "S(0),P(sum)"},
                        Case{{4, 1}, "S(1),S(0)", "S(1),S(0)", "S(0),S(0)"}}) {
    const OpProblem linear = problem(OpKind::linear, c.mesh, {tensor({16, 32}, c.a),
                                     tensor({48, 32}, c.w), tensor({48}, c.bias)});
    const OpProblem addmm = problem(OpKind::addmm, c.mesh, {tensor({48}, c.bias),
                                    tensor({16, 32}, c.a), tensor({32, 48}, swap(c.w))});
    const Plan l = plan_with(linear, PlacementSelection::priority_queue);
    const Plan m = plan_with(addmm, PlacementSelection::priority_queue);
    ASSERT_TRUE(l.search.has_value() && m.search.has_value()) << c.a;
    const auto& li = l.chosen_candidate().input_placements;  // a, w, bias
    const auto& mi = m.chosen_candidate().input_placements;  // bias, a, w.t()
    EXPECT_EQ(to_string(l.chosen_candidate().output_placements),
              to_string(m.chosen_candidate().output_placements)) << c.a << " " << c.w;
    EXPECT_EQ(to_string(li[0]), to_string(mi[1])) << c.a << " " << c.w;
    EXPECT_EQ(swap(to_string(li[1])), to_string(mi[2])) << c.a << " " << c.w;
    EXPECT_EQ(to_string(li[2]), to_string(mi[0])) << c.a << " " << c.w;
    EXPECT_NEAR(l.search->cost_us, m.search->cost_us, 1e-9) << c.a << " " << c.w;
  }
  // The worked case's answer, as torch gave it: a keeps S(0), the bias and w are gathered.
  const Plan one = plan_with(problem(OpKind::linear, {1}, {tensor({16, 32}, "S(0)"),
                             tensor({48, 32}, "S(0)"), tensor({48}, "P(sum)")}),
                             PlacementSelection::priority_queue);
  EXPECT_EQ(to_string(one.chosen_candidate().output_placements), "S(0)");
  EXPECT_NEAR(one.search->cost_us, 2 * 6.6, 1e-9);
}

TEST(PlacementSearch, OtherCostModelsAreRefusedNamingTheOption) {
  // The search prices its hops with DTensor's formulas; under the analytic model it would
  // choose by one cost and report another.
  CostModelOptions options;
  options.cluster = dgx_cluster();
  const auto analytic = make_cost_model("analytic", options);
  try {
    build_plan(mm({4}, "S(0)", "R"), *analytic, PlacementSelection::priority_queue);
    FAIL() << "the search ran under the analytic model";
  } catch (const InvalidArgument& e) {
    EXPECT_EQ(e.where(), "--placement-search");
    EXPECT_NE(std::string(e.message()).find("dtensor cost model"), std::string::npos)
        << e.message();
  }
  EXPECT_EQ(parse_placement_selection("priority-queue", "x"), PlacementSelection::priority_queue);
  EXPECT_EQ(parse_placement_selection("full-expansion", "x"), PlacementSelection::full_expansion);
  EXPECT_THROW(parse_placement_selection("dijkstra", "--placement-search"), InvalidArgument);
}

}  // namespace
}  // namespace symmesh::strategies
