"""The calculators' formulas, tested twice against one set of golden cases.

Each calculator's folder (``templates/pages/site/calculators/<id>/cases.json``) holds its golden
cases, ``tests/fixtures/calculators.json`` the catalogue they share. ``node --test tests/js/`` checks the
JavaScript module the browser runs (docs/assets/js/calc/formulas.mjs) against all of them; the
tests below run it, check the worked examples of generator/facts/calc.py (the figures the pages print)
against the cases both implement, and check the pages and the translations of their texts.
"""
from __future__ import annotations

import json
import math
import re
import shutil
import subprocess

import pytest
from helpers import ROOT, TREE_YAML, DataTree, at, run_calc_js, run_calcs_js

from generator.data.calculators import calculators, with_pages
from generator.data.locales import LANGS
from generator.facts import calc

FIXTURE = json.loads((ROOT / "tests" / "fixtures" / "calculators.json").read_text(encoding="utf-8"))
CASES = [case for c in calculators() for case in c.cases]
# The calculators whose page prints worked examples: Python computes them with its twin formulas.
TWINNED = sorted({c.id for c in calculators() if c.examples})
NODE = shutil.which("node")


def close(actual, expected, tol: float, where: str) -> None:
    if isinstance(expected, bool) or expected is None or isinstance(expected, str):
        assert actual == expected, f"{where}: {actual!r} != {expected!r}"
    elif isinstance(expected, (int, float)):
        assert isinstance(actual, (int, float)) and not isinstance(actual, bool), f"{where}: {actual!r}"
        assert math.isfinite(actual), f"{where}: not finite"
        assert abs(actual - expected) <= tol * max(1, abs(expected)), f"{where}: {actual!r} != {expected!r}"
    elif isinstance(expected, list):
        assert isinstance(actual, list) and len(actual) == len(expected), f"{where}: {actual!r} != {expected!r}"
        for i, (a, e) in enumerate(zip(actual, expected, strict=False)):
            close(a, e, tol, f"{where}[{i}]")
    elif isinstance(expected, dict):
        for k, e in expected.items():
            close((actual or {}).get(k), e, tol, f"{where}.{k}")


def finite_everywhere(value, where="result") -> None:
    if isinstance(value, float):
        assert math.isfinite(value), where
    elif isinstance(value, list):
        for i, v in enumerate(value):
            finite_everywhere(v, f"{where}[{i}]")
    elif isinstance(value, dict):
        for k, v in value.items():
            finite_everywhere(v, f"{where}.{k}")


def plain(value, key: str = ""):
    """A case's raw input as numbers when every figure is written plainly ("128", "0.90", a list of
    layers "784 x 1000 x 10"); None when one uses a locale's grouping or decimal comma, which only
    the browser's parser reads."""
    if isinstance(value, list):
        items = [plain(v) for v in value]
        return None if any(v is None for v in items) else items
    if isinstance(value, dict):
        items = {k: plain(v, k) for k, v in value.items()}
        return None if any(v is None for v in items.values()) else items
    if re.fullmatch(r"[a-z]+", value):
        return value
    if key == "layers" and re.fullmatch(r"\d+(\s*[x ,]\s*\d+)*", value) and not re.search(r",\d{3}(?!\d)", value):
        return [int(x) for x in re.split(r"\s*[x ,]\s*", value)]
    return float(value) if re.fullmatch(r"\d+\.\d+", value) else int(value) if value.isdigit() else None


def python_result(case: dict):
    """The Python twin on a case, or None when the case is the browser's alone (parsing, errors,
    ranking, the decision tree)."""
    values = plain(case["input"]) if "expect" in case and case["calc"] in TWINNED else None
    if values is None:
        return None
    if case["calc"] == "dense":
        return calc.dense_memory(values["layers"], values["batch"])
    if case["calc"] == "cnn":
        return calc.cnn_memory({k: v for k, v in values.items() if k != "layers"}, values["layers"])
    return calc.cloud_break_even(values)


PY_CASES = [c for c in CASES if python_result(c) is not None]


