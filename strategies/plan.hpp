#pragma once
// The Plan for one op: the chosen placements, the redistributions that get the inputs
// there (steps, bytes, costs) and the local compute every rank does. This is the object
// the simulator evaluates and the hardware backend executes.
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "core/collective_record.hpp"
#include "core/redistribution.hpp"
#include "strategies/candidate.hpp"
#include "strategies/cost_model.hpp"
#include "strategies/op_problem.hpp"
#include "strategies/placement_search.hpp"

namespace symmesh::strategies {

// How the chosen candidate is found, each reproducing one PyTorch behaviour:
//   full_expansion  every combination of the single-dim rules over the mesh, priced by the
//                   cost model, then DTensor's selection rule (expand_to_full_mesh_op_strategy
//                   and _select_min_cost_strategy: PyTorch before PR 177799);
//   priority_queue  the search of strategies/placement_search.hpp first, the full expansion
//                   only when it finds nothing (PR 177799, March 2026). DTensor's cost model
//                   only: the search prices its hops with it.
// Either way the chosen candidate's redistributions are the greedy planner's, as PyTorch
// runs them (the search's path is not passed to redistribute()).
enum class PlacementSelection { full_expansion, priority_queue };
std::string to_string(PlacementSelection selection);  // "full-expansion", "priority-queue"
// Throws InvalidArgument naming `where` for another name.
PlacementSelection parse_placement_selection(std::string_view text, std::string_view where);
// Which PyTorch code the mode reproduces, in a sentence.
std::string pytorch_behaviour(PlacementSelection selection);

struct PlannedRedistribution {
  int input = 0;  // index into the op's inputs
  Redistribution redistribution;
  std::vector<double> step_cost_us;  // one per step
};

struct Plan {
  OpProblem problem;
  std::string cost_model;
  std::vector<Candidate> candidates;                   // every candidate, filtered ones included
  int chosen = 0;                                      // position in `candidates`
  std::vector<PlannedRedistribution> redistributions;  // inputs that change, in input order
  // The output's, to problem.output_target, when it differs (its `input` is -1).
  std::optional<PlannedRedistribution> output_redistribution;
  // The GEMM every rank runs (core/matmul_signature.hpp). Shapes come from torch.chunk, so
  // ranks may differ and a piece may be empty. Empty for a tensor op (its pieces' work is
  // core/tensor_op.hpp's, worked out where it is lowered).
  std::vector<LocalGemm> local_compute;  // one per rank
  PlacementSelection selection = PlacementSelection::full_expansion;
  // priority_queue: what the search found (nullopt: it found nothing, and the full
  // expansion chose, as in PyTorch).
  std::optional<PlacementSearchResult> search;
  bool search_capped = false;  // it stopped at kMaxSearchStates

  const Candidate& chosen_candidate() const { return candidates.at(chosen); }
  int kept_count() const;
  // Whether step `step` of `r` runs inside the matmul (the chosen candidate is fused there:
  // a's last all-gather, or the output's reduce-scatter).
  bool runs_fused(const PlannedRedistribution& r, size_t step) const;
  // How the lowering runs that step: its collective's one-sided algorithm, the fused ring,
  // or nullopt for a local step (nothing moves).
  std::optional<CollectiveAlgorithm> step_algorithm(const PlannedRedistribution& r,
                                                    size_t step) const;
};

// Validates the problem, enumerates, prices and selects. Throws InvalidArgument for bad
// problems (naming the argument).
Plan build_plan(const OpProblem& problem, const CostModel& model,
                PlacementSelection selection = PlacementSelection::full_expansion);

// The plan DTensor's selection would not necessarily pick: candidate `candidate_index`
// (its position in the enumeration), priced by `model`. For comparing strategies (the
// simulated cost model re-ranks the best few) and for tests. Throws InvalidArgument for
// an unknown index or a filtered candidate.
Plan build_plan_for(const OpProblem& problem, const CostModel& model, int candidate_index);

// The plan that runs `chosen` — a candidate found elsewhere (the layout search, over
// every rule) — for `problem`: re-priced by `model` on `problem`, with its
// redistributions; `candidates` holds only it.
Plan build_plan_with(const OpProblem& problem, const CostModel& model, Candidate chosen);

// The local matmul of `rank` when the inputs take `input_placements`.
LocalGemm local_compute_of(const OpProblem& problem,
                           const std::vector<Placements>& input_placements, int rank);

}  // namespace symmesh::strategies
