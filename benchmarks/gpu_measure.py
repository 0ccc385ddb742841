"""Our own measurements, where a GPU is at hand: peak memory and speed of the catalogue's models,
built from their recorded architecture with random weights.

    python -m benchmarks.gpu_measure --gpu h100-sxm --url URL [--models llama-3-2-1b,qwen2-5-7b]
        [--contexts 512,4096,16384] [--generate 64] [--repeats 3] [--train-context 2048] [--train-batch 1]
        [--modes inference,decode,lora,full] [--out data/measurements/whichgpu-h100-sxm.yaml] [--device cuda]

For each model of ``data/models/`` (``--models``), the script builds the Hugging Face transformers
model its fields describe (layers, widths, heads, experts, window, tied head; ``hf_config``) with
random bf16 weights, checks that it has the recorded parameter count (within 2 %), then measures:

- inference peak memory (``torch.cuda.max_memory_allocated``) after a forward pass over a prompt
  of each ``--contexts`` length with the KV cache kept: ``peak_memory_gib``;
- decode speed: ``--generate`` new tokens after a 512-token prompt, the whole ``generate()`` call
  timed, the fastest of ``--repeats`` (``generated_tokens``): ``decode_tokens_per_s``; ``--modes
  decode`` measures it alone;
- training steps on ``--train-context`` tokens: full fine-tuning (fp32 weights and AdamW, bf16
  autocast: 16 bytes per parameter), and LoRA rank 16 on the attention and MLP projections of the
  bf16 model (peft), each with gradient checkpointing on and off: ``peak_memory_gib`` and
  ``training_tokens_per_s``, with ``mode`` and ``gradient_checkpointing``. A model whose step does
  not fit is skipped and said so.

The results are written as one measurements file (validated by ``python -m generator validate``
like every other source): the GPU, the software versions, the date and ``--url`` (the public
address of this script at the commit that measured) are its source. Only torch, transformers and
peft are needed, and only here: neither the build nor the tests import them.
"""
from __future__ import annotations

import argparse
import datetime as dt
import sys
import time
import traceback
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))
GIB = 1024 ** 3
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
    import yaml

    versions = ", ".join(f"{k} {v}" for k, v in meta["versions"].items())
    doc = {
        "title": f"whichgpu's own measurements on one {meta['gpu_name']}: peak memory, prefill, decode and training",
        **({"url": meta["url"]} if meta.get("url") else {"script": SCRIPT}),
        "publisher": "whichgpu (own measurements)",
        "date": meta["date"],
        "runtime": "transformers",
        "runtime_version": meta["versions"].get("transformers", "unknown"),
        "notes": (f"Measured by {SCRIPT} on one {meta['gpu_name']} ({versions}). Each model is rebuilt "
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
                  "adapters on all seven projections of the bf16 model."),
        "results": results,
    }
    head = f"# whichgpu's own measurements ({meta['gpu_name']}, {meta['date']})\n"
    text = head + yaml.safe_dump(doc, sort_keys=False, allow_unicode=True, width=100000)
    try:
        from generator.cli.format import format_text
    except ImportError:  # ruamel.yaml is missing where only torch is installed: `generator format` does it later
        return text
    return format_text(text, "measurements/own.yaml")


# ---------------------------------------------------------------------------- on the GPU
def _sync(torch, device):
    if device.startswith("cuda"):
        torch.cuda.synchronize()


def _peak_reset(torch, device):
    if device.startswith("cuda"):
        torch.cuda.empty_cache()
        torch.cuda.reset_peak_memory_stats()


def _peak(torch, device) -> float | None:
    return torch.cuda.max_memory_allocated() / GIB if device.startswith("cuda") else None