# ------------------------------------------------------------------ the JavaScript side

def test_node_unit_tests_pass():
    """The same golden cases against formulas.mjs, with node's built-in test runner."""
    assert NODE, "node is needed for the calculators' JavaScript tests (node --test tests/js/)"
    result = subprocess.run([NODE, "--test", "tests/js/"], cwd=ROOT, capture_output=True, text=True, timeout=300)
    assert result.returncode == 0, result.stdout[-4000:] + result.stderr[-2000:]
    passed = re.search(r"^# pass (\d+)", result.stdout, re.M)
    assert passed and int(passed.group(1)) >= len(CASES), result.stdout[-2000:]


# ------------------------------------------------------------------ the Python twin

@pytest.mark.parametrize("case", PY_CASES, ids=[f"{c['calc']}-{c['id']}" for c in PY_CASES])
def test_python_twin_golden_case(case):
    tol = case.get("tol", FIXTURE["tolerance"])
    got = python_result(case)
    finite_everywhere(got)
    for path, expected in case["expect"].items():
        close(at(got, path), expected, tol, path)


def test_the_python_twin_covers_each_formula_it_implements():
    counts = {name: sum(c["calc"] == name for c in PY_CASES) for name in TWINNED}
    assert len(counts) >= 3 and min(counts.values()) >= 2, counts


def test_every_calculator_has_good_and_bad_cases():
    forms = [c.id for c in calculators() if c.id != "tree"]  # the tree's cases are walks, not inputs
    for name in forms:
        if name == "llm":  # its cases are in tests/js/llmform.test.mjs and test_estimate.py
            continue
        assert any(c["calc"] == name and "expect" in c for c in CASES), name
        assert any(c["calc"] == name and "errors" in c for c in CASES), name
    ids = [c["id"] for c in CASES]
    assert len(ids) == len(set(ids))
    assert {"dense-2015-article-example", "cnn-2016-article-input", "cloud-2020-article-example"} <= set(ids)
    for c in calculators():  # a calculator's cases are its own
        assert all(case["calc"] == c.id for case in c.cases), c.id


def test_calculators_are_found_on_disk():
    found = calculators()
    assert [c.id for c in found] == ["dense", "cnn", "llm", "picker", "tree", "cloud"]
    for c in found:
        assert (ROOT / "templates" / "pages" / c.form).is_file(), c.id
        assert c.template is None or (ROOT / "templates" / "pages" / c.template).is_file(), c.id
        assert c.modules or (c.module and (ROOT / c.module).is_file()), c.id
        assert c.page is None or (c.nav and c.summary), c.id


def test_the_worked_examples():
    x = calc.worked_examples()
    dense = x["dense"]
    assert dense["bytes"] == 12 * (9000 * 4000 + 4000 * 4000 + 4000 * 32 + 128 * (9000 + 4000 + 4000 + 32))
    assert round(dense["gib"], 4) == 0.6069
    cnn = x["cnn_input"]
    assert cnn["inputBytes"] == 128 * 250 * 250 * 3 * 4
    assert round(cnn["inputBytes"] / calc.MIB) == 92  # the article's "92 MB" are MiB
    cloud = x["cloud"]
    assert 290 < cloud["days"] < 300  # "about 300 days"
    assert round(cloud["days"], 2) == 292.96
    assert 20 < cloud["spotMonths"] < 24  # "about 20 months"; the article's own inputs give 23.7


def test_the_worked_examples_equal_the_browser_on_the_same_inputs():
    """Each example's inputs, typed into the browser's calculator, give the printed figures."""

    def raw(d):
        return {k: str(v) for k, v in d.items()}

    typed = {  # a formula's arguments as the form's fields
        "dense_memory": lambda a: {"layers": ",".join(map(str, a["layers"])), "batch": str(a["batch"])},
        "cnn_memory": lambda a: {**raw(a["inp"]), "layers": [raw(layer) for layer in a["layers"]]},
        "cloud_break_even": lambda a: raw(a["v"]),
    }
    examples = [(c.id, name, x) for c in calculators() for name, x in c.examples.items()]
    assert {name for _, name, _ in examples} == {"dense", "cnn_input", "cnn", "cloud"}
    js = run_calcs_js([{"name": cid, "raw": typed[x["formula"]](x["args"])} for cid, _, x in examples])
    for (_, name, _), out in zip(examples, js, strict=True):
        assert out["errors"] == {}, (name, out["errors"])
        close(calc.worked_examples()[name], out["result"], 1e-12, name)


