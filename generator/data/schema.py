"""The data format, declared once.

Every record type in ``data/`` is described here by small type objects. The validator
walks data with them (``check``), the translation machinery asks them which fields are
user-visible English text (``Text``), cross-reference checks come from ``Ref``, and
``json_schema()`` turns the same declarations into JSON Schema for editors. One
source, so the documentation, the validator and the schema cannot drift apart.
"""
from __future__ import annotations

import datetime as _dt
import re
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from generator.data.locales import LANGS, TRANSLATED_LANGS  # noqa: F401  (re-exported)
from generator.data.problems import Problem
from generator.data.yamlload import INVALID, dotted

VENDORS = ("nvidia", "amd", "intel", "google", "apple", "aws")
SEGMENTS = ("consumer", "workstation", "datacenter", "cloud")
GPU_NUMBER_FIELDS = (
    "memory_gb", "memory_bandwidth_gbs", "fp32_tflops", "fp16_tensor_tflops",
    "fp16_tensor_tflops_sparse", "tdp_w", "launch_price_usd",
    "fp8_tensor_tflops", "fp8_tensor_tflops_sparse", "fp4_tensor_tflops", "fp4_tensor_tflops_sparse",
    "gpu_memory_share", "l2_cache_mb",
)
PURCHASE_FIELDS = ("cooling", "slot_width", "power_connectors", "discontinued")
SOURCED_FIELDS = GPU_NUMBER_FIELDS + ("release_date", "compute_capability", "memory_type", "architecture",
                                      "interconnect") + PURCHASE_FIELDS
# How a card is cooled: its own fans (active), the server's airflow (passive), a liquid loop, or the
# system it is built into (an SoC: Apple silicon, GB10, Strix Halo).
COOLING = ("active", "passive", "liquid", "system")
SUPPORT_STATUS = ("current", "legacy", "unsupported")
FLASH_ATTENTION = (2, 3, 4)
AVOID_CLASSES = ("tesla", "quadro", "founders-edition")
RELATIVE_WORKLOADS = ("overall", "cnn", "rnn", "transformer", "dense", "inference-8bit", "training-16bit")
# what the picker asks a reader to choose (its views list the advised cards per workload)
PICKER_WORKLOADS = ("cnn", "rnn", "transformer", "llm-inference")
# The one vocabulary of workloads a reader chooses from: the home form, the picker and /today/
# (?workload=). The training workloads rank by the estimated training throughput; the LLM ones by
# decode speed of a model of that size; memory by gigabytes.
WORKLOADS = PICKER_WORKLOADS + ("llm-32b", "llm-70b", "memory")
NETWORKS = ("cnn", "rnn", "transformer", "dense")
FEATURES = ("tensor-cores", "flops", "memory-bandwidth", "fp16-capability", "memory-size")
PRICE_KINDS = ("launch", "street", "used", "cloud-hourly")
CLOUD_PRICING = ("on-demand", "spot", "reserved")
VERDICTS = ("recommended", "usable", "not-recommended", "cloud-only")
VENDOR_TOPICS = ("nvidia", "amd", "intel-xeon-phi", "intel", "google-tpu", "aws-azure", "startups")
CHANGE_TYPES = ("recommendation-added", "recommendation-removed", "comparison-added",
                "section-added", "section-removed", "section-reworked", "data-updated")
KNOWN = ("source", "derived")

ID_RE = re.compile(r"^[a-z0-9]+(?:-[a-z0-9]+)*$")
UI_KEY_RE = re.compile(r"^[a-z0-9_]+(?:\.[a-z0-9_-]+)*$")
DIGEST_RE = re.compile(r"^[0-9a-f]{12}$")
URL_RE = re.compile(r"^https?://[^\s<>\"'`]+$")
EARLIEST = _dt.date(1990, 1, 1)


class Ctx:
    """Collects problems and cross references while one document is checked."""

    def __init__(self, doc, today: _dt.date):
        self.doc = doc
        self.today = today
        self.problems = []
        self.refs: list[tuple[str, str, tuple]] = []  # (kind, id, keypath)

    def err(self, keypath: tuple, message: str, level: str = "error") -> None:
        self.problems.append(Problem(self.doc.path, self.doc.line(keypath), dotted(keypath), message, level))


def _kind(value: Any) -> str:
    if value is None:
        return "nothing (null)"
    if isinstance(value, bool):
        return f"{'true' if value else 'false'} (a boolean)"
    if isinstance(value, (int, float)):
        return f"{value!r} (a number)"
    if isinstance(value, _dt.date):
        return f"{value.isoformat()} (a date)"
    if isinstance(value, str):
        shown = value if len(value) <= 40 else value[:37] + "..."
        return f"{shown!r} (text)"
    if isinstance(value, list):
        return "a list"
    if isinstance(value, dict):
        return "a mapping"
    return type(value).__name__


class Type:
    doc = ""

    def check(self, value, ctx: Ctx, kp: tuple):  # returns nothing; reports through ctx
        raise NotImplementedError

    def json_schema(self) -> dict:
        raise NotImplementedError


