#pragma once
// A transformer (core/transformer_spec.hpp) expanded into the version-2 dataflow a user
// could write by hand: the `tensors:` and `workload:` of one training step — embedding,
// every layer's norms, projections, attention, residual adds and MLP, the final norm, the
// output projection and the loss — as YAML text that the loader reads like any file (so
// every check of a hand-written scenario applies) and `symmesh expand` prints.
// docs/scenario-format.md, "Models", says what is generated and what is not.
//
// The mesh names its dims: `pp` (pipeline stages, first when present: the embedding on the
// first stage, the layers split as Megatron-LM splits them, the final norm, output and loss
// on the last; each op says its `stage:`), `dp` (data parallel: each replica takes
// micro_batch sequences) and `tp` (tensor parallel, with Megatron's sequence parallelism:
// the residual stream between layers is split by tokens over tp). The step's tokens are
// dp · micro_batch · seq (or global_batch · seq), rows of the [tokens, hidden] activations.
#include <string>
#include <vector>

#include "core/scenario.hpp"
#include "core/transformer_spec.hpp"

namespace symmesh::scenario {

// The mesh dim names a model scenario may use, and what each means.
inline constexpr const char* kDataParallelDim = "dp";
inline constexpr const char* kTensorParallelDim = "tp";

// The size of the mesh's dp dim (1 when it has none); pp's is core's pipeline_dim_size.
int64_t data_parallel_size(const std::vector<int>& shape, const std::vector<std::string>& names);

// What is wrong with a mesh dim of that name in a model scenario, or "".
std::string model_mesh_dim_problem(const std::string& name);
// Throws InvalidArgument (where `where`) when the mesh cannot carry the model: a dim that
// is not pp, dp or tp (context parallelism is not generated yet), unnamed dims, or a name
// twice.
void check_model_mesh(const std::vector<int>& shape, const std::vector<std::string>& names,
                      const std::string& where);

// The sequences each data-parallel replica takes: spec.micro_batch, or global_batch / dp.
// Throws InvalidArgument (where `where`) when dp does not divide the global batch.
int64_t sequences_per_replica(const TransformerSpec& spec, int64_t dp, const std::string& where);

// Gradient accumulation: the micro-batches each replica runs per step, global_batch / (dp ·
// micro_batch) when both are given (Megatron-LM's meaning), else 1. Throws as
// sequences_per_replica does.
int micro_batches_per_replica(const TransformerSpec& spec, int64_t dp, const std::string& where);

// The YAML of `tensors:` and `workload:` (top-level keys, ready to be appended to a
// version-2 scenario) for `spec` on a mesh of `shape` with `names`, with `virtual_stages`
// model chunks per pipeline stage (training.virtual_stages).
std::string model_dataflow_yaml(const TransformerSpec& spec, const std::vector<int>& shape,
                                const std::vector<std::string>& names, int virtual_stages = 1);

// Fills scenario.tensors and scenario.workload from scenario.model for its mesh, reading
// the generated YAML as the loader reads a file's (its messages name `where`).
void expand_model(Scenario& scenario, const std::string& where);

// A model scenario written out as the version-2 file it stands for (`symmesh expand`):
// version, name, the cluster inline, mesh, dtype, cost model, training, the generated
// tensors and workload, and the objective. The sweep is left out (a comment says so): a
// model's step is generated again for each mesh, a written-out one is not. Loading the
// text gives the same tensors and workload.
std::string expanded_scenario_text(const Scenario& scenario);

}  // namespace symmesh::scenario
