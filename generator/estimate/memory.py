"""Memory an LLM needs on a GPU: weights, KV cache, runtime workspace, training state.

All sizes are bytes; ``model`` is a dict with the fields of ``data/models/*.yaml``.

Weights (``weights_parts``): parameters are split into token embeddings (vocab x hidden), the
output head (vocab x hidden, absent when ``tied_embeddings``), routed-expert weights of MoE
layers and everything else. Routed experts are ``(layers - dense_layers) x experts x 3 x hidden x
moe_intermediate_size`` when the config gives the expert size, else they follow from total P and
active A parameters: P - A = experts_weights x (1 - k / E). The per-layer embedding table of Gemma 4
E2B/E4B (vocab x layers x ``per_layer_embedding_dim``) is a part of its own, at the format's bits for
embeddings. Each part is stored at the bits of its
format (see ``formats.py``); k-quant mixtures add their extra bits on the share of ``attn_v`` and
``ffn_down`` in the linear weights, computed from the model's shapes (attention: q and o of
heads x head_dim, k and v of kv_heads x head_dim; the gated MLP is 3 equal matrices, so down is
a third of it).

KV cache (``kv_cache_bytes``): per token, full-attention layers hold 2 x kv_heads x head_dim
values (with ``full_kv_heads`` and ``full_head_dim`` where the record gives the full-attention
layers a shape of their own, and 1 x instead of 2 x where they use their keys as values,
``full_values_from_keys``: Gemma 4; the last ``kv_shared_layers`` keep none, reusing an earlier layer's),
sliding-window layers hold at most ``sliding_window`` tokens, MLA layers (DeepSeek)
hold one compressed latent of kv_lora_rank + qk_rope_head_dim values (and, with sparse attention,
the indexer's key of index_head_dim). Times batch (concurrent sequences) and the bytes of the KV
precision. Only attention layers count (``architecture.attention_layers``); the state layers of a
hybrid model add their fixed state (``architecture.state_bytes``) per sequence.

Workspace (``workspace``), per GPU:
- llama.cpp: the compute buffer of one micro-batch u = min(512, context x batch) tokens: f32 logits
  (4 x vocab) and f32 hidden/MLP intermediates (8 x (hidden + intermediate)) per token; without
  flash attention also the f32 KQ matrix of one layer (4 x heads x context per token). Untied
  token embeddings stay in host memory (llama.cpp keeps ``token_embd`` on the CPU).
- transformers (and pytorch, mlx, exllamav2): activations of one forward pass over the prompt:
  b x s x (4 x hidden + 4 x intermediate) bytes (16-bit hidden states and the MLP's gate and up
  outputs, alive together in one layer; recent transformers compute logits for the last position
  only); SDPA/FlashAttention never store the s x s scores (without it: 2 x heads x s^2 per
  sequence for one layer).
- vLLM, SGLang, TensorRT-LLM: the same per-token activations for a scheduler step of
  ``max_batched_tokens`` (8192) tokens, whatever the context; the card is pre-allocated to
  ``gpu_memory_utilization`` = 0.9 whatever the model needs (reported apart as ``reserved``).
- a fixed ``overhead_bytes`` per runtime (CUDA context, allocator, CUDA graphs) and a scale
  ``act_scale`` of the activation formula, both fitted on peak-memory measurements
  (``fitting.py``); defaults in ``DEFAULT_MEMORY``.

Training (``training_memory``):
- full, mixed precision: 16-bit weights (2 B) + 16-bit gradients (2 B) + fp32 master weights (4 B)
  + AdamW's two fp32 moments (8 B) = 16 B per parameter; in f32: 4 + 4 + 8 = 16 B, no master copy.
  Pure 16-bit training (``master_weights`` off, as torchtune's bf16 recipes run) keeps no master
  copy: 12 B with AdamW. With the optimizer stepped in the backward pass (``optimizer_in_backward``,
  torchtune's ``optimizer_in_bwd``) each gradient is freed once its parameter is updated, so the
  gradients held at once are the largest matrix's (``largest_matrix``), not the whole model's.
- the optimizer's state per trainable parameter (``formats.OPTIMIZERS``): AdamW 8 B (the
  default), 8-bit AdamW 2 B, SGD with momentum 4 B; paged 8-bit AdamW keeps its 2 B in memory the
  driver moves to the host under pressure, counted in ``host_bytes``, not on the GPU.
- LoRA: the frozen 16-bit base, plus rank-r adapters A (r x in) and B (out x r) on the chosen
  projections (``lora_targets``; by default every one: q, k, v, o and the MLP's gate, up and down,
  each expert's for MoE), kept in fp32 with fp32 gradients and AdamW moments: 16 B per adapter
  parameter. Recipes differ: torchtune's single-GPU LoRA adapts q and v only, at rank 8.
- QLoRA: the base in nf4 (embeddings and head 16-bit), the same adapters, plus one 16-bit copy of
  the largest linear matrix dequantized at a time. Always below LoRA for the same model.
- activations, per token of each sequence, 16-bit: with gradient checkpointing (default) every
  layer keeps its input (2 x hidden) and one layer is recomputed with all its intermediates:
  2 x (4 hidden + 2 heads x head_dim + 2 kv_heads x head_dim + 4 intermediate) + 4 x heads
  (FlashAttention's fp32 log-sum-exp; without FlashAttention add 4 x heads x s for the scores and
  probabilities). Without checkpointing every layer keeps all of that. Logits: 8 x vocab per token
  (fp32 logits and their gradient). With the loss computed in chunks (``chunked_loss``, as
  torchtune's ``CEWithChunkedOutputLoss`` does in ``LOSS_CHUNKS`` = 8 pieces) the 16-bit logits
  are kept (2 x vocab per token; 4 in f32 training) and only one chunk at a time is upcast to fp32
  with its gradient: 8 x vocab / 8 more. The figures follow Korthikanti et al. 2022 ("Reducing
  activation recomputation in large transformer models", 34 s b h per layer for a 4h MLP) with
  the s x s term removed by FlashAttention.
- several GPUs: model states sharded over them (ZeRO-3 / FSDP); ``batch`` is per GPU.

Several GPUs for inference: tensor-parallel runtimes split weights evenly and the KV cache by
kv heads (ceil(kv_heads / n) per GPU; MLA's latent is replicated); layer-split runtimes
(llama.cpp, transformers) split both by layers. Each GPU carries its own workspace.

CPU offload (``gpu_layers`` < layers): a share gpu_layers / layers of the block weights and KV
stays on the GPU; the output head stays only when every layer does. Apple unified memory: the
GPU may use ``memory_gb x gpu_memory_share`` (0.75 when the record gives no share).
"""
from __future__ import annotations

