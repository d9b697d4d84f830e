#include "strategies/step_values.hpp"

#include <map>
#include <string>

#include "strategies/dataflow_graph.hpp"
#include "strategies/sharded_result.hpp"

namespace symmesh::strategies {
namespace {

// A matrix's (or a batch of matrices') transpose, row-major: [.., r, c] -> [.., c, r].
std::vector<double> transposed_values(const std::vector<double>& values, const Shape& shape) {
  const int64_t rows = shape.at(shape.size() - 2), cols = shape.back();
  // The leading dims' product, not numel / (rows * cols): a zero-size dim makes that 0 / 0.
  const int64_t batch = numel(Shape(shape.begin(), shape.end() - 2));
  std::vector<double> out(values.size());
  for (int64_t b = 0; b < batch; ++b)
    for (int64_t r = 0; r < rows; ++r)
      for (int64_t c = 0; c < cols; ++c)
        out[b * rows * cols + c * rows + r] = values[b * rows * cols + r * cols + c];
  return out;
}

// The global values input `read` of a dataflow op sees (shape `shape_read`): its
// producer's result, or seeded values for a step input, parameter or loss gradient.
std::vector<double> flowing_value(std::map<std::string, std::vector<double>>& flowing,
                                  const TensorRead& read, const Shape& shape_read,
                                  std::mt19937_64& rng) {
  const Shape stored = read.transposed ? transposed_shape(shape_read) : shape_read;
  auto it = flowing.find(read.tensor);
  if (it == flowing.end()) {
    std::uniform_real_distribution<double> value(-1.0, 1.0);
    std::vector<double> values(numel(stored));
    for (double& v : values) v = value(rng);
    it = flowing.emplace(read.tensor, std::move(values)).first;
  }
  return read.transposed ? transposed_values(it->second, stored) : it->second;
}

}  // namespace

std::vector<std::vector<std::vector<double>>> dataflow_step_inputs(
    const PlannedWorkload& planned, const WorkloadOptions& options, std::mt19937_64& rng,
    const std::function<void(size_t)>& before_op) {
  std::vector<std::vector<std::vector<double>>> out(planned.ops.size());
  std::map<std::string, std::vector<double>> flowing;  // by tensor
  for (size_t i = 0; i < planned.ops.size(); ++i) {
    if (!is_planned(planned.ops[i].kind)) continue;
    before_op(i);
    const OpProblem& problem = planned.plans.at(i)->problem;
    std::vector<std::vector<double>> rounded;
    for (size_t k = 0; k < problem.inputs.size(); ++k) {
      const TensorSpec& t = problem.inputs[k];
      out[i].push_back(flowing_value(flowing, planned.reads.at(i).at(k), t.shape, rng));
      rounded.push_back(options.decode(options.encode(out[i].back(), t.dtype), t.dtype));
    }
    flowing[planned.ops[i].output_tensor] = unsharded_result(problem, rounded);
  }
  return out;
}

}  // namespace symmesh::strategies
