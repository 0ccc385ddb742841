"""The JavaScript modules as the site ships them: minified (generator/publish/assets.py,
``shipped_modules``), each smaller than its source, with the same exported names, and giving the
same answers: the golden cases of tests/js/ (the engine's fixture, every calculator's cases, the
forms and the config reader) run against the minified modules laid out as the site lays them out.
"""
from __future__ import annotations

import gzip
import json
import re
import shutil
import subprocess
from pathlib import Path

import pytest
from helpers import ROOT

from generator import reuse
from generator.publish import assets
from generator.publish.assets import CALC_JS, MinifyFailed, shared_files, shipped_modules, static_bytes

NODE = shutil.which("node")
STATIC, TEMPLATES = ROOT / "docs", ROOT / "templates" / "pages"

# Every module's exported names, read by importing it in node (main.mjs wires the page when it is
# imported: it gets a document that is still loading).
_EXPORTS_JS = """
globalThis.window = globalThis;
globalThis.document = { readyState: "loading", addEventListener() {} };
globalThis.addEventListener = () => {};
const out = {};
for (const file of JSON.parse(process.argv[1])) out[file] = Object.keys(await import(file)).sort();
process.stdout.write(JSON.stringify(out));
"""


@pytest.fixture(scope="module")
def shipped() -> dict[Path, bytes]:
    reuse.MINIFIED.clear()
    return shipped_modules(STATIC, TEMPLATES)


def _sources() -> dict[Path, bytes]:
    return {rel: static_bytes(src, rel, TEMPLATES) for src, rel in shared_files(STATIC, TEMPLATES) if rel.suffix == ".mjs"}


def _lay_out(folder: Path, modules: dict[Path, bytes]) -> Path:
    """``modules`` in ``folder`` as a language's folder of the site holds them (with tables.json)."""
    for rel, data in modules.items():
        (folder / rel).parent.mkdir(parents=True, exist_ok=True)
        (folder / rel).write_bytes(data)
    for src, rel in shared_files(STATIC, TEMPLATES):
        if rel.parent == CALC_JS and rel.suffix != ".mjs":
            shutil.copyfile(src, folder / rel)
    return folder / CALC_JS


def test_every_module_ships_minified(shipped):
    sources = _sources()
    assert sorted(shipped) == sorted(sources) and len(shipped) > 10
    for rel, data in shipped.items():
        text = data.decode("utf-8")
        assert len(data) < len(sources[rel]), rel
        assert len(gzip.compress(data, 9)) < len(gzip.compress(sources[rel], 9)), rel
        assert "\n  " not in text, f"{rel}: still indented"
    together = len(gzip.compress(b"".join(shipped.values()), 9))
    assert together <= 30 * 1024, f"the calculators' JavaScript is {together / 1024:.1f} KB gzipped (budget 30 KB)"


def test_the_generated_parts_are_filled_before_minifying(shipped):
    """main.mjs's markers are comments, which the minifier drops: the build fills them first."""
    main = shipped[CALC_JS / "main.mjs"].decode("utf-8")
    assert "/*" not in main
    assert '"en"' in main and "llm" in main


def test_the_engines_figure_reader_ships_without_a_read_of_0_0(shipped):
    """The minifier writes ``undefined`` as ``0[0]``, a property read on a number: in ``num``, which
    the engine calls for nearly every figure, it made a large-model recomputation 30 % slower."""
    found = re.search(r"export const num=([^;]*)", shipped[CALC_JS / "formats.mjs"].decode("utf-8"))
    assert found and "0[0]" not in found.group(1), found


@pytest.mark.skipif(NODE is None, reason="node runs the modules")
def test_minified_modules_export_the_same_names(shipped, tmp_path):
    src_dir, min_dir = _lay_out(tmp_path / "src", _sources()), _lay_out(tmp_path / "min", shipped)
    names = sorted(p.name for p in min_dir.glob("*.mjs"))
    files = [(d / n).as_uri() for d in (src_dir, min_dir) for n in names]
    done = subprocess.run([NODE, "--input-type=module", "-e", _EXPORTS_JS, json.dumps(files)],
                          capture_output=True, text=True, timeout=120, check=False)
    assert done.returncode == 0, done.stderr[-2000:]
    out = json.loads(done.stdout)
    for n in names:
        assert out[(min_dir / n).as_uri()] == out[(src_dir / n).as_uri()], n
    assert len(out[(min_dir / "estimate.mjs").as_uri()]) > 50


