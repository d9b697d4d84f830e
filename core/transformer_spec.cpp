// The parameter count and model FLOPs of a decoder-only transformer (transformer_spec.hpp).
#include "core/transformer_spec.hpp"

#include "core/errors.hpp"

namespace symmesh {

std::string to_string(MlpActivation activation) {
  return activation == MlpActivation::swiglu ? "swiglu" : "gelu";
}

void TransformerSpec::validate(const std::string& where) const {
  const auto positive = [&](int64_t value, const char* field) {
    if (value < 1)
      throw InvalidArgument(std::string(field) + " must be >= 1, got " + std::to_string(value),
                            where + "." + field);
  };
  positive(layers, "layers");
  positive(hidden, "hidden");
  positive(heads, "heads");
  positive(kv_heads, "kv_heads");
  positive(head_dim, "head_dim");
  positive(ffn, "ffn");
  positive(vocab, "vocab");
  positive(seq, "seq");
  positive(micro_batch, "micro_batch");
  if (heads % kv_heads != 0)
    throw InvalidArgument("kv_heads " + std::to_string(kv_heads) + " does not divide heads " +
                              std::to_string(heads) +
                              " (grouped-query attention shares each key/value head among "
                              "heads / kv_heads query heads)",
                          where + ".kv_heads");
}

int64_t TransformerSpec::layer_parameters() const {
  const int64_t attention = hidden * qkv_width() + q_width() * hidden;
  const int64_t mlp = mlp_matrices() * hidden * ffn;
  const int64_t norms = 2 * hidden;
  return attention + mlp + norms + (qkv_bias ? qkv_width() : 0);
}

int64_t TransformerSpec::parameters() const {
  return layers * layer_parameters() + embedding_parameters() + hidden + output_parameters();
}

double TransformerSpec::model_flops_per_token() const {
  // The output projection multiplies even when tied to the embedding table.
  const double multiplying =
      static_cast<double>(parameters() - embedding_parameters()) +
      (tie_embeddings ? static_cast<double>(vocab) * static_cast<double>(hidden) : 0.0);
  return 6.0 * multiplying + 12.0 * layers * static_cast<double>(q_width()) * seq;
}

}  // namespace symmesh