import math

from generator.estimate.architecture import attention_layers, mlp_layers, sparse_attention, state_bytes
from generator.estimate.formats import (
    GIB,
    KV_BYTES,
    LAYER_SPLIT_RUNTIMES,
    LORA_RANK,
    LORA_TARGETS,
    LOSS_CHUNKS,
    OPTIMIZERS,
    SERVING_RUNTIMES,
    TABLES,
    UBATCH,
    WEIGHT_FORMATS,
)


def _memory_defaults(t: dict) -> dict:
    return {"overhead_bytes": t["overhead_gib"] * GIB, "act_scale": t["act_scale"]}


DEFAULT_MEMORY = {**{r: _memory_defaults(t["memory"]) for r, t in TABLES["runtimes"].items() if "memory" in t},
                  "*": _memory_defaults(TABLES["memory"])}
VLLM_UTILIZATION = TABLES["memory"]["serving_utilization"]
MAX_BATCHED_TOKENS = TABLES["memory"]["max_batched_tokens"]
LLAMA_CPP_UBATCH = UBATCH["llama.cpp"]
UNIFIED_SHARE_DEFAULT = TABLES["memory"]["unified_share"]


def _i(model: dict, key: str, default=0):
    v = model.get(key)
    return default if v is None else v


def param_breakdown(model: dict) -> dict:
    """Parameters by part: embed, head, experts (routed, all), other (attention, dense MLP, norms...)."""
    total = model["parameters_b"] * 1e9
    active = (model.get("active_parameters_b") or model["parameters_b"]) * 1e9
    vocab, hidden, layers = model["vocab_size"], model["hidden_size"], model["layers"]
    embed = vocab * hidden
    head = 0 if model.get("tied_embeddings") else vocab * hidden
    per_layer = per_layer_embedding_params(model)
    n_exp, k = _i(model, "experts"), _i(model, "experts_per_token")
    experts = 0.0
    if n_exp and k and n_exp > k:
        size = _i(model, "moe_intermediate_size")
        structural = (layers - _i(model, "dense_layers")) * n_exp * 3 * hidden * size
        if 0 < structural < total - embed - head - per_layer:
            experts = structural
        else:
            experts = max(0.0, (total - active) / (1 - k / n_exp))
    other = max(0.0, total - embed - head - per_layer - experts)
    heads, kv, d = model["attention_heads"], model["kv_heads"], model["head_dim"]
    attn_layers = attention_layers(model)
    attention = attn_layers * (2 * hidden * heads * d + 2 * hidden * kv * d)
    linear = other + experts
    mlp = max(0.0, linear - attention)
    v_down = min(1.0, (mlp / 3 + attn_layers * hidden * kv * d) / linear) if linear > 0 else 0.0
    return {"total": total, "active": active, "embed": embed, "head": head, "per_layer": per_layer,
            "experts": experts, "other": other, "v_down_share": v_down}


