// How the lowering of a plan moves a tensor between placements, one redistribution step at
// a time (strategies/plan_lowering_lowerer.hpp): each step's collective on every group of its
// mesh dim, and what each rank keeps.
#include <algorithm>
#include <vector>

#include "core/collectives.hpp"
#include "strategies/plan_lowering_lowerer.hpp"

namespace symmesh::strategies::plan_lowering_detail {

void Lowerer::all_gather(TensorState& state, const TensorSpec& after, int d,
                         const std::vector<int>& group, GroupId gid) {
  const int p = static_cast<int>(group.size());
  const int t = state.spec.placements[d].shard_dim();
  const Shape padded = shape_of(state, group[0]);  // chunk 0 is the largest
  const int64_t chunk = bytes_of(padded);
  const SymmetricHandle data = program_.symm_alloc(gid, p * chunk);
  for (int i = 0; i < p; ++i) {
    const int r = group[i];
    if (!held(r)) continue;
    copy_box(r, state.local[r], Shape(padded.size(), 0), data.whole().slice(i * chunk, chunk),
             padded, Shape(padded.size(), 0), state.local[r].shape, "pad into all_gather slot");
  }
  CollectiveSpec spec{gid,           p * chunk,      dtype_, ReduceOp::sum, options_.stream,
                      options_.name, options_.signal};
  ring_all_gather(program_, spec, data);
  for (int i = 0; i < p; ++i) {
    const int r = group[i];
    if (!held(r)) continue;
    const Shape full = local_view(after, mesh_, r).shape;
    if (t == 0) {  // chunks along the leading dim concatenate in place
      state.local[r] = {data.whole().slice(0, bytes_of(full)), full};
      continue;
    }
    LocalTensor out = new_local(r, full);
    for (int j = 0; j < p; ++j) {
      const Chunk c = chunk_of(full[t], p, j);
      Shape box = padded, dst_origin(full.size(), 0);
      box[t] = c.size;
      dst_origin[t] = c.offset;
      copy_box(r, {data.whole().slice(j * chunk, chunk), padded}, Shape(full.size(), 0), out.ref,
               full, dst_origin, box, "concat all_gather chunk");
    }
    state.local[r] = out;
  }
}

void Lowerer::reduce_scatter(TensorState& state, const TensorSpec& after, int d,
                             const std::vector<int>& group, GroupId gid, ReduceOp op) {
  const int p = static_cast<int>(group.size());
  const int t = after.placements[d].shard_dim();
  const Shape full = shape_of(state, group[0]);
  const Shape padded = local_view(after, mesh_, group[0]).shape;
  const int64_t chunk = bytes_of(padded);
  const SymmetricHandle data = program_.symm_alloc(gid, p * chunk);
  for (int i = 0; i < p; ++i) {
    const int r = group[i];
    if (!held(r)) continue;
    if (t == 0) {  // the leading dim splits in place: one copy of the whole partial value
      copy_box(r, state.local[r], Shape(full.size(), 0), data.whole(), full, Shape(full.size(), 0),
               full, "stage reduce_scatter input");
      continue;
    }
    for (int j = 0; j < p; ++j) {
      const Chunk c = chunk_of(full[t], p, j);
      Shape box = full, src_origin(full.size(), 0);
      box[t] = c.size;
      src_origin[t] = c.offset;
      copy_box(r, state.local[r], src_origin, data.whole().slice(j * chunk, chunk), padded,
               Shape(full.size(), 0), box, "split into reduce_scatter slot");
    }
  }
  CollectiveSpec spec{gid, p * chunk, dtype_, op, options_.stream, options_.name, options_.signal};
  ring_reduce_scatter(program_, spec, data);
  for (int i = 0; i < p; ++i) {
    const int r = group[i];
    if (!held(r)) continue;
    const Shape mine = local_view(after, mesh_, r).shape;
    if (t == 0 || mine == padded) {
      state.local[r] = {data.whole().slice(i * chunk, bytes_of(mine)), mine};
      continue;
    }
    LocalTensor out = new_local(r, mine);
    copy_box(r, {data.whole().slice(i * chunk, chunk), padded}, Shape(mine.size(), 0), out.ref,
             mine, Shape(mine.size(), 0), mine, "unpad reduce_scatter chunk");
    state.local[r] = out;
  }
}

void Lowerer::all_reduce(TensorState& state, const std::vector<int>& group, GroupId gid,
                         ReduceOp op) {
  const int p = static_cast<int>(group.size());
  const Shape full = shape_of(state, group[0]);
  CollectiveSpec spec{gid,           bytes_of(full), dtype_, op, options_.stream,
                      options_.name, options_.signal};
  const SymmetricHandle data = program_.symm_alloc(gid, p * spec.chunk_bytes(p));
  for (int r : group)
    if (held(r))
      copy_box(r, state.local[r], Shape(full.size(), 0), data.whole(), full,
               Shape(full.size(), 0), full, "stage all_reduce buffer");
  ring_all_reduce(program_, spec, data);
  for (int r : group)
    if (held(r)) state.local[r] = {data.whole().slice(0, bytes_of(full)), full};
}

void Lowerer::all_to_all(TensorState& state, const TensorSpec& after, const std::vector<int>& group,
                         GroupId gid, int from_dim, int to_dim) {
  const int p = static_cast<int>(group.size());
  // Every slot holds the largest piece: padded along the old shard dim (uneven ranks)
  // and cut along the new one.
  Shape slot = shape_of(state, group[0]);
  const int64_t cut_extent = slot[to_dim];
  slot[to_dim] = (cut_extent + p - 1) / p;
  const int64_t chunk = bytes_of(slot);
  const SymmetricHandle data = program_.symm_alloc(gid, p * chunk);
  const Shape zero(slot.size(), 0);
  for (int i = 0; i < p; ++i) {
    const int r = group[i];
    if (!held(r)) continue;
    for (int k = 0; k < p; ++k) {
      const Chunk c = chunk_of(cut_extent, p, k);
      Shape box = state.local[r].shape, src_origin = zero;
      box[to_dim] = c.size;
      src_origin[to_dim] = c.offset;
      copy_box(r, state.local[r], src_origin, data.whole().slice(k * chunk, chunk), slot, zero, box,
               "split into all_to_all slot");
    }
  }
  CollectiveSpec spec{gid,           p * chunk,      dtype_, ReduceOp::sum, options_.stream,
                      options_.name, options_.signal};
  const CollectiveBuffers buffers = pairwise_all_to_all(program_, spec, data);
  std::vector<Shape> before(p);
  for (int i = 0; i < p; ++i) before[i] = shape_of(state, group[i]);
  for (int i = 0; i < p; ++i) {
    const int r = group[i];
    if (!held(r)) continue;
    const Shape mine = local_view(after, mesh_, r).shape;
    LocalTensor out = new_local(r, mine);
    for (int k = 0; k < p; ++k) {
      const SymmetricHandle& from = k == i ? buffers.data : buffers.result;
      Shape box = mine, dst_origin = zero;
      box[from_dim] = before[k][from_dim];
      dst_origin[from_dim] = chunk_of(mine[from_dim], p, k).offset;
      copy_box(r, {from.whole().slice(k * chunk, chunk), slot}, zero, out.ref, mine, dst_origin,
               box, "concat all_to_all piece");
    }
    state.local[r] = out;
  }
}

LocalTensor Lowerer::local_chunk(const TensorState& state, const TensorSpec& after, int mesh_rank,
                                 int t) {
  const LocalTensor& whole = state.local[mesh_rank];
  const Shape mine = local_view(after, mesh_, mesh_rank).shape;
  // Offset of this rank's chunk inside its current piece along t.
  const LocalView before_view = local_view(state.spec, mesh_, mesh_rank);
  const LocalView after_view = local_view(after, mesh_, mesh_rank);
  Shape origin(mine.size(), 0);
  origin[t] = after_view.offset[t] - before_view.offset[t];
  if (t == 0) {
    const int64_t row_bytes = bytes_of(whole.shape) / std::max<int64_t>(whole.shape[0], 1);
    return {whole.ref.slice(origin[0] * row_bytes, bytes_of(mine)), mine};
  }
  LocalTensor out = new_local(mesh_rank, mine);
  copy_box(mesh_rank, whole, origin, out.ref, mine, Shape(mine.size(), 0), mine, "local chunk");
  return out;
}

void Lowerer::apply_step(TensorState& state, const RedistributionStep& step) {
  const int d = step.mesh_dim;
  TensorSpec after = state.spec;
  after.placements[d] = step.to;
  const auto groups = mesh_.groups(d);
  for (int g = 0; g < static_cast<int>(groups.size()); ++g) {
    const auto& group = groups[g];
    if (!any_held(group)) continue;
    switch (step.collective) {
      case CollectiveKind::all_gather:
        all_gather(state, after, d, group, group_of(d, g));
        break;
      case CollectiveKind::reduce_scatter:
        reduce_scatter(state, after, d, group, group_of(d, g), step.from.reduce_op());
        break;
      case CollectiveKind::all_reduce:
        all_reduce(state, group, group_of(d, g), step.from.reduce_op());
        break;
      case CollectiveKind::all_to_all:
        all_to_all(state, after, group, group_of(d, g), step.from.shard_dim(), step.to.shard_dim());
        break;
      case CollectiveKind::local_chunk:
        for (int r : group)
          if (held(r)) state.local[r] = local_chunk(state, after, r, step.to.shard_dim());
        break;
      case CollectiveKind::none:
        break;  // one rank per group: its bytes already are the new placement's
      case CollectiveKind::local_partial:
        // Sum: the value stays on coordinate 0 of this dim, the others hold zeros. Avg:
        // every rank keeps it (the mean of equal values is the value).
        if (step.to.reduce_op() == ReduceOp::sum)
          for (size_t i = 1; i < group.size(); ++i) {
            const int r = group[i];
            if (held(r))
              state.local[r] = new_local(r, state.local[r].shape);
            else  // its zeros are memory replica 0's copy does not hold (coordinate 0 keeps
                  // the value): counted where it is
              program_.add_folded_bytes(world(r), bytes_of(shape_of(state, r)));
          }
        break;
    }
  }
  state.spec = after;
}

}  // namespace symmesh::strategies::plan_lowering_detail
