"""Which layers of a model do what: attention, a fixed-size state, or an MLP alone.

Hybrid models of 2025-2026 mix layer kinds, and only some of them keep a cache that grows with the
context. From the fields of ``data/models/*.yaml``:

- ``state_layers`` layers mix tokens through a state of fixed size per sequence (``state_kind``):
  Gated DeltaNet (Qwen3-Next, Qwen3.5), Mamba-2 (Nemotron-H, Granite 4.0 H), lightning attention
  (MiniMax-M1) or gated short convolutions (LFM2);
- ``mlp_only_layers`` blocks hold an MLP and no token mixer (Nemotron-H); when a record gives
  them, every block is of one kind, so only those blocks have an MLP;
- the rest are attention layers (full, or sliding-window for ``sliding_window_layers`` of them),
  the only ones whose cache grows with the context.

State values per layer and sequence (``state_values_per_layer``), the recurrent state plus the
last ``conv_kernel - 1`` inputs of the causal convolution, as llama.cpp and vLLM keep them:

- gated-deltanet: heads x key_dim x head_dim + (conv_kernel - 1) x (2 x key_heads x key_dim + heads x head_dim)
- mamba2: heads x head_dim x key_dim (d_state) + (conv_kernel - 1) x (heads x head_dim + 2 x groups x key_dim)
- lightning: heads x head_dim x head_dim (one head_dim x head_dim matrix per head)
- short-conv: (conv_kernel - 1) x hidden_size (conv_kernel is LFM2's conv_L_cache)

kept at ``STATE_BYTES`` (4: fp32) per value whatever the KV precision. A decode step reads the
state and writes it back. Sparse attention (DeepSeek Sparse Attention: ``index_topk``,
``index_heads``, ``index_head_dim``) keeps every token's latent and one indexer key of
index_head_dim per token and layer, but a decode step reads the indexer keys of the whole context
and the latents of at most index_topk tokens, and attention compute per query stops at
index_topk tokens (the indexer's own scores, index_heads x index_head_dim per pair of tokens,
keep growing).
"""
from __future__ import annotations

from generator.estimate.formats import STATE_BYTES


def _i(model: dict, key: str) -> int:
    return model.get(key) or 0


def attention_layers(model: dict) -> int:
    """Layers with attention: all but the state layers and the MLP-only blocks."""
    return model["layers"] - _i(model, "state_layers") - _i(model, "mlp_only_layers")


def mlp_layers(model: dict) -> int:
    """Layers with an MLP: every layer, or only the MLP blocks where the record gives them."""
    return _i(model, "mlp_only_layers") or model["layers"]


def state_parts(model: dict) -> tuple[float, float]:
    """(recurrent values, convolution values) of one state layer for one sequence."""
    kind = model.get("state_kind")
    if not _i(model, "state_layers") or not kind:
        return 0.0, 0.0
    heads, dim, key_dim = _i(model, "state_heads"), _i(model, "state_head_dim"), _i(model, "state_key_dim")
    conv = max(0, _i(model, "state_conv_kernel") - 1)
    if kind == "gated-deltanet":
        return heads * key_dim * dim, conv * (2 * _i(model, "state_key_heads") * key_dim + heads * dim)
    if kind == "mamba2":
        return heads * dim * key_dim, conv * (heads * dim + 2 * _i(model, "state_groups") * key_dim)
    if kind == "lightning":
        return heads * dim * dim, 0.0
    return 0.0, conv * model["hidden_size"]  # short-conv


def state_values_per_layer(model: dict) -> float:
    recurrent, conv = state_parts(model)
    return recurrent + conv


def state_bytes(model: dict, batch: int = 1) -> float:
    """Bytes of the fixed state of every state layer, for ``batch`` sequences."""
    return _i(model, "state_layers") * state_values_per_layer(model) * STATE_BYTES * batch


def sparse_attention(model: dict) -> bool:
    return bool(model.get("index_topk") and model.get("index_head_dim"))


def state_flops(model: dict, n: float) -> float:
    """FLOPs of the state layers' token mixing over n tokens: each token updates the recurrent
    state and reads it (2 products of 2 FLOPs per value)."""
    recurrent, _ = state_parts(model)
    return _i(model, "state_layers") * 4 * recurrent * n
