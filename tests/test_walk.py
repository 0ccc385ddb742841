"""A walk through the site as its readers take it, at desktop and phone size: a buyer with a
budget, someone checking whether a model fits a card, a historian, a catalogue user, a chart
reader and a searcher. Each journey asserts what the reader sees (the text, that it is on the
screen and not covered, that it can be read against its background) in the state the reader
reaches, and saves a screenshot of that state to build/walk/ (ignored by git) for a person to
look at."""
from __future__ import annotations

import re

import pytest
from helpers import LLM_URL, ROOT, last, llm_field, root_of, wait_ready

SIZES = {"desktop": {"width": 1280, "height": 800}, "phone": {"width": 390, "height": 844}}
SHOTS = ROOT / "build" / "walk"

# WCAG contrast of an element's text against the first opaque background behind it
CONTRAST = """(el) => {
  const parse = (c) => {
    const m = (c.match(/[\\d.]+/g) || []).map(Number);
    return { r: m[0], g: m[1], b: m[2], a: m.length > 3 ? m[3] : 1 };
  };
  const lum = (c) => { const f = (v) => { v /= 255; return v <= 0.03928 ? v / 12.92 : Math.pow((v + 0.055) / 1.055, 2.4); };
                       return 0.2126 * f(c.r) + 0.7152 * f(c.g) + 0.0722 * f(c.b); };
  let bg = null;
  for (let n = el; n && n.nodeType === 1; n = n.parentElement) {
    const c = parse(getComputedStyle(n).backgroundColor);
    if (c.a > 0.5) { bg = c; break; }
  }
  bg = bg || { r: 255, g: 255, b: 255 };
  let fg = parse(getComputedStyle(el).color);
  fg = { r: fg.r * fg.a + bg.r * (1 - fg.a), g: fg.g * fg.a + bg.g * (1 - fg.a), b: fg.b * fg.a + bg.b * (1 - fg.a) };
  const a = lum(fg), b = lum(bg);
  return (Math.max(a, b) + 0.05) / (Math.min(a, b) + 0.05);
}"""


@pytest.fixture(params=sorted(SIZES))
def reader(request, browser):
    size = request.param
    phone = size == "phone"
    context = browser.new_context(viewport=SIZES[size], is_mobile=phone, has_touch=phone)
    page = context.new_page()
    yield size, page
    context.close()


def shot(page, journey: str, size: str) -> None:
    SHOTS.mkdir(parents=True, exist_ok=True)
    page.screenshot(path=str(SHOTS / f"{journey}-{size}.png"))


def seen(page, locator, min_contrast: float = 4.5) -> str:
    """The element is on the screen, on top (not covered), readable; returns its text."""
    locator.scroll_into_view_if_needed()
    box = locator.bounding_box()
    view = page.viewport_size
    assert box and box["width"] > 0 and box["height"] > 0
    assert box["x"] >= -1 and box["x"] + min(box["width"], 40) <= view["width"] + 1, box
    assert box["y"] >= -1 and box["y"] + min(box["height"], 20) <= view["height"] + 1, box
    x, y = box["x"] + min(box["width"], 40) / 2, box["y"] + min(box["height"], 20) / 2
    on_top = page.evaluate("([x, y, el]) => { const hit = document.elementFromPoint(x, y);"
                           " return !!hit && (el.contains(hit) || hit.contains(el)); }", [x, y, locator.element_handle()])
    assert on_top, "covered by another element"
    ratio = locator.evaluate(CONTRAST)
    assert ratio >= min_contrast, (locator.inner_text()[:60], ratio)
    return locator.inner_text()


def test_buyer_starts_on_the_home_page_and_gets_a_card(server, reader):
    size, page = reader
    page.goto(server + "/")
    start = page.locator("form.wg-start")
    box = start.bounding_box()
    assert box["y"] + box["height"] <= SIZES[size]["height"] * 1.6  # the start is near the top, not buried
    start.locator('[name="budget"]').fill("1500")
    start.locator('[name="workload"]').select_option("transformer")
    start.locator('[name="memory"]').fill("24")
    start.locator('button[type="submit"]').first.click()
    page.wait_for_url(re.compile(r"/calculators/picker/\?budget=1500"))
    wait_ready(page, "picker")
    first = root_of(page, "picker").locator("tbody tr").first.locator("th a")
    assert seen(page, first) in ("GeForce RTX 3090", "GeForce RTX 3090 Ti", "GeForce RTX 4090")
    shot(page, "buyer", size)


def test_model_checker_picks_a_model_and_a_card(server, reader):
    size, page = reader
    page.goto(server + LLM_URL)
    wait_ready(page, "llm")
    model = llm_field(page, "model")
    model.fill("")
    model.press_sequentially("Llama 3.1 8B")
    model.press("Tab")
    llm_field(page, "runtime").select_option("llama.cpp")
    llm_field(page, "weights").select_option("q4_k_m")
    card = llm_field(page, "card")
    card.fill("")
    card.press_sequentially("GeForce RTX 3060")
    card.press("Tab")
    result = last(page, "llm")
    assert result["basis"]["model"] == "llama-3-1-8b" and result["fits"] is True
    status = root_of(page, "llm").locator('[data-wg-out="status"]')
    text = seen(page, status)
    assert f'{result["memory"]["total_bytes"] / 2**30:.2f}' in text
    decode = seen(page, root_of(page, "llm").locator('[data-wg-out="o_decode"]'))
    band = result["error"]["decode_tokens_per_s"]["median_pct"]
    assert f"±{band:g} %" in decode  # the speed carries its measured error
    shot(page, "model-fit", size)


