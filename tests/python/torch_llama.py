"""A tiny Llama 3 built as torchtitan builds it, for running symmesh's torch plan with real
DTensor (test_torch_plan_dtensor.py, tools/torch_peer/run_torch_plans.py).

It mirrors pytorch/torchtitan, torchtitan/models/llama3/model/model.py (the Llama 3 model
whose Attention.forward and TransformerBlock.forward take (x, freqs_cis); later versions add
attention_masks and positions, which symmesh's plan does not name). What a tensor-parallel
plan depends on is kept as torchtitan has it:

  - the module names: tok_embeddings, layers (an nn.ModuleDict keyed "0", "1", ...),
    layers.N.attention_norm, layers.N.attention.{wq,wk,wv,wo}, layers.N.ffn_norm,
    layers.N.feed_forward.{w1,w2,w3}, norm, output;
  - the forward signatures: Transformer(tokens), TransformerBlock(x, freqs_cis),
    Attention(x, freqs_cis), FeedForward(x);
  - the shapes: nn.Linear weights [out, in] without bias, nn.Embedding [vocab, dim],
    nn.RMSNorm over dim, activations [batch, seq, dim];
  - what the numbers go through: RMSNorm, rotary embeddings as complex products (with Llama
    3.1's frequency scaling), grouped-query attention (n_kv_heads < n_heads, K and V heads
    repeated), causal scaled-dot-product attention, SwiGLU, and the attention reading the
    local head count from its projections' output (view(bs, seqlen, -1, head_dim)), which is
    what lets ColwiseParallel's per-rank shards of wq/wk/wv run it unchanged.

Only the sizes are small (ModelArgs); everything else is written here, not copied.
"""

from dataclasses import dataclass

import torch
import torch.nn.functional as F
from torch import nn


@dataclass
class ModelArgs:
    dim: int = 64
    n_layers: int = 2
    n_heads: int = 8
    n_kv_heads: int = 4
    ffn_hidden: int = 224  # SwiGLU's hidden size (torchtitan's FeedForward hidden_dim)
    vocab_size: int = 256
    norm_eps: float = 1e-5
    rope_theta: float = 500000.0
    max_seq_len: int = 64
    rope_scaling: bool = True  # Llama 3.1's low/high-frequency scaling of the rotary table

    @property
    def head_dim(self):
        return self.dim // self.n_heads


def rope_frequencies(head_dim, theta, scaled):
    """The rotary frequencies of one head: theta^(-2i/head_dim) for each pair of features,
    with Llama 3.1's rescaling (factor 8, low/high-frequency factors 1 and 4, original
    context 8192) when `scaled`, as torchtitan's apply_scaling does."""
    freqs = 1.0 / theta ** (torch.arange(0, head_dim, 2).float() / head_dim)
    if not scaled:
        return freqs
    factor, low, high, original = 8.0, 1.0, 4.0, 8192.0
    wavelength = 2 * torch.pi / freqs
    slow = freqs / factor  # long wavelengths: slowed down by the factor
    blend = (original / wavelength - low) / (high - low)
    mid = (1 - blend) * slow + blend * freqs  # in between: a blend of the two
    out = torch.where(wavelength > original / low, slow, freqs)
    between = (wavelength >= original / high) & (wavelength <= original / low)
    return torch.where(between, mid, out)


def precompute_freqs_cis(head_dim, positions, theta, scaled=True):
    """exp(i * position * frequency) for every position and feature pair: [positions,
    head_dim // 2], complex64 (torchtitan's precompute_freqs_cis)."""
    angles = torch.outer(torch.arange(positions).float(), rope_frequencies(head_dim, theta, scaled))
    return torch.polar(torch.ones_like(angles), angles)


def apply_rotary_emb(xq, xk, freqs_cis):
    """Rotates each (even, odd) feature pair of q and k by its position's angle: q and k
    [bs, seq, heads, head_dim] as complex [bs, seq, heads, head_dim // 2] times
    freqs_cis[:seq] broadcast over batch and heads."""
    seqlen = xq.shape[1]
    q = torch.view_as_complex(xq.float().reshape(*xq.shape[:-1], -1, 2))
    k = torch.view_as_complex(xk.float().reshape(*xk.shape[:-1], -1, 2))
    rot = freqs_cis[:seqlen].view(1, seqlen, 1, q.shape[-1])
    return (torch.view_as_real(q * rot).flatten(3).type_as(xq),
            torch.view_as_real(k * rot).flatten(3).type_as(xk))


def repeat_kv(x, n_rep):
    """[bs, seq, kv_heads, head_dim] -> [bs, seq, kv_heads * n_rep, head_dim], each K/V head
    repeated for the n_rep query heads that share it (grouped-query attention)."""
    if n_rep == 1:
        return x
    bs, seqlen, kv_heads, head_dim = x.shape
    return x[:, :, :, None, :].expand(bs, seqlen, kv_heads, n_rep, head_dim).reshape(
        bs, seqlen, kv_heads * n_rep, head_dim)


