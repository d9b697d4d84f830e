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

TransferLowering::TransferLowering(Program& program, const std::vector<PlannedTransfer>& transfers,
                                   int stage_size, int64_t micro_batches)
    : program_(program), transfers_(transfers), stage_size_(stage_size) {
  pairs_.resize(transfers.size());
  for (size_t x = 0; x < transfers.size(); ++x) {
    const PlannedTransfer& t = transfers[x];
    pairs_[x].signal = !t.sent_in_forward ? 2 : t.read_in_forward ? 0 : 1;
    for (int r = 0; r < stage_size; ++r) {
      const int from = t.from_stage * stage_size + r, to = t.to_stage * stage_size + r;
      const GroupId group = program.add_group({from, to});
      pairs_[x].slots.push_back(program.symm_alloc(group, micro_batches * t.bytes));
      pairs_[x].source.push_back(program.local_alloc(from, t.bytes));
    }
  }
}

void TransferLowering::send(size_t x, int64_t micro_batch) {
  const PlannedTransfer& t = transfers_[x];
  const OpLabel label{
      t.tensor + ".send", OpCategory::comm,
      "stage " + std::to_string(t.from_stage) + " -> " + std::to_string(t.to_stage)};
  for (int r = 0; r < stage_size_; ++r) {
    const int rank = t.from_stage * stage_size_ + r;
    const StreamId main = program_.stream(rank, "main"), sender = program_.stream(rank, "send");
    program_.wait_event(rank, sender, program_.record_event(rank, main, label), label);
    program_.put_signal(rank, sender, pairs_[x].source[r], pairs_[x].slots[r],
                        micro_batch * t.bytes, 1, label, pairs_[x].signal);
  }
}

void TransferLowering::receive(size_t x) {
  const PlannedTransfer& t = transfers_[x];
  const OpLabel label{t.tensor + ".receive", OpCategory::comm,
                      "from stage " + std::to_string(t.from_stage)};
  for (int r = 0; r < stage_size_; ++r) {
    const int rank = t.to_stage * stage_size_ + r;
    program_.wait_signal(rank, program_.stream(rank, "main"), pairs_[x].slots[r], 0, label,
                         pairs_[x].signal);
  }
}

}  // namespace symmesh::strategies