def test_historian_reads_the_matrix_and_compares_two_revisions(server, reader):
    size, page = reader
    page.goto(server + "/history/")
    matrix = page.locator("#wg-matrix")
    matrix.scroll_into_view_if_needed()
    first_cell = matrix.locator('tbody tr td[data-persona="best-overall"]').first
    assert seen(page, first_cell).strip()  # the newest row already holds advice
    flow = matrix.locator('tbody td[data-persona="best-overall"].wg-from-tree').first
    assert "GeForce RTX 4090" in flow.inner_text()
    # scrolled down the matrix's own box, the profiles' names stay in view above the cells
    matrix.locator("tbody tr").last.scroll_into_view_if_needed()
    head = matrix.locator('thead th[data-persona="best-overall"]')
    box, wrap = head.bounding_box(), matrix.locator("xpath=..").bounding_box()
    assert wrap["y"] - 1 <= box["y"] <= wrap["y"] + 1, (box, wrap)
    shot(page, "history", size)
    page.goto(server + "/diffs/")
    page.select_option("#wg-diff select[name=a]", "2016-07-23")
    page.select_option("#wg-diff select[name=b]", "2019-04-03")
    added = page.locator("#wg-diff td.wg-added").first
    page.wait_for_function("document.querySelectorAll('#wg-diff tbody tr').length > 0")
    assert seen(page, added).strip()
    assert seen(page, page.locator("#wg-diff td.wg-removed").first).strip()
    shot(page, "diff", size)


def test_catalogue_user_filters_sorts_and_keeps_the_names(server, reader, built_site):
    size, page = reader
    _, ds = built_site
    page.goto(server + "/gpus/")
    page.wait_for_selector("#gpu-table thead th[role]")  # the sort script is in
    page.select_option("#wg-filters select[name=vendor]", "amd")
    page.wait_for_function("location.search.includes('vendor=amd')")
    page.locator("#gpu-table thead th[data-key=memory]").click()
    page.wait_for_function("location.search.includes('sort=memory')")
    top = max(g["memory_gb"] for g in ds.gpus.values() if g["vendor"] == "amd")
    first = page.locator("#gpu-table tbody tr:not([hidden])").first
    assert ds.gpus[first.get_attribute("id")]["memory_gb"] == top
    name = first.locator("th a")
    assert seen(page, name) == ds.gpus[first.get_attribute("id")]["name"]
    # scrolled sideways, the names stay in view
    page.locator(".wg-columns summary").click()
    for key in ("vendor", "arch", "release", "fp32", "tdp", "segment", "sources"):
        page.locator(f'.wg-columns input[value="{key}"]').check()
    wrap = page.locator("#gpu-table").locator("xpath=ancestor::div[contains(@class, 'wg-table-wrap')][1]")
    scrolled = wrap.evaluate("w => { w.scrollLeft = w.scrollWidth; return w.scrollLeft; }")
    assert scrolled > 0  # every column shown: wider than the screen, also on a desktop
    assert abs(name.bounding_box()["x"] - wrap.bounding_box()["x"]) <= 12
    seen(page, name)
    shot(page, "catalogue", size)


def test_chart_reader_gets_a_point_s_values(server, reader):
    size, page = reader
    page.goto(server + "/charts/")
    fig = page.locator("#wg-chart-spec-tensor")
    fig.scroll_into_view_if_needed()
    cue = fig.locator(".wg-chart__cue")
    assert cue.is_visible() == (size == "phone")
    point = fig.locator("g.pt").first
    title = point.locator("title").text_content()
    b = point.bounding_box()
    if size == "phone":
        page.touchscreen.tap(b["x"] + b["width"] / 2, b["y"] + b["height"] / 2)
    else:
        page.mouse.click(b["x"] + b["width"] / 2, b["y"] + b["height"] / 2)
    picked = fig.locator(".wg-chart__picked")
    assert seen(page, picked) == title
    shot(page, "chart", size)


@pytest.mark.parametrize("lang, query, expect", [("fr/", "memoire", "Mémoire"), ("ko/", "타이탄", "TITAN")])
def test_searcher_finds_what_they_typed(server, reader, lang, query, expect):
    size, page = reader
    page.goto(f"{server}/{lang}")
    if size == "phone":
        page.locator("label[for='__search']").first.click()
    page.locator("input.md-search__input").click()
    page.keyboard.type(query, delay=20)
    page.keyboard.press("End")
    item = page.locator(".md-search-result__item").first
    item.wait_for()
    # the list is drawn again for each letter typed: read it once two looks 300 ms apart agree
    page.wait_for_function("""() => { const l = document.querySelector('.md-search-result__list');
      const now = l && l.children.length ? l.innerHTML : null, same = now !== null && now === window.wgLastList;
      window.wgLastList = now; return same; }""", polling=300)
    assert expect in seen(page, item.locator("h1, h2").first, 4.5) + item.inner_text()
    shot(page, f"search-{lang.strip('/')}", size)
