"""The story charts: how much a dollar bought, by the advice of each revision and today.

One point per revision: the best card among those it advised, at a price known then (see
:attr:`generator.facts.derive.Derived.story`), joined by a step line; the label names the card where it
changes. A history longer than the width shows apart is drawn one point per stretch of the axis
(:data:`GAP`), and labels that would cover one another are left out; the table lists every
revision. Today's point is drawn apart (its own marker, after a dashed rule) because it is the
site's computation from dated prices and the estimation model, not the advice of any revision.
"""
from __future__ import annotations

from markupsafe import Markup

from generator.facts.derive import derive
from generator.publish.svg import (
    SMALL,
    Linear,
    _date,
    _e,
    _f,
    _figure,
    _Frame,
    _iso,
    _legend,
    _marker,
    _name,
    _place_labels,
    _plain,
    _points,
    _svg,
    _table,
    _value_axis,
    _year_frac,
    _year_ticks,
)

# figure -> (axis key, heading key, description key)
STORY = {
    "throughput": ("chart.axis_story_throughput", "chart.story.heading_throughput", "chart.story.desc_throughput"),
    "memory": ("chart.axis_story_memory", "chart.story.heading_memory", "chart.story.desc_memory"),
}


def _steps(coords: list[tuple[float, float]]) -> list[str]:
    """The vertices of a step line through ``coords`` (x ascending): across, then up or down to
    each point. Points on one pixel column draw one vertical stroke from the lowest to the
    highest value there, so the line's size grows with the columns it crosses, not the points."""
    columns: list[list] = []  # [x of the first point, ys in order]
    for x, y in coords:
        if columns and round(x) == round(columns[-1][0]):
            columns[-1][1].append(y)
        else:
            columns.append([x, [y]])
    out: list[str] = []
    prev = None
    for x, ys in columns:
        enter, leave = (prev if prev is not None else ys[0]), ys[-1]
        lo, hi = min(enter, *ys), max(enter, *ys)
        # enter at the previous height, cover the column's range, leave at its last value
        for y in (enter, lo, hi, leave) if leave >= enter else (enter, hi, lo, leave):
            vertex = f"{_f(x)},{_f(y)}"
            if not out or out[-1] != vertex:
                out.append(vertex)
        prev = ys[-1]
    return out


# Once the revisions outnumber what the width can show apart, one point per this many units: the
# last revision of each stretch, its tip counting the others (the data table lists every one)
GAP = 9


