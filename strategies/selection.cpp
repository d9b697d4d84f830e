#include "strategies/selection.hpp"

#include <cmath>

#include "core/errors.hpp"

namespace symmesh::strategies {
namespace {

bool inputs_unchanged(const OpProblem& problem, const Candidate& c) {
  for (size_t i = 0; i < problem.inputs.size(); ++i)
    if (problem.inputs[i].placements != c.input_placements[i]) return false;
  return true;
}

}  // namespace

int select_candidate(const OpProblem& problem, const std::vector<Candidate>& candidates) {
  int kept = 0, only = -1, unchanged_free = -1, first_free = -1, cheapest = -1;
  for (int i = 0; i < static_cast<int>(candidates.size()); ++i) {
    const Candidate& c = candidates[i];
    if (!c.kept()) continue;
    ++kept;
    only = i;
    if (c.cost_us == 0) {
      if (first_free < 0) first_free = i;
      if (inputs_unchanged(problem, c)) unchanged_free = i;  // the last one wins
    }
    if (cheapest < 0 || c.cost_us < candidates[cheapest].cost_us) cheapest = i;
  }
  if (kept == 0) throw Unsupported("no sharding strategy is applicable", to_string(problem.op));
  if (kept == 1) return only;
  if (unchanged_free >= 0) return unchanged_free;
  if (first_free >= 0) return first_free;
  if (std::isinf(candidates[cheapest].cost_us))
    throw Unsupported("every strategy needs an impossible redistribution", to_string(problem.op));
  return cheapest;
}

}  // namespace symmesh::strategies
