"""Static SVG charts of the dataset, hand-written: no charting library, no JavaScript.

Each chart function takes the dataset, the language :class:`~generator.publish.render.Context`
(for interface text and number formatting) and its parameters, and returns
:class:`Markup` of one complete ``<figure>``: an inline ``<svg role="img">`` with a
``<title>`` and a ``<desc>``, followed by a ``<details>`` holding the data table that is
the chart's text alternative (one row per plotted point, bar or segment). It returns
``None`` when there is nothing to plot.

Safety and stability:

- every text, from ``data/`` or from the interface strings, goes through
  :func:`generator.publish.text.escape_md`, which writes each HTML, XML or Markdown
  metacharacter as a numeric character reference: valid inside SVG and HTML alike;
- ids inside a chart start with ``wg-chart-<name>`` so several charts share a page;
- output depends only on the input (sorted iteration, coordinates rounded to 1 decimal);
- colours come from CSS classes (``docs/assets/css/whichgpu.css``), text is
  ``fill="currentColor"``, so light and dark schemes both read well;
- the markup has no blank line, so Python-Markdown keeps it as one raw HTML block.
"""
from __future__ import annotations

from markupsafe import Markup

from generator.facts.derive import derive
from generator.facts.diff import advice_states
from generator.publish.charts_story import STORY, story_chart
from generator.publish.svg import (
    SMALL,
    Linear,
    _date,
    _e,
    _f,
    _figure,
    _fit,
    _Frame,
    _iso,
    _legend,
    _linear_ticks,
    _name,
    _place_labels,
    _plain,
    _points,
    _short,
    _svg,
    _swatches,
    _table,
    _text_width,
    _value_axis,
    _year_frac,
    _year_ticks,
)

__all__ = [
    "charts_for", "perf_price_chart", "spec_chart", "value_chart", "spec_value_chart",
    "timeline_chart", "SPEC_METRICS", "TIMELINE_PERSONAS",
]

# metric -> (GPU field, axis title key, heading key)
SPEC_METRICS = {
    "bandwidth": ("memory_bandwidth_gbs", "chart.axis_bandwidth", "chart.spec.heading_bandwidth"),
    "fp32": ("fp32_tflops", "chart.axis_fp32", "chart.spec.heading_fp32"),
    "tensor": ("fp16_tensor_tflops", "chart.axis_tensor", "chart.spec.heading_tensor"),
    "memory": ("memory_gb", "chart.axis_memory", "chart.spec.heading_memory"),
    "price": ("launch_price_usd", "chart.axis_launch_price", "chart.spec.heading_price"),
}
TIMELINE_PERSONAS = ("best-overall", "little-money", "kaggle", "researcher")
SEGMENTS = ("consumer", "workstation", "datacenter", "cloud")
MIN_RANKED = 2  # the measured value ranking uses the newest table with at least this many priced GPUs

# -- 1. performance against price ---------------------------------------------------------

def _priced(ds, rev, values) -> tuple[list[tuple], int]:
    """(gid, value, usd, kind, quoted) for each GPU with a price under the one price rule
    (:func:`generator.facts.derive.revision_price`, as the revision quoted it), and how many had none."""

    prices = derive(ds).revision_prices[rev.id]
    points, skipped = [], 0
    for gid, value in values.items():
        price = prices.get(gid, {}).get("quoted")
        if price is None:
            skipped += 1
        else:
            quoted = price.source != "catalogue"
            points.append((gid, value, price.usd, price.source if quoted else "launch", quoted))
    return points, skipped


