"""What the tests share besides fixtures: the repository's paths and dates, a small data tree to
edit, the calculators' JavaScript run in node, the command line, fixture-site builds, the tiny
model record and what the browser tests do on a page. Fixtures live in conftest.py."""
from __future__ import annotations

import datetime as _dt
import functools
import http.server
import json
import os
import re
import shutil
import subprocess
import sys
import threading
from pathlib import Path

from generator.data.locales import LANGS, TRANSLATED_LANGS

ROOT = Path(__file__).resolve().parent.parent
FIXTURES = ROOT / "tests" / "fixtures"
TODAY = _dt.date(2026, 11, 22)
EPOCH = "1767225600"  # 2026-01-01T00:00:00Z
# What the fixture's two cards need of data/software.yaml, for the tests that build the fixture
# with the API (which needs the file at present).
FIXTURE_SOFTWARE = """as_of: 2026-11-20
stacks:
  pytorch:
    name: PyTorch
    decides_status: true
    builds:
      - name: CUDA 12.6 wheels
        vendor: nvidia
        release: "2.14"
        date: 2026-10-15
        compute_capabilities: ["6.1", "7.5"]
        source: https://github.com/pytorch/pytorch/blob/main/RELEASE.md
architectures:
  Pascal: {bf16: false, fp8: false, fp4: false, flash_attention: [], source: https://docs.nvidia.com/cuda/}
  Turing: {bf16: false, fp8: false, fp4: false, flash_attention: [], source: https://github.com/Dao-AILab/flash-attention}
"""

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


# ------------------------------------------------------------------ the command line and fixture sites

HOSTILE = [
    '<script>alert("x1")</script>',
    "<img src=x onerror=alert(2)>",
    "[click me](javascript:alert(3))",
    "cell | split | here",
    "</script><script>alert(4)</script>",
    "*emph* _under_ `code` # not a heading",
    "&lt;b&gt;entity&lt;/b&gt;",
    "\u202eevil\u202c and zero\u200bwidth",
    "{{ 7*7 }} {% raw %}",
    '!!! warning "fake"',
    '"quotes" and \'apostrophes\'',
]


def run_cli(*args, env=None):
    return subprocess.run([sys.executable, "-m", "generator", *args], cwd=ROOT, capture_output=True, text=True,
                          env={**os.environ, "SOURCE_DATE_EPOCH": EPOCH, **(env or {})})


def build_fixture(tree, site: Path, langs=LANGS, ui_edits: dict | None = None):
    """The tree's data built into ``site`` with the project's interface texts, ``ui_edits`` applied."""
    from generator.site.pipeline import Paths, build_site

    ui = (ROOT / "data" / "ui.yaml").read_text(encoding="utf-8")
    for key, value in (ui_edits or {}).items():
        ui = re.sub(rf"^{re.escape(key)}:.*$", lambda _m, key=key, value=value: f"{key}: {json.dumps(value)}", ui, flags=re.M)
    (tree.data / "ui.yaml").write_text(ui, encoding="utf-8")
    for stale in (tree.data / "translations").rglob("ui.yaml"):
        stale.unlink()
    paths = Paths(root=ROOT, data=tree.data, build=tree.root / "build", site=site)
    os.environ["SOURCE_DATE_EPOCH"] = EPOCH
    return build_site(paths, langs)


# ------------------------------------------------------------------ records

TREE_YAML = """decision_tree:
  question: Do you train models?
  if_yes:
    question: Is the model large?
    if_yes:
      gpus: [rtx-2070]
      note: Any card with 8 GB.
    if_no:
      gpus: [gtx-1060-6gb, rtx-2070]
      share: [70, 30]
  if_no:
    gpus: [gtx-1060-6gb]
    used: true
"""

MODEL = "models/tiny-7b.yaml"

MODEL_TEXT = """name: Tiny 7B
developer: Example
release_date: 2024-01-02
licence: Apache-2.0
parameters_b: 7
active_parameters_b: 7
layers: 32
hidden_size: 4096
intermediate_size: 11008
attention_heads: 32
kv_heads: 8
head_dim: 128
vocab_size: 32000
tied_embeddings: false
attention: gqa
max_context: 8192
sources:
  - https://example.org/config.json
"""


