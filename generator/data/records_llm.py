"""Record types of the estimates: LLM architectures, public measurements and dated prices.

Declared like every other record (see :mod:`generator.data.records`): the validator, the JSON
Schema, the formatter and the translation machinery all read these declarations.
"""
from __future__ import annotations

import re

from generator.data.schema import (
    CLOUD_PRICING,
    PRICE_KINDS,
    Bool,
    Date,
    Enum,
    F,
    List,
    Number,
    OneOf,
    Record,
    Ref,
    Str,
    Text,
    Url,
)
from generator.estimate import formats

# the engine's weight formats, KV-cache precisions, runtimes, modes, optimizers and LoRA targets
# (docs/assets/js/calc/tables.json, through generator/estimate/formats.py)
WEIGHT_FORMATS = tuple(formats.WEIGHT_FORMATS)
KV_FORMATS = tuple(formats.KV_BYTES)
# the kernels that multiply GPTQ/AWQ weights, where a source names the one a run used
KERNELS = ("cuda-old", "cuda", "exllama", "exllama-v2", "marlin", "triton")
RUNTIMES = formats.RUNTIMES
# the backends a runtime may run a card with (llama.cpp: cuda, rocm, vulkan, metal, sycl, cpu), and the vendors' own
BACKENDS = tuple(dict.fromkeys([*(b for t in formats.TABLES["runtimes"].values() for b in t.get("backends") or ()),
                                *formats.VENDOR_BACKEND.values()]))
METRICS = ("decode_tokens_per_s", "prefill_tokens_per_s", "peak_memory_gib", "weights_gib", "training_tokens_per_s",
           "training_throughput")
MODES = formats.MODES
OPTIMIZERS = tuple(formats.OPTIMIZERS)
LORA_TARGETS = formats.LORA_TARGETS
# Training benchmarks that are not LLMs of data/models: a result names one of them in place of a
# model, and its value (metric training_throughput) is in the benchmark's own unit per second, so
# it compares across cards within one workload and source only. Proper names, not translated.
BENCHMARK_WORKLOADS = {
    "resnet50": "ResNet-50", "ssd": "SSD300", "bert-base-squad": "BERT-base (SQuAD)",
    "bert-large-squad": "BERT-large (SQuAD)", "gnmt": "GNMT", "transformer-xl-base": "Transformer-XL base",
    "transformer-xl-large": "Transformer-XL large", "tacotron2": "Tacotron 2", "waveglow": "WaveGlow",
}
ATTENTION = ("mha", "gqa", "mqa", "mla")
MODEL_SOURCED = ("parameters_b", "active_parameters_b", "layers", "hidden_size", "intermediate_size",
                 "attention_heads", "kv_heads", "head_dim", "vocab_size", "tied_embeddings", "max_context", "max_context_scaled",
                 "experts", "experts_per_token", "shared_experts", "moe_intermediate_size", "dense_layers",
                 "kv_lora_rank", "qk_rope_head_dim", "sliding_window", "sliding_window_layers", "full_head_dim",
                 "full_kv_heads", "full_values_from_keys", "kv_shared_layers", "kv_shared_sliding_layers",
                 "per_layer_embedding_dim", "release_date", "licence", "native_weights") + (
                 "state_layers", "state_kind", "state_heads", "state_head_dim", "state_key_heads", "state_key_dim",
                 "state_groups", "state_conv_kernel", "mlp_only_layers", "mtp_layers", "index_topk", "index_heads",
                 "index_head_dim", "vision_encoder")
# the layers whose token mixer keeps a fixed-size state (tables.json's state kinds), and the figures each needs
STATE_KINDS = formats.STATE_KINDS
STATE_FIGURES = ("state_heads", "state_head_dim", "state_key_heads", "state_key_dim", "state_groups", "state_conv_kernel")
INDEX_FIELDS = ("index_topk", "index_heads", "index_head_dim")
# what sets the full-attention layers of a model with sliding-window layers apart (Gemma 4)
FULL_ATTENTION_FIELDS = ("full_head_dim", "full_kv_heads", "full_values_from_keys")
VISION = ("included", "excluded")
VERSION_RE = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._+\-]*$")


def _count(maximum, doc=""):
    return F(Number(integer=True, maximum=maximum), doc=doc)


def _opt_count(maximum, doc=""):
    return F(Number(integer=True, maximum=maximum), required=False, doc=doc)


# ---------------------------------------------------------------- model rules


