"""Catalogue, compare, diff picker, revision selector and language switching, clicked in Chromium."""
from __future__ import annotations

import json

import pytest
from helpers import open_language_menu_and_pick


def visible_ids(page):
    return page.eval_on_selector_all("#gpu-table tbody tr:not([hidden])", "rows => rows.map(r => r.id)")


def every_row(page, table, count):
    """A long list carries its first rows; sorting or filtering loads the rest: wait for them."""
    page.wait_for_function(f"document.querySelectorAll('#{table} tbody tr').length === {count}")


def test_sorting_is_numeric(server, page, built_site):
    _, ds = built_site
    page.goto(server + "/gpus/")
    header = page.locator("#gpu-table thead th[data-key=memory]")
    header.click()
    every_row(page, "gpu-table", len(ds.gpus))
    page.wait_for_function("document.querySelector('#gpu-table thead th[data-key=memory]').getAttribute('aria-sort')")
    first = page.eval_on_selector_all("#gpu-table tbody tr", "rows => rows.map(r => parseFloat(r.dataset.mem))")
    header.click()
    second = page.eval_on_selector_all("#gpu-table tbody tr", "rows => rows.map(r => parseFloat(r.dataset.mem))")
    assert sorted(first) == sorted(g["memory_gb"] for g in ds.gpus.values())
    # a numeric column sorts largest first, then smallest first
    assert first == sorted(first, reverse=True) and second == sorted(first)
    assert header.get_attribute("aria-sort") == "ascending"
    # a text column sorts A to Z first
    name = page.locator("#gpu-table thead th[data-key=name]")
    page.locator("#gpu-table thead th[data-key=tensor]").click()
    name.click()
    assert name.get_attribute("aria-sort") == "ascending"


MOVES = """
window.wgMoves = 0;
document.addEventListener("DOMContentLoaded", () => {
  const body = document.querySelector("#gpu-table tbody");
  if (body) new MutationObserver((list) => { for (const m of list) window.wgMoves += m.addedNodes.length; })
    .observe(body, { childList: true });
});
"""


def test_the_catalogue_arrives_sorted_by_name_and_no_row_moves_on_load(server, browser, built_site):
    """The build writes the rows in the table's default order, so the page does not sort (move
    every row and lay the table out again) when it loads; the name column still says it is sorted
    A to Z, and a click on it sorts Z to A."""
    _, ds = built_site
    page = browser.new_page()
    page.add_init_script(MOVES)
    page.goto(server + "/gpus/")
    page.wait_for_function("document.querySelector('#gpu-table').dataset.wgSort")
    page.wait_for_timeout(300)
    assert page.evaluate("window.wgMoves") == 0
    name = page.locator("#gpu-table thead th[data-key=name]")
    assert name.get_attribute("aria-sort") == "ascending"
    names = page.eval_on_selector_all("#gpu-table tbody tr > th", "cells => cells.map(c => c.dataset.sort)")
    assert names == sorted(names, key=lambda n: n.strip().lower())
    name.click()
    every_row(page, "gpu-table", len(ds.gpus))
    page.wait_for_function("document.querySelector('#gpu-table th[data-key=name]').getAttribute('aria-sort') === 'descending'")
    after = page.eval_on_selector_all("#gpu-table tbody tr > th", "cells => cells.map(c => c.dataset.sort)")
    assert after == sorted((g["name"] for g in ds.gpus.values()), key=lambda n: n.strip().lower(), reverse=True)
    page.close()


