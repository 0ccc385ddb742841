"""Lighthouse scores (mobile) of the key pages, served gzip-compressed like real hosting.

Performance is timing-based and moves with the machine's load, so each page is measured RUNS
times and the run with the median score is printed (Lighthouse's own advice on variability);
the last column compares it with the budget of 95. Accessibility is asserted in
tests/test_lighthouse.py."""
from __future__ import annotations

import os
import tempfile
from pathlib import Path

from benchmarks.lighthouse_server import lighthouse, serve
from generator.site.pipeline import Paths, build_site

RUNS = int(os.environ.get("LIGHTHOUSE_RUNS", "5"))
BUDGET = 95
TBT_BUDGET = 150  # ms, the catalogue's median
# home, catalogue, a GPU page, a revision, the large-model calculator and the picker, in English
# and Korean
BENCH_PAGES = [f"{lang}{page}" for lang in ("", "ko/") for page in
               ("", "gpus/", "gpus/rtx-2070/", "revisions/2019-04-03/", "calculators/memory-llm/", "calculators/picker/")]


def median_run(url: str) -> tuple[dict, list[float], list[float]]:
    reports = [lighthouse(url, "performance,accessibility") for _ in range(RUNS)]
    reports.sort(key=lambda r: r["categories"]["performance"]["score"])
    return (reports[len(reports) // 2], [r["categories"]["performance"]["score"] * 100 for r in reports],
            [r["audits"]["total-blocking-time"]["numericValue"] for r in reports])


def main() -> None:
    import argparse
    import json
    import statistics

    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--json", help="also write the results to this file")
    args = parser.parse_args()
    results = []
    missed = []
    with tempfile.TemporaryDirectory(prefix="whichgpu-lh-") as tmp:
        paths = Paths(build=Path(tmp) / "build", site=Path(tmp) / "site")
        build_site(paths)
        httpd, base = serve(paths.site)
        print(f"Lighthouse, mobile, median of {RUNS} runs per page (performance budget {BUDGET})")
        print(f"{'page':<28} {'perf':>5} {'runs':>14} {'a11y':>5} {'FCP':>7} {'LCP':>7} {'TBT':>8} {'CLS':>6} {'bytes':>9}  budget")  # noqa: E501
        for path in BENCH_PAGES:
            if not (paths.site / path / "index.html").is_file():
                continue
            r, scores, tbts = median_run(f"{base}/{path}")
            a = r["audits"]
            results.append({"page": "/" + path, "scores": scores, "median": statistics.median(scores),
                            "tbt_median_ms": statistics.median(tbts)})
            perf = r["categories"]["performance"]["score"] * 100
            ok = perf >= BUDGET
            if not ok:
                missed.append("/" + path)
            print(f"{'/' + path:<28} {perf:>5.0f} {'/'.join(f'{s:.0f}' for s in scores):>14} "
                  f"{r['categories']['accessibility']['score'] * 100:>5.0f} "
                  f"{a['first-contentful-paint']['numericValue'] / 1000:>6.2f}s {a['largest-contentful-paint']['numericValue'] / 1000:>6.2f}s "  # noqa: E501
                  f"{a['total-blocking-time']['numericValue']:>6.0f}ms {a['cumulative-layout-shift']['numericValue']:>6.3f} "
                  f"{a['total-byte-weight']['numericValue']:>9,.0f}  {'ok' if ok else 'MISSED'}")
        httpd.shutdown()
    print(f"performance budget: {'met on every page' if not missed else 'missed on ' + ', '.join(missed)} "
          f"(load average {os.getloadavg()[0]:.1f}; scores fall on a loaded machine)")
    if args.json:
        Path(args.json).write_text(json.dumps(results, indent=1) + "\n", encoding="utf-8")


if __name__ == "__main__":
    main()
