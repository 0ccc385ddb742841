"""Weight formats, KV-cache precisions and runtimes: the fixed numbers of the estimation engine.

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

GIB = 1024 ** 3

# base: bits of the linear layers; more: (extra bits, share of attn_v/ffn_down layers) for k-quant mixtures;
# head: bits of the output head; embed: bits of untied token embeddings.
WEIGHT_FORMATS: dict[str, dict] = {
    "f32": {"base": 32.0, "head": 32.0, "embed": 32.0, "gguf": False},
    "bf16": {"base": 16.0, "head": 16.0, "embed": 16.0, "gguf": False},
    "f16": {"base": 16.0, "head": 16.0, "embed": 16.0, "gguf": False},
    "fp8": {"base": 8.0, "head": 16.0, "embed": 16.0, "gguf": False},
    "int8": {"base": 8.0, "head": 16.0, "embed": 16.0, "gguf": False},
    "q8_0": {"base": 8.5, "head": 8.5, "embed": 8.5, "gguf": True},
    "q6_k": {"base": 6.5625, "head": 6.5625, "embed": 6.5625, "gguf": True},
    "q5_k_m": {"base": 5.5, "more_bits": 1.0625, "more_share": 0.5, "head": 6.5625, "embed": 5.5, "gguf": True},
    "q4_k_m": {"base": 4.5, "more_bits": 2.0625, "more_share": 0.5, "head": 6.5625, "embed": 4.5, "gguf": True},
    "q4_k_s": {"base": 4.5, "more_bits": 1.0, "more_share": 0.125, "head": 6.5625, "embed": 4.5, "gguf": True},
    "q4_0": {"base": 4.5, "head": 6.5625, "embed": 4.5, "gguf": True},
    "mxfp4": {"base": 16.0, "experts": 4.25, "head": 16.0, "embed": 16.0, "gguf": False, "gguf_rest": 8.5},
    "nf4": {"base": 4.127, "head": 16.0, "embed": 16.0, "gguf": False},
    "awq": {"base": 4.25, "head": 16.0, "embed": 16.0, "gguf": False},
    "gptq": {"base": 4.25, "head": 16.0, "embed": 16.0, "gguf": False},
}

KV_BYTES: dict[str, float] = {"f16": 2.0, "bf16": 2.0, "fp8": 1.0, "q8_0": 8.5 / 8, "q4_0": 4.5 / 8}

RUNTIMES = ("llama.cpp", "transformers", "vllm", "sglang", "tensorrt-llm", "mlx", "exllamav2", "pytorch")
CLI_RUNTIMES = ("llama.cpp", "transformers", "vllm")
MODES = ("inference", "full", "lora", "qlora")
# Training optimizers: bytes of state each holds per trainable parameter on the GPU, and in host
# memory. AdamW: two fp32 moments; bitsandbytes' 8-bit AdamW: two 8-bit moments (block-wise
# scales are a fraction of a percent more); its paged variant keeps them in memory the driver
# moves to the host when the GPU runs short, so they need not fit on the card; SGD: one fp32
# momentum buffer. Mixed-precision full fine-tuning adds the fp32 master weights (4 B) whatever
# the optimizer.
OPTIMIZERS: dict[str, tuple[float, float]] = {"adamw": (8.0, 0.0), "adamw-8bit": (2.0, 0.0),
                                              "paged-adamw-8bit": (0.0, 2.0), "sgd": (4.0, 0.0)}
# LoRA: the projections an adapter may sit on (attention's query, key, value and output; the
# MLP's gate, up and down), all of them by default.
LORA_TARGETS = ("q", "k", "v", "o", "gate", "up", "down")
LORA_RANK = 16  # the adapters' rank when none is given
# a loss computed in chunks upcasts this many pieces of the logits to fp32 one after the other
# (torchtune's CEWithChunkedOutputLoss default)
LOSS_CHUNKS = 8
# runtimes that split a model by layers over several GPUs (one GPU works at a time during decode);
# the others use tensor parallelism (every GPU reads its slice of every layer at once).
LAYER_SPLIT_RUNTIMES = ("llama.cpp", "transformers", "pytorch", "mlx", "exllamav2")
# which KV-cache precisions each runtime offers
KV_BY_RUNTIME = {
    "llama.cpp": ("f16", "bf16", "q8_0", "q4_0"),
    "transformers": ("f16", "bf16"),
    "pytorch": ("f16", "bf16"),
    "vllm": ("f16", "bf16", "fp8"),
    "sglang": ("f16", "bf16", "fp8"),
    "tensorrt-llm": ("f16", "bf16", "fp8"),
    "mlx": ("f16", "bf16"),
    "exllamav2": ("f16", "bf16", "q8_0", "q4_0"),
}
GGUF_ONLY_RUNTIMES = ("llama.cpp",)

VENDOR_BACKEND = {"nvidia": "cuda", "amd": "rocm", "apple": "metal", "intel": "xpu", "google": "tpu"}


def is_gguf(weights: str) -> bool:
    return bool(WEIGHT_FORMATS.get(weights, {}).get("gguf"))


def default_runtime(weights: str) -> str:
    """llama.cpp for GGUF formats, transformers for everything else."""
    return "llama.cpp" if is_gguf(weights) else "transformers"


def default_weights(runtime: str | None) -> str:
    """f16 for llama.cpp (GGUF's 16-bit type), bf16 elsewhere; both are 16 bits, so sizes agree."""
    return "f16" if runtime == "llama.cpp" else "bf16"


def backend(gpu: dict) -> str:
    return VENDOR_BACKEND.get(str(gpu.get("vendor") or ""), "other")
