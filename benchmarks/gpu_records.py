"""What benchmarks/gpu_measure.py builds from a record of data/models and what it writes: the
transformers configuration of a record (or why it cannot be rebuilt), one result in the field order
of data/measurements/, and the measurements file. Plain Python: no torch needed here."""
from __future__ import annotations

SCRIPT = "benchmarks/gpu_measure.py"  # what a file of its results names as its source

# The transformers architecture of each family of data/models (the record names the model, not its code)
FAMILIES = (("llama-", "llama"), ("mistral-", "mistral"), ("mixtral-", "mixtral"), ("qwen2-5-", "qwen2"),
            ("gemma-2-", "gemma2"), ("gemma-3-", "gemma3_text"), ("phi-3-", "phi3"), ("phi-4", "phi3"),
            ("qwen3-", "qwen3"), ("qwq-", "qwen2"), ("devstral-", "mistral"), ("magistral-", "mistral"),
            ("deepseek-r1-distill-qwen-", "qwen2"), ("deepseek-r1-distill-llama-", "llama"))
# Families whose prefix above would name the wrong architecture: their layers are not all of the kinds a
# record describes (linear-attention layers, chunked attention with interleaved experts)
NOT_REBUILT = (("qwen3-next", "Gated DeltaNet linear-attention layers"), ("qwen3-5-", "Gated DeltaNet linear-attention layers"),
               ("llama-4-", "chunked attention and interleaved mixture-of-experts layers"),
               ("gemma-4-", "full-attention layers with a head size of their own that use their keys as values"))
LORA_TARGETS = ["q_proj", "k_proj", "v_proj", "o_proj", "gate_proj", "up_proj", "down_proj"]


class Unsupported(ValueError):
    """A model this script cannot rebuild (its architecture is not among FAMILIES, is in NOT_REBUILT, or MLA)."""


def model_type(model_id: str, model: dict) -> str:
    if model.get("attention") == "mla":
        raise Unsupported(f"{model_id}: multi-head latent attention is not rebuilt by this script")
    for prefix, what in NOT_REBUILT:
        if model_id.startswith(prefix):
            raise Unsupported(f"{model_id}: {what} are not rebuilt by this script")
    for prefix, kind in FAMILIES:
        if model_id.startswith(prefix):
            return "qwen3_moe" if kind == "qwen3" and model.get("experts") else kind
    raise Unsupported(f"{model_id}: no transformers architecture is known for this family")


def hf_config(model_id: str, model: dict) -> dict:
    """The keyword arguments of ``transformers.AutoConfig.for_model`` for a record of data/models."""
    kind = model_type(model_id, model)
    cfg = {"model_type": kind, "hidden_size": model["hidden_size"], "intermediate_size": model["intermediate_size"],
           "num_hidden_layers": model["layers"], "num_attention_heads": model["attention_heads"],
           "num_key_value_heads": model["kv_heads"], "head_dim": model["head_dim"], "vocab_size": model["vocab_size"],
           "tie_word_embeddings": bool(model.get("tied_embeddings")),
           "max_position_embeddings": model["max_context"]}
    window, windowed = model.get("sliding_window"), model.get("sliding_window_layers") or 0
    if kind in ("mistral", "phi3"):  # a window on every layer, or none
        if window and windowed < model["layers"]:
            raise Unsupported(f"{model_id}: a window on some layers only is not rebuilt for this architecture")
        cfg["sliding_window"] = window or None
    elif kind == "gemma2":
        cfg["sliding_window"] = window
    elif kind == "gemma3_text" and window:
        cfg["sliding_window"] = window
        # one global layer after every (pattern - 1) windowed ones
        globals_ = model["layers"] - windowed
        cfg["sliding_window_pattern"] = model["layers"] // globals_ if globals_ else model["layers"] + 1
    elif kind == "mixtral":
        cfg.update(num_local_experts=model["experts"], num_experts_per_tok=model["experts_per_token"],
                   intermediate_size=model.get("moe_intermediate_size") or model["intermediate_size"])
    elif kind == "qwen3_moe":
        cfg.update(num_experts=model["experts"], num_experts_per_tok=model["experts_per_token"],
                   moe_intermediate_size=model.get("moe_intermediate_size") or model["intermediate_size"],
                   decoder_sparse_step=1, mlp_only_layers=[])
    elif kind in ("llama", "qwen2", "qwen3") and window and windowed:
        raise Unsupported(f"{model_id}: a sliding window on this architecture is not rebuilt by this script")
    return cfg


