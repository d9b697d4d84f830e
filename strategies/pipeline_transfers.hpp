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
#include <string>
#include <vector>

#include "core/device_mesh.hpp"
#include "core/placement.hpp"
#include "core/program.hpp"
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

// A tensor sent between pipeline stages (a StageTransfer) as the lowering reads it: made by
// planned op `after_op` (strategies/workload_lowering.hpp) and sent at the end of that op's
// task (the forward or backward of a micro-batch); waited for before the receiving stage's
// task of the same direction as its first reader's (read_in_forward) and chunk (to_chunk).
struct PlannedTransfer {
  std::string tensor;
  int from_stage = 0;
  int to_stage = 0;
  size_t after_op = 0;
  int to_chunk = 0;   // the receiving task's model chunk (virtual stages)
  int64_t bytes = 0;  // per rank
  bool sent_in_forward = true;
  bool read_in_forward = true;
};

// The transfers of a pipelined step in a Program (stage s owns world ranks s·stage_size …):
// on every stage-mesh rank a pair group [sender, receiver] with a symmetric buffer of one
// slot per micro-batch. Each kind signals on its own index — made and read in the forward
// (0), made in the forward and first read by the receiver's backward (1), made and read in
// the backward (2; with virtual stages a pair carries forward sends one way and backward
// sends the other) — so that on each pair and index the waits consume signals in the order
// they were sent: both stages run their forwards (and their backwards) in the same
// (micro-batch, chunk) order.
class TransferLowering {
 public:
  TransferLowering(Program& program, const std::vector<PlannedTransfer>& transfers, int stage_size,
                   int64_t micro_batches);
  // Transfer x of `micro_batch` from every rank of its stage, on the "send" stream after
  // what the "main" stream holds so far.
  void send(size_t x, int64_t micro_batch);
  // Every rank of the receiving stage waits for it on its "main" stream.
  void receive(size_t x);

 private:
  struct Pairs {
    std::vector<SymmetricHandle> slots;  // by stage-mesh rank
    std::vector<BufferRef> source;
    int signal = 0;
  };
  Program& program_;
  const std::vector<PlannedTransfer>& transfers_;
  int stage_size_;
  std::vector<Pairs> pairs_;
};

}  // namespace symmesh::strategies
