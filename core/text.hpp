#pragma once
// Small text helpers shared by every to_string and report. Built with append() on purpose: GCC 12
// warns falsely (-Wrestrict) on `"literal" + std::string` patterns in optimised builds.
#include <cstdint>
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

// "512 B", "1.50 KiB", "2.00 MiB": binary units, two decimals above bytes.
std::string format_bytes(int64_t bytes);

}  // namespace symmesh