def test_column_chooser_shows_the_usual_four_and_keeps_a_choice(server, browser, built_site):
    """By default the catalogue shows the name, memory, bandwidth, FP16 tensor throughput and the
    price; a reader can show other columns (also without script), and the address keeps the choice."""
    _, ds = built_site
    shown = "els => els.filter(e => e.offsetParent !== null).map(e => e.dataset.key || 'sources')"
    pg = browser.new_page(viewport={"width": 390, "height": 844})
    pg.goto(server + "/gpus/")
    heads = pg.locator("#gpu-table thead th")
    assert heads.evaluate_all(shown) == ["name", "memory", "bandwidth", "tensor", "price"]
    cells = pg.locator("#gpu-table tbody tr").first.locator("> *")
    assert cells.evaluate_all("els => els.filter(e => e.offsetParent !== null).length") == 5
    assert "Every card in the catalogue" in pg.locator("#gpu-table caption").inner_text()
    pg.locator(".wg-columns summary").click()
    pg.locator('.wg-columns input[value="release"]').check()
    pg.locator('.wg-columns input[value="price"]').uncheck()
    assert heads.evaluate_all(shown) == ["name", "release", "memory", "bandwidth", "tensor"]
    pg.wait_for_function("location.search.includes('cols=')")
    assert "cols=release%2Cmemory%2Cbandwidth%2Ctensor" in pg.url
    pg.goto(pg.url)
    assert heads.evaluate_all(shown) == ["name", "release", "memory", "bandwidth", "tensor"]
    # the rows the page does not carry follow the same choice once they are in
    pg.locator('[data-wg-rest-for="gpu-table"] button').click()
    every_row(pg, "gpu-table", len(ds.gpus))
    last = pg.locator("#gpu-table tbody tr").last.locator("> *")
    assert last.evaluate_all("els => els.filter(e => e.offsetParent !== null).length") == 5
    pg.close()
    context = browser.new_context(java_script_enabled=False)
    plain = context.new_page()
    plain.goto(server + "/gpus/")
    heads = plain.locator("#gpu-table thead th")
    assert heads.evaluate_all(shown) == ["name", "memory", "bandwidth", "tensor", "price"]
    plain.locator(".wg-columns summary").click()
    plain.locator('.wg-columns input[value="vendor"]').check()
    assert heads.evaluate_all(shown) == ["name", "vendor", "memory", "bandwidth", "tensor", "price"]
    context.close()


def test_sort_and_filters_round_trip_through_the_url(server, page, built_site):
    """A sorted, filtered view is an address a reader can share: the address follows the sort,
    and opening it gives the same rows in the same order."""
    _, ds = built_site
    page.goto(server + "/gpus/?vendor=nvidia")
    every_row(page, "gpu-table", len(ds.gpus))
    header = page.locator("#gpu-table thead th[data-key=memory]")
    header.click()
    assert header.get_attribute("aria-sort") == "descending"
    page.wait_for_function("location.search.includes('sort=memory')")
    assert "vendor=nvidia" in page.url and "dir=desc" in page.url
    shown = visible_ids(page)
    page.goto(page.url)  # a fresh load of the shared address
    every_row(page, "gpu-table", len(ds.gpus))
    page.wait_for_function("location.search.includes('sort=memory')")
    assert page.locator("#gpu-table thead th[data-key=memory]").get_attribute("aria-sort") == "descending"
    again = visible_ids(page)
    assert sorted(again) == sorted(shown)  # the same cards (cards of equal memory may swap places)
    mems = [ds.gpus[g]["memory_gb"] for g in again]
    assert mems == sorted(mems, reverse=True) and all(ds.gpus[g]["vendor"] == "nvidia" for g in shown)
    # back to the default order (by name): the address no longer names a sort
    name = page.locator("#gpu-table thead th[data-key=name]")
    name.click()
    if name.get_attribute("aria-sort") != "ascending":
        name.click()
    page.wait_for_function("!location.search.includes('sort=')")
    assert "vendor=nvidia" in page.url


def test_filters_change_the_rows(server, page, built_site):
    _, ds = built_site
    page.goto(server + "/gpus/")
    page.select_option("#wg-filters select[name=vendor]", "amd")
    every_row(page, "gpu-table", len(ds.gpus))
    assert sorted(visible_ids(page)) == sorted(g for g, r in ds.gpus.items() if r["vendor"] == "amd")
    page.select_option("#wg-filters select[name=vendor]", "")
    page.fill("#wg-filters input[name=mem]", "48")
    assert sorted(visible_ids(page)) == sorted(g for g, r in ds.gpus.items() if r["memory_gb"] >= 48)
    page.fill("#wg-filters input[name=price]", "2000")
    expected = sorted(g for g, r in ds.gpus.items() if r["memory_gb"] >= 48 and r["launch_price_usd"] is not None
                      and r["launch_price_usd"] <= 2000)
    assert sorted(visible_ids(page)) == expected
    assert "mem=48" in page.url and "price=2000" in page.url
    page.click("#wg-filters button[type=reset]")
    page.wait_for_function("document.querySelectorAll('#gpu-table tbody tr[hidden]').length === 0")


