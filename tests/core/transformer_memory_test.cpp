// Korthikanti et al.'s activation memory (arXiv:2205.05198, Table 2), and the generalised
// count of core/transformer_memory.hpp for a Llama layer worked by hand.
#include "core/transformer_memory.hpp"

#include <gtest/gtest.h>

#include "core/errors.hpp"

namespace symmesh {
namespace {

// Their GPT: multi-head attention, a 4h GELU MLP, dropout, 16-bit activations. The sizes
// of their GPT-3 175B row (Table 3): 96 heads, hidden 12288, sequence 2048, one sequence
// per micro-batch.
TransformerSpec gpt3() {
  TransformerSpec s;
  s.layers = 96;
  s.hidden = 12288;
  s.heads = 96;
  s.kv_heads = 96;
  s.head_dim = 128;
  s.ffn = 4 * 12288;
  s.activation = MlpActivation::gelu;
  s.dropout = true;
  s.vocab = 51200;
  s.seq = 2048;
  s.micro_batch = 1;
  return s;
}

TEST(TransformerMemory, ReproducesEveryRowOfKorthikantisTable2) {
  const TransformerSpec s = gpt3();
  const double sbh = 2048.0 * 1 * 12288;
  const double as_h = 96.0 * 2048 / 12288;  // a·s/h = 16
  const double t = 8;
  EXPECT_DOUBLE_EQ(layer_activation_bytes(s, {1, false, Recompute::none}), sbh * (34 + 5 * as_h));
  EXPECT_DOUBLE_EQ(layer_activation_bytes(s, {8, false, Recompute::none}),
                   sbh * (10 + 24 / t + 5 * as_h / t));
  EXPECT_DOUBLE_EQ(layer_activation_bytes(s, {8, true, Recompute::none}),
                   sbh / t * (34 + 5 * as_h));
  EXPECT_DOUBLE_EQ(layer_activation_bytes(s, {8, false, Recompute::selective}),
                   sbh * (10 + 24 / t));
  EXPECT_DOUBLE_EQ(layer_activation_bytes(s, {8, true, Recompute::selective}), sbh * 34 / t);
  EXPECT_DOUBLE_EQ(layer_activation_bytes(s, {8, false, Recompute::full}), sbh * 2);
}

TEST(TransformerMemory, LlamaLayerByHand) {
  // Llama 3.1 70B at s = 8192, b = 1, bf16, no dropout, t = 8 with sequence parallelism:
  //   norm inputs and outputs 4 sbh, split by SP only
  //   Q and W_o's input 2 sbq, K and V 2 sbk (k = 1024):  2 x 67,108,864 + 2 x 8,388,608
  //   SwiGLU 3 sbf (f = 28672):                          3 x 234,881,024
  //   softmax output a s² b = 64 x 8192² = 4,294,967,296
  // (sbh = 8192 x 8192 = 67,108,864). Split by t: (134,217,728 + 16,777,216 + 704,643,072
  // + 4,294,967,296) x 2 B / 8 = 1,287,651,328 B; by SP: 4 x 67,108,864 x 2 B / 8 =
  // 67,108,864 B.
  TransformerSpec s;
  s.layers = 80;
  s.hidden = 8192;
  s.heads = 64;
  s.kv_heads = 8;
  s.head_dim = 128;
  s.ffn = 28672;
  s.vocab = 128256;
  s.seq = 8192;
  EXPECT_DOUBLE_EQ(layer_activation_bytes(s, {8, true, Recompute::none}),
                   1'287'651'328.0 + 67'108'864.0);
  // Selective: the softmax output's 4,294,967,296 x 2 / 8 = 1,073,741,824 B go.
  EXPECT_DOUBLE_EQ(layer_activation_bytes(s, {8, true, Recompute::selective}),
                   1'287'651'328.0 + 67'108'864.0 - 1'073'741'824.0);
  // Full: the layer's input, 67,108,864 x 2 B / 8.
  EXPECT_DOUBLE_EQ(layer_activation_bytes(s, {8, true, Recompute::full}), 16'777'216.0);
}

TEST(TransformerMemory, RefusesNoTensorParallelRanks) {
  EXPECT_THROW(layer_activation_bytes(gpt3(), {0, false, Recompute::none}), InvalidArgument);
}

}  // namespace
}  // namespace symmesh