def write_model(tree, old=None, new=None, extra=""):
    """The tiny model record written into ``tree``, with ``old`` replaced by ``new`` and ``extra`` appended."""
    text = MODEL_TEXT if old is None else MODEL_TEXT.replace(old, new)
    tree.write(MODEL, text + extra)


def at(obj, path: str):
    """The value at a dotted ``path`` of a calculator's result ("ranking": the ranked ids)."""
    if path == "ranking":
        return [r["id"] for r in obj["rows"]]
    cur = obj
    for part in path.split("."):
        if cur is None:
            return None
        cur = cur[int(part)] if isinstance(cur, list) else cur.get(part)
    return cur


# ------------------------------------------------------------------ pages in the browser

class QuietHandler(http.server.SimpleHTTPRequestHandler):
    def log_message(self, *args):
        pass


def serve_directory(site, handler=QuietHandler):
    """Serve ``site`` on a free local port: yields its address, then stops (for a yield fixture)."""
    httpd = http.server.ThreadingHTTPServer(("127.0.0.1", 0), functools.partial(handler, directory=str(site)))
    threading.Thread(target=httpd.serve_forever, daemon=True).start()
    yield f"http://127.0.0.1:{httpd.server_address[1]}"
    httpd.shutdown()


def open_language_menu_and_pick(page, label):
    page.wait_for_load_state("networkidle")  # the theme settles the switcher links after load
    page.locator(".md-header__option .md-select button").first.focus()
    link = page.locator(".md-select__list").get_by_role("link", name=label, exact=True)
    link.wait_for(state="visible")
    link.click()


def root_of(page, name):
    return page.locator(f'[data-wg-calc="{name}"]')


def last(page, name):
    return page.evaluate(f'document.querySelector(\'[data-wg-calc="{name}"]\').wgLast')


def wait_ready(page, name):
    page.wait_for_function(f'(() => {{ const r = document.querySelector(\'[data-wg-calc="{name}"]\'); return r && "wgLast" in r; }})()')  # noqa: E501


LLM_URL = "/calculators/memory-llm/"


def llm_field(page, name):
    return root_of(page, "llm").locator(f'[name="{name}"]')


def loso_fixture():
    """Three small sources of decode, peak-memory and training results on the fixture's models and
    cards, each off the engine's defaults by a factor of its own (as publishers differ)."""
    from generator.estimate import fitting

    fixture = json.loads((FIXTURES / "estimate.json").read_text(encoding="utf-8"))
    models, gpus = fixture["models"], fixture["gpus"]
    base = {"speed": {}, "memory": {}, "relative": {}}
    cards = ["rtx-4090", "rtx-3090", "h100-sxm", "a100-sxm4-80gb", "rx-7900-xtx"]
    rows = []
    for s, (source, factor) in enumerate((("src-a", 0.8), ("src-b", 1.1), ("src-c", 1.35))):
        for i in range(10):
            vllm = s > 0 and i % 2 == 0  # a second runtime in two sources: keys the third does not read
            m = {"source": source, "publisher": f"pub {source}", "runtime": "vllm" if vllm else "llama.cpp",
                 "metric": "decode_tokens_per_s", "model": ("llama-3-1-8b", "qwen3-8b", "llama-2-7b")[i % 3],
                 "gpu": cards[(i + s) % len(cards)], "weights": "bf16" if vllm else "q4_k_m", "context": 512 * (1 + i % 4),
                 "batch": 1, "gpus": 1}
            m["value"] = fitting.predict(dict(m, value=1.0), models, gpus, base) * factor * (1 + 0.03 * (i % 5))
            rows.append(m)
        for i in range(3):
            m = {"source": source, "publisher": f"pub {source}", "runtime": "transformers", "metric": "peak_memory_gib",
                 "model": ("llama-3-1-8b", "qwen3-8b", "llama-2-7b")[i], "gpu": "h100-sxm", "weights": "bf16",
                 "context": 1024 * (i + 1), "batch": 1, "gpus": 1}
            m["value"] = fitting.predict(dict(m, value=1.0), models, gpus, base) * (factor ** 0.3)
            rows.append(m)
    for j, gid in enumerate(cards):  # one training group, in the last source
        rows.append({"source": "src-c", "publisher": "pub src-c", "metric": "training_throughput", "workload": "resnet50",
                     "gpu": gid, "value": 100.0 + 40 * j * j, "gpus": 1})
    return models, gpus, rows
