"""Estimate against measurement: one log-log scatter per metric, points by runtime, the line of
perfect agreement and the +-25 % band drawn in. The data table lists every plotted measurement."""
from __future__ import annotations

from markupsafe import Markup

from generator.publish.svg import Log, _e, _f, _figure, _Frame, _legend, _log_ticks, _plain, _points, _svg, _table

METRICS = ("decode_tokens_per_s", "prefill_tokens_per_s", "peak_memory_gib", "weights_gib", "training_throughput",
           "training_tokens_per_s")


def _source_link(m: dict) -> Markup:
    """A result's source: its published address, or for the site's own runs the page's section on them."""
    if m.get("url"):
        return Markup(f'<a href="{_e(m["url"])}" rel="noopener">{_e(m["publisher"])}</a>')
    return Markup(f'<a href="#own">{_e(m["publisher"])}</a>')


def accuracy_chart(c, metric: str, measured: list[dict]) -> Markup | None:
    points = [m for m in measured if m["metric"] == metric and m["estimate"] and m["value"] > 0]
    if len(points) < 2:
        return None
    points.sort(key=lambda m: (m["runtime"], m["value"], m["id"] if "id" in m else m["source"]))
    runtimes = sorted({m["runtime"] for m in points})
    label = c.ui_plain(f"metric.{metric}")
    title = _plain(c, "accuracy.chart_heading", metric=label)
    desc = _plain(c, "accuracy.chart_desc", metric=label, count=c.num(len(points)))
    lo, hi, ticks = _log_ticks(min(min(m["value"], m["estimate"]) for m in points),
                               max(max(m["value"], m["estimate"]) for m in points))
    fr = _Frame(460, top=30)
    xs, ys = Log(lo, hi, fr.x0, fr.x1), Log(lo, hi, fr.y0, fr.y1)
    labels = [c.num(t) for t in ticks]
    body = fr.x_axis(xs, ticks, labels, _plain(c, "accuracy.axis_measured", metric=label))
    body += fr.y_axis(ys, ticks, labels, _plain(c, "accuracy.axis_estimate", metric=label))
    body.append('<g class="diagonal" fill="none" stroke="currentColor">')
    body.append(f'<line x1="{_f(xs(lo))}" y1="{_f(ys(lo))}" x2="{_f(xs(hi))}" y2="{_f(ys(hi))}" stroke-width="1"/>')
    for f in (0.75, 1.25):
        a, b = max(lo, lo / f), min(hi, hi / f)
        body.append(f'<line x1="{_f(xs(a))}" y1="{_f(ys(a * f))}" x2="{_f(xs(b))}" y2="{_f(ys(b * f))}" '
                    'stroke-dasharray="4 4" stroke-width="0.8" opacity="0.6"/>')
    body.append("</g>")
    body += _legend([(i, r) for i, r in enumerate(runtimes)], fr.x0, 16)
    body.append('<g class="points">')
    body += _points(c, [(runtimes.index(m["runtime"]), xs(m["value"]), ys(m["estimate"]),
                         f"{c.gpu_name(m['gpu'])}, {c.subject_name(m)}: {c.num(m['value'], 1)} / {c.num(m['estimate'], 1)}",
                         3.2) for m in points])
    body.append("</g>")
    rows = [[_e(c.gpu_name(m["gpu"])), _e(c.subject_name(m)), _e(m["runtime"]), _e(m.get("weights") or "—"),
             c.num(m["value"], 1), c.num(m["estimate"], 1), c.num(m["error_pct"], 0),
             _source_link(m)] for m in points]
    table = _table(c, _e(title), [c.ui("gpus.col_name"), c.ui("gpu.col_model"), c.ui("accuracy.col_runtime"),
                                  c.ui("model.col_format"), c.ui("measured.col_value"), c.ui("measured.col_estimate"),
                                  c.ui("accuracy.col_error"), c.ui("measured.col_source")], rows)
    return _figure(c, f"accuracy-{metric.replace('_', '-')}", _svg(f"accuracy-{metric.replace('_', '-')}", fr.height,
                                                                    title, desc, body), table)
