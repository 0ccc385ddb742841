"""``python -m generator import-bench``: the options, the run from file to measurements file, and
its check against data/ (the package's docstring describes the command)."""
from __future__ import annotations

import re
import sys
from pathlib import Path

from generator.cli.format import format_text
from generator.cli.import_bench.errors import BenchInputError
from generator.cli.import_bench.llama_rows import llama_needs, llama_results, llama_version
from generator.cli.import_bench.questions import Facts, ask_missing, check_fact, publisher_of
from generator.cli.import_bench.readers import read_output
from generator.cli.import_bench.vllm_rows import vllm_needs, vllm_results
from generator.cli.import_bench.writer import render
from generator.data.loader import load_dataset
from generator.data.schema import ID_RE


def _slug(text: str) -> str:
    return re.sub(r"[^a-z0-9]+", "-", text.lower()).strip("-")


def build(kind: str, rows: list[dict], facts: Facts, ds, interactive: bool, warn) -> dict:
    if kind == "llama-bench":
        llama_needs(rows, facts, ds)
        if facts.runtime_version is None:
            facts.runtime_version = llama_version(rows[0]) or "unknown"
    else:
        vllm_needs(rows, facts, ds)
        if facts.runtime_version is None:
            facts.runtime_version = "unknown"
    if facts.source is None:
        facts.missing.append(("--source", "the public address where these results are published"))
    if facts.date is None:
        facts.missing.append(("--date", "the date the results were published, YYYY-MM-DD"))
    ask_missing(facts, ds, interactive)
    if facts.publisher is None:
        facts.publisher = publisher_of(facts.source)
        if facts.publisher is None:
            facts.missing.append(("--publisher", "who ran the measurements (the address does not say)"))
            ask_missing(facts, ds, interactive)
    results = (llama_results(rows, facts, ds, warn) if kind == "llama-bench"
               else vllm_results(rows, facts, warn))
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
            setattr(facts, option, check_fact(name, str(value), ds))
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