def result(gpu: str, model_id: str, metric: str, value: float, note: str, **conditions) -> dict:
    """One result of the measurements file, in the field order of data/measurements/."""
    out = {"gpu": gpu, "gpus": 1, "model": model_id}
    if conditions.get("mode", "inference") != "inference":
        out["mode"] = conditions["mode"]
    out["weights"] = conditions.get("weights", "bf16")
    out["kv_cache"] = "bf16"
    out["context"] = conditions["context"]
    out["batch"] = conditions.get("batch", 1)
    if conditions.get("generated_tokens"):
        out["generated_tokens"] = conditions["generated_tokens"]
    out["flash_attention"] = True
    if "gradient_checkpointing" in conditions:
        out["gradient_checkpointing"] = conditions["gradient_checkpointing"]
    out["metric"] = metric
    out["value"] = round(value, 3 if value < 100 else 1)
    out["note"] = note
    return out


def measurements_file(meta: dict, results: list[dict]) -> str:
    """The YAML text of a data/measurements/ file; ``meta``: gpu_name, url (or None: the file names
    this script as its source), date, versions (dict)."""
    versions = ", ".join(f"{k} {v}" for k, v in meta["versions"].items())
    if meta.get("graph"):
        return _graph_file(meta, versions, results)
    doc = _doc(meta, "peak memory, prefill, decode and training", "transformers", "transformers", results,
        (f"Measured by {SCRIPT} on one {meta['gpu_name']} ({versions}). Each model is rebuilt "
         "from the architecture its record gives, with random bf16 weights, and its parameter count "
         "checked against the record. Attention runs through PyTorch's scaled-dot-product kernels. "
         "Peak memory is the most PyTorch allocated (torch.cuda.max_memory_allocated), without the "
         "CUDA context. Prefill is one forward pass over the prompt, keeping its KV cache, the faster "
         f"of two after a warm-up. Decode times whole greedy generate() calls of {meta.get('generate', 64)} "
         f"tokens after a 512-token prompt, batch 1, and keeps the fastest of {meta.get('repeats', 3)}: the "
         "host's time per step counts, and it is most of each step. "
         "Training runs three optimizer steps on 2,048 random tokens and keeps the fastest after the "
         "first. Full fine-tuning keeps fp32 weights and AdamW moments under bf16 autocast; it is "
         "measured only where those 16 bytes per parameter fit on the card. LoRA puts rank-16 "
         "adapters on all seven projections of the bf16 model."))
    return _text(f"# whichgpu's own measurements ({meta['gpu_name']}, {meta['date']})\n", doc)


def _doc(meta: dict, what: str, runtime: str, versioned_by: str, results: list[dict], notes: str) -> dict:
    """A file of the site's own runs: its source (the script, or ``meta["url"]``), the date, the
    runtime with the version of ``versioned_by``, the notes and the results."""
    return {"title": f"whichgpu's own measurements on one {meta['gpu_name']}: {what}",
            **({"url": meta["url"]} if meta.get("url") else {"script": SCRIPT}),
            "publisher": "whichgpu (own measurements)", "date": meta["date"], "runtime": runtime,
            "runtime_version": meta["versions"].get(versioned_by, "unknown"), "notes": notes, "results": results}


def _text(head: str, doc: dict) -> str:
    """The file's text: ``head`` and ``doc`` as YAML, in the canonical form where it can be made here."""
    import yaml

    text = head + yaml.safe_dump(doc, sort_keys=False, allow_unicode=True, width=100000)
    try:
        from generator.cli.format import format_text
    except ImportError:  # ruamel.yaml is missing where only torch is installed: `generator format` does it later
        return text
    return format_text(text, "measurements/own.yaml")


def _graph_file(meta: dict, versions: str, results: list[dict]) -> str:
    """The measurements file of ``--modes graph-decode``: runtime pytorch (the model's code is
    transformers', the step is PyTorch's captured graph, with no generate() loop around it)."""
    doc = _doc(meta, "decode at several batch sizes", "pytorch", "torch", results,
        (f"Measured by {SCRIPT} --modes graph-decode on one {meta['gpu_name']} ({versions}). Each model "
         "is rebuilt from the architecture its record gives (transformers' code for it), with random bf16 "
         "weights, and its parameter count checked against the record. A prompt fills a static KV cache; "
         "one decode step is captured as a CUDA graph and replayed, the greedy token fed back and the "
         "cache position moved between replays, so the host adds no time between the step's kernels (as "
         "serving runtimes run a step). Attention runs through PyTorch's scaled-dot-product kernels over "
         "the whole static cache. Rates count the tokens of every sequence of the batch."))
    return _text(f"# whichgpu's own measurements ({meta['gpu_name']}, decode at several batch sizes, {meta['date']})\n", doc)
