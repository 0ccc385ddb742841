"""Weight formats, KV-cache precisions and runtimes: the fixed numbers of the estimation engine.

They are read from ``docs/assets/js/calc/tables.json``, the one file the browser's
``estimate.mjs`` reads too; this module gives them the names the engine uses.

Bits per weight are the real storage cost of each format, block scales included:

- ``f32`` 32, ``bf16``/``f16`` 16.
- ``fp8`` and ``int8`` 8 bits for the linear layers of the transformer blocks. Per-tensor or per-row
  scales add less than 0.01 bit per weight and are left out. vLLM's fp8, bitsandbytes LLM.int8 and
  GPTQ-int8 keep the embeddings and the output head in 16 bits.
- GGUF (llama.cpp, ``ggml-quants.c`` block layouts): ``q8_0`` 34 bytes per 32 weights = 8.5 bits;
  ``q6_k`` 210 bytes per 256 = 6.5625; ``q5_K`` 176/256 = 5.5; ``q4_K`` 144/256 = 4.5;
  ``q4_0`` 18 bytes per 32 = 4.5. The ``_m``/``_s`` mixtures are not one type: llama.cpp's
  ``llama_tensor_get_type`` gives ``attn_v`` and ``ffn_down`` more bits in about half the layers
  (``use_more_bits``: the first and last eighth and every third layer between) for ``q4_k_m`` and
  ``q5_k_m`` (q6_K there), and in the first eighth of the layers for ``q4_k_s`` (q5_K). The engine
  computes the share of those tensors from the model's own shapes, which gives 4.8-4.9 bits for
  q4_k_m and 5.6-5.7 for q5_k_m as llama-bench reports them. The output head (or, with tied
  embeddings, the one embedding matrix that serves as head) is q6_K in every k-quant and in q4_0,
  q8_0 in q8_0. Untied token embeddings take the base type of the mixture.
- ``mxfp4`` (gpt-oss): 32 four-bit values share one 8-bit scale = 4.25 bits, for the routed-expert
  weights only. Attention, router, embeddings and head stay in bf16 in the released checkpoint
  (transformers, vLLM); llama.cpp's GGUF conversion stores them as q8_0 (8.5 bits).
- ``nf4`` (bitsandbytes, QLoRA): 4 bits plus a blockwise constant per 64 weights that double
  quantization stores in 8 bits with a second-level fp32 constant per 256 blocks:
  4 + 8/64 + 32/(64*256) = 4.127 bits (Dettmers et al. 2023). Embeddings and head stay 16-bit.
- ``awq``/``gptq`` 4-bit, group size 128: a 16-bit scale and a 4-bit zero point per group plus
  packing and act-order indices: 4.25 bits in practice. Embeddings and head stay 16-bit.

KV cache bytes per stored value: f16/bf16 2, fp8 1, q8_0 34/32 = 1.0625, q4_0 18/32 = 0.5625.
"""
from __future__ import annotations

import json
from pathlib import Path

GIB = 1024 ** 3

# The one copy of the engine's fixed tables, served to the browser beside formats.mjs (the tables of
# estimate.mjs), which reads the same file (tests/test_estimate_tables.py checks both sides read it).
TABLES_PATH = Path(__file__).resolve().parents[2] / "docs" / "assets" / "js" / "calc" / "tables.json"
TABLES: dict = json.loads(TABLES_PATH.read_text(encoding="utf-8"))

# base: bits of the linear layers; more: (extra bits, share of attn_v/ffn_down layers) for k-quant mixtures;
# head: bits of the output head; embed: bits of untied token embeddings.
WEIGHT_FORMATS: dict[str, dict] = TABLES["weight_formats"]
KV_BYTES: dict[str, float] = TABLES["kv_cache"]
# bytes per value of the fixed state of linear-attention / state-space layers (fp32, as llama.cpp
# and transformers keep it), and the config facts each kind of state needs
STATE_BYTES: float = TABLES["state"]["bytes"]
STATE_KINDS: dict[str, list[str]] = TABLES["state"]["kinds"]

