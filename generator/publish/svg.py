"""A small SVG toolkit for the site's charts: text measuring and fitting, linear and log
scales with round ticks, markers, the plot frame with its axes, legends, label placement, and
the ``<figure>`` that pairs a chart with its data table. Chart definitions live in
:mod:`generator.publish.charts` and :mod:`generator.publish.charts_accuracy`; every text goes through
:func:`_e` (HTML escaping: every chart reaches the page as one raw HTML block that Markdown leaves alone).
"""
from __future__ import annotations

import datetime as _dt
import math
import re
import unicodedata

from markupsafe import Markup

from generator.publish.text import clean, escape_html

LOG_RATIO = 20  # a value axis goes logarithmic when its largest value is this many times its smallest

W = 720  # width of every chart, in SVG user units
FONT = 12
SMALL = 10


# -- text ---------------------------------------------------------------------------------

def _e(text) -> Markup:
    """Text inside a chart. A chart and its data table reach the page as one raw HTML block
    (:func:`_figure` keeps it free of blank lines), which Markdown leaves alone: HTML escaping is
    the context's, and Markdown's characters stay as they are (a decimal point is one byte)."""
    return escape_html(text)


def _text_width(text: str, size: float) -> float:
    """A rough width estimate for layout (wide CJK glyphs count double)."""
    width = 0.0
    for ch in text:
        if unicodedata.east_asian_width(ch) in ("W", "F"):
            width += 1.0
        elif ch.isupper() or ch.isdigit():
            width += 0.64
        elif ch in " .,:;il|!'":
            width += 0.3
        else:
            width += 0.55
    return width * size


def _fit(text: str, size: float, room: float) -> str:
    """``text``, cut with an ellipsis to fit ``room`` units (plain text: escape afterwards)."""
    text = " ".join(clean(text).split())
    if _text_width(text, size) <= room:
        return text
    while text and _text_width(text + "…", size) > room:
        text = text[:-1]
    return (text.rstrip() + "…") if text else ""


def _f(value: float) -> str:
    """A coordinate: one decimal, never ``-0.0``."""
    return f"{round(value, 1) + 0.0:.1f}"


def _plain(c, key: str, **parts) -> str:
    return c.fill_plain(key, **{k: str(v) for k, v in parts.items()}) if parts else c.ui_plain(key)


# -- scales -------------------------------------------------------------------------------

def _digits(step: float) -> int:
    for d in range(0, 6):
        if abs(round(step, d) - step) < 1e-9 * max(1.0, abs(step)):
            return d
    return 6


def _tick_value(v: float, digits: int):
    v = round(v, digits)
    return int(v) if digits == 0 or float(v).is_integer() else v


class Linear:
    def __init__(self, lo, hi, a, b):
        self.lo, self.hi, self.a, self.b = lo, hi, a, b

    def __call__(self, v):
        return self.a + (v - self.lo) / (self.hi - self.lo) * (self.b - self.a)


class Log(Linear):
    def __call__(self, v):
        lo, hi = math.log10(self.lo), math.log10(self.hi)
        return self.a + (math.log10(v) - lo) / (hi - lo) * (self.b - self.a)


def _linear_ticks(vmax: float, n: int = 5) -> tuple[float, list]:
    """0 .. a round maximum, with about ``n`` round steps."""
    vmax = vmax if vmax > 0 else 1.0
    raw = vmax / n
    mag = 10 ** math.floor(math.log10(raw))
    step = next(m * mag for m in (1, 2, 2.5, 5, 10) if raw <= m * mag * (1 + 1e-9))
    count = math.ceil(vmax / step - 1e-9)
    digits = _digits(step)
    ticks = [_tick_value(i * step, digits) for i in range(count + 1)]
    return ticks[-1], ticks


