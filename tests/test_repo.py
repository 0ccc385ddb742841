"""Repository furniture: workflows run make targets that exist, and those targets work."""
from __future__ import annotations

import ast
import os
import re
import subprocess

import yaml
from helpers import ROOT

from generator.data.locales import TRANSLATED_LANGS


def workflow_runs():
    for path in sorted((ROOT / ".github" / "workflows").glob("*.yml")):
        doc = yaml.safe_load(path.read_text(encoding="utf-8"))
        for job in doc["jobs"].values():
            for step in job.get("steps", []):
                if "run" in step:
                    yield path.name, step["run"]


def test_workflows_run_only_make_targets_and_the_comment_step():
    runs = list(workflow_runs())
    assert runs
    for name, command in runs:
        assert command.startswith("make ") or command.startswith("gh pr comment "), (name, command)


def test_every_make_target_in_the_workflows_exists():
    targets = {m.group(1) for _, cmd in workflow_runs() for m in [re.match(r"make ([\w-]+)", cmd)] if m}
    assert {"check", "test", "site", "pr-diff"} <= targets
    for target in targets:
        dry = subprocess.run(["make", "-n", target], cwd=ROOT, capture_output=True, text=True)
        assert dry.returncode == 0, (target, dry.stderr)


def test_ci_entry_point_runs_the_readme_test_command():
    assert "make test" in (ROOT / ".ci" / "run").read_text(encoding="utf-8")
    assert "make test" in (ROOT / "README.md").read_text(encoding="utf-8")


def test_pr_diff_target_writes_markdown(tmp_path):
    out = tmp_path / "diff.md"
    result = subprocess.run(["make", "pr-diff", "BASE=HEAD", f"OUT={out}"], cwd=ROOT, capture_output=True, text=True,
                            env={**os.environ, "MAKEFLAGS": ""})
    assert result.returncode == 0, result.stderr
    assert out.read_text(encoding="utf-8").startswith("## Data changes against `HEAD`")


def test_pre_commit_hooks_call_project_commands():
    doc = yaml.safe_load((ROOT / ".pre-commit-config.yaml").read_text(encoding="utf-8"))
    entries = [h["entry"] for repo in doc["repos"] for h in repo["hooks"]]
    assert entries == ["python -m generator format --check", "python -m generator validate"]


def test_codeowners_cover_every_translation_language():
    text = (ROOT / ".github" / "CODEOWNERS").read_text(encoding="utf-8")
    for lang in TRANSLATED_LANGS:
        assert f"/data/translations/{lang}/" in text


def _imports(tree: ast.AST) -> list[str]:
    """The top-level names of the modules a parsed file imports."""
    names = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            names += [a.name.split(".")[0] for a in node.names]
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            names.append(node.module.split(".")[0])
    return names


def _parsed(folder: str) -> dict[str, ast.AST]:
    return {p.name: ast.parse(p.read_text(encoding="utf-8")) for p in sorted((ROOT / folder).glob("*.py"))}


def test_no_test_module_imports_another_or_conftest():
    """Tests share fixtures through conftest.py, which pytest finds by name, and plain code
    through helpers.py: a test file runs alone, and each fixture has one home."""
    wrong = [f"{name}: {module}" for name, tree in _parsed("tests").items() for module in _imports(tree)
             if module == "conftest" or module.startswith("test_")]
    assert wrong == []


def _puts_tests_on_the_path(tree: ast.AST) -> bool:
    """Whether the code calls sys.path.insert or sys.path.append with something naming tests."""
    for node in ast.walk(tree):
        if (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr in ("insert", "append")
                and ast.unparse(node.func.value) == "sys.path"
                and any(isinstance(c, ast.Constant) and c.value == "tests" for a in node.args for c in ast.walk(a))):
            return True
    return False


def test_no_benchmark_imports_from_the_tests():
    """The benchmarks stand alone; the tests may import from benchmarks/, not the other way round."""
    ours = {p.stem for p in (ROOT / "tests").glob("*.py")} | {"tests"}
    wrong = [f"{name}: {module}" for name, tree in _parsed("benchmarks").items() for module in _imports(tree) if module in ours]
    wrong += [f"{name}: tests/ on sys.path" for name, tree in _parsed("benchmarks").items() if _puts_tests_on_the_path(tree)]
    assert wrong == []
