#pragma once
// DTensor's selection rule (docs/dtensor-strategies.md §4), over kept
// candidates in index order:
//   1. exactly one candidate → it;
//   2. else, among cost-0 candidates, the LAST whose input placements equal the current
//      ones (nothing to redistribute);
//   3. else the FIRST cost-0 candidate (a free chunk or R → P);
//   4. else the FIRST candidate of minimum cost.
#include <vector>

#include "strategies/candidate.hpp"
#include "strategies/op_problem.hpp"

namespace symmesh::strategies {

// Returns the position in `candidates` of the chosen one. Throws Unsupported when no
// candidate is kept or every kept one costs infinity.
int select_candidate(const OpProblem& problem, const std::vector<Candidate>& candidates);

}  // namespace symmesh::strategies
