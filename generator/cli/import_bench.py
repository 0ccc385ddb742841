"""``python -m generator import-bench FILE``: a measurements file from llama-bench's or vLLM's output.

Reads llama-bench's four text outputs (``-o json``, ``-o jsonl``, ``-o csv`` and the default
markdown table) and the JSON that ``vllm bench serve --save-result`` (formerly
``benchmarks/benchmark_serving.py``) writes. Every condition the file states is taken from it;
what it does not state (where the results are published, when, and where the file cannot tell:
the GPU, the model, the GPU count) is asked for on a terminal, or given as options. Without a
terminal, or with ``--no-input``, a missing fact ends the command with exit 2 and one message that
lists every option still needed; nothing is written.

Exit codes: 0 written (or printed with --dry-run), 1 the written file does not validate (it is
removed again) or data/ has problems, 2 the input cannot be read or a fact is missing.
"""
from __future__ import annotations

import csv
import datetime as _dt
import difflib
import io
import json
import re
import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import NamedTuple
from urllib.parse import urlparse

from ruamel.yaml import YAML

from generator.data.dataset import today_utc
from generator.data.loader import load_dataset
from generator.data.records_llm import KV_FORMATS, VERSION_RE, WEIGHT_FORMATS
from generator.data.schema import ID_RE, URL_RE
from generator.publish.text import yaml_str

GIB = 1024 ** 3
_SAFE = YAML(typ="safe", pure=True)


class BenchInputError(Exception):
    """Input that cannot become a measurement: printed as one message, exit 2."""


# ---------------------------------------------------------------- reading the files

# llama.cpp's names of the GGUF file types (llama_model_ftype_name) that the estimates know
GGUF_TYPES = {
    "all f32": "f32", "f32": "f32", "f16": "f16", "bf16": "bf16", "q8_0": "q8_0", "q6_k": "q6_k",
    "q5_k - medium": "q5_k_m", "q4_k - medium": "q4_k_m", "q4_k - small": "q4_k_s", "q4_0": "q4_0",
    "mxfp4 moe": "mxfp4", "mxfp4": "mxfp4",
}
# model descriptions are "<arch> <size> <file type>" (llama_model_desc)
MODEL_TYPE_RE = re.compile(r"^(?P<arch>\S+) (?P<size>\S+) (?P<ftype>.+?)(?: \(guessed\))?$")
TEST_RE = re.compile(r"^(?:pp\s*(?P<pp>\d+))?\s*\+?\s*(?:tg\s*(?P<tg>\d+))?(?:\s*@\s*d\s*(?P<depth>\d+))?$")
DEVICE_RE = re.compile(r"^\s*Device \d+: (?P<name>[^,]+), (?:compute capability|gfx)", re.M)
BUILD_RE = re.compile(r"^build: (?P<commit>\S+) \((?P<number>\d+)\)", re.M)
# markdown column -> llama-bench field (llama-bench.cpp, get_field_display_name)
MD_COLUMNS = {"ngl": "n_gpu_layers", "sm": "split_mode", "threads": "n_threads", "nkvo": "no_kv_offload",
              "fa": "flash_attn", "dev": "devices", "ts": "tensor_split", "mg": "main_gpu", "backend": "backends"}
LLAMA_KEYS = {"avg_ts", "n_prompt", "model_type"}
VLLM_KEYS = {"output_throughput", "model_id"}


def _number(text: str) -> float:
    return float(text.replace(",", "").strip())


def _size_bytes(text: str) -> int:
    """'4.58 GiB' / '636.16 MiB' -> bytes (the markdown table's size column)."""
    value, unit = text.split()
    return int(_number(value) * {"GiB": GIB, "MiB": 1024 ** 2}[unit])


def _params(text: str) -> int:
    value, unit = text.split()
    return int(_number(value) * {"B": 1e9, "M": 1e6}[unit])


def _md_test(value: str) -> dict:
    m = TEST_RE.match(value)
    if not m or not (m["pp"] or m["tg"]):
        raise ValueError(f"test '{value}'")
    return {"n_prompt": int(m["pp"] or 0), "n_gen": int(m["tg"] or 0), "n_depth": int(m["depth"] or 0)}


