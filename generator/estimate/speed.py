"""How fast an LLM runs: decode and prefill tokens/s, and training throughput relative to a GPU.

Decode is memory-bound. One step of ``batch`` sequences at ``context`` tokens reads the weights
once and the KV cache of every sequence:

    bytes = head + attention/dense weights + routed experts x (1 - (1 - k/E)^batch)
            + batch x KV(context) x (kv_factor + copies x (query heads / KV heads - 1))
            + 2 x state (the state layers' fixed state, read and written back)
    step  = max(bytes_gpu / (bandwidth x eff_bw) + bytes_cpu / (cpu_bandwidth x eff_cpu),
                2 x active_params x batch / (matrix_tflops x eff_compute))
            + overhead_s + overhead_s_per_layer x layers + overhead_s_per_expert x expert runs
            + overhead_s_per_sync x synchronizing calls + overhead_s_per_old_layer x old layers + comm
    decode tokens/s = batch / step

Two code paths of older transformers releases are counted where a measured result records its
version (``runtime_paths``); an estimate without a version is for the current release, which has
neither, so they add nothing there:
- the MoE layer ran its experts one module at a time: every expert of the layer, chosen or not,
  before 4.53; the experts some token chose (the expected distinct ones for the batch) from 4.53;
  grouped kernels for all experts from 5.0. Each run costs ``overhead_s_per_expert``.
- fine-grained FP8 weights waited for the device after every linear layer (a synchronize in the
  FP8 linear's forward, through 5.3), so each such call costs ``overhead_s_per_sync``: 4 per
  attention block, 3 per dense MLP and 3 per expert run.

llama.cpp builds from before ``MMQ_DEFAULT_BUILD`` spent more time per layer in a decode step than
today's: the results measured with builds of early and mid 2024 (b1786 to b2843) read several tens
of microseconds per layer slower against their bandwidth than those of 2025 and 2026 (b4418 on),
on the same kinds of cards. Which change between them removed it is not pinned here, so the line
is the one MMQ already draws (no measured build lies near it): a result of an older build counts
its layers as ``old_layers``, each costing ``overhead_s_per_old_layer`` (fitted per key where such
results are). An estimate is for a current build and has none.

kv_factor (fitted per runtime) is how many times a step moves each byte of the cache (1: read once).
``KV_COPIES`` is fixed by how a runtime runs attention: transformers copies the cache out to every
query head that shares a KV head (repeat_kv) and reads the copy, 2 more bytes per byte of cache for
each such head beyond the first, and so does plain PyTorch model code (the runs of ``pytorch`` step
transformers' attention from a captured graph); llama.cpp and the serving runtimes read the shared
head in place (0).

Untied token embeddings and the per-layer embedding table (``per_layer_embedding_dim``) are neither read
nor multiplied (one row per token). MoE: the active parameters decide the
bytes per token (k of E experts per token; with a batch, the expected number of distinct experts).
Several GPUs: tensor-parallel runtimes (vLLM, SGLang, TensorRT-LLM) read 1/n of the weights on each
GPU at once and pay two all-reduces per layer (``tp_latency_s`` each); layer-split runtimes
(llama.cpp, transformers) run the GPUs one after the other, so decode is as fast as one GPU with
the sum of their memory. CPU offload: the layers left in host memory are read from system RAM
(``cpu_bandwidth_gbs``, default 60 GB/s, dual-channel DDR5, at ``eff_cpu``).

Prefill is compute-bound: a prompt of n tokens (x batch) costs

    FLOPs = 2 x active_params (without untied embeddings) x n x batch + batch x layers x 4 x heads x head_dim x S(n)

with S(n) = n^2 / 2 for causal attention and n w - w^2 / 2 for a sliding window w < n, over the
attention layers only (a full-attention layer with a head size of its own, ``full_head_dim``, counts
that size); sparse attention takes S(n) with w = index_topk and adds its indexer's
2 x index_heads x index_head_dim x n^2 / 2, and state layers add 4 x recurrent values x n each
(``architecture.state_flops``). KV(context) of a decode step with sparse attention is the
indexer keys of the whole context and the latents of at most index_topk tokens. Time =
max(FLOPs / (matrix_tflops x eff_compute), weight reads / (bandwidth x eff_bw)) where the weights
are read once per micro-batch (llama.cpp's 512 tokens, vLLM's 8192, the whole prompt elsewhere).
Matrix throughput is the GPU's dense ``fp16_tensor_tflops``, else ``fp32_tflops`` (no tensor units,
Apple GPUs); fp8 weights in vLLM/SGLang/TensorRT-LLM use ``fp8_tensor_tflops`` where the GPU has it.
The stored figure is the FP32-accumulate rate; llama.cpp accumulates in FP16, which GeForce cards
(consumer NVIDIA, Titans aside) run at twice that figure, so llama.cpp gets 2 x fp16_tensor_tflops
there. On NVIDIA's CUDA backend llama.cpp multiplies GGUF-quantized weights (and MXFP4) with its
own int8 kernels (MMQ) rather than dequantizing them (``llama_cpp_int8_tops``): with ``__dp4a`` on
Pascal (compute capability 6.1 to 6.x: 4 x fp32_tflops), and on the int8 tensor cores of compute
capability 7.5 and later at twice the FP16-accumulate rate (the int8 figure of NVIDIA's data sheets:
660.6 TOPS for an RTX 4090). Those tensor-core kernels became the default in June 2024 (pull request
8075); builds from before (``MMQ_DEFAULT_BUILD``, or results dated before ``MMQ_DEFAULT_DATE``
without a build number) multiplied dequantized weights with FP16 cuBLAS, and their prompt rates are
fitted as a kernel of their own (``cublas-fp16``). Volta keeps FP16 cuBLAS in every build. Elsewhere
a quantized format changes only the bytes read, and ``eff_compute`` absorbs the rest. With CPU
offload llama.cpp copies the host layers over PCIe (``pcie_gbs``, 25 GB/s) once per micro-batch.
Each micro-batch is one pass that launches every layer's kernels, as a decode step does: it adds
layers x ``overhead_s_per_layer``, the per-layer cost fitted on decode (what makes a short prompt in
transformers slow beside its matrix work).

Training throughput of a GPU relative to a reference GPU (Dettmers 2020/2023: tensor throughput,
memory bandwidth and cache decide): (T / T_ref)^a x (B / B_ref)^b x (C / C_ref)^c x (M / M_ref)^d
with T the dense matrix TFLOPS, B the bandwidth, C the L2 cache (``l2_cache_mb``) and M the memory
(benchmarks size each card's batch by it). A term is used only when both GPUs give the figure and
its exponent is fitted; a, b, c, d are fitted in ``fitting.py``.

The constants (eff_bw, overhead_s, eff_compute per runtime and vendor backend) come from
``fitting.py``; ``DEFAULT_SPEED`` holds the values used when no measurement covers a runtime.
"""
from __future__ import annotations