@dataclass
class Str(Type):
    max_len: int = 200
    pattern: re.Pattern | None = None
    hint: str = ""

    def check(self, value, ctx, kp):
        if not isinstance(value, str):
            extra = " (quote it)" if isinstance(value, (int, float, bool, _dt.date)) else ""
            ctx.err(kp, f"expected text{extra}, got {_kind(value)}")
            return
        if not value.strip():
            ctx.err(kp, "expected text, got an empty string")
            return
        if len(value) > self.max_len:
            ctx.err(kp, f"text is {len(value)} characters; the limit is {self.max_len}")
        if self.pattern and not self.pattern.match(value):
            ctx.err(kp, f"expected {self.hint or self.pattern.pattern}, got {_kind(value)}")

    def json_schema(self):
        out: dict = {"type": "string", "minLength": 1, "maxLength": self.max_len}
        if self.pattern:
            out["pattern"] = self.pattern.pattern
        return out


@dataclass
class Text(Str):
    """User-visible English text: translated into every other language."""

    max_len: int = 2000


@dataclass
class Url(Type):
    def check(self, value, ctx, kp):
        if not isinstance(value, str) or not URL_RE.match(value):
            ctx.err(kp, f"expected an http(s) URL, got {_kind(value)}")

    def json_schema(self):
        return {"type": "string", "pattern": URL_RE.pattern, "format": "uri"}


@dataclass
class Number(Type):
    minimum: float = 0
    maximum: float = 1e6
    integer: bool = False
    exclusive_min: bool = True

    def check(self, value, ctx, kp):
        if isinstance(value, bool) or not isinstance(value, (int, float)):
            hint = " (write the number alone, without units)" if isinstance(value, str) else ""
            ctx.err(kp, f"expected a {'whole ' if self.integer else ''}number{hint}, got {_kind(value)}")
            return
        if value != value or value in (float("inf"), float("-inf")):
            ctx.err(kp, f"expected a finite number, got {value!r}")
            return
        if self.integer and int(value) != value:
            ctx.err(kp, f"expected a whole number, got {value!r}")
            return
        low_bad = value <= self.minimum if self.exclusive_min else value < self.minimum
        if low_bad:
            rel = "greater than" if self.exclusive_min else "at least"
            ctx.err(kp, f"expected a number {rel} {self.minimum:g}, got {value!r}")
        elif value > self.maximum:
            ctx.err(kp, f"{value!r} is out of range; the largest plausible value is {self.maximum:g}")

    def json_schema(self):
        out: dict = {"type": "integer" if self.integer else "number", "maximum": self.maximum}
        out["exclusiveMinimum" if self.exclusive_min else "minimum"] = self.minimum
        return out


@dataclass
class Bool(Type):
    def check(self, value, ctx, kp):
        if not isinstance(value, bool):
            ctx.err(kp, f"expected true or false, got {_kind(value)}")

    def json_schema(self):
        return {"type": "boolean"}


@dataclass
class Date(Type):
    def check(self, value, ctx, kp):
        if isinstance(value, _dt.datetime) or not isinstance(value, _dt.date):
            ctx.err(kp, f"expected a date as YYYY-MM-DD (unquoted), got {_kind(value)}")
            return
        if value < EARLIEST:
            ctx.err(kp, f"{value.isoformat()} is before {EARLIEST.isoformat()}; is the year right?")
        elif value > ctx.today:
            ctx.err(kp, f"{value.isoformat()} is in the future (today is {ctx.today.isoformat()})")

    def json_schema(self):
        return {"type": "string", "format": "date", "pattern": r"^\d{4}-\d{2}-\d{2}$"}


@dataclass
class Enum(Type):
    choices: tuple = ()

    def check(self, value, ctx, kp):
        if value not in self.choices or isinstance(value, bool):
            ctx.err(kp, f"expected one of {', '.join(self.choices)}; got {_kind(value)}")

    def json_schema(self):
        return {"enum": list(self.choices)}


@dataclass
class Ref(Type):
    """An id of another record; checked once every file is loaded."""

    kind: str = "gpu"

    def check(self, value, ctx, kp):
        if not isinstance(value, str) or not ID_RE.match(value):
            ctx.err(kp, f"expected a {self.kind} id (lowercase words joined by -), got {_kind(value)}")
            return
        ctx.refs.append((self.kind, value, kp))

    def json_schema(self):
        return {"type": "string", "pattern": ID_RE.pattern}


@dataclass
class List(Type):
    item: Type = field(default_factory=Str)
    min_items: int = 0
    unique: bool = False

    def check(self, value, ctx, kp):
        if not isinstance(value, list):
            ctx.err(kp, f"expected a list, got {_kind(value)}")
            return
        if len(value) < self.min_items:
            ctx.err(kp, f"expected at least {self.min_items} item(s), got {len(value)}")
        seen = {}
        for i, item in enumerate(value):
            if item is INVALID:
                continue
            self.item.check(item, ctx, kp + (i,))
            if self.unique and isinstance(item, (str, int, float)):
                if item in seen:
                    ctx.err(kp + (i,), f"{item!r} is listed twice (first as item {seen[item] + 1})")
                seen.setdefault(item, i)

    def json_schema(self):
        out = {"type": "array", "items": self.item.json_schema()}
        if self.min_items:
            out["minItems"] = self.min_items
        if self.unique:
            out["uniqueItems"] = True
        return out