class Attention(nn.Module):
    """Grouped-query attention with rotary embeddings: torchtitan's Attention (sdpa)."""

    def __init__(self, args):
        super().__init__()
        self.n_heads, self.n_kv_heads = args.n_heads, args.n_kv_heads
        self.n_rep = args.n_heads // args.n_kv_heads
        self.head_dim = args.head_dim
        self.wq = nn.Linear(args.dim, args.n_heads * self.head_dim, bias=False)
        self.wk = nn.Linear(args.dim, args.n_kv_heads * self.head_dim, bias=False)
        self.wv = nn.Linear(args.dim, args.n_kv_heads * self.head_dim, bias=False)
        self.wo = nn.Linear(args.n_heads * self.head_dim, args.dim, bias=False)

    def forward(self, x, freqs_cis):
        bs, seqlen, _ = x.shape
        # -1, not n_heads: under tensor parallelism each rank holds only its heads.
        xq = self.wq(x).view(bs, seqlen, -1, self.head_dim)
        xk = self.wk(x).view(bs, seqlen, -1, self.head_dim)
        xv = self.wv(x).view(bs, seqlen, -1, self.head_dim)
        xq, xk = apply_rotary_emb(xq, xk, freqs_cis)
        keys, values = repeat_kv(xk, self.n_rep), repeat_kv(xv, self.n_rep)
        out = F.scaled_dot_product_attention(
            xq.transpose(1, 2), keys.transpose(1, 2), values.transpose(1, 2), is_causal=True)
        return self.wo(out.transpose(1, 2).contiguous().view(bs, seqlen, -1))


class FeedForward(nn.Module):
    """SwiGLU: w2(silu(w1 x) * w3 x), torchtitan's FeedForward."""

    def __init__(self, dim, hidden):
        super().__init__()
        self.w1 = nn.Linear(dim, hidden, bias=False)
        self.w2 = nn.Linear(hidden, dim, bias=False)
        self.w3 = nn.Linear(dim, hidden, bias=False)

    def forward(self, x):
        return self.w2(F.silu(self.w1(x)) * self.w3(x))


class TransformerBlock(nn.Module):
    """Pre-norm residual block: h = x + attention(norm(x)); out = h + ffn(norm(h))."""

    def __init__(self, args):
        super().__init__()
        self.attention = Attention(args)
        self.feed_forward = FeedForward(args.dim, args.ffn_hidden)
        self.attention_norm = nn.RMSNorm(args.dim, eps=args.norm_eps)
        self.ffn_norm = nn.RMSNorm(args.dim, eps=args.norm_eps)

    def forward(self, x, freqs_cis):
        h = x + self.attention(self.attention_norm(x), freqs_cis)
        return h + self.feed_forward(self.ffn_norm(h))


class Transformer(nn.Module):
    """tokens [bs, seq] -> logits [bs, seq, vocab]: torchtitan's Transformer."""

    def __init__(self, args):
        super().__init__()
        self.args = args
        self.tok_embeddings = nn.Embedding(args.vocab_size, args.dim)
        # Not persistent and not a parameter: every rank keeps the whole table (the plans
        # pass it through PrepareModuleInput as None).
        self.register_buffer(
            "freqs_cis",
            precompute_freqs_cis(args.head_dim, args.max_seq_len, args.rope_theta,
                                 args.rope_scaling),
            persistent=False)
        self.layers = nn.ModuleDict({str(i): TransformerBlock(args) for i in range(args.n_layers)})
        self.norm = nn.RMSNorm(args.dim, eps=args.norm_eps)
        self.output = nn.Linear(args.dim, args.vocab_size, bias=False)

    def init_weights(self, generator=None):
        """Random weights of torchtitan's scales (normal embeddings, truncated normal
        linears, unit norms perturbed so that their gradients and values matter)."""
        std = 0.02
        out_std = std / (2 * self.args.n_layers) ** 0.5
        with torch.no_grad():
            for name, p in self.named_parameters():
                if name.endswith("norm.weight"):
                    p.copy_(1 + 0.1 * torch.randn(p.shape, generator=generator))
                elif name == "tok_embeddings.weight":
                    p.normal_(generator=generator)
                elif name == "output.weight":
                    s = self.args.dim ** -0.5
                    nn.init.trunc_normal_(p, std=s, a=-3 * s, b=3 * s, generator=generator)
                else:
                    s = out_std if name.endswith(("wo.weight", "w2.weight", "w3.weight")) else std
                    nn.init.trunc_normal_(p, std=s, a=-2.0, b=2.0, generator=generator)

    def forward(self, tokens):
        h = self.tok_embeddings(tokens)
        for layer in self.layers.values():
            h = layer(h, self.freqs_cis)
        return self.output(self.norm(h))


def tiny_args(model, tp, *, head_dim=4, layers=2, vocab=256, seq=16):
    """A tiny copy of a scenario's model (symmesh.load_scenario(...).model: heads, kv_heads,
    hidden, ffn): the same head counts, so the same grouped-query ratio and the same heads per
    tp rank, and the same FFN-to-hidden ratio, but head_dim `head_dim`, `layers` blocks and a
    `vocab`-token vocabulary. Every split a plan makes must come out even on `tp` ranks:
    heads, KV heads, FFN hidden, vocabulary and sequence."""
    n_heads = model["heads"]
    n_kv = model.get("kv_heads", n_heads)
    dim = n_heads * head_dim
    ffn = max(tp, round(dim * model["ffn"] / model["hidden"] / tp) * tp)
    for what, size in (("heads", n_heads), ("kv heads", n_kv), ("ffn hidden", ffn),
                       ("vocab", vocab), ("seq", seq)):
        if size % tp:
            raise ValueError(f"{what} {size} do not split evenly over tp {tp}")
    return ModelArgs(dim=dim, n_layers=layers, n_heads=n_heads, n_kv_heads=n_kv,
                     ffn_hidden=ffn, vocab_size=vocab, max_seq_len=max(seq, 16))