import math
import re

from generator.estimate.architecture import attention_layers, sparse_attention, state_bytes, state_flops
from generator.estimate.formats import KV_BYTES, LAYER_SPLIT_RUNTIMES, SERVING_RUNTIMES, TABLES, UBATCH, WEIGHT_FORMATS, backend
from generator.estimate.memory import expert_fraction, kv_read_values_per_sequence, weights_parts

DEFAULT_SPEED = dict(TABLES["speed"])
# llama.cpp made its int8 MMQ kernels the default for NVIDIA cards with int8 tensor cores in June 2024
# (pull request 8075, merged on 24 June). Its build numbers were near 3200 then (b3334 came out on
# 10 July 2024): a numbered build from here on counts as taking them. The measured results run
# either far older builds (b2824, May 2024) or far newer ones, so the exact line moves none of them.
MMQ_DEFAULT_BUILD = 3200
MMQ_DEFAULT_DATE = "2024-06-24"
DEFAULT_RELATIVE = dict(TABLES["relative"])
# transformers copies the cache out to every query head before attention (repeat_kv): each query
# head beyond the first that shares a KV head costs one write and one read of the cache
KV_COPIES = {r: t["kv_copies"] for r, t in TABLES["runtimes"].items() if "kv_copies" in t}


def version_tuple(version) -> tuple | None:
    """'4.51.3' -> (4, 51, 3); None where the version is missing or not numbered."""
    m = re.match(r"v?(\d+)\.(\d+)(?:\.(\d+))?", str(version or "").strip())
    return tuple(int(g or 0) for g in m.groups()) if m else None


