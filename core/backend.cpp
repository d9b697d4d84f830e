#include "core/backend.hpp"

#include <algorithm>

#include "core/errors.hpp"
#include "core/text.hpp"

namespace symmesh {

std::string CollectivesChoice::kind() const {
  return native ? "nccl" : "one-sided";
}

std::string CollectivesChoice::to_string() const {
  if (!native || ops.empty()) return kind();
  return kind() + ":" + join(ops, ",", [](const std::string& name) { return name; });
}

bool CollectivesChoice::hands_to_library(const CollectiveRecord& record) const {
  return native && has_library_equivalent(record) &&
         (ops.empty() || std::find(ops.begin(), ops.end(), record.name) != ops.end());
}

std::string CollectivesChoice::implementation_of(const CollectiveRecord& record) const {
  return hands_to_library(record) ? "nccl" : symmesh::to_string(record.algorithm);
}

CollectivesChoice parse_collectives(std::string_view text, std::string_view where) {
  const auto fail = [&](const std::string& why) {
    return InvalidArgument("unknown collective implementation '" + std::string(text) +
                               "' (expected one-sided, nccl or nccl:NAME,NAME" + why + ")",
                           std::string(where));
  };
  CollectivesChoice out;
  out.given = true;
  const size_t colon = text.find(':');
  const std::string_view impl = text.substr(0, colon);
  if (impl == "nccl")
    out.native = true;
  else if (impl != "one-sided" && impl != "one_sided")
    throw fail("");
  if (colon == std::string_view::npos) return out;
  if (!out.native) throw fail("; only nccl takes a list of ops");
  std::string_view rest = text.substr(colon + 1);
  for (;;) {
    const size_t comma = rest.find(',');
    const std::string_view name = rest.substr(0, comma);
    if (name.empty()) throw fail("; an op name is empty");
    out.ops.emplace_back(name);
    if (comma == std::string_view::npos) break;
    rest = rest.substr(comma + 1);
  }
  return out;
}

}  // namespace symmesh