def test_filter_state_comes_back_from_the_url(server, page, built_site):
    _, ds = built_site
    page.goto(server + "/gpus/?from=2022&to=2022")
    every_row(page, "gpu-table", len(ds.gpus))
    assert sorted(visible_ids(page)) == sorted(g for g, r in ds.gpus.items() if r["release_date"].year == 2022)


def test_compare_picker_lists_every_card_by_name_from_the_data_file(server, page, built_site):
    """The page carries no card of its own (its size does not grow with the catalogue): each of the
    four selects lists every card, by name, once the data file has arrived; in Korean too."""
    site, ds = built_site
    html = (site / "compare" / "index.html").read_text(encoding="utf-8")
    assert 'value="rtx-4090"' not in html and html.count("<option") == 4
    for prefix in ("", "/ko"):
        page.goto(server + prefix + "/compare/")
        page.wait_for_function("document.querySelectorAll('#wg-compare select[name=gpu3] option').length > 1")
        for i in range(4):
            listed = page.eval_on_selector_all(f"#wg-compare select[name=gpu{i}] option",
                                               "os => os.map(o => [o.value, o.textContent])")
            assert listed[0][0] == "" and sorted(v for v, _ in listed[1:]) == sorted(ds.gpus)
            names = [n for _, n in listed[1:]]
            assert names == sorted(names, key=str.lower), names[:10]
            assert dict(listed[1:])["rtx-4090"] == ds.gpus["rtx-4090"]["name"]


def test_compare_picker_keeps_the_choice_in_the_url(server, page, built_site):
    _, ds = built_site
    page.goto(server + "/compare/")
    page.select_option("#wg-compare select[name=gpu0]", "rtx-4090")
    page.select_option("#wg-compare select[name=gpu1]", "rtx-3090")
    assert "gpus=rtx-4090%2Crtx-3090" in page.url or "gpus=rtx-4090,rtx-3090" in page.url
    heads = page.eval_on_selector_all("#wg-compare-table thead th", "ths => ths.map(t => t.textContent)")
    assert heads[1:] == [ds.gpus["rtx-4090"]["name"], ds.gpus["rtx-3090"]["name"]]
    memory = page.eval_on_selector_all("#wg-compare-table tr[data-field=memory_gb] td", "tds => tds.map(t => t.textContent)")
    assert memory == ["24", "24"]
    page.goto(page.url)
    assert page.eval_on_selector_all("#wg-compare-table thead th", "ths => ths.length") == 3


@pytest.mark.parametrize("a, b", [("2016-07-23", "2019-04-03"), ("2015-08-20", "2020-09-07"), ("2017-04-09", "2018-11-05")])
def test_diff_picker_matches_the_python_diff(server, page, built_site, a, b):
    from generator.facts.diff import diff_revisions

    _, ds = built_site
    page.goto(server + "/diffs/")
    # the page carries one date per select; the picker fills in every revision from the data
    # ... and "today", the site's picks, after them
    options = len(ds.revisions) + (1 if ds.prices else 0)
    page.wait_for_function(f"document.querySelectorAll('#wg-diff select[name=a] option').length === {options}")
    assert page.locator("#wg-diff select[name=b] option").count() == options
    assert page.input_value("#wg-diff select[name=b]") == ds.revisions[-1].id
    page.select_option("#wg-diff select[name=a]", a)
    page.select_option("#wg-diff select[name=b]", b)
    rows = page.eval_on_selector_all("#wg-diff tbody tr", "trs => trs.map(t => t.dataset.persona)")
    d = diff_revisions(ds, a, b)
    expected = ([p.persona for p in d.personas] + (["advised"] if d.advised_added or d.advised_removed else [])
                + (["avoid"] if d.avoid_added or d.avoid_removed else []))
    assert rows == expected
    if d.personas:
        first = d.personas[0]
        cells = page.eval_on_selector_all("#wg-diff tbody tr:first-child td", "tds => tds.map(t => t.textContent)")
        assert cells == [", ".join(ds.gpus[g]["name"] for g in first.removed) or "—",
                         ", ".join(ds.gpus[g]["name"] for g in first.added) or "—"]


