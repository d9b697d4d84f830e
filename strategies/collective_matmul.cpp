#include "strategies/collective_matmul.hpp"

#include <algorithm>
#include <numeric>

#include "core/errors.hpp"
#include "core/redistribution.hpp"
#include "core/tensor_spec.hpp"

namespace symmesh::strategies {

std::optional<AllGatherFusion> allgather_fusion(const OpProblem& problem,
                                                const Placements& lhs_target) {
  if (problem.is_tensor_op()) return std::nullopt;  // only matmuls are fused
  const Placements& current = problem.inputs[problem.lhs_index()].placements;
  const std::vector<Transition> steps = plan_transitions(current, lhs_target, problem.mesh);
  if (steps.empty()) return std::nullopt;
  const Transition& last = steps.back();
  if (!last.from.is_shard() || last.from.shard_dim() != 0 || !last.to.is_replicate())
    return std::nullopt;
  if (problem.mesh.size(last.mesh_dim) < 2) return std::nullopt;
  // No other mesh dim shards the leading dim, after the gather or (as only the last step
  // touches it) before: the shards are whole row blocks of a.
  for (int d = 0; d < problem.mesh.ndim(); ++d)
    if (lhs_target[d].is_shard() && lhs_target[d].shard_dim() == 0) return std::nullopt;
  return AllGatherFusion{last.mesh_dim, problem.mesh.size(last.mesh_dim)};
}

std::optional<ReduceScatterFusion> reducescatter_fusion(const OpProblem& problem,
                                                        const Placements& output_placements) {
  if (!problem.output_target || problem.is_tensor_op()) return std::nullopt;
  const std::vector<Transition> steps =
      plan_transitions(output_placements, *problem.output_target, problem.mesh);
  if (steps.size() != 1) return std::nullopt;
  const Transition& t = steps[0];
  if (t.from != Placement::partial(ReduceOp::sum) || !t.to.is_shard() || t.to.shard_dim() != 0)
    return std::nullopt;
  if (problem.mesh.size(t.mesh_dim) < 2) return std::nullopt;
  for (int d = 0; d < problem.mesh.ndim(); ++d)
    if (output_placements[d].is_shard() && output_placements[d].shard_dim() == 0)
      return std::nullopt;
  return ReduceScatterFusion{t.mesh_dim, problem.mesh.size(t.mesh_dim)};
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

// The leading-dim blocks of a group, one per member (torch.chunk sizes), each cut into
// `chunks` pieces (empty pieces left out, so members agree on what travels).
struct RowBlocks {
  RowBlocks(const std::vector<int64_t>& rows, int chunks) : rows(rows), chunks(chunks) {
    first.assign(rows.size(), 0);
    for (size_t j = 1; j < rows.size(); ++j) first[j] = first[j - 1] + rows[j - 1];
  }
  int64_t largest() const { return *std::max_element(rows.begin(), rows.end()); }
  std::vector<Piece> pieces(int block) const {
    std::vector<Piece> out;
    for (int q = 0; q < chunks; ++q) {
      const Chunk c = chunk_of(rows[block], chunks, q);
      if (c.size > 0) out.push_back({block, c.offset, c.size});
    }
    return out;
  }
  const std::vector<int64_t>& rows;
  int chunks;
  std::vector<int64_t> first;  // each block's first row
};

// `work` restricted to the leading-dim rows [row, row + rows): its leading extent (GEMM
// batches or rows: `per_leading` of them per leading-dim index), a (given), b (sliced with
// a's rows for bmm, when b_row_bytes > 0), c (given), and a bias that varies along the
// leading dim.
MatmulWork piece_work(MatmulWork w, bool leading_is_batch, int64_t per_leading, int64_t row,
                      int64_t rows, const BufferRef& a, int64_t b_row_bytes, const BufferRef& c) {
  (leading_is_batch ? w.batch : w.m) = rows * per_leading;
  w.a = a;
  if (b_row_bytes > 0) w.b = w.b.slice(row * b_row_bytes, rows * b_row_bytes);
  w.c = c;
  const int64_t bias_lead = leading_is_batch ? w.bias_batch_stride : w.bias_row_stride;
  if (w.bias.id >= 0 && bias_lead != 0) {
    const int64_t off = row * per_leading * bias_lead * element_size_bytes(w.dtype);
    w.bias = w.bias.slice(off, w.bias.size_bytes - off);
  }
  return w;
}

std::string step_text(int step, int steps, size_t piece, size_t pieces) {
  std::string out =
      "fused all_gather+mm step " + std::to_string(step + 1) + "/" + std::to_string(steps);
  if (pieces > 1) out += " chunk " + std::to_string(piece + 1) + "/" + std::to_string(pieces);
  return out;
}

// The spans one member's ops take on its two streams, and the record of the fused ring.
class FusedRecord {
 public:
  FusedRecord(Program& program, CollectiveOp op, GroupId group, const std::string& name)
      : program_(program) {
    record_.op = op;
    record_.algorithm = CollectiveAlgorithm::fused_ring;
    record_.group = group;
    record_.name = name;
  }
  // Call before a member's ops are appended, then end_member() after.
  void begin_member(int rank, StreamId compute, StreamId comm) {
    rank_ = rank, compute_ = compute, comm_ = comm;
    compute_first_ = program_.op_count(rank, compute);
    comm_first_ = program_.op_count(rank, comm);
  }
  void end_member() {
    record_.spans.push_back(
        {rank_, compute_, compute_first_, program_.op_count(rank_, compute_) - compute_first_});
    record_.spans.push_back(
        {rank_, comm_, comm_first_, program_.op_count(rank_, comm_) - comm_first_});
  }
  void finish(int64_t bytes, int64_t chunk_bytes, DType dtype, int slots) {
    record_.bytes = bytes;
    record_.chunk_bytes = chunk_bytes;
    record_.dtype = dtype;
    record_.data = record_.result = slots;
    program_.record_collective(std::move(record_));
  }

 private:
  Program& program_;
  CollectiveRecord record_;
  int rank_ = -1, compute_ = -1, comm_ = -1, compute_first_ = 0, comm_first_ = 0;
};

}  // namespace

void overlapped_allgather_matmul(Program& program, const GatherMatmulSpec& spec) {
  const int p = static_cast<int>(spec.members.size());
  if (p < 1 || static_cast<int>(spec.shard_rows.size()) != p)
    throw InvalidArgument("need one shard size per member", spec.name);
  if (spec.chunks < 1) throw InvalidArgument("chunks must be >= 1", spec.name);
  const RowBlocks blocks(spec.shard_rows, spec.chunks);
  const int64_t slot_bytes = blocks.largest() * spec.a_row_bytes;
  const SymmetricHandle slots = program.symm_alloc(spec.group, p * slot_bytes);
  auto pieces_of = [&](int shard) { return blocks.pieces(shard); };
  auto wrap = [p](int j) { return ((j % p) + p) % p; };
  FusedRecord record(program, CollectiveOp::allgather_matmul, spec.group, spec.name);

  for (int i = 0; i < p; ++i) {
    const GatherMatmulMember& m = spec.members[i];
    record.begin_member(m.rank, m.compute_stream, m.comm_stream);
    if (!program.holds(m.rank)) {  // folded: its ops would be dropped
      record.end_member();
      continue;
    }
    const int right = wrap(i + 1), left = wrap(i - 1);
    auto label = [&](OpCategory category, const std::string& detail) {
      return OpLabel{spec.name, category, detail};
    };
    // The piece's matmul into its rows of the output; `a` holds the piece's rows.
    auto multiply = [&](const Piece& piece, const BufferRef& a, const std::string& detail) {
      const int64_t row = blocks.first[piece.shard] + piece.offset;
      program.matmul(
          m.rank, m.compute_stream,
          piece_work(m.work, spec.leading_is_batch, spec.gemm_per_leading, row, piece.rows, a,
                     m.b_row_bytes, m.c.slice(row * m.c_row_bytes, piece.rows * m.c_row_bytes)),
          label(OpCategory::compute, detail));
    };
    auto slot_piece = [&](const Piece& piece) {
      return slots.whole().slice(piece.shard * slot_bytes + piece.offset * spec.a_row_bytes,
                                 piece.rows * spec.a_row_bytes);
    };

    // The comm stream starts when everything before (the shard itself) is in place.
    const EventId ready =
        program.record_event(m.rank, m.compute_stream, label(OpCategory::sync, "ready"));
    program.wait_event(m.rank, m.comm_stream, ready, label(OpCategory::sync, "ready"));
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
                             label(OpCategory::comm, step_text(s, p - 1, q, sending.size())),
                             spec.signal);
        }
        if (q >= arriving.size()) continue;
        const std::string detail = step_text(s, p - 1, q, arriving.size());
        program.wait_signal(m.rank, m.comm_stream, slots, left, label(OpCategory::comm, detail),
                            spec.signal);
        const EventId landed =
            program.record_event(m.rank, m.comm_stream, label(OpCategory::sync, detail));
        program.wait_event(m.rank, m.compute_stream, landed,
                           label(OpCategory::sync, "chunk landed"));
        multiply(arriving[q], slot_piece(arriving[q]),
                 "mm shard " + std::to_string(arriving[q].shard) +
                     (arriving.size() > 1 ? " chunk " + std::to_string(q + 1) : ""));
      }
      sending = arriving;
    }
    // Join: nothing after this op on the compute stream starts before the comm stream is done.
    const EventId done =
        program.record_event(m.rank, m.comm_stream, label(OpCategory::sync, "comm done"));
    program.wait_event(m.rank, m.compute_stream, done, label(OpCategory::sync, "comm done"));
    record.end_member();
  }
  record.finish(std::accumulate(spec.shard_rows.begin(), spec.shard_rows.end(), int64_t{0}) *
                    spec.a_row_bytes,
                slot_bytes, spec.members.empty() ? DType::fp32 : spec.members[0].work.dtype,
                slots.id);
}

