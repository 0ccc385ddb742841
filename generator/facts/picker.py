"""What the GPU picker applies, computed once at build time (the browser only ranks).

Two modes. "What revision X advised" reads a *view* of the advice in force on that date; "today"
reads today's cards (:mod:`generator.facts.today`). Both are plain data, shipped in the client data file
as ``picker`` and ``today``; ``docs/assets/js/calc/formulas.mjs`` ranks from them. The
figure and price rules the ranking shares with the build (:func:`feature_value`,
:func:`view_price`) are here.

A view holds, for one revision date:

- ``tables``, ``priorities``, ``avoid``, ``prices``: the newest of each given on or before that
  date since the last full revision (an update restates only what changed);
- ``avoid_vendors``: the vendors the advice in force tells readers not to buy;
- ``advised``: workload -> the cards the advice names, in its own order, each ``recommended`` or
  ``alternative`` and, where the advice says so, ``used``. A decision tree speaks through its leaves
  tagged with ``workloads`` (leaves for organisations carry no tag and are not the picker's) when
  it is newer than the persona list in force;
  a persona list through the advice in force for every persona (the picker does not know which
  persona a reader is, so it shows which ones each card was advised for);
- ``quotes``: gpu id -> basis -> ``[usd, source, date]``: the revision's own quote (the one rule,
  :func:`generator.facts.derive.revision_quote`), else for a used price the dated observation nearest
  the revision's date. A card without a quote is priced at its launch price by the ranking.
"""
from __future__ import annotations

import datetime as _dt

from generator.data.dataset import tree_leaves
from generator.data.schema import PICKER_WORKLOADS
from generator.facts.prices import revision_quote


def _iso(x) -> str:
    return x[:10] if isinstance(x, str) else (x.isoformat()[:10] if hasattr(x, "isoformat") else "")


def _pos(x):
    return x if isinstance(x, (int, float)) and not isinstance(x, bool) and x > 0 else None


def feature_value(gpu: dict, feature: str):
    """A card's figure for a feature of the advice (formulas.mjs ``featureValue``): 16-bit matrix
    TFLOPS, else FP32 on cards without tensor units; FP32; bandwidth; memory."""
    if feature in ("tensor-cores", "fp16-capability"):
        v = _pos(gpu.get("fp16_tensor_tflops"))
        return v if v is not None else _pos(gpu.get("fp32_tflops"))
    return {"flops": lambda: _pos(gpu.get("fp32_tflops")),
            "memory-bandwidth": lambda: _pos(gpu.get("memory_bandwidth_gbs")),
            "memory-size": lambda: _pos(gpu.get("memory_gb"))}.get(feature, lambda: None)()


def view_price(gpu: dict, view: dict, basis: str):
    """The price a view gives a card (formulas.mjs ``viewPrice``): its quote for the basis ("used"
    falls back to "new"), else the card's launch price."""
    q = ((view or {}).get("quotes") or {}).get(gpu.get("id")) or {}
    chosen = (q.get("used") if basis == "used" else None) or q.get("new")
    if chosen:
        return {"usd": chosen[0], "source": chosen[1], "date": chosen[2]}
    launch = _pos(gpu.get("launch_price_usd"))
    return {"usd": launch, "source": "catalogue", "date": None} if launch is not None else None


IN_FORCE = ("relative_performance", "priorities", "avoid", "vendors", "prices", "decision_tree", "recommendations")


def in_force(revisions: list[dict]) -> dict[str, dict[str, tuple[str, object]]]:
    """revision date -> field -> (date of the revision that gave it, value): the newest value on or
    before each date since the last full revision. A revision without a ``kind`` counts as full."""
    out: dict[str, dict[str, tuple[str, object]]] = {}
    current: dict[str, tuple[str, object]] = {}
    for rev in revisions:
        date = _iso(rev.get("date"))
        if rev.get("kind", "full") == "full":
            current = {}
        for field in IN_FORCE:
            if rev.get(field):
                current[field] = (date, rev[field])
        out[date] = dict(current)
    return out


def tree_advice(tree: dict) -> dict[str, list[dict]]:
    """workload -> the cards of the leaves tagged for it, in the tree's order (yes before no): the
    first leaf that names cards is the recommendation, the later ones its alternatives (the tree
    asks "can you afford X?" and falls back when the answer is no)."""
    out: dict[str, list[dict]] = {w: [] for w in PICKER_WORKLOADS}

    for _, node in tree_leaves(tree):
        for w in node.get("workloads") or ():
            if w not in out:
                continue
            seen = {a["gpu"] for a in out[w]}
            role = "alternative" if out[w] else "recommended"
            for gid in node.get("gpus") or ():
                if gid not in seen:
                    out[w].append({"gpu": gid, "role": role, "used": bool(node.get("used")), "personas": []})
    return out


