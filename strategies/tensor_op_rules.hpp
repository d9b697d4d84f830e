#pragma once
// The single-mesh-dim rules of tensor ops (core/tensor_op.hpp), as DTensor places them: a
// rule lists the placements of [output, inputs...] on one mesh dim, as for matrix ops
// (strategies/op_rules.hpp), and the N-D candidates are their product over the mesh dims.
// They are read from each op's row (core/tensor_op_registry.hpp: its sharding class and
// listed rules), so a new pointwise op's rules come with its row:
//
//   add                                  R; S(d) for every dim; P(sum) (a sum of partial
//                                        sums is the partial sum of the sum: DTensor's
//                                        linear pointwise ops)
//   swiglu, gelu and their dgrads        R; S(d) for every dim (pointwise, not linear)
//   rms_norm, rms_norm_dgrad             R; rows split, the weight replicated: the
//                                        normalised (last) dim stays whole, as DTensor's
//                                        norm strategies require
//   rms_norm_wgrad                       R; rows split -> the weight gradient Partial(sum)
//   attention, attention_dgrad           R; S(0): whole sequences per rank; S(1): whole
//                                        key/value groups per rank (Megatron's tensor
//                                        parallel attention: heads split, each rank its
//                                        groups' q, k and v)
//   embedding (table -> rows)            R; rows (tokens) split with the table replicated;
//                                        hidden split (column-wise); the table's vocabulary
//                                        split -> output Partial(sum) (Megatron's
//                                        vocab-parallel embedding: each rank looks up the
//                                        ids in its rows, zeros elsewhere)
//   embedding_wgrad (d rows -> d table)  R; rows split -> Partial(sum); hidden split;
//                                        vocabulary split with the rows' gradient whole
//   cross_entropy_stats (logits -> [T,2]) R; rows split; the vocabulary split -> Partial(sum)
//                                        (Megatron's vocab-parallel cross entropy: each rank
//                                        sums its columns, the planner all-reduces)
//   cross_entropy_loss (stats -> loss),  R; rows split -> Partial(sum) (each rank its rows'
//   cross_entropy                        share of the mean)
//   cross_entropy_dgrad                  R; rows split (statistics with them, d loss
//                                        replicated); the vocabulary split (statistics and
//                                        d loss replicated)
#include <string>
#include <vector>

#include "strategies/candidate.hpp"

namespace symmesh::strategies {

std::vector<Rule> tensor_op_rules(const OpProblem& problem);

// Why candidate `c` cannot run the tensor op (empty when it can): attention split inside a
// sequence or a key/value group (the split counts must divide the sequences and groups).
std::string tensor_op_filter(const OpProblem& problem, const Candidate& c);

}  // namespace symmesh::strategies
