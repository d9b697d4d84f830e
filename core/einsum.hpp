#pragma once
// Einsum equations of two inputs, "mk,kn->mn": one letter per tensor dim, a letter shared
// by both inputs and absent from the output is contracted. The matrix ops' signatures
// (core/matmul_signature.hpp) and DTensor's sharding rules (strategies/einsum_rules.hpp)
// are both derived from them.
#include <string>
#include <string_view>

namespace symmesh {

struct EinsumEquation {
  std::string lhs;                // "mk"
  std::string rhs;                // "kn"
  std::string out;                // "mn"
  std::string to_string() const;  // "mk,kn->mn"
};

// "mk,kn->mn"; throws InvalidArgument when malformed (two inputs, letters only, every
// output letter present in an input, no repeated letter within a tensor).
EinsumEquation parse_einsum(std::string_view equation);

// Position of `letter` in `dims`, or -1.
int letter_index(const std::string& dims, char letter);

}  // namespace symmesh
