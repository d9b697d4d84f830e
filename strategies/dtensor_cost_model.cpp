#include "strategies/dtensor_cost_model.hpp"

#include <cmath>
#include <unordered_map>

namespace symmesh::strategies {
namespace {

constexpr double kBaseBandwidthGbPerS = 87.7;
constexpr double kHopLatencyUs = 0.6;
constexpr double kInterHostBandwidthFactor = 0.22;
constexpr double kInterHostLatencyUs = 2.7;
constexpr double kBaseLatencyUs = 6.6;
constexpr double kAllToAllPenaltyUs = 1.0;  // DTensor favours all-gather over all-to-all
constexpr double kBytesPerGiB = 1024.0 * 1024.0 * 1024.0;

double ring_cost_us(double gib, const DTensorMeshTopology& topo, int d, int hops_per_rank) {
  const int n = topo.devices[d];
  const int hops = hops_per_rank * (n - 1);
  const double latency_us = kBaseLatencyUs + hops * topo.latency_us[d];
  const double bandwidth_s = (gib * hops / n) / topo.bandwidth_gb_per_s[d];
  return latency_us + bandwidth_s * 1e6;
}

bool all_replicate(const Placements& placements) {
  for (const auto& p : placements)
    if (!p.is_replicate()) return false;
  return true;
}

// Prices already-planned transitions, threading the local size B (GiB) through them.
double price_transitions(const TensorSpec& current, const std::vector<Transition>& steps,
                         const DeviceMesh& mesh, const DTensorMeshTopology& topo,
                         std::vector<double>* step_costs) {
  double gib = dtensor_local_gib(current, mesh);
  double total = 0;
  for (const Transition& t : steps) {
    const double cost = dtensor_transition_cost_us(t.from, t.to, t.mesh_dim, topo, &gib);
    if (step_costs) step_costs->push_back(cost);
    total += cost;
  }
  return total;
}

// 8 bits per mesh dim: R 0, P(sum) 1, P(avg) 2, S(d) 3+d. Only for meshes of <= 8 dims.
uint64_t placement_key(const Placements& placements) {
  uint64_t key = 0;
  for (const auto& p : placements) {
    uint64_t code = 0;
    if (p.is_partial()) code = p.reduce_op() == ReduceOp::sum ? 1 : 2;
    if (p.is_shard()) code = 3 + static_cast<uint64_t>(p.shard_dim());
    key = (key << 8) | code;
  }
  return key;
}

}  // namespace

DTensorMeshTopology DTensorMeshTopology::of(const DeviceMesh& mesh, int devices_per_host) {
  DTensorMeshTopology topo;
  const int ndim = mesh.ndim();
  topo.devices = mesh.shape();
  topo.bandwidth_gb_per_s.assign(ndim, kBaseBandwidthGbPerS);
  topo.latency_us.assign(ndim, kHopLatencyUs);
  int64_t running = 1;
  for (int d = ndim - 1; d >= 0; --d) {
    running *= mesh.size(d);
    if (running > devices_per_host) {
      topo.bandwidth_gb_per_s[d] *= kInterHostBandwidthFactor;
      topo.latency_us[d] = kInterHostLatencyUs;
    }
  }
  return topo;
}

double dtensor_allgather_cost_us(double gib, const DTensorMeshTopology& topo, int d) {
  return ring_cost_us(gib, topo, d, 1);
}
double dtensor_reduce_scatter_cost_us(double gib, const DTensorMeshTopology& topo, int d) {
  return ring_cost_us(gib, topo, d, 1);
}
double dtensor_allreduce_cost_us(double gib, const DTensorMeshTopology& topo, int d) {
  return ring_cost_us(gib, topo, d, 2);
}

double dtensor_local_gib(const TensorSpec& spec, const DeviceMesh& mesh) {
  return static_cast<double>(spec.size_bytes()) / static_cast<double>(spec.num_shards(mesh)) /
         kBytesPerGiB;
}

double dtensor_transition_cost_us(const Placement& from, const Placement& to, int d,
                                  const DTensorMeshTopology& topo, double* gib) {
  const double n = topo.devices[d];
  if (from == to) return 0;
  if (from.is_shard() && to.is_replicate()) {
    *gib *= n;  // all-gather is priced on the gathered size
    return dtensor_allgather_cost_us(*gib, topo, d);
  }
  if (from.is_shard() && to.is_shard())
    return dtensor_allgather_cost_us(*gib, topo, d) + kAllToAllPenaltyUs;
  if (from.is_partial() && to.is_replicate()) return dtensor_allreduce_cost_us(*gib, topo, d);
  if (from.is_partial() && to.is_shard()) {
    const double cost = dtensor_reduce_scatter_cost_us(*gib, topo, d);
    *gib /= n;
    return cost;
  }
  if (from.is_replicate() && to.is_shard()) {
    *gib /= n;  // local chunk: free, and later steps move less
    return 0;
  }
  if (from.is_replicate() && to.is_partial()) return 0;
  return kInfiniteCost;  // S → P, or P(sum) ↔ P(avg)
}

double dtensor_redistribute_cost_us(const TensorSpec& current, const Placements& target,
                                    const DeviceMesh& mesh, const DTensorMeshTopology& topo,
                                    std::vector<double>* step_costs) {
  if (all_replicate(current.placements) || current.placements == target) {
    if (step_costs)
      step_costs->assign(plan_transitions(current.placements, target, mesh).size(), 0.0);
    return 0;
  }
  return price_transitions(current, plan_transitions(current.placements, target, mesh), mesh, topo,
                           step_costs);
}

void DTensorCostModel::price(const OpProblem& problem, std::vector<Candidate>& candidates) const {
  const auto topo = DTensorMeshTopology::of(problem.mesh, devices_per_host_);
  const size_t num_inputs = problem.inputs.size();
  const bool memoise = problem.mesh.ndim() <= 8;
  // Many candidates share an input's target placements (or an output's placements); price
  // each distinct one once. memo[num_inputs] is the output's.
  std::vector<std::unordered_map<uint64_t, double>> memo(num_inputs + 1);
  auto cost_of = [&](size_t slot, const TensorSpec& current, const Placements& from,
                     const Placements& to) {
    if (!memoise) return dtensor_redistribute_cost_us(current, to, problem.mesh, topo);
    const uint64_t key = placement_key(from);
    auto it = memo[slot].find(key);
    if (it == memo[slot].end())
      it = memo[slot]
               .emplace(key, dtensor_redistribute_cost_us(current, to, problem.mesh, topo))
               .first;
    return it->second;
  };
  for (Candidate& c : candidates) {
    if (!c.kept()) continue;
    c.input_cost_us.assign(num_inputs, 0.0);
    c.cost_us = 0;
    // The output to where it must end up (DTensor prices it in the next op's inputs; the
    // same formula here, so that the op's choice sees it).
    c.output_cost_us = 0;
    if (problem.output_target) {
      const TensorSpec out{problem.output_shape(), problem.dtype(), c.output_placements};
      c.output_cost_us = cost_of(num_inputs, out, c.output_placements, *problem.output_target);
      c.cost_us += c.output_cost_us;
    }
    for (size_t i = 0; i < num_inputs; ++i) {
      const Placements& target = c.input_placements[i];
      c.input_cost_us[i] = cost_of(i, problem.inputs[i], target, target);
      c.cost_us += c.input_cost_us[i];
    }
  }
}

std::vector<double> DTensorCostModel::step_costs_us(const TensorSpec& current,
                                                    const std::vector<Transition>& steps,
                                                    const DeviceMesh& mesh) const {
  std::vector<double> costs;
  if (all_replicate(current.placements)) {
    costs.assign(steps.size(), 0.0);
    return costs;
  }
  price_transitions(current, steps, mesh, DTensorMeshTopology::of(mesh, devices_per_host_), &costs);
  return costs;
}

}  // namespace symmesh::strategies