def _md_rate(value: str) -> dict:
    avg, _, std = value.partition("±")
    fields = {"avg_ts": _number(avg)}
    if std.strip():
        fields["stddev_ts"] = _number(std)
    return fields


# markdown columns that need reading -> the llama-bench fields they give; the others keep their text
MD_READERS = {
    "model": lambda value: {"model_type": value},
    "size": lambda value: {"model_size": _size_bytes(value)},
    "params": lambda value: {"model_n_params": _params(value)},
    "test": _md_test,
    "t/s": _md_rate,
}


def _md_cells(line: str) -> list[str]:
    return [c.strip() for c in line.strip("|").split("|")]


def _md_row(header: list[str], cells: list[str], n: int) -> dict:
    """One table line as llama-bench's JSON fields; BenchInputError naming the line when a cell cannot be read."""
    row: dict = {"where": f"table line {n}"}
    try:
        for col, value in dict(zip(header, cells, strict=True)).items():  # a repeated column: its last cell
            reader = MD_READERS.get(col)
            row.update(reader(value) if reader else {MD_COLUMNS.get(col, col): value})
    except (ValueError, KeyError) as exc:
        raise BenchInputError(f"table row {n}: cannot read {exc}") from None
    return row


def _md_run(text: str) -> dict:
    """What the lines around the table say of every row: the build and the devices."""
    fields: dict = {}
    build = BUILD_RE.search(text)
    if build:
        fields["build_commit"], fields["build_number"] = build["commit"], int(build["number"])
    devices = DEVICE_RE.findall(text)
    if devices:
        fields["gpu_info"] = ", ".join(d.strip() for d in devices)
    return fields


def _markdown_rows(text: str) -> list[dict]:
    lines = [ln.strip() for ln in text.splitlines() if ln.strip().startswith("|")]
    if len(lines) < 3:
        raise BenchInputError("no llama-bench table: a markdown table needs a header, a rule and a row")
    header = _md_cells(lines[0])
    around = _md_run(text)
    rows = []
    for n, line in enumerate(lines[2:], start=3):
        cells = _md_cells(line)
        if len(cells) != len(header) or set("".join(cells)) <= set("-: "):
            continue
        rows.append({**_md_row(header, cells, n), **around})
    if not rows:
        raise BenchInputError("no llama-bench result rows in the table")
    return rows


def read_output(text: str) -> tuple[str, list[dict]]:
    """('llama-bench' | 'vllm', rows) from any of the outputs."""
    text = text.removeprefix("\ufeff")
    body = text.strip()
    if not body:
        raise BenchInputError("the file is empty")
    rows: list | None = None
    if body[0] in "[{":
        try:
            whole = json.loads(body)
            rows = whole if isinstance(whole, list) else [whole]
        except ValueError:
            try:  # JSON lines (llama-bench -o jsonl, or vLLM's --append-result)
                rows = [json.loads(ln) for ln in body.splitlines() if ln.strip()]
            except ValueError as exc:
                raise BenchInputError(f"not JSON or JSON lines: {exc}") from None
    elif body.startswith("|") or "\n|" in body:
        return "llama-bench", _markdown_rows(body)
    elif "avg_ts" in body.splitlines()[0]:
        rows = list(csv.DictReader(io.StringIO(body)))
    if not rows or not all(isinstance(r, dict) for r in rows):
        raise BenchInputError("not a llama-bench output (json, jsonl, csv or markdown) nor a vLLM benchmark result")
    if all(LLAMA_KEYS <= set(r) for r in rows):
        return "llama-bench", rows
    if all(VLLM_KEYS <= set(r) for r in rows):
        return "vllm", rows
    raise BenchInputError("neither llama-bench's fields (model_type, n_prompt, avg_ts) nor vLLM's "
                       "(model_id, output_throughput) are in every record")


# ---------------------------------------------------------------- the catalogue

GPU_NOISE = {"nvidia", "amd", "intel", "r", "tm", "geforce", "radeon", "apple", "corporation", "graphics"}


