"""The advice through time: states per revision, per-GPU histories, derived spec figures."""
from __future__ import annotations

from dataclasses import dataclass, field

from .diff import PersonaState, advice_state
from .model import Dataset, Record
from .schema import SOURCED_FIELDS


def all_states(ds: Dataset) -> dict[str, dict[str, PersonaState]]:
    """revision date -> persona -> state, in one pass over the revisions."""
    return {rev.id: advice_state(ds, rev.id) for rev in ds.revisions}


@dataclass
class GpuMention:
    date: str
    recommended_for: list[tuple[str, str]] = field(default_factory=list)  # (persona, known)
    alternative_for: list[str] = field(default_factory=list)
    avoided: bool = False
    relative: list[tuple[str, str, float]] = field(default_factory=list)  # (workload, reference, value)
    prices: list[tuple[float, str]] = field(default_factory=list)  # (usd, kind)
    changes: list[str] = field(default_factory=list)  # change types naming this GPU
    in_tree: bool = False


def _tree_gpus(node) -> set[str]:
    if not node:
        return set()
    if "question" in node:
        return _tree_gpus(node.get("if_yes")) | _tree_gpus(node.get("if_no"))
    return set(node.get("gpus") or [])


def gpu_history(ds: Dataset, gid: str, states=None) -> list[GpuMention]:
    """Every revision that recommended, offered as an alternative, avoided, compared or priced ``gid``."""
    states = states or all_states(ds)
    out = []
    for rev in ds.revisions:
        m = GpuMention(rev.id)
        for pid, st in states[rev.id].items():
            if gid in st.gpus:
                m.recommended_for.append((pid, st.known))
        for pid, rec in (rev.get("recommendations") or {}).items():
            if gid in (rec.get("alternatives") or []):
                m.alternative_for.append(pid)
        m.avoided = gid in (rev.get("avoid") or [])
        for table in rev.get("relative_performance") or []:
            if gid in table["values"]:
                m.relative.append((table["workload"], table["reference"], table["values"][gid]))
        m.prices = [(p["usd"], p["kind"]) for p in rev.get("prices") or [] if p["gpu"] == gid]
        m.changes = [c["type"] for c in rev.get("changes") or [] if c.get("gpu") == gid]
        m.in_tree = gid in _tree_gpus(rev.get("decision_tree"))
        if m.recommended_for or m.alternative_for or m.avoided or m.relative or m.prices or m.changes or m.in_tree:
            out.append(m)
    return out


def sources_for(gpu: Record, field_name: str) -> list[str]:
    """The URLs that vouch for one field of a GPU record."""
    out = []
    for src in gpu.get("sources") or []:
        if isinstance(src, str):
            out.append(src)
        elif field_name in (src.get("fields") or SOURCED_FIELDS):
            out.append(src["url"])
    return out


def derived(gpu: Record) -> dict[str, float | None]:
    """Figures computed from the specs (None where an input is missing)."""
    price, tdp = gpu.get("launch_price_usd"), gpu.get("tdp_w")
    tensor, fp32, mem, bw = gpu.get("fp16_tensor_tflops"), gpu.get("fp32_tflops"), gpu["memory_gb"], gpu["memory_bandwidth_gbs"]

    def ratio(a, b, scale=1.0):
        return round(a / b * scale, 3) if a is not None and b else None

    return {
        "tensor_per_kusd": ratio(tensor, price, 1000),
        "fp32_per_kusd": ratio(fp32, price, 1000),
        "bandwidth_per_usd": ratio(bw, price),
        "memory_per_100usd": ratio(mem, price, 100),
        "tensor_per_w": ratio(tensor, tdp),
        "fp32_per_w": ratio(fp32, tdp),
    }
