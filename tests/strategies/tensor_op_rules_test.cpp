// Ground truth for the tensor ops' sharding rules (strategies/tensor_op_rules.hpp), run with
// real numbers in double:
//  * on one mesh dim of 2 and 3 ranks, every placement combination of [output, inputs...]
//    is run piece by piece through the reference kernels (core/tensor_op_reference.hpp),
//    with the pieces' offsets worked out here from torch.chunk and asymmetric Partial(sum)
//    pieces (ground_truth.hpp): the valid combinations must be exactly the kept rules plus a
//    documented list, and every rule the attention filter drops must be invalid;
//  * on meshes 2, 3, 2x2 and 2x3, every kept candidate is planned (inputs starting at its
//    placements, replicated, or split by rows), lowered carrying fp64 data, run by the
//    independent interpreter (program_interpreter.hpp), reassembled from its output
//    placements and compared with the unsharded op to 1e-9;
//  * the rule sets against PyTorch DTensor's documented strategies where it has the op, and
//    negative controls showing what the attention filter and the vocabulary offsets guard.
// Shapes are uneven on 2 and 3 ranks (7 rows, 5 features, vocabulary 7 and 11) and leave
// some ranks empty on 2x3.
#include "strategies/tensor_op_rules.hpp"

#include <gtest/gtest.h>

#include <cstring>
#include <random>
#include <set>

#include "core/errors.hpp"
#include "core/tensor_op_reference.hpp"
#include "core/tensor_op_registry.hpp"
#include "strategies/candidate.hpp"
#include "strategies/cost_model.hpp"
#include "strategies/plan.hpp"
#include "strategies/plan_lowering.hpp"
#include "strategies/sharded_result.hpp"
#include "tests/strategies/ground_truth.hpp"
#include "tests/strategies/program_interpreter.hpp"
#include "tests/strategies/strategy_test_support.hpp"

