#include "core/redistribution.hpp"

#include "core/errors.hpp"

namespace symmesh {

std::string to_string(CollectiveKind kind) {
  switch (kind) {
    case CollectiveKind::all_gather:
      return "all_gather";
    case CollectiveKind::reduce_scatter:
      return "reduce_scatter";
    case CollectiveKind::all_reduce:
      return "all_reduce";
    case CollectiveKind::all_to_all:
      return "all_to_all";
    case CollectiveKind::local_chunk:
      return "local_chunk";
    case CollectiveKind::local_partial:
      return "local_partial";
    case CollectiveKind::none:
      return "none";
  }
  return "?";
}

std::optional<CollectiveKind> transition_collective(const Placement& from, const Placement& to) {
  if (from.is_shard()) {
    if (to.is_replicate()) return CollectiveKind::all_gather;
    if (to.is_shard()) return CollectiveKind::all_to_all;
    return std::nullopt;  // S → P has no meaning
  }
  if (from.is_partial()) {
    if (to.is_replicate()) return CollectiveKind::all_reduce;
    if (to.is_shard()) return CollectiveKind::reduce_scatter;
    return std::nullopt;  // P(sum) ↔ P(avg) would change the value
  }
  if (to.is_shard()) return CollectiveKind::local_chunk;
  return CollectiveKind::local_partial;
}

std::vector<Transition> plan_transitions(const Placements& src, const Placements& dst,
                                         const std::vector<int>& mesh_shape) {
  std::vector<Transition> out;
  const int ndim = static_cast<int>(src.size());
  if (ndim == 1) {
    if (src[0] != dst[0]) out.push_back({0, src[0], dst[0]});
    return out;
  }
  Placements current = src;
  int64_t num_shards = 1;
  for (int d = 0; d < ndim; ++d)
    if (src[d].is_shard())
      num_shards *= d < static_cast<int>(mesh_shape.size()) ? mesh_shape[d] : 1;
  if (num_shards > 1) {
    for (int d = ndim - 1; d >= 0; --d) {
      Placement target = dst[d];
      if (target.is_shard()) {
        const int k = target.shard_dim();
        bool misaligned = false;
        for (int i = 0; i < d; ++i) misaligned |= current[i].is_shard(k) != dst[i].is_shard(k);
        if (misaligned) target = Placement::replicate();
      }
      if (current[d] != target) {
        out.push_back({d, current[d], target});
        current[d] = target;
      }
    }
  }
  for (int d = 0; d < ndim; ++d) {
    if (current[d] != dst[d]) {
      out.push_back({d, current[d], dst[d]});
      current[d] = dst[d];
    }
  }
  return out;
}

std::vector<Transition> plan_transitions(const Placements& src, const Placements& dst,
                                         const DeviceMesh& mesh) {
  return plan_transitions(src, dst, mesh.shape());
}

int64_t Redistribution::total_bytes() const {
  int64_t total = 0;
  for (const auto& s : steps) total += s.bytes;
  return total;
}

Redistribution plan_redistribution(const TensorSpec& src, const Placements& dst,
                                   const DeviceMesh& mesh) {
  src.validate(mesh, "redistribution source");
  TensorSpec target = src;
  target.placements = dst;
  target.validate(mesh, "redistribution target");

  Redistribution plan{src.placements, dst, {}};
  TensorSpec current = src;
  for (const Transition& t : plan_transitions(src.placements, dst, mesh)) {
    const auto kind = transition_collective(t.from, t.to);
    if (!kind)
      throw InvalidArgument("cannot redistribute " + to_string(t.from) + " to " + to_string(t.to) +
                                " on mesh dim " + std::to_string(t.mesh_dim) + " (" +
                                to_string(src.placements) + " -> " + to_string(dst) + ")",
                            "redistribution");
    const int64_t n = mesh.size(t.mesh_dim);
    TensorSpec after = current;
    after.placements[t.mesh_dim] = t.to;
    RedistributionStep step{t.mesh_dim, t.from, t.to, n == 1 ? CollectiveKind::none : *kind, 0, 0};
    switch (step.collective) {
      case CollectiveKind::all_gather: {
        const int64_t shard = max_local_bytes(current, mesh);
        step.bytes = (n - 1) * shard;
        step.buffer_bytes = n * shard;
        break;
      }
      case CollectiveKind::reduce_scatter: {
        const int64_t chunk = max_local_bytes(after, mesh);
        step.bytes = (n - 1) * chunk;
        step.buffer_bytes = n * chunk;
        break;
      }
      case CollectiveKind::all_reduce: {
        const int64_t buffer = max_local_bytes(current, mesh);
        step.bytes = 2 * (n - 1) * ((buffer + n - 1) / n);
        step.buffer_bytes = buffer;
        break;
      }
      case CollectiveKind::all_to_all: {
        // Each peer receives this rank's piece cut along the new shard dim.
        Shape block = local_view(current, mesh, 0).shape;
        const int j = t.to.shard_dim();
        block[j] = (block[j] + n - 1) / n;
        const int64_t block_bytes = numel(block) * element_size_bytes(src.dtype);
        step.bytes = (n - 1) * block_bytes;
        step.buffer_bytes = n * block_bytes;
        break;
      }
      case CollectiveKind::local_chunk:
      case CollectiveKind::local_partial:
      case CollectiveKind::none:
        break;
    }
    plan.steps.push_back(step);
    current = after;
  }
  return plan;
}

}  // namespace symmesh
