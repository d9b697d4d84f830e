// Korthikanti et al.'s activation count, generalised (transformer_memory.hpp): the sum of
// what the layer's ops save (core/transformer_layer.hpp).
#include "core/transformer_memory.hpp"

#include "core/errors.hpp"
#include "core/transformer_layer.hpp"

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

namespace {

// The bytes of `spec.micro_batch` sequences' saved tensors of the roles `kept` says, summed
// apart by how tensor parallelism splits them: by tokens (only under sequence parallelism)
// or by columns. Each sum is of whole bytes, so it is exact in any order.
struct SavedBytes {
  double by_tokens = 0;
  double by_columns = 0;
};

template <typename Kept>
SavedBytes saved_bytes(const TransformerSpec& spec, Kept kept) {
  const double tokens = static_cast<double>(spec.seq) * spec.micro_batch;
  const double element = static_cast<double>(element_size_bytes(spec.dtype));
  SavedBytes out;
  for (const LayerOp& op : transformer_layer_ops(spec))
    for (const SavedTensor& tensor : op.saves) {
      if (!kept(tensor.role)) continue;
      const double bytes = tensor.bytes_per_element == 0
                               ? element
                               : static_cast<double>(tensor.bytes_per_element);
      (tensor.split == TpSplit::tokens ? out.by_tokens : out.by_columns) +=
          bytes * tokens * static_cast<double>(tensor.elements_per_token);
    }
  return out;
}

}  // namespace

double layer_activation_bytes(const TransformerSpec& spec, const ActivationSharding& sharding) {
  const int t = sharding.tensor_parallel;
  if (t < 1)
    throw InvalidArgument("tensor_parallel must be >= 1, got " + std::to_string(t),
                          "layer_activation_bytes");
  const Recompute recompute = sharding.recompute;
  const SavedBytes kept = saved_bytes(spec, [recompute](SavedRole role) {
    switch (role) {
      case SavedRole::layer_input:
        return true;
      case SavedRole::activation:
        return recompute != Recompute::full;
      case SavedRole::attention_core:
        return recompute == Recompute::none;
      case SavedRole::flash_statistics:
        return false;  // not in Korthikanti et al.'s count: see flash_statistics_bytes
    }
    return false;
  });
  const double sp = sharding.sequence_parallel ? t : 1;
  return kept.by_tokens / sp + kept.by_columns / t;
}

double flash_statistics_bytes(const TransformerSpec& spec, int tensor_parallel) {
  if (tensor_parallel < 1)
    throw InvalidArgument("tensor_parallel must be >= 1, got " + std::to_string(tensor_parallel),
                          "flash_statistics_bytes");
  const SavedBytes kept =
      saved_bytes(spec, [](SavedRole role) { return role == SavedRole::flash_statistics; });
  return kept.by_columns / tensor_parallel;
}

}  // namespace symmesh