def perf_price_chart(ds, c, revision: str, table: int = 0) -> Markup | None:
    """Relative performance (y) against price (x) for one relative-performance table of a revision."""
    rev = ds.revision(revision)
    tab = (rev.get("relative_performance") or [])[table]
    name = f"perf-price-{rev.id}-{table}"
    points, skipped = _priced(ds, rev, tab["values"])
    if len(points) < MIN_RANKED:  # a chart of one point compares nothing
        return None
    points.sort(key=lambda p: (p[2], -p[1], p[0]))
    workload = c.ui_plain(f"workload.{tab['workload']}")
    reference = _name(ds.gpus[tab["reference"]]) if tab["reference"] in ds.gpus else tab["reference"]
    date = c.date(rev.id)
    title = _plain(c, "chart.perf_price.heading", workload=workload, date=date)
    desc = _plain(c, "chart.perf_price.desc", count=c.num(len(points)), date=date, workload=workload,
                  gpu=reference, skipped=c.num(skipped))

    fr = _Frame(420, top=30)
    xs, xticks, xlabels, xlog = _value_axis(c, [p[2] for p in points], fr.x0, fr.x1)
    ys, yticks, ylabels, ylog = _value_axis(c, [p[1] for p in points], fr.y0, fr.y1)
    xtitle = c.ui_plain("chart.axis_price")
    ytitle = _plain(c, "chart.axis_relative", gpu=reference)
    body = fr.x_axis(xs, xticks, xlabels, _plain(c, "chart.log_axis", axis=xtitle) if xlog else xtitle)
    body += fr.y_axis(ys, yticks, ylabels, _plain(c, "chart.log_axis", axis=ytitle) if ylog else ytitle)
    kinds = sorted({p[4] for p in points}, reverse=True)
    body += _legend([(0 if q else 1, c.ui_plain("chart.legend_quoted" if q else "chart.legend_launch")) for q in kinds],
                    fr.x0, 16)
    coords = [(xs(p[2]), ys(p[1])) for p in points]
    body.append('<g class="points">')
    body += _points(c, [(0 if p[4] else 1, x, y, f"{_name(ds.gpus[p[0]])}: {c.num(p[1])}, {c.num(p[2])} USD")
                        for p, (x, y) in zip(points, coords, strict=True)])
    body.append("</g>")
    obstacles = [(x - 5, y - 5, x + 5, y + 5) for x, y in coords]
    placed = _place_labels([(x, y, _name(ds.gpus[p[0]])) for p, (x, y) in zip(points, coords, strict=False)], obstacles,
                           (fr.x0 + 2, fr.y1 - 8, fr.x1 + 18, fr.y0 - 2))
    body.append(f'<g class="labels" fill="currentColor" font-size="{SMALL - 1}">')
    body += [f'<text x="{_f(x)}" y="{_f(y)}" text-anchor="{anchor}">{_e(text)}</text>' for anchor, x, y, text in placed]
    body.append("</g>")

    rows = [[_e(_name(ds.gpus[p[0]])), c.num(p[1]), c.num(p[2]), c.ui(f"price_kind.{p[3]}")] for p in points]
    table_html = _table(c, c.fill("chart.perf_price.heading", workload=workload, date=date),
                        [c.ui("revision.col_gpu"), c.fill("chart.axis_relative", gpu=reference),
                         c.ui("chart.axis_price"), c.ui("revision.col_price_kind")], rows)
    return _figure(c, name, _svg(name, fr.height, title, desc, body), table_html)


# -- 2. specifications over release date --------------------------------------------------

def spec_chart(ds, c, metric: str) -> Markup | None:
    """One specification (y) against release date (x), one point per GPU that has the figure,
    coloured and shaped by market segment; ``metric`` is a key of ``SPEC_METRICS``."""
    field, axis_key, heading_key = SPEC_METRICS[metric]
    color_by, groups = "segment", SEGMENTS
    name = f"spec-{metric}"
    points = sorted(((g["release_date"], gid, g[field]) for gid, g in ds.gpus.items() if g.get(field) is not None),
                    key=lambda p: (p[0], p[1]))
    skipped = len(ds.gpus) - len(points)
    if not points:
        return None
    fr = _Frame(400, top=30)
    first, last = min(p[0] for p in points), max(p[0] for p in points)
    ylo, yhi, yticks = _year_ticks(first, last)
    xs = Linear(ylo, yhi, fr.x0, fr.x1)
    ys, vticks, vlabels, log = _value_axis(c, [p[2] for p in points], fr.y0, fr.y1)
    axis = c.ui_plain(axis_key)
    title = c.ui_plain(heading_key)
    desc = _plain(c, "chart.spec.desc_log" if log else "chart.spec.desc", count=c.num(len(points)), metric=axis,
                  skipped=c.num(skipped))
    body = fr.x_axis(xs, yticks, [str(y) for y in yticks], c.ui_plain("chart.axis_release"))
    body += fr.y_axis(ys, vticks, vlabels, _plain(c, "chart.log_axis", axis=axis) if log else axis)
    # a segment keeps its colour and marker in every chart: its place in SEGMENTS
    order = list(groups) + sorted({ds.gpus[p[1]][color_by] for p in points} - set(groups))
    present = [k for k in order if any(ds.gpus[p[1]][color_by] == k for p in points)]
    body += _legend([(order.index(k), c.ui_plain(f"{color_by}.{k}")) for k in present], fr.x0, 16)
    body.append('<g class="points">')
    body += _points(c, [(order.index(ds.gpus[gid][color_by]), xs(_year_frac(d)), ys(value),
                         f"{_name(ds.gpus[gid])}: {c.num(value)} ({_date(d).isoformat()})") for d, gid, value in points])
    body.append("</g>")
    rows = [[_e(_name(ds.gpus[gid])), _iso(d), c.num(value), c.ui(f"{color_by}.{ds.gpus[gid][color_by]}")]
            for d, gid, value in points]
    table_html = _table(c, c.ui(heading_key),
                        [c.ui("revision.col_gpu"), c.ui("gpus.col_release"), c.ui(axis_key),
                         c.ui("gpus.col_segment")], rows)
    return _figure(c, name, _svg(name, fr.height, title, desc, body), table_html)


