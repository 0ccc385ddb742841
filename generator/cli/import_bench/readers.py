"""llama-bench's four text outputs (json, jsonl, csv and the markdown table) and vLLM's benchmark
JSON, read into rows of llama-bench's or vLLM's own fields."""
from __future__ import annotations

import csv
import io
import json
import re

from generator.cli.import_bench.errors import BenchInputError

GIB = 1024 ** 3

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


def as_int(value, default=None):
    """A cell as a whole number (a bool as 0 or 1); ``default`` where it is empty."""
    if value is None or value == "":
        return default
    if isinstance(value, bool):
        return int(value)
    return int(float(value))