def _log_ticks(vmin: float, vmax: float) -> tuple[float, float, list]:
    """A 1-2-5 range around [vmin, vmax] and its ticks (decades only when the range is wide)."""
    def steps(lo_exp, hi_exp):
        return [m * 10.0 ** k for k in range(lo_exp, hi_exp + 1) for m in (1, 2, 5)]

    cands = steps(math.floor(math.log10(vmin)) - 1, math.ceil(math.log10(vmax)) + 1)
    lo = max(v for v in cands if v <= vmin * (1 + 1e-9))
    hi = min(v for v in cands if v >= vmax * (1 - 1e-9))
    if hi <= lo:
        hi = next(v for v in cands if v > lo)
    inside = [v for v in cands if lo * (1 - 1e-9) <= v <= hi * (1 + 1e-9)]
    if math.log10(hi / lo) > 2.5:
        inside = [v for v in inside if abs(math.log10(v) - round(math.log10(v))) < 1e-9 or v in (lo, hi)]
    ticks = [_tick_value(v, max(0, -math.floor(math.log10(v)))) for v in inside]
    return lo, hi, ticks


def _year_frac(d: _dt.date) -> float:
    start = _dt.date(d.year, 1, 1).toordinal()
    length = _dt.date(d.year + 1, 1, 1).toordinal() - start
    return d.year + (d.toordinal() - start) / length


def _date(value) -> _dt.date:
    return value if isinstance(value, _dt.date) else _dt.date.fromisoformat(str(value))


def _year_ticks(first: _dt.date, last: _dt.date) -> tuple[int, int, list[int]]:
    lo, hi = first.year, last.year + 1
    span = hi - lo
    step = 1 if span <= 10 else 2 if span <= 20 else 5
    lo -= lo % step
    if (hi - lo) % step:
        hi += step - (hi - lo) % step
    return lo, hi, list(range(lo, hi + 1, step))


# -- drawing ------------------------------------------------------------------------------

def _points(c, items) -> list[str]:
    """Scatter points ``(series, x, y, tip[, r])``, each a ``<g class="pt sK">`` with its tip.

    Items of one series that land on the same spot (to the pixel) are drawn once: the tip names
    the first and counts the rest (``data-n``: how many). What a reader sees is the same; the
    chart's size grows with the spots it fills, not with the data (its table lists every item)."""
    spots: dict[tuple, list] = {}
    for item in items:
        k, x, y = item[0], item[1], item[2]
        spots.setdefault((k, round(x), round(y)), []).append(item)
    out = []
    for group in spots.values():
        k, x, y = group[0][0], group[0][1], group[0][2]
        r = group[0][4] if len(group[0]) > 4 else 4.5
        tip, count = str(group[0][3]), ""
        if len(group) > 1:
            tip += " " + _plain(c, "chart.same_spot", count=c.num(len(group) - 1))
            count = f' data-n="{len(group)}"'
        out.append(f'<g class="pt s{k}"{count}><title>{_e(tip)}</title>{_marker(k, x, y, r)}</g>')
    return out


def _marker(shape: int, x: float, y: float, r: float = 4.5) -> str:
    shape %= 5
    if shape == 0:
        return f'<circle cx="{_f(x)}" cy="{_f(y)}" r="{_f(r)}"/>'
    if shape == 1:
        s = r * 0.9
        return f'<rect x="{_f(x - s)}" y="{_f(y - s)}" width="{_f(2 * s)}" height="{_f(2 * s)}"/>'
    if shape == 2:
        pts = [(x, y - r * 1.2), (x + r * 1.1, y + r * 0.8), (x - r * 1.1, y + r * 0.8)]
    elif shape == 3:
        q = r * 1.3
        pts = [(x, y - q), (x + q, y), (x, y + q), (x - q, y)]
    else:
        q = r * 1.1
        pts = [(x - q, y - q), (x + q, y - q), (x - q, y + q), (x + q, y + q)]
        return (f'<path d="M{_f(pts[0][0])},{_f(pts[0][1])}L{_f(pts[3][0])},{_f(pts[3][1])}'
                f'M{_f(pts[1][0])},{_f(pts[1][1])}L{_f(pts[2][0])},{_f(pts[2][1])}" class="x"/>')
    d = "M" + "L".join(f"{_f(px)},{_f(py)}" for px, py in pts) + "Z"
    return f'<path d="{d}"/>'


