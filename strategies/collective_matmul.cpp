#include "strategies/collective_matmul.hpp"

#include <algorithm>

#include "core/errors.hpp"
#include "core/redistribution.hpp"
#include "core/tensor_spec.hpp"

namespace symmesh::strategies {

std::optional<AllGatherFusion> allgather_fusion(const OpProblem& problem,
                                                const Placements& lhs_target) {
  const Placements& current = problem.inputs[problem.lhs_index()].placements;
  const std::vector<Transition> steps = plan_transitions(current, lhs_target);
  if (steps.empty()) return std::nullopt;
  const Transition& last = steps.back();
  if (!last.from.is_shard() || last.from.shard_dim() != 0 || !last.to.is_replicate())
    return std::nullopt;
  if (problem.mesh.size(last.mesh_dim) < 2) return std::nullopt;
  for (int d = 0; d < problem.mesh.ndim(); ++d)
    if (lhs_target[d].is_shard() && lhs_target[d].shard_dim() == 0) return std::nullopt;
  // Before the last step, only its mesh dim shards the leading dim (the greedy planner may
  // have moved another dim's S(0) earlier in the sequence).
  Placements before = lhs_target;
  before[last.mesh_dim] = last.from;
  for (int d = 0; d < problem.mesh.ndim(); ++d)
    if (d != last.mesh_dim && before[d].is_shard() && before[d].shard_dim() == 0)
      return std::nullopt;
  return AllGatherFusion{last.mesh_dim, problem.mesh.size(last.mesh_dim)};
}

std::vector<int> fusion_chunk_choices(int64_t smallest_shard_rows) {
  std::vector<int> out;
  for (int c = 1; c <= kMaxFusionChunks && c <= std::max<int64_t>(smallest_shard_rows, 1); c *= 2)
    out.push_back(c);
  return out;
}

namespace {

// A piece of member j's shard: rows [offset, offset + size) of it.
struct Piece {
  int shard = 0;
  int64_t offset = 0;
  int64_t rows = 0;
};

std::string step_text(int step, int steps, size_t piece, size_t pieces) {
  std::string out =
      "fused all_gather+mm step " + std::to_string(step + 1) + "/" + std::to_string(steps);
  if (pieces > 1) out += " chunk " + std::to_string(piece + 1) + "/" + std::to_string(pieces);
  return out;
}

}  // namespace

void overlapped_allgather_matmul(Program& program, const GatherMatmulSpec& spec) {
  const int p = static_cast<int>(spec.members.size());
  if (p < 1 || static_cast<int>(spec.shard_rows.size()) != p)
    throw InvalidArgument("need one shard size per member", spec.name);
  if (spec.chunks < 1) throw InvalidArgument("chunks must be >= 1", spec.name);
  const int64_t slot_rows = *std::max_element(spec.shard_rows.begin(), spec.shard_rows.end());
  const int64_t slot_bytes = slot_rows * spec.a_row_bytes;
  const SymmetricHandle slots = program.symm_alloc(spec.group, p * slot_bytes);
  std::vector<int64_t> first_row(p, 0);  // of each shard in the gathered leading dim
  for (int j = 1; j < p; ++j) first_row[j] = first_row[j - 1] + spec.shard_rows[j - 1];

  auto pieces_of = [&](int shard) {
    std::vector<Piece> out;
    for (int q = 0; q < spec.chunks; ++q) {
      const Chunk c = chunk_of(spec.shard_rows[shard], spec.chunks, q);
      if (c.size > 0) out.push_back({shard, c.offset, c.size});
    }
    return out;
  };
  auto wrap = [p](int j) { return ((j % p) + p) % p; };

  for (int i = 0; i < p; ++i) {
    const GatherMatmulMember& m = spec.members[i];
    const int64_t e = element_size_bytes(m.work.dtype);
    const int right = wrap(i + 1), left = wrap(i - 1);
    auto label = [&](const std::string& category, const std::string& detail) {
      return OpLabel{spec.name, category, detail};
    };
    // The piece's matmul into its rows of the output; `a` holds the piece's rows.
    auto multiply = [&](const Piece& piece, const BufferRef& a, const std::string& detail) {
      MatmulWork w = m.work;
      (spec.leading_is_batch ? w.batch : w.m) = piece.rows;
      const int64_t row = first_row[piece.shard] + piece.offset;
      w.a = a;
      if (m.b_row_bytes > 0) w.b = w.b.slice(row * m.b_row_bytes, piece.rows * m.b_row_bytes);
      w.c = m.c.slice(row * m.c_row_bytes, piece.rows * m.c_row_bytes);
      const int64_t bias_lead = spec.leading_is_batch ? w.bias_batch_stride : w.bias_row_stride;
      if (w.bias.id >= 0 && bias_lead != 0) {
        const int64_t off = row * bias_lead * e;
        w.bias = w.bias.slice(off, w.bias.size_bytes - off);
      }
      program.matmul(m.rank, m.compute_stream, w, label("compute", detail));
    };
    auto slot_piece = [&](const Piece& piece) {
      return slots.whole().slice(piece.shard * slot_bytes + piece.offset * spec.a_row_bytes,
                                 piece.rows * spec.a_row_bytes);
    };

    // The comm stream starts when everything before (the shard itself) is in place.
    const EventId ready = program.record_event(m.rank, m.compute_stream, label("sync", "ready"));
    program.wait_event(m.rank, m.comm_stream, ready, label("sync", "ready"));
    // Round s puts a piece on (own shard first, then the one that arrived in round s-1)
    // and then waits for the matching piece from the left, piece by piece: a piece's
    // wait follows its own put only, so every piece can be multiplied as soon as it lands.
    const std::vector<Piece> own = pieces_of(i);
    for (size_t q = 0; q < own.size(); ++q)
      multiply(own[q],
               m.a_shard.slice(own[q].offset * spec.a_row_bytes, own[q].rows * spec.a_row_bytes),
               "mm own shard" + (own.size() > 1 ? " chunk " + std::to_string(q + 1) : ""));
    // Uneven shards have different piece counts (an empty shard none): round s sends the
    // pieces of one shard and receives those of the next, so the two counts may differ.
    std::vector<Piece> sending = own;
    for (int s = 0; s < p - 1; ++s) {
      const std::vector<Piece> arriving = pieces_of(wrap(i - 1 - s));
      const size_t rounds = std::max(sending.size(), arriving.size());
      for (size_t q = 0; q < rounds; ++q) {
        if (q < sending.size()) {
          const Piece& out = sending[q];
          const BufferRef src =
              s == 0 ? m.a_shard.slice(out.offset * spec.a_row_bytes, out.rows * spec.a_row_bytes)
                     : slot_piece(out);
          program.put_signal(m.rank, m.comm_stream, src, slots,
                             out.shard * slot_bytes + out.offset * spec.a_row_bytes, right,
                             label("comm", step_text(s, p - 1, q, sending.size())));
        }
        if (q >= arriving.size()) continue;
        const std::string detail = step_text(s, p - 1, q, arriving.size());
        program.wait_signal(m.rank, m.comm_stream, slots, left, label("comm", detail));
        const EventId landed = program.record_event(m.rank, m.comm_stream, label("sync", detail));
        program.wait_event(m.rank, m.compute_stream, landed, label("sync", "chunk landed"));
        multiply(arriving[q], slot_piece(arriving[q]),
                 "mm shard " + std::to_string(arriving[q].shard) +
                     (arriving.size() > 1 ? " chunk " + std::to_string(q + 1) : ""));
      }
      sending = arriving;
    }
    // Join: nothing after this op on the compute stream starts before the comm stream is done.
    const EventId done = program.record_event(m.rank, m.comm_stream, label("sync", "comm done"));
    program.wait_event(m.rank, m.compute_stream, done, label("sync", "comm done"));
  }
}

}  // namespace symmesh::strategies
