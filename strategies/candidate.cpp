#include "strategies/candidate.hpp"

#include <algorithm>
#include <array>

#include "core/errors.hpp"
#include "strategies/tensor_op_rules.hpp"

namespace symmesh::strategies {

std::string to_string(Implementation implementation) {
  switch (implementation) {
    case Implementation::unfused:
      return "unfused";
    case Implementation::fused_allgather_mm:
      return "fused-allgather-mm";
    case Implementation::fused_mm_reducescatter:
      return "fused-mm-reducescatter";
  }
  return "unfused";
}

bool is_shardable(const Shape& shape, const Placements& placements, const DeviceMesh& mesh) {
  // Called for every input of every candidate: no heap allocation for ranks up to 8.
  constexpr size_t kInline = 8;
  std::array<int64_t, kInline> inline_pieces;
  std::vector<int64_t> heap_pieces;
  int64_t* pieces = inline_pieces.data();
  if (shape.size() > kInline) {
    heap_pieces.resize(shape.size());
    pieces = heap_pieces.data();
  }
  std::fill(pieces, pieces + shape.size(), int64_t{1});
  for (int d = 0; d < mesh.ndim(); ++d) {
    if (!placements[d].is_shard()) continue;
    const int t = placements[d].shard_dim();
    if (t >= static_cast<int>(shape.size())) return false;
    pieces[t] *= mesh.size(d);
  }
  for (size_t t = 0; t < shape.size(); ++t)
    if (pieces[t] > 1 && shape[t] < pieces[t]) return false;
  return true;
}

std::vector<Candidate> expand_candidates(const OpProblem& problem, const std::vector<Rule>& rules) {
  const int ndim = problem.mesh.ndim();
  const int num_rules = static_cast<int>(rules.size());
  double count = 1;
  for (int d = 0; d < ndim; ++d) count *= num_rules;
  if (count > 1e6)
    throw InvalidArgument(std::to_string(num_rules) + " rules over a " + std::to_string(ndim) +
                              "-D mesh give too many candidates to enumerate",
                          "--mesh");
  const int total = static_cast<int>(count);
  const size_t num_inputs = problem.inputs.size();
  const auto names = problem.input_names();

  std::vector<Candidate> out(total);
  std::vector<int> digits(ndim, 0);
  for (int index = 0; index < total; ++index) {
    Candidate& c = out[index];
    c.index = index;
    c.rule_per_mesh_dim = digits;
    c.output_placements.resize(ndim, Placement::replicate());
    c.input_placements.assign(num_inputs, Placements(ndim, Placement::replicate()));
    for (int d = 0; d < ndim; ++d) {
      const Rule& rule = rules[digits[d]];
      c.output_placements[d] = rule[0];
      for (size_t i = 0; i < num_inputs; ++i) c.input_placements[i][d] = rule[i + 1];
    }
    // DTensor also drops a tensor that mixes Partial kinds, except sum with avg (they
    // commute). symmesh's Partial has exactly those two kinds, so that filter never
    // removes a candidate here; a third kind would need it back.
    for (size_t i = 0; i < num_inputs && c.kept(); ++i) {
      if (!is_shardable(problem.inputs[i].shape, c.input_placements[i], problem.mesh))
        c.filtered = names[i] + " " + to_string(problem.inputs[i].shape) + " cannot be split as " +
                     to_string(c.input_placements[i]);
    }
    if (c.kept() && problem.is_tensor_op()) c.filtered = tensor_op_filter(problem, c);
    // Next index: the last mesh dim varies fastest.
    for (int d = ndim - 1; d >= 0; --d) {
      if (++digits[d] < num_rules) break;
      digits[d] = 0;
    }
  }
  return out;
}

}  // namespace symmesh::strategies
