"""The facts a measurement needs that the file may not state: given as options, asked for on a
terminal, each checked; without a terminal, one error listing every option still needed."""
from __future__ import annotations

import datetime as _dt
from dataclasses import dataclass, field
from urllib.parse import urlparse

from generator.cli.import_bench.errors import BenchInputError
from generator.cli.import_bench.matching import match_gpu, match_model
from generator.data.dataset import today_utc
from generator.data.records_llm import VERSION_RE, WEIGHT_FORMATS
from generator.data.schema import URL_RE


@dataclass
class Facts:
    """What the command line gave, then what was asked for."""
    source: str | None = None
    date: str | None = None
    publisher: str | None = None
    title: str | None = None
    gpu: str | None = None
    gpus: int | None = None
    model: str | None = None
    weights: str | None = None
    batch: int | None = None
    runtime_version: str | None = None
    missing: list[tuple[str, str]] = field(default_factory=list)  # (option, why)


def _gpu_id(value: str, ds) -> str:
    if value in ds.gpus:
        return value
    gid, near = match_gpu(value, ds.gpus)
    if gid is None:
        hint = f"; the nearest: {', '.join(near[:5])}" if near else ""
        raise BenchInputError(f"--gpu: unknown GPU id '{value}'{hint}")
    return gid


def _model_id(value: str, ds) -> str:
    mid, near = match_model(value, ds.models)
    if mid is None:
        hint = f"; it may be one of {', '.join(near[:5])}" if near else ""
        raise BenchInputError(f"--model: unknown model id or Hugging Face repository '{value}'{hint}")
    return mid


def _url(value: str, ds) -> str:
    if not URL_RE.match(value):
        raise BenchInputError(f"--source: expected an http(s) URL, got '{value}'")
    return value


def _date(value: str, ds) -> str:
    try:
        day = _dt.date.fromisoformat(value)
    except ValueError:
        raise BenchInputError(f"--date: expected YYYY-MM-DD, got '{value}'") from None
    if day > today_utc():
        raise BenchInputError(f"--date: {value} is in the future")
    return value


def _weights(value: str, ds) -> str:
    if value not in WEIGHT_FORMATS:
        raise BenchInputError(f"--weights: one of {', '.join(WEIGHT_FORMATS)}, got '{value}'")
    return value


def _count(option):
    def check(value: str, ds) -> int:
        if not value.isdigit() or int(value) < 1:
            raise BenchInputError(f"{option}: a whole number from 1, got '{value}'")
        return int(value)
    return check


def _version(value: str, ds) -> str:
    if not VERSION_RE.match(value):
        raise BenchInputError(f"--runtime-version: a version such as b4567 or 0.10.1, got '{value}'")
    return value


def _text(value: str, ds) -> str:
    if not value:
        raise BenchInputError("an empty answer")
    return value


CHECKS = {"--source": _url, "--date": _date, "--gpu": _gpu_id, "--model": _model_id, "--weights": _weights,
          "--gpus": _count("--gpus"), "--batch": _count("--batch"), "--runtime-version": _version,
          "--publisher": _text, "--title": _text}


def check_fact(option: str, value: str, ds) -> object:
    """A fact typed at the prompt or given as an option, checked; BenchInputError when wrong."""
    return CHECKS[option](value.strip(), ds)


def ask_missing(facts: Facts, ds, interactive: bool) -> None:
    """Ask for every missing fact on the terminal, or fail listing them all."""
    if not facts.missing:
        return
    if not interactive:
        lines = "\n".join(f"  {opt}: {why}" for opt, why in facts.missing)
        raise BenchInputError(f"the file does not say everything a measurement needs; give:\n{lines}\n"
                           "(run it on a terminal without --no-input to be asked)")
    for option, why in facts.missing:
        answer = input(f"{option[2:]} ({why}): ")
        setattr(facts, option[2:].replace("-", "_"), check_fact(option, answer, ds))
    facts.missing = []


def publisher_of(url: str) -> str | None:
    """The owner named by a code-hosting address (github.com/<owner>/...), else None."""
    parts = urlparse(url)
    path = [p for p in parts.path.split("/") if p]
    if parts.hostname == "huggingface.co" and path[:1] in (["datasets"], ["spaces"]):
        path = path[1:]
    if parts.hostname in ("github.com", "gitlab.com", "huggingface.co", "gist.github.com") and path:
        return path[0]
    return None
