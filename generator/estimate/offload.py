"""Runtimes people name, backends, and what goes to host memory when a model does not fit the card.

Front ends: Ollama and LM Studio are not engines of their own here. ``front_ends`` in tables.json
names the runtime each one runs (Ollama: llama.cpp; LM Studio: llama.cpp, or MLX for MLX's
weights); ``resolve_front_end`` swaps the name for that runtime and keeps the name in the basis.

Backends (``--backend``): a runtime with a ``backends`` table (llama.cpp: cuda, rocm, vulkan,
metal, sycl, cpu) runs a card with one of those of the card's vendor; by default the runtime's
``vendor_backend`` (CUDA on NVIDIA, HIP/ROCm on AMD, Metal on Apple, SYCL on Intel). The fitted
speed constants are looked up under ``<runtime>/<backend>`` (``formats.backend``), so a backend
with enough measurements (``backend`` condition of a result) has its own efficiency. ``cpu`` keeps
every layer in host memory (``-ngl 0``): decode reads the host's memory, and no prefill figure is
given (the catalogue has no CPU throughput).

Offload (``offload``): ``none`` (default), ``layers:N`` (N whole layers, weights and KV cache, in
host memory; the output head follows as soon as one layer does, as ``-ngl`` does), ``experts`` or
``experts:N`` (the routed experts' weights of every MoE layer, or of N of them, in host memory,
attention, shared experts and KV cache on the card: llama.cpp's ``--cpu-moe`` and
``--n-cpu-moe N``), and ``auto``: the least that makes the card hold the rest, experts first for
a mixture of experts (they are read k/E at a time, so each byte moved costs least), then layers.

Host memory per token step: the bytes left in host memory are read from it at the host's
bandwidth (``host_bandwidth_gbs``; default by platform, ``host.bandwidth_gbs`` in tables.json:
``desktop`` 60 GB/s, dual-channel DDR5; ``server`` 240 GB/s, eight channels, for cards of the
``server_segments``; with unified memory the card's own bandwidth, the same memory) times the
fitted-elsewhere ``eff_cpu``. Prefill copies the host's weights over PCIe once per micro-batch
(``pcie_gbs``, default 25 GB/s, the speed table's ``pcie_gbs``; the catalogue gives no PCIe
generation per card yet). ``host_memory_gb``, when given, must hold what goes to the host
(weights, KV cache of host layers, llama.cpp's token embeddings), or the setup does not fit.

A setup that does not fit gets no speed: ``shortfall`` gives the bytes missing and what would
make it fit (``suggestions``): the largest weight format of the runtime that fits, the longest
context that fits, an offload that fits, the number of cards that hold it.
"""
from __future__ import annotations

from generator.estimate.formats import GIB, TABLES, WEIGHT_FORMATS, is_gguf
from generator.estimate.memory import expert_fraction, inference_memory, weights_parts

FRONT_ENDS: dict = TABLES["front_ends"]
HOST = TABLES["host"]
_RUNTIME = TABLES["runtimes"]


def resolve_front_end(o: dict) -> dict:
    """Ollama and LM Studio name the runtime they run: the options with that runtime, ``front_end`` set."""
    fe = FRONT_ENDS.get(o.get("runtime") or "")
    if fe is None:
        return o
    own = (WEIGHT_FORMATS.get(o.get("weights") or "") or {}).get("runtimes") or ()
    runtime = fe["mlx_weights_runtime"] if fe.get("mlx_weights_runtime") in own else fe["runtime"]
    return {**o, "runtime": runtime, "front_end": o["runtime"]}


def backends_of(runtime: str) -> dict | None:
    """The runtime's backends, each with the vendors it runs (None: every vendor), or None without a table."""
    return _RUNTIME.get(runtime, {}).get("backends")


def default_backend(runtime: str, gpu: dict) -> str | None:
    own = _RUNTIME.get(runtime, {}).get("vendor_backend") or {}
    return own.get(str(gpu.get("vendor") or ""))


