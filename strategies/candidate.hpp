#pragma once
// N-D strategy candidates: the cartesian product of the single-dim rules over the mesh
// dims, in DTensor's index order (the last mesh dim varies fastest; the index is the
// tie-break order), with DTensor's filters (docs/dtensor-strategies.md §2).
#include <limits>
#include <string>
#include <vector>

#include "strategies/op_problem.hpp"
#include "strategies/op_rules.hpp"

namespace symmesh::strategies {

constexpr double kInfiniteCost = std::numeric_limits<double>::infinity();

// How the strategy's communication and local matmul are run (strategies/collective_matmul.hpp):
//   unfused                the redistributions, then the local matmul (DTensor's way);
//   fused_allgather_mm     a's last all-gather passed around its ring in chunks with
//                          put_signal while every rank multiplies the chunks it already has;
//   fused_mm_reducescatter the output's reduce-scatter (to problem.output_target) run as a
//                          ring of accumulators: each partial product is sent with
//                          put_signal while the next one is computed.
enum class Implementation { unfused, fused_allgather_mm, fused_mm_reducescatter };
std::string to_string(Implementation implementation);

struct Candidate {
  int index = 0;                       // position in DTensor's enumeration
  std::vector<int> rule_per_mesh_dim;  // which single-dim rule each mesh dim uses
  Placements output_placements;
  std::vector<Placements> input_placements;  // one list per input, op input order
  std::string filtered;                      // why DTensor drops it; empty when kept
  // Filled by a cost model:
  std::vector<double> input_cost_us;  // per input, redistribution cost
  double output_cost_us = 0;          // to problem.output_target (0 without one)
  double compute_us = 0;              // local compute (models that price it)
  double cost_us = kInfiniteCost;     // what selection minimises
  // Filled by models that fuse (analytic, simulated): the implementation priced into
  // cost_us, its chunks per shard (1 when unfused), and both prices for `plan --explain`
  // (fused_cost_us is infinite when the candidate cannot be fused).
  Implementation implementation = Implementation::unfused;
  int chunks = 1;
  double unfused_cost_us = kInfiniteCost;
  double fused_cost_us = kInfiniteCost;  // the cheaper fusion, when it has one
  Implementation fused_implementation = Implementation::unfused;  // which one that is
  int fused_chunks = 1;                                           // and its chunk count

  bool kept() const { return filtered.empty(); }
};

// Every candidate, filtered ones included (they carry the reason), in index order.
// The count is rules^ndim; throws InvalidArgument past 1,000,000 candidates.
std::vector<Candidate> expand_candidates(const OpProblem& problem, const std::vector<Rule>& rules);

// DTensor's shardability test: drop if some tensor dim of size s is cut into k > 1
// pieces with s < k. Uneven sharding (10 rows over 4 ranks) is allowed.
bool is_shardable(const Shape& shape, const Placements& placements, const DeviceMesh& mesh);

}  // namespace symmesh::strategies
