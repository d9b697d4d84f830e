// A scenario moved to another cluster size, and the mesh shapes a sweep tries.
#include <functional>

#include "core/errors.hpp"
#include "scenario/model_expansion.hpp"
#include "scenario/scenario_loader.hpp"

namespace symmesh {
namespace {

constexpr const char* kWhere = "with_cluster_size";

std::string shape_text(const std::vector<int>& shape) {
  std::string out;
  for (int d : shape) out.append(out.empty() ? "" : "x").append(std::to_string(d));
  return out;
}

// Every ordered way to write `n` as a product of `ndim` factors >= 1, lexicographic.
void factorisations(int n, int ndim, std::vector<int>& prefix, std::vector<std::vector<int>>& out) {
  if (ndim == 1) {
    prefix.push_back(n);
    out.push_back(prefix);
    prefix.pop_back();
    return;
  }
  for (int f = 1; f <= n; ++f) {
    if (n % f != 0) continue;
    prefix.push_back(f);
    factorisations(n / f, ndim - 1, prefix, out);
    prefix.pop_back();
  }
}

// How many ordered factorisations factorisations() would list, at most `cap` + 1: for
// n = prod p^e, prod over primes of C(e + ndim - 1, ndim - 1) (stars and bars per prime).
int64_t count_factorisations(int64_t n, int ndim, int64_t cap) {
  int64_t count = 1;
  const auto times = [&](int64_t x) { count = count > (cap + 1) / x ? cap + 1 : count * x; };
  for (int64_t p = 2; p * p <= n; ++p) {
    int e = 0;
    while (n % p == 0) n /= p, ++e;
    // C(e + k - 1, e), built up term by term (each partial product is an integer).
    int64_t c = 1;
    for (int i = 1; i <= e && c <= cap; ++i) c = c * (ndim - 1 + i) / i;
    times(std::max<int64_t>(c, 1));
  }
  if (n > 1) times(ndim);
  return std::min(count, cap + 1);
}

}  // namespace

int64_t count_mesh_shapes(int64_t gpus, int ndim, int64_t cap) {
  return gpus < 1 || ndim < 1 ? 0 : count_factorisations(gpus, ndim, cap);
}

Scenario with_cluster_size(const Scenario& scenario, int nodes, std::vector<int> mesh_shape) {
  if (nodes < 1) throw InvalidArgument("nodes must be >= 1, got " + std::to_string(nodes), kWhere);
  if (mesh_shape.size() != scenario.mesh_shape.size())
    throw InvalidArgument("mesh " + shape_text(mesh_shape) + " has " +
                              std::to_string(mesh_shape.size()) + " dims but the scenario's mesh " +
                              shape_text(scenario.mesh_shape) + " has " +
                              std::to_string(scenario.mesh_shape.size()) +
                              "; the workload's placements are per mesh dim",
                          kWhere);
  Scenario out = scenario;
  out.cluster.nodes = nodes;
  try {
    out.cluster.validate();
  } catch (const InvalidArgument& e) {
    throw InvalidArgument("the cluster is invalid at " + std::to_string(nodes) +
                              " nodes: " + e.where() + ": " + e.message(),
                          kWhere);
  }
  int64_t ranks = 1;
  for (int d : mesh_shape) {
    if (d < 1) throw InvalidArgument("mesh " + shape_text(mesh_shape) + " has a dim < 1", kWhere);
    ranks *= d;
    if (ranks > out.cluster.num_gpus()) break;
  }
  if (ranks != out.cluster.num_gpus())
    throw InvalidArgument("mesh " + shape_text(mesh_shape) + " does not cover the " +
                              std::to_string(out.cluster.num_gpus()) + " GPUs (" +
                              std::to_string(nodes) + " nodes x " +
                              std::to_string(out.cluster.gpus_per_node) + ")",
                          kWhere);
  for (const WorkloadOp& op : out.workload)
    if (op.kind == OpKind::put_signal &&
        (op.src >= out.cluster.num_gpus() || op.dst >= out.cluster.num_gpus()))
      throw InvalidArgument("op '" + op.name + "' puts from rank " + std::to_string(op.src) +
                                " to rank " + std::to_string(op.dst) + ", beyond the " +
                                std::to_string(out.cluster.num_gpus()) + " GPUs" +
                                // A sweep reports the message alone, as a point's reason.
                                (op.where.line > 0 ? " (line " + std::to_string(op.where.line) +
                                                         ")"
                                                   : ""),
                            op.where.known() ? op.where.to_string() : kWhere);
  out.mesh_shape = std::move(mesh_shape);
  // A model's step has dp · micro_batch sequences: generated again for the new mesh.
  if (out.model) scenario::expand_model(out, out.path.empty() ? kWhere : out.path);
  return out;
}

std::vector<std::vector<int>> sweep_mesh_shapes(const Scenario& scenario, int nodes) {
  const int64_t gpus = int64_t{nodes} * scenario.cluster.gpus_per_node;
  std::vector<std::vector<int>> out;
  const bool automatic = !scenario.sweep || scenario.sweep->mesh_auto;
  if (automatic) {
    const int ndim = static_cast<int>(scenario.mesh_shape.size());
    const int64_t count = count_factorisations(gpus, ndim, kMaxAutoMeshShapes);
    if (count > kMaxAutoMeshShapes)
      throw InvalidArgument(
          "mesh: auto would try more than " + std::to_string(kMaxAutoMeshShapes) + " shapes of " +
              std::to_string(gpus) + " GPUs over " + std::to_string(ndim) +
              " mesh dims (every ordered factorisation); list the shapes to try "
              "(sweep.mesh: [[2, 8], [4, 4]]) or use fewer mesh dims",
          scenario.sweep && scenario.sweep->mesh_where.known()
              ? scenario.sweep->mesh_where.to_string()
              : scenario.where() + ": sweep.mesh");
    std::vector<int> prefix;
    if (gpus >= 1 && gpus <= (1 << 24))
      factorisations(static_cast<int>(gpus), static_cast<int>(scenario.mesh_shape.size()), prefix,
                     out);
    return out;
  }
  for (const auto& shape : scenario.sweep->mesh_shapes) {
    int64_t ranks = 1;
    for (int d : shape) ranks *= d;
    if (ranks == gpus) out.push_back(shape);
  }
  return out;
}

}  // namespace symmesh