def per_layer_embedding_params(model: dict) -> int:
    """Parameters of the per-layer embedding table (Gemma 4 E2B and E4B: vocab_size x layers x
    ``per_layer_embedding_dim``), counted in parameters_b; 0 without one."""
    return model["vocab_size"] * model["layers"] * _i(model, "per_layer_embedding_dim")


def expert_fraction(model: dict, tokens: float) -> float:
    """Share of routed experts a step touches: 1 - (1 - k/E)^tokens (uniform routing)."""
    n_exp, k = _i(model, "experts"), _i(model, "experts_per_token")
    if not (n_exp and k and n_exp > k):
        return 1.0
    return 1 - (1 - k / n_exp) ** max(1.0, tokens)


def weights_parts(model: dict, weights: str, runtime: str = "transformers") -> dict:
    """Bytes of each part of the weights in this format, and the average bits per weight."""
    fmt = WEIGHT_FORMATS[weights]
    p = param_breakdown(model)
    base = fmt["base"] + fmt.get("more_bits", 0.0) * fmt.get("more_share", 0.0) * p["v_down_share"]
    if weights == "mxfp4":
        rest = fmt["gguf_rest"] if runtime == "llama.cpp" else fmt["base"]
        other_bits, expert_bits, head_bits, embed_bits = rest, fmt["experts"], rest, rest
    else:
        other_bits = expert_bits = base
        head_bits, embed_bits = fmt["head"], fmt["embed"]
    if model.get("tied_embeddings"):
        embed_b, head_b = 0.0, p["embed"] * head_bits / 8
    else:
        embed_b, head_b = p["embed"] * embed_bits / 8, p["head"] * head_bits / 8
    other_b, expert_b = p["other"] * other_bits / 8, p["experts"] * expert_bits / 8
    per_layer_b = p["per_layer"] * embed_bits / 8  # an embedding table, stored as the embeddings are
    total = embed_b + head_b + per_layer_b + other_b + expert_b
    return {"embed": embed_b, "head": head_b, "per_layer": per_layer_b, "other": other_b, "experts": expert_b,
            "total": total, "bits_per_weight": total * 8 / p["total"], "params": p}


def kv_values_per_sequence(model: dict, context: float) -> float:
    """Values the KV cache of the attention layers holds for one sequence of ``context`` tokens:
    the layers that reuse an earlier layer's keys and values (``kv_shared_layers``) keep none."""
    return _kv_values(model, context, cached_only=True)


