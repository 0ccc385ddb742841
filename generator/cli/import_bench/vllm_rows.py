"""vLLM's benchmark results to results: the model, GPU, GPU count and weight format they name or
lack, and one decode result per run at an unbounded request rate."""
from __future__ import annotations

from generator.cli.import_bench.errors import BenchInputError
from generator.cli.import_bench.matching import match_gpu, match_model, words_of
from generator.cli.import_bench.questions import Facts
from generator.cli.import_bench.readers import as_int


def _vllm_model_need(first: dict, facts: Facts, ds) -> None:
    mid, near = match_model(str(first.get("model_id") or ""), ds.models)
    if mid:
        facts.model = mid
        return
    hint = f" (it may be one of {', '.join(near[:5])})" if near else ""
    facts.missing.append(("--model", f"'{first.get('model_id')}' names no model of data/models{hint}; "
                                     "its id or Hugging Face repository"))


def _vllm_gpu_need(first: dict, facts: Facts, ds) -> None:
    named = first.get("gpu") or first.get("gpu_name") or first.get("gpu_type")
    gid = match_gpu(str(named), ds.gpus)[0] if named else None
    if gid:
        facts.gpu = gid
    else:
        facts.missing.append(("--gpu", "vLLM's results do not name the GPU; a GPU id of data/gpus, e.g. h100-sxm"))


def _vllm_gpus_need(first: dict, facts: Facts) -> None:
    tp = first.get("tensor_parallel_size") or first.get("tp")
    if tp is not None and str(tp).isdigit():
        facts.gpus = int(tp)
    else:
        facts.missing.append(("--gpus", "vLLM's results do not say how many GPUs served the model"))


def _vllm_version(first: dict) -> str | None:
    version = str(first.get("version") or first.get("vllm_version") or "")
    return version.lstrip("v") if version and version != "N/A" else None


def vllm_needs(rows: list[dict], facts: Facts, ds) -> None:
    if len({r.get("model_id") for r in rows}) > 1:
        raise BenchInputError("the results hold more than one model; import one model at a time")
    first = rows[0]
    if facts.model is None:
        _vllm_model_need(first, facts, ds)
    if facts.gpu is None:
        _vllm_gpu_need(first, facts, ds)
    if facts.gpus is None:
        _vllm_gpus_need(first, facts)
    if facts.weights is None:
        facts.weights = _weights_from_name(str(first.get("model_id") or ""))
        if facts.weights is None:
            facts.missing.append(("--weights", "the model id names no weight format; e.g. bf16, fp8, awq"))
    if facts.batch is None and not all(_concurrency(r) for r in rows):
        facts.missing.append(("--batch", "the run set no --max-concurrency; the requests in flight at once"))
    if facts.runtime_version is None:
        facts.runtime_version = _vllm_version(first)


def _concurrency(row: dict) -> int | None:
    value = row.get("max_concurrency")
    return value if isinstance(value, int) and not isinstance(value, bool) and value > 0 else None


def _weights_from_name(name: str) -> str | None:
    words = set(words_of(name))
    for word, fmt in (("awq", "awq"), ("gptq", "gptq"), ("fp8", "fp8"), ("mxfp4", "mxfp4"), ("bf16", "bf16"),
                      ("fp16", "f16"), ("int8", "int8"), ("w8a8", "int8"), ("bnb", "nf4")):
        if word in words:
            return fmt
    return None


def vllm_results(rows: list[dict], facts: Facts, warn) -> list[dict]:
    results = []
    for i, row in enumerate(rows, start=1):
        rate = row.get("request_rate", "inf")
        if str(rate) not in ("inf", "Infinity"):
            warn(f"record {i}: skipped, requests arrived at {rate} per second, which bounds the throughput")
            continue
        completed = as_int(row.get("completed"), 0)
        if not completed or not row.get("output_throughput"):
            warn(f"record {i}: skipped, no completed requests")
            continue
        batch = _concurrency(row) or facts.batch
        prompt = round(as_int(row.get("total_input_tokens"), 0) / completed)
        generated = round(as_int(row.get("total_output_tokens"), 0) / completed)
        if prompt < 1 or generated < 1:
            warn(f"record {i}: skipped, no token counts")
            continue
        parts = [f"vLLM serving benchmark, {completed} requests of {prompt} prompt and {generated} generated "
                 f"tokens on average ({row.get('dataset_name') or 'dataset not named'}), {batch} at a time; "
                 "output tokens per second of the whole run"]
        for key, label in (("median_ttft_ms", "median TTFT"), ("median_tpot_ms", "median TPOT")):
            if isinstance(row.get(key), (int, float)):
                parts.append(f"{label} {row[key]:.1f} ms")
        if as_int(row.get("failed"), 0):
            parts.append(f"{row['failed']} requests failed")
        if row.get("date"):
            parts.append(f"run {row['date']}")
        results.append({"gpu": facts.gpu, "gpus": facts.gpus, "model": facts.model, "weights": facts.weights,
                        "context": prompt, "batch": batch, "generated_tokens": generated,
                        "metric": "decode_tokens_per_s", "value": round(float(row["output_throughput"]), 2),
                        "note": ("; ".join(parts) + ".")[:600]})
    return results
