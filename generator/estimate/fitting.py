"""Fitting the few constants of the engine on the measurements, and measuring its error.

Constants (``fit_constants``), all deterministic, no randomness, no external solver:

- speed, per key ``*`` (every runtime), ``<runtime>`` and ``<runtime>/<backend>`` (backend = the
  GPU vendor's: cuda, rocm, metal, xpu, tpu), each fitted only from at least ``MIN_GROUP``
  measurements of that key; a key without enough inherits from the broader one, then from
  ``speed.DEFAULT_SPEED``. Never one constant per GPU.
  * ``eff_compute`` (share of the dense matrix TFLOPS reached in prefill): minimises the sum of
    squared log ratios predicted / measured over prefill results, by a pattern search on log
    eff_compute (bounds 0.01-1.5).
  * ``eff_bw``, ``overhead_s``, ``overhead_s_per_layer`` and, per runtime (never at ``*``) where
    at least MIN_GROUP decode results spend over a tenth of their bytes on the cache, ``kv_factor``
    (share of the memory bandwidth reached in decode, a fixed time per step and per layer, the
    times a step moves the cache): one joint pattern search over decode results (eff_bw 0.05-1.0,
    overhead 0-50 ms, 0-3 ms per layer, kv_factor 1-40) on a Huber loss of the log ratios
    (squared up to ``HUBER``, linear beyond): a few results on code paths the engine does not model
    (a slow quantized kernel, a host that launches slowly) would otherwise decide the constants
    every other result shares. Per runtime, where some decode result of the key takes an older
    release's path (``speed.runtime_paths``), ``overhead_s_per_expert``, ``overhead_s_per_sync``
    and ``overhead_s_per_old_layer`` (0-1 ms each) join the same search.
  * ``eff_compute`` per runtime/backend/kernel, where at least MIN_GROUP decode results name the
    kernel of their GPTQ/AWQ weights: a search on those results alone (Huber loss, bounds
    0.002-1.5), every other constant inherited.
  Prefill is fitted first with the default eff_bw, then decode with that eff_compute, then
  prefill again with the fitted eff_bw.
  * ``moe_prefill`` (how much slower the routed experts' matrix products run in prefill than the
    dense ones, >= 1): where a key has at least MIN_GROUP prefill results of mixture-of-experts
    models, a search on those results alone minimising the sum of absolute log ratios (a few
    results of a backend that misses the card's matrix units are hundreds of per cent off and
    would otherwise decide it; bounds 1-20), then eff_compute again.
- memory, per runtime with at least 3 inference peak-memory results: ``overhead_bytes`` and
  ``act_scale`` by linear least squares of (measured - weights - KV cache) on the activation
  formula of ``memory.activation_basis``, both clamped at 0.
- training relative throughput: exponents a, b, c, d (:mod:`.relative_fit`).

The error of the fitted engine, in-sample and on unseen sources: :mod:`.fit_error`.
"""
from __future__ import annotations

import math

from generator.estimate.formats import GIB, KV_BYTES, LORA_RANK, LORA_TARGETS, WEIGHT_FORMATS, backend
from generator.estimate.memory import activation_basis, inference_memory, training_memory, weights_parts
from generator.estimate.offload import adjust_decode_terms, adjust_prefill_terms, parse_offload
from generator.estimate.relative_fit import fit_relative, mode_of, relative_groups
from generator.estimate.speed import (
    DEFAULT_SPEED,
    decode_from_terms,
    decode_terms,
    llama_cpp_version_of,
    old_prompt_path,
    prefill_from_terms,
    prefill_terms,
)

MIN_GROUP = 8
# the kernel key of prefill results that llama.cpp builds from before int8 MMQ ran with FP16 cuBLAS
OLD_PROMPT_KERNEL = "cublas-fp16"
HUBER = 0.5


