"""What changed between two revisions of the advice: one model for the CLI and the site.

``advice_state`` gives the recommendations in force on a revision: a ``full`` revision
states them; an ``update`` revision inherits the previous state and applies its
``changes`` (a persona gaining or losing a GPU), so every entry says whether it is known
from a source or derived. ``diff_revisions`` compares two states and the figures the two
revisions quote.
"""
from __future__ import annotations

from dataclasses import asdict, dataclass, field

from generator.data.dataset import Dataset, Record, tree_leaves


@dataclass
class PersonaState:
    gpus: list[str]
    known: str  # "source" or "derived"
    note_from: str | None = None  # the revision whose note applies


def advice_states(ds: Dataset) -> dict[str, dict[str, PersonaState]]:
    """revision date -> (persona id -> recommended GPUs in force), in one pass."""
    out: dict[str, dict[str, PersonaState]] = {}
    state: dict[str, PersonaState] = {}
    for rev in ds.revisions:
        recs = rev.get("recommendations") or {}
        if rev["kind"] == "full":  # states the whole advice (a decision tree replaces the persona list)
            state = {pid: PersonaState(list(r["gpus"]), r.get("known", "source"), rev.id) for pid, r in recs.items()}
            for _kp, leaf in tree_leaves(rev.get("decision_tree")):  # a flowchart speaks through its tagged leaves
                for pid in leaf.get("personas") or ():
                    entry = state.setdefault(pid, PersonaState([], "source", rev.id))
                    entry.gpus.extend(g for g in leaf.get("gpus") or () if g not in entry.gpus)
        else:
            state = {pid: PersonaState(list(s.gpus), "derived", s.note_from) for pid, s in state.items()}
            for pid, r in recs.items():
                state[pid] = PersonaState(list(r["gpus"]), r.get("known", "source"), rev.id)
            for change in rev.get("changes") or []:
                pid, gid = change.get("persona"), change.get("gpu")
                if not pid or not gid:
                    continue
                entry = state.setdefault(pid, PersonaState([], "derived", None))
                if change["type"] == "recommendation-added" and gid not in entry.gpus:
                    entry.gpus.append(gid)
                elif change["type"] == "recommendation-removed" and gid in entry.gpus:
                    entry.gpus.remove(gid)
        out[rev.id] = state
    return out


def tree_in_force(ds: Dataset, date: str):
    """The decision tree of the advice in force on ``date``: that of the newest full revision on or
    before it, or of a later update that gives one; None when the advice in force is a persona list."""
    tree = None
    for rev in ds.revisions:
        if rev.id > date:
            break
        if rev["kind"] == "full" or rev.get("decision_tree"):
            tree = rev.get("decision_tree")
    return tree


def advised_cards(ds: Dataset, date: str, state: dict[str, PersonaState]) -> list[str]:
    """Every card the advice in force names, persona lists and flowchart leaves, in their order."""
    out: list[str] = []
    for st in state.values():
        out += [g for g in st.gpus if g not in out]
    for _kp, leaf in tree_leaves(tree_in_force(ds, date)):
        out += [g for g in leaf.get("gpus") or () if g not in out]
    return out


def advice_state(ds: Dataset, date: str) -> dict[str, PersonaState]:
    """persona id -> recommended GPUs in force on revision ``date``."""
    return advice_states(ds)[date]


@dataclass
class PersonaChange:
    persona: str
    added: list[str] = field(default_factory=list)
    removed: list[str] = field(default_factory=list)
    before: list[str] = field(default_factory=list)
    after: list[str] = field(default_factory=list)
    status: str = "changed"  # changed | new | dropped


@dataclass
class ValueChange:
    gpu: str
    before: float | None
    after: float | None


@dataclass
class RevisionDiff:
    a: str
    b: str
    personas: list[PersonaChange] = field(default_factory=list)
    unchanged: list[str] = field(default_factory=list)
    advised_added: list[str] = field(default_factory=list)  # cards the advice names anywhere, flowchart included
    advised_removed: list[str] = field(default_factory=list)
    avoid_added: list[str] = field(default_factory=list)
    avoid_removed: list[str] = field(default_factory=list)
    avoid_classes_added: list[str] = field(default_factory=list)
    avoid_classes_removed: list[str] = field(default_factory=list)
    relative_performance: dict[str, list[ValueChange]] = field(default_factory=dict)  # table -> changes, tables in both
    relative_tables_added: list[str] = field(default_factory=list)
    relative_tables_removed: list[str] = field(default_factory=list)
    prices: list[ValueChange] = field(default_factory=list)
    summary_a: str = ""
    summary_b: str = ""

    @property
    def empty(self) -> bool:
        return not (self.personas or self.advised_added or self.advised_removed
                    or self.avoid_added or self.avoid_removed or self.avoid_classes_added
                    or self.avoid_classes_removed or self.relative_performance or self.prices
                    or self.relative_tables_added or self.relative_tables_removed)

    def to_json(self) -> dict:
        return asdict(self)


def _avoid(rev: Record) -> tuple[list[str], list[str]]:
    return list(rev.get("avoid") or []), list(rev.get("avoid_classes") or [])


def _value_changes(before: dict, after: dict) -> list[ValueChange]:
    out = []
    for gid in sorted(set(before) | set(after)):
        if before.get(gid) != after.get(gid):
            out.append(ValueChange(gid, before.get(gid), after.get(gid)))
    return out


def _rel_tables(rev: Record) -> dict[str, dict]:
    out = {}
    for table in rev.get("relative_performance") or []:
        key = f"{table['workload']} / {table['reference']}"
        out[key] = dict(table["values"])
    return out


