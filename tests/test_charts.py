"""Charts (generator/publish/charts.py): well-formed SVG with a text alternative, escaped text,
deterministic output, tables that match the data, and the charts page."""
from __future__ import annotations

import json
import re
import xml.etree.ElementTree as ET

import pytest
from helpers import ROOT

SVG = "{http://www.w3.org/2000/svg}"
from generator.data.locales import LANGS, TRANSLATED_LANGS  # noqa: E402

HOSTILE_NAME = '<script>alert("x")</script> & \'q\' "dq" ]]> {{ 7*7 }}'


# ------------------------------------------------------------------ data

def _context(ds, lang="en"):
    from generator.publish.render import Context

    return Context(ds, lang)


@pytest.fixture(scope="module")
def shipped():
    from generator.data.loader import load_dataset

    ds, problems = load_dataset(ROOT / "data", ROOT)
    assert ds is not None, [str(p) for p in problems[:10]]
    return ds


FIXTURE_REVISION_EXTRA = """
relative_performance:
  - workload: overall
    reference: rtx-2070
    values: {rtx-2070: 1, gtx-1060-6gb: 0.45, tesla-x: 0.8, hostile-card: 1.3}
prices:
  - {gpu: gtx-1060-6gb, usd: 180, kind: used}
  - {gpu: rtx-2070, usd: 0.9, kind: cloud-hourly}
"""

TESLA = """name: Tesla X
vendor: nvidia
architecture: Volta
release_date: 2017-06-21
memory_gb: 16
memory_type: HBM2
memory_bandwidth_gbs: 900
fp32_tflops: 14
fp16_tensor_tflops: 112
tensor_cores: true
tdp_w: 250
launch_price_usd: null
compute_capability: "7.0"
segment: datacenter
sources:
  - https://example.org/tesla-x
"""


@pytest.fixture
def small(tree):
    """The fixture tree plus a data-centre card without a price, a card with a hostile name
    and a relative-performance table with prices of several kinds."""
    from generator.data.loader import load_dataset

    tree.use_real_ui()
    tree.write("gpus/nvidia/tesla-x.yaml", TESLA)
    hostile = TESLA.replace("name: Tesla X", "name: " + json.dumps(HOSTILE_NAME)).replace(
        "launch_price_usd: null", "launch_price_usd: 1299").replace("segment: datacenter", "segment: workstation")
    tree.write("gpus/nvidia/hostile-card.yaml", hostile.replace("2017-06-21", "2020-02-02"))
    rev = "revisions/2019-04-03.yaml"
    tree.write(rev, tree.read(rev).rstrip("\n") + "\n" + FIXTURE_REVISION_EXTRA)
    ds, problems = load_dataset(tree.data, tree.root)
    assert ds is not None, problems
    return ds


def _all(ds, c):
    from generator.publish import charts

    rev = ds.revisions[-1].id
    return {
        "perf-price": charts.perf_price_chart(ds, c, rev, 0),
        "spec-bandwidth": charts.spec_chart(ds, c, "bandwidth"),
        "spec-fp32": charts.spec_chart(ds, c, "fp32"),
        "spec-tensor": charts.spec_chart(ds, c, "tensor"),
        "spec-memory": charts.spec_chart(ds, c, "memory"),
        "spec-price": charts.spec_chart(ds, c, "price"),
        "value": charts.value_chart(ds, c),
        "spec-value": charts.spec_value_chart(ds, c),
        "timeline": charts.timeline_chart(ds, c),
    }


# ------------------------------------------------------------------ helpers

def _parse(figure) -> ET.Element:
    """The whole figure is well-formed XML (SVG inside, XHTML-style markup around it)."""
    text = str(figure)
    assert "\n\n" not in text, "a blank line would end the raw HTML block in Markdown"
    return ET.fromstring(text)


def _svg(fig: ET.Element) -> ET.Element:
    svg = fig.find(f".//{SVG}svg")
    assert svg is not None
    return svg


