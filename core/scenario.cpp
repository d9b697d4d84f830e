#include "core/scenario.hpp"

namespace symmesh {

std::string SourceLocation::to_string() const {
  std::string out = file.empty() ? "<scenario>" : file;
  if (line > 0)
    out.append(":").append(std::to_string(line)).append(":").append(std::to_string(column));
  return out;
}

std::string to_string(Optimizer optimizer) {
  return optimizer == Optimizer::adam ? "adam" : "sgd";
}

const TensorDecl* Scenario::tensor(const std::string& name) const {
  for (const TensorDecl& t : tensors)
    if (t.name == name) return &t;
  return nullptr;
}

}  // namespace symmesh