def test_revision_selector_navigates(server, page):
    page.goto(server + "/revisions/2019-04-03/")
    page.select_option("select.wg-revision-select", "../2016-07-23/")
    page.wait_for_url(server + "/revisions/2016-07-23/")
    page.goto(server + "/latest/")
    page.select_option("select.wg-revision-select", "../revisions/2017-04-09/")
    page.wait_for_url(server + "/revisions/2017-04-09/")


def test_language_switch_on_a_gpu_page_and_a_diff_page(server, page):
    page.goto(server + "/gpus/rtx-3090/")
    open_language_menu_and_pick(page, "Français")
    page.wait_for_url(server + "/fr/gpus/rtx-3090/")
    page.goto(server + "/zh/diffs/2016-07-23_2017-03-19/")
    open_language_menu_and_pick(page, "한국어")
    page.wait_for_url(server + "/ko/diffs/2016-07-23_2017-03-19/")


def test_decision_tree_is_walkable_without_script(server, browser):
    context = browser.new_context(java_script_enabled=False)
    pg = context.new_page()
    pg.goto(server + "/history/")
    tree = pg.locator(".wg-tree > details")
    # the first question is open: the tree is not one closed box
    assert tree.locator("> .wg-branch").first.is_visible()
    inner = tree.locator("> .wg-branch > details").first
    assert not inner.locator("> .wg-branch").first.is_visible()
    inner.locator("> summary").click()
    assert inner.locator("> .wg-branch").first.is_visible()
    # a question, not a note: Material's question style, not the pencil
    icons = pg.evaluate("""() => {
        const before = getComputedStyle(document.querySelector('.wg-tree summary'), '::before');
        const shown = before.getPropertyValue('mask-image') || before.getPropertyValue('-webkit-mask-image');
        const root = getComputedStyle(document.documentElement);
        const path = (v) => (decodeURIComponent(v).match(/ d=.([^"']+)/) || [])[1];
        return {shown: path(shown), question: path(root.getPropertyValue('--md-admonition-icon--question')),
                note: path(root.getPropertyValue('--md-admonition-icon--note'))};
    }""")
    assert icons["shown"] and icons["shown"] == icons["question"] != icons["note"]
    context.close()


def test_shared_data_is_loaded_only_where_it_is_used(server, page):
    """The catalogue and GPU pages never fetch the shared data file; the compare page and the
    revision selector load it after the page has rendered, and then work."""
    requested = []
    page.on("request", lambda r: requested.append(r.url) if r.url.endswith("/whichgpu-data.js") else None)
    for path in ("/gpus/", "/gpus/rtx-2070/", "/ko/", "/calculators/memory-dense/"):
        page.goto(server + path)
        page.wait_for_load_state("networkidle")
    assert requested == []
    page.goto(server + "/revisions/2019-04-03/")
    options = page.locator("select.wg-revision-select option")
    page.wait_for_function("document.querySelectorAll('select.wg-revision-select option').length > 10")
    assert options.count() >= 18
    assert requested == [server + "/assets/data/whichgpu-data.js"]
    page.goto(server + "/fr/compare/?gpus=rtx-3090,rtx-4090")
    page.locator("#wg-compare-table").wait_for(state="visible")
    assert page.locator("#wg-compare-table thead th").count() == 3
    assert requested[-1] == server + "/fr/assets/data/whichgpu-data.js"