def _inputs(m: dict, models: dict, gpus: dict):
    model, gpu = models.get(m.get("model")), gpus.get(m.get("gpu"))
    if gpu is not None and m.get("backend"):  # a backend other than the vendor's (llama.cpp's Vulkan)
        gpu = {**gpu, "backend": m["backend"]}
    weights, value = m.get("weights"), m.get("value")
    if model is None or gpu is None or weights not in WEIGHT_FORMATS or not isinstance(value, (int, float)) or value <= 0:
        return None
    kv = m.get("kv_cache") if m.get("kv_cache") in KV_BYTES else "f16"
    return {"model": model, "gpu": gpu, "weights": weights, "kv": kv, "context": max(0, m.get("context") or 0),
            "batch": max(1, m.get("batch") or 1), "gpus": max(1, m.get("gpus") or 1), "runtime": m.get("runtime") or "",
            "fa": m.get("flash_attention", True) is not False, "kernel": m.get("kernel"),
            "checkpointing": m.get("gradient_checkpointing", True) is not False, "optimizer": m.get("optimizer") or "adamw",
            "master_weights": m.get("master_weights", True) is not False,
            "optimizer_in_backward": m.get("optimizer_in_backward") is True,
            "chunked_loss": m.get("chunked_loss") is True, "lora_rank": m.get("lora_rank") or LORA_RANK,
            "lora_targets": m.get("lora_targets") or LORA_TARGETS,
            "value": float(value)}


def speed_keys(runtime: str, gpu: dict, kernel: str | None = None) -> tuple[str, ...]:
    keys = ("*", runtime, f"{runtime}/{backend(gpu, runtime)}")
    return keys + (f"{keys[2]}/{kernel}",) if kernel else keys


def _split(m: dict, x: dict):
    """A result's offload (layers:N or experts:N) as the engine's split, with the options the
    adjustment reads; (None, None) without offload."""
    spec = parse_offload(m.get("offload"), x["model"]) if m.get("offload") else None
    if spec is None or spec["kind"] not in ("layers", "experts"):
        return None, None
    split = {"host_layers": spec["n"] if spec["kind"] == "layers" else 0,
             "expert_layers": spec["n"] if spec["kind"] == "experts" else 0}
    o = {"weights": x["weights"], "runtime": x["runtime"], "batch": x["batch"], "context": x["context"],
         "host_bandwidth_gbs": m.get("host_bandwidth_gbs"), "pcie_gbs": None}
    return split, o


def speed_point(m: dict, models: dict, gpus: dict):
    x = _inputs(m, models, gpus)
    if x is None or m.get("metric") not in ("decode_tokens_per_s", "prefill_tokens_per_s"):
        return None
    version = llama_cpp_version_of(m.get("runtime_version"), m.get("date")) if x["runtime"] == "llama.cpp" else \
        m.get("runtime_version")
    kernel = x["kernel"]
    if m["metric"] == "prefill_tokens_per_s" and old_prompt_path(x["gpu"], x["weights"], x["runtime"], version):
        kernel = OLD_PROMPT_KERNEL  # its own efficiency: FP16 cuBLAS, not the int8 kernels of today's builds
    split, o = _split(m, x)
    on_gpu = None if split is None else x["model"]["layers"] - split["host_layers"]
    whole = {}
    if m["metric"] == "decode_tokens_per_s":
        generated = m.get("generated_tokens") or 0
        # timed over the whole call: the cache grows from the prompt to prompt + generated tokens,
        # and the prompt's processing is part of the time
        context = x["context"] + generated // 2
        t = decode_terms(x["model"], x["gpu"], x["weights"], x["kv"], context, x["batch"], x["runtime"], x["gpus"],
                         on_gpu, runtime_version=version)
        if split is not None:  # the host's share read at the host's bandwidth (offload.py)
            t = adjust_decode_terms(t, x["model"], x["gpu"], o, DEFAULT_SPEED, split)
        if generated and x["context"] >= 1:
            prompt = prefill_terms(x["model"], x["gpu"], x["weights"], x["context"], x["batch"], x["runtime"], x["gpus"],
                                   runtime_version=version)
            if prompt["compute_s"] is None:
                return None
            whole = {"generated": generated, "prompt": prompt}
    else:
        if x["context"] < 1:
            return None
        t = prefill_terms(x["model"], x["gpu"], x["weights"], x["context"], x["batch"], x["runtime"], x["gpus"], on_gpu,
                          runtime_version=version)
        if t["compute_s"] is None:
            return None
        if split is not None:
            t = adjust_prefill_terms(t, x["model"], o, DEFAULT_SPEED, split)
    return {"metric": m["metric"], "terms": t, **whole, "value": x["value"], "log_value": math.log(x["value"]),
            "keys": speed_keys(x["runtime"], x["gpu"], kernel),
            "publisher": m.get("publisher") or m.get("source")}


