#include "strategies/step_memory.hpp"

#include <algorithm>

#include "core/optimizer_step.hpp"
#include "core/roofline.hpp"
#include "core/tensor_spec.hpp"
#include "core/text.hpp"
#include "strategies/pipeline_schedule.hpp"

namespace symmesh::strategies {

int64_t local_bytes(const Shape& shape, DType dtype, const Placements& placements,
                    const DeviceMesh& mesh) {
  return max_local_bytes(TensorSpec{shape, dtype, placements}, mesh);
}

Placements optimizer_state_placements(const DataflowGraph& graph, TensorId parameter,
                                      const Placements& placements, const DeviceMesh& mesh) {
  if (!graph.training || graph.zero_stage < 1) return placements;
  const Shape& shape = graph.tensors.at(parameter).shape;
  // The largest dim no mesh dim shards yet: sharding a dim the tensor-parallel dim already
  // splits would nest the shards, and bringing the gradient there would first gather it
  // whole over tp (Megatron's distributed optimizer shards each rank's own local buffer).
  const auto sharded = [&](int dim) {
    return std::any_of(placements.begin(), placements.end(),
                       [&](const Placement& p) { return p.is_shard() && p.shard_dim() == dim; });
  };
  int largest = -1;
  for (int d = 0; d < static_cast<int>(shape.size()); ++d)
    if (!sharded(d) && (largest < 0 || shape[d] > shape[largest])) largest = d;
  if (largest < 0)  // every dim is sharded already: the largest
    for (int d = 0; d < static_cast<int>(shape.size()); ++d)
      if (largest < 0 || shape[d] > shape[largest]) largest = d;
  Placements out = placements;
  for (int d = 0; d < mesh.ndim(); ++d)
    if (out[d].is_replicate() && mesh.shape()[d] > 1) out[d] = Placement::shard(largest);
  return out;
}

ParameterBytes parameter_bytes(const DataflowGraph& graph, TensorId parameter,
                               const Placements& placements, const DeviceMesh& mesh) {
  const GraphTensor& t = graph.tensors.at(parameter);
  ParameterBytes out;
  out.weights = local_bytes(t.shape, t.dtype, placements, mesh);
  if (!graph.training) return out;
  const Placements state = optimizer_state_placements(graph, parameter, placements, mesh);
  const int64_t state_shard = local_bytes(t.shape, t.dtype, state, mesh);
  out.gradient = graph.zero_stage >= 2 ? state_shard : out.weights;
  // ZeRO-3 keeps the shard only; each reader gathers it (a transient of the reader's).
  if (graph.zero_stage >= 3) out.weights = state_shard;
  if (graph.optimizer == Optimizer::adam)
    out.optimizer = static_cast<int64_t>(kAdamStateBytesPerElement) *
                    (state_shard / element_size_bytes(t.dtype));
  return out;
}

int64_t optimizer_update_bytes(const DataflowGraph& graph, TensorId parameter,
                               const Placements& placements, const DeviceMesh& mesh) {
  if (!graph.training) return 0;
  const GraphTensor& t = graph.tensors.at(parameter);
  const Placements state = optimizer_state_placements(graph, parameter, placements, mesh);
  const auto element = static_cast<double>(element_size_bytes(t.dtype));
  const auto elements = static_cast<double>(local_bytes(t.shape, t.dtype, state, mesh)) / element;
  const double per_element = graph.optimizer == Optimizer::adam
                                 ? adam_update_bytes_per_element(element, element)
                                 : sgd_update_bytes_per_element(element, element);
  return static_cast<int64_t>(elements * per_element);
}

int optimizer_update_kernels(Optimizer optimizer) {
  return optimizer == Optimizer::adam ? kAdamUpdateKernels : kSgdUpdateKernels;
}

double optimizer_update_s(const DataflowGraph& graph, TensorId parameter,
                          const Placements& placements, const DeviceMesh& mesh,
                          const GpuSpec& gpu) {
  const int64_t bytes = optimizer_update_bytes(graph, parameter, placements, mesh);
  if (bytes == 0) return 0;
  return roofline::hbm_time_s(gpu, static_cast<double>(bytes)) +
         optimizer_update_kernels(graph.optimizer) * roofline::launch_overhead_s(gpu);
}

int64_t parameter_static_bytes(const DataflowGraph& graph, TensorId parameter,
                               const Placements& placements, const DeviceMesh& mesh) {
  return parameter_bytes(graph, parameter, placements, mesh).total();
}

int first_backward_op(const DataflowGraph& graph, int stage) {
  const int ops = static_cast<int>(graph.ops.size());
  for (int i = 0; i < ops; ++i)
    if (graph.ops[i].pass != Pass::forward && (stage < 0 || graph.ops[i].stage == stage)) return i;
  return ops;
}

std::vector<Lifetime> tensor_lifetimes(const DataflowGraph& graph, int stage) {
  const int ops = static_cast<int>(graph.ops.size());
  const auto on_stage = [&](int op) { return stage < 0 || graph.ops[op].stage == stage; };
  // A forward output of a training step is read by the loss, which ends the forward.
  const int first_backward = first_backward_op(graph, stage);
  std::vector<Lifetime> out(graph.tensors.size());
  for (size_t id = 0; id < graph.tensors.size(); ++id) {
    const GraphTensor& t = graph.tensors[id];
    if (t.kind == GraphTensor::Kind::parameter || t.is_parameter_gradient) continue;
    // The ops of the stage that touch it: its producer, then its readers.
    std::vector<int> touching;
    if (t.producer >= 0 && on_stage(t.producer)) touching.push_back(t.producer);
    for (int c : t.consumers)
      if (on_stage(c)) touching.push_back(c);
    if (stage >= 0 && touching.empty()) continue;  // not held by this stage
    Lifetime& life = out[id];
    // Made here: from its producer. A loss gradient (seed): from its first reader. A step
    // input: from the start (the whole graph) or its first reader on the stage, as a copy
    // received from another stage is.
    if (t.producer >= 0 && on_stage(t.producer))
      life.birth = t.producer;
    else if (t.kind == GraphTensor::Kind::seed || stage >= 0)
      life.birth = !touching.empty() ? touching.front() : stage < 0 ? 0 : -1;
    else
      life.birth = 0;
    if (life.birth < 0) continue;  // a seed nobody reads
    const bool read_here = touching.size() > (t.producer >= 0 && on_stage(t.producer) ? 1u : 0u);
    life.death = t.consumers.empty() ? ops : read_here ? touching.back() + 1 : life.birth + 1;
    if (graph.training && t.kind == GraphTensor::Kind::activation && t.consumers.empty())
      life.death = std::max(life.birth + 1, first_backward);
  }
  return out;
}

MicroBatchesInFlight MicroBatchesInFlight::of_stage(const DataflowGraph& graph, int stage) {
  if (graph.stages <= 1) return {};
  return {chunks_in_flight(graph.stages, graph.micro_batches, graph.virtual_stages, stage),
          graph.virtual_stages};
}

std::vector<HeldTensor> held_tensors(const DataflowGraph& graph, int stage) {
  const int first_backward = first_backward_op(graph, stage);
  const MicroBatchesInFlight in_flight =
      stage < 0 ? MicroBatchesInFlight{} : MicroBatchesInFlight::of_stage(graph, stage);
  std::vector<HeldTensor> out;
  for (const Lifetime& life : tensor_lifetimes(graph, stage)) {
    const bool kept = life.birth >= 0 && life.birth < first_backward && life.death > first_backward;
    out.push_back({life, kept ? in_flight : MicroBatchesInFlight{}});
  }
  return out;
}

namespace {

// The memory of the ranks of `stage` (-1: the whole graph, one stage).
StepMemory memory_of_stage(const DataflowGraph& graph, const std::vector<Placements>& placements,
                           const std::vector<int64_t>& transient_bytes, const DeviceMesh& mesh,
                           int stage) {
  StepMemory out;
  out.zero_stage = graph.training ? graph.zero_stage : 0;
  out.stage = stage < 0 ? 0 : stage;
  const int ops = static_cast<int>(graph.ops.size());
  const auto on_stage = [&](int op) { return stage < 0 || graph.ops[op].stage == stage; };
  const std::vector<HeldTensor> held = held_tensors(graph, stage);
  // Live bytes over the schedule as a difference array: +bytes at birth, -bytes at death.
  // Parameter gradients live in the static gradient buffers instead.
  std::vector<int64_t> delta(ops + 1, 0);
  for (TensorId id = 0; id < static_cast<TensorId>(graph.tensors.size()); ++id) {
    const GraphTensor& t = graph.tensors[id];
    if (t.kind == GraphTensor::Kind::parameter) {
      if (stage >= 0 && (t.consumers.empty() || !on_stage(t.consumers.front()))) continue;
      const ParameterBytes bytes = parameter_bytes(graph, id, placements.at(id), mesh);
      out.parameters_bytes += bytes.weights;
      out.gradients_bytes += bytes.gradient;
      out.optimizer_bytes += bytes.optimizer;
      continue;
    }
    const Lifetime& life = held[id].life;
    if (life.birth < 0) continue;
    const int64_t bytes =
        held[id].weight.of(local_bytes(t.shape, t.dtype, placements.at(id), mesh));
    delta[life.birth] += bytes;
    delta[std::min(life.death, ops)] -= bytes;
  }
  int64_t live = 0;
  int64_t best = -1;
  for (int i = 0; i < ops; ++i) {
    live += delta[i];
    if (!on_stage(i)) continue;
    const int64_t transient = i < static_cast<int>(transient_bytes.size()) ? transient_bytes[i] : 0;
    if (live + transient > best) {
      best = live + transient;
      out.activations_bytes = live;
      out.transient_bytes = transient;
      out.peak_op = i;
    }
  }
  return out;
}

}  // namespace

std::vector<StepMemory> stage_memories(const DataflowGraph& graph,
                                       const std::vector<Placements>& placements,
                                       const std::vector<int64_t>& transient_bytes,
                                       const DeviceMesh& mesh) {
  if (graph.stages <= 1) return {memory_of_stage(graph, placements, transient_bytes, mesh, -1)};
  std::vector<StepMemory> out;
  for (int s = 0; s < graph.stages; ++s)
    out.push_back(memory_of_stage(graph, placements, transient_bytes, mesh, s));
  return out;
}

const StepMemory& busiest_stage(const std::vector<StepMemory>& stages) {
  return *std::max_element(
      stages.begin(), stages.end(),
      [](const StepMemory& a, const StepMemory& b) { return a.peak_bytes() < b.peak_bytes(); });
}

StepMemory step_memory(const DataflowGraph& graph, const std::vector<Placements>& placements,
                       const std::vector<int64_t>& transient_bytes, const DeviceMesh& mesh) {
  return busiest_stage(stage_memories(graph, placements, transient_bytes, mesh));
}

std::string memory_breakdown_text(const StepMemory& m) {
  std::string out = "parameters " + format_bytes(m.parameters_bytes);
  if (m.gradients_bytes) out += ", gradients " + format_bytes(m.gradients_bytes);
  if (m.optimizer_bytes)
    out += ", optimizer state " + format_bytes(m.optimizer_bytes) +
           (m.zero_stage ? " (ZeRO-" + std::to_string(m.zero_stage) + ")" : "");
  out += ", activations " + format_bytes(m.activations_bytes);
  out += ", transient " + format_bytes(m.transient_bytes);
  return out;
}

}  // namespace symmesh::strategies
