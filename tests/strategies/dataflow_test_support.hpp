#pragma once
// Version-2 scenarios built in code for the dataflow tests, as the loader would fill them
// (names resolved, the shapes of a, b and bias filled in, placements left to the graph).
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

#include "core/matmul_signature.hpp"
#include "core/scenario.hpp"
#include "core/tensor_op.hpp"
#include "strategies/dataflow_graph.hpp"
#include "tests/strategies/analytic_test_support.hpp"

namespace symmesh::strategies::testing {

// The graph's tensor of that name (throws when there is none).
inline TensorId tensor_named(const DataflowGraph& g, const std::string& name) {
  for (TensorId t = 0; t < static_cast<TensorId>(g.tensors.size()); ++t)
    if (g.tensors[t].name == name) return t;
  throw std::runtime_error("no tensor " + name);
}

// The index of the graph's op of that name (throws when there is none).
inline int op_index(const DataflowGraph& g, const std::string& name) {
  for (size_t i = 0; i < g.ops.size(); ++i)
    if (g.ops[i].name == name) return static_cast<int>(i);
  throw std::runtime_error("no op " + name);
}

class DataflowScenario {
 public:
  DataflowScenario(std::vector<int> mesh_shape, std::vector<std::string> mesh_names,
                   int nodes = 1) {
    s_.name = "dataflow-test";
    s_.version = 2;
    s_.cluster = dgx_cluster(nodes);
    s_.mesh_shape = std::move(mesh_shape);
    s_.mesh_names = std::move(mesh_names);
    s_.cost_model = "analytic";
  }

  DataflowScenario& input(const std::string& name, Shape shape, const std::string& placements) {
    s_.tensors.push_back(
        {name, TensorDecl::Role::input, std::move(shape), parse_placements(placements), {}});
    return *this;
  }
  DataflowScenario& parameter(const std::string& name, Shape shape,
                              const std::optional<std::string>& placements = std::nullopt) {
    std::optional<Placements> p;
    if (placements) p = parse_placements(*placements);
    s_.tensors.push_back({name, TensorDecl::Role::parameter, std::move(shape), p, {}});
    return *this;
  }
  DataflowScenario& output(const std::string& name, const std::string& placements) {
    s_.tensors.push_back({name, TensorDecl::Role::output, {}, parse_placements(placements), {}});
    return *this;
  }
  DataflowScenario& training(Optimizer optimizer = Optimizer::adam) {
    TrainingSpec training;
    training.optimizer = optimizer;
    s_.training = training;
    return *this;
  }
  // An op reading tensors a and b (shapes looked up from what is declared or produced).
  DataflowScenario& op(const std::string& name, OpKind kind, const std::string& a,
                       const std::string& b, const std::string& out) {
    WorkloadOp op;
    op.name = name;
    op.kind = kind;
    op.a_tensor = a;
    op.b_tensor = b;
    op.output_tensor = out;
    op.a = shape_of(a);
    op.b = shape_of(b);
    shapes_.push_back({out, MatmulEquation::of(kind, op.a, false).output_shape(op.a, op.b)});
    s_.workload.push_back(op);
    return *this;
  }
  // A tensor op (core/tensor_op.hpp) reading `a` (and `b` when it takes two).
  DataflowScenario& tensor_op(const std::string& name, OpKind kind, const std::string& a,
                              const std::string& b, const std::string& out,
                              TensorOpAttrs attrs = {}) {
    WorkloadOp op;
    op.name = name;
    op.kind = kind;
    op.a_tensor = a;
    op.a = shape_of(a);
    std::vector<Shape> inputs{op.a};
    if (!b.empty()) {
      op.b_tensor = b;
      op.b = shape_of(b);
      inputs.push_back(op.b);
    }
    op.output_tensor = out;
    op.attrs = attrs;
    shapes_.push_back({out, tensor_op_output_shape(kind, inputs, attrs)});
    s_.workload.push_back(op);
    return *this;
  }
  DataflowScenario& collective(const std::string& name, OpKind kind, int64_t bytes, int dim) {
    WorkloadOp op;
    op.name = name;
    op.kind = kind;
    op.bytes = bytes;
    op.mesh_dim = dim;
    s_.workload.push_back(op);
    return *this;
  }
  // The op added last belongs to layer `k` (`layer: k`, WorkloadOp::layer).
  DataflowScenario& in_layer(int k) {
    s_.workload.back().layer = k;
    return *this;
  }
  Scenario build() const { return s_; }

 private:
  Shape shape_of(const std::string& name) const {
    for (const auto& t : s_.tensors)
      if (t.name == name && t.role != TensorDecl::Role::output) return t.shape;
    for (const auto& [n, shape] : shapes_)
      if (n == name) return shape;
    throw std::runtime_error("test scenario: unknown tensor " + name);
  }

  Scenario s_;
  std::vector<std::pair<std::string, Shape>> shapes_;
};

}  // namespace symmesh::strategies::testing
