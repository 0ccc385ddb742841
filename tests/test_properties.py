"""Property-based tests: whatever the input, a model or clean problems, never an exception."""
from __future__ import annotations

import datetime as _dt
import html
import re
import shutil
import tempfile
from pathlib import Path

import markdown
import yaml
from helpers import FIXTURES, TODAY
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from generator.data.loader import load_dataset
from generator.data.problems import Problem
from generator.data.yamlload import load_text
from generator.publish.text import clean, escape_md

SETTINGS = settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])

scalars = st.one_of(
    st.none(), st.booleans(), st.integers(min_value=-10**20, max_value=10**20),
    st.floats(allow_nan=True, allow_infinity=True), st.text(max_size=40),
    st.dates(min_value=_dt.date(1, 1, 1), max_value=_dt.date(9999, 12, 31)),
)
values = st.recursive(scalars, lambda inner: st.one_of(
    st.lists(inner, max_size=4), st.dictionaries(st.text(max_size=12), inner, max_size=4)), max_leaves=12)


@SETTINGS
@given(st.text(max_size=400))
@example("a: &a [x]\nb: *a\n")
@example("- [[[[[[[[[[[[[[[[[[[[[[[[[[[[]]]]]]]]]]]]]]]]]]]]]]]]]]]]\n")
@example("? [a, b]\n: c\n")
@example("a: !!binary aGVsbG8=\n")
def test_any_text_loads_or_gives_problems(text):
    doc, problems = load_text(text.encode("utf-8", "surrogatepass"), "x.yaml")
    assert doc is not None or problems
    assert all(isinstance(p, Problem) and p.line >= 1 for p in problems)


@SETTINGS
@given(st.binary(max_size=300))
def test_any_bytes_load_or_give_problems(raw):
    doc, problems = load_text(raw, "x.yaml")
    assert doc is not None or problems


GPU_FIELDS = yaml.safe_load((FIXTURES / "valid" / "gpus" / "nvidia" / "rtx-2070.yaml").read_text(encoding="utf-8"))
REV_FIELDS = yaml.safe_load((FIXTURES / "valid" / "revisions" / "2019-04-03.yaml").read_text(encoding="utf-8"))


def validate_with(rel: str, record: dict):
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        shutil.copytree(FIXTURES / "valid", root / "data")
        try:
            text = yaml.safe_dump(record, allow_unicode=True)
        except yaml.YAMLError:
            return
        (root / "data" / rel).write_text(text, encoding="utf-8")
        ds, problems = load_dataset(root / "data", root, today=TODAY)
        assert ds is not None or [p for p in problems if p.level == "error"]
        for p in problems:
            assert re.match(r"^data/[\w/.-]+\.yaml$", p.path) and p.line >= 1 and p.message


@SETTINGS
@given(st.sampled_from(sorted(GPU_FIELDS)), values)
def test_any_mutation_of_a_gpu_gives_a_model_or_problems(field, value):
    validate_with("gpus/nvidia/rtx-2070.yaml", {**GPU_FIELDS, field: value})


@SETTINGS
@given(st.sampled_from(sorted(REV_FIELDS) + ["relative_performance", "decision_tree", "prices", "vendors"]), values)
def test_any_mutation_of_a_revision_gives_a_model_or_problems(field, value):
    validate_with("revisions/2019-04-03.yaml", {**REV_FIELDS, field: value})


@SETTINGS
@given(st.dictionaries(st.text(max_size=10), values, max_size=5))
def test_any_mapping_as_a_gpu_gives_a_model_or_problems(record):
    validate_with("gpus/nvidia/rtx-2070.yaml", record)


@SETTINGS
@given(st.text(max_size=80))
@example("\\|")
@example("a\\|b|c")
def test_escaped_cell_is_one_cell_with_the_same_text(cell):
    rendered = markdown.markdown(f"| h | x |\n|---|---|\n| {escape_md(cell)} | end |\n", extensions=["tables"])
    cells = re.findall(r"<td>(.*?)</td>", rendered, re.S)
    assert len(cells) == 2 and cells[1] == "end"
    expected = " ".join(clean(cell).split())
    assert " ".join(html.unescape(cells[0]).split()) == expected
