#pragma once
// Lowering a Plan into a Program: each redistribution step becomes a core collective over
// every group of its mesh dim (with the re-layouts a row-major local tensor needs: padding
// uneven shards, concatenating or splitting along a non-leading dim), then every rank
// runs its local matmul. The same Program is what the simulator evaluates and what the
// hardware backend executes; with data carried it computes the real result.
//
// Mesh rank r is world rank `first_rank + r`.
#include <string>
#include <vector>

#include "core/program.hpp"
#include "strategies/plan.hpp"

namespace symmesh::strategies {

// A rank's piece of a tensor: contiguous row-major bytes of `shape` in `ref`.
struct LocalTensor {
  BufferRef ref;
  Shape shape;
};

struct LoweringOptions {
  std::string name = "op";      // label of every operation (the workload op's name)
  std::string stream = "main";  // one in-order stream per rank: collectives, then compute
  // The signal index of its collectives; its overlapped matmuls' "<stream>-comm" streams
  // run beside `stream` and use signal + 1 (core/collectives.hpp, `signal`).
  int signal = 0;
  int first_rank = 0;
  // Emulation: initial bytes of every input's GLOBAL tensor (row-major, in the op's
  // dtype, ATen input order). Each rank starts with its torch.chunk piece; a Partial(sum)
  // input is held whole by the ranks at coordinate 0 of its Partial mesh dims and as zeros
  // elsewhere, a Partial(avg) input whole everywhere. A counting Program needs no bytes:
  // carry_data alone makes it count the pieces' initial bytes.
  bool carry_data = false;  // implied by global_inputs
  std::vector<std::vector<unsigned char>> global_inputs;
};

struct LoweredPlan {
  std::vector<LocalTensor> outputs;  // per mesh rank: its output piece
  Placements output_placements;
  Shape output_shape;
};

// Appends the plan's operations to `program` (whose world must contain the mesh).
// Carrying data, every rank's output piece is requested as output "<name>".
LoweredPlan lower_plan(const Plan& plan, Program& program, const LoweringOptions& options);

}  // namespace symmesh::strategies