def build(model_id: str, model: dict, dtype, device: str):
    import torch
    import transformers
    from transformers import AutoConfig, AutoModelForCausalLM

    kw = hf_config(model_id, model)
    cfg = AutoConfig.for_model(kw.pop("model_type"), **kw)
    torch.manual_seed(0)
    # transformers 5 names the argument dtype; 4.x torch_dtype
    typed = {"dtype" if int(transformers.__version__.split(".")[0]) >= 5 else "torch_dtype": dtype}
    with torch.device(device):
        net = AutoModelForCausalLM.from_config(cfg, attn_implementation="sdpa", **typed)
    count = sum(p.numel() for p in net.parameters()) / 1e9
    if abs(count / model["parameters_b"] - 1) > 0.02:
        raise Unsupported(f"{model_id}: the rebuilt model has {count:.3f}B parameters, the record {model['parameters_b']}B")
    return net.eval()


def _forward_last(net, ids):
    try:
        return net(ids, use_cache=True, logits_to_keep=1)
    except TypeError:  # transformers before 4.50 names it num_logits_to_keep
        return net(ids, use_cache=True, num_logits_to_keep=1)


def inference(torch, net, model_id, gpu, device, contexts, generate, repeats) -> list[dict]:
    out = []
    vocab = net.config.vocab_size
    with torch.no_grad():  # warm-up: kernels chosen and loaded before anything is timed
        _forward_last(net, torch.randint(0, vocab, (1, 512), device=device))
    for ctx in contexts:
        ids = torch.randint(0, vocab, (1, ctx), device=device)
        times, peak = [], None
        for _ in range(2):  # the peak of the first pass; the faster of two timed
            _peak_reset(torch, device)
            _sync(torch, device)
            t0 = time.perf_counter()
            with torch.no_grad():
                # only the last position's logits, as generate() computes them for a prompt
                kept = _forward_last(net, ids).past_key_values
            _sync(torch, device)
            times.append(time.perf_counter() - t0)
            peak = _peak(torch, device) if peak is None else peak
            del kept
        seconds = min(times)
        out.append(result(gpu, model_id, "prefill_tokens_per_s", ctx / seconds, f"One forward pass over a {ctx}-token "
                          "prompt, the KV cache kept and the last position's logits; the faster of two passes after a "
                          "warm-up; batch 1, bf16.", context=ctx))
        if peak is not None:
            out.append(result(gpu, model_id, "peak_memory_gib", peak, f"Forward pass over a {ctx}-token prompt with "
                              "its KV cache kept and the last position's logits; bf16 weights and cache; "
                              "random weights.", context=ctx))
    return out + decode(torch, net, model_id, gpu, device, generate, repeats)


def decode(torch, net, model_id, gpu, device, generate, repeats) -> list[dict]:
    """Whole greedy generate() calls after a 512-token prompt, the fastest of ``repeats``: at batch 1
    the host's time per step is most of a step, and a busy host slows one call, not every one."""
    prompt = torch.randint(0, net.config.vocab_size, (1, 512), device=device)
    args = {"do_sample": False, "max_new_tokens": generate, "min_new_tokens": generate, "pad_token_id": 0}
    times = []
    with torch.no_grad():
        net.generate(prompt, **{**args, "max_new_tokens": 8, "min_new_tokens": 8})  # warm-up
        for _ in range(repeats):
            _sync(torch, device)
            t0 = time.perf_counter()
            net.generate(prompt, **args)
            _sync(torch, device)
            times.append(time.perf_counter() - t0)
    return [result(gpu, model_id, "decode_tokens_per_s", generate / min(times),
                   f"Greedy generate() of {generate} tokens after a 512-token prompt, the whole call timed, the "
                   f"fastest of {repeats} calls; batch 1, bf16, static shapes off.", context=512,
                   generated_tokens=generate)]


