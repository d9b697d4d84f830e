// The parameter count and model FLOPs of a decoder-only transformer (transformer_spec.hpp).
#include "core/transformer_spec.hpp"

#include "core/errors.hpp"
#include "core/transformer_layer.hpp"

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
  // Bounds that keep every count below in 64 bits (real models are far inside them).
  const auto at_most = [&](int64_t value, int64_t limit, const char* field) {
    if (value > limit)
      throw InvalidArgument(std::string(field) + " " + std::to_string(value) + " is more than " +
                                std::to_string(limit) + ", beyond any model symmesh can count",
                            where + "." + field);
  };
  // Layers: each is generated as text and read like a file (scenario/model_expansion.hpp);
  // 512 keep that near half a second, and real models have a few hundred at most.
  at_most(layers, 512, "layers");
  at_most(hidden, 1 << 20, "hidden");
  at_most(heads, 1 << 16, "heads");
  at_most(kv_heads, 1 << 16, "kv_heads");
  at_most(head_dim, 1 << 16, "head_dim");  // after hidden and heads, whose ratio it may be
  at_most(ffn, int64_t{1} << 24, "ffn");
  at_most(vocab, int64_t{1} << 24, "vocab");
  at_most(seq, int64_t{1} << 26, "seq");
  at_most(micro_batch, 1 << 20, "micro_batch");
  if (static_cast<long double>(layers) *
          (3.0L * hidden * (heads + 2.0L * kv_heads) * head_dim + 3.0L * hidden * ffn) >
      static_cast<long double>(int64_t{1} << 62))
    throw InvalidArgument("the model has more than 2^62 parameters", where + ".layers");
  if (heads % kv_heads != 0)
    throw InvalidArgument("kv_heads " + std::to_string(kv_heads) + " does not divide heads " +
                              std::to_string(heads) +
                              " (grouped-query attention shares each key/value head among "
                              "heads / kv_heads query heads)",
                          where + ".kv_heads");
}

int64_t TransformerSpec::layer_parameters() const {
  int64_t out = 0;
  for (const LayerOp& op : transformer_layer_ops(*this))
    for (const LayerParameter& parameter : op.parameters) out += parameter.elements();
  return out;
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

std::vector<int64_t> chunk_layer_counts(int64_t layers, int chunks) {
  if (chunks < 1 || layers < chunks)
    throw InvalidArgument(
        std::to_string(layers) + " layers cannot fill " + std::to_string(chunks) + " model chunks",
        "model layers");
  const int64_t base = layers / chunks;
  const int64_t extra = layers % chunks;
  std::vector<int64_t> out(static_cast<size_t>(chunks), base);
  // The one-more layers go to chunks 1..extra: the first chunk (which also embeds) and,
  // unless all but one need one more, the last (which also computes the logits) keep fewer.
  for (int64_t c = 1; c <= extra; ++c) ++out[static_cast<size_t>(c)];
  return out;
}

}  // namespace symmesh
