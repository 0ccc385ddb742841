"""Budgets of the calculators, printed (not asserted): `python -m benchmarks.calc_bench`.

- size: all calculator JavaScript as the built site ships it (minified), gzipped together (budget
  30 KB), with the sources' sizes beside it, plus the stylesheet and the generated data file for
  reference;
- speed, in Chromium with performance.now(): one recomputation of each calculator (input read,
  formulas, DOM update) and the ranking of a synthetic catalogue of 10,000 GPUs (budget 5 ms);
- layout shift: PerformanceObserver 'layout-shift' entries while results change (budget 0).

The site is built from data/ when it is valid, else from the test fixture data, into a
temporary folder, and served on 127.0.0.1.
"""
from __future__ import annotations

import argparse
import functools
import gzip
import http.server
import os
import shutil
import statistics
import sys
import tempfile
import threading
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
JS = ROOT / "docs" / "assets" / "js" / "calc"
CHROMIUM = os.environ.get("CHROMIUM") or shutil.which("chromium") or "/usr/bin/chromium"

if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

PAGES = {"dense": "memory-dense", "cnn": "memory-cnn", "llm": "memory-llm", "picker": "picker", "cloud": "cloud"}

# Valid inputs that each change the result; the layout-shift run cycles through them.
CHANGES = {
    "dense": [("layers", "784, 1000, 10"), ("batch", "64"), ("layers", "9000, 4000, 4000, 4000, 4000, 32"), ("batch", "100000")],
    "cnn": [("batch", "8"), ("bits", "16"), ("height", "32"), ("width", "1024"), ("batch", "100000")],
    "llm": [("mode", "full"), ("context", "32768"), ("mode", "qlora"), ("batch", "8"), ("context", "9999"),
            ("mode", "inference")],
    "picker": [("workload", "rnn"), ("memory", "2"), ("budget", "300"), ("prices", "used"), ("memory", "24"), ("budget", "100000")],  # noqa: E501
    "cloud": [("util", "100"), ("cloud", "0.01"), ("kwh", "0.5"), ("util", "1"), ("spot", "9000"), ("cloud", "3")],
}

SYNTHETIC = """
async () => {
  const F = await import(new URL("assets/js/calc/formulas.mjs", document.baseURI.replace(/calculators\\/picker\\/.*$/, "")).href);
  const gpus = [];
  for (let i = 0; i < 10000; i++) {
    gpus.push({ id: `g-${i}`, name: `GPU ${i}`, release_date: "2019-01-01", memory_gb: 4 + (i % 44),
      memory_bandwidth_gbs: 100 + (i * 37) % 3000, fp32_tflops: 1 + (i * 13) % 90,
      fp16_tensor_tflops: i % 4 ? 10 + (i * 7) % 900 : null, launch_price_usd: 99 + (i * 53) % 40000 });
  }
  const table = { workload: "cnn", reference: "g-1", values: {} };
  for (let i = 0; i < 10000; i += 10) table.values[`g-${i}`] = 0.1 + (i % 97) / 10;
  const prices = [];
  for (let i = 0; i < 10000; i += 7) prices.push({ gpu: `g-${i}`, usd: 50 + i % 900, kind: i % 2 ? "used" : "street" });
  const data = { gpus, revisions: [{ date: "2020-01-01", relative_performance: [table], prices,
    priorities: [{ network: "cnn", order: ["tensor-cores", "flops", "memory-bandwidth", "fp16-capability"] }] }] };
  const inputs = { workload: "cnn", memory: "8", budget: "20000", prices: "used" };
  const times = [];
  let rows = 0;
  for (let k = 0; k < 60; k++) {
    const t0 = performance.now();
    const out = F.run("picker", inputs, { lang: "en", data });
    times.push(performance.now() - t0);
    rows = out.result.rows.length;
  }
  return { times: times.slice(10), rows };
}
"""

RECOMPUTE = """
([name, n]) => {
  const root = document.querySelector(`[data-wg-calc="${name}"]`);
  const times = [];
  for (let k = 0; k < n; k++) {
    const t0 = performance.now();
    root.wgUpdate(false);
    times.push(performance.now() - t0);
  }
  return times.slice(Math.min(10, n - 1));
}
"""

SHIFTS = """
async ([name, changes, rounds]) => {
  const root = document.querySelector(`[data-wg-calc="${name}"]`);
  const entries = [];
  const po = new PerformanceObserver((list) => { for (const e of list.getEntries()) entries.push(e.value); });
  po.observe({ type: "layout-shift", buffered: false });
  const frame = () => new Promise((r) => requestAnimationFrame(() => requestAnimationFrame(r)));
  await frame();
  const original = {};
  for (const [field] of changes) {
    const el = root.querySelector(`[name="${field}"]`);
    original[field] = el.type === "checkbox" ? (el.checked ? "1" : "0") : el.value;
  }
  const set = (field, value) => {
    const el = root.querySelector(`[name="${field}"]`);
    if (el.type === "checkbox") el.checked = value === "1"; else el.value = value;
    el.dispatchEvent(new Event(el.tagName === "SELECT" || el.type === "checkbox" ? "change" : "input", { bubbles: true }));
  };
  let changed = 0;
  for (let r = 0; r < rounds; r++) {
    for (const [field, value] of changes) { set(field, value); changed++; await frame(); }
    for (const [field] of changes) { set(field, original[field]); changed++; await frame(); }
  }
  await frame();
  po.disconnect();
  return { changes: changed, entries: entries.length, score: entries.reduce((a, b) => a + b, 0) };
}
"""


class _Quiet(http.server.SimpleHTTPRequestHandler):
    def log_message(self, *args):
        pass


