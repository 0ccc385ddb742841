"""``python -m generator estimate``: one estimate on the command line, as a table or JSON.

Exit codes: 0 done, 1 the data in data/ has problems (printed), 2 wrong usage or impossible input.
"""
from __future__ import annotations

import argparse
import difflib
import json
import math
import sys
from decimal import Decimal, InvalidOperation
from pathlib import Path

from generator.data.loader import load_dataset
from generator.estimate import training_relative_only
from generator.estimate.engine import EstimateError, check_model, check_options, estimate, resolve_options
from generator.estimate.formats import (
    CLI_RUNTIMES,
    DEFAULTS,
    ERRORS,
    GIB,
    KV_BYTES,
    LORA_TARGETS,
    MODES,
    OPTIMIZERS,
    TABLES,
    WEIGHT_FORMATS,
)
from generator.estimate.hfconfig import ConfigError, model_from_config
from generator.estimate.offload import FRONT_ENDS
from generator.facts.derive import derive

# the engine's error keys, each with its sentence (docs/assets/js/calc/tables.json)
MESSAGES = {key: spec["cli"] for key, spec in ERRORS.items()}
# the option that gives each field of the engine's model and options, named in its messages
OPTION_OF = {"parameters_b": "--params", "active_parameters_b": "--active-params", "layers": "--layers",
             "hidden_size": "--hidden", "attention_heads": "--heads", "kv_heads": "--kv-heads", "head_dim": "--head-dim",
             "vocab_size": "--vocab", "intermediate_size": "--intermediate", "experts": "--experts",
             "experts_per_token": "--experts-per-token", "context": "--context", "batch": "--batch", "gpus": "--gpus",
             "lora_rank": "--lora-rank", "host_memory_gb": "--host-memory-gb", "host_bandwidth_gbs": "--host-bandwidth-gbs",
             "pcie_gbs": "--pcie-gbs"}
# every backend a runtime may name (llama.cpp: cuda, rocm, vulkan, metal, sycl, cpu)
BACKENDS = list(dict.fromkeys(b for t in TABLES["runtimes"].values() for b in t.get("backends") or ()))


class UsageError(Exception):
    pass


def message(key: str, params: dict) -> str:
    params = dict(params)
    if "field" in params:
        params["field"] = OPTION_OF.get(params["field"], params["field"])
    return MESSAGES.get(key, key).format(**params)


HUGE_DIGITS = 30


def whole(text: str) -> int:
    """A whole number, also written with an exponent (1e6); its range is the engine's to check."""
    try:
        value = Decimal(text.strip().replace("_", ""))
    except InvalidOperation:
        raise argparse.ArgumentTypeError(f"not a whole number: '{text}'") from None
    if not value.is_finite():
        raise argparse.ArgumentTypeError(f"not a whole number: '{text}'")
    if value.adjusted() >= HUGE_DIGITS:  # far above every limit: the engine refuses it all the same, unbuilt
        return 10 ** HUGE_DIGITS * (1 if value > 0 else -1)
    if value != value.to_integral_value():
        raise argparse.ArgumentTypeError(f"not a whole number: '{text}'")
    return int(value)


