#pragma once
// Single-mesh-dim sharding rules generated from an einsum equation (core/einsum.hpp), in
// PyTorch DTensor's order (shared in docs/dtensor-strategies.md §1). A rule lists the
// placements of [output, lhs, rhs] on one mesh dim. The order decides ties later, so it is
// part of the contract:
//   0. [R, R, R]
//   1. each batch dim b:        [S(b_out), S(b_lhs), S(b_rhs)]
//   2. each contracting dim k:  [P(sum), S(k_lhs), S(k_rhs)]
//   3. each lhs-only dim:       [S(d_out), S(d_lhs), R]
//   4. each rhs-only dim:       [S(d_out), R, S(d_rhs)]
//   5. for op in (sum, avg):    [P(op), P(op), R], [P(op), R, P(op)]
// Dims within a category are taken in sorted letter order, as DTensor does.
#include <vector>

#include "core/einsum.hpp"
#include "core/placement.hpp"

namespace symmesh::strategies {

using Rule = std::vector<Placement>;

// Rules 1–4 hold Shard "placeholders": when no input of the op is sharded on any mesh
// dim, DTensor fills them with nothing, so every rule holding a Shard disappears.
std::vector<Rule> einsum_single_dim_rules(const EinsumEquation& equation, bool any_input_sharded);

}  // namespace symmesh::strategies
