"""What a reader's browser fetches before any interaction, at 1x, 10x and 100x the data.

For each scale the synthetic data (benchmarks/synth.py) is generated in English, and MkDocs
builds the pages measured here (the others are left out: a page's HTML depends on the data and
the sidebar, not on which other pages were built, so the measured pages are as in a full build,
and 100x takes minutes instead of an hour). The pages are served gzip-compressed like real
hosting and loaded in Chromium; every byte received until the network is idle is counted, and
the requests for a search index or for a long list's other rows are reported (there should be
none). Prints a table; asserts nothing.
"""
from __future__ import annotations

import argparse
import json
import shutil
import tempfile
import time
from pathlib import Path

from benchmarks import synth
from benchmarks.lighthouse_server import ARGS, CHROMIUM, serve
from generator.site import mkdocs_glue
from generator.site.pipeline import Paths, generate_language, load_or_fail, mkdocs_overrides, read_base_config

ROOT = Path(__file__).resolve().parent.parent

PAGES = {"home": "index.md", "catalogue": "gpus/index.md", "gpu page": "gpus/rtx-2070.md",
         "revisions": "revisions/index.md", "today": "today/index.md", "model page": "models/llama-3-8b.md",
         "accuracy": "accuracy/index.md", "charts": "charts/index.md", "history": "history/index.md",
         "diffs": "diffs/index.md"}


def url_of(md: str) -> str:
    stem = md[: -len(".md")]
    return "" if stem == "index" else stem[: -len("index")] if stem.endswith("/index") else stem + "/"


def build(factor: int, tmp: Path) -> tuple[Path, int, float]:
    data = synth.make(ROOT / "data", tmp / f"data-{factor}", factor)
    paths = Paths(root=ROOT, data=data, build=tmp / f"build-{factor}", site=tmp / f"site-{factor}")
    t0 = time.perf_counter()
    ds = load_or_fail(paths)
    generate_language(ds, paths, "en")
    docs = paths.build / "docs" / "en"
    keep = set(PAGES.values())
    for md in docs.rglob("*.md"):
        if md.relative_to(docs).as_posix() not in keep:
            md.unlink()
    overrides = mkdocs_overrides(ds, "en", docs, paths.site, read_base_config(paths))
    mkdocs_glue.build(paths.root / "mkdocs.yml", overrides, rebuild=set(keep))  # not strict: links to left-out pages
    measured = sum(len(m.get("results") or ()) for m in ds.measurements)
    return paths.site, (len(ds.gpus), measured, len(ds.revisions)), time.perf_counter() - t0


def page_loads(site: Path) -> dict:
    from playwright.sync_api import sync_playwright

    httpd, base = serve(site)
    out = {}
    try:
        with sync_playwright() as p:
            browser = p.chromium.launch(executable_path=CHROMIUM, args=ARGS)
            for name, md in PAGES.items():
                if not (site / url_of(md) / "index.html").is_file():
                    continue
                context = browser.new_context(viewport={"width": 412, "height": 915})
                page = context.new_page()
                got = []
                page.on("requestfinished", lambda r, got=got: got.append((r.url, r.sizes()["responseBodySize"])))
                page.goto(f"{base}/{url_of(md)}")
                page.wait_for_load_state("networkidle")
                page.wait_for_timeout(500)
                html = (site / url_of(md) / "index.html").stat().st_size
                out[name] = {"bytes": sum(size for _, size in got), "requests": len(got), "html": html,
                             "search_index": sum(1 for u, _ in got if "search_index" in u),
                             "rest_rows": sum(1 for u, _ in got if u.endswith(".rows.js"))}
                context.close()
            browser.close()
    finally:
        httpd.shutdown()
    return out


def report(results: list[dict]) -> str:
    names = [n for n in PAGES if all(n in r["pages"] for r in results)]
    lines = ["bytes received before any interaction (gzip), phone viewport; HTML size uncompressed", ""]
    lines.append(f"{'page':<11}" + "".join(f"{str(r['factor']) + 'x fetched':>14}{'HTML':>11}" for r in results)
                 + f"{str(results[-1]['factor']) + 'x/' + str(results[0]['factor']) + 'x':>9}" * (len(results) > 1))
    for name in names:
        row = f"{name:<11}" + "".join(f"{r['pages'][name]['bytes']:>14,}{r['pages'][name]['html']:>11,}" for r in results)
        if len(results) > 1:
            row += f"{results[-1]['pages'][name]['bytes'] / results[0]['pages'][name]['bytes']:>8.2f}x"
        lines.append(row)
    extra = [f"{r['factor']}x: {r['gpus']} GPUs, {r.get('measurements', 0)} measured results, "
             f"{r.get('revisions', 0)} revisions, "
             f"search-index requests {sum(p['search_index'] for p in r['pages'].values())}, "
             f"long-list requests {sum(p['rest_rows'] for p in r['pages'].values())}" for r in results]
    return "\n".join(lines + [""] + extra)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--scales", default="1,10,100")
    parser.add_argument("--json", help="also write the results to this file")
    args = parser.parse_args()
    results = []
    with tempfile.TemporaryDirectory(prefix="whichgpu-bytes-") as tmp:
        for factor in (int(x) for x in args.scales.split(",")):
            site, (gpus, measured, revisions), seconds = build(factor, Path(tmp))
            results.append({"factor": factor, "gpus": gpus, "measurements": measured, "revisions": revisions,
                            "build_s": seconds,
                            "pages": page_loads(site)})
            print(f"... {factor}x measured ({seconds:.0f}s to build)", flush=True)
            shutil.rmtree(Path(tmp) / f"data-{factor}", ignore_errors=True)
    print(report(results))
    if args.json:
        Path(args.json).write_text(json.dumps(results, indent=1) + "\n", encoding="utf-8")


if __name__ == "__main__":
    main()
