// The closed forms of core/transformer_spec.hpp against what the models' publishers state.
#include "core/transformer_spec.hpp"

#include <gtest/gtest.h>

#include "core/errors.hpp"

namespace symmesh {
namespace {

// Llama 3.1 (scenarios/models/*.json; The Llama 3 Herd of Models, arXiv:2407.21783,
// Table 3).
TransformerSpec llama(int layers, int64_t hidden, int heads, int64_t ffn) {
  TransformerSpec s;
  s.layers = layers;
  s.hidden = hidden;
  s.heads = heads;
  s.kv_heads = 8;
  s.head_dim = hidden / heads;  // 128 for all three
  s.ffn = ffn;
  s.vocab = 128256;
  s.seq = 8192;
  return s;
}

TEST(TransformerSpec, ParameterCountsAreTheModelCards) {
  // Hand count for 8B: per layer W_q 4096² = 16,777,216; W_k, W_v 4096 x 1024 each
  // = 8,388,608; W_o 16,777,216; the MLP 3 x 4096 x 14336 = 176,160,768; two norms 8,192:
  // 218,112,000, x 32 = 6,979,584,000; embedding and output 2 x 128256 x 4096 =
  // 1,050,673,152; final norm 4,096. Total 8,030,261,248 — the model card's "8.03B", and
  // the bf16 checkpoint's 16,060,522,496 bytes (model.safetensors.index.json total_size).
  EXPECT_EQ(llama(32, 4096, 32, 14336).parameters(), 8'030'261'248);
  // 70B: per layer 67,108,864 + 16,777,216 + 67,108,864 + 704,643,072 + 16,384 =
  // 855,654,400, x 80 = 68,452,352,000; + 2 x 1,050,673,152 + 8,192 = 70,553,706,496
  // ("70.6B").
  EXPECT_EQ(llama(80, 8192, 64, 28672).parameters(), 70'553'706'496);
  // 405B: per layer 268,435,456 + 33,554,432 + 268,435,456 + 2,617,245,696 + 32,768 =
  // 3,187,703,808, x 126 = 401,650,679,808; + 2 x 2,101,346,304 + 16,384 =
  // 405,853,388,800 ("406B").
  EXPECT_EQ(llama(126, 16384, 128, 53248).parameters(), 405'853'388'800);
}

TEST(TransformerSpec, TiedEmbeddingsAndBiasesChangeTheCount) {
  TransformerSpec s = llama(1, 4096, 32, 14336);
  const int64_t untied = s.parameters();
  s.tie_embeddings = true;
  EXPECT_EQ(untied - s.parameters(), 128256 * 4096);  // the output projection is the table
  s.qkv_bias = true;                                  // (32 + 2 x 8) x 128 = 6144 biases
  EXPECT_EQ(s.layer_parameters(), 218'112'000 + 6144);
  s.activation = MlpActivation::gelu;  // two MLP matrices instead of three
  EXPECT_EQ(s.layer_parameters(), 218'112'000 + 6144 - 4096 * 14336);
}

TEST(TransformerSpec, ModelFlopsPerTokenArePalmsDefinition) {
  // PaLM (arXiv:2204.02311, appendix B): 6N + 12 L H Q T, N the parameters but the
  // embedding lookup's. 8B at T = 8192: N = 8,030,261,248 - 525,336,576 = 7,504,924,672,
  // 6N = 45,029,548,032; 12 x 32 x 32 x 128 x 8192 = 12,884,901,888; sum 57,914,449,920.
  EXPECT_DOUBLE_EQ(llama(32, 4096, 32, 14336).model_flops_per_token(), 57'914'449'920.0);
  // Tied: the table still multiplies once, as the output projection.
  TransformerSpec tied = llama(32, 4096, 32, 14336);
  tied.tie_embeddings = true;
  EXPECT_DOUBLE_EQ(tied.model_flops_per_token(), 57'914'449'920.0);
}

TEST(TransformerSpec, ValidateNamesTheField) {
  TransformerSpec s = llama(2, 4096, 32, 14336);
  EXPECT_NO_THROW(s.validate("model"));
  s.kv_heads = 5;
  try {
    s.validate("model");
    FAIL() << "kv_heads 5 of 32 heads accepted";
  } catch (const InvalidArgument& e) {
    EXPECT_EQ(e.where(), "model.kv_heads");
    EXPECT_NE(e.message().find("does not divide heads 32"), std::string::npos) << e.message();
  }
  s.kv_heads = 8;
  s.seq = 0;
  try {
    s.validate("model");
    FAIL() << "seq 0 accepted";
  } catch (const InvalidArgument& e) {
    EXPECT_EQ(e.where(), "model.seq");
  }
}

TEST(ChunkLayerCounts, ChunksTakeTheirLayersAsLlama3Did) {
  // Llama 3 405B: 126 layers on 16 stages, the first and last with 7 (Llama 3 paper, §3.3.2).
  const auto llama = chunk_layer_counts(126, 16);
  EXPECT_EQ(llama.front(), 7);
  EXPECT_EQ(llama.back(), 7);
  for (size_t c = 1; c + 1 < llama.size(); ++c) EXPECT_EQ(llama[c], 8);
  // On 64 chunks (16 stages x 4): 62 of 2 layers and the two ends of 1.
  const auto interleaved = chunk_layer_counts(126, 64);
  EXPECT_EQ(interleaved.front() + interleaved.back(), 2);
  EXPECT_EQ(interleaved[1], 2);
  EXPECT_EQ(interleaved[62], 2);
  EXPECT_EQ(chunk_layer_counts(80, 4), (std::vector<int64_t>{20, 20, 20, 20}));
  EXPECT_EQ(chunk_layer_counts(80, 3), (std::vector<int64_t>{26, 27, 27}));
  EXPECT_THROW(chunk_layer_counts(3, 4), InvalidArgument);
}

}  // namespace
}  // namespace symmesh