def whole_call(rate: float, p: dict, k: dict) -> float:
    """A decode rate as a point timed over the whole call gives it: the generated tokens over the
    prompt's processing time plus the generation's (the rate itself for other points)."""
    if not p.get("generated") or not rate or rate <= 0:
        return rate
    prompt_rate = prefill_from_terms(p["prompt"], k)
    if not prompt_rate:
        return rate
    tokens = p["terms"]["batch"] * p["generated"]
    return tokens / (p["prompt"]["tokens"] / prompt_rate + tokens / rate)


def resolve(speed: dict, keys) -> dict:
    out = dict(DEFAULT_SPEED)
    for k in keys:
        out.update(speed.get(k, {}))
    return out


def _prefill_row(t: dict) -> tuple | None:
    """What :func:`prefill_from_terms` reads of a prefill's terms, in a tuple (None: no matrix throughput)."""
    if t["compute_s"] is None:
        return None
    return (t["compute_s"], t["expert_s"], t["mem_s"], t["pcie_s"], t["comm_s"], t["layer_passes"], t["tokens"])


def _rows(points) -> tuple[list, list]:
    """The points as the loss reads them: (decode rows, prefill rows), each a tuple of the terms
    its formula reads and the measured log value. A search evaluates its loss thousands of times
    over the same points; reading tuples instead of dicts makes that several times faster."""
    dec, pre = [], []
    for p in points:
        t = p["terms"]
        if p["metric"] == "decode_tokens_per_s":
            prompt = _prefill_row(p["prompt"]) if p.get("generated") else None
            dec.append((t["mem_s"], t["kv_s"], t["kv_copy_s"], t["cpu_s"], t["compute_s"], t.get("expert_runs", 0.0),
                        t.get("sync_calls", 0.0), t.get("old_layers", 0), t["layers"], t["comm_s"], t["batch"],
                        t["batch"] * p["generated"] if prompt else 0, p["prompt"]["tokens"] if prompt else 0, prompt,
                        p["log_value"]))
        else:
            pre.append((_prefill_row(t), p["log_value"]))
    return dec, pre


def _prefill_rate(r: tuple | None, moe_prefill: float, eff_compute: float, eff_bw: float, per_layer: float):
    """:func:`generator.estimate.speed.prefill_from_terms` on a row of :func:`_prefill_row` (the same arithmetic)."""
    if r is None:
        return None
    compute_s, expert_s, mem_s, pcie_s, comm_s, layer_passes, tokens = r
    time = max((compute_s + expert_s * moe_prefill) / eff_compute, mem_s / eff_bw) + pcie_s + comm_s
    time += layer_passes * per_layer
    return tokens / time if time > 0 else 0.0


