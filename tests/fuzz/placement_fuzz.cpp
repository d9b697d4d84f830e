// Fuzz target: placements. The parsers document InvalidArgument (malformed) and Unsupported
// (a reduce op other than sum/avg); what they accept prints in the canonical form, which
// reads back as the same placements.
#include <optional>

#include "core/errors.hpp"
#include "core/placement.hpp"
#include "tests/fuzz/fuzz_targets.hpp"

namespace symmesh::fuzz {

void placement(std::string_view data) {
  if (const auto p =
          answered<InvalidArgument, Unsupported>([&] { return parse_placement(data); })) {
    const std::string text = to_string(*p);
    require(parse_placement(text) == *p, "'" + text + "' does not read back as itself");
  }
  if (const auto list =
          answered<InvalidArgument, Unsupported>([&] { return parse_placements(data); })) {
    require(!list->empty(), "an empty placement list was accepted");
    const std::string text = to_string(*list);
    require(parse_placements(text) == *list, "'" + text + "' does not read back as itself");
  }
}

}  // namespace symmesh::fuzz