@pytest.mark.skipif(NODE is None, reason="node runs the golden cases")
def test_golden_cases_pass_against_the_minified_modules(shipped, tmp_path):
    """tests/js/ (node's test runner) as it is, with the shipped modules where it imports the
    sources from: the engine's golden fixture, every calculator's cases, the forms, the config
    reader."""
    _lay_out(tmp_path, shipped)
    (tmp_path / "docs").mkdir()
    (tmp_path / "assets").rename(tmp_path / "docs" / "assets")
    shutil.copytree(ROOT / "tests" / "js", tmp_path / "tests" / "js")
    (tmp_path / "tests" / "fixtures").symlink_to(ROOT / "tests" / "fixtures")
    (tmp_path / "templates").symlink_to(ROOT / "templates")
    done = subprocess.run([NODE, "--test", "tests/js/"], cwd=tmp_path, capture_output=True, text=True,
                          timeout=300, check=False)
    assert done.returncode == 0, done.stdout[-4000:] + done.stderr[-2000:]
    assert "# fail 0" in done.stdout and "# pass 0" not in done.stdout


def test_kept_between_builds_and_minified_once(tmp_path, monkeypatch):
    """A second build (a fresh process: memory empty) reads the kept file and minifies nothing;
    a changed module alone is minified again, and the file keeps only this build's modules."""
    calls = []
    minify = assets._minify
    monkeypatch.setattr(assets, "_minify", lambda src, data: calls.append(src.name) or minify(src, data))
    reuse.MINIFIED.clear()
    first = shipped_modules(STATIC, TEMPLATES, tmp_path)
    assert len(calls) == len(first)
    kept = json.loads((tmp_path / assets.MINIFIED_FILE).read_text(encoding="utf-8"))
    assert len(kept["answers"]) == len(first) and "minify-go" in kept["key"]

    calls.clear()
    assert shipped_modules(STATIC, TEMPLATES, tmp_path) == first  # in memory
    reuse.MINIFIED.clear()
    assert shipped_modules(STATIC, TEMPLATES, tmp_path) == first  # from the file
    assert calls == []

    static = tmp_path / "docs"
    shutil.copytree(STATIC, static)
    dom = static / CALC_JS / "dom.mjs"
    dom.write_text(dom.read_text(encoding="utf-8") + "\nexport const EXTRA_NAME = 1;\n", encoding="utf-8")
    changed = shipped_modules(static, TEMPLATES, tmp_path)
    assert calls == ["dom.mjs"]
    assert b"EXTRA_NAME" in changed[CALC_JS / "dom.mjs"]
    assert len(json.loads((tmp_path / assets.MINIFIED_FILE).read_text(encoding="utf-8"))["answers"]) == len(first)


def test_a_module_the_minifier_cannot_read_names_its_file(tmp_path):
    static = tmp_path / "docs"
    shutil.copytree(STATIC, static)
    (static / CALC_JS / "broken.mjs").write_text("export const a = (1;\n", encoding="utf-8")
    reuse.MINIFIED.clear()
    with pytest.raises(MinifyFailed, match=r"broken\.mjs: the JavaScript minifier cannot read this module: .*line 1"):
        shipped_modules(static, TEMPLATES)


@pytest.mark.parametrize("text", ["", "not json", '{"key": "minified modules 1", "answers": 3}', "[1, 2]"])
def test_a_kept_file_that_cannot_be_used_is_worked_out_again(tmp_path, text, shipped):
    (tmp_path / assets.MINIFIED_FILE).write_text(text, encoding="utf-8")
    reuse.MINIFIED.clear()
    assert shipped_modules(STATIC, TEMPLATES, tmp_path) == shipped
    kept = json.loads((tmp_path / assets.MINIFIED_FILE).read_text(encoding="utf-8"))
    assert sorted(kept["answers"].values()) == sorted(data.decode("utf-8") for data in shipped.values())


def test_without_the_minifier_the_build_stops_and_names_the_package(monkeypatch):
    monkeypatch.setattr(assets, "MINIFIER", "minify-go-not-installed")
    with pytest.raises(MinifyFailed, match=r"minifier is missing: install the minify-go-not-installed package"):
        shipped_modules(STATIC, TEMPLATES)
