"""The registry of page kinds: which pages the site has, from which template, and where the
sidebar links them. ``render.render_language`` builds every kind in order and ``render.nav`` reads
the sidebar entries from here, so a new page kind is one entry (see CONTRIBUTING.md, "Where things
live").

A kind is either one page (``path`` is a file path) or one page per item (``items`` yields
``(path, template variables)``; the variables may be a function that returns them, called only
for a page that is rendered: the preview renders one page of thousands; ``find`` gives one of
them by its path, without listing the others). ``when`` leaves a kind
out for a dataset that lacks its records (the small fixtures have no prices or models).
Stand-alone pages under ``templates/pages/site/`` need no entry: each ``<path>.md.j2`` there
becomes ``<path>.md``; they appear in the sidebar when ``NAV`` names them and their template
exists.
"""
from __future__ import annotations

import bisect
import functools
from collections.abc import Callable, Iterable
from dataclasses import dataclass

LIST_ROWS = 50  # the catalogue's blocking time at 1x: 1,049 ms with all 116 rows, 574 ms with 50

def _always(ds) -> bool:
    return True


@dataclass(frozen=True)
class PageKind:
    name: str
    template: str
    path: str | None = None  # one page: its path below the language root
    items: Callable | None = None  # many pages: (ds, ctx) -> iterable of (path, template variables)
    find: Callable | None = None  # of many pages: (ds, ctx, path) -> that page's (path, variables), or ()
    context: Callable | None = None  # one page: (ds, ctx) -> its template variables
    when: Callable = _always  # (ds) -> bool

    def pages(self, ds, ctx, only: Iterable[str] | None = None) -> Iterable[tuple[str, dict]]:
        """The kind's pages; with ``only``, at least those of them at these paths (a kind that can
        find one page by its path gives just those, without going through the others)."""
        if not self.when(ds):
            return ()
        if self.items is not None:
            if only is not None and self.find is not None:
                return [page for path in only for page in self.find(ds, ctx, path)]
            return self.items(ds, ctx)
        return ((self.path, self.context(ds, ctx) if self.context else {}),)


def _stem(path: str, folder: str) -> str | None:
    """``rtx-4090`` of ``gpus/rtx-4090.md`` in the folder ``gpus/``; None for another path."""
    if path.startswith(folder) and path.endswith(".md") and "/" not in path[len(folder):]:
        return path[len(folder): -len(".md")]
    return None


def _gpus(ds, ctx):
    return ((f"gpus/{gid}.md", {"gid": gid, "gpu": gpu}) for gid, gpu in sorted(ds.gpus.items()))


def _gpu_at(ds, ctx, path):
    gid = _stem(path, "gpus/")
    gpu = ds.gpus.get(gid) if gid is not None else None
    return () if gpu is None else ((path, {"gid": gid, "gpu": gpu}),)


def _revisions(ds, ctx):
    for i, rev in enumerate(ds.revisions):
        yield (f"revisions/{rev.id}.md", _revision_vars(ds, i))


def _revision_vars(ds, i: int) -> dict:
    revs = ds.revisions
    return {"rev": revs[i], "prev": revs[i - 1] if i > 0 else None, "next": revs[i + 1] if i + 1 < len(revs) else None,
            "latest": ds.latest, "is_latest_page": False, "up": "../"}


def _revision_index(ds, date: str | None) -> int | None:
    """Where the revision of ``date`` stands in the list (oldest first, by date), found by halving."""
    revs = ds.revisions
    i = bisect.bisect_left(revs, date, key=lambda r: r.id) if date is not None else len(revs)
    return i if i < len(revs) and revs[i].id == date else None


def _revision_at(ds, ctx, path):
    i = _revision_index(ds, _stem(path, "revisions/"))
    return () if i is None else ((path, _revision_vars(ds, i)),)


def _latest(ds, ctx):
    revs = ds.revisions
    return {"rev": revs[-1], "prev": revs[-2] if len(revs) > 1 else None, "next": None,
            "latest": revs[-1], "is_latest_page": True, "up": "../"}


def _diffs(ds, ctx):
    for prev, rev in zip(ds.revisions, ds.revisions[1:], strict=False):
        # the diff is worked out only for a page that is rendered
        yield (f"diffs/{prev.id}_{rev.id}.md", functools.partial(_diff_vars, ctx, prev.id, rev.id))


def _diff_at(ds, ctx, path):
    a, _, b = (_stem(path, "diffs/") or "").partition("_")
    i = _revision_index(ds, b or None)
    if i is None or i == 0 or ds.revisions[i - 1].id != a:
        return ()
    return ((path, functools.partial(_diff_vars, ctx, a, b)),)


