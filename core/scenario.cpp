#include "core/scenario.hpp"

namespace symmesh {

std::string SourceLocation::to_string() const {
  std::string out = file.empty() ? "<scenario>" : file;
  if (line > 0)
    out.append(":").append(std::to_string(line)).append(":").append(std::to_string(column));
  return out;
}

}  // namespace symmesh