std::vector<BufferRef> overlapped_matmul_reducescatter(Program& program,
                                                       const ScatterMatmulSpec& spec) {
  const int p = static_cast<int>(spec.members.size());
  if (p < 2 || static_cast<int>(spec.block_rows.size()) != p)
    throw InvalidArgument("need two or more members and one block size per member", spec.name);
  if (spec.chunks < 1) throw InvalidArgument("chunks must be >= 1", spec.name);
  const RowBlocks blocks(spec.block_rows, spec.chunks);
  const int64_t slot_bytes = blocks.largest() * spec.c_row_bytes;
  const SymmetricHandle slots = program.symm_alloc(spec.group, (p - 1) * slot_bytes);
  auto wrap = [p](int j) { return ((j % p) + p) % p; };
  auto pieces_of = [&](int block) { return blocks.pieces(block); };
  auto slot_piece = [&](int slot, const Piece& piece) {
    return slots.whole().slice(slot * slot_bytes + piece.offset * spec.c_row_bytes,
                               piece.rows * spec.c_row_bytes);
  };

  std::vector<BufferRef> out;
  // Member i's summed block: where the last step's accumulator lands.
  auto block_of = [&](int i) {
    return slots.whole().slice((p - 2) * slot_bytes, spec.block_rows[i] * spec.c_row_bytes);
  };
  FusedRecord record(program, CollectiveOp::matmul_reducescatter, spec.group, spec.name);
  for (int i = 0; i < p; ++i) {
    const ScatterMatmulMember& m = spec.members[i];
    record.begin_member(m.rank, m.compute_stream, m.comm_stream);
    if (!program.holds(m.rank)) {  // folded: its ops would be dropped, its block is its own
      record.end_member();
      out.push_back(block_of(i));
      continue;
    }
    const int64_t e = element_size_bytes(m.work.dtype);
    const int right = wrap(i + 1), left = wrap(i - 1);
    auto label = [&](OpCategory category, const std::string& detail) {
      return OpLabel{spec.name, category, detail};
    };
    auto round_text = [&](int s, size_t q, size_t n) {
      std::string t =
          "fused mm+reduce_scatter step " + std::to_string(s + 1) + "/" + std::to_string(p - 1);
      if (n > 1) t += " chunk " + std::to_string(q + 1) + "/" + std::to_string(n);
      return t;
    };
    // The piece's partial product a[rows] @ b (+ its bias rows) into `c`.
    auto multiply = [&](const Piece& piece, const BufferRef& c, const std::string& detail) {
      const int64_t row = blocks.first[piece.shard] + piece.offset;
      program.matmul(
          m.rank, m.compute_stream,
          piece_work(m.work, spec.leading_is_batch, spec.gemm_per_leading, row, piece.rows,
                     m.a.slice(row * m.a_row_bytes, piece.rows * m.a_row_bytes), m.b_row_bytes, c),
          label(OpCategory::compute, detail));
    };
    const BufferRef first = program.local_alloc(m.rank, slot_bytes);    // round 0's product
    const BufferRef scratch = program.local_alloc(m.rank, slot_bytes);  // later products
    auto local_piece = [&](const BufferRef& buffer, const Piece& piece) {
      return buffer.slice(piece.offset * spec.c_row_bytes, piece.rows * spec.c_row_bytes);
    };

    // Round 0: the first block's product, sent as each piece is done.
    std::vector<Piece> sending = pieces_of(wrap(i - 1));
    std::vector<EventId> finished;
    for (size_t q = 0; q < sending.size(); ++q) {
      multiply(sending[q], local_piece(first, sending[q]),
               "mm block " + std::to_string(sending[q].shard));
      finished.push_back(program.record_event(
          m.rank, m.compute_stream, label(OpCategory::sync, round_text(0, q, sending.size()))));
    }
    for (int s = 0; s < p - 1; ++s) {
      // Comm: round s sends the block finished in round s and receives the next one.
      const std::vector<Piece> arriving = pieces_of(wrap(i - 2 - s));
      std::vector<EventId> landed;
      for (size_t q = 0; q < std::max(sending.size(), arriving.size()); ++q) {
        if (q < sending.size()) {
          const std::string detail = round_text(s, q, sending.size());
          program.wait_event(m.rank, m.comm_stream, finished[q], label(OpCategory::sync, detail));
          const BufferRef src =
              s == 0 ? local_piece(first, sending[q]) : slot_piece(s - 1, sending[q]);
          program.put_signal(m.rank, m.comm_stream, src, slots,
                             s * slot_bytes + sending[q].offset * spec.c_row_bytes, right,
                             label(OpCategory::comm, detail), spec.signal);
        }
        if (q < arriving.size()) {
          const std::string detail = round_text(s, q, arriving.size());
          program.wait_signal(m.rank, m.comm_stream, slots, left, label(OpCategory::comm, detail),
                              spec.signal);
          landed.push_back(
              program.record_event(m.rank, m.comm_stream, label(OpCategory::sync, detail)));
        }
      }
      // Compute: this rank's product of the arriving block, added into its accumulator.
      finished.clear();
      for (size_t q = 0; q < arriving.size(); ++q) {
        multiply(arriving[q], local_piece(scratch, arriving[q]),
                 "mm block " + std::to_string(arriving[q].shard));
        program.wait_event(m.rank, m.compute_stream, landed[q],
                           label(OpCategory::sync, "accumulator landed"));
        ReduceWork add;
        add.dtype = m.work.dtype;
        add.elements = arriving[q].rows * spec.c_row_bytes / e;
        add.dst = slot_piece(s, arriving[q]);
        add.src = local_piece(scratch, arriving[q]);
        program.reduce(
            m.rank, m.compute_stream, add,
            label(OpCategory::compute, "add block " + std::to_string(arriving[q].shard)));
        if (s < p - 2)
          finished.push_back(
              program.record_event(m.rank, m.compute_stream,
                                   label(OpCategory::sync, round_text(s + 1, q, arriving.size()))));
      }
      sending = arriving;
    }
    const EventId done =
        program.record_event(m.rank, m.comm_stream, label(OpCategory::sync, "comm done"));
    program.wait_event(m.rank, m.compute_stream, done, label(OpCategory::sync, "comm done"));
    record.end_member();
    out.push_back(block_of(i));
  }
  record.finish(std::accumulate(spec.block_rows.begin(), spec.block_rows.end(), int64_t{0}) *
                    spec.c_row_bytes,
                slot_bytes, spec.members[0].work.dtype, slots.id);
  return out;
}

}  // namespace symmesh::strategies