def _words(text: str) -> list[str]:
    return [w for w in re.split(r"[^a-z0-9]+", str(text).lower()) if w]


def _gpu_key(text: str) -> tuple[str, ...]:
    return tuple(w for w in _words(text) if w not in GPU_NOISE)


def match_gpu(name: str, gpus: dict) -> tuple[str | None, list[str]]:
    """The catalogue id of a device name (by id, name and aliases), else None and the near ids."""
    wanted = _gpu_key(name)
    if not wanted:
        return None, []
    exact, wider = set(), set()
    for ident, rec in gpus.items():
        keys = [_gpu_key(ident), _gpu_key(rec.data.get("name", ""))]
        keys += [_gpu_key(a) for a in rec.data.get("aliases") or ()]
        if wanted in keys:
            exact.add(ident)
        elif any(set(wanted) <= set(k) for k in keys):
            wider.add(ident)
    if len(exact) == 1:
        return exact.pop(), []
    if not exact and len(wider) == 1:
        return wider.pop(), []
    if exact or wider:
        return None, sorted(exact or wider)
    # nothing holds every word: the ids whose names read closest
    names: dict[str, str] = {}
    for ident, rec in gpus.items():
        for text in (ident, rec.data.get("name", ""), *(rec.data.get("aliases") or ())):
            names.setdefault(" ".join(_gpu_key(text)), ident)
    model_words = {w for w in wanted if re.fullmatch(r"[a-z]+\d+[a-z0-9]*", w) and not w.endswith("gb")}
    same = [n for n in sorted(names) if model_words & set(n.split())]
    near = same or difflib.get_close_matches(" ".join(wanted), sorted(names), n=8, cutoff=0.6)
    return None, list(dict.fromkeys(names[n] for n in near))[:5]


def _contains(seq: list[str], part: list[str]) -> bool:
    n = len(part)
    return any(seq[i:i + n] == part for i in range(len(seq) - n + 1))


def match_model(text: str, models: dict) -> tuple[str | None, list[str]]:
    """The catalogue model whose id, name or Hugging Face repository is named in ``text``: the longest
    such name wins; a tie between models is no answer (None and the tied ids)."""
    if not text:
        return None, []
    lowered = text.strip().lower()
    for ident, rec in models.items():
        if lowered in (ident, str(rec.data.get("hf_repo") or "").lower()):
            return ident, []
    stem = re.sub(r"(-\d{5}-of-\d{5})?\.gguf$", "", lowered.replace("\\", "/").rsplit("/", 1)[-1])
    seq = _words(stem)
    best, found = 1, set()
    for ident, rec in models.items():
        repo = str(rec.data.get("hf_repo") or "").rsplit("/", 1)[-1]
        for key in {tuple(_words(ident)), tuple(_words(rec.data.get("name", ""))), tuple(_words(repo))}:
            if len(key) < best or not key or not _contains(seq, list(key)):
                continue
            if len(key) > best:
                best, found = len(key), set()
            found.add(ident)
    if len(found) == 1:
        return found.pop(), []
    return None, sorted(found)


# ---------------------------------------------------------------- facts to ask for


@dataclass
class Facts:
    """What the command line gave, then what was asked for."""
    source: str | None = None
    date: str | None = None
    publisher: str | None = None
    title: str | None = None
    gpu: str | None = None
    gpus: int | None = None
    model: str | None = None
    weights: str | None = None
    batch: int | None = None
    runtime_version: str | None = None
    missing: list[tuple[str, str]] = field(default_factory=list)  # (option, why)


def _gpu_id(value: str, ds) -> str:
    if value in ds.gpus:
        return value
    gid, near = match_gpu(value, ds.gpus)
    if gid is None:
        hint = f"; the nearest: {', '.join(near[:5])}" if near else ""
        raise BenchInputError(f"--gpu: unknown GPU id '{value}'{hint}")
    return gid


def _model_id(value: str, ds) -> str:
    mid, near = match_model(value, ds.models)
    if mid is None:
        hint = f"; it may be one of {', '.join(near[:5])}" if near else ""
        raise BenchInputError(f"--model: unknown model id or Hugging Face repository '{value}'{hint}")
    return mid