def rule_heads_consistent(model, ctx, kp):
    heads, kv = model.get("attention_heads"), model.get("kv_heads")
    if heads and kv and kv > heads:
        ctx.err(kp + ("kv_heads",), f"kv_heads {kv} is above attention_heads {heads}")
    elif heads and kv and heads % kv:
        ctx.err(kp + ("kv_heads",), f"attention_heads {heads} is not a multiple of kv_heads {kv}")
    kind = model.get("attention")
    if kind == "mha" and heads and kv and kv != heads:
        ctx.err(kp + ("attention",), f"mha means one key/value head per query head; kv_heads is {kv} of {heads}: use gqa")
    if kind == "mqa" and kv not in (None, 1):
        ctx.err(kp + ("attention",), f"mqa means one key/value head; kv_heads is {kv}: use gqa")
    if kind == "mla" and (model.get("kv_lora_rank") is None or model.get("qk_rope_head_dim") is None):
        ctx.err(kp, "attention mla needs kv_lora_rank and qk_rope_head_dim (the compressed cache per token)")
    if kind != "mla" and model.get("kv_lora_rank") is not None:
        ctx.err(kp + ("kv_lora_rank",), "kv_lora_rank applies to attention: mla only")


def rule_experts_consistent(model, ctx, kp):
    experts, per_token = model.get("experts"), model.get("experts_per_token")
    total, active = model.get("parameters_b"), model.get("active_parameters_b")
    if (experts is None) != (per_token is None):
        ctx.err(kp, "a mixture of experts gives both experts and experts_per_token")
    elif experts is not None and per_token > experts:
        ctx.err(kp + ("experts_per_token",), f"experts_per_token {per_token} is above experts {experts}")
    if total is not None and active is not None:
        if active > total:
            ctx.err(kp + ("active_parameters_b",), f"active parameters {active:g} B exceed the total {total:g} B")
        elif experts is None and active != total:
            ctx.err(kp + ("active_parameters_b",), "a dense model (no experts) has active_parameters_b equal to parameters_b")


def rule_window_consistent(model, ctx, kp):
    window, layers, n = model.get("sliding_window"), model.get("layers"), model.get("sliding_window_layers")
    if (window is None) != (n is None):
        ctx.err(kp, "sliding-window attention gives both sliding_window and sliding_window_layers")
    elif n is not None and layers is not None and n > layers:
        ctx.err(kp + ("sliding_window_layers",), f"{n} sliding-window layers of {layers} layers")
    full = [k for k in FULL_ATTENTION_FIELDS if model.get(k) is not None]
    if full and n is None:
        ctx.err(kp + (full[0],), f"{full[0]} describes the full-attention layers beside sliding-window ones: "
                "give sliding_window and sliding_window_layers")


def rule_kv_shared_layers(model, ctx, kp):
    """KV-shared layers: fewer than the attention layers; with sliding windows, how many of them slide."""
    shared, shared_sliding = model.get("kv_shared_layers"), model.get("kv_shared_sliding_layers")
    layers = model.get("layers")
    if layers is None:
        return
    attention = layers - (model.get("state_layers") or 0) - (model.get("mlp_only_layers") or 0)
    window_layers = model.get("sliding_window_layers")
    if shared_sliding is not None and shared is None:
        ctx.err(kp + ("kv_shared_sliding_layers",), "kv_shared_sliding_layers counts some of the kv_shared_layers: "
                "give kv_shared_layers")
        return
    if not shared:
        return
    if shared >= attention:
        ctx.err(kp + ("kv_shared_layers",), f"{shared} KV-shared layers of {attention} attention layers: "
                "at least one layer keeps the cache they reuse")
        return
    if window_layers is None:
        if shared_sliding:
            ctx.err(kp + ("kv_shared_sliding_layers",), "kv_shared_sliding_layers needs sliding-window layers")
        return
    if shared_sliding is None:
        ctx.err(kp + ("kv_shared_layers",), "with sliding-window layers, give kv_shared_sliding_layers: how many "
                "of the KV-shared layers use the window")
    elif shared_sliding > min(shared, window_layers) or shared - shared_sliding > attention - window_layers:
        ctx.err(kp + ("kv_shared_sliding_layers",), f"{shared_sliding} sliding-window layers of {shared} KV-shared "
                f"layers do not fit {window_layers} sliding-window layers of {attention}")


