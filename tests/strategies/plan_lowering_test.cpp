// Lowering plans into Programs: for every kept candidate of mm/bmm/addmm on small meshes
// (uneven shapes, Partial inputs), the lowered program — run by an independent interpreter
// — must produce the unsharded product. This exercises every redistribution (all-gather
// along leading and inner dims, reduce-scatter, all-reduce, all-to-all, local chunk and
// partial) and the local matmul with its bias. Every candidate whose a ends in an
// all-gather of its leading dim is also lowered as the overlapped all-gather + mm
// (strategies/collective_matmul.hpp) with 1, 2 and 3 chunks per shard: same result.
#include "strategies/plan_lowering.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <random>

#include "strategies/collective_matmul.hpp"
#include "strategies/cost_model.hpp"
#include "tests/strategies/program_interpreter.hpp"

namespace symmesh::strategies {
namespace {

std::vector<double> random_values(int64_t n, std::mt19937& rng) {
  std::uniform_real_distribution<double> dist(-1.0, 1.0);
  std::vector<double> v(n);
  for (auto& x : v) x = dist(rng);
  return v;
}

std::vector<unsigned char> as_bytes(const std::vector<double>& v) {
  std::vector<unsigned char> out(v.size() * sizeof(double));
  if (!v.empty()) std::memcpy(out.data(), v.data(), out.size());  // a zero-size tensor: no data
  return out;
}

// linear(a, b, bias): out[..., n] = sum_k a[..., k] b[n, k] + bias[n] (a of rank 2 or 3,
// as torch.nn.functional.linear defines it), fp64.
std::vector<double> linear_reference(const OpProblem& p,
                                     const std::vector<std::vector<double>>& in) {
  const Shape& as = p.inputs[0].shape;
  const int64_t rows = numel(as) / as.back(), K = as.back(), N = p.inputs[1].shape[0];
  std::vector<double> out(rows * N, 0);
  for (int64_t r = 0; r < rows; ++r)
    for (int64_t n = 0; n < N; ++n) {
      // A 0-d bias is one value added everywhere; a [n] bias one per column.
      double acc = !p.has_bias() ? 0.0 : in[2][p.inputs[2].shape.empty() ? 0 : n];
      for (int64_t k = 0; k < K; ++k) acc += in[0][r * K + k] * in[1][n * K + k];
      out[r * N + n] = acc;
    }
  return out;
}

// Unsharded reference: out = bias (broadcast, right-aligned) + a @ b, fp64.
std::vector<double> reference(const OpProblem& p, const std::vector<std::vector<double>>& in) {
  if (p.op == OpKind::linear) return linear_reference(p, in);
  const Shape out_shape = p.output_shape();
  const bool batched = out_shape.size() == 3;
  const int64_t B = batched ? out_shape[0] : 1, M = out_shape[batched ? 1 : 0],
                N = out_shape.back();
  const Shape& as = p.inputs[p.lhs_index()].shape;
  const int64_t K = as.back();
  const auto& a = in[p.lhs_index()];
  const auto& b = in[p.rhs_index()];
  std::vector<double> out(B * M * N, 0);
  for (int64_t q = 0; q < B; ++q)
    for (int64_t i = 0; i < M; ++i)
      for (int64_t j = 0; j < N; ++j) {
        double acc = 0;
        for (int64_t k = 0; k < K; ++k) acc += a[(q * M + i) * K + k] * b[(q * K + k) * N + j];
        if (p.has_bias()) {
          const Shape& bs = p.inputs[p.bias_index()].shape;
          const int64_t idx3[3] = {q, i, j};
          int64_t flat = 0;
          const size_t off = out_shape.size() - bs.size();
          for (size_t d = 0; d < bs.size(); ++d) {
            const int64_t coord = bs[d] == 1 ? 0 : idx3[3 - out_shape.size() + off + d];
            flat = flat * bs[d] + coord;
          }
          acc += in[p.bias_index()][flat];
        }
        out[(q * M + i) * N + j] = acc;
      }
  return out;
}

// Rebuilds the global output from the ranks' pieces by the output placements: shards at
// their torch.chunk offsets, Partial(sum) summed and Partial(avg) averaged over their
// mesh dims, Replicate read at coordinate 0 and checked equal elsewhere.
double max_error_vs_reference(const OpProblem& p, const LoweredPlan& lowered,
                              testing::ProgramInterpreter& run,
                              const std::vector<double>& expected) {
  const DeviceMesh& mesh = p.mesh;
  const TensorSpec out{lowered.output_shape, DType::fp64, lowered.output_placements};
  const Shape& g = lowered.output_shape;
  std::vector<double> sum(numel(g), 0.0);
  double avg_divisor = 1, max_replica_diff = 0;
  for (int d = 0; d < mesh.ndim(); ++d)
    if (out.placements[d] == Placement::partial(ReduceOp::avg)) avg_divisor *= mesh.size(d);
  std::vector<std::vector<double>> first_replica(mesh.size());
  for (int r = 0; r < mesh.size(); ++r) {
    const auto coords = mesh.coordinates(r);
    bool canonical = true;  // coordinate 0 on every Replicate dim
    for (int d = 0; d < mesh.ndim(); ++d)
      canonical &= !out.placements[d].is_replicate() || coords[d] == 0;
    const LocalView view = local_view(out, mesh, r);
    const auto piece = run.read<double>(r, lowered.outputs[r].ref);
    EXPECT_EQ(static_cast<int64_t>(piece.size()), view.numel());
    // Global flat index of each local element.
    Shape sh = view.shape, off = view.offset;
    while (sh.size() < 3) sh.insert(sh.begin(), 1), off.insert(off.begin(), 0);
    Shape gg = g;
    while (gg.size() < 3) gg.insert(gg.begin(), 1);
    for (int64_t a = 0; a < sh[0]; ++a)
      for (int64_t b = 0; b < sh[1]; ++b)
        for (int64_t c = 0; c < sh[2]; ++c) {
          const int64_t local = (a * sh[1] + b) * sh[2] + c;
          const int64_t global = ((a + off[0]) * gg[1] + (b + off[1])) * gg[2] + (c + off[2]);
          if (canonical) sum[global] += piece[local];
        }
    if (canonical) first_replica[r] = piece;
  }
  // Replicas: every rank equals the canonical rank with the same non-Replicate coords.
  for (int r = 0; r < mesh.size(); ++r) {
    auto coords = mesh.coordinates(r);
    for (int d = 0; d < mesh.ndim(); ++d)
      if (out.placements[d].is_replicate()) coords[d] = 0;
    const auto mine = run.read<double>(r, lowered.outputs[r].ref);
    const auto& canon = first_replica[mesh.rank(coords)];
    for (size_t i = 0; i < mine.size(); ++i)
      max_replica_diff = std::max(max_replica_diff, std::abs(mine[i] - canon[i]));
  }
  EXPECT_LT(max_replica_diff, 1e-12);
  double err = 0;
  for (size_t i = 0; i < sum.size(); ++i)
    err = std::max(err, std::abs(sum[i] / avg_divisor - expected[i]));
  return err;
}

struct LoweringCase {
  OpKind op;
  std::vector<int> mesh;
  std::vector<Shape> shapes;            // ATen input order
  std::vector<std::string> placements;  // current placements per input
  std::string out = {};                 // where the output must end up ("" = anywhere)
};

struct FusedCounts {
  int allgather = 0, reducescatter = 0;
};

// Lowers `plan` (as its chosen candidate's implementation says), runs it and returns the
// error against the unsharded result and every rank's output piece.
struct LoweredRun {
  double error = 0;
  std::vector<std::vector<double>> pieces;
};

LoweredRun run_lowered(const OpProblem& p, const Plan& plan, const LoweringOptions& options,
                       const std::vector<double>& expected) {
  Program program(p.mesh.size());
  const LoweredPlan lowered = lower_plan(plan, program, options);
  testing::ProgramInterpreter run(program);
  run.run();
  LoweredRun out;
  out.error = max_error_vs_reference(p, lowered, run, expected);
  for (int r = 0; r < p.mesh.size(); ++r)
    out.pieces.push_back(run.read<double>(r, lowered.outputs[r].ref));
  return out;
}

// Returns how many candidates were also checked fused, of each kind.
FusedCounts check_every_candidate(const LoweringCase& c) {
  OpProblem p;
  p.op = c.op;
  p.mesh = DeviceMesh(c.mesh);
  for (size_t i = 0; i < c.shapes.size(); ++i)
    p.inputs.push_back({c.shapes[i], DType::fp64, parse_placements(c.placements[i])});
  if (!c.out.empty()) p.output_target = parse_placements(c.out);
  std::mt19937 rng(1234);
  std::vector<std::vector<double>> values;
  LoweringOptions options;
  options.name = "op";
  for (const auto& s : c.shapes) {
    values.push_back(random_values(numel(s), rng));
    options.global_inputs.push_back(as_bytes(values.back()));
  }
  const auto expected = reference(p, values);
  const auto model = make_cost_model("dtensor", {});
  const Plan selected = build_plan(p, *model);
  int checked = 0;
  FusedCounts fused;
  for (const auto& cand : selected.candidates) {
    if (!cand.kept() || std::isinf(cand.cost_us)) continue;
    Plan plan = build_plan_for(p, *model, cand.index);
    const LoweredRun unfused = run_lowered(p, plan, options, expected);
    EXPECT_LT(unfused.error, 1e-12)
        << "candidate #" << cand.index << " out " << to_string(cand.output_placements)
        << " from current " << c.placements[0] << " / " << c.placements[1];
    ++checked;
    Implementation kind = Implementation::unfused;
    if (allgather_fusion(p, cand.input_placements[p.lhs_index()])) {
      kind = Implementation::fused_allgather_mm;
      ++fused.allgather;
    } else if (reducescatter_fusion(p, cand.output_placements)) {
      kind = Implementation::fused_mm_reducescatter;
      ++fused.reducescatter;
    } else {
      continue;
    }
    for (int chunks : {1, 2, 3}) {
      plan.candidates[plan.chosen].implementation = kind;
      plan.candidates[plan.chosen].chunks = chunks;
      SCOPED_TRACE(to_string(kind) + " candidate " + to_string(cand.input_placements[0]) + " x " +
                   to_string(cand.input_placements[1]) + " from " + c.placements[0] + " x " +
                   c.placements[1] + ", " + std::to_string(chunks) + " chunks");
      LoweredRun run;
      try {
        run = run_lowered(p, plan, options, expected);
      } catch (const std::exception& e) {
        ADD_FAILURE() << e.what();
        continue;
      }
      EXPECT_LT(run.error, 1e-12) << "fused, " << chunks << " chunks, candidate #" << cand.index;
      // The fused all-gather multiplies the same rows by the same columns in the same
      // order: bit-identical. The fused reduce-scatter adds the partial products in ring
      // order, as the unfused ring does, but a piece at a time: equal to rounding.
      double diff = 0;
      EXPECT_EQ(run.pieces.size(), unfused.pieces.size());
      for (size_t r = 0; r < std::min(run.pieces.size(), unfused.pieces.size()); ++r) {
        EXPECT_EQ(run.pieces[r].size(), unfused.pieces[r].size()) << "rank " << r;
        for (size_t i = 0; i < std::min(run.pieces[r].size(), unfused.pieces[r].size()); ++i)
          diff = std::max(diff, std::abs(run.pieces[r][i] - unfused.pieces[r][i]));
      }
      if (kind == Implementation::fused_allgather_mm)
        EXPECT_EQ(diff, 0.0) << "fused vs unfused, " << chunks << " chunks";
      else
        EXPECT_LT(diff, 1e-12) << "fused vs unfused, " << chunks << " chunks";
    }
  }
  EXPECT_GT(checked, 1);
  return fused;
}

TEST(PlanLowering, MmEveryCandidateOn1DMeshUnevenShapes) {
  // 7 rows / 5 inner / 6 cols over 3 ranks: chunks 3,3,1 / 2,2,1 / 2,2,2.
  for (const char* a : {"S(0)", "S(1)", "R", "P(sum)", "P(avg)"})
    for (const char* b : {"S(0)", "S(1)", "R"})
      check_every_candidate({OpKind::mm, {3}, {{7, 5}, {5, 6}}, {a, b}});
}

TEST(PlanLowering, MmEveryCandidateOn2DMeshes) {
  check_every_candidate({OpKind::mm, {2, 2}, {{6, 5}, {5, 7}}, {"S(0),S(1)", "R,S(0)"}});
  check_every_candidate({OpKind::mm, {2, 3}, {{7, 6}, {6, 5}}, {"S(1),S(0)", "S(0),R"}});
  check_every_candidate({OpKind::mm, {2, 2}, {{9, 4}, {4, 5}}, {"S(0),S(0)", "P(sum),R"}});
  check_every_candidate({OpKind::mm, {2, 2}, {{8, 6}, {6, 4}}, {"P(sum),P(avg)", "R,R"}});
}

TEST(PlanLowering, BmmEveryCandidate) {
  check_every_candidate({OpKind::bmm, {3}, {{4, 5, 3}, {4, 3, 7}}, {"S(0)", "S(2)"}});
  check_every_candidate({OpKind::bmm, {2, 2}, {{3, 5, 4}, {3, 4, 5}}, {"S(2),S(0)", "S(1),R"}});
}

TEST(PlanLowering, FusedAllGatherMatmulOnEveryMeshAndOp) {
  // a gathered along rows: 7 rows over 3 ranks are shards of 3, 3, 1 (uneven).
  EXPECT_GT(check_every_candidate({OpKind::mm, {3}, {{7, 5}, {5, 6}}, {"S(0)", "S(1)"}}).allgather,
            0);
  // 2-D meshes: the gather on either mesh dim, the other dim sharding k or n.
  EXPECT_GT(check_every_candidate({OpKind::mm, {2, 3}, {{7, 6}, {6, 5}}, {"S(0),S(1)", "R,S(0)"}})
                .allgather,
            0);
  EXPECT_GT(check_every_candidate({OpKind::mm, {2, 2}, {{5, 6}, {6, 4}}, {"S(1),S(0)", "S(0),R"}})
                .allgather,
            0);
  // bmm: the batch is a's leading dim (5 batches over 2 ranks: 3 and 2).
  EXPECT_GT(
      check_every_candidate({OpKind::bmm, {2}, {{5, 3, 4}, {5, 4, 2}}, {"S(0)", "R"}}).allgather,
      0);
  // Bias along the gathered rows (a full [m, n] bias) and broadcast ones.
  EXPECT_GT(
      check_every_candidate({OpKind::addmm, {3}, {{7, 4}, {7, 5}, {5, 4}}, {"R", "S(0)", "S(1)"}})
          .allgather,
      0);
  EXPECT_GT(check_every_candidate(
                {OpKind::baddbmm, {2}, {{3, 1, 4}, {3, 2, 5}, {3, 5, 4}}, {"S(0)", "S(0)", "R"}})
                .allgather,
            0);
}

TEST(PlanLowering, OutputTargetAndFusedMatmulReduceScatter) {
  // k sharded on both inputs gives a Partial(sum) output; wanted S(0): a reduce-scatter of
  // 7 rows over 3 ranks (blocks 3, 3, 1), fused or not. Every candidate also runs its own
  // redistribution of the output to S(0) (an all-to-all, a local chunk, ...).
  EXPECT_GT(check_every_candidate({OpKind::mm, {3}, {{7, 5}, {5, 6}}, {"S(1)", "S(0)"}, "S(0)"})
                .reducescatter,
            0);
  // 2-D: the reduce-scatter on mesh dim 0 while dim 1 shards the output's columns, and on
  // mesh dim 1 while dim 0 shards them.
  EXPECT_GT(check_every_candidate(
                {OpKind::mm, {2, 2}, {{5, 6}, {6, 7}}, {"S(1),R", "S(0),S(1)"}, "S(0),S(1)"})
                .reducescatter,
            0);
  EXPECT_GT(check_every_candidate(
                {OpKind::mm, {2, 3}, {{7, 6}, {6, 5}}, {"R,S(1)", "S(1),S(0)"}, "S(1),S(0)"})
                .reducescatter,
            0);
  // bmm: the batch is the output's leading dim (5 batches over 2 ranks).
  EXPECT_GT(
      check_every_candidate({OpKind::bmm, {2}, {{5, 3, 4}, {5, 4, 2}}, {"S(2)", "S(1)"}, "S(0)"})
          .reducescatter,
      0);
  // With a bias (a Partial(sum) bias is added once, by coordinate 0).
  EXPECT_GT(check_every_candidate(
                {OpKind::addmm, {3}, {{7, 4}, {7, 5}, {5, 4}}, {"R", "S(1)", "S(0)"}, "S(0)"})
                .reducescatter,
            0);
  // Targets that are not a reduce-scatter still lower every candidate unfused.
  check_every_candidate({OpKind::mm, {2, 2}, {{6, 5}, {5, 7}}, {"S(0),S(1)", "R,S(0)"}, "R,R"});
  check_every_candidate({OpKind::mm, {3}, {{7, 5}, {5, 6}}, {"S(0)", "S(1)"}, "S(1)"});
}

TEST(PlanLowering, AddmmAndBaddbmmWithBroadcastBias) {
  check_every_candidate({OpKind::addmm, {3}, {{6}, {5, 4}, {4, 6}}, {"R", "S(0)", "S(1)"}});
  check_every_candidate(
      {OpKind::addmm, {2, 2}, {{5, 1}, {5, 4}, {4, 6}}, {"R,R", "S(1),R", "S(0),S(1)"}});
  check_every_candidate(
      {OpKind::baddbmm, {2}, {{1, 3, 5}, {2, 3, 4}, {2, 4, 5}}, {"R", "S(0)", "S(2)"}});
}

TEST(PlanLowering, LinearEveryCandidate) {
  // b is the weight [n, k]: every rule of mm on bᵀ, with b's shard dims swapped.
  for (const char* a : {"S(0)", "S(1)", "R", "P(sum)"})
    for (const char* b : {"S(0)", "S(1)", "R"})
      check_every_candidate({OpKind::linear, {3}, {{7, 5}, {6, 5}}, {a, b}});
  // [batch, sequence, hidden] inputs: the GEMM's rows are batch x sequence.
  check_every_candidate({OpKind::linear, {2, 2}, {{3, 5, 4}, {6, 4}}, {"S(0),S(1)", "R,S(0)"}});
  check_every_candidate({OpKind::linear, {3}, {{5, 3, 4}, {7, 4}}, {"S(2)", "S(1)"}});
  // With a bias [n], sharded with the output's last dim or replicated.
  check_every_candidate({OpKind::linear, {3}, {{7, 5}, {6, 5}, {6}}, {"S(0)", "S(0)", "S(0)"}});
  check_every_candidate(
      {OpKind::linear, {2, 2}, {{3, 5, 4}, {6, 4}, {6}}, {"S(1),R", "R,S(1)", "R,R"}});
}

TEST(PlanLowering, ZeroSizeDimsAndZeroDimBiasEveryCandidate) {
  // PyTorch accepts these: torch.mm of a 0x5 by a 5x6 is an empty 0x6; of a 7x0 by a 0x6 a
  // 7x6 of zeros; torch.addmm(torch.tensor(x), a, b) adds x to every element. Every kept
  // candidate must rebuild the unsharded reference (a zero-size dim cannot be split, so the
  // rules that would split it are filtered before they reach here).
  for (const char* a : {"S(0)", "S(1)", "R"}) {
    check_every_candidate({OpKind::mm, {3}, {{0, 5}, {5, 6}}, {a, "R"}});
    check_every_candidate({OpKind::mm, {3}, {{7, 0}, {0, 6}}, {a, "S(1)"}});
  }
  check_every_candidate({OpKind::mm, {2, 2}, {{6, 5}, {5, 0}}, {"S(0),S(1)", "R,R"}});
  check_every_candidate({OpKind::bmm, {2}, {{0, 3, 4}, {0, 4, 5}}, {"S(1)", "S(2)"}});
  check_every_candidate({OpKind::addmm, {3}, {{}, {7, 5}, {5, 6}}, {"R", "S(0)", "S(1)"}});
  check_every_candidate({OpKind::addmm, {3}, {{}, {7, 0}, {0, 6}}, {"R", "S(0)", "R"}});
  check_every_candidate(
      {OpKind::baddbmm, {2, 2}, {{}, {2, 3, 4}, {2, 4, 5}}, {"R,R", "S(0),S(1)", "R,S(2)"}});
  check_every_candidate({OpKind::linear, {3}, {{7, 5}, {6, 5}, {}}, {"S(0)", "S(1)", "R"}});
  check_every_candidate({OpKind::linear, {3}, {{4, 0, 5}, {6, 5}, {}}, {"S(0)", "R", "R"}});
}

TEST(PlanLowering, LinearFusedAllGatherAndReduceScatter) {
  // 2-D: rows gathered around the ring while the weight's rows (the output's columns) stay put.
  EXPECT_GT(
      check_every_candidate({OpKind::linear, {3}, {{7, 5}, {6, 5}}, {"S(0)", "S(0)"}}).allgather,
      0);
  // 3-D: the leading dim is a's batch, whose sequence rows travel with it (3 batches of 5
  // rows over 2 ranks: blocks of 2 and 1 batch).
  EXPECT_GT(
      check_every_candidate({OpKind::linear, {2}, {{3, 5, 4}, {6, 4}, {6}}, {"S(0)", "R", "R"}})
          .allgather,
      0);
  // k sharded: a Partial(sum) output reduce-scattered to the rows that the next op wants.
  EXPECT_GT(check_every_candidate(
                {OpKind::linear, {2}, {{3, 5, 4}, {6, 4}, {6}}, {"S(2)", "S(1)", "R"}, "S(0)"})
                .reducescatter,
            0);
}

TEST(PlanLowering, TimingOnlyProgramHasNoInitialBytesOrOutputs) {
  OpProblem p;
  p.op = OpKind::mm;
  p.mesh = DeviceMesh({4});
  p.inputs = {{{8, 8}, DType::bf16, parse_placements("S(0)")},
              {{8, 8}, DType::bf16, parse_placements("S(0)")}};
  const auto model = make_cost_model("dtensor", {});
  Program program(4);
  lower_plan(build_plan(p, *model), program, {});
  EXPECT_TRUE(program.outputs().empty());
  for (const auto& a : program.local_allocations()) EXPECT_TRUE(a.initial.empty());
  // The chosen plan all-gathers b (S(0) -> R): a ring of 3 put_signal/wait_signal steps.
  int puts = 0;
  for (const auto& s : program.streams(0))
    for (const auto& op : s.ops) puts += op.kind() == StreamOp::Kind::put_signal;
  EXPECT_EQ(puts, 3);
}

}  // namespace
}  // namespace symmesh::strategies
