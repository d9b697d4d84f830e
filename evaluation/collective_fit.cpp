#include "evaluation/collective_fit.hpp"

#include <algorithm>
#include <array>
#include <cmath>
#include <limits>
#include <map>
#include <set>
#include <tuple>

#include "core/errors.hpp"

namespace symmesh::evaluation {

namespace {

LibraryAlgorithm algorithm_of(BandwidthCollective op, bool nvls) {
  if (nvls) return LibraryAlgorithm::nvls;
  switch (op) {
    case BandwidthCollective::all_to_all:
      return LibraryAlgorithm::pairwise;
    case BandwidthCollective::sendrecv:
    case BandwidthCollective::broadcast:
    case BandwidthCollective::reduce:
      return LibraryAlgorithm::direct;
    default:
      return LibraryAlgorithm::ring;
  }
}

struct Point {
  double steps = 0;      // algorithm_steps for the run's group
  double bus_bytes = 0;  // bytes × factor(op, p) / NICs
  double time_s = 0;
};

struct Variant {
  double base_s = 0, step_s = 0, seconds_per_byte = 0;
  double predict(const Point& p) const {
    return base_s + p.steps * step_s + p.bus_bytes * seconds_per_byte;
  }
};

// Least squares of Σ ((c·f_i - t_i)/t_i)² over the coefficients in `use` (of base, step,
// per-byte), by the normal equations; false when singular.
bool solve_subset(const std::vector<Point>& points, const std::array<bool, 3>& use,
                  std::array<double, 3>& out) {
  std::vector<int> idx;
  for (int j = 0; j < 3; ++j)
    if (use[j]) idx.push_back(j);
  const int n = static_cast<int>(idx.size());
  double a[3][4] = {};
  for (const Point& p : points) {
    // Each row divided by t: the residual is relative.
    const double f[3] = {1 / p.time_s, p.steps / p.time_s, p.bus_bytes / p.time_s};
    for (int r = 0; r < n; ++r) {
      for (int c = 0; c < n; ++c) a[r][c] += f[idx[r]] * f[idx[c]];
      a[r][n] += f[idx[r]];  // target 1 = t/t
    }
  }
  // Columns differ by orders of magnitude (1 vs bytes): scale them to a unit diagonal.
  double scale[3];
  for (int r = 0; r < n; ++r) scale[r] = a[r][r] > 0 ? 1 / std::sqrt(a[r][r]) : 0;
  for (int r = 0; r < n; ++r) {
    if (scale[r] == 0) return false;
    for (int c = 0; c < n; ++c) a[r][c] *= scale[r] * scale[c];
    a[r][n] *= scale[r];
  }
  for (int c = 0; c < n; ++c) {
    int pivot = c;
    for (int r = c + 1; r < n; ++r)
      if (std::abs(a[r][c]) > std::abs(a[pivot][c])) pivot = r;
    if (std::abs(a[pivot][c]) < 1e-12) return false;
    for (int k = 0; k <= n; ++k) std::swap(a[c][k], a[pivot][k]);
    for (int r = 0; r < n; ++r) {
      if (r == c) continue;
      const double m = a[r][c] / a[c][c];
      for (int k = c; k <= n; ++k) a[r][k] -= m * a[c][k];
    }
  }
  out = {0, 0, 0};
  for (int r = 0; r < n; ++r) out[idx[r]] = a[r][n] / a[r][r] * scale[r];
  return true;
}

double relative_cost(const std::vector<Point>& points, const Variant& v) {
  double sum = 0;
  for (const Point& p : points) {
    const double e = (v.predict(p) - p.time_s) / p.time_s;
    sum += e * e;
  }
  return sum;
}

// The best of the non-negative solutions over the subsets of {base, step} (per-byte always
// fitted, and positive): an exact non-negative least squares for three unknowns.
Variant fit_variant(const std::vector<Point>& points, bool fit_step) {
  Variant best;
  double best_cost = std::numeric_limits<double>::infinity();
  for (int mask = 0; mask < 4; ++mask) {
    const std::array<bool, 3> use = {(mask & 1) != 0, (mask & 2) != 0, true};
    if (use[1] && !fit_step) continue;
    std::array<double, 3> c;
    if (!solve_subset(points, use, c)) continue;
    if (c[0] < 0 || c[1] < 0 || !(c[2] > 0)) continue;
    const Variant v{c[0], c[1], c[2]};
    const double cost = relative_cost(points, v);
    if (cost < best_cost) best_cost = cost, best = v;
  }
  return best;  // {per-byte} alone always solves: Σ(B/t) / Σ(B/t)² > 0
}

double predict_envelope(const std::vector<Variant>& variants, const Point& p, int* which) {
  double best = std::numeric_limits<double>::infinity();
  for (int i = 0; i < static_cast<int>(variants.size()); ++i) {
    const double t = variants[i].predict(p);
    if (t < best) best = t, *which = i;
  }
  return best;
}

double envelope_cost(const std::vector<Variant>& variants, const std::vector<Point>& points) {
  double sum = 0;
  for (const Point& p : points) {
    int which = 0;
    const double e = (predict_envelope(variants, p, &which) - p.time_s) / p.time_s;
    sum += e * e;
  }
  return sum;
}

// From one initial assignment (owner[i]: the variant of sorted point i): fit, reassign every
// point to the variant predicting it least, refit, until nothing moves (at most 20 rounds).
std::vector<Variant> refine(const std::vector<Point>& points, std::vector<int> owner,
                            bool fit_step) {
  const int n = static_cast<int>(points.size());
  std::vector<Variant> variants;
  for (int round = 0; round < 20; ++round) {
    std::map<int, std::vector<Point>> members;
    for (int i = 0; i < n; ++i) members[owner[i]].push_back(points[i]);
    variants.clear();
    for (const auto& member : members) {
      const std::vector<Point>& pts = member.second;  // a lambda below uses it (clang: no binding)
      if (pts.size() < 2) continue;                   // dropped: its points go to the others below
      const bool steps_vary = fit_step && std::any_of(pts.begin(), pts.end(), [&](const Point& p) {
                                return p.steps != pts.front().steps;
                              });
      variants.push_back(fit_variant(pts, steps_vary));
    }
    if (variants.empty()) variants.push_back(fit_variant(points, false));
    std::vector<int> next(n);
    for (int i = 0; i < n; ++i) predict_envelope(variants, points[i], &next[i]);
    if (next == owner) break;
    owner = next;
  }
  return variants;
}

// The split in thirds of the sorted sizes first, then every split into one, two or three
// runs of consecutive sizes (two points or more each) as other starts: the reassignment is
// greedy and can settle in a poor local optimum (a variant fitted to latency-bound points
// only has no bandwidth to speak of); the start whose envelope has the least relative error
// wins (a variant more must lower it by 0.1 % RMS), the thirds on a tie.
std::vector<Variant> fit_envelope(std::vector<Point> points, bool fit_step) {
  std::sort(points.begin(), points.end(), [](const Point& a, const Point& b) {
    return std::tie(a.bus_bytes, a.steps) < std::tie(b.bus_bytes, b.steps);
  });
  const int n = static_cast<int>(points.size());
  const int k = std::max(1, std::min(3, n / 2));
  std::vector<int> owner(n);
  for (int i = 0; i < n; ++i) owner[i] = i * k / n;
  // Each variant must buy a mean squared relative error of 1e-6 (0.1 % RMS): exact data
  // is not split by rounding noise into variants that say nothing.
  const auto score = [&](const std::vector<Variant>& v) {
    return envelope_cost(v, points) + 1e-6 * n * static_cast<double>(v.size());
  };
  std::vector<Variant> best = refine(points, owner, fit_step);
  double best_score = score(best);
  const auto consider = [&](int cut1, int cut2) {
    for (int i = 0; i < n; ++i) owner[i] = (i >= cut1) + (i >= cut2);
    std::vector<Variant> v = refine(points, owner, fit_step);
    const double s = score(v);
    if (s < best_score) best_score = s, best = std::move(v);
  };
  consider(n, n);  // one variant
  // Cuts every `stride` points: all of them up to 48 points (some 1,100 starts), a grid of as
  // many past that, so that a fit of many runs stays well under a second.
  const int stride = std::max(1, n / 48);
  for (int cut1 = 2; cut1 + 2 <= n; cut1 += stride) {
    consider(cut1, n);                                                              // two
    for (int cut2 = cut1 + 2; cut2 + 2 <= n; cut2 += stride) consider(cut1, cut2);  // three
  }
  return best;
}

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  const size_t n = v.size();
  return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

}  // namespace

GroupGeometry run_geometry(const ClusterSpec& cluster, const NcclTestsRun& run) {
  const int gpn = cluster.gpus_per_node;
  const int nodes = run.nodes > 0 ? run.nodes : (run.gpus + gpn - 1) / gpn;
  const int per_node = (run.gpus + nodes - 1) / nodes;
  if (per_node > gpn)
    throw InvalidArgument(std::to_string(run.gpus) + " GPUs on " + std::to_string(nodes) +
                              " hosts is more than the cluster's " + std::to_string(gpn) +
                              " GPUs per node",
                          run.file);
  ClusterSpec spread = cluster;
  spread.nodes = nodes;
  std::vector<int> ranks;
  for (int i = 0; i < run.gpus; ++i) ranks.push_back(i / per_node * gpn + i % per_node);
  GroupGeometry g = geometry_of(spread, ranks, spread.num_gpus());
  g.groups_per_node = 1;  // one nccl-tests run: one group alone on its nodes
  return g;
}

CollectiveFit fit_collectives(const std::vector<CollectiveFitInput>& inputs,
                              const ClusterSpec& cluster) {
  struct Group {
    std::vector<Point> points;
    std::vector<std::string> files;
  };
  // (inter-node?, collective, algorithm) → its points.
  std::map<std::tuple<bool, int, int>, Group> groups;
  for (const CollectiveFitInput& input : inputs) {
    const NcclTestsRun& run = input.run;
    if (run.gpus < 2) throw InvalidArgument("a run of one GPU measures no collective", run.file);
    const GroupGeometry g = run_geometry(cluster, run);
    const bool inter = g.nodes > 1;
    if (input.nvls && (inter || !(run.collective == BandwidthCollective::all_reduce ||
                                  run.collective == BandwidthCollective::all_gather ||
                                  run.collective == BandwidthCollective::reduce_scatter)))
      throw InvalidArgument(
          "NVLS (--nvls) runs only all_reduce, all_gather or reduce_scatter inside one node; "
          "this run is " +
              to_string(run.collective) + " on " + std::to_string(g.nodes) + " node(s)",
          run.file);
    const LibraryAlgorithm algorithm = algorithm_of(run.collective, input.nvls);
    Group& group = groups[{inter, static_cast<int>(run.collective), static_cast<int>(algorithm)}];
    group.files.push_back(run.file);
    const double per_byte =
        bus_bandwidth_factor(run.collective, g.ranks) / group_nic_share(cluster, g);
    for (const NcclTestsRow& row : run.rows) {
      if (row.bytes <= 0) continue;  // a size-0 row carries no bytes term to fit
      group.points.push_back({static_cast<double>(algorithm_steps(algorithm, run.collective, g)),
                              static_cast<double>(row.bytes) * per_byte, row.time_s});
    }
  }
  CollectiveFit fit;
  static const std::array<const char*, 3> kProtocols = {"LL", "LL128", "Simple"};
  for (const auto& [key, group] : groups) {
    const auto [inter, op_index, algorithm_index] = key;
    const auto op = static_cast<BandwidthCollective>(op_index);
    const auto algorithm = static_cast<LibraryAlgorithm>(algorithm_index);
    const std::string scope = inter ? "inter_node" : "intra_node";
    if (group.points.size() > static_cast<size_t>(kMostNcclTestsRows))
      throw InvalidArgument("the runs give " + std::to_string(group.points.size()) +
                                " points to fit " + scope + " " + to_string(op) + " (" +
                                to_string(algorithm) + "), more than the " +
                                std::to_string(kMostNcclTestsRows) +
                                " symmesh fits at once; give fewer runs",
                            group.files.front());
    if (group.points.size() < 2)
      throw InvalidArgument("need measurements at two or more sizes to fit " + scope + " " +
                                to_string(op) + " (" + to_string(algorithm) + ")",
                            group.files.front());
    std::vector<Variant> variants = fit_envelope(group.points, true);
    // Across nodes a ring's latency grows with its hops (NCCL's tuner: nsteps × the NET
    // hop latency, src/graph/tuning.cc): where every run has one step count, the fit cannot
    // split base from steps, and it charges the whole latency to the steps, so that a
    // smaller ring (2 nodes against the 10 fitted) pays fewer of them.
    const bool one_step_count =
        std::all_of(group.points.begin(), group.points.end(),
                    [&](const Point& p) { return p.steps == group.points.front().steps; });
    if (inter && one_step_count && group.points.front().steps > 0)
      for (Variant& v : variants) {
        v.step_s += v.base_s / group.points.front().steps;
        v.base_s = 0;
      }
    std::sort(variants.begin(), variants.end(), [](const Variant& a, const Variant& b) {
      return a.seconds_per_byte > b.seconds_per_byte;  // lowest bandwidth first
    });
    CollectiveScopeTuning& tuning = inter ? fit.tuning.inter_node : fit.tuning.intra_node;
    const size_t first_name = kProtocols.size() - variants.size();
    for (size_t i = 0; i < variants.size(); ++i)
      tuning.of(op).push_back({algorithm, kProtocols[first_name + i], variants[i].base_s,
                               variants[i].step_s, 1 / variants[i].seconds_per_byte});
    std::vector<double> errors;
    for (const Point& p : group.points) {
      int which = 0;
      errors.push_back(std::abs(predict_envelope(variants, p, &which) - p.time_s) / p.time_s);
    }
    fit.errors.push_back({scope, op, algorithm, static_cast<int>(group.points.size()),
                          static_cast<int>(variants.size()), median(errors),
                          *std::max_element(errors.begin(), errors.end()), group.files});
  }
  fit.tuning.validate();
  return fit;
}

}  // namespace symmesh::evaluation
