// DTensor's selection rule (reference §4) on hand-built candidate lists, so that each branch
// is exercised with costs chosen by the test, not by a cost model.
#include "strategies/selection.hpp"

#include <gtest/gtest.h>

#include "core/errors.hpp"
#include "tests/strategies/strategy_test_support.hpp"

namespace symmesh::strategies {
namespace {

using testing::pl;
using testing::problem;
using testing::tensor;

// mm on 4 ranks with inputs currently a = S(0), b = R.
const OpProblem kProblem = problem(OpKind::mm, {4}, {tensor({8, 8}, "S(0)"), tensor({8, 8}, "R")});

Candidate make(int index, std::string_view a, std::string_view b, double cost_us,
               std::string filtered = "") {
  Candidate c;
  c.index = index;
  c.output_placements = pl("R");
  c.input_placements = {pl(a), pl(b)};
  c.cost_us = cost_us;
  c.input_cost_us = {cost_us, 0.0};
  c.filtered = std::move(filtered);
  return c;
}

TEST(Selection, SingleKeptCandidateIsTakenWhateverItCosts) {
  const std::vector<Candidate> cs = {make(0, "R", "R", 1.0, "dropped"),
                                     make(1, "S(1)", "S(0)", kInfiniteCost),
                                     make(2, "R", "R", 0.0, "dropped")};
  EXPECT_EQ(select_candidate(kProblem, cs), 1);
}

TEST(Selection, LastFreeUnchangedCandidateWinsOverEarlierOnes) {
  const std::vector<Candidate> cs = {
      make(0, "R", "R", 0.0),       // free but changes a
      make(1, "S(0)", "R", 0.0),    // unchanged
      make(2, "S(1)", "R", 3.0),    //
      make(3, "S(0)", "R", 0.0),    // unchanged, later: wins
      make(4, "S(0)", "S(1)", 0.0)  // free, changes b
  };
  EXPECT_EQ(select_candidate(kProblem, cs), 3);
}

TEST(Selection, UnchangedMustAlsoCostZero) {
  // A candidate with the current placements but a (hand-set) non-zero cost is not the
  // "no redistribution" one; the first free candidate wins.
  const std::vector<Candidate> cs = {make(0, "S(0)", "R", 0.5), make(1, "R", "R", 2.0),
                                     make(2, "R", "S(1)", 0.0), make(3, "S(1)", "R", 0.0)};
  EXPECT_EQ(select_candidate(kProblem, cs), 2);
}

TEST(Selection, FirstFreeCandidateWhenNoneIsUnchanged) {
  const std::vector<Candidate> cs = {make(0, "R", "R", 3.0), make(1, "R", "S(1)", 0.0),
                                     make(2, "S(1)", "S(0)", 0.0)};
  EXPECT_EQ(select_candidate(kProblem, cs), 1);
}

TEST(Selection, FirstMinimumOnTies) {
  const std::vector<Candidate> cs = {make(0, "R", "R", 5.0), make(1, "R", "S(1)", 2.0),
                                     make(2, "S(1)", "S(0)", 7.0), make(3, "R", "R", 2.0),
                                     make(4, "R", "R", kInfiniteCost)};
  EXPECT_EQ(select_candidate(kProblem, cs), 1);
}

TEST(Selection, FilteredCandidatesAreIgnored) {
  // The cheapest and the unchanged ones are filtered; of the rest, index 2 is cheapest.
  const std::vector<Candidate> cs = {make(0, "S(0)", "R", 0.0, "a cannot be split"),
                                     make(1, "R", "R", 1.0, "dropped"), make(2, "R", "R", 4.0),
                                     make(3, "R", "S(1)", 6.0)};
  EXPECT_EQ(select_candidate(kProblem, cs), 2);
}

TEST(Selection, NothingKeptOrEverythingImpossibleIsUnsupported) {
  EXPECT_THROW(
      select_candidate(kProblem, {make(0, "R", "R", 0.0, "x"), make(1, "R", "R", 0.0, "y")}),
      Unsupported);
  EXPECT_THROW(select_candidate(
                   kProblem, {make(0, "R", "R", kInfiniteCost), make(1, "R", "R", kInfiniteCost)}),
               Unsupported);
}

TEST(Selection, UnchangedComparesEveryInputIncludingTheBias) {
  const auto addmm = problem(OpKind::addmm, {4},
                             {tensor({8}, "R"), tensor({8, 8}, "S(1)"), tensor({8, 8}, "S(0)")});
  auto c = [](int i, std::string_view bias, double cost_us) {
    Candidate x;
    x.index = i;
    x.output_placements = pl("P(sum)");
    x.input_placements = {pl(bias), pl("S(1)"), pl("S(0)")};
    x.cost_us = cost_us;
    return x;
  };
  // Bias R → P(sum) is free but a change: the candidate keeping the bias R is the unchanged one.
  EXPECT_EQ(select_candidate(addmm, {c(0, "P(sum)", 0.0), c(1, "R", 0.0), c(2, "P(sum)", 0.0)}), 1);
  // With none unchanged, the first free one wins.
  EXPECT_EQ(select_candidate(addmm, {c(0, "P(sum)", 0.0), c(1, "P(avg)", 0.0)}), 0);
}

}  // namespace
}  // namespace symmesh::strategies