def rule_layer_kinds(model, ctx, kp):
    """State layers, MLP-only blocks and attention layers add up; each kind of state gives its figures."""
    layers, state, mlp_only = model.get("layers"), model.get("state_layers"), model.get("mlp_only_layers")
    kind = model.get("state_kind")
    if (state is None) != (kind is None):
        ctx.err(kp + ("state_layers" if state is not None else "state_kind",),
                "state layers give both state_layers and state_kind")
    if layers is not None and (state or 0) + (mlp_only or 0) > layers:
        ctx.err(kp + ("state_layers" if state else "mlp_only_layers",),
                f"{state or 0} state layers and {mlp_only or 0} MLP-only blocks exceed the {layers} layers")
    attention = (layers or 0) - (state or 0) - (mlp_only or 0)
    window_layers = model.get("sliding_window_layers")
    if layers is not None and window_layers is not None and (state or mlp_only) and window_layers > attention:
        ctx.err(kp + ("sliding_window_layers",), f"{window_layers} sliding-window layers of {attention} attention layers")
    needs = STATE_KINDS.get(kind, []) if kind else []
    for name in needs:
        if model.get(name) is None:
            ctx.err(kp + ("state_kind",), f"state_kind {kind} needs {name}")
    for name in STATE_FIGURES:
        if model.get(name) is None or name in needs:
            continue
        if kind is None:
            if state is None:
                ctx.err(kp + (name,), f"{name} describes state layers: give state_layers and state_kind")
        else:
            ctx.err(kp + (name,), f"{name} does not apply to state_kind {kind}, which takes {', '.join(needs)}")
    given = [n for n in INDEX_FIELDS if model.get(n) is not None]
    if given and len(given) < len(INDEX_FIELDS):
        missing = ", ".join(n for n in INDEX_FIELDS if n not in given)
        ctx.err(kp + (given[0],), f"sparse attention gives index_topk, index_heads and index_head_dim together "
                                  f"({missing} missing)")
    if given and model.get("attention") != "mla":
        ctx.err(kp + (given[0],), "sparse attention (the indexer) is recorded for attention: mla only")


def rule_model_sourced(model, ctx, kp):
    covered: set[str] = set()
    for src in model.get("sources") or []:
        if isinstance(src, str):
            covered.update(MODEL_SOURCED)
        elif isinstance(src, dict):
            covered.update(src.get("fields") or [])
    for name in MODEL_SOURCED:
        if model.get(name) is not None and name not in covered:
            ctx.err(kp + (name,), f"no source covers {name}; add it to the fields of a source in sources")


MODEL_SOURCE = OneOf(first=Url(), second=Record({
    "url": F(Url()),
    "fields": F(List(Enum(MODEL_SOURCED), min_items=1, unique=True), required=False,
                doc="the fields this source vouches for; without it, all of them"),
    "note": F(Text(max_len=500), required=False),
}))

