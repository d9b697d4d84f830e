#include "strategies/einsum_rules.hpp"

#include <algorithm>
#include <cctype>
#include <set>

#include "core/errors.hpp"

namespace symmesh::strategies {
namespace {

int index_of(const std::string& dims, char c) {
  const auto pos = dims.find(c);
  return pos == std::string::npos ? -1 : static_cast<int>(pos);
}

void check_letters(const std::string& dims, std::string_view equation) {
  std::set<char> seen;
  for (char c : dims)
    if (!std::isalpha(static_cast<unsigned char>(c)) || !seen.insert(c).second)
      throw InvalidArgument(
          "einsum '" + std::string(equation) + "' needs distinct letters per tensor", "einsum");
}

}  // namespace

EinsumEquation parse_einsum(std::string_view equation) {
  const std::string text(equation);
  const auto arrow = text.find("->");
  const auto comma = text.find(',');
  if (arrow == std::string::npos || comma == std::string::npos || comma > arrow ||
      text.find(',', comma + 1) != std::string::npos)
    throw InvalidArgument("einsum '" + text + "' must look like 'mk,kn->mn'", "einsum");
  EinsumEquation eq{text.substr(0, comma), text.substr(comma + 1, arrow - comma - 1),
                    text.substr(arrow + 2)};
  check_letters(eq.lhs, equation);
  check_letters(eq.rhs, equation);
  check_letters(eq.out, equation);
  for (char c : eq.out)
    if (index_of(eq.lhs, c) < 0 && index_of(eq.rhs, c) < 0)
      throw InvalidArgument(
          "einsum '" + text + "': output dim '" + std::string(1, c) + "' is in no input", "einsum");
  return eq;
}

std::vector<Rule> einsum_single_dim_rules(const EinsumEquation& eq, bool any_input_sharded) {
  std::set<char> letters(eq.lhs.begin(), eq.lhs.end());
  letters.insert(eq.rhs.begin(), eq.rhs.end());  // std::set iterates in sorted order

  std::vector<char> batch, contracting, lhs_only, rhs_only;
  for (char c : letters) {
    const bool in_lhs = index_of(eq.lhs, c) >= 0;
    const bool in_rhs = index_of(eq.rhs, c) >= 0;
    const bool in_out = index_of(eq.out, c) >= 0;
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
  auto S = [](const std::string& dims, char c) { return Placement::shard(index_of(dims, c)); };

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