def _url(value: str, ds) -> str:
    if not URL_RE.match(value):
        raise BenchInputError(f"--source: expected an http(s) URL, got '{value}'")
    return value


def _date(value: str, ds) -> str:
    try:
        day = _dt.date.fromisoformat(value)
    except ValueError:
        raise BenchInputError(f"--date: expected YYYY-MM-DD, got '{value}'") from None
    if day > today_utc():
        raise BenchInputError(f"--date: {value} is in the future")
    return value


def _weights(value: str, ds) -> str:
    if value not in WEIGHT_FORMATS:
        raise BenchInputError(f"--weights: one of {', '.join(WEIGHT_FORMATS)}, got '{value}'")
    return value


def _count(option):
    def check(value: str, ds) -> int:
        if not value.isdigit() or int(value) < 1:
            raise BenchInputError(f"{option}: a whole number from 1, got '{value}'")
        return int(value)
    return check


def _version(value: str, ds) -> str:
    if not VERSION_RE.match(value):
        raise BenchInputError(f"--runtime-version: a version such as b4567 or 0.10.1, got '{value}'")
    return value


def _text(value: str, ds) -> str:
    if not value:
        raise BenchInputError("an empty answer")
    return value


CHECKS = {"--source": _url, "--date": _date, "--gpu": _gpu_id, "--model": _model_id, "--weights": _weights,
          "--gpus": _count("--gpus"), "--batch": _count("--batch"), "--runtime-version": _version,
          "--publisher": _text, "--title": _text}


def _check_fact(option: str, value: str, ds) -> object:
    """A fact typed at the prompt or given as an option, checked; BenchInputError when wrong."""
    return CHECKS[option](value.strip(), ds)


def _resolve(facts: Facts, ds, interactive: bool) -> None:
    """Ask for every missing fact on the terminal, or fail listing them all."""
    if not facts.missing:
        return
    if not interactive:
        lines = "\n".join(f"  {opt}: {why}" for opt, why in facts.missing)
        raise BenchInputError(f"the file does not say everything a measurement needs; give:\n{lines}\n"
                           "(run it on a terminal without --no-input to be asked)")
    for option, why in facts.missing:
        answer = input(f"{option[2:]} ({why}): ")
        setattr(facts, option[2:].replace("-", "_"), _check_fact(option, answer, ds))
    facts.missing = []


def _publisher_of(url: str) -> str | None:
    """The owner named by a code-hosting address (github.com/<owner>/...), else None."""
    parts = urlparse(url)
    path = [p for p in parts.path.split("/") if p]
    if parts.hostname == "huggingface.co" and path[:1] in (["datasets"], ["spaces"]):
        path = path[1:]
    if parts.hostname in ("github.com", "gitlab.com", "huggingface.co", "gist.github.com") and path:
        return path[0]
    return None


# ---------------------------------------------------------------- llama-bench rows to results

def _int(value, default=None):
    if value is None or value == "":
        return default
    if isinstance(value, bool):
        return int(value)
    return int(float(value))


def _flash(value) -> bool | None:
    """llama-bench's flash_attn: a bool in older builds, -1 (auto), 0 or 1 since; None for auto."""
    if value is None or value == "":
        return None
    if isinstance(value, bool):
        return value
    text = str(value).strip().lower()
    if text in ("true", "false"):
        return text == "true"
    return {0: False, 1: True}.get(_int(text))


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


def _llama_needs(rows: list[dict], facts: Facts, ds) -> None:
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
    ngl = _int(row.get("n_gpu_layers"))
    backend = str(row.get("backends") or "")
    if ngl is None and backend in ("CPU", "BLAS", ""):
        return f"a run on the CPU ({backend or 'no backend named'})"
    if ngl is not None and 0 <= ngl < (layers or 0):
        return f"only {ngl} of {layers} layers on the GPU (the results hold whole-GPU runs)"
    if _int(row.get("n_cpu_moe"), 0):
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
    params = _int(row.get("model_n_params"))
    return {**base, "context": 0, "batch": 1, "metric": "weights_gib",
            "value": round(_int(row["model_size"]) / GIB, 2),
            "note": f"Size llama-bench reports for the {row.get('model_type')} file"
                    + (f" ({params / 1e9:.2f} B parameters)." if params else ".")}