def _rows(fig: ET.Element) -> list[list[str]]:
    body = fig.find(".//details/div/table/tbody")
    return [["".join(cell.itertext()) for cell in tr] for tr in body.findall("tr")]


def _marks(svg: ET.Element) -> int:
    """Plotted things: points, bars or timeline segments (legend entries excluded). Items that
    share a spot are one point whose ``data-n`` says how many, its tip naming the first."""
    points = [g for g in svg.iter(f"{SVG}g") if (g.get("class") or "").startswith("pt ")]
    for g in points:
        assert g.get("data-n") is None or int(g.get("data-n")) > 1
    bars = [r for g in svg.iter(f"{SVG}g") if (g.get("class") or "").startswith("bars ") for r in g.findall(f"{SVG}rect")]
    legend = {id(x) for g in svg.iter(f"{SVG}g") if g.get("class") == "legend" for x in g.iter()}
    segs = [g for g in svg.iter(f"{SVG}g") if (g.get("class") or "").startswith("seg ") and id(g) not in legend]
    for g in segs:  # a band of narrow segments says how many it stands for
        assert (g.get("data-n") is None) == ("many" not in g.get("class").split())
    return sum(int(g.get("data-n") or 1) for g in points + segs) + len(bars)


def _check(figure) -> tuple[ET.Element, ET.Element, list[list[str]]]:
    fig = _parse(figure)
    assert fig.tag == "figure" and "wg-chart" in fig.get("class")
    svg = _svg(fig)
    assert svg.get("role") == "img"
    title, desc = svg.find(f"{SVG}title"), svg.find(f"{SVG}desc")
    assert title is not None and (title.text or "").strip()
    assert desc is not None and (desc.text or "").strip()
    assert svg.get("aria-labelledby") == title.get("id") and svg.get("aria-describedby") == desc.get("id")
    plot = fig.find("div[@class='wg-chart__plot']")  # scrolls on a phone: reachable by keyboard, named
    assert plot.get("tabindex") == "0" and plot.get("aria-labelledby") == title.get("id")
    parent = {child: el for el in svg.iter() for child in el}
    for text in svg.iter(f"{SVG}text"):  # text takes the page's colour, itself or from a group
        node = text
        while node is not None and node.get("fill") != "currentColor":
            node = parent.get(node)
        assert node is not None, ET.tostring(text)
    assert not re.search(r'(fill|stroke)="#', str(figure)), "colours come from CSS classes"
    rows = _rows(fig)
    assert fig.find(".//details/summary") is not None
    assert fig.find(".//details/div/table/caption") is not None
    assert fig.findall(".//details/div/table/thead/tr/th")
    assert len(rows) == _marks(svg) > 0
    return fig, svg, rows


# ------------------------------------------------------------------ every chart

@pytest.mark.parametrize("lang", LANGS)
def test_every_chart_of_the_fixture_is_valid(small, lang):
    out = _all(small, _context(small, lang))
    assert all(v is not None for v in out.values()), [k for k, v in out.items() if v is None]
    for _name, figure in out.items():
        _check(figure)


@pytest.mark.parametrize("lang", LANGS)
def test_every_chart_of_the_shipped_data_is_valid(shipped, lang):
    from generator.publish.charts import charts_for

    out = charts_for(shipped, _context(shipped, lang))
    assert {"spec/bandwidth", "spec/fp32", "spec/tensor", "spec/memory", "spec/price", "spec-value", "timeline"} <= set(out)
    assert any(k.startswith("perf-price/") for k in out) and any(k.startswith("value/") for k in out)
    ids = []
    for figure in out.values():
        fig, _, _ = _check(figure)
        ids += [e.get("id") for e in fig.iter() if e.get("id")]
    assert len(ids) == len(set(ids)), "ids are unique on the page"