def _kv_values(model: dict, context: float, cached_only: bool) -> float:
    """KV values of one sequence over the attention layers; with ``cached_only`` the KV-shared layers
    (the last ``kv_shared_layers``, ``kv_shared_sliding_layers`` of them sliding-window ones) left out."""
    layers = attention_layers(model)
    if model.get("attention") == "mla" and model.get("kv_lora_rank"):
        index = _i(model, "index_head_dim") if sparse_attention(model) else 0
        return layers * (model["kv_lora_rank"] + _i(model, "qk_rope_head_dim") + index) * context
    window = _i(model, "sliding_window")
    sliding = min(layers, _i(model, "sliding_window_layers")) if window else 0
    full = layers - sliding
    if cached_only:
        shared_sliding = min(sliding, _i(model, "kv_shared_sliding_layers")) if window else 0
        sliding -= shared_sliding
        full -= min(full, _i(model, "kv_shared_layers") - shared_sliding)
    return (full_kv_values_per_token(model) * full * context
            + 2 * model["kv_heads"] * model["head_dim"] * sliding * min(context, window))


def full_kv_values_per_token(model: dict) -> int:
    """Cached values per token of one full-attention layer: keys and values of its KV heads, with
    the head size and heads of the full-attention layers where a record sets them apart from the
    sliding-window ones (``full_head_dim``, ``full_kv_heads``), and keys alone where the layer uses
    them as values (``full_values_from_keys``)."""
    kv = model.get("full_kv_heads") or model["kv_heads"]
    dim = model.get("full_head_dim") or model["head_dim"]
    return (1 if model.get("full_values_from_keys") else 2) * kv * dim


def kv_read_values_per_sequence(model: dict, context: float) -> float:
    """Values of the KV cache a decode step reads for one sequence: all of it, once per attention
    layer (a KV-shared layer reads the cache of the layer whose keys and values it reuses), but with
    sparse attention the indexer keys of the whole context and the latents of at most index_topk tokens."""
    if not (sparse_attention(model) and model.get("attention") == "mla" and model.get("kv_lora_rank")):
        return _kv_values(model, context, cached_only=False)  # a KV-shared layer reads its source's cache
    latent = model["kv_lora_rank"] + _i(model, "qk_rope_head_dim")
    return attention_layers(model) * (model["index_head_dim"] * context + latent * min(context, model["index_topk"]))


def kv_cache_bytes(model: dict, context: float, batch: int = 1, kv_cache: str = "f16") -> float:
    """The attention layers' KV cache at the KV precision, plus the fixed state of the state layers."""
    return kv_values_per_sequence(model, context) * KV_BYTES[kv_cache] * batch + state_bytes(model, batch)


def kv_share_per_gpu(model: dict, gpus: int, runtime: str) -> float:
    """Share of the KV cache one GPU holds."""
    if gpus <= 1:
        return 1.0
    if runtime in LAYER_SPLIT_RUNTIMES:
        return 1 / gpus
    if model.get("attention") == "mla" and model.get("kv_lora_rank"):
        return 1.0
    kv = model["kv_heads"]
    return math.ceil(kv / gpus) / kv


def memory_constants(constants: dict | None, runtime: str) -> dict:
    table = (constants or {}).get("memory") or {}
    out = dict(DEFAULT_MEMORY["*"])
    out.update(DEFAULT_MEMORY.get(runtime, {}))
    out.update(table.get("*", {}))
    out.update(table.get(runtime, {}))
    return out


def activation_basis(model: dict, runtime: str, context: float, batch: int, flash_attention: bool = True) -> float:
    """Bytes of the runtime's activation workspace before ``act_scale``."""
    h, inter, vocab = model["hidden_size"], _i(model, "intermediate_size", 4 * model["hidden_size"]), model["vocab_size"]
    heads = model["attention_heads"]
    if runtime == "llama.cpp":
        u = min(LLAMA_CPP_UBATCH, context * batch)
        extra = 0 if flash_attention else 4 * heads * context
        return u * (4 * vocab + 8 * (h + inter) + extra)
    per_token = 4 * h + 4 * inter
    if runtime in SERVING_RUNTIMES:
        return min(MAX_BATCHED_TOKENS, max(context * batch, 1)) * per_token
    scores = 0 if flash_attention else 2 * heads * context * context * batch
    return batch * context * per_token + scores


def usable_bytes(gpu: dict) -> float:
    """Memory the GPU may use: all of it, or memory_gb x gpu_memory_share with unified memory."""
    total = gpu["memory_gb"] * GIB
    if gpu.get("unified_memory"):
        share = gpu.get("gpu_memory_share") or UNIFIED_SHARE_DEFAULT
        return total * share
    return total