def persona_advice(states: dict[str, list[str]], recommendations: dict) -> list[dict]:
    """The cards the advice in force names for any persona: recommended where a persona's own list
    has them, alternative where only its fallbacks do; with the personas, in first-mention order."""
    items: dict[str, dict] = {}
    for pid, gpus in states.items():
        for gid in gpus:
            item = items.setdefault(gid, {"gpu": gid, "role": "recommended", "used": False, "personas": []})
            item["role"] = "recommended"
            if pid not in item["personas"]:
                item["personas"].append(pid)
        for gid in ((recommendations or {}).get(pid) or {}).get("alternatives") or ():
            item = items.setdefault(gid, {"gpu": gid, "role": "alternative", "used": False, "personas": []})
            if pid not in item["personas"]:
                item["personas"].append(pid)
    return list(items.values())


def nearest_observation(history: list[list], kind: str, date: str):
    """The observation of a kind nearest a date ([date, kind, usd] items); ties go to the earlier."""
    target = _dt.date.fromisoformat(date)
    best = None
    for when, k, usd in history or ():
        if k != kind:
            continue
        gap = abs((_dt.date.fromisoformat(when) - target).days)
        if best is None or (gap, when) < (best[0], best[1]):
            best = (gap, when, usd)
    return None if best is None else [best[2], "observed", best[1]]


def _quotes(gpus: list[dict], prices: list, priced_on: str | None, history: dict, date: str) -> dict:
    """gpu id -> basis -> [usd, source, date] for the cards released by ``date``: the revision's
    own quotes (the one rule), and for a used price it lacks, the nearest dated observation."""

    quotes = {}
    for g in gpus:
        if _iso(g.get("release_date")) > date:
            continue
        entry = {}
        new = revision_quote(prices, g["id"], "new")
        if new:
            entry["new"] = [new["usd"], new["kind"], priced_on]
        used = revision_quote(prices, g["id"], "used")
        if used and used["kind"] == "used":
            entry["used"] = [used["usd"], "used", priced_on]
        elif seen := nearest_observation(history.get(g["id"]), "used", date):
            entry["used"] = seen
        if entry:
            quotes[g["id"]] = entry
    return quotes


def _advice(rev: dict, f: dict, quotes: dict) -> tuple[dict[str, list[dict]], str | None]:
    """workload -> advised cards, and where they come from ("tree", "personas" or None)."""
    tree_from, tree = f.get("decision_tree", (None, None))
    recs_from, recs = f.get("recommendations", (None, None))
    if tree is not None and (recs_from is None or tree_from > recs_from):
        return tree_advice(tree), "tree"
    if recs is None and not rev.get("advice_in_force"):
        return {w: [] for w in PICKER_WORKLOADS}, None
    if "advice_in_force" in rev:
        states = {pid: st["gpus"] for pid, st in rev["advice_in_force"].items()}
    else:
        states = {pid: r.get("gpus") or [] for pid, r in (recs or {}).items()}
    items = persona_advice(states, recs)
    for item in items:
        # a card the revision prices only second-hand is advised used ("buy second-hand")
        q = quotes.get(item["gpu"]) or {}
        item["used"] = "new" not in q and (q.get("used") or [None, None])[1] == "used"
    return {w: items for w in PICKER_WORKLOADS}, "personas"


def picker_views(data: dict) -> dict[str, dict]:
    """revision date -> view. ``data``: the client data's ``gpus`` and ``revisions`` (each with
    ``advice_in_force`` where the dataset derived it) and ``price_history`` (gpu id -> [date, kind,
    usd] items)."""
    gpus = [g for g in data.get("gpus") or () if isinstance(g, dict) and g.get("id")]
    history = data.get("price_history") or {}
    revisions = data.get("revisions") or []
    force = in_force(revisions)
    views = {}
    for rev in revisions:
        date = _iso(rev.get("date"))
        f = force[date]
        priced_on, prices = f.get("prices", (None, []))
        quotes = _quotes(gpus, prices, priced_on, history, date)
        advised, source = _advice(rev, f, quotes)
        recs = f.get("recommendations", (None, None))[1]
        vendors = f.get("vendors", (None, {}))[1] or {}
        best = ((rev.get("advice_in_force") or {}).get("best-overall") or {}).get("gpus") \
            or ((recs or {}).get("best-overall") or {}).get("gpus") or []
        views[date] = {
            "tables": f.get("relative_performance", (None, []))[1],
            "priorities": f.get("priorities", (None, []))[1],
            "avoid": list(f.get("avoid", (None, []))[1]),
            "avoid_vendors": sorted(v for v, e in vendors.items() if (e or {}).get("verdict") == "not-recommended"),
            "best": best[0] if best else None,
            "advised_from": source,
            "advised": advised,
            "quotes": quotes,
        }
    return views
