"""One estimate: memory per GPU, whether it fits, decode and prefill speed, relative training
throughput, each with its measured error band and the basis it was computed from.

``estimate(model, gpu, options, table)`` is the function the calculator page, the model pages and
the CLI call; ``docs/assets/js/calc/estimate.mjs`` is its twin in the browser. ``table`` is the
published data: ``{"constants": fit_constants(...), "errors": accuracy(...), "reference": gpu dict}``.
Invalid input gives ``EstimateError(key, params)``; keys are translated by the caller.
"""
from __future__ import annotations

from generator.estimate.formats import (
    DEFAULTS,
    ERRORS,
    GGUF_ONLY_RUNTIMES,
    GGUF_RUNTIME_LOADS,
    KV_BY_RUNTIME,
    KV_BYTES,
    LIMITS,
    LORA_TARGETS,
    MODE_WEIGHTS,
    MODES,
    OPTIMIZERS,
    RUNTIMES,
    STATE_KINDS,
    TABLES,
    TRAINING_RUNTIMES,
    WEIGHT_FORMATS,
    default_runtime,
    default_weights,
    is_gguf,
)
from generator.estimate.memory import (
    SERVING_RUNTIMES,
    VLLM_UTILIZATION,
    inference_memory,
    memory_constants,
    training_memory,
    usable_bytes,
)
from generator.estimate.offload import (
    adjust_decode_terms,
    adjust_prefill_terms,
    backends_of,
    chosen_split,
    default_backend,
    host_bandwidth_gbs,
    host_limit_bytes,
    moe_layers,
    parse_offload,
    resolve_front_end,
    smaller_formats,
    split_memory,
    weights_of,
)
from generator.estimate.speed import (
    decode_from_terms,
    decode_terms,
    matrix_tflops,
    prefill_from_terms,
    prefill_terms,
    relative_training,
    speed_constants,
)

MAX_CONTEXT_SEARCH = LIMITS["context_search"]
MODEL_LIMITS = LIMITS["model"]


class EstimateError(ValueError):
    """Input the engine cannot estimate; ``key`` is one of ``formats.ERRORS`` (tables.json)."""

    def __init__(self, key: str, params: dict | None = None):
        if key not in ERRORS:
            raise KeyError(f"{key} is not an error key of tables.json")
        super().__init__(key)
        self.key = key
        self.params = params or {}


def check_limit(name: str, value, spec: dict) -> None:
    """``value`` within ``spec`` (tables.json's limits: integer, min, minExclusive, max), else EstimateError."""
    number = isinstance(value, (int, float)) and not isinstance(value, bool)
    if spec.get("integer") and not isinstance(value, int):
        number = False
    if number and isinstance(value, float) and value != value:  # NaN
        number = False
    low = spec.get("min", 0)
    if not number or value < low or (spec.get("minExclusive") and value == low):
        raise EstimateError("est.err.positive" if spec.get("integer") else "est.err.positive_number", {"field": name})
    if value > spec["max"]:
        raise EstimateError("est.err.above_max", {"field": name, "max": spec["max"]})


def check_model(model: dict) -> None:
    """The model's shape within tables.json's limits, then the rules its numbers obey together."""
    for name in ("parameters_b", "layers", "hidden_size", "attention_heads", "kv_heads", "head_dim", "vocab_size"):
        check_limit(name, model.get(name), MODEL_LIMITS[name])
    for name in ("intermediate_size", "experts", "experts_per_token", "per_layer_embedding_dim"):  # optional
        if model.get(name) is not None:
            check_limit(name, model[name], MODEL_LIMITS[name])
    p = model["parameters_b"]
    if model["kv_heads"] > model["attention_heads"]:
        raise EstimateError("est.err.kv_heads_above_heads")
    if model["attention_heads"] % model["kv_heads"]:
        raise EstimateError("est.err.heads_not_divisible")
    embeddings = model["vocab_size"] * model["hidden_size"] * (1 if model.get("tied_embeddings") else 2)
    embeddings += model["vocab_size"] * model["layers"] * (model.get("per_layer_embedding_dim") or 0)
    if embeddings >= p * 1e9:
        raise EstimateError("est.err.embeddings_above_params")
    experts, active = model.get("experts"), model.get("active_parameters_b")
    if experts is not None:
        if model.get("experts_per_token") is None or model["experts_per_token"] > experts:
            raise EstimateError("est.err.experts_per_token")
        if active is None:
            raise EstimateError("est.err.experts_without_active")
    if active is not None and not (isinstance(active, (int, float)) and not isinstance(active, bool) and 0 < active <= p):
        raise EstimateError("est.err.active_above_total")
    if experts is None and active is not None and active != p:
        raise EstimateError("est.err.active_without_experts")
    check_layer_kinds(model)