def training(torch, net, model_id, gpu, device, mode, context, batch, checkpointing, steps=3) -> list[dict]:
    vocab = net.config.vocab_size
    if mode == "full":
        net = net.float()
        params = [p for p in net.parameters()]
        weights = "f32"
    else:
        from peft import LoraConfig, get_peft_model

        net = get_peft_model(net, LoraConfig(r=16, lora_alpha=32, target_modules=LORA_TARGETS, lora_dropout=0.0))
        params = [p for p in net.parameters() if p.requires_grad]
        weights = "bf16"
    net.train()
    if checkpointing:
        net.gradient_checkpointing_enable(gradient_checkpointing_kwargs={"use_reentrant": False})
        if mode != "full":
            net.enable_input_require_grads()
    opt = torch.optim.AdamW(params, lr=1e-5)
    ids = torch.randint(0, vocab, (batch, context), device=device)
    _peak_reset(torch, device)
    times = []
    for _ in range(steps):
        _sync(torch, device)
        t0 = time.perf_counter()
        with torch.autocast(device_type=device.split(":")[0], dtype=torch.bfloat16):
            loss = net(ids, labels=ids).loss
        loss.backward()
        opt.step()
        opt.zero_grad(set_to_none=True)
        _sync(torch, device)
        times.append(time.perf_counter() - t0)
    peak = _peak(torch, device)
    what = ("full fine-tuning, fp32 weights and AdamW moments with bf16 autocast" if mode == "full"
            else "LoRA rank 16 on q, k, v, o, gate, up and down projections of the bf16 model, AdamW")
    note = (f"{what}; batch {batch} of {context} random tokens; gradient checkpointing "
            f"{'on' if checkpointing else 'off'}; {steps} optimizer steps")
    cond = {"mode": mode, "weights": weights, "context": context, "batch": batch, "gradient_checkpointing": checkpointing}
    out = [result(gpu, model_id, "training_tokens_per_s", batch * context / min(times[1:] or times),
                  note + ", the fastest after the first timed.", **cond)]
    if peak is not None:
        out.append(result(gpu, model_id, "peak_memory_gib", peak, note + ", peak allocated memory.", **cond))
    return out


def _arguments(argv):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--gpu", required=True, help="the id of the card in data/gpus/")
    parser.add_argument("--url", help="a public address of the results, if they are published elsewhere "
                        "(default: the file names this script as its source)")
    parser.add_argument("--models", default="llama-3-2-1b,llama-3-2-3b,qwen2-5-7b,llama-3-1-8b,mistral-7b,qwen3-8b")
    parser.add_argument("--contexts", default="512,4096,16384")
    parser.add_argument("--generate", type=int, default=64, help="tokens generated in each timed decode")
    parser.add_argument("--repeats", type=int, default=3, help="timed decodes; the fastest is kept")
    parser.add_argument("--train-context", type=int, default=2048)
    parser.add_argument("--train-batch", type=int, default=1)
    parser.add_argument("--modes", default="inference,lora,full",
                        help="what to measure: inference (peak memory, prefill, decode), decode (alone), lora, full")
    parser.add_argument("--out", help="the measurements file to write (default: print it)")
    parser.add_argument("--device", default="cuda")
    return parser.parse_args(argv)


def _plan(args, bundle) -> dict | str:
    """The checked arguments, or what is wrong with them."""
    if args.gpu not in bundle.gpus:
        return f"no GPU {args.gpu!r} in data/gpus/"
    ids = [m.strip() for m in args.models.split(",") if m.strip()]
    unknown = [m for m in ids if m not in bundle.models]
    if unknown or not ids:
        named = ", ".join(unknown) if unknown else repr(args.models)
        return f"no model {named} in data/models/"
    try:
        contexts = [int(c) for c in args.contexts.split(",")]
    except ValueError:
        return f"--contexts takes whole numbers separated by commas, got {args.contexts!r}"
    modes = [m.strip() for m in args.modes.split(",") if m.strip()]
    if not modes or set(modes) - {"inference", "decode", "lora", "full"}:
        return f"--modes takes inference, decode, lora and full, got {args.modes!r}"
    if args.generate < 1 or args.repeats < 1:
        return "--generate and --repeats take whole numbers from 1"
    if args.out and not args.device.startswith("cuda"):
        return "--out needs a CUDA device (on another device the figures are not the GPU's; leave --out away to see them)"
    return {"ids": ids, "contexts": contexts, "modes": modes}


def _host_cpu() -> str | None:
    try:
        for line in Path("/proc/cpuinfo").read_text(encoding="utf-8").splitlines():
            if line.startswith("model name"):
                return " ".join(line.split(":", 1)[1].split())
    except OSError:
        pass
    return None


