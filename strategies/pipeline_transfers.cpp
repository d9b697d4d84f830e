#include "strategies/pipeline_transfers.hpp"

#include <algorithm>
#include <map>
#include <utility>

#include "strategies/step_memory.hpp"

namespace symmesh::strategies {

std::vector<StageTransfer> stage_transfers(const DataflowGraph& graph,
                                           const std::vector<Placements>& placements,
                                           const DeviceMesh& stage_mesh) {
  std::vector<StageTransfer> out;
  if (graph.stages <= 1) return out;
  for (TensorId id = 0; id < static_cast<TensorId>(graph.tensors.size()); ++id) {
    const GraphTensor& t = graph.tensors[id];
    if (t.producer < 0) continue;  // inputs, parameters and seeds are where they are read
    const GraphOp& producer = graph.ops[t.producer];
    // The first reader on each other stage (consumers are in op order).
    std::map<int, int> first_on_stage;
    for (int c : t.consumers)
      if (graph.ops[c].stage != producer.stage) first_on_stage.emplace(graph.ops[c].stage, c);
    for (const auto& [stage, reader] : first_on_stage) {
      StageTransfer x;
      x.tensor = id;
      x.from_stage = producer.stage;
      x.to_stage = stage;
      x.producer = t.producer;
      x.first_reader = reader;
      x.to_chunk = graph.ops[reader].chunk;
      x.bytes = local_bytes(t.shape, t.dtype, placements.at(id), stage_mesh);
      x.sent_in_forward = producer.pass == Pass::forward;
      x.read_in_forward = graph.ops[reader].pass == Pass::forward;
      out.push_back(x);
    }
  }
  std::stable_sort(out.begin(), out.end(), [](const StageTransfer& a, const StageTransfer& b) {
    return std::make_pair(a.producer, a.first_reader) < std::make_pair(b.producer, b.first_reader);
  });
  return out;
}

}  // namespace symmesh::strategies