MODEL = Record({
    "name": F(Str(max_len=80), doc="the publisher's name of the model"),
    "developer": F(Str(max_len=60)),
    "release_date": F(Date()),
    "licence": F(Str(max_len=80)),
    "parameters_b": F(Number(maximum=10000), doc="total parameters, billions"),
    "active_parameters_b": F(Number(maximum=10000), doc="parameters used per token, billions (= total when dense)"),
    "layers": _count(1000),
    "hidden_size": _count(100000),
    "intermediate_size": _count(1000000, "dense MLP width"),
    "attention_heads": _count(1000),
    "kv_heads": _count(1000, "key/value heads"),
    "head_dim": _count(4096, "from the config when it gives one (not always hidden / heads)"),
    "vocab_size": _count(10000000),
    "tied_embeddings": F(Bool(), doc="the output head shares the embedding matrix"),
    "attention": F(Enum(ATTENTION)),
    "max_context": _count(100000000, "tokens"),
    "max_context_scaled": _opt_count(100000000, "tokens with the RoPE scaling (e.g. YaRN) the publisher documents"),
    "experts": _opt_count(100000, "routed experts per MoE layer"),
    "experts_per_token": _opt_count(1000),
    "shared_experts": F(Number(integer=True, minimum=0, exclusive_min=False, maximum=1000), required=False),
    "moe_intermediate_size": _opt_count(1000000, "width of one expert"),
    "dense_layers": F(Number(integer=True, minimum=0, exclusive_min=False, maximum=1000), required=False,
                      doc="leading layers with a dense MLP in a mixture of experts"),
    "kv_lora_rank": _opt_count(100000, "MLA: compressed key/value size per token and layer"),
    "qk_rope_head_dim": _opt_count(4096, "MLA: the rotary part kept beside the compressed cache"),
    "sliding_window": _opt_count(10000000, "window of the sliding-window layers, tokens"),
    "sliding_window_layers": _opt_count(1000, "how many layers use the window"),
    "full_head_dim": _opt_count(100000, "with sliding-window layers: the head size of the full-attention layers, "
                                "where it differs from head_dim (Gemma 4: global_head_dim)"),
    "full_kv_heads": _opt_count(100000, "with sliding-window layers: the key-value heads of the full-attention "
                                "layers, where they differ from kv_heads (Gemma 4: num_global_key_value_heads)"),
    "full_values_from_keys": F(Bool(), required=False,
                               doc="the full-attention layers use their keys as values and cache keys only "
                                   "(Gemma 4: attention_k_eq_v)"),
    "kv_shared_layers": F(Number(integer=True, minimum=0, exclusive_min=False, maximum=1000), required=False,
                          doc="the last layers, which reuse the keys and values of an earlier layer of their kind and "
                              "keep no KV cache (Gemma 4 E2B, E4B: num_kv_shared_layers)"),
    "kv_shared_sliding_layers": F(Number(integer=True, minimum=0, exclusive_min=False, maximum=1000), required=False,
                                  doc="with sliding-window layers: how many of the KV-shared layers use the window"),
    "per_layer_embedding_dim": _opt_count(100000, "width of each layer's slice of the per-layer embedding table, "
                                          "vocab_size x layers x this, counted in parameters_b (Gemma 4 E2B, E4B: "
                                          "hidden_size_per_layer_input)"),
    "state_layers": _opt_count(1000, "layers whose token mixer keeps a fixed-size state instead of a KV cache"),
    "state_kind": F(Enum(tuple(STATE_KINDS)), required=False, doc="the kind of those layers' state"),
    "state_heads": _opt_count(100000, "value heads of Gated DeltaNet, Mamba-2 or lightning attention"),
    "state_head_dim": _opt_count(100000, "width of one of those heads (Mamba-2: mamba_head_dim)"),
    "state_key_heads": _opt_count(100000, "Gated DeltaNet: key heads (linear_num_key_heads)"),
    "state_key_dim": _opt_count(100000, "Gated DeltaNet: key head width; Mamba-2: the state size d_state"),
    "state_groups": _opt_count(100000, "Mamba-2: n_groups"),
    "state_conv_kernel": _opt_count(1000, "the causal convolution's kernel (LFM2: conv_L_cache)"),
    "mlp_only_layers": _opt_count(1000, "blocks with an MLP and no token mixer (Nemotron-H); then only they have an MLP"),
    "mtp_layers": _opt_count(100, "multi-token-prediction layers shipped with the weights, outside layers and parameters_b"),
    "index_topk": _opt_count(100000000, "sparse attention: tokens each query attends to, picked by the indexer"),
    "index_heads": _opt_count(10000, "sparse attention: the indexer's heads"),
    "index_head_dim": _opt_count(100000, "sparse attention: the indexer's key width, cached per token and layer"),
    "vision_encoder": F(Enum(VISION), required=False,
                        doc="a multimodal model: whether parameters_b includes its vision encoder"),
    "native_weights": F(Enum(tuple(formats.WEIGHT_FORMATS)), required=False,
                        doc="the format the publisher ships the weights in when it is not 16-bit (gpt-oss: mxfp4; "
                            "DeepSeek V3: fp8)"),
    "hf_repo": F(Str(max_len=120, pattern=re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.-]*/[A-Za-z0-9_.-]+$"),
                     hint="owner/name as on huggingface.co, e.g. Qwen/Qwen3-32B"), required=False,
                 doc="the Hugging Face repository of the weights whose config.json the record follows"),
    "notes": F(Text(max_len=1500), required=False),
    "sources": F(List(MODEL_SOURCE, min_items=1)),
}, rules=(rule_heads_consistent, rule_experts_consistent, rule_window_consistent, rule_layer_kinds,
                  rule_kv_shared_layers, rule_model_sourced))

# ---------------------------------------------------------------- measurements

def rule_result_subject(result, ctx, kp):
    """A result measures either a model of data/models or a named training workload."""
    if result.get("workload") is not None:
        if result.get("metric") != "training_throughput":
            ctx.err(kp + ("metric",), "a workload result measures training_throughput (its own unit per second)")
        for name in ("model", "weights", "context", "kv_cache"):
            if result.get(name) is not None:
                ctx.err(kp + (name,), f"{name} applies to model results; this result names a workload")
        if result.get("mode") not in (None, "full"):
            ctx.err(kp + ("mode",), "a workload result trains the whole network: mode full")
        return
    for name in ("model", "weights", "context"):
        if result.get(name) is None:
            ctx.err(kp, f"a result names its {name} (or, for a training benchmark, a workload)")
    if result.get("metric") == "training_throughput":
        ctx.err(kp + ("metric",), "training_throughput is for workload results; a model result gives training_tokens_per_s")
    _run_conditions(result, ctx, kp)
    _training_conditions(result, ctx, kp)