def add_parser(subparsers) -> argparse.ArgumentParser:
    p = subparsers.add_parser("estimate", help="estimate memory, decode/prefill speed or relative training throughput "
                                               "of an LLM on a GPU, with the measured error of each figure")
    p.add_argument("--gpu", help="GPU id, e.g. rtx-4090 (required but with --requests)")
    p.add_argument("--gpus", type=whole, default=DEFAULTS["gpus"], help=f"number of GPUs (default {DEFAULTS['gpus']})")
    p.add_argument("--model", help="model id from data/models, e.g. llama-3-1-8b, or its Hugging Face repository "
                                    "(hf_repo), e.g. Qwen/Qwen3-32B")
    p.add_argument("--config", metavar="FILE", help="a Hugging Face config.json describing the model (parameters counted "
                   "from its shapes unless --params and --active-params give them)")
    p.add_argument("--params", type=float, help="total parameters, billions")
    p.add_argument("--layers", type=whole)
    p.add_argument("--hidden", type=whole)
    p.add_argument("--heads", type=whole)
    p.add_argument("--kv-heads", type=whole)
    p.add_argument("--head-dim", type=whole)
    p.add_argument("--vocab", type=whole)
    p.add_argument("--intermediate", type=whole)
    p.add_argument("--tied", action="store_true", help="tied input and output embeddings")
    p.add_argument("--experts", type=whole, help="routed experts per MoE layer")
    p.add_argument("--experts-per-token", type=whole, default=None)
    p.add_argument("--active-params", type=float, help="parameters used per token, billions (MoE)")
    p.add_argument("--mode", choices=MODES, default=DEFAULTS["mode"])
    p.add_argument("--weights", choices=list(WEIGHT_FORMATS), help="weight format (default bf16; f16 for llama.cpp)")
    p.add_argument("--kv-cache", choices=list(KV_BYTES), default=DEFAULTS["kv_cache"])
    p.add_argument("--context", type=whole, default=DEFAULTS["context"])
    p.add_argument("--batch", type=whole, default=DEFAULTS["batch"], help="concurrent sequences")
    p.add_argument("--runtime", choices=list(CLI_RUNTIMES) + list(FRONT_ENDS),
                   help="default: llama.cpp for GGUF formats, mlx for MLX's, else transformers; ollama and lm-studio "
                        "name the runtime they run (llama.cpp, or mlx for MLX weights in lm-studio)")
    p.add_argument("--backend", choices=BACKENDS,
                   help="llama.cpp's backend (default the vendor's: cuda on NVIDIA, rocm on AMD, metal on Apple, sycl on "
                        "Intel); cpu keeps every layer in host memory")
    p.add_argument("--gpu-layers", type=whole, help="layers kept on the GPU, the rest offloaded to the CPU (llama.cpp)")
    p.add_argument("--offload", default=DEFAULTS["offload"],
                   help="inference, llama.cpp: none (default), auto (the least that fits), layers:N (N layers in host "
                        "memory), experts (every MoE layer's routed experts in host memory, --cpu-moe) or experts:N "
                        "(--n-cpu-moe N)")
    p.add_argument("--host-memory-gb", type=float, help="host memory for what is offloaded (GiB); default: not checked")
    p.add_argument("--host-bandwidth-gbs", type=float,
                   help="host memory bandwidth, GB/s (default: 60 desktop, 240 for data-centre cards, the card's own "
                        "with unified memory)")
    p.add_argument("--pcie-gbs", type=float, help="host-to-card copy speed in prefill, GB/s (default 25)")
    p.add_argument("--no-flash-attention", action="store_true")
    p.add_argument("--no-checkpointing", action="store_true", help="training without gradient checkpointing")
    p.add_argument("--lora-rank", type=whole, default=DEFAULTS["lora_rank"],
                   help=f"LoRA and QLoRA: the adapters' rank (default {DEFAULTS['lora_rank']})")
    p.add_argument("--lora-targets", default=",".join(LORA_TARGETS),
                   help="LoRA and QLoRA: the projections adapted, comma-separated, from " + ",".join(LORA_TARGETS)
                   + " (default: all of them; torchtune's single-GPU recipes adapt q,v)")
    p.add_argument("--chunked-loss", action="store_true",
                   help="training: the loss upcasts the logits to fp32 in chunks (as torchtune's CEWithChunkedOutputLoss)")
    p.add_argument("--optimizer", choices=list(OPTIMIZERS), default=DEFAULTS["optimizer"],
                   help="training: the optimizer's state per trainable parameter (paged-adamw-8bit keeps it in host memory)")
    p.add_argument("--no-master-weights", action="store_true",
                   help="full fine-tuning in pure 16-bit: no fp32 master copy of the weights")
    p.add_argument("--optimizer-in-backward", action="store_true",
                   help="full fine-tuning: each parameter stepped as its gradient is made, the gradient freed at once")
    p.add_argument("--training-relative", action="store_true", help="training throughput relative to --reference")
    p.add_argument("--reference", help="reference GPU id (default: the latest revision's, rtx-4090)")
    p.add_argument("--format", choices=["text", "json"], default="text")
    p.add_argument("--data", default="data", help=argparse.SUPPRESS)
    _add_requests_option(p)
    p.set_defaults(func=run)
    return p


def _unknown(kind: str, ident: str, known) -> str:
    near = difflib.get_close_matches(ident, sorted(known), n=1, cutoff=0.6)
    hint = f"; did you mean '{near[0]}'?" if near else ""
    return f"unknown {kind} id '{ident}'{hint}"


