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
# after the path above, so that `python benchmarks/gpu_measure.py` finds the package too
from benchmarks.gpu_records import (  # noqa: E402, F401 (hf_config, Unsupported, measurements_file: the interface)
    LORA_TARGETS,
    SCRIPT,
    Unsupported,
    hf_config,
    measurements_file,
    result,
)


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


WARM_STEPS = 2  # decode steps run before the capture


def graph_decode(torch, net, model_id, gpu, device, batches, generate, repeats, context=512) -> list[dict]:
    """Decode at each batch size of ``batches`` with the host out of the step: a static KV cache
    (filled by a ``context``-token prompt), one decode step captured as a CUDA graph, then ``generate``
    replays, each feeding the greedy token back and moving the cache position; the fastest of
    ``repeats``. What is timed is the card's time per step, as serving runtimes run it."""
    from transformers import StaticCache

    out, vocab = [], net.config.vocab_size
    for batch in batches:
        try:
            # room for every step: the cache may keep its own count of the positions it was given
            room = context + WARM_STEPS + generate * repeats + 8
            seconds = _graph_steps(torch, net, StaticCache(config=net.config, max_cache_len=room),
                                   vocab, batch, context, generate, repeats, device)
        except torch.OutOfMemoryError:
            print(f"skipped: {model_id} graph decode at batch {batch} does not fit", file=sys.stderr)
            torch.cuda.empty_cache()
            break
        out.append(result(gpu, model_id, "decode_tokens_per_s", batch * generate / seconds,
                          f"{generate} greedy decode steps after a {context}-token prompt and {WARM_STEPS} warm-up "
                          f"steps, batch {batch}, each step replayed from a CUDA graph over a static bf16 KV cache (no "
                          f"host work between kernels), tokens of all sequences counted; the fastest of {repeats} "
                          "runs, each continuing the same sequences.",
                          context=context, batch=batch))
        torch.cuda.empty_cache()
    return out


def _graph_steps(torch, net, cache, vocab, batch, context, steps, repeats, device) -> float:
    """Seconds for ``steps`` decode steps replayed from one captured graph (the fastest of ``repeats``)."""
    with torch.no_grad():
        prompt = torch.randint(0, vocab, (batch, context), device=device)
        net(prompt, past_key_values=cache, use_cache=True, logits_to_keep=1,
            cache_position=torch.arange(context, device=device))
        token = torch.randint(0, vocab, (batch, 1), device=device)
        position = torch.tensor([context], device=device)
        side = torch.cuda.Stream()
        side.wait_stream(torch.cuda.current_stream())
        with torch.cuda.stream(side):  # warm-up off the default stream, as capture requires
            for _ in range(WARM_STEPS):
                net(token, past_key_values=cache, use_cache=True, cache_position=position)
                position.add_(1)
        torch.cuda.current_stream().wait_stream(side)
        graph = torch.cuda.CUDAGraph()
        with torch.cuda.graph(graph):
            logits = net(token, past_key_values=cache, use_cache=True, cache_position=position).logits
        times = []
        for _ in range(repeats):  # the positions run on: the cache holds the prompt and every step before
            _sync(torch, device)
            t0 = time.perf_counter()
            for _ in range(steps):
                graph.replay()
                token.copy_(logits[:, -1].argmax(-1, keepdim=True))
                position.add_(1)
            _sync(torch, device)
            times.append(time.perf_counter() - t0)
    return min(times)


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
                        help="what to measure: inference (peak memory, prefill, decode), decode (alone), lora, full; "
                        "graph-decode (alone: decode steps replayed from a CUDA graph at each of --batches)")
    parser.add_argument("--batches", default="1,8,32,128", help="graph-decode: the batch sizes, smallest first")
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
    if not modes or set(modes) - {"inference", "decode", "lora", "full", "graph-decode"}:
        return f"--modes takes inference, decode, lora, full and graph-decode, got {args.modes!r}"
    if "graph-decode" in modes and len(modes) > 1:
        return "--modes graph-decode runs alone: its results are another runtime's (pytorch) and go in a file of their own"
    try:
        batches = [int(b) for b in args.batches.split(",")]
    except ValueError:
        return f"--batches takes whole numbers separated by commas, got {args.batches!r}"
    if not batches or min(batches) < 1:
        return f"--batches takes whole numbers from 1, got {args.batches!r}"
    if args.generate < 1 or args.repeats < 1:
        return "--generate and --repeats take whole numbers from 1"
    if args.out and not args.device.startswith("cuda"):
        return "--out needs a CUDA device (on another device the figures are not the GPU's; leave --out away to see them)"
    return {"ids": ids, "contexts": contexts, "modes": modes, "batches": sorted(batches)}


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
    if plan["modes"] == ["graph-decode"]:
        try:
            return graph_decode(torch, build(mid, model, torch.bfloat16, args.device), mid, args.gpu, args.device,
                                plan["batches"], args.generate, args.repeats)
        except torch.OutOfMemoryError:
            print(f"skipped: {mid} does not fit", file=sys.stderr)
            return []
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
    # str(): torch gives its version as a str subclass that YAML cannot write
    versions = {"transformers": str(transformers.__version__), "torch": str(torch.__version__), "peft": str(peft.__version__)}
    if args.device.startswith("cuda"):
        versions.update({"CUDA": torch.version.cuda, "device": torch.cuda.get_device_name()})
    host = _host_cpu()
    if host:  # decode at batch 1 waits on the host: its processor is part of the conditions
        versions["host"] = host
    gpu = bundle.gpus[args.gpu]
    meta = {"gpu_name": gpu.get("name", args.gpu), "url": args.url, "date": dt.date.today(), "versions": versions,
            "generate": args.generate, "repeats": args.repeats, "graph": plan["modes"] == ["graph-decode"]}
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