def _diff_vars(ctx, a: str, b: str) -> dict:
    return {"a": a, "b": b, "d": ctx.facts.diff(a, b)}


def _topics(ds, ctx):
    return ((f"topics/{t.id}.md", {"topic": t}) for t in ds.topics)


def _models(ds, ctx):
    return ((f"models/{mid}.md", {"mid": mid, "model": m}) for mid, m in sorted(ds.models.items()))


def _model_at(ds, ctx, path):
    mid = _stem(path, "models/")
    model = ds.models.get(mid) if mid is not None else None
    return () if model is None else ((path, {"mid": mid, "model": model}),)


def _catalogue(ds, ctx):
    """The catalogue's rows: when there are too many for one page, the page carries the newest
    cards and the rest load on first use. Rows are in the table's default order (by name, as the
    browser's sort compares them: trimmed, lower case), so the page needs no sort on load."""

    newest = {gid for gid, _ in sorted(ds.gpus.items(), key=lambda kv: (kv[1]["release_date"], kv[0]),
                                       reverse=True)[:LIST_ROWS]}
    ordered = sorted(ds.gpus.items(), key=lambda kv: (str(kv[1]["name"]).strip().lower(), kv[0]))
    return {"rows": ctx.rows("gpu-table", [kv for kv in ordered if kv[0] in newest],
                             [kv for kv in ordered if kv[0] not in newest])}


def _has_topics(ds) -> bool:
    return bool(ds.topics)


def _has_prices(ds) -> bool:
    return bool(ds.prices)


def _has_models(ds) -> bool:
    return bool(ds.models)


PAGE_KINDS: tuple[PageKind, ...] = (
    PageKind("home", "home.md.j2", "index.md"),
    PageKind("catalogue", "gpus.md.j2", "gpus/index.md", context=_catalogue),
    PageKind("api", "api.md.j2", "api/index.md"),
    PageKind("revision", "revision.md.j2", items=_revisions, find=_revision_at),
    PageKind("latest", "revision.md.j2", "latest/index.md", context=_latest),
    PageKind("revisions", "revisions.md.j2", "revisions/index.md"),
    PageKind("gpu", "gpu.md.j2", items=_gpus, find=_gpu_at),
    PageKind("diff", "diff.md.j2", items=_diffs, find=_diff_at),
    PageKind("topic", "topic.md.j2", items=_topics, when=_has_topics),
    PageKind("topics", "topics.md.j2", "topics/index.md", when=_has_topics),
    PageKind("today", "today.md.j2", "today/index.md", when=_has_prices),
    PageKind("model", "model.md.j2", items=_models, find=_model_at, when=_has_models),
    PageKind("models", "models.md.j2", "models/index.md", when=_has_models),
    PageKind("accuracy", "accuracy.md.j2", "accuracy/index.md", when=_has_models),
)


@dataclass(frozen=True)
class NavEntry:
    """One sidebar entry: its interface-text key and page, shown when the page exists.
    ``group`` entries are filled by ``render.nav`` (the newest revisions, the calculators)."""

    key: str
    path: str
    group: str | None = None


# The sidebar, in order. A path under templates/pages/site/ is linked only when its template
# exists; a path of a page kind only when that kind has pages for the dataset.
NAV: tuple[NavEntry, ...] = (
    NavEntry("nav.home", "index.md"),
    NavEntry("nav.latest", "latest/index.md"),
    NavEntry("nav.today", "today/index.md"),
    NavEntry("nav.revisions", "revisions/index.md", group="revisions"),
    NavEntry("nav.history", "history/index.md"),
    NavEntry("nav.diffs", "diffs/index.md"),
    NavEntry("nav.gpus", "gpus/index.md"),
    NavEntry("nav.models", "models/index.md"),
    NavEntry("nav.accuracy", "accuracy/index.md"),
    NavEntry("nav.compare", "compare/index.md"),
    NavEntry("nav.charts", "charts/index.md"),
    NavEntry("nav.calculators", "calculators/index.md", group="calculators"),
    NavEntry("nav.topics", "topics/index.md"),
    NavEntry("nav.api", "api/index.md"),
    NavEntry("nav.contributing", "contributing/index.md"),
)


def single_paths(ds) -> set[str]:
    """The one-page kinds that exist for this dataset, by path."""
    return {k.path for k in PAGE_KINDS if k.path is not None and k.when(ds)}
