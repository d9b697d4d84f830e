#include "strategies/analytic_cost_model.hpp"

#include <Eigen/Dense>
#include <algorithm>
#include <array>
#include <cstdio>
#include <map>
#include <optional>
#include <unordered_map>

#include "core/errors.hpp"
#include "core/roofline.hpp"
#include "strategies/analytic_features.hpp"
#include "strategies/collective_matmul.hpp"
#include "strategies/fusion_pricing.hpp"

namespace symmesh::strategies {
namespace {

using RowMatrix = Eigen::Matrix<double, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>;

// The distinct targets of one input over the kept candidates, each analysed once. A target
// is found by its dense index: per mesh dim R 0, P(sum) 1, P(avg) 2, S(t) 3+t, in mixed
// radix (3 + tensor rank); a hash map takes over where that index space would be large.
struct InputTable {
  std::vector<InputFeatures> entries;
  std::vector<int> entry_of_row;
};

constexpr int64_t kMaxDenseKeys = int64_t{1} << 22;

int64_t dense_key(const Placements& placements, int64_t base) {
  int64_t key = 0;
  for (const Placement& p : placements) {
    int64_t code = 0;
    switch (p.kind()) {
      case Placement::Kind::replicate:
        break;
      case Placement::Kind::partial:
        code = p.reduce_op() == ReduceOp::sum ? 1 : 2;
        break;
      case Placement::Kind::shard:
        code = 3 + p.shard_dim();
        break;
    }
    key = key * base + code;
  }
  return key;
}

// One pass over the kept candidates: every input's target looked up (and analysed the
// first time it is seen).
std::vector<InputTable> input_tables(const OpProblem& problem, const std::vector<Candidate>& all,
                                     const std::vector<int>& rows, const FeatureLayout& layout) {
  const int inputs = static_cast<int>(problem.inputs.size());
  std::vector<InputTable> tables(inputs);
  std::vector<int64_t> bases(inputs);
  std::vector<std::vector<int>> dense_seen(inputs);
  std::vector<std::unordered_map<int64_t, int>> sparse_seen(inputs);
  bool dense = true;
  for (int i = 0; i < inputs; ++i) {
    tables[i].entry_of_row.resize(rows.size());
    bases[i] = 3 + static_cast<int64_t>(problem.inputs[i].shape.size());
    int64_t keys = 1;
    for (int d = 0; d < problem.mesh.ndim() && keys <= kMaxDenseKeys; ++d) keys *= bases[i];
    dense &= keys <= kMaxDenseKeys;
    if (dense) dense_seen[i].assign(keys, -1);
  }
  for (size_t n = 0; n < rows.size(); ++n) {
    const std::vector<Placements>& targets = all[rows[n]].input_placements;
    for (int i = 0; i < inputs; ++i) {
      const int64_t key = dense_key(targets[i], bases[i]);
      int& entry = dense ? dense_seen[i][key] : sparse_seen[i].try_emplace(key, -1).first->second;
      if (entry < 0) {
        entry = static_cast<int>(tables[i].entries.size());
        tables[i].entries.push_back(
            input_features(problem.inputs[i], targets[i], problem.mesh, layout));
      }
      tables[i].entry_of_row[n] = entry;
    }
  }
  return tables;
}

// The output's redistribution to problem.output_target, per distinct candidate output
// placements (empty without a target).
InputTable output_table(const OpProblem& problem, const std::vector<Candidate>& all,
                        const std::vector<int>& rows, const FeatureLayout& layout) {
  InputTable table;
  if (!problem.output_target) return table;
  const Shape out_shape = problem.output_shape();
  std::unordered_map<int64_t, int> seen;
  const int64_t base = 3 + static_cast<int64_t>(out_shape.size());
  table.entry_of_row.resize(rows.size());
  for (size_t n = 0; n < rows.size(); ++n) {
    const Placements& placements = all[rows[n]].output_placements;
    auto [it, fresh] =
        seen.try_emplace(dense_key(placements, base), static_cast<int>(table.entries.size()));
    if (fresh)
      table.entries.push_back(input_features({out_shape, problem.dtype(), placements},
                                             *problem.output_target, problem.mesh, layout));
    table.entry_of_row[n] = it->second;
  }
  return table;
}

MatmulWork local_matmul(const OpProblem& problem, const MatmulEquation& eq, const Shape& a,
                        const Shape& b, int64_t bias_bytes) {
  MatmulWork w = matmul_work(eq.local_gemm(a, b), problem.dtype());
  w.work_fraction = problem.work_fraction;
  if (problem.has_bias()) {
    w.bias.id = 0;  // only its size matters to the roofline
    w.bias.size_bytes = bias_bytes;
  }
  return w;
}

// The fused price of every feasible row that can be fused (inf elsewhere): the overlapped
// all-gather + mm where a ends with a gather of its leading dim, the overlapped mm +
// reduce-scatter where the output's redistribution is one reduce-scatter of its leading
// dim, the cheaper when both. Worked out once per distinct (a, b, bias, output) entry: a
// pipeline replay is a few hundred steps.
void price_fusion(const OpProblem& problem, const std::vector<Candidate>& candidates,
                  const std::vector<InputTable>& tables, const InputTable& output,
                  const AnalyticTopology& topo, const GpuSpec& gpu, const AnalyticCostModel& model,
                  AnalyticPricing& out) {
  const int rows = static_cast<int>(out.rows.size());
  out.fused_us.assign(rows, kInfiniteCost);
  out.fused_chunks.assign(rows, 1);
  out.fused_kind.assign(rows, Implementation::unfused);
  const int lhs = problem.lhs_index(), rhs = problem.rhs_index(), bias = problem.bias_index();
  const int64_t e = element_size_bytes(problem.dtype());
  const MatmulEquation eq = problem.equation();
  struct Site {
    bool checked = false;
    std::optional<int> mesh_dim;
    int group_size = 0;
    double step_us = 0;  // the fused step's unfused price (ring + its copies)
  };
  std::vector<Site> gathers(tables[lhs].entries.size()), scatters(output.entries.size());
  std::map<std::array<int, 4>, std::pair<FusedChoice, FusedChoice>> priced;
  for (int n = 0; n < rows; ++n) {
    if (!out.feasible[n]) continue;
    const Candidate& cand = candidates[out.rows[n]];
    const int a_entry = tables[lhs].entry_of_row[n];
    Site& gather = gathers[a_entry];
    if (!gather.checked) {
      gather.checked = true;
      const Placements& a_target = cand.input_placements[lhs];
      if (const auto site = allgather_fusion(problem, a_target)) {
        gather.mesh_dim = site->mesh_dim;
        gather.group_size = site->group_size;
        gather.step_us = model
                             .step_costs_us(problem.inputs[lhs],
                                            plan_transitions(problem.inputs[lhs].placements,
                                                             a_target, problem.mesh),
                                            problem.mesh)
                             .back();
      }
    }
    const int out_entry = output.entries.empty() ? -1 : output.entry_of_row[n];
    Site none;
    Site& scatter = out_entry >= 0 ? scatters[out_entry] : none;
    if (out_entry >= 0 && !scatter.checked) {
      scatter.checked = true;
      if (const auto site = reducescatter_fusion(problem, cand.output_placements)) {
        scatter.mesh_dim = site->mesh_dim;
        scatter.group_size = site->group_size;
        scatter.step_us = out.output_comm_us[n];
      }
    }
    if (!gather.mesh_dim && !scatter.mesh_dim) continue;
    const int b_entry = tables[rhs].entry_of_row[n];
    const int bias_entry = bias >= 0 ? tables[bias].entry_of_row[n] : -1;
    const auto key = std::array<int, 4>{a_entry, b_entry, bias_entry, out_entry};
    auto it = priced.find(key);
    if (it == priced.end()) {
      const InputFeatures& a = tables[lhs].entries[a_entry];
      const InputFeatures& b = tables[rhs].entries[b_entry];
      const int64_t bias_bytes = bias_entry >= 0 ? tables[bias].entries[bias_entry].local_bytes : 0;
      const MatmulWork whole = local_matmul(problem, eq, a.local_shape, b.local_shape, bias_bytes);
      const bool batch_leading = eq.leading_is_batch();
      const int64_t per_leading = eq.gemm_extent_per_leading(a.local_shape);
      const int64_t leading = a.local_shape[0];  // of a, and of the output
      auto piece = [whole, batch_leading, per_leading, e](int64_t piece_rows) {
        MatmulWork w = whole;
        (batch_leading ? w.batch : w.m) = piece_rows * per_leading;
        // The piece reads its share of a bias that varies along the leading dim.
        w.bias.size_bytes = std::min(w.bias.size_bytes, w.batch * w.m * w.n * e);
        return w;
      };
      auto matmul_s = [&gpu, piece](int64_t r) {
        return roofline::matmul_duration_s(gpu, piece(r));
      };
      FusedChoice ag{1, kInfiniteCost}, rs{1, kInfiniteCost};
      if (gather.mesh_dim) {
        const int p = gather.group_size;
        const MeshDimLinks& links = topo.dims[*gather.mesh_dim];
        FusedGatherTiming timing;
        timing.group_size = p;
        timing.shard_rows = chunk_of(leading, p, 0).size;
        timing.put_latency_s = links.ring_latency_s;
        timing.s_per_row = static_cast<double>(a.local_bytes) / std::max<int64_t>(leading, 1) *
                           links.ring_s_per_byte;
        timing.matmul_s = matmul_s;
        ag = best_fused_allgather_matmul(timing,
                                         fusion_chunk_choices(chunk_of(leading, p, p - 1).size));
      }
      if (scatter.mesh_dim) {
        const int p = scatter.group_size;
        const MeshDimLinks& links = topo.dims[*scatter.mesh_dim];
        // Output elements per index of the leading dim.
        const int64_t row_elements = per_leading * (batch_leading ? whole.m : 1) * whole.n;
        FusedScatterTiming timing;
        timing.group_size = p;
        timing.block_rows = chunk_of(leading, p, 0).size;
        timing.put_latency_s = links.ring_latency_s;
        timing.s_per_row = static_cast<double>(row_elements * e) * links.ring_s_per_byte;
        timing.matmul_s = matmul_s;
        timing.reduce_s = [&gpu, row_elements, dtype = problem.dtype()](int64_t r) {
          ReduceWork add;
          add.dtype = dtype;
          add.elements = r * row_elements;
          return roofline::reduce_duration_s(gpu, add);
        };
        rs = best_fused_matmul_reducescatter(
            timing, fusion_chunk_choices(chunk_of(leading, p, p - 1).size));
      }
      it = priced.emplace(key, std::make_pair(ag, rs)).first;
    }
    const auto& [ag, rs] = it->second;
    const double ag_us =
        gather.mesh_dim ? out.comm_total_us(n) - gather.step_us + ag.time_s * 1e6 : kInfiniteCost;
    const double rs_us =
        scatter.mesh_dim ? out.comm_total_us(n) - scatter.step_us + rs.time_s * 1e6 : kInfiniteCost;
    if (ag_us <= rs_us) {
      out.fused_us[n] = ag_us;
      out.fused_chunks[n] = ag.chunks;
      out.fused_kind[n] = Implementation::fused_allgather_mm;
    } else {
      out.fused_us[n] = rs_us;
      out.fused_chunks[n] = rs.chunks;
      out.fused_kind[n] = Implementation::fused_mm_reducescatter;
    }
  }
}

}  // namespace

std::string gib_text(double bytes) {
  char text[64];
  if (bytes >= 1024.0 * 1024 * 1024)
    std::snprintf(text, sizeof text, "%.2f GiB", bytes / (1024.0 * 1024 * 1024));
  else
    std::snprintf(text, sizeof text, "%.2f MiB", bytes / (1024.0 * 1024));
  return text;
}

double AnalyticPricing::comm_total_us(int row) const {
  double total = output_comm_us.empty() ? 0 : output_comm_us[row];
  for (int i = 0; i < inputs; ++i) total += comm_us[static_cast<size_t>(row) * inputs + i];
  return total;
}

AnalyticCostModel::AnalyticCostModel(ClusterSpec cluster, bool fuse)
    : cluster_(std::move(cluster)), fuse_(fuse) {
  cluster_.validate();
}

std::shared_ptr<const AnalyticTopology> AnalyticCostModel::topology(const DeviceMesh& mesh) const {
  {
    const std::lock_guard<std::mutex> lock(topology_mutex_);
    const auto it = topologies_.find(mesh.shape());
    if (it != topologies_.end()) return it->second;
  }
  auto topo = std::make_shared<const AnalyticTopology>(AnalyticTopology::of(cluster_, mesh));
  const std::lock_guard<std::mutex> lock(topology_mutex_);
  return topologies_.emplace(mesh.shape(), std::move(topo)).first->second;
}

std::string AnalyticCostModel::memory_reason(double bytes) const {
  return "needs " + gib_text(bytes) + " per GPU, more than the " +
         gib_text(cluster_.gpu.memory_capacity_bytes) + " of " + cluster_.gpu.name;
}

AnalyticPricing AnalyticCostModel::analyse(const OpProblem& problem,
                                           const std::vector<Candidate>& candidates,
                                           bool with_reasons) const {
  const DeviceMesh& mesh = problem.mesh;
  const auto topo = topology(mesh);
  const FeatureLayout layout{mesh.ndim(), topo->library ? topo.get() : nullptr};
  const std::vector<double> weights = cost_vector(layout, *topo, cluster_.gpu);
  const Eigen::Map<const Eigen::VectorXd> w(weights.data(), layout.cols());
  const double us_per_peak_flop = 1e6 / roofline::peak_flops_per_s(cluster_.gpu, problem.dtype());
  const double us_per_hbm_byte = roofline::hbm_time_s(cluster_.gpu, 1.0) * 1e6;
  const double launch_us = roofline::launch_overhead_s(cluster_.gpu) * 1e6;

  AnalyticPricing out;
  for (int i = 0; i < static_cast<int>(candidates.size()); ++i)
    if (candidates[i].kept()) out.rows.push_back(i);
  const int rows = static_cast<int>(out.rows.size());
  const int inputs = static_cast<int>(problem.inputs.size());
  const auto names = problem.input_names();
  const std::optional<MatmulEquation> eq =
      problem.is_tensor_op() ? std::nullopt : std::optional(problem.equation());

  const std::vector<InputTable> tables = input_tables(problem, candidates, out.rows, layout);

  // Communication: one feature matrix per input, times the cost vector. The matrix is
  // scratch kept per thread, so that pricing op after op does not fault in fresh pages.
  Eigen::MatrixXd comm(rows, inputs);
  thread_local RowMatrix features;
  features.resize(rows, layout.cols());
  for (int i = 0; i < inputs; ++i) {
    const InputTable& t = tables[i];
    for (int n = 0; n < rows; ++n)
      features.row(n) = Eigen::Map<const Eigen::RowVectorXd>(
          t.entries[t.entry_of_row[n]].row.data(), layout.cols());
    comm.col(i).noalias() = features * w;
  }
  // The output to where it must end up, when the problem says where.
  const InputTable output = output_table(problem, candidates, out.rows, layout);
  if (!output.entries.empty()) {
    for (int n = 0; n < rows; ++n)
      features.row(n) = Eigen::Map<const Eigen::RowVectorXd>(
          output.entries[output.entry_of_row[n]].row.data(), layout.cols());
    const Eigen::VectorXd output_comm = features * w;
    out.output_comm_us.assign(output_comm.data(), output_comm.data() + rows);
  }

  // Compute: the roofline's two terms as columns, scaled and combined by a max.
  Eigen::MatrixXd roof(rows, 2);
  Eigen::VectorXd memory(rows);
  out.feasible.assign(rows, 1);
  if (with_reasons) out.infeasible.assign(rows, "");
  const bool tensor_op = problem.is_tensor_op();
  const int lhs = problem.lhs_index(), rhs = tensor_op ? 0 : problem.rhs_index();
  const int64_t e = element_size_bytes(problem.dtype());
  const Shape out_shape = problem.output_shape();
  // Kernel launches beyond the first: a tensor op may launch several (core/tensor_op.hpp).
  Eigen::VectorXd extra_launches = Eigen::VectorXd::Zero(rows);
  for (int n = 0; n < rows; ++n) {
    const InputFeatures& a = tables[lhs].entries[tables[lhs].entry_of_row[n]];
    const InputFeatures& b = tables[rhs].entries[tables[rhs].entry_of_row[n]];
    double held = 0, buffers = 0;
    for (int i = 0; i < inputs; ++i) {
      const InputFeatures& f = tables[i].entries[tables[i].entry_of_row[n]];
      if (!f.impossible.empty() && out.feasible[n]) {
        out.feasible[n] = 0;
        if (with_reasons) out.infeasible[n] = names[i] + ": " + f.impossible;
      }
      held += static_cast<double>(f.current_bytes) + (f.moves() ? f.local_bytes : 0);
      buffers = std::max(buffers, static_cast<double>(f.buffer_bytes));
    }
    if (!output.entries.empty()) {
      // The output's new piece and the largest step's buffers (the matmul's output is
      // counted below).
      const InputFeatures& f = output.entries[output.entry_of_row[n]];
      if (!f.impossible.empty() && out.feasible[n]) {
        out.feasible[n] = 0;
        if (with_reasons) out.infeasible[n] = "out: " + f.impossible;
      }
      held += f.moves() ? f.local_bytes : 0;
      buffers = std::max(buffers, static_cast<double>(f.buffer_bytes));
    }
    if (!out.feasible[n]) {
      roof.row(n).setZero();
      memory(n) = 0;
      continue;
    }
    if (tensor_op) {
      // The busiest rank's pieces (rank 0's: torch.chunk gives it the largest).
      std::vector<Shape> pieces;
      for (int i = 0; i < inputs; ++i)
        pieces.push_back(tables[i].entries[tables[i].entry_of_row[n]].local_shape);
      const Shape out_piece = rank0_shape(
          {out_shape, problem.dtype(), candidates[out.rows[n]].output_placements}, mesh);
      const TensorOpCost cost =
          tensor_op_cost(problem.op, pieces, out_piece, problem.attrs, problem.dtype());
      roof(n, 0) = roofline::tensor_op_effective_flops(cluster_.gpu, problem.dtype(), cost);
      roof(n, 1) = cost.bytes;
      extra_launches(n) = cost.kernels - 1;
      memory(n) = held + buffers + static_cast<double>(numel(out_piece) * e);
      continue;
    }
    const int bias = problem.bias_index();
    const int64_t bias_bytes =
        bias >= 0 ? tables[bias].entries[tables[bias].entry_of_row[n]].local_bytes : 0;
    const MatmulWork mm = local_matmul(problem, *eq, a.local_shape, b.local_shape, bias_bytes);
    roof(n, 0) =
        roofline::gemm_effective_flops(cluster_.gpu, mm.dtype, mm.batch, mm.m, mm.n, mm.k) *
        mm.work_fraction;
    roof(n, 1) = roofline::matmul_bytes_moved(mm) * mm.work_fraction;
    memory(n) = held + buffers + static_cast<double>(mm.batch * mm.m * mm.n * e);
  }
  const Eigen::VectorXd compute =
      (roof.col(0) * us_per_peak_flop).cwiseMax(roof.col(1) * us_per_hbm_byte).array() + launch_us +
      extra_launches.array() * launch_us;

  out.inputs = inputs;
  out.comm_us.resize(static_cast<size_t>(rows) * inputs);
  out.compute_us.resize(rows);
  out.memory_bytes.resize(rows);
  const double capacity = cluster_.gpu.memory_capacity_bytes;
  for (int n = 0; n < rows; ++n) {
    for (int i = 0; i < inputs; ++i) out.comm_us[static_cast<size_t>(n) * inputs + i] = comm(n, i);
    out.compute_us[n] = compute(n);
    out.memory_bytes[n] = memory(n);
    if (out.feasible[n] && memory(n) > capacity) {
      out.feasible[n] = 0;
      out.infeasible.resize(rows);  // a rare case: its reason is always kept
      out.infeasible[n] = memory_reason(memory(n));
    }
  }
  if (problem.is_tensor_op()) {  // nothing to fuse: the pipelines overlap matmuls
    out.fused_us.assign(rows, kInfiniteCost);
    out.fused_chunks.assign(rows, 1);
    out.fused_kind.assign(rows, Implementation::unfused);
  } else {
    price_fusion(problem, candidates, tables, output, *topo, cluster_.gpu, *this, out);
  }
  return out;
}

void AnalyticCostModel::price(const OpProblem& problem, std::vector<Candidate>& candidates) const {
  const AnalyticPricing a = analyse(problem, candidates, false);
  bool any_feasible = false;
  int smallest = -1;  // the memory-infeasible row that needs the least
  for (size_t n = 0; n < a.rows.size(); ++n) {
    Candidate& c = candidates[a.rows[n]];
    const double* comm = a.comm_us.data() + n * a.inputs;
    c.input_cost_us.assign(comm, comm + a.inputs);
    c.compute_us = a.compute_us[n];
    c.cost_us = c.unfused_cost_us = c.fused_cost_us = kInfiniteCost;
    c.output_cost_us = a.output_comm_us.empty() ? 0 : a.output_comm_us[n];
    c.implementation = c.fused_implementation = Implementation::unfused;
    c.chunks = c.fused_chunks = 1;
    if (a.feasible[n]) {
      c.unfused_cost_us = c.compute_us + c.output_cost_us;
      for (double x : c.input_cost_us) c.unfused_cost_us += x;
      c.fused_cost_us = a.fused_us[n];
      c.fused_chunks = a.fused_chunks[n];
      c.fused_implementation = a.fused_kind[n];
      c.cost_us = c.unfused_cost_us;
      if (fuse_ && c.fused_cost_us < c.unfused_cost_us) {
        c.cost_us = c.fused_cost_us;
        c.implementation = c.fused_implementation;
        c.chunks = c.fused_chunks;
      }
      any_feasible = true;
    } else if (a.memory_bytes[n] > 0 &&
               (smallest < 0 || a.memory_bytes[n] < a.memory_bytes[smallest])) {
      smallest = static_cast<int>(n);
    }
  }
  if (!any_feasible && smallest >= 0) {
    // Which inputs, where they are: what a reader needs to see why nothing fits.
    std::string inputs;
    const std::vector<std::string> names = problem.input_names();
    for (size_t i = 0; i < problem.inputs.size(); ++i)
      inputs += (i ? ", " : "") + names[i] + " " + to_string(problem.inputs[i].shape) + " at " +
                to_string(problem.inputs[i].placements);
    throw Unsupported("no strategy fits in memory: the smallest, candidate #" +
                          std::to_string(candidates[a.rows[smallest]].index) + ", " +
                          memory_reason(a.memory_bytes[smallest]) + " (inputs " + inputs + ")",
                      to_string(problem.op));
  }
}

std::vector<double> AnalyticCostModel::step_costs_us(const TensorSpec& current,
                                                     const std::vector<Transition>& steps,
                                                     const DeviceMesh& mesh) const {
  Placements target = current.placements;
  for (const Transition& t : steps) target[t.mesh_dim] = t.to;
  const auto topo = topology(mesh);
  const FeatureLayout layout{mesh.ndim(), topo->library ? topo.get() : nullptr};
  const InputFeatures f = input_features(current, target, mesh, layout, true);
  if (!f.impossible.empty()) return std::vector<double>(steps.size(), kInfiniteCost);
  if (f.step_rows.size() != steps.size())
    throw InvalidArgument("the steps are not the redistribution planner's for " +
                              to_string(current.placements) + " -> " + to_string(target),
                          "analytic cost model");
  const std::vector<double> w = cost_vector(layout, *topo, cluster_.gpu);
  std::vector<double> costs;
  for (const auto& row : f.step_rows) {
    double cost = 0;
    for (size_t j = 0; j < w.size(); ++j) cost += row[j] * w[j];
    costs.push_back(cost);
  }
  return costs;
}

std::vector<CandidateDetail> AnalyticCostModel::details(
    const OpProblem& problem, const std::vector<Candidate>& candidates) const {
  const AnalyticPricing a = analyse(problem, candidates);
  std::vector<CandidateDetail> out(candidates.size());
  for (size_t n = 0; n < a.rows.size(); ++n) {
    CandidateDetail& d = out[a.rows[n]];
    d.comm_us = a.comm_total_us(static_cast<int>(n));
    d.compute_us = a.compute_us[n];
    d.memory_bytes_per_rank = a.memory_bytes[n];
    d.feasible = a.feasible[n] != 0;
    d.note = d.feasible ? "" : "infeasible: " + a.infeasible[n];
  }
  return out;
}

}  // namespace symmesh::strategies