namespace symmesh::strategies {
namespace {

using namespace testing;

struct OpCase {
  OpKind op;
  std::vector<Shape> shapes;  // the op's input order
  TensorOpAttrs attrs = {};
};

std::string describe(const OpCase& c) {
  std::string s = to_string(c.op);
  for (const Shape& shape : c.shapes) s += " " + to_string(shape);
  return s;
}

// 4 sequences of 3 tokens; 4 query heads in 2 key/value groups of head_dim 2: a group is
// (4/2 + 2)·2 = 8 columns of qkv [12, 16], the output [12, 8].
TensorOpAttrs attention_attrs(bool causal) {
  return {.seq = 3, .heads = 4, .kv_heads = 2, .head_dim = 2, .causal = causal};
}
TensorOpAttrs rows(int64_t n) {
  return {.rows = n};
}

std::vector<OpCase> all_cases() {
  const Shape m{7, 5};
  return {
      {OpKind::add, {m, m}},
      {OpKind::rms_norm, {m, {5}}},
      {OpKind::swiglu, {m, m}},
      {OpKind::gelu, {m}},
      {OpKind::attention, {{12, 16}}, attention_attrs(true)},
      {OpKind::embedding, {{7, 4}}, rows(6)},  // vocabulary 7, hidden 4, 6 tokens
      {OpKind::cross_entropy, {{7, 11}}},
      {OpKind::cross_entropy_stats, {{7, 11}}},  // 7 tokens, vocabulary 11
      {OpKind::cross_entropy_loss, {{7, 2}}},
      {OpKind::rms_norm_dgrad, {m, {5}, m}},
      {OpKind::rms_norm_wgrad, {m, m}},
      {OpKind::swiglu_dgrad_gate, {m, m, m}},
      {OpKind::swiglu_dgrad_up, {m, m}},
      {OpKind::gelu_dgrad, {m, m}},
      {OpKind::attention_dgrad, {{12, 16}, {12, 8}, {12, 8}}, attention_attrs(false)},
      {OpKind::embedding_wgrad, {{6, 4}}, rows(7)},  // 6 tokens' gradients, table of 7 rows
      {OpKind::cross_entropy_dgrad, {{7, 11}, {7, 2}, {}}},
  };
}

Shape output_shape(const OpCase& c) {
  return tensor_op_output_shape(c.op, c.shapes, c.attrs);
}

OpProblem problem_of(const OpCase& c, const std::vector<int>& mesh) {
  OpProblem p;
  p.op = c.op;
  p.mesh = DeviceMesh(mesh);
  p.attrs = c.attrs;
  for (const Shape& s : c.shapes)
    p.inputs.push_back({s, DType::fp64, Placements(mesh.size(), Placement::replicate())});
  return p;
}

// Random inputs in [-1, 1]; the loss statistics' sums of exponentials (column 0) in [1, 3].
std::vector<Dense> random_inputs(const OpCase& c, std::mt19937_64& rng) {
  std::vector<Dense> xs;
  for (size_t i = 0; i < c.shapes.size(); ++i) {
    xs.push_back(random_dense(c.shapes[i], rng));
    const bool stats = (c.op == OpKind::cross_entropy_loss && i == 0) ||
                       (c.op == OpKind::cross_entropy_dgrad && i == 1);
    if (stats)
      for (size_t e = 0; e < xs.back().data.size(); e += 2) xs.back().data[e] += 2;
  }
  return xs;
}

std::vector<std::vector<double>> values_of(const std::vector<Dense>& xs) {
  std::vector<std::vector<double>> out;
  for (const Dense& x : xs) out.push_back(x.data);
  return out;
}

// ---- one mesh dim: which placement combinations compute the op? ----

std::vector<Placement> placements_of_rank(size_t rank) {
  std::vector<Placement> out = {Placement::replicate()};
  for (size_t d = 0; d < rank; ++d) out.push_back(Placement::shard(static_cast<int>(d)));
  out.push_back(Placement::partial(ReduceOp::sum));  // the rules use no P(avg)
  return out;
}

Shape piece_shape(const Shape& global, const Placement& p, int n, int r) {
  Shape s = global;
  if (p.is_shard()) s[p.shard_dim()] = torch_chunk(global[p.shard_dim()], n, r).size;
  return s;
}
int64_t offset_along(const Shape& global, const Placement& p, int n, int r, int dim) {
  return p.is_shard() && p.shard_dim() == dim ? torch_chunk(global[dim], n, r).offset : 0;
}

// Rank r's call under `rule` on n ranks, with its offsets as core/tensor_op_reference.hpp
// defines them: token ids follow the global row (the output's for embedding); the table
// piece's (embedding) or output piece's (embedding_wgrad) first vocabulary row; the logits
// piece's first column; the whole vocabulary and the loss's whole token count.
TensorOpCall piece_call(const OpCase& c, const Rule& rule, int n, int r,
                        const std::vector<Dense>& local) {
  TensorOpCall call;
  call.op = c.op;
  call.attrs = c.attrs;
  for (const Dense& x : local) call.inputs.push_back(x.shape);
  const Shape out = output_shape(c);
  call.output = piece_shape(out, rule[0], n, r);
  const Shape& first = c.shapes[0];
  call.row_offset = c.op == OpKind::embedding ? offset_along(out, rule[0], n, r, 0)
                                              : offset_along(first, rule[1], n, r, 0);
  switch (c.op) {
    case OpKind::embedding:
      call.vocab = first[0];
      call.vocab_offset = offset_along(first, rule[1], n, r, 0);
      break;
    case OpKind::embedding_wgrad:
      call.vocab = out[0];
      call.vocab_offset = offset_along(out, rule[0], n, r, 0);
      break;
    case OpKind::cross_entropy:
    case OpKind::cross_entropy_stats:
    case OpKind::cross_entropy_dgrad:
      call.vocab = first[1];
      call.vocab_offset = offset_along(first, rule[1], n, r, 1);
      call.total_rows = first[0];
      break;
    case OpKind::cross_entropy_loss:
      call.total_rows = first[0];
      break;
    default:
      break;
  }
  return call;
}

// rule = [output, inputs...] on one mesh dim of n ranks: every rank runs the reference on
// its pieces (Partial inputs as asymmetric pieces plus noise); the outputs must represent
// the unsharded result. A piece the op cannot take (check_tensor_op) makes it invalid.
bool computes_op_1d(const OpCase& c, const std::vector<Dense>& inputs, const Rule& rule, int n,
                    std::mt19937_64& rng) {
  const Dense expected{output_shape(c), unsharded_result(problem_of(c, {1}), values_of(inputs))};
  std::vector<std::vector<Dense>> pieces;
  for (size_t i = 0; i < inputs.size(); ++i)
    pieces.push_back(shard_1d(inputs[i], rule[i + 1], n, rng));
  std::vector<Dense> outs;
  for (int r = 0; r < n; ++r) {
    std::vector<Dense> local;
    for (const auto& p : pieces) local.push_back(p[r]);
    const TensorOpCall call = piece_call(c, rule, n, r, local);
    try {
      outs.push_back(Dense{call.output, tensor_op_reference(call, values_of(local))});
    } catch (const InvalidArgument&) {
      return false;
    }
  }
  return output_matches_1d(outs, rule[0], expected);
}

// Valid combinations the rules do not list: the op is linear in one input, so that input
// P(sum) with the others replicated gives a P(sum) output. DTensor lists this shape of rule
// for mul ([P, P, R] and [P, R, P]: _pointwise_ops.py's _MUL_RULES, in linear_pointwise_ops)
// and for embedding_dense_backward ([P, P, R]: "grad_out partial, input replicate, weight
// grad keep partial" in _embedding_ops.py); symmesh's rules keep Partial to the splits a
// parallel layout produces, so these are left to a redistribution.
std::set<std::string> linear_extras(const OpCase& c) {
  std::vector<size_t> linear;
  switch (c.op) {
    case OpKind::rms_norm:         // x · r(x) · w
    case OpKind::swiglu:           // silu(gate) · up
    case OpKind::rms_norm_wgrad:   // Σ_rows dy · x · r(x)
    case OpKind::swiglu_dgrad_up:  // dy · silu(gate)
    case OpKind::gelu_dgrad:       // dy · gelu'(x)
      linear = {1};
      break;
    case OpKind::rms_norm_dgrad:     // r w dy − r³ x Σ(dy w x) / h: in w and in dy
    case OpKind::swiglu_dgrad_gate:  // dy · up · silu'(gate): in up and in dy
      linear = {1, 2};
      break;
    case OpKind::attention_dgrad:      // every term of d qkv carries one factor of d out
    case OpKind::cross_entropy_dgrad:  // (softmax − onehot) · dloss / T
      linear = {2};
      break;
    case OpKind::embedding:        // a gather of table rows
    case OpKind::embedding_wgrad:  // a scatter-add of d out's rows
      linear = {0};
      break;
    default:
      break;
  }
  std::set<std::string> out;
  for (size_t i : linear) {
    Rule rule(c.shapes.size() + 1, Placement::replicate());
    rule[0] = rule[i + 1] = Placement::partial(ReduceOp::sum);
    out.insert(rule_text(rule));
  }
  return out;
}

std::string set_text(const std::set<std::string>& s) {
  std::string out;
  for (const auto& x : s) out += "\n  " + x;
  return out.empty() ? " (none)" : out;
}

// The brute-force checks below run over all_cases(): a kind the registry gains
// (core/tensor_op_registry.cpp) must gain a case there, or its rules would go unchecked
// against sharded values.
TEST(TensorOpRules, EveryRegisteredTensorOpHasACase) {
  std::set<OpKind> cased;
  for (const OpCase& c : all_cases()) cased.insert(c.op);
  for (const TensorOpSignature& row : tensor_op_signatures())
    EXPECT_TRUE(cased.count(row.op)) << row.name << " has no case in all_cases()";
  EXPECT_EQ(cased.size(), tensor_op_signatures().size());
}

TEST(TensorOpRules, BruteForceFindsExactlyTheKeptRulesOnOneMeshDim) {
  std::mt19937_64 rng(20260312);
  for (int n : {2, 3}) {
    for (const OpCase& c : all_cases()) {
      SCOPED_TRACE(describe(c) + " on " + std::to_string(n) + " ranks");
      const OpProblem p = problem_of(c, {n});
      std::set<std::string> kept, filtered;
      for (const Candidate& cand : expand_candidates(p, op_single_dim_rules(p, true))) {
        Rule rule{cand.output_placements[0]};
        for (const Placements& in : cand.input_placements) rule.push_back(in[0]);
        (cand.kept() ? kept : filtered).insert(rule_text(rule));
      }
      std::vector<std::vector<Placement>> options = {placements_of_rank(output_shape(c).size())};
      for (const Shape& s : c.shapes) options.push_back(placements_of_rank(s.size()));
      const auto inputs = random_inputs(c, rng);
      std::set<std::string> valid;
      std::vector<size_t> pick(options.size(), 0);
      for (bool more = true; more;) {
        Rule combo;
        for (size_t i = 0; i < options.size(); ++i) combo.push_back(options[i][pick[i]]);
        if (computes_op_1d(c, inputs, combo, n, rng)) valid.insert(rule_text(combo));
        size_t i = options.size();
        while (i > 0 && ++pick[i - 1] == options[i - 1].size()) pick[--i] = 0;
        more = i > 0;
      }
      std::set<std::string> wrong, unlisted, filtered_but_valid, extras_invalid;
      const auto extras = linear_extras(c);
      for (const auto& k : kept)
        if (!valid.count(k)) wrong.insert(k);
      for (const auto& f : filtered)
        if (valid.count(f)) filtered_but_valid.insert(f);
      for (const auto& v : valid)
        if (!kept.count(v) && !extras.count(v)) unlisted.insert(v);
      for (const auto& e : extras)
        if (!valid.count(e)) extras_invalid.insert(e);
      EXPECT_TRUE(wrong.empty()) << "kept rules that do not compute the op:" << set_text(wrong);
      EXPECT_TRUE(filtered_but_valid.empty())
          << "filtered yet valid:" << set_text(filtered_but_valid);
      EXPECT_TRUE(unlisted.empty()) << "valid combinations no rule lists:" << set_text(unlisted);
      EXPECT_TRUE(extras_invalid.empty())
          << "documented extras not valid:" << set_text(extras_invalid);
      // Only attention is filtered, and only on 3 ranks (4 sequences, 2 groups).
      const bool attention = c.op == OpKind::attention || c.op == OpKind::attention_dgrad;
      EXPECT_EQ(filtered.size(), attention && n == 3 ? 2u : 0u) << set_text(filtered);
    }
  }
}

// ---- every kept candidate, planned, lowered and run ----

std::vector<unsigned char> as_bytes(const std::vector<double>& v) {
  std::vector<unsigned char> out(v.size() * sizeof(double));
  if (!v.empty()) std::memcpy(out.data(), v.data(), out.size());
  return out;
}

// Why the qkv pieces of `qkv` are not whole sequences ("sequences") or whole key/value groups
// ("groups"), by torch.chunk's nesting (ground_truth.hpp's region_of); "" when every rank's
// piece is both.
std::string attention_cut(const OpCase& c, const Placements& qkv, const std::vector<int>& mesh) {
  int world = 1;
  for (int m : mesh) world *= m;
  const int64_t group = (c.attrs.heads / c.attrs.kv_heads + 2) * c.attrs.head_dim;
  for (int64_t unit : {c.attrs.seq, group})
    for (int r = 0; r < world; ++r) {
      const Region reg = region_of(c.shapes[0], qkv, mesh, r);
      const int dim = unit == c.attrs.seq ? 0 : 1;
      if (reg.offset[dim] % unit != 0 || reg.size[dim] % unit != 0)
        return dim == 0 ? "sequences" : "groups";
    }
  return "";
}

// The starts each candidate is planned from: its own placements (nothing moves), every
// input replicated (local chunks and R -> P), and every input split by rows on mesh dim 0
// (all-gathers, all-to-alls, and the rest of the greedy planner's paths).
std::vector<std::vector<Placements>> starts_for(const OpProblem& p, const Candidate& cand) {
  const int ndim = p.mesh.ndim();
  std::vector<Placements> replicated, by_rows;
  for (const TensorSpec& t : p.inputs) {
    replicated.emplace_back(ndim, Placement::replicate());
    by_rows.push_back(replicated.back());
    if (!t.shape.empty()) by_rows.back()[0] = Placement::shard(0);
  }
  return {cand.input_placements, replicated, by_rows};
}

// Returns how many candidates were kept and run.
int run_every_kept_candidate(const OpCase& c, const std::vector<int>& mesh_shape,
                             std::mt19937_64& rng) {
  const OpProblem whole = problem_of(c, mesh_shape);
  const DeviceMesh& mesh = whole.mesh;
  const auto inputs = random_inputs(c, rng);
  const std::vector<double> expected = unsharded_result(whole, values_of(inputs));
  LoweringOptions options;
  options.name = to_string(c.op);
  for (const Dense& x : inputs) options.global_inputs.push_back(as_bytes(x.data));
  static const auto model = make_cost_model("dtensor", {});
  const bool attention = c.op == OpKind::attention || c.op == OpKind::attention_dgrad;
  int kept = 0;
  for (const Candidate& cand : expand_candidates(whole, op_single_dim_rules(whole, true))) {
    const std::string what = describe(c) + " on " + to_string(mesh) + ", candidate " +
                             std::to_string(cand.index) + " out " +
                             to_string(cand.output_placements) + " qkv/first input " +
                             to_string(cand.input_placements[0]);
    if (attention) {
      // The filter drops exactly the candidates whose pieces cut a sequence or a group, and
      // says which.
      const std::string cut = attention_cut(c, cand.input_placements[0], mesh_shape);
      EXPECT_EQ(cand.kept(), cut.empty()) << what << ": " << cand.filtered;
      if (!cut.empty()) {
        EXPECT_NE(cand.filtered.find(cut == "sequences" ? "sequences" : "key/value groups"),
                  std::string::npos)
            << what << ": " << cand.filtered;
      }
    }
    if (!cand.kept()) continue;
    ++kept;
    for (const auto& start : starts_for(whole, cand)) {
      OpProblem p = whole;
      for (size_t i = 0; i < start.size(); ++i) p.inputs[i].placements = start[i];
      // DTensor has no Shard -> Partial redistribution (add's P(sum) inputs from rows), nor
      // does the planner: such a start cannot reach the candidate.
      std::optional<Plan> planned;
      try {
        planned = build_plan_for(p, *model, cand.index);
      } catch (const InvalidArgument& e) {
        EXPECT_NE(std::string(e.what()).find("S(0) to P(sum)"), std::string::npos) << what;
        continue;
      }
      const Plan& plan = *planned;
      EXPECT_EQ(plan.chosen_candidate().input_placements, cand.input_placements) << what;
      Program program(mesh.size());
      const LoweredPlan lowered = lower_plan(plan, program, options);
      symmesh::testing::ProgramInterpreter run(program);
      run.run();
      std::vector<std::vector<double>> pieces;
      for (int r = 0; r < mesh.size(); ++r)
        pieces.push_back(run.read<double>(r, lowered.outputs[r].ref));
      const TensorSpec out{lowered.output_shape, DType::fp64, lowered.output_placements};
      const AssembledTensor got = assemble_global(out, mesh, pieces);
      EXPECT_LE(got.max_replica_mismatch, 1e-12) << what;
      if (got.values.size() != expected.size()) {
        ADD_FAILURE() << what << ": " << got.values.size() << " values";
        continue;
      }
      double error = 0;
      for (size_t e = 0; e < expected.size(); ++e)
        error = std::max(error, std::abs(got.values[e] - expected[e]));
      EXPECT_LE(error, kTolerance) << what << ", starting from " << to_string(start[0]);
    }
  }
  return kept;
}

TEST(TensorOpRules, EveryKeptCandidateLowersToTheUnshardedResultOnOneDimMeshes) {
  std::mt19937_64 rng(11);
  for (int n : {2, 3})
    for (const OpCase& c : all_cases()) {
      // Attention on 3 ranks keeps only R: 4 sequences and 2 groups do not split in 3.
      const bool attention = c.op == OpKind::attention || c.op == OpKind::attention_dgrad;
      EXPECT_EQ(run_every_kept_candidate(c, {n}, rng) == 1, attention && n == 3) << describe(c);
    }
}

TEST(TensorOpRules, EveryKeptCandidateLowersToTheUnshardedResultOnTwoDimMeshes) {
  std::mt19937_64 rng(12);
  for (const std::vector<int>& mesh : {std::vector<int>{2, 2}, std::vector<int>{2, 3}})
    for (const OpCase& c : all_cases()) EXPECT_GE(run_every_kept_candidate(c, mesh, rng), 3);
}

// ---- the rule sets against DTensor's, and negative controls ----

std::set<std::string> rule_set(const OpCase& c) {
  const auto rules = op_single_dim_rules(problem_of(c, {2}), true);
  const auto texts = rule_texts(rules);
  return {texts.begin(), texts.end()};
}

TEST(TensorOpRules, RuleSetsFollowDTensorsDocumentedStrategies) {
  const auto cases = all_cases();
  const auto find = [&](OpKind op) {
    for (const OpCase& c : cases)
      if (c.op == op) return c;
    throw std::logic_error("no case");
  };
  // torch/distributed/tensor/_ops/_pointwise_ops.py: aten.add.Tensor is a binary additive op
  // of linear_pointwise_ops, whose rules include P(sum) + P(sum) -> P(sum).
  EXPECT_TRUE(rule_set(find(OpKind::add)).count("[P(sum) | P(sum) | P(sum)]"));
  // aten.gelu.default and aten.silu.default are plain pointwise_ops: Shard and Replicate
  // only, a Partial input is replicated first. SwiGLU, GELU and their gradients alike.
  for (OpKind op : {OpKind::gelu, OpKind::swiglu, OpKind::gelu_dgrad, OpKind::swiglu_dgrad_gate,
                    OpKind::swiglu_dgrad_up})
    for (const auto& rule : op_single_dim_rules(problem_of(find(op), {2}), true))
      for (const Placement& p : rule) EXPECT_FALSE(p.is_partial()) << to_string(op);
  // _math_ops.py's norm strategies (_common_norm_forward_strategy, used by
  // fused_rms_norm_strategy): the input is replicated from the normalised dim on
  // (_replicate_dims_start_at(…, axis), which also turns Partial into Replicate) and the
  // weight replicated on every dim; the backward's weight gradient is the sum over the split
  // rows: Partial.
  EXPECT_EQ(rule_set(find(OpKind::rms_norm)),
            (std::set<std::string>{"[R | R | R]", "[S(0) | S(0) | R]"}));
  EXPECT_EQ(rule_set(find(OpKind::rms_norm_dgrad)),
            (std::set<std::string>{"[R | R | R | R]", "[S(0) | S(0) | R | S(0)]"}));
  EXPECT_EQ(rule_set(find(OpKind::rms_norm_wgrad)),
            (std::set<std::string>{"[R | R | R]", "[P(sum) | S(0) | S(0)]"}));
  // _embedding_ops.py's embedding_strategy: colwise [Shard(last), Shard(1), R], rowwise
  // [MaskPartial, Shard(0), MaskPartial] (each rank masks the ids outside its rows; the
  // outputs sum), batch [Shard(d), R, Shard(d)] (here the ids are data, not a tensor).
  EXPECT_EQ(rule_set(find(OpKind::embedding)),
            (std::set<std::string>{"[R | R]", "[S(0) | R]", "[S(1) | S(1)]", "[P(sum) | S(0)]"}));
  // embedding_dense_backward_strategy: colwise [Shard(1), Shard(last)], batch [Partial,
  // Shard(d)]. symmesh adds the vocabulary split of the gradient with d out whole (Megatron's
  // vocab-parallel table) and leaves DTensor's [Partial, Partial] to linear_extras above.
  EXPECT_EQ(rule_set(find(OpKind::embedding_wgrad)),
            (std::set<std::string>{"[R | R]", "[P(sum) | S(0)]", "[S(1) | S(1)]", "[S(0) | R]"}));
}

TEST(TensorOpRules, CuttingASequenceOrAGroupWouldGiveWrongAttention) {
  std::mt19937_64 rng(3);
  const OpCase c{OpKind::attention, {{12, 16}}, attention_attrs(true)};
  const Dense qkv = random_dense(c.shapes[0], rng);
  const std::vector<double> whole = unsharded_result(problem_of(c, {1}), {qkv.data});
  // 12 rows over 3 ranks: torch.chunk gives rows 4..7 to rank 1, the last two tokens of
  // sequence 1 (rows 3..5) and the first two of sequence 2. The op refuses that piece...
  const Dense piece = block(qkv, {4, 0}, {4, 16});
  const auto problem = check_tensor_op(OpKind::attention, {piece.shape}, c.attrs);
  ASSERT_TRUE(problem.has_value());
  EXPECT_EQ(problem->operand, "seq");
  // ...and the best rank 1 could do alone, its rows as sequences of 2, is right for
  // sequence 2's tokens but wrong for rows 4 and 5, which attend to row 3's key on rank 0.
  TensorOpCall call = whole_tensor_op_call(problem_of(c, {1}));
  call.attrs.seq = 2;
  call.inputs = {piece.shape};
  call.output = {4, 8};
  const std::vector<double> alone = tensor_op_reference(call, {piece.data});
  double head_error = 0, tail_error = 0;
  for (int64_t row = 0; row < 4; ++row)
    for (int64_t col = 0; col < 8; ++col) {
      double& error = row < 2 ? head_error : tail_error;
      error = std::max(error, std::abs(alone[row * 8 + col] - whole[(4 + row) * 8 + col]));
    }
  EXPECT_GT(head_error, 1e-3);
  EXPECT_LT(tail_error, 1e-12);
  // 16 columns over 3 ranks: rank 0 gets columns 0..5, group 0's two query heads and key
  // head but not its value head (columns 6, 7, on rank 1): head 0's output depends on them.
  EXPECT_TRUE(check_tensor_op(OpKind::attention, {{12, 6}}, c.attrs).has_value());
  Dense moved = qkv;
  for (int64_t row = 0; row < 12; ++row) moved.data[row * 16 + 6] += 1;
  const std::vector<double> changed = unsharded_result(problem_of(c, {1}), {moved.data});
  double head0_change = 0;
  for (int64_t row = 0; row < 12; ++row)
    for (int64_t col = 0; col < 2; ++col)
      head0_change =
          std::max(head0_change, std::abs(changed[row * 8 + col] - whole[row * 8 + col]));
  EXPECT_GT(head0_change, 1e-3);
}

TEST(TensorOpRules, VocabularyOffsetsDecideTheVocabSplitOps) {
  // The end-to-end check can only catch a wrong vocab_offset if the data reach every piece
  // and a wrong offset changes the sum: both shown here on 2 ranks.
  std::mt19937_64 rng(5);
  for (const OpCase& c : {OpCase{OpKind::embedding, {{7, 4}}, rows(6)},
                          OpCase{OpKind::cross_entropy_stats, {{7, 11}}}}) {
    SCOPED_TRACE(describe(c));
    const bool embedding = c.op == OpKind::embedding;
    const int64_t vocab = embedding ? 7 : 11;
    const Rule rule = embedding ? pl("P(sum),S(0)") : pl("P(sum),S(1)");
    std::set<int64_t> pieces_hit;
    for (int64_t row = 0; row < (embedding ? 6 : 7); ++row)
      pieces_hit.insert((embedding ? token_id(row, vocab) : label_id(row, vocab)) /
                        torch_chunk(vocab, 2, 0).size);
    EXPECT_EQ(pieces_hit.size(), 2u) << "every vocabulary piece holds some ids";
    const auto inputs = random_inputs(c, rng);
    EXPECT_TRUE(computes_op_1d(c, inputs, rule, 2, rng));
    // The same pieces, each rank believing it holds the vocabulary from 0:
    const auto pieces = shard_1d(inputs[0], rule[1], 2, rng);
    Dense sum = zeros(output_shape(c));
    for (int r = 0; r < 2; ++r) {
      TensorOpCall call = piece_call(c, rule, 2, r, {pieces[r]});
      call.vocab_offset = 0;
      sum = axpy(1.0, Dense{call.output, tensor_op_reference(call, {pieces[r].data})}, sum);
    }
    const Dense expected{output_shape(c), unsharded_result(problem_of(c, {1}), values_of(inputs))};
    EXPECT_FALSE(all_close(sum, expected));
  }
}

}  // namespace
}  // namespace symmesh::strategies
