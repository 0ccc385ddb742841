"""Whether today's software runs a card: the one rule over ``data/software.yaml``.

A build runs a card when it is of the card's vendor and names it: by compute capability (NVIDIA),
by GPU id, or as every card of the vendor. Over the stacks that decide status (the training
frameworks), a card is ``current`` when a build not marked legacy runs it, ``legacy`` when only
legacy builds do (``last`` names the newest of them), ``unsupported`` when none does.
"""
from __future__ import annotations

import datetime as _dt
from dataclasses import dataclass

from generator.data.dataset import Dataset, Record
from generator.estimate.formats import TABLES as ENGINE_TABLES

STATUS_ORDER = {"current": 0, "legacy": 1, "unsupported": 2}


@dataclass(frozen=True)
class Support:
    status: str  # current | legacy | unsupported
    as_of: _dt.date | None
    last: str | None  # legacy: the newest build that still runs the card
    details: tuple  # one dict per stack that runs the card: stack, name, build, release, legacy
    features: dict  # bf16, fp8, fp4, tensor_cores, flash_attention


def runs(build, gpu: Record) -> bool:
    if build.get("vendor") != gpu.get("vendor"):
        return False
    if build.get("all_of_vendor"):
        return True
    if build.get("compute_capabilities"):
        return _cuda_runs(build["compute_capabilities"], gpu.get("compute_capability"))
    return gpu.id in (build.get("gpus") or ())


def _cuda_runs(shipped, cc) -> bool:
    """CUDA's binary compatibility: a kernel built for X.y runs on X.z with z >= y (same major)."""
    if not cc:
        return False
    major, minor = (int(p) for p in cc.split("."))
    return any(int(s.split(".")[0]) == major and int(s.split(".")[1]) <= minor for s in shipped)


def _rank(build) -> tuple:
    """Builds by preference: a current build before a legacy one, the newest first."""
    return bool(build.get("legacy")), -build["date"].toordinal()


def _build_name(stack, build) -> str:
    return f"{stack['name']} {build['release']}, {build['name']}"


def support_of(ds: Dataset, gpu: Record) -> Support | None:
    """The card's status and what runs it; None when the data has no software file."""
    software = ds.software
    if software is None:
        return None
    details, status, last, last_date = [], "unsupported", None, None
    for sid, stack in (software.get("stacks") or {}).items():
        best = None
        for build in stack.get("builds") or ():
            if runs(build, gpu) and (best is None or _rank(build) < _rank(best)):
                best = build
        if best is None:
            continue
        details.append({"stack": sid, "name": stack["name"], "vendor": best["vendor"], "build": best["name"],
                        "release": best["release"],
                        "date": best["date"], "legacy": bool(best.get("legacy"))})
        if not stack.get("decides_status"):
            continue
        if not best.get("legacy"):
            status = "current"
        elif status != "current":
            status = "legacy"
            if last_date is None or best["date"] > last_date:
                last, last_date = _build_name(stack, best), best["date"]
    arch = (software.get("architectures") or {}).get(gpu.get("architecture")) or {}
    features = {"tensor_cores": bool(gpu.get("tensor_cores")), "bf16": bool(arch.get("bf16")),
                "fp8": bool(arch.get("fp8")), "fp4": bool(arch.get("fp4")),
                "flash_attention": list(arch.get("flash_attention") or ())}
    return Support(status, software.get("as_of"), last if status == "legacy" else None, tuple(details), features)


def support_result(s: Support | None) -> dict | None:
    """A card's support as the API gives it."""
    if s is None:
        return None
    return {"status": s.status, "as_of": s.as_of.isoformat() if s.as_of else None, "last": s.last,
            "details": [{**d, "date": d["date"].isoformat()} for d in s.details], "features": s.features}


def runtime_cards(ds: Dataset) -> dict[str, list[str]]:
    """Runtime of the estimation engine -> the ids of the cards some build of its software stacks runs
    (tables.json's ``stacks`` of each runtime, over data/software.yaml); runtimes naming no stack are left out."""
    if ds.software is None:
        return {}
    stacks_of_card = {gid: {d["stack"] for d in s.details} for gid, rec in ds.gpus.items()
                      if (s := support_of(ds, rec)) is not None}
    return {runtime: sorted(gid for gid, stacks in stacks_of_card.items() if stacks & set(spec["stacks"]))
            for runtime, spec in ENGINE_TABLES["runtimes"].items() if spec.get("stacks")}