def runtime_paths(runtime: str, version=None) -> dict:
    """Which of the older code paths counted in decode a runtime release takes (see the module's doc)."""
    if runtime == "llama.cpp":
        build = llama_cpp_build(version)
        return {"expert_loop": None, "fp8_sync": False, "old_build": build is not None and build < MMQ_DEFAULT_BUILD}
    v = version_tuple(version)
    if runtime != "transformers" or v is None:
        return {"expert_loop": None, "fp8_sync": False, "old_build": False}
    loop = "all" if v < (4, 53) else "chosen" if v < (5, 0) else None
    return {"expert_loop": loop, "fp8_sync": v < (5, 4), "old_build": False}


def module_runs(model: dict, weights: str, batch: int, paths: dict) -> tuple[float, float]:
    """Expert module runs and device-synchronizing linear calls per decode step on these paths."""
    layers, n_exp = model["layers"], int(model.get("experts") or 0)
    moe_layers = layers - int(model.get("dense_layers") or 0) if n_exp else 0
    per_layer = 0.0
    if paths["expert_loop"] == "all":
        per_layer = n_exp
    elif paths["expert_loop"] == "chosen":
        per_layer = n_exp * expert_fraction(model, batch)
    runs = moe_layers * per_layer
    syncs = 0.0
    if paths["fp8_sync"] and weights == "fp8":
        shared = int(model.get("shared_experts") or 0)
        syncs = 4 * layers + 3 * (layers - moe_layers) + 3 * moe_layers * shared + 3 * runs
    return runs, syncs


def speed_constants(constants: dict | None, runtime: str, gpu: dict) -> dict:
    """Defaults, overlaid by the fitted values of '*', the runtime, then runtime/backend."""
    table = (constants or {}).get("speed") or {}
    out = dict(DEFAULT_SPEED)
    for key in ("*", runtime, f"{runtime}/{backend(gpu, runtime)}"):
        out.update(table.get(key, {}))
    return out


def matrix_tflops(gpu: dict, weights: str, runtime: str, runtime_version=None) -> float:
    if weights == "fp8" and runtime in SERVING_RUNTIMES and (gpu.get("fp8_tensor_tflops") or 0) > 0:
        return gpu["fp8_tensor_tflops"]
    int8 = llama_cpp_int8_tops(gpu, weights, runtime, runtime_version)
    if int8:
        return int8
    t = gpu.get("fp16_tensor_tflops") or 0
    if t > 0 and runtime == "llama.cpp" and half_rate_fp32_accumulate(gpu):
        return 2 * t
    return t if t > 0 else (gpu.get("fp32_tflops") or 0)


def llama_cpp_build(version) -> int | None:
    """'b2824' -> 2824; None for a missing or unnumbered build (taken as a current one)."""
    m = re.fullmatch(r"b?(\d+)", str(version or "").strip())
    return int(m.group(1)) if m else None


def llama_cpp_version_of(version, date) -> str | None:
    """The build a measured result ran: its number where it gives one, else, for a result dated
    before MMQ became the default (``MMQ_DEFAULT_DATE``), a build from before it."""
    if llama_cpp_build(version) is None and date and str(date)[:10] < MMQ_DEFAULT_DATE:
        return f"b{MMQ_DEFAULT_BUILD - 1}"
    return version


def old_prompt_path(gpu: dict, weights: str, runtime: str, runtime_version=None) -> bool:
    """True where a build from before ``MMQ_DEFAULT_BUILD`` multiplied a prompt's quantized weights
    with FP16 cuBLAS on a card the current builds run int8 MMQ kernels on: today's rate exists and
    that build's does not (only the build's age takes it away)."""
    return (llama_cpp_int8_tops(gpu, weights, runtime) is not None
            and llama_cpp_int8_tops(gpu, weights, runtime, runtime_version) is None)