def _llama_result(row: dict, base: dict, test: LlamaTest, depth: int, flash: bool | None, facts: Facts) -> dict:
    result = {**base, "context": test.context, "batch": 1, **test.extra}
    if flash is not None:
        result["flash_attention"] = flash
    result.update(metric=test.metric, value=round(test.value, 2))
    version = _llama_version(row)
    if version and version != facts.runtime_version:
        result["runtime_version"] = version
    result["note"] = _llama_note(row, test.name, depth, _int(row.get("n_gpu_layers")), base["gpus"])
    if test.extra:
        result["note"] = (f"{result['note'][:-1]}; llama-bench's {float(row['avg_ts']):.2f} t/s counts prompt and "
                          "generated tokens alike, the value the generated ones over the whole call.")[:600]
    return result


def _llama_results(rows: list[dict], facts: Facts, ds, warn) -> list[dict]:
    layers = ds.models[facts.model].data.get("layers")
    results: list[dict] = []
    sized: set[str] = set()
    for i, row in enumerate(rows, start=1):
        where = row.get("where") or f"record {i}"
        n_prompt, n_gen, depth = _int(row.get("n_prompt"), 0), _int(row.get("n_gen"), 0), _int(row.get("n_depth"), 0)
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
        if row["model_type"] not in sized and _int(row.get("model_size"), 0):
            sized.add(row["model_type"])
            results.append(_llama_size(row, base))
        results.append(_llama_result(row, base, test, depth, flash, facts))
    return results


def _llama_version(row: dict) -> str | None:
    number = _int(row.get("build_number"))
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


# ---------------------------------------------------------------- vLLM results

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


def _vllm_needs(rows: list[dict], facts: Facts, ds) -> None:
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
    words = set(_words(name))
    for word, fmt in (("awq", "awq"), ("gptq", "gptq"), ("fp8", "fp8"), ("mxfp4", "mxfp4"), ("bf16", "bf16"),
                      ("fp16", "f16"), ("int8", "int8"), ("w8a8", "int8"), ("bnb", "nf4")):
        if word in words:
            return fmt
    return None


def _vllm_results(rows: list[dict], facts: Facts, warn) -> list[dict]:
    results = []
    for i, row in enumerate(rows, start=1):
        rate = row.get("request_rate", "inf")
        if str(rate) not in ("inf", "Infinity"):
            warn(f"record {i}: skipped, requests arrived at {rate} per second, which bounds the throughput")
            continue
        completed = _int(row.get("completed"), 0)
        if not completed or not row.get("output_throughput"):
            warn(f"record {i}: skipped, no completed requests")
            continue
        batch = _concurrency(row) or facts.batch
        prompt = round(_int(row.get("total_input_tokens"), 0) / completed)
        generated = round(_int(row.get("total_output_tokens"), 0) / completed)
        if prompt < 1 or generated < 1:
            warn(f"record {i}: skipped, no token counts")
            continue
        parts = [f"vLLM serving benchmark, {completed} requests of {prompt} prompt and {generated} generated "
                 f"tokens on average ({row.get('dataset_name') or 'dataset not named'}), {batch} at a time; "
                 "output tokens per second of the whole run"]
        for key, label in (("median_ttft_ms", "median TTFT"), ("median_tpot_ms", "median TPOT")):
            if isinstance(row.get(key), (int, float)):
                parts.append(f"{label} {row[key]:.1f} ms")
        if _int(row.get("failed"), 0):
            parts.append(f"{row['failed']} requests failed")
        if row.get("date"):
            parts.append(f"run {row['date']}")
        results.append({"gpu": facts.gpu, "gpus": facts.gpus, "model": facts.model, "weights": facts.weights,
                        "context": prompt, "batch": batch, "generated_tokens": generated,
                        "metric": "decode_tokens_per_s", "value": round(float(row["output_throughput"]), 2),
                        "note": ("; ".join(parts) + ".")[:600]})
    return results