def find_model(models: dict, name: str) -> dict:
    """The model whose id is ``name``, else whose Hugging Face repository (hf_repo) is, ignoring case."""
    if name in models:
        return models[name]
    wanted = name.strip().lower()
    for model in models.values():
        if str(model.get("hf_repo") or "").lower() == wanted or str(model.get("id") or "").lower() == wanted:
            return model
    names = {ident.lower(): ident for ident in models}
    names.update({str(m["hf_repo"]).lower(): m["hf_repo"] for m in models.values() if m.get("hf_repo")})
    near = [names[n] for n in difflib.get_close_matches(wanted, sorted(names), n=3, cutoff=0.5)]
    hint = "; the nearest: " + ", ".join(near) if near else ""
    raise UsageError(f"unknown model id or Hugging Face repository '{name}'{hint}")


def _custom_model(args) -> dict:
    """The model the architecture options describe; the engine checks its numbers (tables.json's limits)."""
    need = {"--params": args.params, "--layers": args.layers, "--hidden": args.hidden, "--heads": args.heads,
            "--kv-heads": args.kv_heads, "--head-dim": args.head_dim, "--vocab": args.vocab}
    missing = [k for k, v in need.items() if v is None]
    if missing:
        raise UsageError(f"give --model ID or all of --params --layers --hidden --heads --kv-heads --head-dim --vocab "
                         f"(missing {' '.join(missing)})")
    if args.experts_per_token is not None and args.experts is None:
        raise UsageError("--experts-per-token needs --experts")
    # a dense model uses all its parameters; with --experts, the engine asks for --active-params
    active = args.active_params if args.active_params is not None or args.experts is not None else args.params
    model = {"id": None, "parameters_b": args.params, "active_parameters_b": active,
             "layers": args.layers, "hidden_size": args.hidden, "attention_heads": args.heads, "kv_heads": args.kv_heads,
             "head_dim": args.head_dim, "vocab_size": args.vocab, "tied_embeddings": args.tied,
             "intermediate_size": args.intermediate if args.intermediate is not None else 4 * args.hidden,
             "attention": "mha" if args.kv_heads == args.heads else "gqa"}
    if args.experts is not None:
        model["experts"] = args.experts
        model["experts_per_token"] = (args.experts_per_token if args.experts_per_token is not None
                                      else min(2, args.experts))
    return model


def _config_model(args, arch: list[str]) -> dict:
    """The model a config.json describes (--config FILE); --params and --active-params may give its parameters."""
    if args.model:
        raise UsageError("give either --model or --config, not both")
    other = [a for a in arch if a not in ("--params", "--active-params")]
    if other:
        raise UsageError(f"--config gives the architecture; leave out {' '.join(other)}")
    path = Path(args.config)
    try:
        text = path.read_text(encoding="utf-8-sig")
    except (OSError, UnicodeDecodeError) as exc:
        raise UsageError(f"{path}: cannot read it ({exc.strerror if isinstance(exc, OSError) else 'not UTF-8 text'})") from None
    try:
        config = json.loads(text)
    except json.JSONDecodeError as exc:
        raise UsageError(f"{path}:{exc.lineno}: not valid JSON ({exc.msg})") from None
    try:
        return model_from_config(config, args.params, args.active_params)
    except ConfigError as exc:
        raise UsageError(f"{path}: {exc}") from None


def _finite(value) -> bool:
    """No NaN or infinity anywhere in ``value`` (JSON has neither)."""
    if isinstance(value, float):
        return math.isfinite(value)
    if isinstance(value, dict):
        return all(_finite(v) for v in value.values())
    if isinstance(value, (list, tuple)):
        return all(_finite(v) for v in value)
    return True


def _gib(x) -> str:
    return "-" if x is None else f"{x / GIB:.2f} GiB"


def _rate(x: float, decimals: int) -> str:
    """tokens/s with ``decimals``, or two significant digits where those would print 0."""
    return f"{x:.{decimals}f}" if x >= 10 ** -decimals or x == 0 else f"{x:.2g}"


def _band(e) -> str:
    """The band on results the fit has not seen (leave-one-source-out), then the fitted one."""
    if not e:
        return "no measurements"
    scope = "" if e.get("scope") != "all" else ", all runtimes"
    fitted = (f"fitted on {e['count']} measurements{scope}, {e['sources']} sources: +-{e['median_pct']:g} % median, "
              f"p90 {e['p90_pct']:g} %")
    unseen = e.get("unseen") or {}
    if unseen.get("median_pct") is None:
        return fitted
    return (f"+-{unseen['median_pct']:g} % median, p90 {unseen['p90_pct']:g} % on results the fit has not seen "
            f"(each source left out in turn; {fitted})")