def llama_cpp_int8_tops(gpu: dict, weights: str, runtime: str, runtime_version=None) -> float | None:
    """The int8 rate of llama.cpp's quantized matrix kernels (MMQ) on NVIDIA's CUDA backend, or
    None where they do not decide a prompt's speed. GGUF formats (and MXFP4) multiply in int8:
    with ``__dp4a`` on Pascal (compute capability 6.1 to 6.x: four int8 products per FP32 lane,
    4 x fp32_tflops) in every build, and on int8 tensor cores (7.5 and later: twice the
    FP16-accumulate tensor rate) since MMQ became the default (``MMQ_DEFAULT_BUILD``); Volta and
    older builds on tensor-core cards multiply dequantized weights with FP16 cuBLAS."""
    if runtime != "llama.cpp" or gpu.get("vendor") != "nvidia" or backend(gpu, runtime) != "cuda":
        return None
    if not (WEIGHT_FORMATS.get(weights, {}).get("gguf") or weights == "mxfp4"):
        return None
    cc = version_tuple(gpu.get("compute_capability"))
    if cc is None:
        return None
    if (6, 1) <= cc < (7, 0):
        return 4 * (gpu.get("fp32_tflops") or 0) or None
    build = llama_cpp_build(runtime_version)
    t = gpu.get("fp16_tensor_tflops") or 0
    if cc >= (7, 5) and t > 0 and (build is None or build >= MMQ_DEFAULT_BUILD):
        return 2 * t * (2 if half_rate_fp32_accumulate(gpu) else 1)
    return None


def half_rate_fp32_accumulate(gpu: dict) -> bool:
    """GeForce cards (consumer NVIDIA, Titans aside) run FP32-accumulate tensor math at half their FP16-accumulate rate."""
    return (gpu.get("vendor") == "nvidia" and gpu.get("segment") == "consumer"
            and "titan" not in str(gpu.get("id") or gpu.get("name") or "").lower())


def _split(model: dict, w: dict, gpu_layers):
    """Block share on the GPU, and whether the head is there."""
    layers = model["layers"]
    on_gpu = layers if gpu_layers is None else max(0, min(layers, gpu_layers))
    return on_gpu / layers, on_gpu == layers


def decode_terms(model: dict, gpu: dict, weights: str, kv_cache: str, context: int, batch: int, runtime: str,
                 gpus: int = 1, gpu_layers=None, constants: dict | None = None, runtime_version=None) -> dict:
    """The parts of one decode step at efficiency 1, for ``decode_from_terms`` and the fitting."""
    k = speed_constants(constants, runtime, gpu)
    w = weights_parts(model, weights, runtime)
    frac, head_on_gpu = _split(model, w, gpu_layers)
    experts_read = w["experts"] * expert_fraction(model, batch)
    block = w["other"] + experts_read
    kv = kv_read_values_per_sequence(model, context) * KV_BYTES[kv_cache] * batch
    moved = block + kv + 2 * state_bytes(model, batch)  # the state is read and written back
    gpu_bytes = moved * frac + (w["head"] if head_on_gpu else 0.0)
    cpu_bytes = moved * (1 - frac) + (0.0 if head_on_gpu else w["head"])
    n = max(1, gpus)
    tensor_parallel = n > 1 and runtime not in LAYER_SPLIT_RUNTIMES
    bw = gpu["memory_bandwidth_gbs"] * 1e9
    p = w["params"]
    flops = 2 * computed_params(model, p) * batch
    tflops = matrix_tflops(gpu, weights, runtime, runtime_version) * 1e12
    kv_s = kv * frac / bw / (n if tensor_parallel else 1)
    paths = runtime_paths(runtime, runtime_version)
    runs, syncs = module_runs(model, weights, batch, paths)
    return {"expert_runs": runs, "sync_calls": syncs, "old_layers": model["layers"] if paths["old_build"] else 0,
            "mem_s": gpu_bytes / bw / (n if tensor_parallel else 1),
            "kv_s": kv_s,
            "kv_copy_s": kv_s * KV_COPIES.get(runtime, 0.0) * (query_group(model) - 1),
            "cpu_s": cpu_bytes / (k["cpu_bandwidth_gbs"] * 1e9),
            "compute_s": flops / tflops / (n if tensor_parallel else 1) if tflops > 0 else 0.0,
            "comm_s": 2 * model["layers"] * k["tp_latency_s"] if tensor_parallel else 0.0,
            "batch": batch, "layers": model["layers"], "bytes_per_step": gpu_bytes + cpu_bytes}


