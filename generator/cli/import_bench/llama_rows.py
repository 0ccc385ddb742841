"""llama-bench's rows to results: the GPU, model and file type they name, the runs the results can
hold, and a result with its note for each test."""
from __future__ import annotations

import re
from typing import NamedTuple

from generator.cli.import_bench.errors import BenchInputError
from generator.cli.import_bench.matching import match_gpu, match_model
from generator.cli.import_bench.questions import Facts
from generator.cli.import_bench.readers import GIB, as_int
from generator.data.records_llm import KV_FORMATS, WEIGHT_FORMATS

# llama.cpp's names of the GGUF file types (llama_model_ftype_name) that the estimates know
GGUF_TYPES = {
    "all f32": "f32", "f32": "f32", "f16": "f16", "bf16": "bf16", "q8_0": "q8_0", "q6_k": "q6_k",
    "q5_k - medium": "q5_k_m", "q4_k - medium": "q4_k_m", "q4_k - small": "q4_k_s", "q4_0": "q4_0",
    "mxfp4 moe": "mxfp4", "mxfp4": "mxfp4",
}
# model descriptions are "<arch> <size> <file type>" (llama_model_desc)
MODEL_TYPE_RE = re.compile(r"^(?P<arch>\S+) (?P<size>\S+) (?P<ftype>.+?)(?: \(guessed\))?$")


def _flash(value) -> bool | None:
    """llama-bench's flash_attn: a bool in older builds, -1 (auto), 0 or 1 since; None for auto."""
    if value is None or value == "":
        return None
    if isinstance(value, bool):
        return value
    text = str(value).strip().lower()
    if text in ("true", "false"):
        return text == "true"
    return {0: False, 1: True}.get(as_int(text))


def gguf_weights(model_type: str) -> str | None:
    m = MODEL_TYPE_RE.match(model_type.strip())
    if not m:
        return None
    ftype = m["ftype"].strip().lower().removeprefix("mostly ")  # older builds wrote "mostly Q4_0"
    return GGUF_TYPES.get(ftype)


def _llama_gpus(row: dict, facts: Facts) -> tuple[list[str], int | None]:
    """The device names a row ran on and how many GPUs did the work (None when the row cannot tell)."""
    names = [n.strip() for n in str(row.get("gpu_info") or "").split(",") if n.strip()]
    if facts.gpus:
        return names, facts.gpus
    if str(row.get("split_mode", "layer")) == "none":
        return names, 1
    devs = str(row.get("devices") or "auto")
    if devs not in ("auto", "none", ""):
        return names, len(devs.split("/"))
    return names, len(names) or None


def _llama_gpu_need(rows: list[dict], facts: Facts, ds) -> None:
    """The GPU id from the device names the rows give, else why --gpu is needed."""
    names = sorted({n for r in rows for n in _llama_gpus(r, facts)[0]})
    ids = {n: match_gpu(n, ds.gpus) for n in names}
    found = {gid for gid, _ in ids.values() if gid}
    if len(found) == 1 and all(gid for gid, _ in ids.values()):
        facts.gpu = found.pop()
    elif not names:
        facts.missing.append(("--gpu", "the output names no GPU (a markdown table without the device lines); "
                                       "a GPU id of data/gpus, e.g. rtx-4090"))
    elif len(found) > 1:
        facts.missing.append(("--gpu", f"the run used different GPUs ({', '.join(names)}); a measurement names "
                                       "one kind: its id, with --gpus"))
    else:
        near = sorted({i for _, ns in ids.values() for i in ns})
        hint = f" (it may be one of {', '.join(near[:5])})" if near else ""
        unknown = ", ".join(n for n, (gid, _) in ids.items() if not gid)
        facts.missing.append(("--gpu", f"'{unknown}' is not a GPU of data/gpus{hint}; its id"))


def _llama_file_types(rows: list[dict]) -> set[str]:
    """The rows' model descriptions: one model, in file types the estimates know; else BenchInputError."""
    bases = {_base(str(r.get("model_type") or "")) for r in rows}
    if len(bases) > 1:
        raise BenchInputError(f"the output holds {len(bases)} models ({', '.join(sorted(' '.join(b) for b in bases))}); "
                              "import one model at a time (split the file)")
    kinds = {str(r.get("model_type") or "") for r in rows}
    unknown = sorted(k for k in kinds if gguf_weights(k) is None)
    if unknown:
        raise BenchInputError(f"the file type of '{', '.join(unknown)}' is none the estimates know "
                              f"(they know {', '.join(WEIGHT_FORMATS)})")
    return kinds