def inference_memory(model: dict, weights: str, kv_cache: str, context: int, batch: int, runtime: str,
                     gpus: int = 1, gpu_layers: int | None = None, flash_attention: bool = True,
                     constants: dict | None = None, parts: dict | None = None) -> dict:
    """Bytes per GPU (weights, KV cache, activations, overhead, total) and what stays in host memory;
    ``parts``: ``weights_parts`` of the model in ``weights`` for ``runtime``, where the caller has it."""
    w = weights_parts(model, weights, runtime) if parts is None else parts
    layers = model["layers"]
    on_gpu = layers if gpu_layers is None else max(0, min(layers, gpu_layers))
    frac = on_gpu / layers
    block = w["other"] + w["experts"]
    # llama.cpp keeps its input tables (token_embd, per_layer_token_embd) in host memory
    embed_gpu = 0.0 if runtime == "llama.cpp" else w["embed"] + w["per_layer"]
    gpu_w = block * frac + (w["head"] if on_gpu == layers else 0.0) + embed_gpu
    host_w = w["total"] - gpu_w
    kv_all = kv_cache_bytes(model, context, batch, kv_cache)
    kv_gpu = kv_all * frac
    k = memory_constants(constants, runtime)
    acts = k["act_scale"] * activation_basis(model, runtime, context, batch, flash_attention)
    n = max(1, gpus)
    weights_gpu = gpu_w / n
    kv_gpu = kv_gpu * kv_share_per_gpu(model, n, runtime)
    total = weights_gpu + kv_gpu + acts + k["overhead_bytes"]
    return {"weights_bytes": weights_gpu, "kv_cache_bytes": kv_gpu, "activations_bytes": acts,
            "overhead_bytes": k["overhead_bytes"], "gradients_bytes": 0.0, "optimizer_bytes": 0.0,
            "total_bytes": total, "host_bytes": host_w + (kv_all - kv_all * frac),
            "weights_file_bytes": w["total"], "bits_per_weight": w["bits_per_weight"],
            "kv_cache_total_bytes": kv_all, "gpu_layers": on_gpu}


def lora_params(model: dict, rank: int, targets=LORA_TARGETS) -> float:
    """Adapter parameters: r x (in + out) for each targeted projection of every layer (q, k, v, o;
    gate, up and down of the MLP, of each expert for MoE)."""
    h, heads, kv, d, layers = (model["hidden_size"], model["attention_heads"], model["kv_heads"],
                               model["head_dim"], model["layers"])
    sides = {"q": h + heads * d, "o": h + heads * d, "k": h + kv * d, "v": h + kv * d}
    attn = rank * sum(sides[t] for t in LORA_TARGETS[:4] if t in targets)
    mlp_count = sum(1 for t in LORA_TARGETS[4:] if t in targets)
    attn_layers, layers = attention_layers(model), mlp_layers(model)
    inter = _i(model, "intermediate_size", 4 * h)
    n_exp = _i(model, "experts")
    if n_exp:
        moe_layers = layers - _i(model, "dense_layers")
        size = _i(model, "moe_intermediate_size", inter)
        mlp = moe_layers * n_exp * mlp_count * rank * (h + size) + (layers - moe_layers) * mlp_count * rank * (h + inter)
    else:
        mlp = layers * mlp_count * rank * (h + inter)
    return attn_layers * attn + mlp


def frozen_inputs(model: dict, targets, flash_attention: bool = True) -> int:
    """Values per token and layer that full fine-tuning keeps for backward and LoRA does not: a
    frozen 16-bit projection computes no weight gradient, so PyTorch does not keep an input that
    only projections without an adapter read. QLoRA keeps them: bitsandbytes' 4-bit matmul saves
    its input whenever that input needs a gradient, as it does in training. Per layer: the
    attention norm's output (read by q, k, v), the MLP norm's output (gate, up), the input of
    down and, without FlashAttention (which keeps its output for its own backward), the
    attention's output (o). The norms' inputs, the attention's
    q, k and v and the MLP's gate and up outputs are kept by the operations that read them."""
    h, heads, d = model["hidden_size"], model["attention_heads"], model["head_dim"]
    inter = _i(model, "intermediate_size", 4 * h)
    targets = set(targets)
    out = 0
    if not targets & {"q", "k", "v"}:
        out += h
    if not targets & {"gate", "up"}:
        out += h
    if "down" not in targets:
        out += inter
    if not flash_attention and "o" not in targets:
        out += heads * d
    return out


