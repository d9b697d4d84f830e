#include "core/errors.hpp"

#include <utility>

namespace symmesh {
namespace {

std::string compose(const std::string& message, const std::string& where,
                    const std::optional<int>& rank) {
  // Built with append(): GCC 12 warns falsely (-Wrestrict) on `string + "literal"` here.
  std::string text;
  if (!where.empty()) text.append(where).append(": ");
  text.append(message);
  if (rank) text.append(" (rank ").append(std::to_string(*rank)).append(")");
  return text;
}

}  // namespace

Error::Error(std::string message, std::string where, std::optional<int> rank)
    : std::runtime_error(compose(message, where, rank)),
      message_(std::move(message)),
      where_(std::move(where)),
      rank_(rank) {}

}  // namespace symmesh