def _run_conditions(result, ctx, kp):
    """The conditions of a model result that only some runs have: offload, kernels, generated tokens."""
    if result.get("host_bandwidth_gbs") is not None and result.get("offload") is None:
        ctx.err(kp + ("host_bandwidth_gbs",), "host_bandwidth_gbs describes a run with offload: give offload too")
    if result.get("kernel") is not None and result.get("weights") not in ("gptq", "awq"):
        ctx.err(kp + ("kernel",), "kernel names the kernel of GPTQ or AWQ weights (weights: gptq or awq)")
    if result.get("generated_tokens") is not None and (
            result.get("metric") not in ("decode_tokens_per_s", "peak_memory_gib")
            or result.get("mode") not in (None, "inference")):
        ctx.err(kp + ("generated_tokens",), "generated_tokens describes an inference run that generated tokens after "
                                            "the prompt: a decode_tokens_per_s or peak_memory_gib result")
    if result.get("mode") == "inference" and result.get("metric") == "training_tokens_per_s":
        ctx.err(kp + ("mode",), "training_tokens_per_s is measured in a training mode (full, lora or qlora)")


def _training_conditions(result, ctx, kp):
    """The conditions of a training run are given for training runs only, each for its modes."""
    training = result.get("mode") not in (None, "inference") or result.get("metric") == "training_tokens_per_s"
    for name in ("gradient_checkpointing", "optimizer", "chunked_loss"):
        if result.get(name) is not None and not training:
            ctx.err(kp + (name,), f"{name} describes a training run (mode full, lora or qlora)")
    for name in ("master_weights", "optimizer_in_backward"):
        if result.get(name) is not None and result.get("mode") != "full":
            ctx.err(kp + (name,), f"{name} describes full fine-tuning (mode full)")
    for name in ("lora_rank", "lora_targets"):
        if result.get(name) is not None and result.get("mode") not in ("lora", "qlora"):
            ctx.err(kp + (name,), f"{name} describes a LoRA or QLoRA run (mode lora or qlora)")


RESULT = Record({
    "gpu": F(Ref("gpu")),
    "gpus": F(Number(integer=True, maximum=100000), doc="GPUs used"),
    "model": F(Ref("model"), required=False, doc="the model run; absent when a workload is named"),
    "workload": F(Enum(tuple(BENCHMARK_WORKLOADS)), required=False,
                  doc="a training benchmark that is not a model of data/models (metric training_throughput)"),
    "mode": F(Enum(MODES), required=False,
              doc="inference (default), or the training: full, lora or qlora"),
    "weights": F(Enum(WEIGHT_FORMATS), required=False, doc="model results: the weights' format"),
    "kv_cache": F(Enum(KV_FORMATS), required=False, doc="default f16"),
    "kernel": F(Enum(KERNELS), required=False,
                doc="GPTQ/AWQ weights: the kernel that multiplied them, where the source names it"),
    "backend": F(Enum(BACKENDS), required=False,
                 doc="the runtime's backend where it is not the vendor's default (llama.cpp: vulkan on an AMD or Intel card)"),
    "offload": F(Str(max_len=20, pattern=re.compile(r"^(layers|experts):[0-9]+$"),
                     hint="layers:N (N layers in host memory) or experts:N (llama.cpp's --n-cpu-moe N)"), required=False,
                 doc="inference with part of the model in host memory: layers:N or experts:N"),
    "host_bandwidth_gbs": F(Number(maximum=100000), required=False,
                            doc="with offload: the host memory's bandwidth as the source gives it, GB/s"),
    "context": F(Number(integer=True, minimum=0, exclusive_min=False, maximum=100000000), required=False,
                 doc="model results; prefill: prompt tokens; decode: tokens already in context"),
    "batch": F(Number(integer=True, maximum=1000000), doc="sequences at once"),
    "generated_tokens": F(Number(integer=True, maximum=10000000), required=False,
                          doc="tokens generated after the prompt: decode timed over the whole call (the prompt's "
                              "processing plus this many tokens); peak memory with the cache at prompt plus these"),
    "flash_attention": F(Bool(), required=False),
    "gradient_checkpointing": F(Bool(), required=False,
                                doc="training results: activations recomputed in the backward pass (default: on)"),
    "optimizer": F(Enum(tuple(OPTIMIZERS)), required=False,
                   doc="training results: the optimizer, where the source names it (default: adamw)"),
    "master_weights": F(Bool(), required=False,
                        doc="full fine-tuning: an fp32 master copy of 16-bit weights (default: true; false for pure bf16)"),
    "optimizer_in_backward": F(Bool(), required=False,
                               doc="full fine-tuning: each parameter stepped as its gradient is made (default: false)"),
    "lora_rank": F(Number(integer=True, maximum=65536), required=False,
                   doc="LoRA and QLoRA: the adapters' rank (default: 16)"),
    "lora_targets": F(List(Enum(LORA_TARGETS), min_items=1, unique=True), required=False,
                      doc="LoRA and QLoRA: the projections adapted (default: all seven)"),
    "chunked_loss": F(Bool(), required=False,
                      doc="training results: the loss upcasts the logits to fp32 one chunk at a time (default: false)"),
    "metric": F(Enum(METRICS)),
    "value": F(Number(maximum=1e9)),
    "url": F(Url(), required=False, doc="a more precise link than the file's"),
    "date": F(Date(), required=False),
    "runtime_version": F(Str(max_len=40), required=False),
    # conditions of one run, kept in English (shown with lang="en"): not translated
    "note": F(Str(max_len=600), required=False, doc="conditions of this run, in English"),
}, rules=(rule_result_subject,))