def _loss(rows: tuple[list, list], k: dict, kind: str = "squared") -> float:
    """Sum over the points (as :func:`_rows` gives them) of the log ratio predicted / measured,
    ``squared``, ``absolute``, or ``huber`` (squared up to HUBER, linear beyond). The predictions
    are :func:`generator.estimate.speed.decode_from_terms` (timed over the whole call where the
    point was, :func:`whole_call`) and ``prefill_from_terms``, computed the same way."""
    kv_factor, eff_bw, eff_cpu, eff_compute = k["kv_factor"], k["eff_bw"], k["eff_cpu"], k["eff_compute"]
    per_expert, per_sync, overhead, per_layer = (k["overhead_s_per_expert"], k["overhead_s_per_sync"], k["overhead_s"],
                                                 k["overhead_s_per_layer"])
    per_old = k["overhead_s_per_old_layer"]
    moe_prefill = k["moe_prefill"]
    preds = []
    for (mem_s, kv_s, kv_copy_s, cpu_s, compute_s, expert_runs, sync_calls, old_layers, layers, comm_s, batch, tokens,
         prompt_tokens, prompt, log_value) in rows[0]:
        mem = mem_s + (kv_factor - 1) * kv_s + kv_copy_s
        step = max(mem / eff_bw + cpu_s / eff_cpu, compute_s / eff_compute)
        paths = per_expert * expert_runs + per_sync * sync_calls + per_old * old_layers
        rate = batch / (step + overhead + per_layer * layers + paths + comm_s)
        if prompt is not None and rate and rate > 0:
            prompt_rate = _prefill_rate(prompt, moe_prefill, eff_compute, eff_bw, per_layer)
            if prompt_rate:
                rate = tokens / (prompt_tokens / prompt_rate + tokens / rate)
        preds.append((rate, log_value))
    for row, log_value in rows[1]:
        preds.append((_prefill_rate(row, moe_prefill, eff_compute, eff_bw, per_layer), log_value))
    s = 0.0
    for pred, log_value in preds:
        if not pred or pred <= 0:
            s += 1e6
            continue
        e = abs(math.log(pred) - log_value)
        s += e if kind == "absolute" else e * e if kind == "squared" or e < HUBER else HUBER * (2 * e - HUBER)
    return s


def _search(objective, start: list[float], steps: list[float], lo: list[float], hi: list[float], rounds: int = 40):
    """Deterministic pattern search: try +-step on each coordinate, halve the steps when nothing improves."""
    x = [min(max(v, a), b) for v, a, b in zip(start, lo, hi, strict=False)]
    best = objective(x)
    floor = [s / 256 for s in steps]
    steps = list(steps)
    for _ in range(rounds):
        improved = False
        for i in range(len(x)):
            for sign in (1, -1):
                y = list(x)
                y[i] = min(max(x[i] + sign * steps[i], lo[i]), hi[i])
                v = objective(y)
                if v < best - 1e-12:
                    x, best, improved = y, v, True
        if not improved:
            steps = [s / 2 for s in steps]
            if all(s < f for s, f in zip(steps, floor, strict=False)):
                break
    return x


def _fit_kernel(points, base: dict) -> dict:
    """A named kernel's eff_compute, from its prefill results where it has enough (the older builds'
    prompt path), else from its decode results (GPTQ/AWQ kernels; Huber loss), the rest inherited."""
    pre = [p for p in points if p["metric"] == "prefill_tokens_per_s"]
    chosen = pre if len(pre) >= MIN_GROUP else [p for p in points if p["metric"] == "decode_tokens_per_s"]
    if len(chosen) < MIN_GROUP:
        return {}
    rows = _rows(chosen)
    x = _search(lambda v: _loss(rows, {**base, "eff_compute": math.exp(v[0])}, "huber"), [math.log(base["eff_compute"])],
                [0.5], [math.log(0.002)], [math.log(1.5)])
    return {"eff_compute": round(math.exp(x[0]), 4)}