class _Frame:
    """The plot area of an x/y chart and its axes."""

    def __init__(self, height: int, left: int = 68, right: int = 20, top: int = 12, bottom: int = 48):
        self.height = height
        self.x0, self.x1 = left, W - right
        self.y0, self.y1 = height - bottom, top  # y0 is the bottom of the plot area

    def x_axis(self, scale, ticks, labels, title) -> list[str]:
        out = ['<g class="grid">']
        out += [f'<line x1="{_f(scale(t))}" y1="{_f(self.y1)}" x2="{_f(scale(t))}" y2="{_f(self.y0)}"/>' for t in ticks]
        out.append("</g>")
        out.append(f'<line class="axis" x1="{_f(self.x0)}" y1="{_f(self.y0)}" x2="{_f(self.x1)}" y2="{_f(self.y0)}"/>')
        out.append('<g class="ticks" fill="currentColor" text-anchor="middle">')
        out += [f'<text x="{_f(scale(t))}" y="{_f(self.y0 + 16)}">{_e(lab)}</text>' for t, lab in zip(ticks, labels, strict=False)]  # noqa: E501
        out.append("</g>")
        out.append(f'<text class="title" fill="currentColor" text-anchor="middle" x="{_f((self.x0 + self.x1) / 2)}" '
                   f'y="{_f(self.y0 + 38)}">{_e(title)}</text>')
        return out

    def y_axis(self, scale, ticks, labels, title) -> list[str]:
        out = ['<g class="grid">']
        out += [f'<line x1="{_f(self.x0)}" y1="{_f(scale(t))}" x2="{_f(self.x1)}" y2="{_f(scale(t))}"/>' for t in ticks]
        out.append("</g>")
        out.append(f'<line class="axis" x1="{_f(self.x0)}" y1="{_f(self.y0)}" x2="{_f(self.x0)}" y2="{_f(self.y1)}"/>')
        out.append('<g class="ticks" fill="currentColor" text-anchor="end">')
        out += [f'<text x="{_f(self.x0 - 6)}" y="{_f(scale(t) + 4)}">{_e(lab)}</text>' for t, lab in zip(ticks, labels, strict=False)]  # noqa: E501
        out.append("</g>")
        cy = (self.y0 + self.y1) / 2
        out.append(f'<text class="title" fill="currentColor" text-anchor="middle" x="14" y="{_f(cy)}" '
                   f'transform="rotate(-90 14 {_f(cy)})">{_e(title)}</text>')
        return out


def _value_axis(c, values, a, b, log_ok=True):
    """Scale, ticks and tick labels for positive values; logarithmic when the range is wide."""
    vmin, vmax = min(values), max(values)
    if log_ok and vmin > 0 and vmax / vmin > LOG_RATIO:
        lo, hi, ticks = _log_ticks(vmin, vmax)
        return Log(lo, hi, a, b), ticks, [c.num(t) for t in ticks], True
    top, ticks = _linear_ticks(vmax * 1.04)  # headroom: no point sits on the frame
    return Linear(0, top, a, b), ticks, [c.num(t) for t in ticks], False


def _legend(entries: list[tuple[int, str]], x: float, y: float) -> list[str]:
    """A row of marker + label entries starting at (x, y), right-aligned to the plot."""
    widths = [16 + _text_width(label, SMALL) + 14 for _, label in entries]
    start = max(x, W - 20 - sum(widths))
    out = ['<g class="legend">']
    for (cls, label), w in zip(entries, widths, strict=False):
        out.append(f'<g class="s{cls}">{_marker(cls, start + 5, y - 4, 4)}</g>')
        out.append(f'<text fill="currentColor" font-size="{SMALL}" x="{_f(start + 14)}" y="{_f(y)}">{_e(label)}</text>')
        start += w
    out.append("</g>")
    return out