def _sizes(blobs: list[bytes]) -> dict:
    raw = b"".join(blobs)
    return {"raw": len(raw), "gzip_together": len(gzip.compress(raw, 9)),
            "gzip_each_sum": sum(len(gzip.compress(b, 9)) for b in blobs)}


def js_sizes(site: Path) -> dict:
    """The calculators' JavaScript as the built ``site`` ships it (minified: the budget's measure)
    and as its sources are written, the same modules in the same order."""
    from generator.data.calculators import calculators

    # the shared modules and each calculator's own (its folder's, copied beside them by the build)
    files = sorted(JS.glob("*.mjs")) + [m for c in calculators() for m in c.modules]
    shipped = site / "assets" / "js" / "calc"
    return {
        "files": len(files),
        "source": _sizes([p.read_bytes() for p in files]),
        "shipped": _sizes([(shipped / p.name).read_bytes() for p in files]),
        "css_gzip": len(gzip.compress((shipped / "calculators.css").read_bytes(), 9)),
    }


def _kb(n: int) -> str:
    return f"{n / 1024:.1f} KB"


def build_site(tmp: Path) -> tuple[Path, str]:
    """data/ when it is valid, else the fixture data with the project's texts."""
    from generator.data.problems import DataError
    from generator.site.pipeline import Paths
    from generator.site.pipeline import build_site as build

    os.environ.setdefault("SOURCE_DATE_EPOCH", "1767225600")
    try:
        paths = Paths(build=tmp / "build", site=tmp / "site")
        build(paths)
        return paths.site, "data/"
    except DataError:
        data = tmp / "fixture-data"
        shutil.copytree(ROOT / "tests" / "fixtures" / "valid", data)
        shutil.copyfile(ROOT / "data" / "ui.yaml", data / "ui.yaml")
        for lang in ("ko", "zh", "fr"):
            src = ROOT / "data" / "translations" / lang / "ui.yaml"
            if src.exists():
                shutil.copyfile(src, data / "translations" / lang / "ui.yaml")
        paths = Paths(data=data, build=tmp / "build", site=tmp / "site")
        build(paths)
        return paths.site, "tests/fixtures/valid (data/ has errors)"


def summary(values: list[float]) -> str:
    values = sorted(values)
    p95 = values[min(len(values) - 1, int(round(0.95 * (len(values) - 1))))]
    return f"median {statistics.median(values):.3f} ms, p95 {p95:.3f} ms, max {values[-1]:.3f} ms"


def run(repeat: int, rounds: int) -> None:
    from playwright.sync_api import sync_playwright

    print("whichgpu calculator budgets\n")
    with tempfile.TemporaryDirectory(prefix="whichgpu-calc-bench-") as tmp:
        site, source = build_site(Path(tmp))
        sizes = js_sizes(site)
        shipped, written = sizes["shipped"], sizes["source"]
        print(f"JavaScript as shipped (minified): {sizes['files']} modules, {_kb(shipped['raw'])} raw, "
              f"{_kb(shipped['gzip_together'])} gzipped together (budget 30 KB; "
              f"{_kb(shipped['gzip_each_sum'])} gzipped one by one); stylesheet {_kb(sizes['css_gzip'])} gzipped")
        print(f"JavaScript as written (sources): {_kb(written['raw'])} raw, {_kb(written['gzip_together'])} gzipped "
              f"together, {_kb(written['gzip_each_sum'])} gzipped one by one")
        data_js = site / "assets" / "data" / "whichgpu-data.js"
        print(f"data file: {data_js.stat().st_size / 1024:.1f} KB raw, "
              f"{len(gzip.compress(data_js.read_bytes(), 9)) / 1024:.1f} KB gzipped (generated, built from {source})\n")
        httpd = http.server.ThreadingHTTPServer(("127.0.0.1", 0), functools.partial(_Quiet, directory=str(site)))
        threading.Thread(target=httpd.serve_forever, daemon=True).start()
        base = f"http://127.0.0.1:{httpd.server_address[1]}"
        try:
            with sync_playwright() as p:
                browser = p.chromium.launch(executable_path=CHROMIUM, args=["--no-sandbox", "--disable-gpu"])
                page = browser.new_page(viewport={"width": 1280, "height": 900})
                print(f"{'calculator':<10} recompute (input -> formulas -> DOM), {repeat} runs")
                shifts = {}
                for name, slug in PAGES.items():
                    page.goto(f"{base}/calculators/{slug}/")
                    page.wait_for_function(f'"wgLast" in (document.querySelector(\'[data-wg-calc="{name}"]\') || {{}})')
                    times = page.evaluate(RECOMPUTE, [name, repeat])
                    print(f"{name:<10} {summary(times)}")
                    shifts[name] = page.evaluate(SHIFTS, [name, CHANGES[name], rounds])
                page.goto(f"{base}/calculators/picker/")
                page.wait_for_function('"wgLast" in (document.querySelector(\'[data-wg-calc="picker"]\') || {})')
                synth = page.evaluate(SYNTHETIC)
                print(f"\nranking 10,000 synthetic GPUs ({synth['rows']} fit): {summary(synth['times'])} (budget 5 ms)")
                print("\nlayout shift while results change (budget 0 entries)")
                for name, s in shifts.items():
                    print(f"{name:<10} {s['changes']} result changes, {s['entries']} layout-shift entries, score {s['score']:.4f}")  # noqa: E501
                browser.close()
        finally:
            httpd.shutdown()


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=200, help="recomputations timed per calculator")
    parser.add_argument("--rounds", type=int, default=3, help="rounds of result changes watched for layout shift")
    args = parser.parse_args(argv)
    run(args.repeat, args.rounds)


if __name__ == "__main__":
    main()