def test_pages_that_load_the_shared_data_are_the_ones_the_preview_expects(server, page, built_site):
    """The preview writes the data file in its first step only for pages that read it
    (generator.site.pipeline.uses_client_data); the browser agrees, page by page."""
    from generator.site.pipeline import uses_client_data

    site, _ = built_site
    requested = []
    page.on("request", lambda r: requested.append(r.url) if r.url.endswith("/whichgpu-data.js") else None)
    seen = {}
    for path in ("", "gpus/", "gpus/rtx-2070/", "revisions/2019-04-03/", "latest/", "compare/", "diffs/",
                 "calculators/memory-llm/", "calculators/picker/", "calculators/memory-dense/", "accuracy/",
                 "models/", "history/", "ko/calculators/picker/"):
        del requested[:]
        page.goto(f"{server}/{path}")
        page.wait_for_load_state("networkidle")
        html = (site / path / "index.html").read_text(encoding="utf-8")
        seen[path] = (bool(requested), uses_client_data(html))
    assert all(loaded == expected for loaded, expected in seen.values()), seen
    assert sum(loaded for loaded, _ in seen.values()) >= 6, seen


# Every shift counts: nothing is typed or clicked here (the emulated touch screen marks shifts
# as following input, so hadRecentInput cannot be used to filter).
LAYOUT_SHIFTS = """window.__shift = 0; new PerformanceObserver((list) => {
  for (const e of list.getEntries()) window.__shift += e.value; }).observe({ type: "layout-shift", buffered: true });"""


@pytest.mark.parametrize("path", ["/gpus/", "/ko/gpus/", "/models/", "/fr/revisions/2019-04-03/",
                                  "/ko/revisions/2016-09-30/", "/zh/latest/"])
def test_nothing_moves_when_the_scripts_fill_the_page(server, browser, path):
    """The filter count, the revision selector, the sort icons and the theme's header buttons
    are filled after rendering, and long tables are painted before the browser has read every
    row; their room is reserved, so the page does not shift (cumulative layout shift on a
    phone-sized screen). The processor is slowed six times, as a phone's is, so the browser
    paints while it is still reading the page, the state in which the shifts happen."""
    context = browser.new_context(viewport={"width": 412, "height": 823}, is_mobile=True, has_touch=True)
    pg = context.new_page()
    context.new_cdp_session(pg).send("Emulation.setCPUThrottlingRate", {"rate": 6})
    pg.add_init_script(LAYOUT_SHIFTS)
    pg.goto(server + path)
    pg.wait_for_load_state("networkidle")
    pg.wait_for_timeout(1000)
    shift = pg.evaluate("window.__shift")
    context.close()
    assert shift < 0.01


PARTIAL_TABLE = """(sel) => {
  const t = document.querySelector(sel);
  const measure = () => ({caption: t.caption.getBoundingClientRect().height,
    widths: [...t.tHead.rows[0].cells].map(c => Math.round(c.getBoundingClientRect().width))});
  const whole = measure();
  const rows = [...t.tBodies[0].rows];
  rows.slice(3).forEach(r => r.remove());
  const firstRows = measure();
  const cells = [...t.tHead.rows[0].cells].slice(1);
  rows.slice(0, 3).forEach(r => r.remove());
  cells.forEach(c => c.remove());
  const firstCell = measure();
  return {whole, firstRows, firstCell};
}"""


@pytest.mark.parametrize("path", ["/gpus/", "/ko/gpus/", "/zh/gpus/"])
def test_a_long_table_read_in_part_is_laid_out_as_the_whole(server, browser, path):
    """While the browser reads a long table it lays out what it has read: the first rows, or
    only the first heading. Neither may size differently from the whole table, or the page
    moves when the rest comes: the columns of the first rows are as wide as with every row
    (a long memory description further down once widened its column), and the caption is as
    tall above the first heading alone as above every column."""
    context = browser.new_context(viewport={"width": 412, "height": 823}, is_mobile=True, has_touch=True)
    pg = context.new_page()
    pg.goto(server + path)
    got = pg.evaluate(PARTIAL_TABLE, "#gpu-table")
    context.close()
    assert got["firstRows"]["widths"] == got["whole"]["widths"]
    assert got["firstCell"]["caption"] == got["whole"]["caption"]


