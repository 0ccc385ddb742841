"""`python -m generator diff`: revisions against each other or against today's picks
(diff_advice.py prints them), or data/ against a git ref (diff_data_ref.py)."""
from __future__ import annotations

import sys
from pathlib import Path

from generator.cli.diff_advice import Names, Style, revision_json, revision_markdown, revision_text
from generator.cli.diff_data_ref import data_ref_diff, data_ref_json, data_ref_markdown
from generator.data.dataset import Dataset
from generator.data.loader import load_dataset
from generator.facts.derive import derive
from generator.facts.diff import TODAY, RevisionDiff, diff_revisions, diff_snapshot_today, diff_today, resolve_date
from generator.facts.today import newest_date


def _write_diff(d: RevisionDiff, ds: Dataset, args) -> None:
    names = Names(ds, args.lang)
    if args.format == "json":
        sys.stdout.write(revision_json(d, names))
    elif args.format == "markdown":
        sys.stdout.write(revision_markdown(d, names))
    else:
        colour = args.color == "always" or (args.color == "auto" and sys.stdout.isatty())
        sys.stdout.write(revision_text(d, names, Style(colour)))


def _snapshot_diff(ds: Dataset, date: str, args) -> int:
    """``diff snapshot:DATE today``: a kept snapshot of today's picks against today's picks."""
    snaps = {s.id: s for s in ds.snapshots}
    if args.revisions[1] != TODAY:
        print("diff: a snapshot is compared with today: diff snapshot:DATE today", file=sys.stderr)
        return 2
    if date not in snaps:
        known = ", ".join(snaps) or "none (python -m generator new snapshot keeps one)"
        print(f"diff: no snapshot {date!r}; known: {known}", file=sys.stderr)
        return 2
    newest = newest_date(ds)
    if newest is None:
        print("diff: no dated prices in data/prices, so there is no today to compare", file=sys.stderr)
        return 2
    _write_diff(diff_snapshot_today(ds, snaps[date], derive(ds).today_picks, newest.isoformat()), ds, args)
    return 0


def run(args) -> int:
    root = Path.cwd()
    if args.data_ref:
        try:
            result, new = data_ref_diff(root, args.data_ref, Path(args.data))
        except ValueError as exc:
            print(f"diff: {exc}", file=sys.stderr)
            return 2
        text = data_ref_json(result) if args.format == "json" else data_ref_markdown(result, new)
        sys.stdout.write(text)
        return 1 if result.new_problems else 0
    if len(args.revisions) != 2:
        print("diff: give two revisions (dates, 'latest' or 'previous'), or --data-ref REF", file=sys.stderr)
        return 2
    ds, problems = load_dataset(Path(args.data), root)
    if ds is None:
        for p in problems:
            print(p, file=sys.stderr)
        return 1
    if args.revisions[0] == TODAY:
        print("diff: 'today' comes second: diff REVISION today", file=sys.stderr)
        return 2
    first = args.revisions[0]
    if first.startswith("snapshot:") or (first not in {r.id for r in ds.revisions}
                                          and first in {s.id for s in ds.snapshots}):
        return _snapshot_diff(ds, first.removeprefix("snapshot:"), args)
    try:
        a, b = (x if x == TODAY else resolve_date(ds, x) for x in args.revisions)
    except KeyError as exc:
        known = ", ".join(r.id for r in ds.revisions)
        print(f"diff: no revision {exc.args[0]!r}; known: latest, previous, today (second only), {known}",
              file=sys.stderr)
        return 2
    if b == TODAY:
        facts = derive(ds)
        newest = newest_date(ds)
        if newest is None:
            print("diff: no dated prices in data/prices, so there is no today to compare", file=sys.stderr)
            return 2
        d = diff_today(ds, a, facts.today_picks, newest.isoformat(), facts.states)
    else:
        d = diff_revisions(ds, a, b)
    _write_diff(d, ds, args)
    return 0