def test_point_counts_and_skipped_gpus_follow_the_data(small):
    from generator.publish import charts

    c = _context(small)
    for metric, (field, _, _) in charts.SPEC_METRICS.items():
        fig, svg, rows = _check(charts.spec_chart(small, c, metric))
        have = [g for g in small.gpus.values() if g[field] is not None]
        assert len(rows) == len(have), metric
        assert svg.find(f"{SVG}desc").text.endswith(f": {len(small.gpus) - len(have)}."), metric
    # the Tesla has no price anywhere: left out, and said so
    fig, svg, rows = _check(charts.perf_price_chart(small, c, "2019-04-03", 0))
    assert len(rows) == 3 and "Tesla X" not in "".join(svg.itertext())
    assert svg.find(f"{SVG}desc").text.endswith("GPUs left out because they have no price: 1.")


def test_no_chart_of_a_single_point(shipped):
    """A relative-performance table with one priced card gets no performance-against-price chart;
    every other gets one (on the charts page if it is among the newest, else on its revision page)."""
    from generator.publish.charts import MIN_RANKED, _priced, perf_price_chart, priced_tables

    tables = priced_tables(shipped)
    for rev in shipped.revisions:
        for i, tab in enumerate(rev.get("relative_performance") or []):
            priced = len(_priced(shipped, rev, tab["values"])[0])
            assert ((rev.id, i) in tables) == (priced >= MIN_RANKED), (rev.id, i, priced)
            assert (perf_price_chart(shipped, _context(shipped), rev.id, i) is not None) == (priced >= MIN_RANKED)
    assert any(len(_priced(shipped, r, t["values"])[0]) == 1
               for r in shipped.revisions for t in r.get("relative_performance") or [])  # the case exists


def test_the_charts_page_draws_the_newest_priced_tables_and_each_revision_page_its_own(small, tree):
    """With more priced tables than the charts page draws, it draws the newest and links the
    older ones to their revision pages, where each is drawn; Korean page, Korean text."""
    from generator.publish import charts
    from generator.site.pipeline import Paths, generate_language, load_or_fail

    tree.use_real_ui(translations=True)
    rev = tree.read("revisions/2019-04-03.yaml")  # with the small fixture's priced table
    dates = ["2019-04-03", "2019-05-01", "2019-06-01", "2019-07-01", "2019-08-01"]
    for date in dates[1:]:
        tree.write(f"revisions/{date}.yaml", rev.replace("date: 2019-04-03", f"date: {date}"))
    paths = Paths(root=ROOT, data=tree.data, build=tree.root / "build", site=tree.root / "site")
    ds = load_or_fail(paths)
    priced = [t for t in charts.priced_tables(ds) if t[0] in dates]
    assert len(priced) == len(dates) > charts.PERF_PRICE_ON_PAGE
    generate_language(ds, paths, "ko")
    docs = paths.build / "docs" / "ko"
    page = (docs / "charts" / "index.md").read_text(encoding="utf-8")
    drawn = re.findall(r'id="wg-chart-perf-price-([0-9-]+)-0"', page)
    assert drawn == [d for d, _ in priced[-charts.PERF_PRICE_ON_PAGE:]]
    older = [d for d, _ in priced[:-charts.PERF_PRICE_ON_PAGE]]
    assert re.findall(r"\(\.\./revisions/([0-9-]+)\.md#perf-price-0\)", page) == older[::-1]
    assert "더 오래된 조언의 차트" in page
    for date in dates:
        rev_page = (docs / "revisions" / f"{date}.md").read_text(encoding="utf-8")
        assert f'id="wg-chart-perf-price-{date}-0"' in rev_page and "{ #perf-price-0 }" in rev_page, date