def computed_params(model: dict, p: dict) -> float:
    """Parameters a token multiplies: the active ones less the tables it only looks a row up in
    (untied token embeddings, the per-layer embedding table)."""
    return max(p["active"] - (0 if model.get("tied_embeddings") else p["embed"]) - p["per_layer"], 0)


def query_group(model: dict) -> float:
    """Query heads per KV head (1 for multi-head attention and for MLA's shared latent)."""
    if model.get("attention") == "mla" and model.get("kv_lora_rank"):
        return 1.0
    return model["attention_heads"] / model["kv_heads"] if model.get("kv_heads") else 1.0


def decode_from_terms(t: dict, k: dict) -> float:
    mem = t["mem_s"] + (k["kv_factor"] - 1) * t["kv_s"] + t["kv_copy_s"]
    step = max(mem / k["eff_bw"] + t["cpu_s"] / k["eff_cpu"], t["compute_s"] / k["eff_compute"])
    paths = (k["overhead_s_per_expert"] * t.get("expert_runs", 0.0) + k["overhead_s_per_sync"] * t.get("sync_calls", 0.0)
             + k["overhead_s_per_old_layer"] * t.get("old_layers", 0))
    return t["batch"] / (step + k["overhead_s"] + k["overhead_s_per_layer"] * t["layers"] + paths + t["comm_s"])


def attention_flops(model: dict, n: float) -> float:
    """FLOPs of QK^T and AV for a causal prompt of n tokens, summed over the attention layers,
    plus the state layers' token mixing; sparse attention attends to at most index_topk tokens
    and pays its indexer's scores over the whole prompt."""
    layers = attention_layers(model)
    per = 4 * model["attention_heads"] * model["head_dim"]
    per_full = 4 * model["attention_heads"] * (model.get("full_head_dim") or model["head_dim"])
    window = model.get("sliding_window") or 0
    sliding = min(layers, model.get("sliding_window_layers") or 0) if window else 0
    full = n * n / 2
    local = full if n <= window else n * window - window * window / 2
    flops = per_full * (layers - sliding) * full + per * sliding * local
    if sparse_attention(model):
        topk = model["index_topk"]
        selected = full if n <= topk else n * topk - topk * topk / 2
        flops = per * layers * selected + 2 * (model.get("index_heads") or 0) * model["index_head_dim"] * layers * full
    return flops + state_flops(model, n)


def prefill_terms(model: dict, gpu: dict, weights: str, context: int, batch: int, runtime: str,
                  gpus: int = 1, gpu_layers=None, constants: dict | None = None, runtime_version=None) -> dict:
    """The parts of a prefill of ``context`` prompt tokens x ``batch`` sequences at efficiency 1."""
    k = speed_constants(constants, runtime, gpu)
    w = weights_parts(model, weights, runtime)
    frac, head_on_gpu = _split(model, w, gpu_layers)
    tokens = context * batch
    p = w["params"]
    flops = 2 * computed_params(model, p) * tokens
    flops += batch * attention_flops(model, context)
    # the routed experts' share: small matrix products per expert, slower than the dense ones
    # by the fitted factor moe_prefill
    n_exp, per_token = model.get("experts") or 0, model.get("experts_per_token") or 0
    expert_flops = 2 * p["experts"] * per_token / n_exp * tokens if n_exp and p["experts"] else 0.0
    ubatch = min(UBATCH.get(runtime, tokens), tokens)
    chunks = math.ceil(tokens / ubatch)
    per_chunk = w["other"] + w["experts"] * expert_fraction(model, ubatch) + w["head"]
    cpu_bytes = (w["other"] + w["experts"] * expert_fraction(model, ubatch)) * (1 - frac) + (0 if head_on_gpu else w["head"])
    n = max(1, gpus)
    tensor_parallel = n > 1 and runtime not in LAYER_SPLIT_RUNTIMES
    tflops = matrix_tflops(gpu, weights, runtime, runtime_version) * 1e12
    share = 1 / tflops / (n if tensor_parallel else 1) if tflops > 0 else None
    return {"compute_s": (flops - expert_flops) * share if share else None,
            "expert_s": expert_flops * share if share else 0.0,
            "mem_s": chunks * per_chunk / (gpu["memory_bandwidth_gbs"] * 1e9) / (n if tensor_parallel else 1),
            "pcie_s": chunks * cpu_bytes / (k["pcie_gbs"] * 1e9),
            "comm_s": chunks * 2 * model["layers"] * k["tp_latency_s"] if tensor_parallel else 0.0,
            "layer_passes": chunks * model["layers"], "tokens": tokens, "flops": flops}