def _fit_key(points, base: dict, per_runtime: bool = True) -> dict:
    """eff_compute on prefill (and moe_prefill), then the decode constants in one search (with
    kv_factor and the older releases' per-call costs where ``per_runtime`` (never at ``*``) and the
    results call for them), then eff_compute again."""
    pre = [p for p in points if p["metric"] == "prefill_tokens_per_s"]
    dec = [p for p in points if p["metric"] == "decode_tokens_per_s"]
    out = {}
    k = dict(base)
    pre_rows = _rows(pre)

    def fit_pre():
        if len(pre) >= MIN_GROUP:
            x = _search(lambda v: _loss(pre_rows, {**k, "eff_compute": math.exp(v[0])}), [math.log(k["eff_compute"])], [0.5],
                        [math.log(0.01)], [math.log(1.5)])
            k["eff_compute"] = out["eff_compute"] = round(math.exp(x[0]), 4)

    fit_pre()
    moe = [p for p in pre if p["terms"].get("expert_s")]
    if len(moe) >= MIN_GROUP:
        moe_rows = _rows(moe)
        x = _search(lambda v: _loss(moe_rows, {**k, "moe_prefill": math.exp(v[0])}, "absolute"),
                    [math.log(k["moe_prefill"])], [0.5], [0.0], [math.log(20.0)])
        k["moe_prefill"] = out["moe_prefill"] = round(math.exp(x[0]), 4)
        fit_pre()
    if len(dec) >= MIN_GROUP:
        long = [p for p in dec if p["terms"]["kv_s"] > 0.1 * p["terms"]["mem_s"]]
        names = ["eff_bw", "overhead_s", "overhead_s_per_layer"]
        if len(long) >= MIN_GROUP and per_runtime:
            names.append("kv_factor")
        # the older releases' code paths, where some result of the key takes them
        names += [n for n, term in (("overhead_s_per_expert", "expert_runs"), ("overhead_s_per_sync", "sync_calls"),
                                    ("overhead_s_per_old_layer", "old_layers"))
                  if per_runtime and any(p["terms"].get(term) for p in dec)]
        # searched in log eff_bw, milliseconds and microseconds, jointly with the cache's traffic
        scale = {"overhead_s": 1000, "overhead_s_per_layer": 1e6, "kv_factor": 1, "overhead_s_per_expert": 1e6,
                 "overhead_s_per_sync": 1e6, "overhead_s_per_old_layer": 1e6}
        lo = {"eff_bw": math.log(0.05), "overhead_s": 0.0, "overhead_s_per_layer": 0.0, "kv_factor": 1.0,
              "overhead_s_per_expert": 0.0, "overhead_s_per_sync": 0.0, "overhead_s_per_old_layer": 0.0}
        hi = {"eff_bw": 0.0, "overhead_s": 50.0, "overhead_s_per_layer": 3000.0, "kv_factor": 40.0,
              "overhead_s_per_expert": 1000.0, "overhead_s_per_sync": 1000.0, "overhead_s_per_old_layer": 1000.0}
        step = {"eff_bw": 0.3, "overhead_s": 2.0, "overhead_s_per_layer": 50.0, "kv_factor": 2.0,
                "overhead_s_per_expert": 20.0, "overhead_s_per_sync": 20.0, "overhead_s_per_old_layer": 20.0}

        def unpack(v):
            return {n: math.exp(x) if n == "eff_bw" else x / scale[n] for n, x in zip(names, v, strict=True)}

        dec_rows = _rows(dec)
        x = _search(lambda v: _loss(dec_rows, {**k, **unpack(v)}, "huber"),
                    [math.log(k[n]) if n == "eff_bw" else k[n] * scale[n] for n in names], [step[n] for n in names],
                    [lo[n] for n in names], [hi[n] for n in names])
        digits = {"eff_bw": 4, "overhead_s": 7, "overhead_s_per_layer": 9, "kv_factor": 3, "overhead_s_per_expert": 9,
                  "overhead_s_per_sync": 9, "overhead_s_per_old_layer": 9}
        for n, v in unpack(x).items():
            k[n] = out[n] = round(v, digits[n])
        fit_pre()
    return out


def fit_speed(points, only=None) -> dict:
    """The speed constants of every key the points name; with ``only``, of those keys alone (a
    key's constants read its own points and its broader keys' constants, nothing else)."""
    speed: dict[str, dict] = {}

    def level(key: str) -> int:
        return 0 if key == "*" else key.count("/") + 1

    keys = sorted({k for p in points for k in p["keys"] if only is None or k in only}, key=lambda s: (level(s), s))
    for key in keys:
        n = level(key)
        mine = [p for p in points if len(p["keys"]) > n and p["keys"][n] == key]
        chain = mine[0]["keys"][:n] if mine else ()
        if n == 3:
            fitted = _fit_kernel(mine, resolve(speed, chain))
        else:
            fitted = _fit_key(mine, resolve(speed, chain), per_runtime=n > 0)
        if fitted:
            speed[key] = fitted
    return speed


def peak_inputs(m: dict, models: dict, gpus: dict):
    x = _inputs(m, models, gpus)
    if x is None or m.get("metric") != "peak_memory_gib":
        return None
    x["mode"] = mode_of(m)
    # a run that generated tokens after its prompt peaks at its end, the cache holding both
    x["context"] += m.get("generated_tokens") or 0
    return x


