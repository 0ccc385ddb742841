"""The advice through time: states per revision, per-GPU histories, derived spec figures."""
from __future__ import annotations

import functools
from collections.abc import Callable
from dataclasses import dataclass, field

from generator.data.dataset import Dataset, Record, tree_leaves
from generator.data.schema import SOURCED_FIELDS
from generator.facts.diff import advice_states


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
        _note_advice(rev, states[rev.id], mention)
        _note_figures(rev, mention)
    return index


def _note_advice(rev: Record, rev_states: dict, mention: Callable[[str, str], GpuMention]) -> None:
    """Note the GPUs one revision recommends, offers as alternatives and avoids."""
    for pid, st in rev_states.items():
        for gid in st.gpus:
            mention(gid, rev.id).recommended_for.append((pid, st.known))
    for pid, rec in (rev.get("recommendations") or {}).items():
        for gid in rec.get("alternatives") or []:
            mention(gid, rev.id).alternative_for.append(pid)
    for gid in rev.get("avoid") or []:
        mention(gid, rev.id).avoided = True


def _note_figures(rev: Record, mention: Callable[[str, str], GpuMention]) -> None:
    """Note the GPUs one revision compares, prices, changes or puts in its flowchart."""
    for table in rev.get("relative_performance") or []:
        for gid, value in table["values"].items():
            mention(gid, rev.id).relative.append((table["workload"], table["reference"], value))
    for p in rev.get("prices") or []:
        mention(p["gpu"], rev.id).prices.append((p["usd"], p["kind"]))
    for c in rev.get("changes") or []:
        if c.get("gpu"):
            mention(c["gpu"], rev.id).changes.append(c["type"])
    for gid in sorted({g for _, leaf in tree_leaves(rev.get("decision_tree")) for g in leaf.get("gpus") or ()}):
        mention(gid, rev.id).in_tree = True


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


@dataclass
class MatrixCell:
    gpus: list[str]
    known: str  # source | derived (from the update log) | tree (read from a flowchart leaf)
    changed: bool = False  # differs from the revision before


@dataclass
class AdviceMatrix:
    columns: list[str]  # revisions with a cell for at least one persona, oldest first
    without_list: list[str]  # revisions that address no persona (no list, no tagged flowchart leaf)
    rows: dict[str, dict[str, MatrixCell]]  # persona -> revision -> cell (absent: not addressed)

    @functools.cached_property
    def _addressed(self) -> frozenset[str]:
        return frozenset(self.columns)

    def addresses(self, revision: str) -> bool:
        """Whether the revision has a cell for some persona (a row of cells, not a note)."""
        return revision in self._addressed


def advice_matrix(ds: Dataset, states, trees) -> AdviceMatrix:
    """What each persona was told on each revision: its list in force, or else the flowchart leaf
    in force that names it (``personas`` on a leaf)."""
    rows: dict[str, dict[str, MatrixCell]] = {pid: {} for pid in ds.persona_ids()}
    addressed: set[str] = set()
    for rev in ds.revisions:
        tree_rev = trees.get(rev.id)
        from_tree = {}
        if tree_rev is not None:
            for _, leaf in tree_leaves(tree_rev.get("decision_tree")):
                for pid in leaf.get("personas") or ():
                    from_tree[pid] = leaf
        for pid, cells in rows.items():
            st = states[rev.id].get(pid)
            if pid in from_tree:  # the flowchart in force answers this reader (its state is read from it)
                cells[rev.id] = MatrixCell(list(from_tree[pid]["gpus"]), "tree")
            elif st is not None:
                cells[rev.id] = MatrixCell(list(st.gpus), st.known)
            else:
                continue
            addressed.add(rev.id)
    for cells in rows.values():
        prev = None
        for rev in ds.revisions:
            cell = cells.get(rev.id)
            now = cell.gpus if cell else None
            if cell and now != prev:
                cell.changed = True
            prev = now
    return AdviceMatrix([r.id for r in ds.revisions if r.id in addressed],
                        [r.id for r in ds.revisions if r.id not in addressed], rows)