@pytest.mark.parametrize("lang", ["", "ko/", "zh/", "fr/"])
def test_today_filters_round_trip_through_the_url(server, page, built_site, lang):
    """Today's cards: choosing a ranking, a budget and a memory floor re-ranks and hides rows and
    writes the choice into the address; opening that address gives the same rows back."""
    page.goto(f"{server}/{lang}today/")
    form = page.locator("#wg-today-filters")
    rows = page.locator("#today-table tbody tr")
    total = int(page.locator("#today-table tbody").get_attribute("data-wg-total") or rows.count())
    assert total >= 20
    form.locator('[name="workload"]').select_option("llm-inference")
    every_row(page, "today-table", total)
    form.locator('[name="budget"]').fill("1000")
    form.locator('[name="memory"]').fill("16")
    form.locator('[name="memory"]').dispatch_event("change")
    page.wait_for_function("location.search.includes('memory=16')")
    assert "workload=llm-inference" in page.url and "budget=1000" in page.url
    shown = page.locator("#today-table tbody tr:not([hidden])")
    kept = [shown.nth(i).get_attribute("data-gpu") for i in range(shown.count())]
    assert 0 < len(kept) < total
    for i in range(shown.count()):
        row = shown.nth(i)
        assert float(row.get_attribute("data-buy")) <= 1000 and float(row.get_attribute("data-usable")) >= 16
    def per(row):  # tokens/s per dollar of price and electricity at the default price
        values = json.loads(row.get_attribute("data-values"))
        kwh = float(row.get_attribute("data-kwh") or 0)
        return values.get("decode_8b", 0) / (float(row.get_attribute("data-buy")) + kwh * 0.17)
    rows_shown = [shown.nth(i) for i in range(shown.count())]
    runs = [r.get_attribute("data-support") in ("", "current") for r in rows_shown]
    assert runs == sorted(runs, reverse=True)  # cards today's software runs come first
    ranked = [per(r) for r, ok in zip(rows_shown, runs, strict=True) if ok]
    assert ranked == sorted(ranked, reverse=True)
    url = page.url
    page.goto("about:blank")
    page.goto(url)
    every_row(page, "today-table", total)
    assert form.locator('[name="workload"]').input_value() == "llm-inference"
    assert form.locator('[name="budget"]').input_value() == "1000"
    back = page.locator("#today-table tbody tr:not([hidden])")
    assert [back.nth(i).get_attribute("data-gpu") for i in range(back.count())] == kept


def test_compare_marks_the_best_of_each_row(server, page, built_site):
    """More memory and speed, less power and price: the best chosen card of each row is marked
    (in bold and in words for screen readers); a row where the cards tie or only one has the
    figure marks nothing; per-dollar figures come from the build, to three significant digits."""
    _, ds = built_site
    page.goto(server + "/compare/?gpus=rtx-4090,rtx-3090,apple-m3-ultra")
    page.wait_for_selector("#wg-compare-table:not([hidden])")

    def cells(field):
        return page.eval_on_selector_all(f"#wg-compare-table tr[data-field={field}] td",
                                         "tds => tds.map(t => [t.className, t.textContent])")

    memory = cells("memory_gb")
    assert [cls for cls, _ in memory] == ["", "", "wg-best"]
    assert memory[2][1].startswith("512") and "best of the cards compared" in memory[2][1]
    assert page.locator("#wg-compare-table td.wg-best .wg-sr").first.bounding_box()["width"] <= 1
    price = cells("launch_price_usd")
    best_price = min((ds.gpus[g]["launch_price_usd"], g) for g in ("rtx-4090", "rtx-3090"))[1]
    assert [cls for cls, _ in price][["rtx-4090", "rtx-3090", "apple-m3-ultra"].index(best_price)] == "wg-best"
    assert [cls for cls, _ in cells("fp16_tensor_tflops")].count("wg-best") == 1
    assert cells("vendor")[2][1] == "Apple"
    per = cells("tensor_per_kusd")
    digits = [len(text.split(" (")[0].replace(",", "").replace(".", "").lstrip("0")) for _, text in per if text != "—"]
    assert digits and max(digits) <= 3