# The measuring scripts of this project: a file of its own results names one as its source
OWN_SCRIPTS = ("benchmarks/gpu_measure.py",)


def rule_measurements_source(doc, ctx, kp):
    """A file of results names where they come from: a public address, or this project's script."""
    if doc.get("url") is None and doc.get("script") is None:
        ctx.err(kp, "a measurements file names its source: url (a public address) or script (this project's "
                    "script that measured)")
    elif doc.get("url") is not None and doc.get("script") is not None:
        ctx.err(kp + ("script",), "give url or script, not both: script is for this project's own measurements")


MEASUREMENTS = Record({
    "title": F(Text(max_len=200)),
    "url": F(Url(), required=False, doc="the public address of the results (or script, for this project's own)"),
    "script": F(Enum(OWN_SCRIPTS), required=False,
                doc="this project's own measurements: the script that measured, in place of url"),
    "publisher": F(Str(max_len=80), doc="who ran the measurements; distinct publishers are independent sources"),
    "date": F(Date(), doc="publication date of the results"),
    "runtime": F(Enum(RUNTIMES)),
    "runtime_version": F(Str(max_len=40, pattern=VERSION_RE, hint='a quoted version such as "b4567" or "unknown"')),
    "notes": F(Text(max_len=1500), required=False),
    "results": F(List(RESULT, min_items=1)),
}, rules=(rule_measurements_source,))

# ---------------------------------------------------------------- prices


def rule_cloud_fields(obs, ctx, kp):
    cloud = obs.get("kind") == "cloud-hourly"
    for name in ("provider", "instance", "gpus"):
        if cloud and obs.get(name) is None:
            ctx.err(kp, f"a cloud-hourly price names its {name}")
        if not cloud and obs.get(name) is not None:
            ctx.err(kp + (name,), f"{name} applies to cloud-hourly prices only")
    if not cloud and obs.get("pricing") is not None:
        ctx.err(kp + ("pricing",), "pricing applies to cloud-hourly prices only")


OBSERVATION = Record({
    "kind": F(Enum(PRICE_KINDS)),
    "usd": F(Number(maximum=1000000), doc="USD; cloud-hourly: the whole instance per hour"),
    "date": F(Date(), doc="when the price was observed or published"),
    "source": F(Url()),
    "gpus": F(Number(integer=True, maximum=10000), required=False, doc="cloud-hourly: GPUs in the instance"),
    "provider": F(Str(max_len=60), required=False),
    "instance": F(Str(max_len=80), required=False),
    "pricing": F(Enum(CLOUD_PRICING), required=False, doc="cloud-hourly: on-demand (default), spot or reserved"),
    "note": F(Str(max_len=600), required=False, doc="how the price was read, in English (not translated)"),
}, rules=(rule_cloud_fields,))

PRICES = Record({
    "observations": F(List(OBSERVATION, min_items=1)),
})