def test_ranking_the_client_data_of_the_fixture_site(tree):
    from generator.data.loader import load_dataset
    from generator.publish.api import client_data

    ds, problems = load_dataset(tree.data, tree.root)
    assert ds is not None, problems
    data = client_data(ds)
    out = run_calc_js("picker", {"workload": "cnn", "memory": "4", "budget": "2000", "prices": "new"}, data=data)
    assert out["errors"] == {}
    assert {r["id"] for r in out["result"]["rows"]} == {"rtx-2070", "gtx-1060-6gb"}
    assert out["result"]["reference"] == "rtx-2070"  # the revision's best card overall
    assert out["result"]["rows"][0]["perf"] > 0


# ------------------------------------------------------------------ pages and texts

def _site_tree(tmp_path) -> DataTree:
    """The fixture data with the project's interface texts and their translations."""
    t = DataTree(tmp_path)
    t.use_real_ui(translations=True)
    return t


@pytest.fixture(scope="module")
def pages(tmp_path_factory):
    from generator.data.loader import load_dataset
    from generator.publish.render import render_language

    t = _site_tree(tmp_path_factory.mktemp("calcpages"))
    ds, problems = load_dataset(t.data, t.root)
    assert ds is not None, [str(p) for p in problems]
    return {lang: {p.path: p.text for p in render_language(ds, lang, ROOT / "templates" / "pages")}
            for lang in LANGS}


PAGES = ["calculators/index.md"] + [c.page_path for c in with_pages()]


def test_every_language_has_every_calculator_page(pages):
    assert len(PAGES) == 6
    for lang in LANGS:
        assert set(PAGES) <= set(pages[lang]), lang
        # a calculator's folder is not a page of its own
        assert not any(p.startswith("calculators/") and p.count("/") > 1 for p in pages[lang]), lang
        index = pages[lang]["calculators/index.md"]
        assert [m for m in re.findall(r"\]\(([a-z-]+)\.md\)", index) if m != "index"] == [c.page for c in with_pages()], lang


@pytest.mark.parametrize("lang", ["en", "ko", "zh", "fr"])
def test_printed_examples_are_the_formulas_on_the_articles_inputs(pages, lang):
    from generator.publish.text import escape_md, format_number

    def shown(value, digits=None) -> str:
        return str(escape_md(format_number(value, lang, digits)))

    dense = calc.dense_memory([9000, 4000, 4000, 32], 128)
    text = pages[lang]["calculators/memory-dense.md"]
    for value, digits in ((dense["weights"], None), (dense["activations"], None), (dense["bytes"], None),
                          (dense["gib"], 4), (dense["gb"], 4)):
        assert shown(value, digits) in text, (value, digits)

    def conv(k, s, st, p):
        return {"type": "conv", "kernels": k, "size": s, "stride": st, "padding": p}

    layers = [conv(32, 3, 1, "same"), {"type": "pool", "size": 2, "stride": 2}, conv(64, 3, 1, "same"),
              {"type": "pool", "size": 2, "stride": 2}, {"type": "reduce", "kernels": 16}, conv(32, 5, 2, "valid")]
    net = calc.cnn_memory({"batch": 128, "height": 250, "width": 250, "channels": 3, "bits": 32}, layers)
    text = pages[lang]["calculators/memory-cnn.md"]
    for value, digits in ((net["inputBytes"], None), (net["inputBytes"] / 1e6, None), (net["inputBytes"] / calc.MIB, 2),
                          (net["activations"] / calc.MIB, 1), (net["errors"] / calc.MIB, 1), (net["total"] / calc.MIB, 1)):
        assert shown(value, digits) in text, (value, digits)
    # the widget's defaults are the same network
    assert 'data-wg-layer="reduce"' in text

    cloud = calc.cloud_break_even({"desktop": 2200, "gpu_w": 350, "system_w": 100, "kwh": 0.12,
                                   "util": 15, "cloud": 2.14, "spot": 0.9})
    text = pages[lang]["calculators/cloud.md"]
    for value, digits in ((cloud["kwhYear"], 1), (cloud["powerYear"], 2), (cloud["cloudYear"], 2), (cloud["days"], 1),
                          (cloud["spotDays"], 0), (cloud["spotMonths"], 1)):
        assert shown(value, digits) in text, (value, digits)