@pytest.mark.parametrize("lang", ["", "ko/"])
def test_charts_on_a_phone_say_they_scroll_and_show_a_tapped_point(server, browser, lang):
    """A chart keeps a readable size on a phone and scrolls sideways: a line above it says so,
    and a tap a few pixels off a point writes that point's values under the chart."""
    context = browser.new_context(viewport={"width": 390, "height": 844}, is_mobile=True, has_touch=True)
    pg = context.new_page()
    pg.goto(f"{server}/{lang}charts/")
    fig = pg.locator("#wg-chart-spec-fp32")
    fig.scroll_into_view_if_needed()
    cue = fig.locator(".wg-chart__cue")
    assert cue.is_visible()
    box = cue.bounding_box()
    assert box["x"] >= 0 and box["x"] + box["width"] <= 390
    assert fig.locator(".wg-chart__plot").evaluate("e => e.scrollWidth > e.clientWidth + 100")
    picked = fig.locator(".wg-chart__picked")
    hint = picked.inner_text()
    assert hint and picked.get_attribute("aria-live") == "polite"
    point = fig.locator("g.pt").first  # the oldest card, alone in its corner
    title = point.locator("title").text_content()
    b = point.bounding_box()
    pg.touchscreen.tap(b["x"] + b["width"] / 2 + 5, b["y"] + b["height"] / 2 + 4)
    assert picked.inner_text() == title != hint
    assert "wg-picked" in point.get_attribute("class")
    context.close()
    desktop = browser.new_page(viewport={"width": 1280, "height": 900})
    desktop.goto(f"{server}/{lang}charts/")
    assert not desktop.locator("#wg-chart-spec-fp32 .wg-chart__cue").is_visible()
    desktop.close()


def test_compare_dates_stay_on_one_line_on_a_phone(server, browser):
    context = browser.new_context(viewport={"width": 390, "height": 844}, is_mobile=True)
    pg = context.new_page()
    pg.goto(server + "/compare/?gpus=rtx-3090,rtx-4090,rx-7900-xtx,a100-sxm4-80gb")
    cells = pg.locator('#wg-compare-table tr[data-field="release_date"] td')
    cells.first.wait_for()
    assert cells.count() >= 3
    for i in range(cells.count()):
        cell = cells.nth(i)
        lines = cell.evaluate("td => td.getBoundingClientRect().height / parseFloat(getComputedStyle(td).lineHeight)")
        assert lines < 1.9, (cell.inner_text(), lines)
    context.close()


SCHEME_AT_CONTENT = """window.wgFirstScheme = null;
new MutationObserver((list, obs) => {
  if (!document.querySelector("article h1")) return;
  window.wgFirstScheme = document.body.getAttribute("data-md-color-scheme");
  obs.disconnect();
}).observe(document, { childList: true, subtree: true });"""


def _luminance(rgb: str) -> float:
    r, g, b = (int(x) for x in rgb[rgb.index("(") + 1:rgb.index(")")].split(",")[:3])
    return 0.2126 * r + 0.7152 * g + 0.0722 * b


