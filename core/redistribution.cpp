#include "core/redistribution.hpp"

#include "core/collective_descriptor.hpp"
#include "core/errors.hpp"

namespace symmesh {

std::string to_string(CollectiveKind kind) {
  // A collective's name is its row's (core/collective_descriptor.cpp); the local steps are
  // not collectives.
  if (const CollectiveDescriptor* d = descriptor_of(kind)) return std::string(d->name);
  switch (kind) {
    case CollectiveKind::local_chunk:
      return "local_chunk";
    case CollectiveKind::local_partial:
      return "local_partial";
    case CollectiveKind::none:
      return "none";
    default:
      break;
  }
  return "?";
}

namespace {

PlacementClass class_of(const Placement& p) {
  if (p.is_shard()) return PlacementClass::shard;
  if (p.is_partial()) return PlacementClass::partial;
  return PlacementClass::replicate;
}

}  // namespace

std::optional<CollectiveKind> transition_collective(const Placement& from, const Placement& to) {
  // The collective whose row performs from → to (S→R all-gather, P→S reduce-scatter, P→R
  // all-reduce, S(i)→S(j) all-to-all).
  const PlacementClass f = class_of(from), t = class_of(to);
  for (const CollectiveDescriptor& d : collective_descriptors())
    if (d.transition && d.from == f && d.to == t) return d.transition;
  if (from.is_replicate()) {
    if (to.is_shard()) return CollectiveKind::local_chunk;
    return CollectiveKind::local_partial;
  }
  return std::nullopt;  // S → P has no meaning; P(sum) ↔ P(avg) would change the value
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
    // The chunk each of the ring's steps moves (padded to equal chunks, as NCCL needs)
    // and the nccl-tests size; the step count is the row's (core/collective_descriptor.cpp).
    int64_t chunk = 0;
    switch (step.collective) {
      case CollectiveKind::all_gather:
        chunk = max_local_bytes(current, mesh);
        step.buffer_bytes = n * chunk;
        break;
      case CollectiveKind::reduce_scatter:
        chunk = max_local_bytes(after, mesh);
        step.buffer_bytes = n * chunk;
        break;
      case CollectiveKind::all_reduce:
        step.buffer_bytes = max_local_bytes(current, mesh);
        chunk = (step.buffer_bytes + n - 1) / n;
        break;
      case CollectiveKind::all_to_all: {
        // Each peer receives this rank's piece cut along the new shard dim.
        Shape block = local_view(current, mesh, 0).shape;
        const int j = t.to.shard_dim();
        block[j] = (block[j] + n - 1) / n;
        chunk = numel(block) * element_size_bytes(src.dtype);
        step.buffer_bytes = n * chunk;
        break;
      }
      default:
        break;  // local steps: nothing moves
    }
    if (const CollectiveDescriptor* d = descriptor_of(step.collective))
      step.bytes = ring_steps(*d, static_cast<int>(n)) * chunk;
    plan.steps.push_back(step);
    current = after;
  }
  return plan;
}

}  // namespace symmesh