def _too_big_for_full(torch, device: str, model: dict) -> bool:
    """Full fine-tuning keeps fp32 weights, gradients and two AdamW moments: 16 bytes a parameter,
    before any activation. A model whose states alone exceed the card is not tried."""
    if not device.startswith("cuda"):
        return False
    return model["parameters_b"] * 1e9 * 16 > torch.cuda.get_device_properties(device).total_memory


def _measure(torch, args, mid: str, model: dict, plan: dict) -> list[dict]:
    """Every result of one model; a step that does not fit is skipped and said so."""
    out = []
    # inference measures decode too; decode alone skips the peaks and prefill
    step = next((m for m in ("inference", "decode") if m in plan["modes"]), None)
    if step:
        contexts = [c for c in plan["contexts"] if c <= model["max_context"]]
        run = ((lambda net: inference(torch, net, mid, args.gpu, args.device, contexts, args.generate, args.repeats))
               if step == "inference" else (lambda net: decode(torch, net, mid, args.gpu, args.device, args.generate,
                                                               args.repeats)))
        try:  # the model is only the call's argument: freed when the call returns or fails
            out += run(build(mid, model, torch.bfloat16, args.device))
        except torch.OutOfMemoryError:
            print(f"skipped: {mid} {step} does not fit", file=sys.stderr)
    for mode in [m for m in ("lora", "full") if m in plan["modes"]]:
        if mode == "full" and _too_big_for_full(torch, args.device, model):
            print(f"skipped: {mid} full training does not fit (16 bytes per parameter)", file=sys.stderr)
            continue
        for checkpointing in (True, False):
            try:
                out += training(torch, build(mid, model, torch.bfloat16, args.device), mid, args.gpu, args.device, mode,
                                args.train_context, args.train_batch, checkpointing)
            except torch.OutOfMemoryError:
                print(f"skipped: {mid} {mode} training (checkpointing {checkpointing}) does not fit", file=sys.stderr)
            finally:
                if args.device.startswith("cuda"):
                    torch.cuda.empty_cache()
    return out


def main(argv=None) -> int:
    args = _arguments(argv)
    from generator.facts.engine_input import read_bundle

    bundle = read_bundle(ROOT / "data")
    plan = _plan(args, bundle)
    if isinstance(plan, str):
        print(f"gpu_measure: {plan}", file=sys.stderr)
        return 2
    import peft
    import torch
    import transformers

    if args.device.startswith("cuda") and not torch.cuda.is_available():
        print("gpu_measure: no CUDA device; run with --device cpu to try the script (no memory figures)", file=sys.stderr)
        return 2
    versions = {"transformers": transformers.__version__, "torch": torch.__version__, "peft": peft.__version__}
    if args.device.startswith("cuda"):
        versions.update({"CUDA": torch.version.cuda, "device": torch.cuda.get_device_name()})
    host = _host_cpu()
    if host:  # decode at batch 1 waits on the host: its processor is part of the conditions
        versions["host"] = host
    gpu = bundle.gpus[args.gpu]
    meta = {"gpu_name": gpu.get("name", args.gpu), "url": args.url, "date": dt.date.today(), "versions": versions,
            "generate": args.generate, "repeats": args.repeats}
    results = []
    for mid in plan["ids"]:
        began = time.perf_counter()
        try:
            results += _measure(torch, args, mid, bundle.models[mid], plan)
        except Unsupported as exc:
            print(f"skipped: {exc}", file=sys.stderr)
            continue
        except Exception:  # one model's failure keeps the others' results
            traceback.print_exc()
            print(f"failed: {mid}; its results are left out", file=sys.stderr)
            continue
        print(f"measured {mid} in {time.perf_counter() - began:.0f} s", file=sys.stderr)
        if args.out and results:  # written after every model: a run cut short keeps what it measured
            Path(args.out).write_text(measurements_file(meta, results), encoding="utf-8")
    if not results:
        print("gpu_measure: nothing was measured", file=sys.stderr)
        return 1
    text = measurements_file(meta, results)
    if args.out:
        Path(args.out).write_text(text, encoding="utf-8")
        print(f"wrote {len(results)} results to {args.out}; check them with `python -m generator validate`", file=sys.stderr)
    else:
        print(text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