def test_table_numbers_match_the_data(small):
    from generator.publish import charts

    c = _context(small)
    gpus = small.gpus
    by_name = {g["name"]: gid for gid, g in gpus.items()}
    for metric, (field, _, _) in charts.SPEC_METRICS.items():
        _, _, rows = _check(charts.spec_chart(small, c, metric))
        for name, released, value, _segment in rows:
            gid = by_name[name]
            assert value == c.num(gpus[gid][field]) and released == gpus[gid]["release_date"].isoformat()
    # performance against price: a quoted used price wins, a cloud-hourly one never does
    _, _, rows = _check(charts.perf_price_chart(small, c, "2019-04-03", 0))
    table = {r[0]: r[1:] for r in rows}
    assert table["GeForce GTX 1060 6GB"] == [c.num(0.45), c.num(180), "used"]
    assert table["GeForce RTX 2070"] == [c.num(1), c.num(499), "launch price"]
    assert table[HOSTILE_NAME] == [c.num(1.3), c.num(1299), "launch price"]
    # value: relative performance per 1000 USD, best first
    _, _, rows = _check(charts.value_chart(small, c))
    assert [r[0] for r in rows] == ["GeForce GTX 1060 6GB", "GeForce RTX 2070", HOSTILE_NAME]
    assert rows[0][1] == c.num(0.45 / 180 * 1000, 2) and rows[1][1] == c.num(1 / 499 * 1000, 2)
    # spec-based value: dense tensor TFLOPS per 1000 USD of launch price; no price or no tensor, no bar
    _, _, rows = _check(charts.spec_value_chart(small, c))
    assert [r[0] for r in rows] == [HOSTILE_NAME, "GeForce RTX 2070"]  # 112 / 1299 before 29.9 / 499
    assert rows[1][1:] == [c.num(29.9 / 499 * 1000, 1), c.num(29.9), c.num(499), ""]  # too few cards to flag


def test_spec_value_keeps_the_top_n(shipped):
    from generator.publish import charts

    c = _context(shipped)
    both = [g for g in shipped.gpus.values() if g["fp16_tensor_tflops"] is not None and g["launch_price_usd"] is not None]
    _, svg, rows = _check(charts.spec_value_chart(shipped, c, top=20))
    assert len(rows) == min(20, len(both))
    scores = sorted((g["fp16_tensor_tflops"] / g["launch_price_usd"] * 1000 for g in both), reverse=True)
    assert rows[0][1] == c.num(scores[0], 1) and rows[-1][1] == c.num(scores[len(rows) - 1], 1)
    assert f"out of {len(both)} GPUs" in svg.find(f"{SVG}desc").text


def test_outliers_are_flagged_against_the_ninetieth_percentile(shipped):
    from generator.publish import charts

    assert charts.outliers([1.0] * 9) == float("inf")  # too few cards to speak of outliers
    values = [float(v) for v in range(1, 21)]  # 90th percentile (nearest rank): 18
    assert charts.outliers(values) == 36.0
    c = _context(shipped)
    fig, _svg_el, rows = _check(charts.spec_value_chart(shipped, c, top=20))
    both = [g["fp16_tensor_tflops"] / g["launch_price_usd"] * 1000 for g in shipped.gpus.values()
            if g["fp16_tensor_tflops"] is not None and g["launch_price_usd"] is not None]
    level = charts.outliers(both)
    flagged = [r[0] for r in rows if r[-1] == "†"]
    expected = [r[0] for r in rows if float(r[1].replace(",", "")) > level]
    assert flagged == expected and "Intel Arc A770 16GB" in flagged  # three times the next card on spec
    note = "".join(fig.find(".//p[@class='wg-chart__note']").itertext())
    assert note.startswith("† " + ", ".join(flagged) + ":") and "90th percentile" in note
    labels = ["".join(t.itertext()) for t in _svg_el.iter(f"{SVG}text")]
    assert "Intel Arc A770 16GB †" in labels and "GeForce RTX 4090" in labels


