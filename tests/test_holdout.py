"""Held-out measurements (benchmarks/holdout.py): validated by the rules of data/, never fitted."""
from __future__ import annotations

from helpers import ROOT

from benchmarks import holdout

GOOD = """title: A llama-bench table
url: https://example.org/bench
publisher: Example Lab
date: 2025-01-02
runtime: llama.cpp
runtime_version: "b5000"
results:
  - gpu: rtx-4090
    gpus: 1
    model: llama-2-7b
    weights: q4_0
    kv_cache: f16
    context: 0
    batch: 1
    metric: decode_tokens_per_s
    value: 150.0
  - gpu: rtx-4090
    gpus: 1
    model: llama-2-7b
    weights: q4_0
    kv_cache: f16
    context: 512
    batch: 1
    metric: prefill_tokens_per_s
    value: 12000.0
"""


def test_held_out_files_load_with_the_rules_of_data_and_get_an_error_table(tmp_path):
    (tmp_path / "lab.yaml").write_text(GOOD, encoding="utf-8")
    rows, problems = holdout.validate(ROOT / "data", tmp_path)
    assert problems == []
    assert [(r["gpu"], r["metric"], r["source"]) for r in rows] == [
        ("rtx-4090", "decode_tokens_per_s", "lab"), ("rtx-4090", "prefill_tokens_per_s", "lab")]
    table = holdout.errors(ROOT / "data", rows)
    assert set(table) == {"decode_tokens_per_s", "prefill_tokens_per_s"}
    # per runtime and for all runtimes together
    assert all(e["all"]["count"] == 1 and e["all"]["median_pct"] >= 0 for e in table.values())


def test_a_bad_held_out_file_is_named_with_its_own_path_and_line(tmp_path, capsys):
    bad = tmp_path / "lab.yaml"
    bad.write_text(GOOD.replace("gpu: rtx-4090", "gpu: rtx-4091", 1), encoding="utf-8")
    rows, problems = holdout.validate(ROOT / "data", tmp_path)
    assert rows == []
    assert len(problems) == 1 and problems[0].startswith(f"{bad}:8: results[0].gpu: unknown gpu id 'rtx-4091'"), problems
    assert holdout.main(["--holdout", str(tmp_path), "--check"]) == 2
    assert "rtx-4091" in capsys.readouterr().err


def test_the_shipped_held_out_files_are_valid_and_outside_the_fit():
    rows, problems = holdout.validate(ROOT / "data", holdout.HOLDOUT)
    assert problems == [] and len(rows) >= 40
    shipped = {p.name for p in (ROOT / "data" / "measurements").glob("*.yaml")}
    assert not shipped & {p.name for p in holdout.HOLDOUT.glob("*.yaml")}


def test_a_warning_in_the_shipped_data_stops_nothing(tmp_path, monkeypatch):
    """A warning of data/ (a price to check, say) is `generator validate`'s to report: the held-out
    rows still load; an error still stops them."""
    from generator.data import loader
    from generator.data.problems import Problem

    real = loader.load_dataset

    def with_problem(level):
        def load(tree, tmp):
            ds, problems = real(tree, tmp)
            return ds, [*problems, Problem(f"{tree}/prices/rtx-5090.yaml", 57, "observations[8].usd", "check it", level)]
        return load

    (tmp_path / "lab.yaml").write_text(GOOD, encoding="utf-8")
    monkeypatch.setattr(loader, "load_dataset", with_problem("warning"))
    rows, problems = holdout.validate(ROOT / "data", tmp_path)
    assert problems == [] and len(rows) == 2
    monkeypatch.setattr(loader, "load_dataset", with_problem("error"))
    rows, problems = holdout.validate(ROOT / "data", tmp_path)
    assert rows == [] and problems == [f"{(ROOT / 'data').resolve()}/prices/rtx-5090.yaml:57: observations[8].usd: check it"]