def largest_matrix(model: dict) -> int:
    """Parameters of the model's largest weight matrix: the embedding (or output head) or an MLP
    projection (one expert's, for MoE)."""
    h = model["hidden_size"]
    inter = _i(model, "intermediate_size", 4 * h)
    return max(model["vocab_size"] * h, h * inter, h * model["attention_heads"] * model["head_dim"])


def training_memory(model: dict, mode: str, weights: str, context: int, batch: int, gpus: int = 1,
                    lora_rank: int = LORA_RANK, checkpointing: bool = True, flash_attention: bool = True,
                    constants: dict | None = None, runtime: str = "transformers", optimizer_name: str = "adamw",
                    master_weights: bool = True, optimizer_in_backward: bool = False, chunked_loss: bool = False,
                    lora_targets=LORA_TARGETS) -> dict:
    """Bytes per GPU of full fine-tuning, LoRA or QLoRA, with their parts. ``master_weights`` and
    ``optimizer_in_backward`` apply to full fine-tuning (LoRA's adapters are fp32 and small),
    ``lora_rank`` and ``lora_targets`` to LoRA and QLoRA."""
    p = param_breakdown(model)
    wide = weights == "f32"
    state, host_state = OPTIMIZERS[optimizer_name]
    if mode == "full":
        trainable = p["total"]
        width = 4 if wide else 2
        base = trainable * width
        # stepped in the backward pass, a gradient is freed as soon as it is made: the largest
        # matrix's is the most held at once
        grads = largest_matrix(model) * width if optimizer_in_backward else trainable * width
        master = 0 if wide or not master_weights else 4
        optimizer = trainable * (state + master)  # the optimizer's state (+ fp32 master weights in mixed precision)
        dequant = 0.0
    else:
        trainable = lora_params(model, lora_rank, lora_targets)
        base_fmt = "nf4" if mode == "qlora" else weights
        base = weights_parts(model, base_fmt, runtime)["total"]
        h, inter = model["hidden_size"], _i(model, "intermediate_size", 4 * model["hidden_size"])
        dequant = 2 * h * max(inter, model["attention_heads"] * model["head_dim"]) if mode == "qlora" else 0.0
        base += trainable * 4
        grads = trainable * 4
        optimizer = trainable * state
    host = trainable * host_state
    h, heads, kv, d = model["hidden_size"], model["attention_heads"], model["kv_heads"], model["head_dim"]
    inter = _i(model, "intermediate_size", 4 * h)
    scale = 2 if wide else 1
    full_layer = 2 * (4 * h + 2 * heads * d + 2 * kv * d + 4 * inter) + 4 * heads
    if not flash_attention:
        full_layer += 4 * heads * context
    if mode == "lora":  # bitsandbytes' 4-bit matmul of QLoRA keeps its input whatever needs a gradient
        full_layer -= 2 * frozen_inputs(model, lora_targets, flash_attention)
    layers = model["layers"]
    per_token = (layers * 2 * h + full_layer) if checkpointing else layers * full_layer
    logits = (2 * scale + 8 / LOSS_CHUNKS) if chunked_loss else 8
    acts = (per_token * scale + logits * model["vocab_size"]) * context * batch
    n = max(1, gpus)
    k = memory_constants(constants, runtime)
    states = (base + grads + optimizer) / n
    total = states + dequant + acts + k["overhead_bytes"]
    return {"weights_bytes": base / n + dequant, "kv_cache_bytes": 0.0, "activations_bytes": acts,
            "overhead_bytes": k["overhead_bytes"], "gradients_bytes": grads / n, "optimizer_bytes": optimizer / n,
            "total_bytes": total, "host_bytes": host / n, "trainable_params": trainable,
            "weights_file_bytes": base, "gpu_layers": layers}
