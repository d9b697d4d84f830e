#pragma once
// A whole scenario workload as one Program: each matrix op is planned with the chosen cost
// model and lowered (strategies/plan_lowering.hpp); a put_signal moves its bytes between
// two ranks; a collective runs the core algorithm on every group of its mesh dim.
//
// Version 1: the file's ops run in order, separated by a barrier of all ranks, so every
// op's time is its own. Version 2 (dataflow): the graph's ops (forward, then the derived
// backward) with the placements the layout search chose (strategies/layout_search.hpp);
// no barrier between ops — an op starts when its inputs have arrived — and each gradient
// reduction runs on the rank's communication stream as soon as its gradient is made, so
// it overlaps the backward compute that does not need it. Then the optimizer step, as
// Megatron-LM runs it once every gradient is reduced: each parameter's update on the main
// stream (OpKind::optimizer_step, "<parameter>.adam", its HBM traffic priced by the
// roofline, strategies/step_memory.hpp), and with ZeRO-1/2 the updated parameter gathered
// on the communication stream after it (ZeRO-3 gathers it before each reader instead,
// PlannedWorkload::every_micro_batch). The step ends when both streams of every rank are
// done. (The layout search counts the updates too, after both streams, so a parameter
// sharded over more GPUs, with fewer elements to update, is cheaper there.) Every op
// is refused when it needs more than the GPU's memory (version 2: the whole step's peak,
// strategies/step_memory.hpp). Backend-neutral: the simulator evaluates it, the hardware backend
// executes it. Planning (plan_workload) is workload_planning.cpp's, lowering this file's
// .cpp.
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "core/program.hpp"
#include "core/scenario.hpp"
#include "strategies/cost_model.hpp"
#include "strategies/layout_search.hpp"
#include "strategies/planned_step_price.hpp"
#include "strategies/pipeline_transfers.hpp"
#include "strategies/plan.hpp"
#include "strategies/plan_lowering.hpp"