@dataclass
class Map(Type):
    """A mapping with free keys (ids) and values of one type."""

    key: Type = field(default_factory=Str)
    value: Type = field(default_factory=Str)
    min_items: int = 0

    def check(self, value, ctx, kp):
        if not isinstance(value, dict):
            ctx.err(kp, f"expected a mapping, got {_kind(value)}")
            return
        if len(value) < self.min_items:
            ctx.err(kp, f"expected at least {self.min_items} entr{'y' if self.min_items == 1 else 'ies'}")
        for k, v in value.items():
            self.key.check(k, ctx, kp + (k,))
            if v is not INVALID:
                self.value.check(v, ctx, kp + (k,))

    def json_schema(self):
        return {"type": "object", "propertyNames": self.key.json_schema(),
                "additionalProperties": self.value.json_schema(), "minProperties": self.min_items}


@dataclass
class F:
    """A field of a record."""

    type: Type
    required: bool = True
    nullable: bool = False
    doc: str = ""


def _close_names(name: str, names) -> str:
    import difflib
    near = difflib.get_close_matches(name, list(names), n=1, cutoff=0.6)
    return f"; did you mean {near[0]!r}?" if near else ""


@dataclass
class Record(Type):
    fields: dict = field(default_factory=dict)
    rules: tuple = ()  # callables (value, ctx, kp) for cross-field checks

    def check(self, value, ctx, kp):
        if not isinstance(value, dict):
            ctx.err(kp, f"expected a mapping of fields, got {_kind(value)}")
            return
        before = len(ctx.problems)
        for name in value:
            if name not in self.fields:
                allowed = ", ".join(self.fields)
                ctx.err(kp + (name,), f"unknown field{_close_names(name, self.fields)} (allowed: {allowed})")
        for name, spec in self.fields.items():
            if name not in value:
                if spec.required:
                    ctx.err(kp, f"missing required field {name!r}" + (" (write null if unknown)" if spec.nullable else ""))
                continue
            v = value[name]
            if v is INVALID:
                continue
            if v is None:
                if not spec.nullable:
                    ctx.err(kp + (name,), f"{name} cannot be empty (null)")
                continue
            spec.type.check(v, ctx, kp + (name,))
        unreadable = any(v is INVALID for v in value.values())
        if not unreadable and not any(p.level == "error" for p in ctx.problems[before:]):
            for rule in self.rules:
                rule(value, ctx, kp)

    def json_schema(self):
        props = {}
        for name, spec in self.fields.items():
            s = spec.type.json_schema()
            if spec.nullable:
                s = {"anyOf": [s, {"type": "null"}]}
            if spec.doc:
                s["description"] = spec.doc
            props[name] = s
        return {"type": "object", "additionalProperties": False, "properties": props,
                "required": [n for n, s in self.fields.items() if s.required]}


@dataclass
class OneOf(Type):
    """Either of two shapes, told apart by a predicate on the value."""

    first: Type = field(default_factory=Str)
    second: Type = field(default_factory=Str)
    pick_second: Callable = lambda v: isinstance(v, dict)

    def check(self, value, ctx, kp):
        (self.second if self.pick_second(value) else self.first).check(value, ctx, kp)

    def json_schema(self):
        return {"oneOf": [self.first.json_schema(), self.second.json_schema()]}


@dataclass
class Lazy(Type):
    """A named type resolved on use, so that a type can contain itself (decision trees)."""

    name: str = ""
    resolve: Callable = lambda: Str()

    def check(self, value, ctx, kp):
        self.resolve().check(value, ctx, kp)

    def json_schema(self):
        return {"$ref": f"#/$defs/{self.name}"}


def walk_text(t: Type, value, kp: tuple = ()):
    """Yield (keypath, english_text) for every ``Text`` in ``value`` described by ``t``."""
    if value is None:
        return
    if isinstance(t, (OneOf, Lazy)):
        t = _concrete(t, value)
    if isinstance(t, Text):
        if isinstance(value, str):
            yield kp, value
    elif isinstance(t, Record) and isinstance(value, dict):
        for name, spec in t.fields.items():
            if name in value:
                yield from walk_text(spec.type, value[name], kp + (name,))
    elif isinstance(t, List) and isinstance(value, list):
        for i, item in enumerate(value):
            yield from walk_text(t.item, item, kp + (i,))
    elif isinstance(t, Map) and isinstance(value, dict):
        for k, v in value.items():
            yield from walk_text(t.value, v, kp + (k,))


def _concrete(t: Type, value) -> Type:
    """The type that describes ``value``, with every ``OneOf`` and ``Lazy`` followed to the end."""
    while isinstance(t, (OneOf, Lazy)):
        t = t.resolve() if isinstance(t, Lazy) else (t.second if t.pick_second(value) else t.first)
    return t
