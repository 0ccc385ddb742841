"""``python -m generator estimate --requests FILE.jsonl``: many estimates for a script, one per line.

Each line of the file is a JSON object of the command's own options, named by their long names
without the dashes (``kv-cache`` or ``kv_cache``); switches take ``true`` or ``false`` and a
``null`` leaves an option at its default. Each line gets one line of JSON on standard output, in
the same order: the object ``--format json`` prints, or ``{"error": "..."}`` naming what was wrong
with that line. A blank line is a request too, and gets an error line, so that the n-th line of
output always answers the n-th line of input. The data is read once, for every line.

Exit codes: 0 every line was answered (some perhaps with an error), 1 the data has problems,
2 the file cannot be read or other estimate options were given beside it.
"""
from __future__ import annotations

import argparse
import difflib
import json
import sys
from pathlib import Path

from generator.cli.estimate import UsageError, _check_input, _estimate, _finite, add_parser, load_facts, message
from generator.estimate.engine import EstimateError

# options of the command line that are not a request's: how and from where the batch is read
BATCH_ONLY = ("requests", "format", "data", "help")


class LineError(Exception):
    pass


class _LineParser(argparse.ArgumentParser):
    """The estimate command's parser, raising where the command line would print and exit."""

    def error(self, message: str):
        raise LineError(message)

    def exit(self, status=0, message=None):
        raise LineError(message or "the options stopped early")


def _request_parser() -> argparse.ArgumentParser:
    """A fresh copy of ``estimate``'s options, the very declarations of the command line."""
    holder = argparse.ArgumentParser(add_help=False)
    return add_parser(holder.add_subparsers(parser_class=_LineParser))


def _options(parser) -> dict[str, argparse.Action]:
    """Each request key (the long option without its dashes) and its action."""
    out = {}
    for action in parser._actions:
        for opt in action.option_strings:
            if opt.startswith("--"):
                key = opt[2:]
                if key not in BATCH_ONLY:
                    out[key] = action
    return out


def _argv(request, options: dict[str, argparse.Action]) -> list[str]:
    """The command line one request stands for."""
    if not isinstance(request, dict):
        raise LineError(f"a request is a JSON object of options, got {type(request).__name__}")
    argv: list[str] = []
    for raw, value in request.items():
        key = str(raw).replace("_", "-")
        if key not in options:
            near = difflib.get_close_matches(key, sorted(options), n=1, cutoff=0.6)
            hint = f"; did you mean '{near[0]}'?" if near else ""
            where = " (a request's result is always JSON)" if key == "format" else ""
            raise LineError(f"unknown option '{raw}'{where}{hint}")
        if value is None:
            continue
        action = options[key]
        if action.nargs == 0:  # a switch
            if not isinstance(value, bool):
                raise LineError(f"option '{raw}' is a switch: true or false, got {json.dumps(value)}")
            if value:
                argv.append(f"--{key}")
            continue
        if isinstance(value, bool) or isinstance(value, dict):
            raise LineError(f"option '{raw}' takes a value, got {json.dumps(value)}")
        if isinstance(value, list):
            if key != "lora-targets" or not all(isinstance(v, str) for v in value):
                raise LineError(f"option '{raw}' takes one value, got a list")
            value = ",".join(value)
        argv.append(f"--{key}={value}")
    return argv


def answer(line: str, parser, options, facts) -> dict:
    """The result of one line, or its error as ``{"error": ...}``."""

    if not line.strip():
        return {"error": "blank line: each line is one JSON object of options"}
    try:
        request = json.loads(line)
    except ValueError as exc:
        return {"error": f"not JSON: {exc}"}
    try:
        args = parser.parse_args(_argv(request, options))
        if args.gpu is None:
            raise LineError("option 'gpu' is required: the GPU id, e.g. rtx-4090")
        model = _check_input(args)
        result = _estimate(args, facts, model)
    except (LineError, UsageError) as exc:
        return {"error": str(exc)}
    except EstimateError as exc:
        return {"error": message(exc.key, exc.params)}
    if not _finite(result):
        return {"error": "these inputs take the estimate out of range (a figure is infinite or not a number)"}
    return result


def _given_beside(args, parser) -> list[str]:
    """Estimate options set on the command line beside --requests (they belong on each line)."""
    given = []
    for key, action in _options(parser).items():
        if getattr(args, action.dest, None) != action.default and key.replace("-", "_") == action.dest:
            given.append(f"--{key}")
    return given


def run_requests(args) -> int:
    parser = _request_parser()
    beside = _given_beside(args, parser)
    if beside:
        print(f"error: with --requests each line gives its own options; remove {' '.join(beside)} "
              f"from the command line", file=sys.stderr)
        return 2
    try:
        if args.requests == "-":
            lines = sys.stdin.read().splitlines()
        else:
            lines = Path(args.requests).read_text(encoding="utf-8-sig").splitlines()
    except (OSError, UnicodeDecodeError) as exc:
        print(f"error: cannot read --requests {args.requests}: {exc}", file=sys.stderr)
        return 2
    facts = load_facts(args.data)
    if facts is None:
        return 1
    options = _options(parser)
    for line in lines:
        result = answer(line, parser, options, facts)
        sys.stdout.write(json.dumps(result, sort_keys=True, allow_nan=False) + "\n")
        sys.stdout.flush()
    return 0