def _swatches(entries: list[tuple[str, str]], y: float) -> list[str]:
    """A row of bar swatches (class, label), right-aligned: the legend of the timeline."""
    widths = [22 + _text_width(label, SMALL) + 14 for _, label in entries]
    start = W - 20 - sum(widths)
    out = ['<g class="legend">']
    for (cls, label), w in zip(entries, widths, strict=False):
        out.append(f'<g class="{cls}"><rect x="{_f(start)}" y="{_f(y - 10)}" width="16" height="12" rx="2"/></g>')
        out.append(f'<text fill="currentColor" font-size="{SMALL}" x="{_f(start + 22)}" y="{_f(y)}">{_e(label)}</text>')
        start += w
    out.append("</g>")
    return out


def _place_labels(labels, obstacles, bounds, size=SMALL - 1, crowded=False):
    """Greedy placement of point labels: the first candidate position that overlaps nothing.

    ``labels``: (x, y, text); ``obstacles``: boxes (x0, y0, x1, y1) already taken.
    Returns (anchor, x, y, text) per label, in input order; with ``crowded``, a label after the
    first that finds no free position is left out instead of drawn over another.
    """
    bx0, by0, bx1, by1 = bounds
    taken = list(obstacles)
    out = []

    def overlap(box):
        total = 0.0
        for o in taken:
            w = min(box[2], o[2]) - max(box[0], o[0])
            h = min(box[3], o[3]) - max(box[1], o[1])
            if w > 0 and h > 0:
                total += w * h
        outside = max(0, bx0 - box[0]) + max(0, box[2] - bx1) + max(0, by0 - box[1]) + max(0, box[3] - by1)
        return total + outside * 1000

    for x, y, text in labels:
        w, h = _text_width(text, size), size
        best = None
        for dx, dy, anchor in ((7, 3, "start"), (-7, 3, "end"), (0, -8, "middle"), (0, 14, "middle"),
                               (7, -6, "start"), (-7, -6, "end"), (7, 12, "start"), (-7, 12, "end"),
                               (0, -18, "middle"), (0, 24, "middle")):
            tx, ty = x + dx, y + dy
            left = tx if anchor == "start" else tx - w if anchor == "end" else tx - w / 2
            box = (left, ty - h * 0.8, left + w, ty + h * 0.2)
            score = overlap(box)
            if best is None or score < best[0]:
                best = (score, anchor, tx, ty, box)
            if score == 0:
                break
        if crowded and out and best[0] > 0:
            continue
        taken.append(best[4])
        out.append((best[1], best[2], best[3], text))
    return out


def _svg(name: str, height: int, title: str, desc: str, body: list[str]) -> str:
    pid = f"wg-chart-{name}"
    head = (f'<svg xmlns="http://www.w3.org/2000/svg" class="wg-chart__svg" viewBox="0 0 {W} {height}" '
            f'width="{W}" height="{height}" role="img" aria-labelledby="{pid}-title" '
            f'aria-describedby="{pid}-desc" font-size="{FONT}" data-search-exclude="">')
    return "\n".join([head, f'<title id="{pid}-title">{_e(title)}</title>', f'<desc id="{pid}-desc">{_e(desc)}</desc>',
                      *body, "</svg>"])


# A chart's data table sits in a closed <details>: a long one (more rows than a list page carries)
# carries its first rows only, the rest loaded when the reader opens it. Twenty rows show what the
# table holds; the accuracy page at ten times the data kept 50 rows in each of six tables (64 KB).
CHART_TABLE_ROWS = 20