# -- 3. value for money -------------------------------------------------------------------

def _bars(c, name, title, desc, axis_title, entries, cls) -> tuple[str, int]:
    """Horizontal bars, longest first: entries are (label, value, value text)."""
    row, top, bottom = 20, 10, 48
    names = [label for label, _, _ in entries]
    left = min(230, max(_text_width(n, SMALL + 1) for n in names) + 16)
    height = top + row * len(entries) + bottom
    fr = _Frame(height, left=int(left), right=64, top=top, bottom=bottom)
    vmax, ticks = _linear_ticks(max(v for _, v, _ in entries))
    xs = Linear(0, vmax, fr.x0, fr.x1)
    body = fr.x_axis(xs, ticks, [c.num(t) for t in ticks], axis_title)
    body.append(f'<g class="bars s{cls}">')
    for i, (_label, value, _text) in enumerate(entries):
        y = top + i * row
        body.append(f'<rect x="{_f(fr.x0)}" y="{_f(y + 3)}" width="{_f(max(xs(value) - fr.x0, 0.5))}" height="14"/>')
    body.append("</g>")
    body.append(f'<g fill="currentColor" font-size="{SMALL + 1}">')
    for i, (label, value, text) in enumerate(entries):
        y = top + i * row + 14
        body.append(f'<text x="{_f(fr.x0 - 6)}" y="{_f(y)}" text-anchor="end">{_e(_fit(label, SMALL + 1, left - 10))}</text>')
        body.append(f'<text x="{_f(xs(value) + 4)}" y="{_f(y)}">{_e(text)}</text>')
    body.append("</g>")
    body.append(f'<line class="axis" x1="{_f(fr.x0)}" y1="{_f(fr.y1)}" x2="{_f(fr.x0)}" y2="{_f(fr.y0)}"/>')
    return _svg(name, height, title, desc, body), height


def latest_with_performance(ds):
    """(revision, table index) of the newest relative-performance table with at least
    ``MIN_RANKED`` priced GPUs (a ranking of one card says nothing)."""
    for rev in reversed(ds.revisions):
        for i, tab in enumerate(rev.get("relative_performance") or []):
            if len(_priced(ds, rev, tab["values"])[0]) >= MIN_RANKED:
                return rev, i
    return None, None


