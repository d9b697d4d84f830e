#pragma once
// The single-mesh-dim rules of each op, all built on the einsum generator from the op's
// equation (core/matmul_signature.hpp). A rule's placements are [output, inputs...] in
// the op's input order (addmm: [out, bias, a, b]; linear with a bias: [out, a, b, bias]).
#include <vector>

#include "strategies/einsum_rules.hpp"
#include "strategies/op_problem.hpp"

namespace symmesh::strategies {

// The bias placement DTensor derives from an output placement: output dims the bias lacks
// (broadcast) or where it has size 1 become R; a shard is re-indexed into the bias;
// Partial and Replicate are copied.
Placement bias_placement(const Placement& output, const Shape& output_shape,
                         const Shape& bias_shape);

// Rules for `problem`'s op, given whether any of its inputs is sharded (placeholders). A
// tensor op's are strategies/tensor_op_rules.hpp's (no placeholders).
std::vector<Rule> op_single_dim_rules(const OpProblem& problem);
// The same with the placeholder choice made by the caller: true keeps every Shard rule
// (the layout search, which may place inputs where a strategy wants them).
std::vector<Rule> op_single_dim_rules(const OpProblem& problem, bool any_input_sharded);

}  // namespace symmesh::strategies