_RUNTIME = TABLES["runtimes"]
RUNTIMES = tuple(_RUNTIME)
# the runtimes the calculator and the command offer
CLI_RUNTIMES = tuple(r for r, t in _RUNTIME.items() if t.get("offered"))
MODES = tuple(TABLES["modes"])
# Training optimizers: bytes of state each holds per trainable parameter on the GPU, and in host
# memory. AdamW: two fp32 moments; bitsandbytes' 8-bit AdamW: two 8-bit moments (block-wise
# scales are a fraction of a percent more); its paged variant keeps them in memory the driver
# moves to the host when the GPU runs short, so they need not fit on the card; SGD: one fp32
# momentum buffer. Mixed-precision full fine-tuning adds the fp32 master weights (4 B) whatever
# the optimizer.
OPTIMIZERS: dict[str, tuple[float, float]] = {name: (o["state_bytes"], o["host_state_bytes"])
                                              for name, o in TABLES["optimizers"].items()}
# LoRA: the projections an adapter may sit on (attention's query, key, value and output; the
# MLP's gate, up and down), all of them by default.
LORA_TARGETS = tuple(TABLES["lora_targets"])
LORA_RANK = TABLES["defaults"]["lora_rank"]  # the adapters' rank when none is given
# a loss computed in chunks upcasts this many pieces of the logits to fp32 one after the other
# (torchtune's CEWithChunkedOutputLoss default)
LOSS_CHUNKS = TABLES["memory"]["loss_chunks"]
# runtimes that split a model by layers over several GPUs (one GPU works at a time during decode);
# the others use tensor parallelism (every GPU reads its slice of every layer at once).
LAYER_SPLIT_RUNTIMES = tuple(r for r, t in _RUNTIME.items() if t["split"] == "layers")
# which KV-cache precisions each runtime offers
KV_BY_RUNTIME = {r: tuple(t["kv_cache"]) for r, t in _RUNTIME.items()}
# runtimes that load GGUF files and, of the other formats, only those they list
GGUF_ONLY_RUNTIMES = tuple(r for r, t in _RUNTIME.items() if t.get("gguf"))
GGUF_RUNTIME_LOADS = {r: tuple(_RUNTIME[r]["loads"]) for r in GGUF_ONLY_RUNTIMES}
# runtimes that serve requests: a scheduler step of max_batched_tokens, the card pre-allocated
SERVING_RUNTIMES = tuple(r for r, t in _RUNTIME.items() if t.get("serving"))
# runtimes training is estimated for
TRAINING_RUNTIMES = tuple(r for r, t in _RUNTIME.items() if t.get("training"))
# the formats each training mode trains on (all of them for inference)
MODE_WEIGHTS = {m: tuple(t["weights"]) for m, t in TABLES["modes"].items() if "weights" in t}
TRAINING_WEIGHTS = MODE_WEIGHTS["full"]
# tokens of one pass: llama.cpp's micro-batch, the serving runtimes' scheduler step
UBATCH = {r: t["ubatch"] for r, t in _RUNTIME.items() if "ubatch" in t}

VENDOR_BACKEND = TABLES["backends"]
# the options an estimate takes when it is not given them (the runtime and the weights follow
# from each other: default_runtime, default_weights)
DEFAULTS: dict = {**TABLES["defaults"], "lora_targets": list(LORA_TARGETS)}
LIMITS: dict = TABLES["limits"]
# the keys of EstimateError, each with its message: the calculator's field and interface text
# (data/ui.yaml), the command's English sentence
ERRORS: dict[str, dict] = TABLES["errors"]


def is_gguf(weights: str) -> bool:
    return bool(WEIGHT_FORMATS.get(weights, {}).get("gguf"))


def default_runtime(weights: str) -> str:
    """llama.cpp for GGUF formats, the one runtime of a runtime's own format (MLX's), transformers for the rest."""
    own = WEIGHT_FORMATS.get(weights, {}).get("runtimes")
    if own:
        return own[0]
    return GGUF_ONLY_RUNTIMES[0] if is_gguf(weights) else TABLES["default_runtime"]


def default_weights(runtime: str | None) -> str:
    """f16 for llama.cpp (GGUF's 16-bit type), bf16 elsewhere; both are 16 bits, so sizes agree."""
    return _RUNTIME.get(runtime or "", {}).get("default_weights") or TABLES["default_weights"]


def backend(gpu: dict, runtime: str | None = None) -> str:
    """The backend a runtime runs the card with: the one chosen (``gpu["backend"]``, set by the
    engine from ``--backend`` or by a measurement's condition), else the runtime's default for the
    vendor (llama.cpp: SYCL on Intel), else the vendor's (``backends``)."""
    if gpu.get("backend"):
        return str(gpu["backend"])
    vendor = str(gpu.get("vendor") or "")
    own = (_RUNTIME.get(runtime or "") or {}).get("vendor_backend") or {}
    return own.get(vendor) or VENDOR_BACKEND.get(vendor, "other")