def _predict_peak(x: dict, constants: dict) -> float:
    if x["mode"] != "inference":
        r = training_memory(x["model"], x["mode"], x["weights"] if x["mode"] != "qlora" else "bf16", x["context"],
                            x["batch"], x["gpus"], checkpointing=x["checkpointing"], flash_attention=x["fa"],
                            constants=constants, runtime="transformers", optimizer_name=x["optimizer"],
                            master_weights=x["master_weights"], optimizer_in_backward=x["optimizer_in_backward"],
                            chunked_loss=x["chunked_loss"], lora_rank=x["lora_rank"], lora_targets=x["lora_targets"])
    else:
        r = inference_memory(x["model"], x["weights"], x["kv"], max(1, x["context"]), x["batch"], x["runtime"],
                             x["gpus"], flash_attention=x["fa"], constants=constants)
    return r["total_bytes"] * x["gpus"] / GIB


def fit_memory(rows) -> dict:
    """overhead_bytes and act_scale per runtime, linear least squares on the inference peak-memory rows."""
    out = {}
    for runtime in sorted({x["runtime"] for x in rows if x["mode"] == "inference"}):
        pts = []
        for x in rows:
            if x["runtime"] != runtime or x["mode"] != "inference":
                continue
            zero = {"memory": {runtime: {"overhead_bytes": 0.0, "act_scale": 0.0}}}
            fixed = _predict_peak(x, zero) * GIB / x["gpus"]
            basis = activation_basis(x["model"], runtime, max(1, x["context"]), x["batch"], x["fa"])
            pts.append((basis, x["value"] * GIB / x["gpus"] - fixed, x["value"] * GIB / x["gpus"]))
        if len(pts) < 3:
            continue
        # weighted least squares on relative error: weight 1 / measured^2
        w = [1 / max(p[2], 1.0) ** 2 for p in pts]
        sw = sum(w)
        mx = sum(wi * p[0] for wi, p in zip(w, pts, strict=False)) / sw
        my = sum(wi * p[1] for wi, p in zip(w, pts, strict=False)) / sw
        sxx = sum(wi * (p[0] - mx) ** 2 for wi, p in zip(w, pts, strict=False))
        slope = sum(wi * (p[0] - mx) * (p[1] - my) for wi, p in zip(w, pts, strict=False)) / sxx if sxx > 0 else 0.0
        slope = max(0.0, slope)
        intercept = max(0.0, my - slope * mx)
        out[runtime] = {"overhead_bytes": round(intercept), "act_scale": round(slope, 4)}
    return out


def fit_constants(models: dict, gpus: dict, measurements, revisions=()) -> dict:
    """Every fitted constant, as the JSON-ready dict the engine and the browser take."""
    points = [p for p in (speed_point(m, models, gpus) for m in measurements) if p is not None]
    peaks = [x for x in (peak_inputs(m, models, gpus) for m in measurements) if x is not None]
    return {"speed": fit_speed(points), "memory": fit_memory(peaks),
            "relative": fit_relative(relative_groups(measurements, revisions, gpus), gpus)}


def predict(m: dict, models: dict, gpus: dict, constants: dict):
    """The engine's figure for one measurement's conditions, or None when it cannot be estimated."""
    metric = m.get("metric")
    if metric in ("decode_tokens_per_s", "prefill_tokens_per_s"):
        p = speed_point(m, models, gpus)
        if p is None:
            return None
        k = resolve(constants.get("speed") or {}, p["keys"])
        if metric == "decode_tokens_per_s":
            return whole_call(decode_from_terms(p["terms"], k), p, k)
        return prefill_from_terms(p["terms"], k)
    if metric == "weights_gib":
        x = _inputs(m, models, gpus)
        return None if x is None else weights_parts(x["model"], x["weights"], x["runtime"])["total"] / GIB
    if metric == "peak_memory_gib":
        x = peak_inputs(m, models, gpus)
        return None if x is None else _predict_peak(x, constants)
    return None
