"""The command line: output format, exit codes, no tracebacks."""
from __future__ import annotations

import re

import pytest
from helpers import run_cli

LINE = re.compile(r"^[^:\s]+\.yaml:\d+: (?:[\w.\[\]-]+: )?\S.*$")


def test_validate_clean_data_prints_one_summary_line():
    result = run_cli("validate")
    assert result.returncode == 0, result.stderr
    lines = result.stdout.strip().splitlines()
    assert len(lines) == 1
    assert re.match(r"^ok: \d+ GPUs, \d+ revisions, \d+ personas, \d+ models, \d+ measurements, \d+ price observations, "
                    r"\d+ translations \(\d+ stale\)$", lines[0])


def test_validate_reports_every_problem_and_exits_1(tree):
    tree.set("gpus/nvidia/rtx-2070.yaml", "memory_gb", "eight")
    tree.set("gpus/nvidia/gtx-1060-6gb.yaml", "release_date", "2016-02-30")
    tree.write("revisions/2019-04-03.yaml", tree.read("revisions/2019-04-03.yaml").replace("[rtx-2070]", "[rtx-9999]"))
    result = run_cli("validate", "--data", str(tree.data))
    assert result.returncode == 1
    assert "Traceback" not in result.stderr
    lines = result.stderr.strip().splitlines()
    problems, summary = lines[:-1], lines[-1]
    assert len(problems) == 3
    assert all(LINE.match(p) for p in problems), problems
    assert summary.startswith("3 error(s) in ")


def test_validate_missing_folder():
    result = run_cli("validate", "--data", "no/such/folder")
    assert result.returncode == 1
    assert "data folder not found" in result.stderr
    assert "Traceback" not in result.stderr


def test_unknown_command_is_a_usage_error():
    result = run_cli("frobnicate")
    assert result.returncode == 2
    assert "usage:" in result.stderr


def test_translations_table(tree):
    result = run_cli("translations", "--data", str(tree.data), "-v")
    assert result.returncode == 0
    rows = result.stdout.splitlines()
    assert rows[0].split()[:5] == ["lang", "kind", "done", "stale", "missing"]
    ko_ui = next(r for r in rows if r.split()[:2] == ["ko", "ui"])
    assert ko_ui.split()[2:6] == ["1", "0", "0", "1"]
    assert any("missing  data/translations/zh/ui.yaml: nav.home" in r for r in rows)
    strict = run_cli("translations", "--data", str(tree.data), "--strict")
    assert strict.returncode == 1


def test_translations_todo_gives_digests(tree):
    from generator.data.dataset import digest

    result = run_cli("translations", "--data", str(tree.data), "--todo", "fr")
    assert result.returncode == 0
    assert "# ==> data/translations/fr/ui.yaml" in result.stdout
    assert '  source: "' + digest('Home') + '"' in result.stdout


@pytest.mark.parametrize("args, said", [
    (("estimate", "--gpu", "rtx-4090", "--model", "llama-3-8b", "--mode", "bogus"), "argument --mode: invalid choice: 'bogus'"),
    (("estimate", "--model", "llama-3-8b"), "the following arguments are required: --gpu"),
    (("diff", "--lang", "xx", "2019-04-03", "latest"), "argument --lang: invalid choice: 'xx'"),
])
def test_a_mistake_in_a_commands_options_is_one_line_and_exit_2(args, said):
    """Not the command's whole usage block with the message under it: the message, and where
    the options are listed."""
    result = run_cli(*args)
    assert result.returncode == 2
    lines = result.stderr.splitlines()
    assert len(lines) == 2 and said in lines[0] and lines[0].startswith(f"python -m generator {args[0]}: error:"), lines
    assert lines[1] == f"`python -m generator {args[0]} --help` lists the options"