def test_the_colour_scheme_is_right_before_the_content_is_read_and_the_toggle_keeps_a_choice(server, browser):
    """A reader whose system is dark gets the dark scheme before the page's content is parsed
    (no light flash, no restyling of the whole page after the first paint); the toggle switches,
    by mouse and by keyboard, and a choice outlives a reload. Without JavaScript no toggle shows."""
    context = browser.new_context(color_scheme="dark", viewport={"width": 412, "height": 823}, is_mobile=True)
    pg = context.new_page()
    pg.add_init_script(SCHEME_AT_CONTENT)
    pg.goto(server + "/ko/gpus/")
    pg.wait_for_load_state("load")
    assert pg.evaluate("window.wgFirstScheme") == "slate"
    assert _luminance(pg.evaluate("getComputedStyle(document.body).backgroundColor")) < 80
    assert pg.get_attribute("meta[name=color-scheme]", "content") == "dark"
    pg.wait_for_function("/^#[0-9a-f]{6}$/.test(document.querySelector('meta[name=theme-color]').content)")
    toggle = pg.locator("form[data-wg-palette] label:visible")
    assert toggle.count() == 1
    checked = "form[data-wg-palette] input:checked"
    to_light = pg.get_attribute(checked, "aria-label")
    assert to_light == "밝은 색 구성으로 전환"  # the page's language, and the scheme it switches to
    toggle.click()
    assert pg.evaluate("document.body.getAttribute('data-md-color-scheme')") == "default"
    assert _luminance(pg.evaluate("getComputedStyle(document.body).backgroundColor")) > 200
    assert pg.get_attribute("meta[name=color-scheme]", "content") == "light"
    assert pg.get_attribute(checked, "aria-label") == "어두운 색 구성으로 전환"
    pg.wait_for_function("!document.body.hasAttribute('data-md-color-switching')")
    pg.reload()
    pg.wait_for_load_state("load")
    assert pg.evaluate("window.wgFirstScheme") == "default"  # the choice holds against the system's scheme
    pg.focus(checked)
    pg.keyboard.press("Enter")
    assert pg.evaluate("document.body.getAttribute('data-md-color-scheme')") == "slate"
    assert pg.get_attribute(checked, "aria-label") == to_light
    context.close()
    # without JavaScript no button shows, since none would work
    context = browser.new_context(color_scheme="dark", java_script_enabled=False)
    pg = context.new_page()
    pg.goto(server + "/ko/gpus/")
    assert pg.locator("form[data-wg-palette] label").count() == 2
    assert pg.locator("form[data-wg-palette] label:visible").count() == 0
    context.close()


def _drawing_fonts(pg, selector):
    """The installed fonts that drew the glyphs of the first element matching selector
    (family name -> glyphs), as the browser reports them."""
    cdp = pg.context.new_cdp_session(pg)
    cdp.send("DOM.enable")
    cdp.send("CSS.enable")
    root = cdp.send("DOM.getDocument")["root"]["nodeId"]
    node = cdp.send("DOM.querySelector", {"nodeId": root, "selector": selector})["nodeId"]
    counts: dict[str, int] = {}
    for font in cdp.send("CSS.getPlatformFontsForNode", {"nodeId": node})["fonts"]:
        counts[font["familyName"]] = counts.get(font["familyName"], 0) + font["glyphCount"]
    cdp.detach()
    return counts


@pytest.mark.parametrize("lang", ["ko/", "zh/"])
def test_korean_and_chinese_text_is_drawn_from_a_font_the_page_names(server, page, lang):
    """A Korean or Chinese paragraph is drawn mostly by a font named in the page's own font list.
    The theme names only Latin fonts, and then the browser searched the system's fonts for every
    character of the page's script, which doubled its layout time."""
    page.goto(server + "/" + lang)
    fonts = _drawing_fonts(page, "article p")
    assert fonts, "the paragraph was not drawn"
    family = page.eval_on_selector("article p", "e => getComputedStyle(e).fontFamily")
    named = {f.strip().strip('"').lower() for f in family.split(",")}
    main_font = max(fonts, key=fonts.get)
    assert main_font.lower() in named, (main_font, fonts, named)


def test_the_catalogues_notes_are_laid_out_when_a_reader_reaches_them(server, browser):
    """On a phone the notes under the catalogue's long table are not laid out on load (they are
    far below the screen); scrolled to, they are drawn in full and readable."""
    context = browser.new_context(viewport={"width": 412, "height": 823}, is_mobile=True, has_touch=True)
    pg = context.new_page()
    pg.goto(server + "/ko/gpus/")
    pg.wait_for_load_state("load")
    notes = "#notes ~ ul"
    skipped = "e => !e.checkVisibility({contentVisibilityAuto: true})"
    assert pg.eval_on_selector(notes + " li strong", skipped), "the notes were laid out on load"
    assert _drawing_fonts(pg, notes + " li") == {}
    assert not pg.eval_on_selector("#notes", skipped)  # the heading itself is laid out, for links to it
    pg.eval_on_selector(notes, "e => e.scrollIntoView()")
    pg.wait_for_function(f"document.querySelector('{notes} li strong').checkVisibility({{contentVisibilityAuto: true}})")
    first = pg.locator(notes + " li").first
    assert first.is_visible() and first.bounding_box()["height"] > 10
    assert sum(_drawing_fonts(pg, notes + " li").values()) > 20
    context.close()
