#pragma once
// The `analytic` cost model: what one candidate costs on a described cluster, in µs,
//
//   cost = Σ over inputs of redistribution time  +  local matmul time on the busiest rank,
//
// and infinity when the candidate does not fit in a GPU's memory or needs an impossible
// redistribution (the reason shows under `plan --explain`). DTensor's model ignores compute
// and memory and uses fixed link figures; this one takes its links from the cluster
// (strategies/analytic_topology.hpp: intra-node vs inter-node per mesh dim, NIC sharing)
// and prices exactly the steps, chunks and re-layout copies the lowering runs
// (strategies/analytic_features.hpp), with the ring closed forms of core/collectives.hpp.
//
// Compute: the roofline of core/roofline.hpp (the simulator's) on mesh rank 0's local
// shape (local_compute_of): max(flops / efficiency / peak, bytes / HBM) + launch.
//
// Memory per rank (rank 0, which holds the largest piece of everything): the inputs as the
// caller holds them, plus each redistributed input's new piece, plus the largest symmetric
// buffers of any one redistribution step (data + staging slots), plus the output. This is
// conservative — it assumes the caller's inputs stay resident and counts a gathered piece
// apart from the buffer it may live in — and it ignores framework overheads (allocator
// fragmentation, workspaces, CUDA context). Over `gpu.memory.capacity`: infeasible.
//
// Vectorised: price() builds, for the kept candidates, one feature matrix per input (rows =
// candidates, columns = FeatureLayout) and multiplies it by the cost vector; the roofline is
// two columns (flops/efficiency, HBM bytes) scaled and combined with a coefficient-wise max.
// Features of an input depend only on its target placements, so each distinct target is
// analysed once.
//
// With problem.output_target, each candidate also pays its output's redistribution there
// (same features, priced like an input's; its new piece and buffers count in memory).
//
// Fusion: a candidate whose a ends with an all-gather of its leading dim, or whose output
// goes there by one reduce-scatter of its leading dim (strategies/collective_matmul.hpp),
// is also priced as the overlapped collective matmul — its other communication, plus the
// replayed pipeline of strategies/fusion_pricing.hpp at the best chunk count, in place of
// that step and the matmul — and runs fused when that is cheaper (unless the model was
// built with fuse = false). The memory is taken as the same: the pieces land in the
// collective's buffer either way (the mm + reduce-scatter also keeps two block-sized
// scratch buffers, less than the unfused staging copy it replaces).
//
// Selection (strategies/selection.hpp, unchanged): DTensor's rules, which for this model
// reduce to "the cheapest, ties to the lowest index" — every candidate costs at least one
// kernel launch, so no cost is 0 — except that a lone kept candidate is taken as it is.
// If every kept candidate overflows the GPU's memory, price() throws Unsupported naming
// the smallest need.
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "core/cluster_spec.hpp"
#include "strategies/analytic_topology.hpp"
#include "strategies/cost_model.hpp"

namespace symmesh::strategies {

// Everything the model worked out for the kept candidates of one op.
struct AnalyticPricing {
  std::vector<int> rows;  // positions of the kept candidates
  int inputs = 0;
  std::vector<double> comm_us;             // [row * inputs + input]: redistribution time
  std::vector<double> compute_us;          // [row]: local matmul on rank 0
  std::vector<double> memory_bytes;        // [row]: per rank, rank 0
  std::vector<char> feasible;              // [row]: fits and can run
  std::vector<std::string> infeasible;     // [row]: why not (with_reasons; memory: always)
  std::vector<double> output_comm_us;      // [row]: the output to problem.output_target (or empty)
  std::vector<double> fused_us;            // [row]: the cheaper fusion's total; inf: cannot fuse
  std::vector<int> fused_chunks;           // [row]: the chunk count of that price
  std::vector<Implementation> fused_kind;  // [row]: which fusion that is
  double comm_total_us(int row) const;
};

class AnalyticCostModel final : public CostModel, public CandidateExplainer {
 public:
  // The cluster is validated here (throws InvalidArgument naming the field).
  // fuse = false: never fuse (`--no-fuse`); fused prices are still worked out for --explain.
  explicit AnalyticCostModel(ClusterSpec cluster, bool fuse = true);

  std::string name() const override { return "analytic"; }
  void price(const OpProblem& problem, std::vector<Candidate>& candidates) const override;
  std::vector<double> step_costs_us(const TensorSpec& current, const std::vector<Transition>& steps,
                                    const DeviceMesh& mesh) const override;
  std::vector<CandidateDetail> details(const OpProblem& problem,
                                       const std::vector<Candidate>& candidates) const override;

  const ClusterSpec& cluster() const { return cluster_; }
  // The pricing behind price() and details(). Throws InvalidArgument when the mesh has
  // more ranks than the cluster has GPUs or the GPU has no peak for the op's dtype.
  // with_reasons: say why each infeasible candidate is (details() does; price() does not,
  // which saves a string per impossible candidate).
  AnalyticPricing analyse(const OpProblem& problem, const std::vector<Candidate>& candidates,
                          bool with_reasons = true) const;

 private:
  std::string memory_reason(double bytes) const;
  // The per-dim figures of a mesh shape, worked out once (price() is called per op, often
  // on the same mesh, and from several threads by the simulated model).
  std::shared_ptr<const AnalyticTopology> topology(const DeviceMesh& mesh) const;

  ClusterSpec cluster_;
  bool fuse_ = true;
  mutable std::mutex topology_mutex_;
  mutable std::map<std::vector<int>, std::shared_ptr<const AnalyticTopology>> topologies_;
};

// "92.3 GiB" style, for memory notes.
std::string gib_text(double bytes);

}  // namespace symmesh::strategies