def test_timeline_labels_leave_out_brand_words(shipped):
    from generator.publish import charts
    from generator.publish.svg import _short

    assert _short({"name": "GeForce GTX TITAN X"}) == "GTX TITAN X"
    assert _short({"name": "NVIDIA TITAN Xp"}) == "TITAN Xp"
    assert _short({"name": "AMD Radeon RX 7900 XTX"}) == "RX 7900 XTX"
    _, svg, rows = _check(charts.timeline_chart(shipped, _context(shipped)))
    labels = {"".join(t.itertext()) for t in svg.iter(f"{SVG}text")}
    assert "TITAN Xp" in labels and not any(label.startswith(("GeForce ", "NVIDIA ")) for label in labels)
    assert any("NVIDIA TITAN Xp" in "".join(map(str, r)) for r in rows)  # the table keeps full names


def test_hostile_names_stay_text(small):
    from generator.publish.charts import charts_for

    for lang in LANGS:
        for figure in charts_for(small, _context(small, lang)).values():
            text = str(figure)
            assert "<script" not in text and "]]>" not in text and "{{ 7" not in text
            fig = _parse(figure)
            for th in fig.iter("th"):
                if "script" in "".join(th.itertext()):
                    assert "".join(th.itertext()) == HOSTILE_NAME  # escaped, not mangled
    c = _context(small)
    from generator.publish.charts import perf_price_chart

    fig = _parse(perf_price_chart(small, c, "2019-04-03", 0))
    labels = ["".join(t.itertext()) for t in _svg(fig).iter(f"{SVG}text")]
    assert HOSTILE_NAME in labels


def test_output_is_deterministic(small, shipped):
    from generator.publish.charts import charts_for

    for ds in (small, shipped):
        for lang in LANGS:
            assert charts_for(ds, _context(ds, lang)) == charts_for(ds, _context(ds, lang))


def test_coordinates_have_one_decimal(shipped):
    from generator.publish.charts import charts_for

    for figure in charts_for(shipped, _context(shipped)).values():
        svg = str(figure).split("<svg", 1)[1].split("</svg>", 1)[0]
        for value in re.findall(r'\b(?:x|y|x1|x2|y1|y2|cx|cy|width|height)="([^"]+)"', svg):
            assert re.fullmatch(r"-?\d+(\.\d)?", value), value


def test_wide_ranges_use_a_log_scale_and_say_so(shipped):
    from generator.publish.charts import spec_chart

    c = _context(shipped)
    fig = _parse(spec_chart(shipped, c, "bandwidth"))
    svg = _svg(fig)
    values = [g["memory_bandwidth_gbs"] for g in shipped.gpus.values()]
    assert max(values) / min(values) > 20
    assert "logarithmic" in svg.find(f"{SVG}desc").text
    assert any("logarithmic scale" in "".join(t.itertext()) for t in svg.iter(f"{SVG}text"))


def test_french_numbers_and_years(shipped):
    from generator.publish.charts import spec_chart

    fig = _parse(spec_chart(shipped, _context(shipped, "fr"), "price"))
    ticks = ["".join(t.itertext()) for g in _svg(fig).iter(f"{SVG}g") if g.get("class") == "ticks" for t in g]
    assert "2020" in ticks  # years are not thousands
    assert any("\u202f" in t for t in ticks)  # 10 000, the French way


def test_timeline_segments_follow_the_advice(small, shipped):
    from generator.publish.charts import timeline_chart, timeline_segments

    segs = timeline_segments(small, ["best-overall", "little-money"])
    assert segs == {"best-overall": [{"start": "2019-04-03", "end": None, "gpus": ("rtx-2070",), "known": "source"}],
                    "little-money": [{"start": "2019-04-03", "end": None, "gpus": ("gtx-1060-6gb",), "known": "source"}]}
    c = _context(shipped)
    _, _, rows = _check(timeline_chart(shipped, c, personas=("best-overall",)))
    segs = timeline_segments(shipped, ["best-overall"])["best-overall"]
    assert len(rows) == len(segs)
    for row, seg in zip(rows, segs, strict=False):
        assert row[1] == seg["start"]
        assert row[3] == ", ".join(shipped.gpus[g]["name"] for g in seg["gpus"]) or (row[3] == "—" and not seg["gpus"])
    # consecutive segments differ, and each starts where the previous one ended
    for a, b in zip(segs, segs[1:], strict=False):
        assert a["gpus"] != b["gpus"] and a["end"] == b["start"]


