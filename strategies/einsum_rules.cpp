#include "strategies/einsum_rules.hpp"

#include <set>

namespace symmesh::strategies {
std::vector<Rule> einsum_single_dim_rules(const EinsumEquation& eq, bool any_input_sharded) {
  std::set<char> letters(eq.lhs.begin(), eq.lhs.end());
  letters.insert(eq.rhs.begin(), eq.rhs.end());  // std::set iterates in sorted order

  std::vector<char> batch, contracting, lhs_only, rhs_only;
  for (char c : letters) {
    const bool in_lhs = letter_index(eq.lhs, c) >= 0;
    const bool in_rhs = letter_index(eq.rhs, c) >= 0;
    const bool in_out = letter_index(eq.out, c) >= 0;
    if (!in_out) {
      if (in_lhs && in_rhs) contracting.push_back(c);
      // A dim summed away inside one input has no sharding rule of its own.
    } else if (in_lhs && in_rhs) {
      batch.push_back(c);
    } else if (in_lhs) {
      lhs_only.push_back(c);
    } else {
      rhs_only.push_back(c);
    }
  }

  const Placement R = Placement::replicate();
  auto S = [](const std::string& dims, char c) { return Placement::shard(letter_index(dims, c)); };

  std::vector<Rule> rules;
  rules.push_back({R, R, R});
  if (any_input_sharded) {
    for (char c : batch) rules.push_back({S(eq.out, c), S(eq.lhs, c), S(eq.rhs, c)});
    for (char c : contracting) rules.push_back({Placement::partial(), S(eq.lhs, c), S(eq.rhs, c)});
    for (char c : lhs_only) rules.push_back({S(eq.out, c), S(eq.lhs, c), R});
    for (char c : rhs_only) rules.push_back({S(eq.out, c), R, S(eq.rhs, c)});
  }
  for (ReduceOp op : {ReduceOp::sum, ReduceOp::avg}) {
    const Placement P = Placement::partial(op);
    rules.push_back({P, P, R});
    rules.push_back({P, R, P});
  }
  return rules;
}

}  // namespace symmesh::strategies