def check_layer_kinds(model: dict) -> None:
    """State layers and MLP-only blocks within the layers; state layers of a known kind with its figures;
    KV-shared layers fewer than the attention layers, their sliding-window ones within both counts."""
    state, mlp_only = model.get("state_layers") or 0, model.get("mlp_only_layers") or 0
    shared, shared_sliding = model.get("kv_shared_layers") or 0, model.get("kv_shared_sliding_layers") or 0
    if any(not isinstance(v, int) or isinstance(v, bool) or v < 0 for v in (state, mlp_only, shared, shared_sliding)):
        raise EstimateError("est.err.layer_kinds")
    if state + mlp_only > model["layers"]:
        raise EstimateError("est.err.layer_kinds")
    attention = model["layers"] - state - mlp_only
    sliding = (model.get("sliding_window_layers") or 0) if model.get("sliding_window") else 0
    if shared and (shared >= attention or shared_sliding > min(shared, sliding)
                   or shared - shared_sliding > attention - min(sliding, attention)):
        raise EstimateError("est.err.layer_kinds")
    if state:
        needs = STATE_KINDS.get(model.get("state_kind"))
        if needs is None or any(not (isinstance(model.get(n), int) and not isinstance(model[n], bool)
                                     and 0 < model[n] <= TABLES["state"]["max_figure"]) for n in needs):
            raise EstimateError("est.err.layer_kinds")


def resolve_options(options: dict | None) -> dict:
    """Options with their defaults: runtime from the format, format from the runtime."""
    o = dict(DEFAULTS)
    o.update({k: v for k, v in (options or {}).items() if v is not None})
    o = resolve_front_end(o)
    if o.get("runtime") is None:
        o["runtime"] = default_runtime(o["weights"]) if o.get("weights") else "transformers"
    if o.get("weights") is None:
        o["weights"] = TABLES["modes"].get(o["mode"], {}).get("default_weights") or default_weights(o["runtime"])
    return o


def check_options(o: dict, model: dict) -> None:
    """Each option alone, then what the runtime and the mode accept together."""
    _check_values(o, model)
    _check_runtime(o)
    check_offload(o, model)


def _check_values(o: dict, model: dict) -> None:
    for name, allowed in (("mode", MODES), ("runtime", RUNTIMES), ("weights", WEIGHT_FORMATS), ("kv_cache", KV_BYTES),
                          ("optimizer", OPTIMIZERS)):
        if o[name] not in allowed:
            raise EstimateError(f"est.err.{name}")
    for name in ("context", "batch", "gpus", "lora_rank"):
        check_limit(name, o[name], LIMITS[name])
    targets = o["lora_targets"]
    if (not isinstance(targets, (list, tuple)) or not targets or len(set(targets)) != len(targets)
            or any(t not in LORA_TARGETS for t in targets)):
        raise EstimateError("est.err.lora_targets", {"targets": ", ".join(LORA_TARGETS)})
    if o["gpu_layers"] is not None and not (isinstance(o["gpu_layers"], int) and 0 <= o["gpu_layers"] <= model["layers"]):
        raise EstimateError("est.err.gpu_layers", {"layers": model["layers"]})
    longest = max(model.get("max_context") or 0, model.get("max_context_scaled") or 0)
    if longest and o["context"] > longest:
        raise EstimateError("est.err.context_model", {"context": o["context"], "max": longest})
    if o["gpus"] > model["layers"]:
        raise EstimateError("est.err.gpus_split", {"gpus": o["gpus"], "layers": model["layers"]})