# ---------------------------------------------------------------- the file

RESULT_ORDER = ("gpu", "gpus", "model", "weights", "kv_cache", "context", "batch", "generated_tokens",
                "flash_attention", "metric", "value", "runtime_version", "note")


def _scalar(value) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, (int, float)):
        return repr(value)  # the shortest text that reads back as the same number
    text = str(value)
    try:  # plain where a YAML reader gives the same text back, as the hand-written files are
        if _SAFE.load(f"k: {text}") == {"k": text} and "\n" not in text:
            return text
    except Exception:  # noqa: BLE001 - any reading error means: quote it
        pass
    return yaml_str(text)


def render(doc: dict) -> str:
    out = ["# yaml-language-server: $schema=../schema/measurement.schema.json"]
    for key in ("title", "url", "publisher", "date", "runtime", "runtime_version", "notes"):
        if doc.get(key) is not None:
            value = doc[key] if key == "date" else (yaml_str(doc[key]) if key == "runtime_version"
                                                     else _scalar(doc[key]))
            out.append(f"{key}: {value}")
    out.append("results:")
    for r in doc["results"]:
        first = True
        for key in RESULT_ORDER:
            if key in r:
                value = yaml_str(r[key]) if key == "runtime_version" else _scalar(r[key])
                out.append(f"{'  - ' if first else '    '}{key}: {value}")
                first = False
    return "\n".join(out) + "\n"


def _slug(text: str) -> str:
    return re.sub(r"[^a-z0-9]+", "-", text.lower()).strip("-")


def build(kind: str, rows: list[dict], facts: Facts, ds, interactive: bool, warn) -> dict:
    if kind == "llama-bench":
        _llama_needs(rows, facts, ds)
        if facts.runtime_version is None:
            facts.runtime_version = _llama_version(rows[0]) or "unknown"
    else:
        _vllm_needs(rows, facts, ds)
        if facts.runtime_version is None:
            facts.runtime_version = "unknown"
    if facts.source is None:
        facts.missing.append(("--source", "the public address where these results are published"))
    if facts.date is None:
        facts.missing.append(("--date", "the date the results were published, YYYY-MM-DD"))
    _resolve(facts, ds, interactive)
    if facts.publisher is None:
        facts.publisher = _publisher_of(facts.source)
        if facts.publisher is None:
            facts.missing.append(("--publisher", "who ran the measurements (the address does not say)"))
            _resolve(facts, ds, interactive)
    results = (_llama_results(rows, facts, ds, warn) if kind == "llama-bench"
               else _vllm_results(rows, facts, warn))
    if not any(r["metric"] != "weights_gib" for r in results):
        raise BenchInputError("no row of the file is a result the measurements can hold (see the lines above)")
    gpu = ds.gpus[facts.gpu].data.get("name", facts.gpu)
    model = ds.models[facts.model].data.get("name", facts.model)
    tool = "llama-bench" if kind == "llama-bench" else "vLLM serving benchmark"
    counts = {r["gpus"] for r in results}
    cards = f"{min(counts)}x {gpu}" if len(counts) == 1 and min(counts) > 1 else gpu
    title = facts.title or f"{tool}: {model} ({facts.weights}) on {cards}"
    return {"title": title, "url": facts.source, "publisher": facts.publisher, "date": facts.date,
            "runtime": "llama.cpp" if kind == "llama-bench" else "vllm", "runtime_version": facts.runtime_version,
            "results": results}


def _facts_from(args, ds) -> Facts:
    facts = Facts()
    for option in ("source", "date", "publisher", "title", "gpu", "gpus", "model", "weights", "batch",
                   "runtime_version"):
        value = getattr(args, option, None)
        if value is not None:
            name = "--" + option.replace("_", "-")
            setattr(facts, option, _check_fact(name, str(value), ds))
    return facts