def _llama_model_need(rows: list[dict], kinds: set[str], facts: Facts, ds) -> None:
    """The model id from the rows' file names and descriptions, else why --model is needed."""
    names = {str(r.get("model_filename") or "") for r in rows} | kinds
    ids, near = set(), set()
    for name in names:
        mid, ns = match_model(name, ds.models)
        if mid:
            ids.add(mid)
        near.update(ns)
    if len(ids) > 1:
        raise BenchInputError(f"the files name different models ({', '.join(sorted(ids))}); "
                              "import one model at a time (split the file)")
    if ids:
        facts.model = ids.pop()
        return
    label = sorted(str(r.get("model_filename") or r.get("model_type")) for r in rows)[0]
    hint = f" (it may be one of {', '.join(sorted(near)[:5])})" if near else ""
    facts.missing.append(("--model", f"'{label}' names no model of data/models{hint}; its id "
                                     "or Hugging Face repository"))


def llama_needs(rows: list[dict], facts: Facts, ds) -> None:
    if facts.gpu is None:
        _llama_gpu_need(rows, facts, ds)
    if facts.gpus is None and any(_llama_gpus(r, facts)[1] is None for r in rows):
        facts.missing.append(("--gpus", "the output does not say how many GPUs ran it"))
    kinds = _llama_file_types(rows)
    facts.weights = ", ".join(sorted({gguf_weights(k) for k in kinds}))  # for the title: each row names its own
    if facts.model is None:
        _llama_model_need(rows, kinds, facts, ds)


def _base(model_type: str) -> tuple[str, ...]:
    """A model description's architecture and size: the same model in another file type has the same."""
    m = MODEL_TYPE_RE.match(model_type.strip())
    return (m["arch"], m["size"]) if m else (model_type,)


def _kv_types(row: dict) -> tuple[str, str]:
    return str(row.get("type_k") or "f16").lower(), str(row.get("type_v") or "f16").lower()


def _llama_unheld(row: dict, layers) -> str | None:
    """Why the results cannot hold a row's run (not wholly on the GPU, or a KV cache they do not know), else None."""
    ngl = as_int(row.get("n_gpu_layers"))
    backend = str(row.get("backends") or "")
    if ngl is None and backend in ("CPU", "BLAS", ""):
        return f"a run on the CPU ({backend or 'no backend named'})"
    if ngl is not None and 0 <= ngl < (layers or 0):
        return f"only {ngl} of {layers} layers on the GPU (the results hold whole-GPU runs)"
    if as_int(row.get("n_cpu_moe"), 0):
        return f"experts kept on the CPU (n_cpu_moe {row.get('n_cpu_moe')})"
    if str(row.get("no_kv_offload", "0")).lower() in ("1", "true"):
        return "the KV cache kept in host memory (no_kv_offload)"
    type_k, type_v = _kv_types(row)
    if type_k != type_v or type_k not in KV_FORMATS:
        return f"a KV cache of {type_k}/{type_v} (the results know {', '.join(KV_FORMATS)})"
    return None


class LlamaTest(NamedTuple):
    """A llama-bench test as a result: its name, metric, context, further fields and the rate."""
    name: str
    metric: str
    context: int
    extra: dict
    value: float


def _llama_test(n_prompt: int, n_gen: int, depth: int, rate: float) -> LlamaTest | str:
    """What a test measured, or why the results cannot hold it."""
    if n_prompt and not n_gen:
        if depth:
            return (f"a prompt of {n_prompt} after {depth} tokens (the results hold prompts "
                    "from an empty context)")
        test = LlamaTest(f"pp{n_prompt}", "prefill_tokens_per_s", n_prompt, {}, rate)
    elif n_gen and not n_prompt:
        test = LlamaTest(f"tg{n_gen}", "decode_tokens_per_s", depth, {}, rate)
    elif n_gen and n_prompt and not depth:
        # llama-bench counts prompt and generated tokens over the whole call; the result counts the generated
        test = LlamaTest(f"pp{n_prompt}+tg{n_gen}", "decode_tokens_per_s", n_prompt, {"generated_tokens": n_gen},
                         rate * n_gen / (n_prompt + n_gen))
    else:
        return "neither a prompt nor a generation the results can hold"
    if not test.value > 0:
        return f"a rate of {test.value}"
    return test