def moe_layers(model: dict) -> int:
    """Layers with routed experts (0 for a dense model)."""
    n_exp, k = int(model.get("experts") or 0), int(model.get("experts_per_token") or 0)
    if not (n_exp and k and n_exp > k):
        return 0
    return max(0, model["layers"] - int(model.get("dense_layers") or 0))


def parse_offload(text, model: dict) -> dict | None:
    """'none', 'auto', 'layers:N', 'experts', 'experts:N' -> {"kind", "n"}; None when malformed or out of range."""
    if not isinstance(text, str):
        return None
    kind, _, n = text.strip().lower().partition(":")
    if kind in ("none", "auto") and not n:
        return {"kind": kind, "n": None}
    if kind not in ("layers", "experts"):
        return None
    top = model["layers"] if kind == "layers" else moe_layers(model)
    if kind == "experts" and not n:
        return {"kind": "experts", "n": top}
    if not n.isdigit() or int(n) > top:
        return None
    return {"kind": kind, "n": int(n)}


def host_bandwidth_gbs(gpu: dict, given=None) -> float:
    """The host memory's bandwidth: the one given, the card's own with unified memory, else the platform's default."""
    if given:
        return float(given)
    if gpu.get("unified_memory"):
        return float(gpu["memory_bandwidth_gbs"])
    platform = "server" if gpu.get("segment") in HOST["server_segments"] else "desktop"
    return HOST["bandwidth_gbs"][platform]


def experts_moved(model: dict, w: dict, host_layers: int, expert_layers: int) -> float:
    """Bytes of routed-expert weights that ``expert_layers`` of the layers left on the card move to the host."""
    n = moe_layers(model)
    if not (n and expert_layers and w["experts"]):
        return 0.0
    on_card = w["experts"] * (model["layers"] - host_layers) / model["layers"]
    return min(on_card, w["experts"] * expert_layers / n)


def weights_of(model: dict, o: dict) -> dict:
    """``weights_parts`` of the model in the options' weights and runtime, kept in ``o["parts_memo"]``
    where the estimate gave one (one estimate asks for it in each of its many memory probes)."""
    memo, key = o.get("parts_memo"), (o["weights"], o["runtime"])
    if memo is None:
        return weights_parts(model, *key)
    if key not in memo:
        memo[key] = weights_parts(model, *key)
    return memo[key]


def split_memory(model: dict, o: dict, constants: dict | None, context: int, split: dict) -> dict:
    """inference_memory with ``split`` = {"host_layers", "expert_layers"}: the card's and the host's bytes."""
    layers = model["layers"]
    h, e = split["host_layers"], split["expert_layers"]
    w = weights_of(model, o)
    mem = inference_memory(model, o["weights"], o["kv_cache"], context, o["batch"], o["runtime"], o["gpus"],
                           layers - h, o["flash_attention"], constants, parts=w)
    moved = experts_moved(model, w, h, e)
    if moved:
        n = max(1, o["gpus"])
        mem = {**mem, "weights_bytes": mem["weights_bytes"] - moved / n, "total_bytes": mem["total_bytes"] - moved / n,
               "host_bytes": mem["host_bytes"] + moved}
    return {**mem, "host_layers": h, "expert_layers": e, "experts_host_bytes": moved}


def _fits(mem: dict, limit: float, host_limit) -> bool:
    return mem["total_bytes"] <= limit and (host_limit is None or mem["host_bytes"] <= host_limit)


def auto_split(model: dict, o: dict, constants: dict | None, limit: float, host_limit) -> dict:
    """The least offload whose card share fits ``limit``: experts of the fewest layers, then the fewest layers.
    ``host_limit`` does not change the choice (the least offload also puts the least in host memory);
    the caller checks the host's share against it."""
    def fits(split):
        return split_memory(model, o, constants, o["context"], split)["total_bytes"] <= limit

    def least(make, top):
        """The smallest n in 0..top with make(n) fitting (memory falls as n grows), else None."""
        if not fits(make(top)):
            return None
        lo, hi = -1, top
        while hi - lo > 1:
            mid = (lo + hi) // 2
            if fits(make(mid)):
                hi = mid
            else:
                lo = mid
        return hi

    n_moe = moe_layers(model)
    if n_moe:
        e = least(lambda n: {"host_layers": 0, "expert_layers": n}, n_moe)
        if e is not None:
            return {"host_layers": 0, "expert_layers": e}
    h = least(lambda n: {"host_layers": n, "expert_layers": n_moe}, model["layers"])
    return {"host_layers": model["layers"] if h is None else h, "expert_layers": n_moe}