namespace symmesh::strategies {

// Turns values into the bytes of a dtype (bf16/fp16 rounding lives with the backend), and
// back.
using ValueEncoder = std::function<std::vector<unsigned char>(const std::vector<double>&, DType)>;
using ValueDecoder = std::function<std::vector<double>(const std::vector<unsigned char>&, DType)>;

struct WorkloadOptions {
  // Emulation: matmul inputs get seeded random values, outputs are requested.
  bool emulate = false;
  ValueEncoder encode;  // required when emulate
  // Version 2 with emulation: values flow through the step. Each op's inputs are its
  // producers' unsharded results (in the dtype: decode(encode(x))), step inputs,
  // parameters and loss gradients are seeded; so each op's sharded output is checked on
  // the values the step really computes. Required when emulating version 2.
  ValueDecoder decode;
  uint64_t seed = 20261130;
  // Emulation refuses ops whose buffers would exceed this many bytes over all ranks.
  int64_t max_emulated_bytes = int64_t{2} << 30;
  // The mesh dim whose replicas are folded into its first (core/replica_folding.hpp: the
  // Program holds their ops only, the simulator reads the others off them); -1 folds
  // nothing. Every replica along a data-parallel dim runs the same ops, so that is the dim
  // to fold. Not with emulation, which computes every rank's values.
  int fold_dim = -1;
};

// The folding of `mesh`'s dim `dim` in a step whose world rank is stage · mesh.size() + the
// mesh rank (row-major), whatever its pipeline stages.
ReplicaFolding replica_folding(const DeviceMesh& mesh, int dim);

// The report row of the micro-batches before the last (gradient accumulation).
inline constexpr const char* kEarlierMicroBatches = "earlier micro-batches";
// The label of op `op` of earlier micro-batch `micro_batch` (0-based, as the schedule counts
// them): "mb 3: l0_qkv", so that a trace names every slice by its micro-batch and op (the
// rank says the stage); the report sums them into its kEarlierMicroBatches row.
std::string earlier_micro_batch_label(int64_t micro_batch, const std::string& op);

// A version-2 matrix op's input: which tensor it reads, and whether as a transposed view.
struct TensorRead {
  std::string tensor;
  bool transposed = false;
};

// Which part of a micro-batch's step an op belongs to: its forward, its backward (with the
// gradient reductions issued in it), or after the last backward (the optimizer updates and
// ZeRO's parameter gathers).
enum class StepPhase { forward, backward, after };

// Every matmul of a workload planned (the cost model's work, done once) and nothing
// lowered yet: a counting lowering sizes it, then the real one builds it.
struct PlannedWorkload {
  DeviceMesh mesh{{1}};
  // What is lowered, in order: the file's ops (version 1); the graph's forward and
  // backward matrix ops with their placements and the gradient reductions, then the
  // optimizer updates and ZeRO's parameter gathers (version 2).
  std::vector<WorkloadOp> ops;
  std::vector<std::optional<Plan>> plans;  // by op: the plan of a matmul
  // By op: a gradient reduction, run on the communication stream after its producer.
  std::vector<bool> on_comm_stream;
  bool dataflow = false;                       // version 2: no barrier between ops
  std::vector<std::vector<TensorRead>> reads;  // version 2, by op: inputs in ATen order
  std::optional<StepLayout> layout;  // version 2: what the search chose, its memory, its stats
  // Version 2: the same step priced through its pipeline schedule
  // (strategies/planned_step_price.hpp), the analytic reading beside the simulated one.
  std::optional<PlannedStepPrice> price;
  std::string peak_op;               // version 2: the matrix op where the step's memory peaks
  // Version 2, gradient accumulation: the graph's ops run this many times; the reductions,
  // the optimizer updates and ZeRO's gathers once, in the last (ZeRO-2 and 3:
  // every_micro_batch).
  int micro_batches = 1;
  // Version 2, pipeline stages (a pp mesh dim): `mesh` is one stage's, stage s owns world
  // ranks s·mesh.size() … (s+1)·mesh.size() − 1, and each runs its ops in Megatron-LM's 1F1B
  // order (strategies/pipeline_schedule.hpp), sending what other stages read.
  int stages = 1;
  int virtual_stages = 1;                  // model chunks per stage: the interleaved schedule
  std::vector<int> stage;                  // by op: the stage that runs it
  std::vector<int> chunk;                  // by op: its model chunk on that stage
  std::vector<StepPhase> phase;            // by op
  std::vector<PlannedTransfer> transfers;  // in the order each pair of stages sends them
  // Version 2, ZeRO: by op, for a parameter's gather (<parameter>.param_<collective>), the
  // planned op that first reads the parameter; -1 for every other op. The gathers run on
  // the comm stream as the step starts and that reader waits for them: Megatron-LM's
  // --overlap-param-gather, which hides the gathers of the weights the last step updated
  // under this step's forward.
  std::vector<int> gather_reader;
  // Version 2, ZeRO-2 and 3: by op, whether it runs in every micro-batch on the comm
  // stream: the gradients' reduce-scatters (DeepSpeed's stage 2 and FSDP reduce each
  // micro-batch's, so no whole gradient is accumulated) and, ZeRO-3, the gathers of the
  // weights each reader reads (gather_reader names the reader, and the lowering prefetches
  // them, strategies/step_streams.hpp); its weights stay sharded between uses, so no gather
  // follows the updates.
  std::vector<bool> every_micro_batch;
  // Version 2, ZeRO-3: by op, a reader's gather unit (gather_unit_of, layout_search.hpp):
  // a unit's gathers wait for the previous unit's first reader to start.
  std::vector<int> gather_unit;
  int world_size() const { return stages * mesh.size(); }
};

struct LoweredOp {
  const WorkloadOp* op = nullptr;
  const Plan* plan = nullptr;  // matmuls (into the workload's PlannedWorkload)
  std::optional<LoweredPlan> lowered;
  int64_t peak_memory_bytes_per_rank = 0;  // what the op allocates on its busiest rank
  int first_rank = 0;  // the world rank of its mesh rank 0 (its pipeline stage's first)
  std::vector<std::vector<double>> global_inputs;  // emulation: the values used
};

struct LoweredWorkload {
  Program program{1};
  DeviceMesh mesh{{1}};
  std::vector<LoweredOp> ops;
  std::shared_ptr<const PlannedWorkload> planned;  // what `ops` point into
  // The labels of the earlier micro-batches' ops (earlier_micro_batch_label), each once,
  // with the pipeline stage whose ranks ran it.
  struct EarlierLabel {
    std::string name;
    int stage = 0;
  };
  std::vector<EarlierLabel> earlier_labels;
};

struct PlanningOptions {
  int beam_width = 256;  // version 2: the layout search's beam
};

// Checks the mesh against the cluster and every matmul against the mesh, and plans every
// matmul with `model` (version 2: builds the dataflow graph and searches its layout).
// Throws InvalidArgument naming the op and its file:line:col, or the scenario when the
// step does not fit in the GPU's memory ("needs 94.2 GiB per GPU (…); H100-SXM has 80.0 GiB").
PlannedWorkload plan_workload(const Scenario& scenario, const CostModel& model,
                              const PlanningOptions& options = {});

// The layout search plan_workload runs on a version-2 scenario's dataflow: the options'
// beam, the GPU's memory and node size, each marked layer planned once, and the GPU's
// optimizer updates priced when `model` prices compute (explainer_of).
LayoutSearchOptions layout_search_options(const Scenario& scenario, const CostModel& model,
                                          const PlanningOptions& options = {});

// The message of a step or op that does not fit: "needs 94.20 GiB per GPU (what);
// H100-SXM has 80.00 GiB".
std::string does_not_fit_text(int64_t need_bytes, const std::string& what,
                              const ClusterSpec& cluster);

// Lowers a planned workload into `program` (of the mesh's size): a counting Program
// (Program::counting) only counts what the lowering appends — with emulation it generates
// no values, only their bytes — and a real one, reserved from that count, holds it. Throws
// InvalidArgument (naming the op and its file:line:col) for an op that does not fit the
// mesh, or one too large to emulate.
LoweredWorkload lower_workload(const Scenario& scenario,
                               std::shared_ptr<const PlannedWorkload> planned,
                               const WorkloadOptions& options, Program program);

// Both steps, into a real Program.
LoweredWorkload lower_workload(const Scenario& scenario, const CostModel& model,
                               const WorkloadOptions& options);

// The OpProblem of a matmul workload op on `mesh`.
OpProblem matmul_problem(const Scenario& scenario, const WorkloadOp& op, const DeviceMesh& mesh);

}  // namespace symmesh::strategies