def _check_runtime(o: dict) -> None:
    own = WEIGHT_FORMATS[o["weights"]].get("runtimes")
    if own and o["runtime"] not in own:
        raise EstimateError("est.err.format_only_runtime", {"weights": o["weights"], "runtime": o["runtime"],
                                                            "runtimes": ", ".join(own)})
    loads = TABLES["runtimes"][o["runtime"]].get("loads")
    if loads and o["runtime"] not in GGUF_ONLY_RUNTIMES and o["weights"] not in loads:
        raise EstimateError("est.err.runtime_loads", {"weights": o["weights"], "runtime": o["runtime"],
                                                      "loads": ", ".join(loads)})
    if is_gguf(o["weights"]) and o["runtime"] not in GGUF_ONLY_RUNTIMES:
        raise EstimateError("est.err.gguf_runtime", {"weights": o["weights"], "runtime": o["runtime"]})
    if o["runtime"] in GGUF_ONLY_RUNTIMES and not is_gguf(o["weights"]) and o["weights"] not in GGUF_RUNTIME_LOADS[o["runtime"]]:
        raise EstimateError("est.err.format_runtime", {"weights": o["weights"], "runtime": o["runtime"]})
    if o["kv_cache"] not in KV_BY_RUNTIME.get(o["runtime"], tuple(KV_BYTES)):
        raise EstimateError("est.err.kv_runtime", {"kv_cache": o["kv_cache"], "runtime": o["runtime"]})
    if o["mode"] != "inference":
        if o["runtime"] not in TRAINING_RUNTIMES:
            raise EstimateError("est.err.training_runtime", {"runtime": o["runtime"]})
        if o["mode"] == "qlora" and o["weights"] not in MODE_WEIGHTS["qlora"]:
            raise EstimateError("est.err.qlora_weights")
        if o["mode"] in ("full", "lora") and o["weights"] not in MODE_WEIGHTS[o["mode"]]:
            raise EstimateError("est.err.training_weights", {"weights": o["weights"]})
        if o["gpu_layers"] is not None:
            raise EstimateError("est.err.gpu_layers_training")


# ------------------------------------------------------------ offload, backends, runtime's cards
def check_offload(o: dict, model: dict) -> None:
    """offload, host memory and bandwidth, PCIe, backend: each alone, then against the runtime and the mode."""
    for name in ("host_memory_gb", "host_bandwidth_gbs", "pcie_gbs"):
        if o.get(name) is not None:
            check_limit(name, o[name], LIMITS[name])
    spec = parse_offload(o.get("offload") or "none", model)
    if spec is None:
        raise EstimateError("est.err.offload", {"layers": model["layers"], "moe_layers": moe_layers(model)})
    if spec["kind"] != "none" and o["mode"] != "inference":
        raise EstimateError("est.err.offload_training")
    if spec["kind"] != "none" and o.get("gpu_layers") is not None:
        raise EstimateError("est.err.offload_gpu_layers")
    allowed = TABLES["runtimes"][o["runtime"]].get("offload") or ()
    if spec["kind"] in ("layers", "experts", "auto") and spec["kind"] not in allowed and not (spec["kind"] == "auto" and allowed):
        raise EstimateError("est.err.offload_runtime", {"runtime": o["runtime"], "kind": spec["kind"]})
    if spec["kind"] == "experts" and not moe_layers(model):
        raise EstimateError("est.err.offload_experts")
    if o.get("backend") is not None:
        table = backends_of(o["runtime"]) or {}
        if o["backend"] not in table:
            raise EstimateError("est.err.backend", {"runtime": o["runtime"], "backend": o["backend"],
                                                    "backends": ", ".join(table) or "none to choose"})


def check_backend_card(o: dict, gpu: dict) -> None:
    """The chosen backend runs the card's vendor."""
    vendors = (backends_of(o["runtime"]) or {}).get(o.get("backend") or "")
    if o.get("backend") and vendors is not None and gpu.get("vendor") not in vendors:
        raise EstimateError("est.err.backend_card", {"runtime": o["runtime"], "backend": o["backend"],
                                                     "vendor": gpu.get("vendor")})