def _drawn(coords: list[tuple[float, float]], x0: float, x1: float) -> list[list[int]]:
    """The revisions drawn as points, as groups of indices into ``coords``: one group per revision
    while they fit the width at GAP apart, else one per GAP-wide stretch of the axis (its last
    revision drawn). The size of the chart then follows its width, not the history's length."""
    if len(coords) <= (x1 - x0) / GAP:
        return [[i] for i in range(len(coords))]
    groups: dict[int, list[int]] = {}  # stretch -> indices (coords run left to right)
    for i, (x, _y) in enumerate(coords):
        groups.setdefault(int((x - x0) // GAP), []).append(i)
    return list(groups.values())


def story_chart(ds, c, key: str) -> Markup | None:
    """The best value among each revision's advised cards over time, then today's, for one figure."""

    points = derive(ds).story.get(key) or []
    past = [p for p in points if not p["today"]]
    today = [p for p in points if p["today"]]
    if len(past) < 2:
        return None
    axis_key, heading_key, desc_key = STORY[key]
    name = f"story-{key}"
    fr = _Frame(400, top=30)
    first, last = _date(points[0]["date"]), _date(points[-1]["date"])
    ylo, yhi, yticks = _year_ticks(first, last)
    xs = Linear(ylo, yhi, fr.x0, fr.x1)
    ys, vticks, vlabels, log = _value_axis(c, [p["value"] for p in points], fr.y0, fr.y1)
    axis = c.ui_plain(axis_key)
    title = c.ui_plain(heading_key)
    desc = _plain(c, desc_key, count=c.num(len(past)), first=c.date(past[0]["date"]), last=c.date(past[-1]["date"]),
                  today=c.date(today[0]["date"]) if today else "—")
    body = fr.x_axis(xs, yticks, [str(y) for y in yticks], c.ui_plain("chart.axis_advice_date"))
    body += fr.y_axis(ys, vticks, vlabels, _plain(c, "chart.log_axis", axis=axis) if log else axis)
    legend = [(0, c.ui_plain("chart.legend_story_advice"))] + ([(2, c.ui_plain("chart.legend_story_today"))] if today else [])
    body += _legend(legend, fr.x0, 16)
    coords = [(xs(_year_frac(_date(p["date"]))), ys(p["value"])) for p in past]
    body.append('<polyline class="story-line" fill="none" stroke="currentColor" stroke-opacity=".45" '
                f'points="{" ".join(_steps(coords))}"/>')
    body.append('<g class="points">')
    labels = []
    tips = []
    groups = _drawn(coords, fr.x0, fr.x1)
    for n, group in enumerate(groups):
        p, (x, y) = past[group[-1]], coords[group[-1]]
        gpu = _name(ds.gpus[p["gpu"]])
        tip = f"{c.date(p['date'])}: {gpu}, {c.num(p['value'], 1)} ({c.num(p['usd'])} USD)"
        if len(group) > 1:
            tip += " " + _plain(c, "chart.story.stretch", count=c.num(len(group) - 1),
                                first=c.date(past[group[0]]["date"]))
        tips.append((0, x, y, tip))
        if n == 0 or p["gpu"] != past[groups[n - 1][-1]]["gpu"]:
            labels.append((x, y, gpu))
    body += _points(c, tips)
    body.append("</g>")
    for p in today:
        x, y = xs(_year_frac(_date(p["date"]))), ys(p["value"])
        gpu = _name(ds.gpus[p["gpu"]])
        rule = (coords[-1][0] + x) / 2
        body.append(f'<line class="story-today" x1="{_f(rule)}" y1="{_f(fr.y1)}" x2="{_f(rule)}" y2="{_f(fr.y0)}" '
                    f'stroke="currentColor" stroke-opacity=".45" stroke-dasharray="4 4"/>')
        tip = f"{c.date(p['date'])}: {gpu}, {c.num(p['value'], 1)} ({c.num(p['usd'])} USD)"
        body.append(f'<g class="pt s2"><title>{_e(tip)}</title>{_marker(2, x, y, 5.5)}</g>')
        labels.append((x, y, gpu))
    obstacles = [(x - 5, y - 5, x + 5, y + 5) for x, y in dict.fromkeys((round(x), round(y)) for x, y in coords)]
    # where points were thinned, a label that would cover another is left out (the tips and the
    # table still name every card); else every change of card is named
    placed = _place_labels(labels, obstacles, (fr.x0 + 2, fr.y1 - 8, fr.x1 + 18, fr.y0 - 2),
                           crowded=len(groups) < len(past))
    body.append(f'<g class="labels" fill="currentColor" font-size="{SMALL - 1}">')
    body += [f'<text x="{_f(x)}" y="{_f(y)}" text-anchor="{anchor}">{_e(text)}</text>' for anchor, x, y, text in placed]
    body.append("</g>")
    rows = []
    for p in points:
        kind = "launch" if p["source"] == "catalogue" else p["source"]
        basis = c.ui("chart.story.basis_today") if p["today"] else c.ui("chart.story.basis_advice")
        rows.append([_iso(p["date"]), _e(_name(ds.gpus[p["gpu"]])), c.num(p["value"], 1), c.num(p["usd"]),
                     c.ui(f"price_kind.{kind}"), basis])
    table_html = _table(c, c.ui(heading_key),
                        [c.ui("chart.col_date"), c.ui("revision.col_gpu"), c.ui(axis_key), c.ui("chart.axis_price"),
                         c.ui("revision.col_price_kind"), c.ui("chart.col_known")], rows)
    return _figure(c, name, _svg(name, fr.height, title, desc, body), table_html)
