// Gradient buckets (gradient_buckets.hpp).
#include "strategies/gradient_buckets.hpp"

#include <algorithm>
#include <cmath>
#include <numeric>

#include "core/collectives.hpp"
#include "core/errors.hpp"
#include "strategies/layout_search.hpp"
#include "strategies/step_memory.hpp"
#include "strategies/step_streams.hpp"

namespace symmesh::strategies {

int64_t bucket_parameters(int64_t reducing_ranks) {
  return std::max<int64_t>(40'000'000, 1'000'000 * std::max<int64_t>(reducing_ranks, 1));
}

double GradientBucket::reduction_us() const {
  return std::accumulate(step_cost_us.begin(), step_cost_us.end(), 0.0);
}

double GradientBucket::gather_us() const {
  return std::accumulate(gather_step_cost_us.begin(), gather_step_cost_us.end(), 0.0);
}

namespace {

bool moves_data(const RedistributionStep& step) {
  return collective_op_of(step.collective).has_value();
}

bool bucketable(CollectiveKind kind) {
  return kind == CollectiveKind::all_reduce || kind == CollectiveKind::reduce_scatter ||
         kind == CollectiveKind::all_gather;
}

// The ranks a redistribution's moving steps run over: the product of their mesh dims' sizes.
int64_t reducing_ranks(const Redistribution& moves, const DeviceMesh& mesh) {
  std::vector<int> dims;
  for (const RedistributionStep& s : moves.steps)
    if (moves_data(s) && std::find(dims.begin(), dims.end(), s.mesh_dim) == dims.end())
      dims.push_back(s.mesh_dim);
  int64_t ranks = 1;
  for (int d : dims) ranks *= mesh.shape().at(d);
  return ranks;
}

// What a group's members share: each collective's kind and mesh dim, in order.
using StepShape = std::vector<std::pair<int, int>>;
StepShape shape_of(const std::vector<BucketStep>& steps) {
  StepShape out;
  for (const BucketStep& s : steps) out.emplace_back(static_cast<int>(s.collective), s.mesh_dim);
  return out;
}

// A member's buffers added to its group's, step by step (the same shape).
void add_buffers(std::vector<BucketStep>& group, const std::vector<BucketStep>& member) {
  for (size_t k = 0; k < member.size() && k < group.size(); ++k)
    group[k].buffer_bytes += member[k].buffer_bytes;
}

// The steps of an empty group shaped as `steps`.
std::vector<BucketStep> emptied(std::vector<BucketStep> steps) {
  for (BucketStep& s : steps) s.buffer_bytes = 0;
  return steps;
}

// Each of a group's steps priced whole (an all-to-all, never grouped, at 0: its alone price
// is the search's).
std::vector<double> priced(BucketPricer& pricer, const std::vector<BucketStep>& steps,
                           DType dtype) {
  std::vector<double> out;
  for (const BucketStep& s : steps)
    out.push_back(bucketable(s.collective)
                      ? pricer.step_cost_us(s.collective, s.mesh_dim, dtype, s.buffer_bytes)
                      : 0.0);
  return out;
}

}  // namespace

std::vector<BucketStep> moving_steps(const Redistribution& moves) {
  std::vector<BucketStep> out;
  for (const RedistributionStep& s : moves.steps)
    if (moves_data(s)) out.push_back({s.collective, s.mesh_dim, s.buffer_bytes});
  return out;
}

double BucketPricer::step_cost_us(CollectiveKind collective, int mesh_dim, DType dtype,
                                  int64_t buffer_bytes) {
  if (!bucketable(collective))
    throw InvalidArgument("a bucket runs all-reduces, reduce-scatters and all-gathers, not " +
                              to_string(collective),
                          "gradient bucket");
  const auto key = std::make_tuple(static_cast<int>(collective), mesh_dim,
                                   static_cast<int>(dtype), buffer_bytes);
  if (const auto at = memo_.find(key); at != memo_.end()) return at->second;
  const int64_t ranks = mesh_.shape().at(mesh_dim);
  const int64_t element = element_size_bytes(dtype);
  int64_t elements = std::max<int64_t>(1, (buffer_bytes + element - 1) / element);
  elements = (elements + ranks - 1) / ranks * ranks;  // whole, equal chunks
  Placements placed(mesh_.ndim(), Placement::replicate());
  Transition move{mesh_dim, Placement::partial(), Placement::replicate()};
  if (collective == CollectiveKind::reduce_scatter) move.to = Placement::shard(0);
  if (collective == CollectiveKind::all_gather) move.from = Placement::shard(0);
  placed[mesh_dim] = move.from;
  double us = 0;
  for (double step : model_.step_costs_us(TensorSpec{{elements}, dtype, placed}, {move}, mesh_))
    us += step;
  memo_.emplace(key, us);
  return us;
}

std::vector<double> BucketPricer::share_costs_us(const Redistribution& moves, DType dtype,
                                                 const std::vector<double>& alone_us) {
  std::vector<double> out = alone_us;
  const std::vector<BucketStep> moving = moving_steps(moves);
  if (moving.empty()) return out;
  const int64_t elements = moving.front().buffer_bytes / element_size_bytes(dtype);
  int64_t bucket = bucket_parameters(reducing_ranks(moves, mesh_));
  if (bound_elements_ > 0) bucket = std::min(bucket, bound_elements_);
  if (elements <= 0) return out;
  // How many tensors like this one fill a bucket: each pays that part of the bucket's price
  // (a tensor of a bucket or more, its own flat buffer's: no re-layout of a split tensor's
  // chunks, as the bucket's collective runs it).
  const double per_bucket =
      std::max(1.0, static_cast<double>(bucket) / static_cast<double>(elements));
  for (size_t k = 0; k < moves.steps.size() && k < out.size(); ++k) {
    const RedistributionStep& s = moves.steps[k];
    if (!moves_data(s) || !bucketable(s.collective)) continue;
    const auto full = static_cast<int64_t>(std::llround(static_cast<double>(s.buffer_bytes) *
                                                        per_bucket));
    out[k] = step_cost_us(s.collective, s.mesh_dim, dtype, full) / per_bucket;
  }
  return out;
}

std::vector<GradientBucket> bucket_gradients(const DataflowGraph& graph,
                                             const std::vector<GradientReduction>& reductions,
                                             BucketPricer& pricer) {
  // What a bucket's members share: stage, chunk, dtype, and the shape of both step lists.
  using Key = std::tuple<int, int, int, StepShape, StepShape>;
  struct Open {
    GradientBucket bucket;
    int64_t elements = 0;
    int64_t limit = 0;
  };
  std::map<Key, Open> open;
  std::vector<GradientBucket> closed;
  const auto close = [&](Open& o) {
    GradientBucket& b = o.bucket;
    b.step_cost_us = priced(pricer, b.steps, b.dtype);
    b.gather_step_cost_us = priced(pricer, b.gather_steps, b.dtype);
    closed.push_back(std::move(b));
  };
  for (size_t i = 0; i < reductions.size(); ++i) {
    const GradientReduction& r = reductions[i];
    const std::vector<BucketStep> steps = moving_steps(r.redistribution);
    const std::vector<BucketStep> gathers =
        r.parameter_gather ? moving_steps(*r.parameter_gather) : std::vector<BucketStep>{};
    if (steps.empty() && gathers.empty()) continue;
    const GraphOp& made = graph.ops.at(r.after_op);
    const DType dtype = graph.tensors.at(r.gradient).dtype;
    const bool alone = std::any_of(steps.begin(), steps.end(),
                                   [](const BucketStep& s) { return !bucketable(s.collective); });
    Key key{made.stage, made.chunk, static_cast<int>(dtype), shape_of(steps), shape_of(gathers)};
    if (alone) std::get<0>(key) = -1 - static_cast<int>(i);  // an all-to-all goes on its own
    auto [at, fresh] = open.try_emplace(key);
    Open& o = at->second;
    if (fresh || o.bucket.members.empty()) {
      o = Open{};
      o.bucket.stage = made.stage;
      o.bucket.chunk = made.chunk;
      o.bucket.dtype = dtype;
      o.bucket.steps = emptied(steps);
      o.bucket.gather_steps = emptied(gathers);
      o.limit = bucket_parameters(
          reducing_ranks(steps.empty() ? *r.parameter_gather : r.redistribution, pricer.mesh()));
    }
    o.bucket.members.push_back(static_cast<int>(i));
    o.bucket.after_op = r.after_op;
    const std::vector<int>& readers = graph.tensors.at(r.parameter).consumers;
    if (!readers.empty() &&
        (o.bucket.first_reader < 0 || readers.front() < o.bucket.first_reader))
      o.bucket.first_reader = readers.front();
    add_buffers(o.bucket.steps, steps);
    add_buffers(o.bucket.gather_steps, gathers);
    const int64_t first_bytes =
        steps.empty() ? gathers.front().buffer_bytes : steps.front().buffer_bytes;
    o.elements += first_bytes / element_size_bytes(dtype);
    if (alone || o.elements >= o.limit) {
      close(o);
      o = Open{};
    }
  }
  for (auto& [key, o] : open)
    if (!o.bucket.members.empty()) close(o);
  // In the order their collectives start: by closing op, then as their members were made.
  std::stable_sort(closed.begin(), closed.end(),
                   [](const GradientBucket& a, const GradientBucket& b) {
                     return a.after_op != b.after_op ? a.after_op < b.after_op
                                                     : a.members.front() < b.members.front();
                   });
  return closed;
}

std::vector<UnitGather> unit_gathers(const DataflowGraph& graph, const StepLayout& layout,
                                     const DeviceMesh& mesh, BucketPricer& pricer) {
  std::vector<UnitGather> out;
  if (graph.zero_stage != 3) return out;
  std::map<std::pair<int, StepShape>, size_t> index;  // by (unit, shape)
  for (size_t i = 0; i < graph.ops.size() && i < layout.ops.size(); ++i) {
    if (!layout.ops[i]) continue;
    const GraphOp& g = graph.ops[i];
    const OpProblem& problem = layout.ops[i]->problem;
    const int unit = i < layout.timings.size() ? layout.timings[i].gather_unit : -1;
    for (size_t k = 0; k < g.inputs.size() && k < problem.inputs.size(); ++k) {
      const TensorId param = g.inputs[k].tensor;
      const GraphTensor& t = graph.tensors[param];
      if (t.kind != GraphTensor::Kind::parameter) continue;
      const Placements& read = problem.inputs[k].placements;
      const Placements stored =
          g.inputs[k].transposed ? transposed_placements(read, static_cast<int>(t.shape.size()))
                                 : read;
      const Placements state = optimizer_state_placements(graph, param, stored, mesh);
      if (state == stored) continue;
      const std::vector<BucketStep> steps =
          moving_steps(plan_redistribution(TensorSpec{t.shape, t.dtype, state}, stored, mesh));
      if (steps.empty()) continue;
      auto [at, fresh] = index.try_emplace({unit, shape_of(steps)}, out.size());
      if (fresh) {
        UnitGather u;
        u.first_op = static_cast<int>(i);
        u.dtype = t.dtype;
        u.steps = emptied(steps);
        out.push_back(std::move(u));
      }
      UnitGather& u = out[at->second];
      u.reads.emplace_back(param, static_cast<int>(i));
      add_buffers(u.steps, steps);
    }
  }
  for (UnitGather& u : out) u.step_cost_us = priced(pricer, u.steps, u.dtype);
  return out;
}

void apply_buckets(const DataflowGraph& graph, const DeviceMesh& mesh, int gpus_per_node,
                   StepLayout& layout, BucketPricer& pricer) {
  layout.buckets = bucket_gradients(graph, layout.reductions, pricer);
  layout.unit_gathers = unit_gathers(graph, layout, mesh, pricer);
  if (!layout.unit_gathers.empty()) {
    for (OpTiming& t : layout.timings) t.gather_link_us[0] = t.gather_link_us[1] = 0;
    for (const UnitGather& u : layout.unit_gathers)
      for (size_t k = 0; k < u.steps.size() && k < u.step_cost_us.size(); ++k) {
        const uint32_t link = mesh_dim_link_class(mesh, u.steps[k].mesh_dim, gpus_per_node);
        layout.timings.at(u.first_op).gather_link_us[link_class_index(link)] += u.step_cost_us[k];
      }
  }
  const bool every_micro_batch = graph.reduces_every_micro_batch();
  for (const GradientReduction& r : layout.reductions) {
    OpTiming& t = layout.timings.at(r.after_op);
    // ZeRO-2 counted its share of the gather with the update (layout_search_pricing.cpp).
    if (every_micro_batch && r.parameter_gather)
      t.update_us = std::max(0.0, t.update_us - std::accumulate(r.gather_step_cost_us.begin(),
                                                                r.gather_step_cost_us.end(), 0.0));
    t.reduction_us = 0;
    t.reduction_link_us[0] = t.reduction_link_us[1] = 0;
    t.reduction_links = 0;
  }
  for (const GradientBucket& b : layout.buckets) {
    OpTiming& t = layout.timings.at(b.after_op);
    const auto add = [&](const std::vector<BucketStep>& steps, const std::vector<double>& us) {
      for (size_t k = 0; k < steps.size() && k < us.size(); ++k) {
        const uint32_t link = mesh_dim_link_class(mesh, steps[k].mesh_dim, gpus_per_node);
        t.reduction_us += us[k];
        t.reduction_link_us[link_class_index(link)] += us[k];
        t.reduction_links |= link;
      }
    };
    add(b.steps, b.step_cost_us);
    if (every_micro_batch)
      t.update_us += b.gather_us();
    else
      add(b.gather_steps, b.gather_step_cost_us);
  }
}

}  // namespace symmesh::strategies