def test_timeline_draws_a_run_of_narrow_segments_as_one_band(shipped, monkeypatch):
    """A history that changed every day for 40 days: 40 segments a fraction of a pixel wide are
    one band whose tip counts them (in Korean), the table still lists every segment, and the
    wide segments around it are drawn as before."""
    import datetime as dt

    from generator.publish import charts

    day = dt.date(2019, 4, 3)
    gpus = ("rtx-2070", "rtx-2080-ti")
    narrow = [{"start": (day + dt.timedelta(k)).isoformat(), "end": (day + dt.timedelta(k + 1)).isoformat(),
               "gpus": (gpus[k % 2],), "known": "source"} for k in range(40)]
    wide = [{"start": "2016-01-01", "end": day.isoformat(), "gpus": ("gtx-1080",), "known": "derived"},
            {"start": (day + dt.timedelta(40)).isoformat(), "end": None, "gpus": ("rtx-2070",), "known": "source"}]
    history = {"best-overall": [wide[0], *narrow, wide[1]]}
    monkeypatch.setattr(charts, "timeline_segments", lambda ds, personas, states=None: history)
    c = _context(shipped, "ko")
    _, svg, rows = _check(charts.timeline_chart(shipped, c, personas=("best-overall",)))
    assert len(rows) == 42
    bands = [g for g in svg.iter(f"{SVG}g") if "many" in (g.get("class") or "").split()]
    assert len(bands) == 1 and bands[0].get("data-n") == "40"
    tip = bands[0].find(f"{SVG}title").text
    assert tip == c.ui_plain("chart.timeline.many").format(count="40", start=c.date(narrow[0]["start"]),
                                                              end=c.date(narrow[-1]["end"]))
    drawn = [g for g in svg.iter(f"{SVG}g") if (g.get("class") or "").startswith("seg ") and g.find(f"{SVG}title") is not None]
    assert len(drawn) == 3  # the band and the two wide segments


def test_scales():
    from generator.publish.svg import _linear_ticks, _log_ticks

    assert _linear_ticks(1.2) == (1.25, [0, 0.25, 0.5, 0.75, 1, 1.25])
    assert _linear_ticks(0.9) == (1, [0, 0.2, 0.4, 0.6, 0.8, 1])
    assert _linear_ticks(1180)[1] == [0, 250, 500, 750, 1000, 1250]
    lo, hi, ticks = _log_ticks(112, 5300)
    assert (lo, hi) == (100, 10000) and ticks == [100, 200, 500, 1000, 2000, 5000, 10000]
    lo, hi, ticks = _log_ticks(0.3, 4000)
    assert ticks[0] == 0.2 and 1 in ticks and 1000 in ticks and 2 not in ticks


def test_chart_texts_are_translated(shipped):
    from generator.data.dataset import Localizer

    keys = [k for k in shipped.ui.texts if k.startswith("chart.")]
    assert len(keys) > 30
    for lang in TRANSLATED_LANGS:
        loc = Localizer(shipped, lang)
        assert [k for k in keys if loc.field(shipped.ui, (k,))[1] != "ok"] == [], lang


# ------------------------------------------------------------------ the page

@pytest.fixture
def with_charts():
    """Kept for the tests' signatures: render.Context provides the charts."""


