"""`make bench`: how the build scales with the data. Prints a table; asserts nothing.

For each scale (1x, 10x, 100x the shipped catalogue and history, see benchmarks/synth.py)
it times validation, generation (the languages' generation added up: they run in parallel
processes) and each language's MkDocs build, and measures what the
build produces: pages, pages per second, the largest page, the size of one fixed GPU page,
the mean GPU page and the search indexes. Timings on shared machines are noisy: they are
reported, never asserted.
"""
from __future__ import annotations

import argparse
import json
import statistics
import tempfile
import time
from pathlib import Path

from benchmarks import synth
from generator.data import yamlload
from generator.site.pipeline import Paths, Timings, build_site, manifest

ROOT = Path(__file__).resolve().parent.parent
LANGS = ("en", "ko", "zh", "fr")


def measure(factor: int, repeat: int, tmp: Path) -> dict:
    data = synth.make(ROOT / "data", tmp / f"data-{factor}", factor)
    paths = Paths(root=ROOT, data=data, build=tmp / f"build-{factor}", site=tmp / f"site-{factor}")
    samples: dict[str, list[float]] = {}
    for _ in range(repeat):
        timings = Timings()
        t0 = time.perf_counter()
        build_site(paths, timings=timings)
        timings.add("total", time.perf_counter() - t0)
        for step, seconds in timings.steps.items():
            samples.setdefault(step, []).append(seconds)
    files = manifest(paths.site)
    pages = {k: v for k, v in files.items() if k.endswith(".html")}
    gpu_pages = [v for k, v in pages.items() if k.startswith("gpus/") and k.count("/") == 2]
    med = {k: statistics.median(v) for k, v in samples.items()}
    mkdocs = sum(v for k, v in med.items() if k.startswith("mkdocs:"))
    return {
        "factor": factor,
        "gpus": len(list(data.glob("gpus/*/*.yaml"))),
        "revisions": len(list(data.glob("revisions/*.yaml"))),
        "median_s": med,
        # share of the build's work (a full build generates and runs MkDocs in parallel processes,
        # so the steps' seconds add up to more than the wall time)
        # (``derive``: the work every language shares, done once before they fork)
        "generator_share": (med["validate"] + med.get("derive", 0.0) + med["generate"])
        / (med["validate"] + med.get("derive", 0.0) + med["generate"] + mkdocs),
        "mkdocs_s": mkdocs,
        "pages": len(pages),
        "pages_per_s": len(pages) / med["total"],
        "largest_page": max(pages.items(), key=lambda kv: kv[1]),
        "gpu_page_rtx_2070": pages.get("gpus/rtx-2070/index.html"),
        "gpu_page_mean": statistics.mean(gpu_pages),
        "site_bytes": sum(files.values()),
        "search_index": {lang: files.get(f"{'' if lang == 'en' else lang + '/'}search/search_index.json", 0) for lang in LANGS},
    }


def report(results: list[dict]) -> str:
    lines = [f"YAML loader on the C-accelerated path: {yamlload.C_ACCELERATED}", ""]
    head = f"{'scale':>5} {'GPUs':>6} {'revs':>6} {'validate':>9} {'derive':>9} {'generate':>9} " + \
        " ".join(f"{'mk:' + lang:>8}" for lang in LANGS) + f" {'total':>8} {'gen %':>6} {'pages':>6} {'pages/s':>8}"
    lines.append(head)
    for r in results:
        m = r["median_s"]
        lines.append(f"{r['factor']:>4}x {r['gpus']:>6} {r['revisions']:>6} {m['validate']:>8.2f}s {m.get('derive', 0.0):>8.2f}s "
                     f"{m['generate']:>8.2f}s "
                     + " ".join(f"{m['mkdocs:' + lang]:>7.2f}s" for lang in LANGS)
                     + f" {m['total']:>7.2f}s {100 * r['generator_share']:>5.1f}% {r['pages']:>6} {r['pages_per_s']:>8.1f}")
    lines.append("")
    lines.append(f"{'scale':>5} {'largest page':>40} {'rtx-2070 page':>14} {'mean GPU page':>14} {'site bytes':>14} "
                 + " ".join(f"{'index ' + lang:>12}" for lang in LANGS))
    for r in results:
        name, size = r["largest_page"]
        lines.append(f"{r['factor']:>4}x {name + ' ' + format(size, ','):>40} {r['gpu_page_rtx_2070']:>14,} "
                     f"{r['gpu_page_mean']:>14,.0f} {r['site_bytes']:>14,} "
                     + " ".join(f"{r['search_index'][lang]:>12,}" for lang in LANGS))
    if len(results) > 1:
        base = results[0]
        lines.append("")
        for r in results[1:]:
            growth = (r["median_s"]["total"] / base["median_s"]["total"]) / (r["pages"] / base["pages"])
            lines.append(f"{r['factor']}x vs {base['factor']}x: pages x{r['pages'] / base['pages']:.1f}, "
                         f"build time x{r['median_s']['total'] / base['median_s']['total']:.1f} "
                         f"(time per page x{growth:.2f}; 1.00 = linear)")
    return "\n".join(lines)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--scales", default="1,10,100", help="comma-separated multiples of the shipped data")
    parser.add_argument("--repeat", type=int, default=1, help="builds per scale (median reported)")
    parser.add_argument("--json", help="also write the results to this file")
    args = parser.parse_args()
    results = []
    with tempfile.TemporaryDirectory(prefix="whichgpu-bench-") as tmp:
        for factor in (int(x) for x in args.scales.split(",")):
            t0 = time.perf_counter()
            results.append(measure(factor, args.repeat if factor < 100 else 1, Path(tmp)))
            print(f"... {factor}x done in {time.perf_counter() - t0:.0f}s", flush=True)
    print(report(results))
    if args.json:
        Path(args.json).write_text(json.dumps(results, indent=1, default=str) + "\n", encoding="utf-8")


if __name__ == "__main__":
    main()
