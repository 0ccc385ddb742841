"""Shared fixtures: a small valid data tree to mutate, and one full build of the real site."""
from __future__ import annotations

import datetime as _dt
import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from generator.data.locales import TRANSLATED_LANGS

ROOT = Path(__file__).resolve().parent.parent
FIXTURES = ROOT / "tests" / "fixtures"
TODAY = _dt.date(2026, 11, 22)
EPOCH = "1767225600"  # 2026-01-01T00:00:00Z

if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))


_RUN_JS = """
import { run } from %s;
let raw = "";
process.stdin.on("data", (d) => { raw += d; }).on("end", () => {
  const a = JSON.parse(raw);
  const out = a.cases.map((c) => run(c.name, c.raw, { data: a.data, lang: c.lang }));
  process.stdout.write(JSON.stringify(out));
});
"""


def run_calcs_js(cases: list[dict], data: dict | None = None) -> list[dict]:
    """Run calculators of docs/assets/js/calc/formulas.mjs in node, as the browser does: each case
    is {name, raw[, lang]}; returns each ``run``'s {errors, result}."""
    node = shutil.which("node")
    assert node, "node is needed to run the calculators' JavaScript"
    module = (ROOT / "docs" / "assets" / "js" / "calc" / "formulas.mjs").as_uri()
    payload = {"cases": [{"lang": "en", **c} for c in cases], "data": data}
    done = subprocess.run([node, "--input-type=module", "-e", _RUN_JS % json.dumps(module)],
                          input=json.dumps(payload, default=str), capture_output=True, text=True,
                          timeout=120, check=False)
    assert done.returncode == 0, done.stderr[-2000:]
    return json.loads(done.stdout)


def run_calc_js(name: str, raw: dict, data: dict | None = None, lang: str = "en") -> dict:
    return run_calcs_js([{"name": name, "raw": raw, "lang": lang}], data)[0]


class DataTree:
    """A copy of tests/fixtures/valid under a temporary repo root, with editing helpers."""

    def __init__(self, root: Path):
        self.root = root
        self.data = root / "data"
        shutil.copytree(FIXTURES / "valid", self.data)

    def path(self, rel: str) -> Path:
        return self.data / rel

    def write(self, rel: str, text: str | bytes) -> Path:
        p = self.path(rel)
        p.parent.mkdir(parents=True, exist_ok=True)
        if isinstance(text, bytes):
            p.write_bytes(text)
        else:
            p.write_text(text, encoding="utf-8")
        return p

    def read(self, rel: str) -> str:
        return self.path(rel).read_text(encoding="utf-8")

    def set(self, rel: str, field: str, raw: str) -> None:
        """Replace the top-level line ``field: ...`` with ``field: raw`` (append when absent)."""
        text = self.read(rel)
        pattern = re.compile(rf"^{re.escape(field)}:.*$", re.M)
        if pattern.search(text):
            text = pattern.sub(lambda _m: f"{field}: {raw}", text, count=1)
        else:
            text = text.rstrip("\n") + f"\n{field}: {raw}\n"
        self.write(rel, text)

    def drop(self, rel: str, field: str) -> None:
        text = self.read(rel)
        self.write(rel, re.sub(rf"^{re.escape(field)}:.*\n", "", text, flags=re.M))

    def use_real_ui(self, translations: bool = False) -> None:
        """The shipped interface texts (templates and the diff command need all of them), and
        with ``translations`` their shipped ko/zh/fr versions; otherwise the fixture's Korean
        interface file, which would be stale, is dropped."""
        shutil.copyfile(ROOT / "data" / "ui.yaml", self.data / "ui.yaml")
        for lang in TRANSLATED_LANGS:
            src, dest = ROOT / "data" / "translations" / lang / "ui.yaml", self.data / "translations" / lang / "ui.yaml"
            if translations and src.exists():
                dest.parent.mkdir(parents=True, exist_ok=True)
                shutil.copyfile(src, dest)
            elif not translations and dest.exists():
                dest.unlink()

    def problems(self) -> list[str]:
        from generator.data.loader import load_dataset

        _, problems = load_dataset(self.data, self.root, today=TODAY)
        return [str(p) for p in problems]


@pytest.fixture
def tree(tmp_path) -> DataTree:
    return DataTree(tmp_path)


@pytest.fixture(scope="session")
def built_site(tmp_path_factory):
    """The real data built once, all four languages, into a temporary site folder."""
    from generator.site.pipeline import Paths, build_site

    base = tmp_path_factory.mktemp("built")
    old = os.environ.get("SOURCE_DATE_EPOCH")
    os.environ["SOURCE_DATE_EPOCH"] = EPOCH
    try:
        paths = Paths(build=base / "build", site=base / "site")
        ds = build_site(paths)
    finally:
        if old is None:
            os.environ.pop("SOURCE_DATE_EPOCH", None)
        else:
            os.environ["SOURCE_DATE_EPOCH"] = old
    return paths.site, ds