def test_pages_carry_no_script_and_no_blank_line_in_widgets(pages):
    for lang, by_path in pages.items():
        for path in PAGES:
            text = by_path[path]
            assert "<script" not in text.lower(), (lang, path)
            for start in [m.start() for m in re.finditer(r'<div class="wg-calc', text)]:
                end = text.find("\n\n", start)
                assert text[start:end].endswith("</div>"), (lang, path, text[end - 200:end])


def test_decision_tree_walker_only_with_a_tree(tmp_path):
    from generator.data.loader import load_dataset
    from generator.publish.render import render_language

    t = _site_tree(tmp_path)
    ds, _ = load_dataset(t.data, t.root)
    text = {p.path: p.text for p in render_language(ds, "en", ROOT / "templates" / "pages")}["calculators/picker.md"]
    assert 'data-wg-calc="tree"' not in text
    rev = t.read("revisions/2019-04-03.yaml")
    t.write("revisions/2019-04-03.yaml", rev + TREE_YAML)
    ds, problems = load_dataset(t.data, t.root)
    assert ds is not None, [str(p) for p in problems]
    text = {p.path: p.text for p in render_language(ds, "en", ROOT / "templates" / "pages")}["calculators/picker.md"]
    assert 'data-wg-calc="tree"' in text
    assert text.count("data-wg-node=") == 5
    assert 'data-wg-node="yn"' in text and "Is the model large?" in text


def _calc_keys() -> dict[str, str]:
    from generator.data.loader import load_dataset

    ds, problems = load_dataset(ROOT / "data", ROOT)
    if ds is None:  # other people's unfinished data: read the interface texts alone
        import yaml

        texts = yaml.safe_load((ROOT / "data" / "ui.yaml").read_text(encoding="utf-8"))
        return {k: v for k, v in texts.items() if k.startswith("calc.")}
    return {k: v for k, v in ds.ui.texts.items() if k.startswith("calc.")}


@pytest.mark.parametrize("lang", ["ko", "zh", "fr"])
def test_calculator_texts_are_translated_and_current(lang):
    import yaml

    from generator.data.dataset import digest

    english = _calc_keys()
    assert len(english) > 200
    table = yaml.safe_load((ROOT / "data" / "translations" / lang / "ui.yaml").read_text(encoding="utf-8"))
    placeholder = re.compile(r"\{[a-z_]+\}")
    for key, text in english.items():
        assert key in table, f"{lang}: {key} is not translated"
        assert table[key]["source"] == digest(text), f"{lang}: {key} is stale"
        assert sorted(placeholder.findall(table[key]["text"])) == sorted(placeholder.findall(text)), (lang, key)


def test_templates_use_only_existing_texts():
    keys = set(_calc_keys())
    used = set()
    for tpl in (ROOT / "templates" / "pages" / "site" / "calculators").rglob("*.j2"):
        used |= set(re.findall(r'"(calc\.[a-z0-9_.-]+)"', tpl.read_text(encoding="utf-8")))
    for c in calculators():
        used |= {k for k in (c.nav, c.summary) if k}
        used |= {k for mod in c.modules for k in re.findall(r'"(calc\.[a-z0-9_.-]+)"', mod.read_text(encoding="utf-8"))}
    for mod in (ROOT / "docs" / "assets" / "js" / "calc").glob("*.mjs"):
        used |= {k for k in re.findall(r'"(calc\.[a-z0-9_.-]+)"', mod.read_text(encoding="utf-8"))}
    dynamic = {k for k in used if k.endswith((".", "_"))}
    missing = sorted(k for k in used - dynamic if k not in keys)
    assert not missing, missing


