#pragma once
// Checking a sharded result against the unsharded one: the global tensor rebuilt from
// every rank's piece by its placements, and the product computed once on one CPU.
#include <vector>

#include "core/device_mesh.hpp"
#include "core/tensor_op_reference.hpp"
#include "core/tensor_spec.hpp"
#include "strategies/op_problem.hpp"

namespace symmesh::strategies {

struct AssembledTensor {
  std::vector<double> values;       // global, row-major
  double max_replica_mismatch = 0;  // largest difference between copies that must be equal
};

// Shards go to their torch.chunk offsets, Partial(sum) pieces are summed and Partial(avg)
// pieces averaged over their mesh dims; of Replicate copies the one at coordinate 0 is
// used and the others are compared with it. `pieces[r]` is mesh rank r's local tensor.
AssembledTensor assemble_global(const TensorSpec& spec, const DeviceMesh& mesh,
                                const std::vector<std::vector<double>>& pieces);

// The tensor op of `problem` on its whole tensors (no offsets: every row and vocabulary
// entry is its own), as core/tensor_op_reference.hpp computes it.
TensorOpCall whole_tensor_op_call(const OpProblem& problem);

// out = bias (broadcast from the right) + a @ b, in double, with Eigen; a tensor op's value
// (core/tensor_op_reference.hpp). `inputs` in the op's input order, each global and
// row-major.
std::vector<double> unsharded_result(const OpProblem& problem,
                                     const std::vector<std::vector<double>>& inputs);

}  // namespace symmesh::strategies
