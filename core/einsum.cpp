#include "core/einsum.hpp"

#include <cctype>
#include <set>

#include "core/errors.hpp"

namespace symmesh {
namespace {

void check_letters(const std::string& dims, std::string_view equation) {
  std::set<char> seen;
  for (char c : dims)
    if (!std::isalpha(static_cast<unsigned char>(c)) || !seen.insert(c).second)
      throw InvalidArgument(
          "einsum '" + std::string(equation) + "' needs distinct letters per tensor", "einsum");
}

}  // namespace

int letter_index(const std::string& dims, char letter) {
  const auto pos = dims.find(letter);
  return pos == std::string::npos ? -1 : static_cast<int>(pos);
}

std::string EinsumEquation::to_string() const {
  std::string text = lhs;
  return text.append(",").append(rhs).append("->").append(out);
}

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
    if (letter_index(eq.lhs, c) < 0 && letter_index(eq.rhs, c) < 0)
      throw InvalidArgument(
          "einsum '" + text + "': output dim '" + std::string(1, c) + "' is in no input", "einsum");
  return eq;
}

}  // namespace symmesh
