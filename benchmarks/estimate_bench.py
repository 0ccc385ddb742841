"""Error table of the estimation engine over the shipped measurements, and the goals met or missed.

Run with ``python -m benchmarks.estimate_bench [--data data] [--json]``. Reads data/ without
validating it (so it also runs while data is being edited); the figures are the ones
``generator.estimate.accuracy`` publishes.
"""
from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

from generator.estimate import fit_constants
from generator.estimate.fitting import accuracy
from generator.facts.engine_input import read_bundle

# (metric, runtime, statistic, limit in %)
GOALS = (
    ("decode_tokens_per_s", "all", "median_pct", 15.0),
    ("decode_tokens_per_s", "all", "p90_pct", 35.0),
    ("prefill_tokens_per_s", "all", "median_pct", 25.0),
    ("training_relative", "all", "median_pct", 15.0),
    ("weights_gib", "llama.cpp", "p90_pct", 3.0),
    ("peak_memory_gib", "transformers", "median_pct", 15.0),
)


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(prog="python -m benchmarks.estimate_bench")
    ap.add_argument("--data", default="data")
    ap.add_argument("--json", action="store_true", help="print the constants and the error table as JSON")
    args = ap.parse_args(argv)
    bundle = read_bundle(Path(args.data))
    t0 = time.perf_counter()
    constants = fit_constants(bundle.models, bundle.gpus, bundle.measurements, bundle.revisions)
    table = accuracy(bundle.models, bundle.gpus, bundle.measurements, bundle.revisions, constants)
    elapsed = time.perf_counter() - t0
    if args.json:
        print(json.dumps({"constants": constants, "errors": table}, indent=2, sort_keys=True))
        return 0
    print(f"{len(bundle.measurements)} measurements, {len(bundle.models)} models, {len(bundle.gpus)} GPUs; "
          f"fit + leave-one-source-out in {elapsed:.1f}s\n")
    head = (f"{'metric':26} {'runtime':13} {'median %':>9} {'p90 %':>8} {'count':>6} {'sources':>8} "
            f"{'LOSO median %':>14} {'LOSO p90 %':>11}")
    print(head)
    print("-" * len(head))
    for metric, rows in table.items():
        for runtime, e in rows.items():
            print(f"{metric:26} {runtime:13} {e['median_pct']:>9} {e['p90_pct']:>8} {e['count']:>6} {e['sources']:>8} "
                  f"{e['loso_median_pct']:>14} {e['loso_p90_pct']:>11}")
    print("\ngoals")
    for metric, runtime, stat, limit in GOALS:
        e = (table.get(metric) or {}).get(runtime)
        if not e:
            print(f"  {metric} {runtime} {stat} <= {limit:g} %: no measurements")
            continue
        ok = e[stat] <= limit
        print(f"  {metric} {runtime} {stat} <= {limit:g} %: {e[stat]:g} % ({'met' if ok else 'missed'}; "
              f"leave-one-source-out {e['loso_' + stat]:g} %)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
