"""The chart of today's value: what a card gives per 1,000 USD of its price and the electricity of
the ownership period (generator/facts/today.py), against its release date, one point per card
that today's software runs and that has a recent purchase price."""
from __future__ import annotations

from markupsafe import Markup

from generator.data.schema import SEGMENTS
from generator.publish.svg import (
    Linear,
    _date,
    _e,
    _figure,
    _Frame,
    _iso,
    _legend,
    _name,
    _plain,
    _points,
    _svg,
    _table,
    _value_axis,
    _year_frac,
    _year_ticks,
)

NAME = "today-value"


def today_value_chart(ds, c, rows, figure: str = "training") -> Markup | None:
    """``rows``: today's rows (:class:`generator.facts.today.TodayRow`); one point per single card
    with the figure per dollar. The plot opens on its newest years on a narrow screen."""
    points = sorted(((ds.gpus[r.gpu]["release_date"], r.gpu, r.per_dollar[figure], r)
                     for r in rows if r.count == 1 and r.per_dollar.get(figure)
                     and (r.support is None or r.support.status == "current")), key=lambda p: (p[0], p[1]))
    if len(points) < 2:
        return None
    fr = _Frame(420, top=30)
    ylo, yhi, yticks = _year_ticks(min(p[0] for p in points), max(p[0] for p in points))
    xs = Linear(ylo, yhi, fr.x0, fr.x1)
    ys, vticks, vlabels, _log = _value_axis(c, [p[2] for p in points], fr.y0, fr.y1, log_ok=False)
    axis = c.ui_plain("today.chart_axis")
    title = c.ui_plain("today.chart_title")
    desc = _plain(c, "today.chart_desc", count=c.num(len(points)))
    body = fr.x_axis(xs, yticks, [str(y) for y in yticks], c.ui_plain("chart.axis_release"))
    body += fr.y_axis(ys, vticks, vlabels, axis)
    order = list(SEGMENTS)
    present = [k for k in order if any(ds.gpus[p[1]]["segment"] == k for p in points)]
    body += _legend([(order.index(k), c.ui_plain(f"segment.{k}")) for k in present], fr.x0, 16)
    body.append('<g class="points">')
    body += _points(c, [(order.index(ds.gpus[gid]["segment"]), xs(_year_frac(d)), ys(value),
                         f"{_name(ds.gpus[gid])}: {c.num(value, 2)} ({c.ui_plain('today.kind.' + r.buy_kind)}, "
                         f"{c.num(r.buy_usd, 0)} USD, {_date(d).isoformat()})")
                        for d, gid, value, r in points])
    body.append("</g>")
    table_rows = [[_e(_name(ds.gpus[gid])), _iso(d), c.num(value, 2), c.num(r.buy_usd, 0), c.ui(f"today.kind.{r.buy_kind}")]
                  for d, gid, value, r in sorted(points, key=lambda p: -p[2])]
    table = _table(c, c.ui("today.chart_title"), [c.ui("revision.col_gpu"), c.ui("gpus.col_release"),
                                                  c.ui("today.col_value"), c.ui("today.col_buy"),
                                                  c.ui("gpu.col_kind")], table_rows)
    html = _figure(c, NAME, _svg(NAME, fr.height, title, desc, body), table)
    # on a narrow screen the plot scrolls sideways: open it on the newest cards
    return Markup(str(html).replace(f'<figure class="wg-chart" id="wg-chart-{NAME}">',
                                    f'<figure class="wg-chart" id="wg-chart-{NAME}" data-wg-scroll="end">', 1))