@pytest.mark.parametrize("lang", LANGS)
def test_charts_page_has_every_chart_in_its_own_section(shipped, with_charts, lang):
    from generator.publish.charts import charts_for
    from generator.publish.render import Page, render_language, split_rest

    pages = {p.path: p.text for p in render_language(shipped, lang, ROOT / "templates" / "pages")}
    text = pages["charts/index.md"]
    figures = charts_for(shipped, _context(shipped, lang))
    for figure in figures.values():
        # as the page carries it: a long data table's other rows are in a script beside the page
        carried, *rest = split_rest(Page("charts/index.md", str(figure)))
        assert carried.text in text
        assert all(pages[r.path] == r.text for r in rest)
    headings = re.findall(r"^#{2,3} .+ \{ #([a-z0-9-]+) \}$", text, re.M)
    assert len(headings) >= len(figures) and len(headings) == len(set(headings))
    assert text.count('<figure class="wg-chart"') == len(figures)


def test_charts_page_of_the_hostile_fixture_renders(small, with_charts):
    from generator.publish.render import render_language

    text = {p.path: p.text for p in render_language(small, "en", ROOT / "templates" / "pages")}["charts/index.md"]
    assert text.count('<figure class="wg-chart"') == 9 and "<script" not in text


def test_story_charts_follow_the_advice_and_draw_today_apart(shipped):
    """One point per revision that advised a priced card, at a price known then (never a later
    dated observation), a step line through them, and today's point drawn apart: its own marker
    after a dashed rule, named in the data table as the site's computation."""
    from generator.facts.derive import derive
    from generator.publish.charts_story import story_chart

    story = derive(shipped).story
    c = _context(shipped)
    for key in ("throughput", "memory"):
        points = story[key]
        past = [p for p in points if not p["today"]]
        assert len(past) >= 10 and [p["date"] for p in past] == sorted(p["date"] for p in past)
        assert all(p["source"] in ("catalogue", "launch", "street", "used") for p in past)
        assert [p["today"] for p in points].count(True) == 1 and points[-1]["today"]
        assert points[-1]["date"] > past[-1]["date"]
        figure = str(story_chart(shipped, c, key))
        svg = ET.fromstring(figure[figure.index("<svg"):figure.index("</svg>") + 6])
        assert len(svg.findall(f".//{SVG}g[@class='pt s0']")) == len(past)
        assert len(svg.findall(f".//{SVG}g[@class='pt s2']")) == 1
        assert svg.find(f".//{SVG}line[@class='story-today']") is not None
        rows = re.findall(r"<tr><th scope=\"row\">", figure)
        assert len(rows) == len(points)
        assert figure.count(str(c.ui("chart.story.basis_today"))) == 1
    # a revision's pick depends on what it advised: the 2020 revision's used quote prices its pick
    picks = {p["date"]: p for p in story["throughput"]}
    assert picks["2020-09-07"]["source"] == "used"


def test_items_on_one_spot_are_drawn_once_and_counted(tree):
    """Cards released the same day with the same figure are one point: its tip names the first
    and counts the others, in the page's language; the data table still lists every card."""
    from generator.data.loader import load_dataset
    from generator.publish import charts

    tree.use_real_ui(translations=True)
    for path in sorted((tree.data / "gpus").glob("*/*.yaml")):
        text = path.read_text(encoding="utf-8")
        for k in (1, 2, 3):
            copy = re.sub(r"^name: (.*)$", rf"name: \1 C{k}", text, count=1, flags=re.M)
            tree.write(path.relative_to(tree.data).with_name(f"{path.stem}-c{k}.yaml").as_posix(), copy)
    ds, problems = load_dataset(tree.data, tree.root)
    assert ds is not None, [str(p) for p in problems]
    have = [g for g in ds.gpus.values() if g["fp32_tflops"] is not None]
    assert len(have) >= 8
    for lang, more in (("en", "and 3 more at this spot"), ("ko", "외 3개 (같은 자리)")):
        fig, svg, rows = _check(charts.spec_chart(ds, _context(ds, lang), "fp32"))
        assert len(rows) == len(have)
        points = [g for g in svg.iter(f"{SVG}g") if (g.get("class") or "").startswith("pt ")]
        assert len(points) == len(have) // 4 and {g.get("data-n") for g in points} == {"4"}
        tip = points[0].find(f"{SVG}title").text
        assert tip.endswith(more) and tip.count(":") == 1, tip


