#pragma once
// The activations one transformer layer keeps for its backward, per micro-batch, as
// Korthikanti et al. count them ("Reducing Activation Recomputation in Large Transformer
// Models", MLSys 2023, arXiv:2205.05198, §4), generalised from their GPT (multi-head
// attention, a 4h GELU MLP, dropout) to grouped-query attention, any FFN width and
// SwiGLU. Every tensor a layer's backward reads is counted once, in the layer's dtype
// (their 2 bytes), a dropout mask in 1 byte. The tensors are what the layer's ops save
// (core/transformer_layer.hpp, each op's `saves`); this sums them:
//
//   tensor kept                              elements            sharded by TP   by SP
//   norm inputs (attention, MLP)             2 · sbh             no              yes
//   QKV input, MLP input (norm outputs)      2 · sbh             no              yes
//   Q; K and V                               sbq; 2 · sbk        yes             —
//   attention output (W_o's input)           sbq                 yes             —
//   softmax output                           a · s² · b          yes             —
//   [dropout] masks after attention, MLP     2 · sbh (1 B)       no              yes
//   [dropout] attention-probability mask     a · s² · b (1 B)    yes             —
//   [dropout] dropped-out probabilities      a · s² · b          yes             —
//   GELU: its input and W_down's input       2 · sbf             yes             —
//   SwiGLU: gate and up outputs, W_down's    3 · sbf             yes             —
//
// (s tokens per sequence, b sequences, h hidden, a heads, q = a · head_dim, k = kv_heads
// · head_dim, f FFN width.) For their GPT (q = k = h, f = 4h, dropout, 2-byte elements)
// this gives each row of their Table 2: no parallelism sbh · (34 + 5as/h) bytes; tensor
// parallelism t, sbh · (10 + 24/t + 5as/(ht)); with sequence parallelism too,
// sbh/t · (34 + 5as/h). Selective recomputation drops the attention core's s² terms (they
// are recomputed in the backward; FlashAttention keeps none of them either): sbh · (10 +
// 24/t), and 34 · sbh/t with sequence parallelism. Full recomputation keeps only each
// layer's input, 2sbh (2sbh/t when sequence parallelism leaves it split), and reruns the
// layer's forward in the backward.
#include <cstdint>
#include <string>

#include "core/transformer_spec.hpp"

namespace symmesh {

enum class Recompute {
  none,       // keep everything above
  selective,  // recompute the attention core (softmax and its dropout) in the backward
  full,       // keep each layer's input only; rerun the layer's forward in the backward
};
std::string to_string(Recompute recompute);

struct ActivationSharding {
  int tensor_parallel = 1;         // t: ranks sharing each layer's matmuls
  bool sequence_parallel = false;  // norms and dropouts split over t by tokens too
  Recompute recompute = Recompute::none;
};

// Bytes one layer keeps on one tensor-parallel rank for one micro-batch of
// spec.micro_batch sequences of spec.seq tokens. Throws InvalidArgument when t < 1.
double layer_activation_bytes(const TransformerSpec& spec, const ActivationSharding& sharding);

// What FlashAttention keeps of the attention core instead of its s x s tensors: the fp32
// log-sum-exp of each head and token, on one of `tensor_parallel` ranks (which split the
// heads), for the same micro-batch. Not in the count above (Korthikanti et al. keep the
// softmax itself); the closed form adds it to the selective count. Throws as above.
double flash_statistics_bytes(const TransformerSpec& spec, int tensor_parallel);

}  // namespace symmesh