def check_runtime_card(o: dict, gpu: dict, runtime_cards: dict | None) -> None:
    """``runtime_cards`` (runtime -> the card ids some build of its software stack runs, from
    data/software.yaml): a runtime listed there runs only those cards."""
    cards = (runtime_cards or {}).get(o["runtime"])
    if cards is not None and gpu.get("id") not in cards:
        raise EstimateError("est.err.runtime_card", {"runtime": o["runtime"], "gpu": gpu.get("name") or gpu.get("id")})


def shortfall(model: dict, gpu: dict, o: dict, constants: dict | None, mem: dict, limit: float) -> dict:
    """How far a setup is from fitting and what would make it fit: a smaller format, a shorter context,
    offload (where the runtime offloads), more cards."""
    host_limit = host_limit_bytes(o)
    out = {"bytes": max(0.0, mem["total_bytes"] - limit),
           "host_bytes": max(0.0, mem["host_bytes"] - host_limit) if host_limit is not None else 0.0,
           "suggestions": []}
    if mem["total_bytes"] <= limit:
        return out
    tries = out["suggestions"]
    for weights in smaller_formats(o):
        trial = {**o, "weights": weights}
        if _memory(model, trial, constants, o["context"])["total_bytes"] <= limit:
            tries.append({"kind": "weights", "weights": weights})
            break
    context = max_context(model, o, constants, limit)
    if context is not None:
        tries.append({"kind": "context", "context": context})
    if TABLES["runtimes"][o["runtime"]].get("offload") and o.get("backend") != "cpu":
        split = chosen_split(model, {**o, "offload": "auto"}, constants, limit, host_limit)
        trial = split_memory(model, o, constants, o["context"], split)
        if trial["total_bytes"] <= limit and (host_limit is None or trial["host_bytes"] <= host_limit):
            kind = "layers" if split["host_layers"] else "experts"
            n = split["host_layers"] or split["expert_layers"]
            tries.append({"kind": "offload", "offload": f"{kind}:{n}", "host_bytes": trial["host_bytes"]})
    for n in range(o["gpus"] + 1, LIMITS["cards"] + 1):
        if _memory(model, {**o, "gpus": n}, constants, o["context"])["total_bytes"] <= limit:
            tries.append({"kind": "gpus", "gpus": n})
            break
    return out


def error_band(errors: dict | None, metric: str, runtime: str):
    """The error entry of a metric for a runtime, else the metric's 'all' entry, else None; with
    its ``in_sample`` and ``unseen`` (leave-one-source-out) bands (see ``with_bands``)."""
    rows = (errors or {}).get(metric) or {}
    entry = rows.get(runtime)
    if entry and entry.get("count"):
        return with_bands(dict(entry, scope=runtime))
    entry = rows.get("all")
    return with_bands(dict(entry, scope="all")) if entry and entry.get("count") else None


def with_bands(entry: dict) -> dict:
    """``entry`` with ``in_sample`` {median_pct, p90_pct, count, sources} and ``unseen`` (the same,
    leave-one-source-out) where an older table gives only the flat keys (loso_median_pct and
    loso_p90_pct for the unseen band; None where it has none)."""
    if "in_sample" not in entry:
        entry["in_sample"] = {k: entry.get(k) for k in ("median_pct", "p90_pct", "count", "sources")}
    if "unseen" not in entry:
        median, p90 = entry.get("loso_median_pct"), entry.get("loso_p90_pct")
        entry["unseen"] = None if median is None else {"median_pct": median, "p90_pct": p90,
                                                       "count": entry.get("count"), "sources": None}
    return entry


def _memory(model: dict, o: dict, constants: dict | None, context: int) -> dict:
    if o["mode"] == "inference" and o.get("split"):
        return split_memory(model, o, constants, context, o["split"])
    if o["mode"] == "inference":
        return inference_memory(model, o["weights"], o["kv_cache"], context, o["batch"], o["runtime"], o["gpus"],
                                o["gpu_layers"], o["flash_attention"], constants, parts=weights_of(model, o))
    return training_memory(model, o["mode"], "bf16" if o["mode"] == "qlora" else o["weights"], context, o["batch"],
                           o["gpus"], o["lora_rank"], o["checkpointing"], o["flash_attention"], constants, o["runtime"],
                           o["optimizer"], o["master_weights"], o["optimizer_in_backward"], o["chunked_loss"],
                           o["lora_targets"])