def _text(r: dict) -> str:
    rows = []
    err = r["error"]
    off = r.get("offload")
    if r.get("memory"):
        m = r["memory"]
        for key in ("weights_bytes", "kv_cache_bytes", "activations_bytes", "overhead_bytes", "gradients_bytes",
                    "optimizer_bytes"):
            if m[key] or key in ("weights_bytes", "kv_cache_bytes"):
                rows.append((key.replace("_bytes", "").replace("_", " "), _gib(m[key]),
                             _band(err.get("weights_bytes")) if key == "weights_bytes" else ""))
        rows.append(("total per GPU", _gib(m["total_bytes"]), _band(err.get("memory"))))
        if m.get("host_bytes"):
            what = ("the paged optimizer's state" if off is None
                    else "offloaded weights and cache" if off["host_layers"] or off["expert_layers"]
                    else "token embeddings, which llama.cpp keeps there")
            rows.append(("in host memory", _gib(m["host_bytes"]), what))
        if off and (off["host_layers"] or off["expert_layers"]):
            rows.append(("offload", _offload_text(off), ""))
        rows.append(("usable on the GPU", _gib(r["usable_bytes"]), ""))
        if r.get("reserved_bytes") is not None:
            rows.append(("vLLM reserves (90 %)", _gib(r["reserved_bytes"]), "pre-allocated whatever the model needs"))
        rows.append(("fits", "yes" if r["fits"] else "no", _short_text(r.get("shortfall"))))
        for s in (r.get("shortfall") or {}).get("suggestions") or ():
            rows.append(("would fit", _suggestion_text(s), ""))
        if r.get("max_context") is not None:
            rows.append(("longest context that fits", f"{r['max_context']:,} tokens", ""))
    if r.get("decode_tokens_per_s") is not None:
        rows.append(("decode", f"{_rate(r['decode_tokens_per_s'], 1)} tokens/s", _band(err.get("decode_tokens_per_s"))))
    if r.get("prefill_tokens_per_s") is not None:
        rows.append(("prefill", f"{_rate(r['prefill_tokens_per_s'], 0)} tokens/s", _band(err.get("prefill_tokens_per_s"))))
    if r.get("training_relative") is not None:
        ref = r["basis"].get("reference")
        rows.append((f"training vs {ref}", f"{r['training_relative']:.2f}x", _band(err.get("training_relative"))))
    width = max(len(a) for a, _, _ in rows)
    vwidth = max(len(b) for _, b, _ in rows)
    b = r["basis"]
    head = " ".join(f"{k}={b[k]}" for k in ("model", "gpu", "gpus", "mode", "weights", "kv_cache", "context", "batch",
                                            "runtime") if b.get(k) is not None)
    lines = [head] + [f"  {a:<{width}}  {v:>{vwidth}}  {c}".rstrip() for a, v, c in rows]
    return "\n".join(lines) + "\n"


def _offload_text(off: dict) -> str:
    parts = []
    if off["host_layers"]:
        parts.append(f"{off['host_layers']} layers")
    if off["expert_layers"]:
        parts.append(f"the routed experts of {off['expert_layers']} layers")
    return " and ".join(parts) + " in host memory"


def _short_text(short) -> str:
    if not short:
        return ""
    out = []
    if short["bytes"]:
        out.append(f"{_gib(short['bytes'])} short on the card")
    if short["host_bytes"]:
        out.append(f"{_gib(short['host_bytes'])} short in host memory")
    return "; ".join(out) + "; no speed is estimated"


def _suggestion_text(s: dict) -> str:
    if s["kind"] == "weights":
        return f"--weights {s['weights']}"
    if s["kind"] == "context":
        return f"--context {s['context']:,} (or shorter)"
    if s["kind"] == "offload":
        return f"--offload {s['offload']} ({_gib(s['host_bytes'])} in host memory)"
    return f"--gpus {s['gpus']}"


