// Ground truth for the sharding rules: every single-dim rule of mm, bmm, addmm and baddbmm
// is run sharded on 1-D meshes of 2 and 3 ranks with uneven shapes and compared with the
// unsharded op (ground_truth.hpp); a brute force over every placement combination checks
// that the rule set is exactly the set of valid combinations, up to a documented list; and
// every kept N-D candidate on 2x2 and 2x3 meshes is run end to end.
#include <algorithm>
#include <set>

#include <gtest/gtest.h>

#include "strategies/candidate.hpp"
#include "strategies/plan.hpp"
#include "tests/strategies/ground_truth.hpp"
#include "tests/strategies/strategy_test_support.hpp"

namespace symmesh::strategies {
namespace {

using namespace testing;

// One op with concrete shapes, inputs in ATen order. m=5, k=7, n=4 (mm) and b=4, m=5, k=7,
// n=6 (bmm) are uneven over 2 and 3 ranks; 4 over 3 even leaves the last rank empty.
struct Case {
  OpKind op;
  std::vector<Shape> shapes;
};

std::string describe(const Case& c) {
  std::string s = to_string(c.op);
  for (const auto& sh : c.shapes) {
    s += ' ';
    s += to_string(sh);
  }
  return s;
}

std::vector<Case> one_dim_cases() {
  return {
      {OpKind::mm, {{5, 7}, {7, 4}}},
      {OpKind::bmm, {{4, 5, 7}, {4, 7, 6}}},
      {OpKind::addmm, {{4}, {5, 7}, {7, 4}}},
      {OpKind::addmm, {{1, 4}, {5, 7}, {7, 4}}},
      {OpKind::addmm, {{5, 4}, {5, 7}, {7, 4}}},
      {OpKind::addmm, {{5, 1}, {5, 7}, {7, 4}}},
      {OpKind::addmm, {{1}, {5, 7}, {7, 4}}},
      {OpKind::baddbmm, {{6}, {4, 5, 7}, {4, 7, 6}}},
      {OpKind::baddbmm, {{4, 1, 6}, {4, 5, 7}, {4, 7, 6}}},
      {OpKind::baddbmm, {{1, 5, 6}, {4, 5, 7}, {4, 7, 6}}},
      {OpKind::baddbmm, {{5, 6}, {4, 5, 7}, {4, 7, 6}}},
      {OpKind::baddbmm, {{4, 5, 6}, {4, 5, 7}, {4, 7, 6}}},
  };
}

// The rules the engine generates for the case on a 1-D mesh of n ranks, with an input
// sharded so that no placeholder rule is dropped.
std::vector<Rule> engine_rules(const Case& c, int n) {
  std::vector<TensorSpec> inputs;
  for (const auto& s : c.shapes) inputs.push_back(TensorSpec{s, DType::fp64, pl("R")});
  inputs[takes_bias(c.op) ? 1 : 0].placements = pl("S(0)");
  return op_single_dim_rules(problem(c.op, {n}, inputs));
}

std::vector<Dense> random_inputs(const Case& c, std::mt19937_64& rng) {
  std::vector<Dense> xs;
  for (const auto& s : c.shapes) xs.push_back(random_dense(s, rng));
  return xs;
}

Shape output_shape(const Case& c) {
  const Shape& a = c.shapes[takes_bias(c.op) ? 1 : 0];
  const Shape& b = c.shapes[takes_bias(c.op) ? 2 : 1];
  return a.size() == 2 ? Shape{a[0], b[1]} : Shape{a[0], a[1], b[2]};
}

TEST(GroundTruth, EveryRuleComputesTheOp) {
  std::mt19937_64 rng(20240611);
  for (int n : {2, 3}) {
    for (const Case& c : one_dim_cases()) {
      const auto rules = engine_rules(c, n);
      ASSERT_EQ(rules.size(), c.op == OpKind::mm || c.op == OpKind::addmm ? 8u : 9u);
      for (const Rule& rule : rules) {
        ASSERT_EQ(rule.size(), c.shapes.size() + 1);
        // Two independent draws of data and partial pieces.
        for (int trial = 0; trial < 2; ++trial)
          EXPECT_TRUE(placements_compute_op_1d(c.op, random_inputs(c, rng), rule, n, rng))
              << describe(c) << " on " << n << " ranks: " << rule_text(rule);
      }
    }
  }
}

TEST(GroundTruth, OracleRejectsWrongRules) {
  // The check must be able to fail: these placements do not compute the op.
  std::mt19937_64 rng(7);
  const Case mm{OpKind::mm, {{5, 7}, {7, 4}}};
  const Case addmm{OpKind::addmm, {{4}, {5, 7}, {7, 4}}};
  const Case bmm{OpKind::bmm, {{4, 5, 7}, {4, 7, 6}}};
  for (int n : {2, 3}) {
    for (const char* wrong :
         {"S(0),S(1),R", "S(1),S(0),R", "P(sum),S(1),S(1)", "P(avg),S(1),S(0)", "P(sum),R,R",
          "R,P(sum),R", "P(sum),P(sum),P(sum)", "P(avg),P(avg),P(avg)", "P(sum),P(avg),R",
          "S(0),S(0),S(0)", "R,S(1),S(0)"})
      EXPECT_FALSE(placements_compute_op_1d(mm.op, random_inputs(mm, rng), pl(wrong), n, rng))
          << wrong;
    for (const char* wrong : {"S(0),S(0),S(0),R", "P(sum),R,S(1),S(0)", "P(sum),R,P(sum),R",
                              "S(1),R,R,S(1)", "P(sum),P(sum),R,R"})
      EXPECT_FALSE(placements_compute_op_1d(addmm.op, random_inputs(addmm, rng), pl(wrong), n, rng))
          << wrong;
    for (const char* wrong : {"S(0),S(0),R", "S(1),S(1),S(1)", "P(sum),S(2),S(2)"})
      EXPECT_FALSE(placements_compute_op_1d(bmm.op, random_inputs(bmm, rng), pl(wrong), n, rng))
          << wrong;
  }
}

// Every placement of a tensor of `rank` dims on one mesh dim.
std::vector<Placement> all_placements(size_t rank) {
  std::vector<Placement> out = {Placement::replicate()};
  for (size_t d = 0; d < rank; ++d) out.push_back(Placement::shard(static_cast<int>(d)));
  out.push_back(Placement::partial(ReduceOp::sum));
  out.push_back(Placement::partial(ReduceOp::avg));
  return out;
}

// Valid placement combinations that DTensor deliberately does not list, with the reason.
// All of them have a P(avg) output where every rank already holds the full result or a
// P(avg) piece of it, so the mean is right:
//  * [P(avg) | R | R] (mm, bmm): every rank computes the full product; the mean of n equal
//    copies is the product. DTensor expresses "everything replicated" as [R | R | R] and
//    never derives P(avg) from replicated inputs (R → P(avg) is a free redistribution
//    instead, priced 0).
//  * addmm/baddbmm: with an avg output the bias may be R or P(avg) independently of which
//    matmul input is P(avg) (mean of R is R), and both matmul inputs may be R. DTensor
//    derives the bias placement from the output (P(avg) is copied to the bias) and its
//    linearity rules always make one matmul input partial, so it lists only
//    [P(avg) | P(avg) | P(avg) | R] and [P(avg) | P(avg) | R | P(avg)] of these six.
// P(sum) has no such extras: n copies of a replicated value sum to n times it.
std::set<std::string> deliberately_unlisted(OpKind op) {
  if (!takes_bias(op)) return {"[P(avg) | R | R]"};
  return {"[P(avg) | R | R | R]", "[P(avg) | P(avg) | R | R]", "[P(avg) | R | P(avg) | R]",
          "[P(avg) | R | R | P(avg)]"};
}

std::string set_text(const std::set<std::string>& s) {
  std::string out;
  for (const auto& x : s) out += "\n  " + x;
  return out.empty() ? " (none)" : out;
}

TEST(GroundTruth, BruteForceFindsExactlyTheRules) {
  std::mt19937_64 rng(99);
  for (int n : {2, 3}) {
    for (const Case& c : one_dim_cases()) {
      std::vector<std::vector<Placement>> options = {all_placements(output_shape(c).size())};
      for (const auto& s : c.shapes) options.push_back(all_placements(s.size()));

      std::set<std::string> valid;
      std::vector<size_t> pick(options.size(), 0);
      const auto inputs = random_inputs(c, rng);
      while (true) {
        Rule combo;
        for (size_t i = 0; i < options.size(); ++i) combo.push_back(options[i][pick[i]]);
        if (placements_compute_op_1d(c.op, inputs, combo, n, rng)) valid.insert(rule_text(combo));
        size_t i = options.size();
        while (i > 0 && ++pick[i - 1] == options[i - 1].size()) pick[--i] = 0;
        if (i == 0) break;
      }

      std::set<std::string> generated;
      for (const auto& r : engine_rules(c, n)) generated.insert(rule_text(r));
      const auto extras = deliberately_unlisted(c.op);

      std::set<std::string> missing, unexpected, listed_but_invalid;
      for (const auto& g : generated)
        if (!valid.count(g)) listed_but_invalid.insert(g);
      for (const auto& v : valid)
        if (!generated.count(v) && !extras.count(v)) missing.insert(v);
      for (const auto& e : extras)
        if (!valid.count(e)) unexpected.insert(e);
      EXPECT_TRUE(listed_but_invalid.empty())
          << describe(c) << " on " << n
          << ": rules that are wrong:" << set_text(listed_but_invalid);
      EXPECT_TRUE(missing.empty()) << describe(c) << " on " << n
                                   << ": valid combinations no rule lists:" << set_text(missing);
      EXPECT_TRUE(unexpected.empty())
          << describe(c) << " on " << n
          << ": documented extras that are not valid:" << set_text(unexpected);
    }
  }
}

// ---- N-D candidates end to end ----

TEST(GroundTruth, EveryKeptCandidateOnTwoDimMeshes) {
  std::mt19937_64 rng(4242);
  const std::vector<Case> cases = {
      {OpKind::mm, {{7, 9}, {9, 6}}},
      {OpKind::bmm, {{4, 7, 9}, {4, 9, 6}}},
      {OpKind::addmm, {{6}, {7, 9}, {9, 6}}},
      {OpKind::addmm, {{7, 1}, {7, 9}, {9, 6}}},
      {OpKind::baddbmm, {{4, 1, 6}, {4, 7, 9}, {4, 9, 6}}},
  };
  for (const std::vector<int>& mesh_shape : {std::vector<int>{2, 2}, std::vector<int>{2, 3}}) {
    const DeviceMesh mesh(mesh_shape);
    for (const Case& c : cases) {
      std::vector<TensorSpec> specs;
      for (const auto& s : c.shapes)
        specs.push_back(
            TensorSpec{s, DType::fp64, Placements(mesh.ndim(), Placement::replicate())});
      specs[takes_bias(c.op) ? 1 : 0].placements[0] = Placement::shard(0);
      const OpProblem p = problem(c.op, mesh_shape, specs);
      const auto candidates = expand_candidates(p, op_single_dim_rules(p));
      const auto inputs = random_inputs(c, rng);
      const Dense expected = *run_op(c.op, inputs);
      const int a = p.lhs_index(), b = p.rhs_index();
      int checked = 0;
      for (const Candidate& cand : candidates) {
        if (!cand.kept()) continue;
        ++checked;
        const std::string what = describe(c) + " on " + to_string(mesh) + ", candidate " +
                                 std::to_string(cand.index) + " out " +
                                 to_string(cand.output_placements);
        std::vector<Dense> outs;
        for (int r = 0; r < mesh.size(); ++r) {
          std::vector<Dense> local;
          for (size_t i = 0; i < inputs.size(); ++i) {
            local.push_back(local_input(inputs[i], cand.input_placements[i], mesh_shape, r));
            // core's local_view agrees with torch.chunk nesting.
            TensorSpec s = p.inputs[i];
            s.placements = cand.input_placements[i];
            const LocalView v = local_view(s, mesh, r);
            const Region reg = region_of(s.shape, s.placements, mesh_shape, r);
            ASSERT_EQ(v.shape, reg.size) << what << " input " << i << " rank " << r;
            ASSERT_EQ(v.offset, reg.offset) << what << " input " << i << " rank " << r;
          }
          // The plan's local matmul is the one run here.
          const Shape& la = local[a].shape;
          const Shape& lb = local[b].shape;
          const LocalGemm lc = la.size() == 2 ? LocalGemm{1, la[0], lb[1], la[1]}
                                              : LocalGemm{la[0], la[1], lb[2], la[2]};
          ASSERT_EQ(local_compute_of(p, cand.input_placements, r), lc) << what << " rank " << r;
          auto out = run_op(c.op, local);
          ASSERT_TRUE(out.has_value()) << what << ": local shapes do not multiply on rank " << r;
          outs.push_back(std::move(*out));
        }
        EXPECT_TRUE(output_matches_nd(outs, cand.output_placements, mesh_shape, expected)) << what;
      }
      EXPECT_GT(checked, 20) << describe(c);
    }
  }
}

TEST(GroundTruth, NdOracleRejectsMixedUpCandidates) {
  // Swapping a's placements between the two mesh dims of a valid candidate breaks it.
  std::mt19937_64 rng(5);
  const std::vector<int> mesh{2, 3};
  const Case c{OpKind::mm, {{7, 9}, {9, 6}}};
  const auto inputs = random_inputs(c, rng);
  const Dense expected = *run_op(c.op, inputs);
  auto holds = [&](std::string_view out, std::string_view a, std::string_view b) {
    std::vector<Dense> outs;
    for (int r = 0; r < 6; ++r) {
      auto o = run_op(
          c.op, {local_input(inputs[0], pl(a), mesh, r), local_input(inputs[1], pl(b), mesh, r)});
      if (!o) return false;
      outs.push_back(*o);
    }
    return output_matches_nd(outs, pl(out), mesh, expected);
  };
  EXPECT_TRUE(holds("S(0),P(sum)", "S(0),S(1)", "R,S(0)"));
  EXPECT_FALSE(holds("S(0),P(sum)", "S(1),S(0)", "R,S(0)"));
  EXPECT_TRUE(holds("P(sum),P(avg)", "P(sum),P(avg)", "R,R"));
  EXPECT_FALSE(holds("P(sum),P(sum)", "P(sum),P(avg)", "R,R"));
  EXPECT_FALSE(holds("S(1),S(0)", "S(0),R", "R,S(1)"));
}

}  // namespace
}  // namespace symmesh::strategies
