#pragma once
// A decoder-only transformer as the planner needs it (a scenario's `model:` block, or a
// Hugging Face config.json: scenario/model_reader.hpp) and the closed forms that describe
// it independently of any layout: its parameter count and the model FLOPs per token that
// MFU is defined by. Llama-family shapes: RMSNorm (one weight vector per norm), rotary
// positions (no position table), grouped-query attention, a SwiGLU or GELU MLP, no
// dropout. Sizes are element counts; FLOPs are floating-point operations.
#include <cstdint>
#include <string>
#include <vector>

#include "core/dtype.hpp"

namespace symmesh {

enum class MlpActivation {
  swiglu,  // down(silu(x·W_gate) * (x·W_up)): three weight matrices (Llama, Mistral, Qwen2)
  gelu,    // down(gelu(x·W_up)): two (GPT-2, the Megatron papers' GPT)
};
std::string to_string(MlpActivation activation);

struct TransformerSpec {
  std::string name;      // for reports, e.g. the config file's stem
  int layers = 0;        // num_hidden_layers
  int64_t hidden = 0;    // hidden_size (model dim)
  int heads = 0;         // num_attention_heads
  int kv_heads = 0;      // num_key_value_heads (GQA; = heads for multi-head attention)
  int64_t head_dim = 0;  // per head; Hugging Face's default is hidden / heads
  int64_t ffn = 0;       // intermediate_size
  MlpActivation activation = MlpActivation::swiglu;
  int64_t vocab = 0;            // vocab_size
  bool tie_embeddings = false;  // the output projection reuses the embedding table
  bool qkv_bias = false;        // biases on the q, k and v projections (Qwen2)
  bool dropout = false;         // dropout after attention and MLP (GPT; none in Llama)
  // model.recompute: full — the generated step checkpoints every layer (Megatron-LM's
  // --recompute-granularity full --recompute-method uniform --recompute-num-layers 1): each
  // layer keeps its input, and its backward recomputes its forward first.
  bool full_recompute = false;
  bool recompute_given = false;  // the block said none or full: a sweep keeps it as given
  // The step's shape (Megatron's --seq-length, --micro-batch-size, --global-batch-size):
  // tokens per sequence, sequences per micro-batch on each data-parallel replica, and the
  // sequences of the whole step (0: one micro-batch per replica, dp · micro_batch). The
  // dataflow a scenario generates is one micro-batch on every replica (or, when only
  // global_batch is given, global_batch / dp sequences on each in one pass);
  // strategies/training_step_estimate.hpp prices the global_batch / (dp · micro_batch)
  // micro-batches of the whole step.
  int64_t seq = 0;
  int64_t micro_batch = 1;
  bool micro_batch_given = true;  // false: only global_batch was given
  int64_t global_batch = 0;
  DType dtype = DType::bf16;

  // Throws InvalidArgument naming the field ("model.kv_heads") for what cannot describe a
  // transformer: a count < 1, heads not a multiple of kv_heads, a count beyond the bounds
  // that keep parameter counts in 64 bits (heads, kv_heads, head_dim 2^16; hidden 2^20;
  // ffn, vocab 2^24; seq 2^26; micro_batch 2^20), or more than 512 layers.
  void validate(const std::string& where) const;

  int64_t q_width() const { return heads * head_dim; }      // columns of W_q
  int64_t kv_width() const { return kv_heads * head_dim; }  // columns of W_k (and W_v)
  int64_t qkv_width() const { return q_width() + 2 * kv_width(); }
  int mlp_matrices() const { return activation == MlpActivation::swiglu ? 3 : 2; }

  // Parameters of one layer: W_q, W_k, W_v, W_o, the MLP's matrices, two RMSNorm weights
  // and the q/k/v biases when there are — the sum of its ops' (core/transformer_layer.hpp).
  int64_t layer_parameters() const;
  // The embedding table (vocab × hidden), and the output projection (the same size; 0
  // when tied).
  int64_t embedding_parameters() const { return vocab * hidden; }
  int64_t output_parameters() const { return tie_embeddings ? 0 : vocab * hidden; }
  // Everything: layers, the embedding, the final norm and the output projection — what
  // the model cards state (Llama 3.1 8B: 8.03 B).
  int64_t parameters() const;
  // The model FLOPs of one trained token, as PaLM defines them for MFU (Chowdhery et al.
  // 2022, appendix B) and torchtitan computes them: 6 per parameter that multiplies (all
  // but the embedding lookup) for the forward and backward, plus the attention scores and
  // context, 12 · layers · heads · head_dim · seq — counted as if not causal, as they do.
  // Recomputation is not model work: it does not count.
  double model_flops_per_token() const;
};

// The layers of each of `chunks` model chunks, in model order: the middle chunks take one
// layer more than the first and last when they do not divide evenly (Llama 3 trained its
// 126 layers on 16 stages as 14 × 8 + 2 × 7). Throws InvalidArgument when there are fewer
// layers than chunks.
std::vector<int64_t> chunk_layer_counts(int64_t layers, int chunks);

}  // namespace symmesh