def _options(args) -> dict:
    return {"mode": args.mode, "weights": args.weights, "kv_cache": args.kv_cache, "context": args.context,
            "batch": args.batch, "runtime": args.runtime, "gpus": args.gpus, "gpu_layers": args.gpu_layers,
            "flash_attention": not args.no_flash_attention, "checkpointing": not args.no_checkpointing,
            "lora_rank": args.lora_rank, "optimizer": args.optimizer, "master_weights": not args.no_master_weights,
            "optimizer_in_backward": args.optimizer_in_backward, "chunked_loss": args.chunked_loss,
            "lora_targets": [t.strip() for t in args.lora_targets.split(",")], "offload": args.offload,
            "host_memory_gb": args.host_memory_gb, "host_bandwidth_gbs": args.host_bandwidth_gbs,
            "pcie_gbs": args.pcie_gbs, "backend": args.backend}


def _check_input(args) -> dict | None:
    """What needs no data, checked before it is read: the custom model (returned) and the options."""
    if args.training_relative:
        return None
    arch = [f"--{n.replace('_', '-')}" for n in ("params", "layers", "hidden", "heads", "kv_heads", "head_dim", "vocab",
                                                   "intermediate", "experts", "experts_per_token", "active_params")
            if getattr(args, n) is not None]
    if args.model and arch:
        raise UsageError(f"give either --model or the architecture ({' '.join(arch)}), not both")
    if getattr(args, "config", None):
        model = _config_model(args, arch)
        check_model(model)
        check_options(resolve_options(_options(args)), model)
        return model
    if args.model:
        return None
    model = _custom_model(args)
    check_model(model)
    check_options(resolve_options(_options(args)), model)
    return model


def _estimate(args, facts, model: dict | None) -> dict:
    bundle = facts.bundle

    def published(reference=None):
        """The fitted constants and error table, from the build's cache when the data is unchanged."""
        table = dict(facts.estimates)
        if reference:
            table["reference"] = bundle.gpus[reference]
        return table

    if args.gpu not in bundle.gpus:
        raise UsageError(_unknown("GPU", args.gpu, bundle.gpus))
    if args.reference and args.reference not in bundle.gpus:
        raise UsageError(_unknown("GPU", args.reference, bundle.gpus))
    gpu = bundle.gpus[args.gpu]
    if args.training_relative:
        return training_relative_only(gpu, published(args.reference))
    if model is None:
        model = find_model(bundle.models, args.model)
    options = _options(args)
    cards = {"runtime_cards": facts.runtime_cards}
    estimate(model, gpu, options, cards)  # reject impossible input before fitting the constants
    return estimate(model, gpu, options, {**published(args.reference), **cards})


def load_facts(data: str):
    """The derived facts of the data folder, or None after printing its errors."""
    ds, problems = load_dataset(Path(data))
    errors = [p for p in problems if p.level == "error"]
    if ds is None or errors:
        for p in errors:
            print(p, file=sys.stderr)
        print(f"{len(errors)} error(s) in {data}; nothing was estimated.", file=sys.stderr)
        return None
    return derive(ds)


def _run(args) -> int:
    model = _check_input(args)
    facts = load_facts(args.data)
    if facts is None:
        return 1
    result = _estimate(args, facts, model)
    if not _finite(result):
        raise UsageError("these inputs take the estimate out of range (a figure is infinite or not a number)")
    if args.format == "json":
        print(json.dumps(result, indent=2, sort_keys=True, allow_nan=False))
    else:
        sys.stdout.write(_text(result))
    return 0


def _add_requests_option(p) -> None:
    p.add_argument("--requests", metavar="FILE.jsonl",
                   help="one JSON object of these options per line (- reads standard input); one JSON result per "
                        "line, in the same order, a bad line answered by {\"error\": ...}")
    p.set_defaults(options_parser=p)


def _require_gpu(args) -> None:
    """--gpu is required but with --requests: said as argparse says a missing option."""
    if args.gpu is None:
        said = "the following arguments are required: --gpu (or --requests FILE.jsonl)"
        parser = getattr(args, "options_parser", None)
        if parser is None:
            raise UsageError(said)
        parser.error(said)


def run(args) -> int:
    """One estimate from the options (``--requests`` is answered by generator/cli/estimate_batch.py,
    which the command line calls instead: generator/cli/main.py)."""
    try:
        _require_gpu(args)
        return _run(args)
    except UsageError as exc:
        print(f"error: {exc}", file=sys.stderr)
    except EstimateError as exc:
        print(f"error: {message(exc.key, exc.params)}", file=sys.stderr)
    return 2
