// Korthikanti et al.'s activation count, generalised (transformer_memory.hpp).
#include "core/transformer_memory.hpp"

#include "core/errors.hpp"

namespace symmesh {

std::string to_string(Recompute recompute) {
  switch (recompute) {
    case Recompute::none:
      return "none";
    case Recompute::selective:
      return "selective";
    case Recompute::full:
      return "full";
  }
  return "none";
}

double layer_activation_bytes(const TransformerSpec& spec, const ActivationSharding& sharding) {
  const int t = sharding.tensor_parallel;
  if (t < 1)
    throw InvalidArgument("tensor_parallel must be >= 1, got " + std::to_string(t),
                          "layer_activation_bytes");
  const double element = static_cast<double>(element_size_bytes(spec.dtype));
  const double mask = 1.0;  // a dropout mask: one byte per element
  const double sbh = static_cast<double>(spec.seq) * spec.micro_batch * spec.hidden;
  const double sbf = static_cast<double>(spec.seq) * spec.micro_batch * spec.ffn;
  const double sbq = static_cast<double>(spec.seq) * spec.micro_batch * spec.q_width();
  const double sbkv = static_cast<double>(spec.seq) * spec.micro_batch * spec.kv_width();
  const double as2b = static_cast<double>(spec.heads) * spec.seq * spec.seq * spec.micro_batch;

  // What tensor parallelism leaves whole on every rank: split only by sequence parallelism.
  double replicated = element * 4 * sbh + (spec.dropout ? mask * 2 * sbh : 0.0);
  // The attention core's s² tensors, which selective recomputation drops.
  double core = element * as2b + (spec.dropout ? (mask + element) * as2b : 0.0);
  // The rest of what the heads and the MLP columns split.
  const double mlp = (spec.activation == MlpActivation::swiglu ? 3 : 2) * sbf;
  double split = element * (sbq + 2 * sbkv + sbq + mlp);

  const double sp = sharding.sequence_parallel ? t : 1;
  switch (sharding.recompute) {
    case Recompute::full:
      return element * sbh / sp;
    case Recompute::selective:
      core = 0;
      break;
    case Recompute::none:
      break;
  }
  return replicated / sp + (split + core) / t;
}

}  // namespace symmesh