class _Table:
    """A chart's data table, written by :func:`_figure`, which knows the chart's name: a long one
    carries its first rows and leaves the rest beside the page (``Context.rows``), loaded when the
    reader opens the table."""

    def __init__(self, caption, headers, rows):
        self.caption, self.headers, self.rows = caption, headers, rows

    def html(self, c, name: str | None = None) -> str:
        table = re.sub(r"[^a-z0-9-]", "-", name.lower()) + "-data" if name else None
        split = c.rows(table, self.rows[:CHART_TABLE_ROWS], self.rows[CHART_TABLE_ROWS:]) if name else None
        table_id = f' id="{split.table}"' if split else ""
        out = ['<div class="wg-table-wrap">', f'<table class="wg-chart__table"{table_id}>', f"<caption>{self.caption}</caption>",
               "<thead>", "<tr>" + "".join(f'<th scope="col">{h}</th>' for h in self.headers) + "</tr>", "</thead>",
               f"<tbody{split.attrs if split else ''}>"]
        for i, row in enumerate(split.items if split else self.rows):
            if split and i == split.shown:
                out.append(str(split.cut))
            cells = [f'<th scope="row">{row[0]}</th>'] + [f"<td>{cell}</td>" for cell in row[1:]]
            out.append("<tr>" + "".join(cells) + "</tr>")
        out += ["</tbody>", "</table>", "</div>"]
        if split and split.split:
            shown, total = c.num(split.shown), c.num(split.total)
            note = c.fill("list.rest_rows", shown=shown, total=total)
            out.append(f'<p class="wg-rest" data-wg-rest-for="{split.table}">{note} '
                       f'<button type="button" class="md-button" hidden="">{c.fill("list.show_all", total=total)}</button></p>')
        return "\n".join(out)

    def __str__(self) -> str:
        raise TypeError("a chart's data table is written by _figure, which names it")


def _table(c, caption, headers, rows) -> _Table:
    """The data table: the first cell of each row is its header."""
    return _Table(caption, headers, rows)


def _figure(c, name: str, svg: str, table: _Table | str, note: str = "") -> Markup:
    """A chart with its cue for narrow screens (the plot keeps a readable size and scrolls
    sideways), the line where a tapped point's values appear, an optional note and the data."""
    text = "\n".join([
        f'<figure class="wg-chart" id="wg-chart-{name}">',
        f'<p class="wg-chart__cue">{c.ui("chart.scroll_cue")}</p>',
        # the plot may scroll sideways on a narrow screen: a keyboard can reach it and scroll it too
        f'<div class="wg-chart__plot" tabindex="0" role="region" aria-labelledby="wg-chart-{name}-title">', svg, "</div>",
        *([f'<p class="wg-chart__picked" aria-live="polite" data-wg-hint="{_e(c.ui_plain("chart.tap_hint"))}"></p>']
          if 'class="pt ' in svg or 'class="seg ' in svg else []),
        *([f'<p class="wg-chart__note">{note}</p>'] if note else []),
        '<details class="wg-chart__data" data-search-exclude="">', f"<summary>{c.ui('chart.data_table')}</summary>",
        table.html(c, name) if isinstance(table, _Table) else table, "</details>",
        "</figure>",
    ])
    assert "\n\n" not in text
    return Markup(text)


def _name(gpu) -> str:
    return " ".join(clean(str(gpu["name"])).split())


BRANDS = ("NVIDIA ", "GeForce ", "AMD ", "Radeon ", "Intel ")


def _short(gpu) -> str:
    """The name without its maker's brand words, for labels in a narrow space ("GTX TITAN X")."""
    name = _name(gpu)
    for _ in range(2):
        for brand in BRANDS:
            if name.startswith(brand) and len(name) > len(brand) + 2:
                name = name[len(brand):]
    return name


def _iso(d) -> Markup:
    d = _date(d)
    return Markup(f'<time datetime="{d.isoformat()}">{d.isoformat()}</time>')
