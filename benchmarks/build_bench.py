"""`make bench`: time each step of a full build and measure what it produces.

Prints a table; it asserts nothing (timings on shared machines are noisy). Runs the real
data a few times into a temporary folder and reports the minimum and median of each step,
then sizes: pages, total bytes, the largest page and each language's search index.
"""
from __future__ import annotations

import argparse
import statistics
import tempfile
import time
from pathlib import Path

from generator.site import Paths, Timings, build_site, manifest


def run(repeat: int) -> None:
    samples: dict[str, list[float]] = {}
    with tempfile.TemporaryDirectory(prefix="whichgpu-bench-") as tmp:
        tmp = Path(tmp)
        paths = Paths(build=tmp / "build", site=tmp / "site")
        build_site(paths)  # warm-up: jieba's dictionary, imports
        for _ in range(repeat):
            timings = Timings()
            t0 = time.perf_counter()
            build_site(paths, timings=timings)
            timings.add("total", time.perf_counter() - t0)
            for step, seconds in timings.steps.items():
                samples.setdefault(step, []).append(seconds)
        files = manifest(paths.site)
        pages = {k: v for k, v in files.items() if k.endswith(".html")}
        largest = max(pages.items(), key=lambda kv: kv[1])
        total = sum(files.values())
        indexes = {lang: files.get(f"{'' if lang == 'en' else lang + '/'}search/search_index.json", 0)
                   for lang in ("en", "ko", "zh", "fr")}

    print(f"whichgpu build benchmark: {repeat} runs after one warm-up\n")
    print(f"{'step':<14} {'min (s)':>9} {'median (s)':>11}")
    for step, values in samples.items():
        print(f"{step:<14} {min(values):>9.3f} {statistics.median(values):>11.3f}")
    gen = statistics.median(samples["generate"]) + statistics.median(samples["validate"])
    share = 100 * gen / statistics.median(samples["total"])
    print(f"\ngenerator share of the build (validate + generate): {share:.1f} %")
    print(f"pages: {len(pages)}  files: {len(files)}  site bytes: {total:,}")
    print(f"pages per second (median total): {len(pages) / statistics.median(samples['total']):.1f}")
    print(f"largest page: {largest[0]} ({largest[1]:,} bytes)")
    print("search index bytes: " + ", ".join(f"{k} {v:,}" for k, v in indexes.items()))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--repeat", type=int, default=3)
    run(parser.parse_args().repeat)


if __name__ == "__main__":
    main()