def prefill_from_terms(t: dict, k: dict):
    """Prompt tokens per second; None when the GPU gives no matrix throughput."""
    if t["compute_s"] is None:
        return None
    compute = (t["compute_s"] + t["expert_s"] * k["moe_prefill"]) / k["eff_compute"]
    time = max(compute, t["mem_s"] / k["eff_bw"]) + t["pcie_s"] + t["comm_s"]
    # each pass launches every layer's kernels: the per-layer cost fitted on decode steps
    time += t["layer_passes"] * k["overhead_s_per_layer"]
    return t["tokens"] / time if time > 0 else 0.0


def decode_tokens_per_s(model: dict, gpu: dict, weights: str, kv_cache: str, context: int, batch: int, runtime: str,
                        gpus: int = 1, gpu_layers=None, constants: dict | None = None) -> float:
    t = decode_terms(model, gpu, weights, kv_cache, context, batch, runtime, gpus, gpu_layers, constants)
    return decode_from_terms(t, speed_constants(constants, runtime, gpu))


def prefill_tokens_per_s(model: dict, gpu: dict, weights: str, context: int, batch: int, runtime: str,
                         gpus: int = 1, gpu_layers=None, constants: dict | None = None):
    t = prefill_terms(model, gpu, weights, context, batch, runtime, gpus, gpu_layers, constants)
    return prefill_from_terms(t, speed_constants(constants, runtime, gpu))


def training_features(gpu: dict) -> tuple:
    """log of (dense matrix TFLOPS, bandwidth GB/s, L2 cache MB, memory GB the GPU may use: with
    unified memory its share); None where the GPU gives no figure."""
    memory = gpu.get("memory_gb")
    if memory and gpu.get("unified_memory"):
        memory *= gpu.get("gpu_memory_share") or 1
    figures = (gpu.get("fp16_tensor_tflops") or gpu.get("fp32_tflops"), gpu.get("memory_bandwidth_gbs"),
               gpu.get("l2_cache_mb"), memory)
    return tuple(math.log(v) if v and v > 0 else None for v in figures)


def relative_training(gpu: dict, reference: dict, coeffs: dict | None = None):
    """Training throughput of ``gpu`` over ``reference``; None when a figure is missing, or when the
    fitted coefficients name the makers whose cards were measured (``vendors``) and the card's is not
    among them: the same tensor throughput does not train alike on another maker's software stack."""
    vendors = (coeffs or {}).get("vendors")
    if vendors is not None and gpu.get("vendor") not in vendors:
        return None
    c = dict(DEFAULT_RELATIVE)
    c.update({k: v for k, v in (coeffs or {}).items() if k in DEFAULT_RELATIVE})
    g, r = training_features(gpu), training_features(reference)
    if None in (g[0], g[1], r[0], r[1]):
        return None
    log = c["a"] * (g[0] - r[0]) + c["b"] * (g[1] - r[1])
    for name, i in (("c", 2), ("d", 3)):
        if c[name] and g[i] is not None and r[i] is not None:
            log += c[name] * (g[i] - r[i])
    return math.exp(log)
