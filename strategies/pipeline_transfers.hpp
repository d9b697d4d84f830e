#pragma once
// What moves between pipeline stages in a dataflow step (strategies/dataflow_graph.hpp,
// graph.stages > 1): every tensor one stage makes and another reads — in the forward the
// activations a later stage reads, in the backward their gradients coming back. Each rank
// of the making stage sends its own piece (the placements its producer left, Partial
// included: the reader's plan pays any reduction) to the rank at the same stage-mesh
// coordinates of the reading stage, once per micro-batch, with put_signal; that rank waits
// for it with wait_signal before the task (forward or backward of that micro-batch) whose
// ops first read it. This is Megatron-LM's send_forward / send_backward between adjacent
// stages (megatron/core/pipeline_parallel/p2p_communication.py), generalised to any pair.
#include <cstdint>
#include <vector>

#include "core/device_mesh.hpp"
#include "core/placement.hpp"
#include "strategies/dataflow_graph.hpp"

namespace symmesh::strategies {

struct StageTransfer {
  TensorId tensor = -1;
  int from_stage = 0;
  int to_stage = 0;
  int producer = -1;      // graph op after which it is sent
  int first_reader = -1;  // the first graph op on to_stage that reads it
  int to_chunk = 0;       // its model chunk on to_stage (virtual stages)
  int64_t bytes = 0;      // per rank: the largest piece (rank 0's)
  // The sending task is a forward (the tensor is an activation) or a backward (a gradient),
  // and so is the receiving one.
  bool sent_in_forward = true;
  bool read_in_forward = true;
};

// In graph op order of their producers (then readers): the order each pair of stages sends
// and receives them. Empty without stages.
std::vector<StageTransfer> stage_transfers(const DataflowGraph& graph,
                                           const std::vector<Placements>& placements,
                                           const DeviceMesh& stage_mesh);

}  // namespace symmesh::strategies