def _prices(rev: Record) -> dict[str, float]:
    return {p["gpu"]: p["usd"] for p in rev.get("prices") or []}


def diff_revisions(ds: Dataset, a: str, b: str, states: dict | None = None) -> RevisionDiff:
    """``states`` (revision date -> advice state) may be given to avoid recomputing them."""
    ra, rb = ds.revision(a), ds.revision(b)
    sa = states[a] if states else advice_state(ds, a)
    sb = states[b] if states else advice_state(ds, b)
    order = ds.persona_ids()
    out = RevisionDiff(a, b, summary_a=ra["summary"], summary_b=rb["summary"])
    for pid in sorted(set(sa) | set(sb), key=lambda p: order.index(p) if p in order else len(order)):
        before = sa[pid].gpus if pid in sa else []
        after = sb[pid].gpus if pid in sb else []
        if pid in sa and pid in sb and before == after:
            out.unchanged.append(pid)
            continue
        status = "new" if pid not in sa else "dropped" if pid not in sb else "changed"
        out.personas.append(PersonaChange(pid, [g for g in after if g not in before], [g for g in before if g not in after],
                                          list(before), list(after), status))
    ca, cb = advised_cards(ds, a, sa), advised_cards(ds, b, sb)
    out.advised_added = [g for g in cb if g not in ca]
    out.advised_removed = [g for g in ca if g not in cb]
    (av_a, cl_a), (av_b, cl_b) = _avoid(ra), _avoid(rb)
    out.avoid_added = [g for g in av_b if g not in av_a]
    out.avoid_removed = [g for g in av_a if g not in av_b]
    out.avoid_classes_added = [c for c in cl_b if c not in cl_a]
    out.avoid_classes_removed = [c for c in cl_a if c not in cl_b]
    ta, tb = _rel_tables(ra), _rel_tables(rb)
    out.relative_tables_added = sorted(set(tb) - set(ta))
    out.relative_tables_removed = sorted(set(ta) - set(tb))
    for key in sorted(set(ta) & set(tb)):
        changes = _value_changes(ta[key], tb[key])
        if changes:
            out.relative_performance[key] = changes
    out.prices = _value_changes(_prices(ra), _prices(rb))
    return out


def resolve_date(ds: Dataset, name: str) -> str:
    """'latest', 'previous' or a YYYY-MM-DD date of an existing revision."""
    ids = [r.id for r in ds.revisions]
    if name == "latest":
        return ids[-1]
    if name == "previous" and len(ids) > 1:
        return ids[-2]
    if name in ids:
        return name
    raise KeyError(name)


TODAY = "today"


def _against_picks(out: RevisionDiff, before: dict[str, list], picks, cards_before: list,
                   dropped: bool) -> RevisionDiff:
    """Fill ``out`` with what changed from ``before`` (persona -> cards) to today's ``picks``, per
    reader profile and for the cards named anywhere (``cards_before`` against the picks and their
    alternatives); with ``dropped``, a profile ``before`` has that today does not is reported too."""
    seen = set()
    for p in picks:
        seen.add(p.persona)
        was = before.get(p.persona, [])
        now = [p.row.gpu] if p.row else []
        if p.persona in before and was == now:
            out.unchanged.append(p.persona)
            continue
        status = "new" if p.persona not in before else "changed"
        out.personas.append(PersonaChange(p.persona, [g for g in now if g not in was],
                                          [g for g in was if g not in now], was, now, status))
    if dropped:
        out.personas += [PersonaChange(pid, [], list(was), list(was), [], "dropped")
                         for pid, was in before.items() if pid not in seen]
    cards_now = list(dict.fromkeys(g for p in picks for g in ([p.row.gpu] if p.row else []) + [a.gpu for a in p.alternatives]))
    out.advised_added = [g for g in cards_now if g not in cards_before]
    out.advised_removed = list(dict.fromkeys(g for g in cards_before if g not in cards_now))
    return out


def diff_today(ds: Dataset, a: str, picks, as_of: str, states: dict | None = None) -> RevisionDiff:
    """What changed from the advice in force on revision ``a`` to the site's picks for today, per
    reader profile: the cards the advice named against the card (and build) picked today. Today is
    the site's computation (``picks``: :func:`generator.facts.today.persona_picks`), dated by the
    newest price it rests on, never a revision."""
    sa = states[a] if states else advice_state(ds, a)
    out = RevisionDiff(a, TODAY, summary_a=ds.revision(a)["summary"],
                       summary_b=f"The site's computation from dated prices up to {as_of}; not advice from a revision.")
    return _against_picks(out, {pid: list(st.gpus) for pid, st in sa.items()}, picks,
                          advised_cards(ds, a, sa), dropped=False)


def diff_snapshot_today(ds: Dataset, snapshot, picks, as_of: str) -> RevisionDiff:
    """What changed from a kept snapshot of today's picks (data/snapshots/) to today's picks."""
    kept = snapshot.get("picks") or {}
    out = RevisionDiff(f"snapshot:{snapshot.id}", TODAY,
                       summary_a=f"The site's picks as kept on {snapshot.id}.",
                       summary_b=f"The site's computation from dated prices up to {as_of}; not advice from a revision.")
    cards_before = [g for k in kept.values() for g in [k["gpu"], *(k.get("alternatives") or ())]]
    return _against_picks(out, {pid: [k["gpu"]] for pid, k in kept.items()}, picks, cards_before, dropped=True)