def value_chart(ds, c, revision: str | None = None, table: int | None = None) -> Markup | None:
    """Relative performance per 1000 USD of price for one table (default: the newest usable one)."""
    if revision is None:
        rev, table = latest_with_performance(ds)
        if rev is None:
            return None
    else:
        rev = ds.revision(revision)
        table = table or 0
    tab = rev["relative_performance"][table]
    points, skipped = _priced(ds, rev, tab["values"])
    if not points:
        return None
    ranked = sorted(((value / usd * 1000, gid, value, usd, kind) for gid, value, usd, kind, _ in points),
                    key=lambda p: (-p[0], p[1]))
    workload = c.ui_plain(f"workload.{tab['workload']}")
    date = c.date(rev.id)
    name = f"value-{rev.id}-{table}"
    title = _plain(c, "chart.value.heading", workload=workload, date=date)
    desc = _plain(c, "chart.value.desc", count=c.num(len(ranked)), workload=workload, date=date,
                  skipped=c.num(skipped))
    entries = [(_name(ds.gpus[gid]), score, c.num(score, 2)) for score, gid, *_ in ranked]
    svg, _ = _bars(c, name, title, desc, c.ui_plain("chart.axis_value"), entries, 0)
    rows = [[_e(_name(ds.gpus[gid])), c.num(score, 2), c.num(value), c.num(usd), c.ui(f"price_kind.{kind}")]
            for score, gid, value, usd, kind in ranked]
    reference = _name(ds.gpus[tab["reference"]]) if tab["reference"] in ds.gpus else tab["reference"]
    table_html = _table(c, c.fill("chart.value.heading", workload=workload, date=date),
                        [c.ui("revision.col_gpu"), c.ui("chart.col_value"), c.fill("chart.axis_relative", gpu=reference),
                         c.ui("chart.axis_price"), c.ui("revision.col_price_kind")], rows)
    return _figure(c, name, svg, table_html)


def spec_value_chart(ds, c, top: int = 20) -> Markup | None:
    """Spec-based: dense FP16 tensor TFLOPS per 1000 USD of launch price, the best ``top`` GPUs."""
    both = [(g["fp16_tensor_tflops"] / g["launch_price_usd"] * 1000, gid) for gid, g in ds.gpus.items()
            if g.get("fp16_tensor_tflops") is not None and g.get("launch_price_usd") is not None]
    if not both:
        return None
    ranked = sorted(both, key=lambda p: (-p[0], p[1]))[:top]
    level = outliers([score for score, _ in both])
    flagged = [gid for score, gid in ranked if score > level]
    mark = c.ui_plain("chart.outlier_mark")
    name = "spec-value"
    title = c.ui_plain("chart.spec_value.heading")
    desc = _plain(c, "chart.spec_value.desc", count=c.num(len(ranked)), total=c.num(len(both)))
    entries = [(_name(ds.gpus[gid]) + (f" {mark}" if gid in flagged else ""), score, c.num(score, 1))
               for score, gid in ranked]
    svg, _ = _bars(c, name, title, desc, c.ui_plain("chart.axis_spec_value"), entries, 1)
    rows = [[_e(_name(ds.gpus[gid])), c.num(score, 1), c.num(ds.gpus[gid]["fp16_tensor_tflops"]),
             c.num(ds.gpus[gid]["launch_price_usd"]), _e(mark) if gid in flagged else ""] for score, gid in ranked]
    table_html = _table(c, c.ui("chart.spec_value.heading"),
                        [c.ui("revision.col_gpu"), c.ui("chart.axis_spec_value"), c.ui("gpus.col_tensor"),
                         c.ui("gpus.col_price"), c.ui("chart.col_outlier")], rows)
    names = c.ui_plain("punct.list_sep").join(_name(ds.gpus[gid]) for gid in flagged)
    note = c.fill("chart.outlier_note", mark=mark, gpus=names) if flagged else ""
    return _figure(c, name, svg, table_html, note)


