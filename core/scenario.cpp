#include "core/scenario.hpp"

namespace symmesh {

std::string SourceLocation::to_string() const {
  std::string out = file.empty() ? "<scenario>" : file;
  if (line > 0)
    out.append(":").append(std::to_string(line)).append(":").append(std::to_string(column));
  return out;
}

std::string Scenario::cost_model_note() const {
  if (cost_model_given) return "";
  if (model)
    return " (not given: the calibrated analytic model prices a model: step; cost_model: "
           "dtensor prices as DTensor does, communication only)";
  return " (not given: the default)";
}

std::string to_string(Optimizer optimizer) {
  return optimizer == Optimizer::adam ? "adam" : "sgd";
}

const TensorDecl* Scenario::tensor(const std::string& name) const {
  for (const TensorDecl& t : tensors)
    if (t.name == name) return &t;
  return nullptr;
}

int pipeline_dim_size(const std::vector<int>& shape, const std::vector<std::string>& names) {
  return !names.empty() && names.front() == kPipelineDim && shape.size() > 1 ? shape.front() : 1;
}

namespace {
// The loader refuses a pp dim elsewhere than first, and a mesh of pp alone.
bool has_pipeline_dim(const Scenario& s) {
  return s.is_dataflow() && pipeline_dim_size(s.mesh_shape, s.mesh_names) > 1;
}
}  // namespace

int Scenario::pipeline_stages() const {
  return has_pipeline_dim(*this) ? mesh_shape.front() : 1;
}

std::vector<int> Scenario::stage_mesh_shape() const {
  if (!has_pipeline_dim(*this)) return mesh_shape;
  return {mesh_shape.begin() + 1, mesh_shape.end()};
}

int Scenario::mesh_dim_size(std::string_view name) const {
  for (size_t d = 0; d < mesh_names.size() && d < mesh_shape.size(); ++d)
    if (mesh_names[d] == name) return mesh_shape[d];
  return 1;
}

int Scenario::mesh_gpus() const {
  int gpus = 1;
  for (int size : mesh_shape) gpus *= size;
  return gpus;
}

std::vector<std::string> Scenario::stage_mesh_names() const {
  if (!has_pipeline_dim(*this)) return mesh_names;
  return {mesh_names.begin() + 1, mesh_names.end()};
}

}  // namespace symmesh
