"""Error table of the estimation engine over the shipped measurements (fitted and leave-one-source-
out) and the held-out files, and the goals of the project met or missed.

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
from generator.estimate.fit_error import accuracy
from generator.facts.engine_input import read_bundle
from generator.facts.holdout import holdout_errors, holdout_rows

# (metric, runtime, statistic, limit in %): held over the shipped measurements, fitted and with each
# source left out, and over benchmarks/holdout/
GOALS = (
    ("decode_tokens_per_s", "all", "median_pct", 12.0),
    ("decode_tokens_per_s", "all", "p90_pct", 35.0),
    ("prefill_tokens_per_s", "all", "median_pct", 20.0),
    ("prefill_tokens_per_s", "all", "p90_pct", 50.0),
    ("training_relative", "all", "median_pct", 15.0),
    ("weights_gib", "llama.cpp", "p90_pct", 3.0),
    ("peak_memory_gib", "transformers", "median_pct", 15.0),
)
# leave-one-source-out (and held-out) figures within this factor of the fitted ones
UNSEEN_FACTOR = 1.5
UNSEEN_GOALS = (("decode_tokens_per_s", "all"), ("prefill_tokens_per_s", "all"))


def _mark(value, limit) -> str:
    if value is None:
        return f"{'-':>15}"
    return f"{value:>7g} {'met' if value <= limit else 'MISSED':>7}"


def goals(table: dict, held: dict) -> list[str]:
    """The goals' lines: each limit beside the fitted, leave-one-source-out and held-out figures."""
    out = [f"{'goal':44} {'limit':>7} {'fitted':>15} {'unseen (LOSO)':>15} {'held out':>15}"]
    for metric, runtime, stat, limit in GOALS:
        e = (table.get(metric) or {}).get(runtime) or {}
        h = (held.get(metric) or {}).get(runtime) or {}
        out.append(f"{metric + ' ' + runtime + ' ' + stat:44} {limit:>5g} % {_mark(e.get(stat), limit)} "
                   f"{_mark((e.get('unseen') or {}).get(stat), limit)} {_mark(h.get(stat), limit)}")
    for metric, runtime in UNSEEN_GOALS:
        e = (table.get(metric) or {}).get(runtime) or {}
        h = (held.get(metric) or {}).get(runtime) or {}
        for stat in ("median_pct", "p90_pct"):
            fitted = e.get(stat)
            if not fitted:
                continue
            unseen, held_out = (e.get("unseen") or {}).get(stat), h.get(stat)
            ratio = None if unseen is None else round(unseen / fitted, 2)
            ratio_h = None if held_out is None else round(held_out / fitted, 2)
            out.append(f"{metric + ' ' + runtime + ' ' + stat + ' / fitted':44} {UNSEEN_FACTOR:>5g} x {'':>15} "
                       f"{_mark(ratio, UNSEEN_FACTOR)} {_mark(ratio_h, UNSEEN_FACTOR)}")
    return out


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(prog="python -m benchmarks.estimate_bench")
    ap.add_argument("--data", default="data")
    ap.add_argument("--json", action="store_true", help="print the constants and the error table as JSON")
    args = ap.parse_args(argv)
    bundle = read_bundle(Path(args.data))
    t0 = time.perf_counter()
    constants = fit_constants(bundle.models, bundle.gpus, bundle.measurements, bundle.revisions)
    t1 = time.perf_counter()
    table = accuracy(bundle.models, bundle.gpus, bundle.measurements, bundle.revisions, constants)
    elapsed = time.perf_counter() - t1
    held = holdout_errors(holdout_rows(), bundle.models, bundle.gpus, constants)
    if args.json:
        print(json.dumps({"constants": constants, "errors": table, "holdout": held}, indent=2, sort_keys=True))
        return 0
    print(f"{len(bundle.measurements)} measurements, {len(bundle.models)} models, {len(bundle.gpus)} GPUs; "
          f"fit in {t1 - t0:.1f}s, errors with each source left out in {elapsed:.1f}s\n")
    head = (f"{'metric':26} {'runtime':13} {'median %':>9} {'p90 %':>8} {'count':>6} {'sources':>8} "
            f"{'LOSO median %':>14} {'LOSO p90 %':>11} {'left out':>9}")
    print(head)
    print("-" * len(head))
    for metric, rows in table.items():
        for runtime, e in rows.items():
            u = e["unseen"]
            print(f"{metric:26} {runtime:13} {e['median_pct']:>9} {e['p90_pct']:>8} {e['count']:>6} {e['sources']:>8} "
                  f"{u['median_pct']!s:>14} {u['p90_pct']!s:>11} {u['sources']:>9}")
    print("\ngoals (fitted: the measurements the constants were fitted on; unseen: each source file left out in turn;"
          "\nheld out: benchmarks/holdout/, never fitted)")
    print("\n".join("  " + line for line in goals(table, held)))
    return 0


if __name__ == "__main__":
    sys.exit(main())
