#include "strategies/analytic_features.hpp"

#include <algorithm>

#include "core/roofline.hpp"

namespace symmesh::strategies {
namespace {

// The re-layout copies rank 0 runs around one step (strategies/plan_lowering.cpp, group
// index 0): one launch and 2 × bytes of HBM traffic per non-empty box.
struct Copies {
  double launches = 0;
  double hbm_bytes = 0;
  void add(const Shape& box, int64_t element_bytes) {
    const int64_t n = numel(box);
    if (n == 0) return;
    launches += 1;
    hbm_bytes += 2.0 * static_cast<double>(n * element_bytes);
  }
  // A box that is `shape` cut to chunk j of p along `dim`, for every j.
  void add_cut(const Shape& shape, int dim, int64_t extent, int p, int64_t element_bytes) {
    for (int j = 0; j < p; ++j) {
      Shape box = shape;
      box[dim] = chunk_of(extent, p, j).size;
      add(box, element_bytes);
    }
  }
};

Copies step_copies(const RedistributionStep& step, const TensorSpec& before,
                   const TensorSpec& after, const DeviceMesh& mesh) {
  const int p = mesh.size(step.mesh_dim);
  const int64_t e = element_size_bytes(before.dtype);
  const Shape mine_before = rank0_shape(before, mesh);
  Copies c;
  switch (step.collective) {
    case CollectiveKind::all_gather: {
      c.add(mine_before, e);  // pad into the all-gather slot
      const int t = step.from.shard_dim();
      if (t != 0) {  // concatenate the chunks along an inner dim
        const Shape full = rank0_shape(after, mesh);
        c.add_cut(mine_before, t, full[t], p, e);
      }
      break;
    }
    case CollectiveKind::reduce_scatter: {
      const int t = step.to.shard_dim();
      if (t == 0)
        c.add(mine_before, e);  // stage the whole partial value
      else
        c.add_cut(mine_before, t, mine_before[t], p, e);  // split into the slots
      break;
    }
    case CollectiveKind::all_reduce:
      c.add(mine_before, e);  // stage the buffer
      break;
    case CollectiveKind::all_to_all: {
      const int from = step.from.shard_dim(), to = step.to.shard_dim();
      c.add_cut(mine_before, to, mine_before[to], p, e);  // split into the slots
      const Shape mine_after = rank0_shape(after, mesh);
      for (int peer : mesh.group_ranks(0, step.mesh_dim)) {  // concatenate the pieces
        Shape box = mine_after;
        box[from] = local_view(before, mesh, peer).shape[from];
        c.add(box, e);
      }
      break;
    }
    case CollectiveKind::local_chunk:
      if (step.to.shard_dim() != 0) c.add(rank0_shape(after, mesh), e);
      break;
    case CollectiveKind::local_partial:
    case CollectiveKind::none:
      break;
  }
  return c;
}

}  // namespace

Shape rank0_shape(const TensorSpec& spec, const DeviceMesh& mesh) {
  Shape shape = spec.shape;
  for (int d = 0; d < mesh.ndim(); ++d) {
    const Placement& p = spec.placements[d];
    if (p.kind() != Placement::Kind::shard) continue;
    const int t = p.shard_dim();
    shape[t] = chunk_of(shape[t], mesh.size(d), 0).size;
  }
  return shape;
}

std::vector<double> cost_vector(const FeatureLayout& layout, const AnalyticTopology& topo,
                                const GpuSpec& gpu) {
  std::vector<double> w(layout.cols(), 0.0);
  for (int d = 0; d < layout.ndim; ++d) {
    const MeshDimLinks& l = topo.dims[d];
    w[layout.ring_steps(d)] = l.ring_latency_s * 1e6;
    w[layout.ring_bytes(d)] = l.ring_s_per_byte * 1e6;
    w[layout.a2a_count(d)] = l.a2a_latency_s * 1e6;
    w[layout.a2a_bytes(d)] = l.a2a_s_per_byte * 1e6;
  }
  w[layout.copy_launches()] = roofline::launch_overhead_s(gpu) * 1e6;
  w[layout.copy_hbm_bytes()] = roofline::hbm_time_s(gpu, 1.0) * 1e6;
  w[layout.library_s()] = 1e6;
  return w;
}

InputFeatures input_features(const TensorSpec& current, const Placements& target,
                             const DeviceMesh& mesh, const FeatureLayout& layout,
                             bool with_step_rows) {
  InputFeatures f;
  f.row.assign(layout.cols(), 0.0);
  const int64_t e = element_size_bytes(current.dtype);
  f.current_bytes = numel(rank0_shape(current, mesh)) * e;
  for (const Transition& t : plan_transitions(current.placements, target, mesh)) {
    if (!transition_collective(t.from, t.to)) {
      f.impossible = "cannot redistribute " + to_string(t.from) + " to " + to_string(t.to) +
                     " on mesh dim " + std::to_string(t.mesh_dim);
      return f;
    }
  }
  if (target == current.placements) {
    f.local_shape = rank0_shape(current, mesh);
    f.local_bytes = f.current_bytes;
    return f;
  }
  const Redistribution plan = plan_redistribution(current, target, mesh);
  std::vector<double> row(layout.cols());
  TensorSpec before = current;
  for (const RedistributionStep& step : plan.steps) {
    const int d = step.mesh_dim;
    const int64_t p = mesh.size(d);
    TensorSpec after = before;
    after.placements[d] = step.to;
    std::fill(row.begin(), row.end(), 0.0);
    int64_t buffers = 0;
    // The library prices the nccl-tests size: the whole buffer of the step.
    const auto library = [&](BandwidthCollective op, int64_t bytes) {
      if (p > 1)
        row[layout.library_s()] =
            library_collective_s(*layout.library, d, op, static_cast<double>(bytes));
    };
    switch (step.collective) {
      case CollectiveKind::all_gather:
      case CollectiveKind::reduce_scatter: {
        const int64_t c = step.buffer_bytes / p;
        if (layout.library) {
          library(step.collective == CollectiveKind::all_gather
                      ? BandwidthCollective::all_gather
                      : BandwidthCollective::reduce_scatter,
                  p * c);
        } else {
          row[layout.ring_steps(d)] = static_cast<double>(p - 1);
          row[layout.ring_bytes(d)] = static_cast<double>((p - 1) * c);
        }
        buffers = p * c;
        if (step.collective == CollectiveKind::reduce_scatter) buffers += (p - 1) * c;
        break;
      }
      case CollectiveKind::all_reduce: {
        const int64_t c = ((step.buffer_bytes + e - 1) / e + p - 1) / p * e;
        if (layout.library) {
          library(BandwidthCollective::all_reduce, step.buffer_bytes);
        } else {
          row[layout.ring_steps(d)] = static_cast<double>(2 * (p - 1));
          row[layout.ring_bytes(d)] = static_cast<double>(2 * (p - 1) * c);
        }
        buffers = p * c + (p - 1) * c;
        break;
      }
      case CollectiveKind::all_to_all: {
        const int64_t c = step.buffer_bytes / p;
        if (layout.library) {
          library(BandwidthCollective::all_to_all, p * c);
        } else if (p > 1) {
          row[layout.a2a_count(d)] = 1;
          row[layout.a2a_bytes(d)] = static_cast<double>(c);
        }
        buffers = 2 * p * c;
        break;
      }
      case CollectiveKind::local_chunk:
      case CollectiveKind::local_partial:
      case CollectiveKind::none:
        break;
    }
    const Copies copies = step_copies(step, before, after, mesh);
    row[layout.copy_launches()] = copies.launches;
    row[layout.copy_hbm_bytes()] = copies.hbm_bytes;
    for (int j = 0; j < layout.cols(); ++j) f.row[j] += row[j];
    if (with_step_rows) f.step_rows.push_back(row);
    ++f.steps;
    f.buffer_bytes = std::max(f.buffer_bytes, buffers);
    before = std::move(after);
  }
  f.local_shape = rank0_shape(before, mesh);
  f.local_bytes = numel(f.local_shape) * e;
  return f;
}

}  // namespace symmesh::strategies
