"""The API's result lists: every record as plain values, plus what the advice puts in force.

The JSON API writes them (``generator.publish.api``), and the picker's views read them.
"""
from __future__ import annotations

from generator.data.dataset import Dataset, Localizer
from generator.data.locales import LANGS
from generator.data.plain import plain
from generator.facts.support import support_of, support_result


def gpus_result(ds: Dataset) -> list[dict]:
    """Every GPU as written, with ``support`` (whether today's software runs it, see
    :mod:`generator.facts.support`) and ``cooling`` always present (null when unknown)."""
    out = []
    for gid, gpu in sorted(ds.gpus.items()):
        item = {"id": gid, **plain(gpu.data)}
        item.setdefault("cooling", None)
        item["support"] = support_result(support_of(ds, gpu))
        out.append(item)
    return out


def software_result(ds: Dataset) -> list[dict] | None:
    """The one software record, as a list of one (every API file's result is a list)."""
    return [plain(ds.software.data)] if ds.software else None


def revisions_result(ds: Dataset, states: dict) -> list[dict]:
    """Every revision as written, plus ``advice_in_force``: the recommendations in force on that
    date (``states``: revision date -> persona -> state, see ``Derived.states``), derived from the
    update log for revisions that only record changes."""
    out = []
    for rev in ds.revisions:
        item = plain(rev.data)
        item["advice_in_force"] = {pid: {"gpus": st.gpus, "known": st.known} for pid, st in states[rev.id].items()}
        out.append(item)
    return out


def personas_result(ds: Dataset) -> list[dict]:
    out = []
    locs = {lang: Localizer(ds, lang) for lang in LANGS}
    for pid, persona in ds.personas.data.items():
        item = {"id": pid, **plain(persona)}
        item["names"] = {lang: locs[lang].persona(pid) for lang in LANGS}
        out.append(item)
    return out


def snapshots_result(ds: Dataset) -> list[dict]:
    return [{"date": snap.id, **plain(snap.data)} for snap in ds.snapshots]


def topics_result(ds: Dataset) -> list[dict]:
    return [{"id": t.id, **plain(t.data)} for t in ds.topics]


def models_result(ds: Dataset) -> list[dict]:
    return [{"id": mid, **plain(m.data)} for mid, m in sorted(ds.models.items())]


def _measurement_defaults(res: dict) -> dict:
    """The defaults a result leaves out, written out: a model result's cache precision, every
    result's mode (a training metric trains in full unless it says otherwise)."""
    if res.get("workload") is not None:
        return {"mode": "full"}
    return {"kv_cache": "f16", "mode": "full" if res.get("metric") == "training_tokens_per_s" else "inference"}


def measurements_result(ds: Dataset) -> list[dict]:
    """Every measured result, flattened: the source's fields merged into each of its results."""
    out = []
    for src in ds.measurements:
        # url: where the results are published; null for the site's own, which name their script
        head = {"source": src.id, "title": src["title"], "url": src.get("url"),
                **({"script": src["script"]} if src.get("script") else {}), "publisher": src["publisher"],
                "date": plain(src["date"]), "runtime": src["runtime"], "runtime_version": src["runtime_version"]}
        for i, res in enumerate(src["results"]):
            res = plain(res)
            item = {"id": f"{src.id}-{i + 1}", **head, **_measurement_defaults(res), **res}
            out.append(item)
    return out


def measurement_sources_result(ds: Dataset) -> list[dict]:
    return [{"id": m.id, **plain(m.data)} for m in ds.measurements]


def prices_result(ds: Dataset) -> list[dict]:
    """Every dated price observation, with the GPU it prices and the price per GPU."""
    out = []
    for gid, rec in sorted(ds.prices.items()):
        for o in rec["observations"]:
            item = {"gpu": gid, **plain(o)}
            item["usd_per_gpu"] = round(o["usd"] / (o.get("gpus") or 1), 4)
            out.append(item)
    return out