def chosen_split(model: dict, o: dict, constants: dict | None, limit: float, host_limit) -> dict:
    """The split the options ask for (``offload``; ``gpu_layers`` as before; backend ``cpu``: every layer)."""
    layers = model["layers"]
    if o.get("backend") == "cpu":
        return {"host_layers": layers, "expert_layers": 0}
    spec = parse_offload(o.get("offload") or "none", model) or {"kind": "none", "n": None}
    if spec["kind"] == "layers":
        return {"host_layers": spec["n"], "expert_layers": 0}
    if spec["kind"] == "experts":
        return {"host_layers": 0, "expert_layers": spec["n"]}
    if spec["kind"] == "auto":
        return auto_split(model, o, constants, limit, host_limit)
    on_gpu = layers if o.get("gpu_layers") is None else o["gpu_layers"]
    return {"host_layers": layers - on_gpu, "expert_layers": 0}


def adjust_decode_terms(t: dict, model: dict, gpu: dict, o: dict, k: dict, split: dict) -> dict:
    """decode_terms (made with the layers on the card) with the moved experts read from the host, and
    the host read at its own bandwidth rather than the speed table's ``cpu_bandwidth_gbs``."""
    w = weights_of(model, o)
    moved = experts_moved(model, w, split["host_layers"], split["expert_layers"]) * expert_fraction(model, o["batch"])
    bw = gpu["memory_bandwidth_gbs"] * 1e9
    host = host_bandwidth_gbs(gpu, o.get("host_bandwidth_gbs")) * 1e9
    cpu_bytes = t["cpu_s"] * k["cpu_bandwidth_gbs"] * 1e9 + moved
    return {**t, "mem_s": max(0.0, t["mem_s"] - moved / bw), "cpu_s": cpu_bytes / host}


def adjust_prefill_terms(t: dict, model: dict, o: dict, k: dict, split: dict) -> dict:
    """prefill_terms with the moved experts copied over PCIe with the host's layers, at ``pcie_gbs``."""
    w = weights_of(model, o)
    tokens = o["context"] * o["batch"]
    ubatch = min(_RUNTIME.get(o["runtime"], {}).get("ubatch", tokens), tokens)
    chunks = -(-tokens // ubatch)
    moved = experts_moved(model, w, split["host_layers"], split["expert_layers"]) * expert_fraction(model, ubatch)
    pcie = (o.get("pcie_gbs") or k["pcie_gbs"]) * 1e9
    copied = t["pcie_s"] * k["pcie_gbs"] * 1e9 + chunks * moved
    return {**t, "pcie_s": copied / pcie}


def smaller_formats(o: dict) -> list[str]:
    """The weight formats the runtime loads (inference), fewest bits last, below the chosen one's bits."""
    runtime = o["runtime"]
    spec = _RUNTIME.get(runtime, {})
    mine = WEIGHT_FORMATS[o["weights"]]["base"]
    out = []
    for name, f in WEIGHT_FORMATS.items():
        if f.get("runtimes") and runtime not in f["runtimes"]:
            continue
        if spec.get("gguf"):
            if not (is_gguf(name) or name in spec.get("loads", ())):
                continue
        elif is_gguf(name) or ("loads" in spec and name not in spec["loads"]):
            continue
        if name in ("nf4",) or f.get("experts"):  # bitsandbytes (QLoRA's) and gpt-oss's own format
            continue
        if f["base"] < mine:
            out.append(name)
    return sorted(out, key=lambda n: -WEIGHT_FORMATS[n]["base"])


def host_limit_bytes(o: dict):
    return None if o.get("host_memory_gb") is None else o["host_memory_gb"] * GIB