def outliers(values: list[float], factor: float = 2.0) -> float:
    """The level above which a spec-based figure is flagged: ``factor`` times the 90th percentile
    of the chart's values (nearest rank). Spec sheets count peak rates their makers choose (a faster
    accumulate mode, say) and say nothing of software support; a card far above the rest of the
    field is worth a second look before it is read as a bargain."""
    ordered = sorted(values)
    if len(ordered) < 10:
        return float("inf")
    p90 = ordered[min(len(ordered) - 1, max(0, -(-9 * len(ordered) // 10) - 1))]
    return factor * p90


# -- 4. recommendation timeline -----------------------------------------------------------

def _states(ds, c) -> dict:
    """revision date -> persona -> PersonaState: the language context's cached copy when it has one."""
    states = getattr(c, "states", None)
    return states if isinstance(states, dict) else advice_states(ds)


def timeline_segments(ds, personas, states=None) -> dict[str, list[dict]]:
    """persona -> segments {start, end (None: still in force), gpus, known}, consecutive
    revisions with the same GPUs merged; a segment counts as stated by a source when any
    of its revisions states it."""
    states = states if states is not None else advice_states(ds)
    states = [(rev.id, states[rev.id]) for rev in ds.revisions]
    out = {}
    for pid in personas:
        segs: list[dict] = []
        for date, state in states:
            entry = state.get(pid)
            cur = segs[-1] if segs and segs[-1]["end"] is None else None
            if entry is None:
                if cur:
                    cur["end"] = date
                continue
            if cur and cur["gpus"] == tuple(entry.gpus):
                if entry.known == "source":
                    cur["known"] = "source"
                continue
            if cur:
                cur["end"] = date
            segs.append({"start": date, "end": None, "gpus": tuple(entry.gpus), "known": entry.known})
        if segs:
            out[pid] = segs
    return out


def timeline_chart(ds, c, personas=TIMELINE_PERSONAS) -> Markup | None:
    """One row per persona; labelled bars show the GPUs recommended from one revision to the next."""
    known_personas = ds.persona_ids()
    segments = timeline_segments(ds, [p for p in personas if p in known_personas], _states(ds, c))
    if not segments:
        return None
    name = "timeline"
    rows_n = len(segments)
    row, top, bottom, left, right = 46, 30, 44, 20, 20
    height = top + rows_n * row + bottom
    starts = [_date(s["start"]) for segs in segments.values() for s in segs]
    first, last = min(starts), _date(ds.revisions[-1].id)
    ylo, yhi, yticks = _year_ticks(first, last)
    fr = _Frame(height, left=left, right=right, top=top, bottom=bottom)
    xs = Linear(ylo, yhi, fr.x0, fr.x1)
    sep = c.ui_plain("punct.list_sep")
    body = fr.x_axis(xs, yticks, [str(y) for y in yticks], c.ui_plain("chart.axis_year"))
    body.append('<g class="revs">')
    ticks = dict.fromkeys(round(xs(_year_frac(_date(rev.id))), 1) for rev in ds.revisions)  # one per spot
    body += [f'<line x1="{_f(x)}" y1="{_f(fr.y0)}" x2="{_f(x)}" y2="{_f(fr.y0 - 5)}"/>' for x in ticks]
    body.append("</g>")
    body += _swatches([("seg s0", c.ui_plain("chart.legend_source")), ("seg s0 derived", c.ui_plain("chart.legend_derived"))], 16)
    table_rows = []
    for r, (pid, segs) in enumerate(segments.items()):
        y = top + r * row
        pname = c.loc.persona(pid)
        body.append(f'<text class="persona" fill="currentColor" x="{_f(fr.x0)}" y="{_f(y + 14)}">{_e(pname)}</text>')
        spans = [(xs(_year_frac(_date(s["start"]))), xs(_year_frac(_date(s["end"]))) if s["end"] else fr.x1) for s in segs]
        merged = set()
        for run in _narrow_runs(spans):
            merged.update(run)
            body.append(_many_segments(c, [segs[i] for i in run], spans[run[0]][0], spans[run[-1]][1], y))
        for i, s in enumerate(segs):
            x0, x1 = spans[i]
            table_rows.append(_timeline_row(ds, c, pid, s))
            if i in merged:
                continue
            label = sep.join(_name(ds.gpus[g]) for g in s["gpus"]) if s["gpus"] else "—"
            short = sep.join(_short(ds.gpus[g]) for g in s["gpus"]) if s["gpus"] else "—"
            until = c.date(s["end"]) if s["end"] else c.ui_plain("chart.timeline.open")
            tip = f"{label}: {c.date(s['start'])} – {until}"
            cls = f"seg s{i % 2}" + (" derived" if s["known"] != "source" else "") + ("" if s["end"] else " open")
            body.append(f'<g class="{cls}"><title>{_e(tip)}</title>'
                        f'<rect x="{_f(x0)}" y="{_f(y + 20)}" width="{_f(max(x1 - x0, 1))}" height="20" rx="2"/>'
                        f'<text fill="currentColor" font-size="{SMALL}" x="{_f(x0 + 4)}" y="{_f(y + 34)}">'
                        f'{_e(_fit(short, SMALL, x1 - x0 - 8))}</text></g>')
    names = sep.join(c.loc.persona(p) for p in segments)
    title = c.ui_plain("chart.timeline.heading")
    desc = _plain(c, "chart.timeline.desc", count=c.num(rows_n), personas=names)
    table_html = _table(c, c.ui("chart.timeline.heading"),
                        [c.ui("diff.persona"), c.ui("chart.col_from"), c.ui("chart.col_until"),
                         c.ui("revision.col_gpus"), c.ui("chart.col_known")], table_rows)
    return _figure(c, name, _svg(name, height, title, desc, body), table_html)


MIN_SEGMENT_PX = 2.0  # narrower timeline segments side by side are drawn as one band


def _narrow_runs(spans: list[tuple[float, float]]) -> list[list[int]]:
    """Runs of two or more consecutive segments each narrower than ``MIN_SEGMENT_PX``: a history
    that changes every few days would otherwise draw thousands of rectangles on a few pixels."""
    runs, cur = [], []
    for i, (x0, x1) in enumerate(spans):
        if x1 - x0 < MIN_SEGMENT_PX:
            cur.append(i)
            continue
        if len(cur) > 1:
            runs.append(cur)
        cur = []
    if len(cur) > 1:
        runs.append(cur)
    return runs


def _many_segments(c, segs: list[dict], x0: float, x1: float, y: float) -> str:
    """One band for a run of narrow segments: its tip says how many and over which dates; the
    chart's table still lists each (``data-n``: how many)."""
    last = segs[-1]["end"]
    tip = _plain(c, "chart.timeline.many", count=c.num(len(segs)), start=c.date(segs[0]["start"]),
                 end=c.date(last) if last else c.ui_plain("chart.timeline.open"))
    derived = "" if any(s["known"] == "source" for s in segs) else " derived"
    return (f'<g class="seg s0 many{derived}" data-n="{len(segs)}"><title>{_e(tip)}</title>'
            f'<rect x="{_f(x0)}" y="{_f(y + 20)}" width="{_f(max(x1 - x0, 1))}" height="20" rx="2"/></g>')


def _timeline_row(ds, c, pid: str, s: dict) -> list:
    return [c.persona(pid), _iso(s["start"]), _iso(s["end"]) if s["end"] else c.ui("chart.timeline.open"),
            Markup(c.ui("punct.list_sep")).join(_e(_name(ds.gpus[g])) for g in s["gpus"]) if s["gpus"] else "—",
            c.ui("chart.legend_source" if s["known"] == "source" else "chart.legend_derived")]


# -- all of them --------------------------------------------------------------------------

PERF_PRICE_ON_PAGE = 3  # the charts page draws the newest priced tables' charts; each revision page its own


def priced_tables(ds) -> list[tuple[str, int]]:
    """(revision, table) of every relative-performance table with enough priced cards for a
    performance-against-price chart, oldest first."""
    return [(rev.id, i) for rev in ds.revisions for i, tab in enumerate(rev.get("relative_performance") or [])
            if len(_priced(ds, rev, tab["values"])[0]) >= MIN_RANKED]


def charts_for(ds, c) -> dict[str, Markup]:
    """Every chart of the charts page, by name, in page order.

    Names: ``perf-price/<date>/<table>`` for the newest ``PERF_PRICE_ON_PAGE`` relative-performance
    tables with priced GPUs (the older ones are drawn on their revision pages), ``spec/<metric>``,
    ``value/<date>/<table>`` (the newest such table), ``spec-value``, ``timeline`` and
    ``story/<figure>`` (:mod:`generator.publish.charts_story`). Charts with nothing to plot are left out.
    """
    out: dict[str, Markup] = {}
    for rid, i in priced_tables(ds)[-PERF_PRICE_ON_PAGE:]:
        out[f"perf-price/{rid}/{i}"] = perf_price_chart(ds, c, rid, i)
    for metric in SPEC_METRICS:
        fig = spec_chart(ds, c, metric)
        if fig is not None:
            out[f"spec/{metric}"] = fig
    rev, i = latest_with_performance(ds)
    if rev is not None:
        out[f"value/{rev.id}/{i}"] = value_chart(ds, c, rev.id, i)
    fig = spec_value_chart(ds, c)
    if fig is not None:
        out["spec-value"] = fig
    fig = timeline_chart(ds, c)
    if fig is not None:
        out["timeline"] = fig

    for key in STORY:
        fig = story_chart(ds, c, key)
        if fig is not None:
            out[f"story/{key}"] = fig
    return out
