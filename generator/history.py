"""The advice through time: states per revision, per-GPU histories, derived spec figures."""
from __future__ import annotations

from dataclasses import dataclass, field

from .diff import advice_states
from .model import Dataset, Record
from .schema import SOURCED_FIELDS


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


def history_index(ds: Dataset, states=None) -> dict[str, list[GpuMention]]:
    """gpu id -> every revision that recommended, offered as an alternative, avoided, compared,
    priced or changed it, oldest first; built in one pass over the revisions."""
    states = states or advice_states(ds)
    index: dict[str, list[GpuMention]] = {}

    def mention(gid: str, date: str) -> GpuMention:
        items = index.setdefault(gid, [])
        if not items or items[-1].date != date:
            items.append(GpuMention(date))
        return items[-1]

    for rev in ds.revisions:
        for pid, st in states[rev.id].items():
            for gid in st.gpus:
                mention(gid, rev.id).recommended_for.append((pid, st.known))
        for pid, rec in (rev.get("recommendations") or {}).items():
            for gid in rec.get("alternatives") or []:
                mention(gid, rev.id).alternative_for.append(pid)
        for gid in rev.get("avoid") or []:
            mention(gid, rev.id).avoided = True
        for table in rev.get("relative_performance") or []:
            for gid, value in table["values"].items():
                mention(gid, rev.id).relative.append((table["workload"], table["reference"], value))
        for p in rev.get("prices") or []:
            mention(p["gpu"], rev.id).prices.append((p["usd"], p["kind"]))
        for c in rev.get("changes") or []:
            if c.get("gpu"):
                mention(c["gpu"], rev.id).changes.append(c["type"])
        for gid in sorted(_tree_gpus(rev.get("decision_tree"))):
            mention(gid, rev.id).in_tree = True
    return index


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
