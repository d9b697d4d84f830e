#pragma once
// Small text helpers shared by every to_string. Built with append() on purpose: GCC 12
// warns falsely (-Wrestrict) on `"literal" + std::string` patterns in optimised builds.
#include <string>
#include <string_view>

namespace symmesh {

// Joins to_text(item) for every item of `items`, separated by `separator`.
template <typename Range, typename ToText>
std::string join(const Range& items, std::string_view separator, ToText&& to_text) {
  std::string out;
  bool first = true;
  for (const auto& item : items) {
    if (!first) out.append(separator);
    out.append(to_text(item));
    first = false;
  }
  return out;
}

}  // namespace symmesh