def _llama_size(row: dict, base: dict) -> dict:
    """The weights_gib result of a row's model file."""
    params = as_int(row.get("model_n_params"))
    return {**base, "context": 0, "batch": 1, "metric": "weights_gib",
            "value": round(as_int(row["model_size"]) / GIB, 2),
            "note": f"Size llama-bench reports for the {row.get('model_type')} file"
                    + (f" ({params / 1e9:.2f} B parameters)." if params else ".")}


def _llama_result(row: dict, base: dict, test: LlamaTest, depth: int, flash: bool | None, facts: Facts) -> dict:
    result = {**base, "context": test.context, "batch": 1, **test.extra}
    if flash is not None:
        result["flash_attention"] = flash
    result.update(metric=test.metric, value=round(test.value, 2))
    version = llama_version(row)
    if version and version != facts.runtime_version:
        result["runtime_version"] = version
    result["note"] = _llama_note(row, test.name, depth, as_int(row.get("n_gpu_layers")), base["gpus"])
    if test.extra:
        result["note"] = (f"{result['note'][:-1]}; llama-bench's {float(row['avg_ts']):.2f} t/s counts prompt and "
                          "generated tokens alike, the value the generated ones over the whole call.")[:600]
    return result


def llama_results(rows: list[dict], facts: Facts, ds, warn) -> list[dict]:
    layers = ds.models[facts.model].data.get("layers")
    results: list[dict] = []
    sized: set[str] = set()
    for i, row in enumerate(rows, start=1):
        where = row.get("where") or f"record {i}"
        n_prompt, n_gen, depth = as_int(row.get("n_prompt"), 0), as_int(row.get("n_gen"), 0), as_int(row.get("n_depth"), 0)
        unheld = _llama_unheld(row, layers)
        if unheld:
            warn(f"{where}: skipped, {unheld}")
            continue
        base = {"gpu": facts.gpu, "gpus": _llama_gpus(row, facts)[1], "model": facts.model,
                "weights": gguf_weights(row["model_type"]), "kv_cache": _kv_types(row)[0]}
        flash = _flash(row.get("flash_attn"))
        test = _llama_test(n_prompt, n_gen, depth, float(row["avg_ts"]))
        if isinstance(test, str):
            warn(f"{where}: skipped, {test}")
            continue
        if row["model_type"] not in sized and as_int(row.get("model_size"), 0):
            sized.add(row["model_type"])
            results.append(_llama_size(row, base))
        results.append(_llama_result(row, base, test, depth, flash, facts))
    return results


def llama_version(row: dict) -> str | None:
    number = as_int(row.get("build_number"))
    return f"b{number}" if number else None


def _llama_note(row: dict, test: str, depth: int, ngl, gpus) -> str:
    parts = [f"llama-bench {test}" + (f" @ d{depth}" if depth else "")]
    if row.get("backends"):
        parts.append(f"{row['backends']} backend")
    if ngl is not None:
        parts.append("all layers on the GPU" if ngl < 0 else f"-ngl {ngl}")
    if gpus and gpus > 1:
        parts.append(f"{gpus} GPUs split by {row.get('split_mode') or 'layer'}")
    for key, label in (("n_batch", "n_batch"), ("n_ubatch", "n_ubatch"), ("n_threads", "threads")):
        if row.get(key) not in (None, ""):
            parts.append(f"{label} {row[key]}")
    if row.get("stddev_ts") not in (None, ""):
        parts.append(f"± {float(row['stddev_ts']):.2f} t/s over the repetitions")
    if row.get("build_commit"):
        parts.append(f"build {row['build_commit']}" + (f" ({row['build_number']})" if row.get("build_number") else ""))
    if row.get("model_filename"):
        parts.append(f"file {str(row['model_filename']).replace(chr(92), '/').rsplit('/', 1)[-1]}")
    if row.get("test_time"):
        parts.append(f"run {row['test_time']}")
    return (", ".join(parts) + ".")[:600]