def run(args) -> int:
    try:
        return _run(args)
    except BenchInputError as exc:
        print(f"error: {exc}", file=sys.stderr)
        print("nothing was written.", file=sys.stderr)
        return 2
    except (EOFError, KeyboardInterrupt):
        print("\nstopped; nothing was written.", file=sys.stderr)
        return 2


def _run(args) -> int:
    try:
        text = Path(args.file).read_text(encoding="utf-8") if args.file != "-" else sys.stdin.read()
    except (OSError, UnicodeDecodeError) as exc:
        raise BenchInputError(f"cannot read {args.file}: {exc}") from None
    kind, rows = read_output(text)
    data = Path(args.data)
    ds, problems = load_dataset(data)
    errors = [p for p in problems if p.level == "error"]
    if ds is None or errors:
        for p in errors:
            print(p, file=sys.stderr)
        print(f"{len(errors)} error(s) in {data}; fix them first.", file=sys.stderr)
        return 1
    if args.id is not None and not ID_RE.match(args.id):
        raise BenchInputError(f"--id: lowercase words joined by -, got '{args.id}'")
    interactive = not args.no_input and sys.stdin.isatty() and args.file != "-"
    facts = _facts_from(args, ds)
    doc = build(kind, rows, facts, ds, interactive, lambda m: print(f"note: {m}", file=sys.stderr))
    ident = args.id or _slug(f"{'llama-bench' if kind == 'llama-bench' else 'vllm-bench'}-{facts.gpu}-"
                             f"{facts.model}-{facts.date}")
    text = render(doc)
    from generator.cli.format import format_text

    text = format_text(text, f"measurements/{ident}.yaml")
    if args.dry_run:
        sys.stdout.write(text)
        return 0
    out = Path(args.out) if args.out else data / "measurements" / f"{ident}.yaml"
    if out.exists():
        raise BenchInputError(f"{out} exists; give another --id or --out")
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(text, encoding="utf-8")
    inside = out.resolve().is_relative_to((data / "measurements").resolve())
    if inside:
        _, problems = load_dataset(data)
        mine = [p for p in problems if p.level == "error" and Path(str(p.path)).name == out.name]
        if mine:
            out.unlink()
            for p in mine:
                print(p, file=sys.stderr)
            print(f"the file did not validate and was removed: {out}", file=sys.stderr)
            return 1
    print(f"wrote {out} ({len(doc['results'])} results)", file=sys.stderr)
    return 0


def add_parser(subparsers):
    p = subparsers.add_parser("import-bench", help="write a measurements file from llama-bench's output "
                                                   "(json, jsonl, csv, markdown) or vLLM's benchmark JSON")
    p.add_argument("file", metavar="FILE", help="the benchmark's output (- reads standard input)")
    p.add_argument("--source", help="public address of the results (asked for when missing)")
    p.add_argument("--date", help="publication date of the results, YYYY-MM-DD (asked for when missing)")
    p.add_argument("--publisher", help="who ran them (default: the owner in a github.com, gitlab.com or "
                                       "huggingface.co address)")
    p.add_argument("--title", help="the file's title (default: tool, model, format and GPU)")
    p.add_argument("--gpu", help="GPU id, where the output names none or one that data/gpus lacks")
    p.add_argument("--gpus", help="GPUs used, where the output does not say")
    p.add_argument("--model", help="model id or Hugging Face repository, where the output's name is not one")
    p.add_argument("--weights", help="weight format (vLLM, where the model id names none)")
    p.add_argument("--batch", help="requests at once (vLLM, where --max-concurrency was not set)")
    p.add_argument("--runtime-version", help="default: llama.cpp's build number, or vLLM's recorded version, "
                                             "else unknown")
    p.add_argument("--id", help="the file's id (default: tool-gpu-model-date)")
    p.add_argument("--out", help="where to write (default: data/measurements/<id>.yaml)")
    p.add_argument("--dry-run", action="store_true", help="print the YAML, write nothing")
    p.add_argument("--no-input", action="store_true", help="never ask: a missing fact exits 2")
    p.add_argument("--data", default="data", help="the data folder (default: data)")
    p.set_defaults(func=run)
    return p