def test_the_story_line_grows_with_the_columns_it_crosses():
    """The step line of the price story: one point per column is drawn as before (across, then up
    or down); many points on one pixel column are one stroke over their range, leaving at the
    last value."""
    from generator.publish.charts_story import _steps

    assert _steps([(10, 50), (20, 40), (30, 60), (40, 60)]) == [
        "10.0,50.0", "20.0,50.0", "20.0,40.0", "30.0,40.0", "30.0,60.0", "40.0,60.0"]
    column = [(20.1, 30), (20.2, 70), (20.3, 45)]
    assert _steps([(10, 50), *column, (30, 45)]) == [
        "10.0,50.0", "20.1,50.0", "20.1,70.0", "20.1,30.0", "20.1,45.0", "30.0,45.0"]  # leaving lower: up first
    many = [(x / 10, (x * 37) % 100) for x in range(1000)]  # 1,000 points over 100 columns
    assert len(_steps(many)) <= 4 * 101


def test_a_long_history_is_drawn_one_point_per_stretch_and_labels_never_cover_each_other(shipped, monkeypatch):
    """1,200 revisions alternating between three cards: the story chart draws at most one point per
    GAP units of its width (the last revision of each stretch, its tip counting the others, which
    add up to every revision), leaves out labels that would cover another, and its table still
    lists every revision. At today's length every revision keeps its own point (test above)."""
    import datetime as dt
    import types

    from generator.publish import charts_story
    from generator.publish.svg import _text_width

    gpus = ["rtx-2070", "rtx-3090", "rtx-4090"]
    start = dt.date(2014, 1, 1)
    past = [{"date": (start + dt.timedelta(days=3 * i)).isoformat(), "gpu": gpus[i % 3], "value": 10.0 + (i % 4) * 7,
             "usd": 500 + i % 3, "today": False, "source": "launch"} for i in range(1200)]
    today = {"date": "2026-11-01", "gpu": "rtx-4090", "value": 40.0, "usd": 1600, "today": True, "source": "street"}
    fake = types.SimpleNamespace(story={"throughput": past + [today]})
    monkeypatch.setattr(charts_story, "derive", lambda ds: fake)
    c = _context(shipped)
    figure = str(charts_story.story_chart(shipped, c, "throughput"))
    svg = ET.fromstring(figure[figure.index("<svg"):figure.index("</svg>") + 6])
    points = svg.findall(f".//{SVG}g[@class='pt s0']")
    width = 720
    assert 10 < len(points) <= width / charts_story.GAP + 1
    # each drawn point stands for itself and the earlier revisions its tip counts
    counted = 0
    for g in points:
        tip = g.find(f"{SVG}title").text
        m = re.search(r"; ([\d,]+) earlier revisions from ", tip)
        counted += 1 + (int(m.group(1).replace(",", "")) if m else 0)
    assert counted == len(past)
    boxes = []
    for t in svg.findall(f".//{SVG}g[@class='labels']/{SVG}text"):
        size = charts_story.SMALL - 1  # as _place_labels measures a label
        x, y, w = float(t.get("x")), float(t.get("y")), _text_width(t.text, size)
        left = {"start": x, "end": x - w, "middle": x - w / 2}[t.get("text-anchor")]
        boxes.append((left, y - size * 0.8, left + w, y + size * 0.2))
    assert 3 <= len(boxes) < 100
    for i, a in enumerate(boxes):
        for b in boxes[i + 1:]:
            assert min(a[2], b[2]) - max(a[0], b[0]) <= 0.5 or min(a[3], b[3]) - max(a[1], b[1]) <= 0.5, (a, b)
    assert len(re.findall(r"<tr><th scope=\"row\">", figure)) == len(past) + 1