def max_context(model: dict, o: dict, constants: dict | None, limit_bytes: float):
    """Longest context (tokens) whose memory fits ``limit_bytes`` per GPU, capped at the model's max_context."""
    cap = model.get("max_context") or MAX_CONTEXT_SEARCH
    if _memory(model, o, constants, 1)["total_bytes"] > limit_bytes:
        return None
    lo, hi = 1, cap
    if _memory(model, o, constants, hi)["total_bytes"] <= limit_bytes:
        return hi
    while hi - lo > 1:
        mid = (lo + hi) // 2
        if _memory(model, o, constants, mid)["total_bytes"] <= limit_bytes:
            lo = mid
        else:
            hi = mid
    return lo


def estimate(model: dict, gpu: dict, options: dict | None = None, table: dict | None = None, *,
             advice: bool = True) -> dict:
    """Everything the site shows for one model on one GPU (or ``gpus`` of them) under ``options``.
    With ``advice`` false, a setup that does not fit gets no ``shortfall`` key (what would make it
    fit: a search over formats, contexts, offload and card counts): tables of many setups print
    only whether each fits."""
    check_model(model)
    if not (isinstance(gpu.get("memory_gb"), (int, float)) and gpu["memory_gb"] > 0
            and isinstance(gpu.get("memory_bandwidth_gbs"), (int, float)) and gpu["memory_bandwidth_gbs"] > 0):
        raise EstimateError("est.err.gpu_figures")
    o = resolve_options(options)
    check_options(o, model)
    o["parts_memo"] = {}  # this estimate's weights_parts by (weights, runtime): see offload.weights_of
    table = table or {}
    check_backend_card(o, gpu)
    check_runtime_card(o, gpu, table.get("runtime_cards"))
    if o.get("backend"):
        gpu = {**gpu, "backend": o["backend"]}
    constants, errors = table.get("constants") or {}, table.get("errors") or {}
    usable = usable_bytes(gpu)
    reserved = usable * VLLM_UTILIZATION if o["runtime"] in SERVING_RUNTIMES else None
    limit = reserved if reserved is not None else usable
    host_limit = host_limit_bytes(o)
    o["split"] = chosen_split(model, o, constants, limit, host_limit) if o["mode"] == "inference" else None
    mem = _memory(model, o, constants, o["context"])
    fits = mem["total_bytes"] <= limit and (host_limit is None or mem["host_bytes"] <= host_limit)
    decode = prefill = None
    if o["mode"] == "inference" and fits:
        decode, prefill = _speeds(model, gpu, o, constants)
    ref = table.get("reference")
    relative = None
    if o["mode"] != "inference" and ref:
        relative = relative_training(gpu, ref, constants.get("relative"))
    memory = {k: mem[k] for k in ("weights_bytes", "kv_cache_bytes", "activations_bytes", "overhead_bytes",
                                  "gradients_bytes", "optimizer_bytes", "total_bytes", "host_bytes")}
    metric_peak = "peak_memory_gib" if o["mode"] == "inference" else "training_peak_memory_gib"
    band = {"memory": error_band(errors, metric_peak, o["runtime"]),
            "weights_bytes": error_band(errors, "weights_gib", o["runtime"]),
            "decode_tokens_per_s": error_band(errors, "decode_tokens_per_s", o["runtime"]) if decode is not None else None,
            "prefill_tokens_per_s": error_band(errors, "prefill_tokens_per_s", o["runtime"]) if prefill is not None else None,
            "training_relative": error_band(errors, "training_relative", "all") if relative is not None else None}
    basis = {"model": model.get("id"), "gpu": gpu.get("id"), "mode": o["mode"], "weights": o["weights"],
             "kv_cache": o["kv_cache"], "context": o["context"], "batch": o["batch"], "gpus": o["gpus"],
             "runtime": o["runtime"], "flash_attention": o["flash_attention"], "checkpointing": o["checkpointing"],
             "lora_rank": o["lora_rank"], "optimizer": o["optimizer"], "master_weights": o["master_weights"],
             "optimizer_in_backward": o["optimizer_in_backward"], "chunked_loss": o["chunked_loss"],
             "lora_targets": [t for t in LORA_TARGETS if t in o["lora_targets"]], "gpu_layers": mem["gpu_layers"],
             "bits_per_weight": mem.get("bits_per_weight"), "weights_file_bytes": mem["weights_file_bytes"],
             "usable_bytes": usable, "memory_bandwidth_gbs": gpu["memory_bandwidth_gbs"],
             "matrix_tflops": matrix_tflops(gpu, o["weights"], o["runtime"]),
             "speed_constants": speed_constants(constants, o["runtime"], gpu),
             "memory_constants": memory_constants(constants, o["runtime"]),
             "relative_constants": constants.get("relative"), "reference": ref.get("id") if ref else None}
    if "trainable_params" in mem:
        basis["trainable_params"] = mem["trainable_params"]
    out = {"memory": memory, "fits": fits, "usable_bytes": usable, "reserved_bytes": reserved,
           "max_context": max_context(model, o, constants, limit) if o["mode"] == "inference" else None,
           "decode_tokens_per_s": decode, "prefill_tokens_per_s": prefill, "training_relative": relative,
           "error": band, "basis": basis}
    if o["mode"] == "inference":
        split = o["split"]
        basis.update({"front_end": o.get("front_end"), "backend": backend_name(o, gpu), "offload": o.get("offload"),
                      "host_layers": split["host_layers"], "expert_layers": split["expert_layers"],
                      "host_memory_gb": o.get("host_memory_gb"),
                      "host_bandwidth_gbs": host_bandwidth_gbs(gpu, o.get("host_bandwidth_gbs")),
                      "pcie_gbs": o.get("pcie_gbs") or basis["speed_constants"]["pcie_gbs"]})
        out["offload"] = {"host_layers": split["host_layers"], "expert_layers": split["expert_layers"],
                          "host_bytes": mem["host_bytes"], "host_limit_bytes": host_limit,
                          "experts_host_bytes": mem.get("experts_host_bytes", 0.0)}
        if fits or advice:
            out["shortfall"] = None if fits else shortfall(model, gpu, o, constants, mem, limit)
    return out