def test_widgets_embed_twice_on_one_page(tmp_path):
    """Two widgets with different prefixes: distinct ids and URL parameters, one page."""
    from generator.data.loader import load_dataset
    from generator.publish.render import Context, make_env

    t = _site_tree(tmp_path)
    ds, _ = load_dataset(t.data, t.root)
    env = make_env(ROOT / "templates" / "pages")
    tpl = env.from_string('{% set prefix = "a_" %}{% include "site/calculators/cloud/form.html.j2" %}\n'
                          '{% set prefix = "b_" %}{% include "site/calculators/cloud/form.html.j2" %}')
    html = tpl.render(c=Context(ds, "en"), ds=ds)
    ids = re.findall(r'\bid="([^"]+)"', html)
    assert len(ids) == len(set(ids)) and len(ids) > 10
    assert 'data-wg-prefix="a_"' in html and 'data-wg-prefix="b_"' in html


def test_fixture_views_are_what_the_build_computes():
    """The picker's golden cases read views the build computes; the fixture's copy must be the
    builder's output for the fixture's revisions (rewrite it with tests/fixtures/update_picker_views.py)."""
    import json as _json

    from generator.facts.picker import picker_views

    doc = _json.loads((ROOT / "tests" / "fixtures" / "calculators.json").read_text(encoding="utf-8"))
    assert _json.loads(_json.dumps(picker_views(doc["data"]))) == doc["data"]["picker"]


JS = ROOT / "docs" / "assets" / "js" / "calc"
_ROOT_TAG = re.compile(r'<div [^>]*data-wg-calc="([a-z]+)"[^>]*>')
_KEY = re.compile(r'"(calc\.[a-z0-9_.]+)"')


def _module_keys(kind: str) -> set[str]:
    """Every interface key a calculator's module (and the modules it imports) names literally:
    the script has no words of its own, so each must reach the page as a data-m-* attribute."""
    # the build puts every calculator's modules beside the shared ones (generator/publish/assets.py)
    where = {p.name: p for p in JS.glob("*.mjs")} | {m.name: m for c in calculators() for m in c.modules}
    keys, todo, seen = set(), [f"{kind}.mjs"], set()
    while todo:
        name = todo.pop()
        if name in seen:
            continue
        seen.add(name)
        text = where[name].read_text(encoding="utf-8")
        keys |= set(_KEY.findall(text))
        todo += re.findall(r'from "\./([a-z]+\.mjs)"', text)
    return keys


@pytest.mark.parametrize("lang", LANGS)
def test_every_text_a_calculator_script_names_reaches_its_page(built_site, lang):
    """A key the script uses but the page does not deliver would show as empty text, with no
    error anywhere: every literal key of each calculator's modules is on every root of that
    calculator, in every language, and not empty."""
    site, _ = built_site
    base = site if lang == "en" else site / lang
    seen = set()
    for html in sorted(base.rglob("*.html")):
        if lang == "en" and html.relative_to(site).parts[0] in LANGS:
            continue
        text = html.read_text(encoding="utf-8")
        for tag in _ROOT_TAG.finditer(text):
            kind = tag.group(1)
            seen.add(kind)
            delivered = dict(re.findall(r'data-m-([a-z0-9_-]+)="([^"]*)"', tag.group(0)))
            for key in sorted(_module_keys(kind)):
                attr = key.replace(".", "-")
                assert attr in delivered, f"{html.relative_to(site)}: the {kind} calculator uses {key}, not on the page"
                assert delivered[attr].strip(), f"{html.relative_to(site)}: {key} is empty"
    assert {c.id for c in calculators()} <= seen