def backend_name(o: dict, gpu: dict):
    """The backend the estimate ran with: the one chosen, else the runtime's default for the card's vendor."""
    return o.get("backend") or default_backend(o["runtime"], gpu)


def _speeds(model: dict, gpu: dict, o: dict, constants: dict | None):
    """Decode and prefill tokens/s of a setup that fits, with its split between card and host."""
    split, layers = o["split"], model["layers"]
    k = speed_constants(constants, o["runtime"], gpu)
    t = decode_terms(model, gpu, o["weights"], o["kv_cache"], o["context"], o["batch"], o["runtime"], o["gpus"],
                     layers - split["host_layers"], constants)
    decode = decode_from_terms(adjust_decode_terms(t, model, gpu, o, k, split), k)
    if o.get("backend") == "cpu":
        return decode, None
    p = prefill_terms(model, gpu, o["weights"], o["context"], o["batch"], o["runtime"], o["gpus"],
                      layers - split["host_layers"], constants)
    if p["compute_s"] is None:
        return decode, None
    return decode, prefill_from_terms(adjust_prefill_terms(p, model, o, k, split), k)


def training_relative_only(gpu: dict, table: dict | None = None) -> dict:
    """Relative training throughput of ``gpu`` against ``table['reference']``, with its band and basis."""
    table = table or {}
    ref = table.get("reference")
    if not ref:
        raise EstimateError("est.err.reference")
    coeffs = (table.get("constants") or {}).get("relative")
    value = relative_training(gpu, ref, coeffs)
    return {"memory": None, "fits": None, "decode_tokens_per_s": None, "prefill_tokens_per_s": None,
            "training_relative": value,
            "error": {"training_relative": error_band(table.get("errors"), "training_relative", "all")},
            "basis": {"gpu": gpu.get("id"), "reference": ref.get("id"), "relative_constants": coeffs,
                      "gpu_tflops": gpu.get("fp16_tensor_tflops") or gpu.get("fp32_tflops"),
                      "reference_tflops": ref.get("fp16_tensor_tflops") or ref.get("fp32_tflops"),
                      "gpu_bandwidth_gbs": gpu.get("memory_bandwidth_gbs"),
                      "reference_bandwidth_gbs": ref.get("memory_bandwidth_gbs")}}
