"""The calculators in Chromium: golden cases typed into the pages, messages, URL state, keyboard
use, Korean text, the language menu, instant navigation, the decision-tree walker and the
large-model calculator against `python -m generator estimate`.

Most tests run on a site built from the fixture data (tests/fixtures/valid plus a decision tree
and the project's interface texts), so they do not depend on the state of data/; one test checks
that the picker page shows what formulas.mjs ranks on the real site's data.
"""
from __future__ import annotations

import functools
import http.server
import json
import math
import os
import re
import threading
from pathlib import Path

import pytest
import yaml
from helpers import (
    EPOCH,
    LLM_URL,
    ROOT,
    TREE_YAML,
    DataTree,
    at,
    last,
    llm_field,
    open_language_menu_and_pick,
    root_of,
    run_calcs_js,
    wait_ready,
)

from generator.data.calculators import calculators, with_pages

FIXTURE = json.loads((ROOT / "tests" / "fixtures" / "calculators.json").read_text(encoding="utf-8"))
# The cases of the calculators whose results follow from the typed fields alone (the others read
# the fixture's catalogue, which a built page does not have).
TYPED = [case for c in calculators() if not c.client_data for case in c.cases]
NUMERIC = re.compile(r"NaN|Infinity|undefined")


class _Quiet(http.server.SimpleHTTPRequestHandler):
    def log_message(self, *args):
        pass


def _serve(directory: Path, port: int = 0):
    handler = functools.partial(_Quiet, directory=str(directory))
    httpd = http.server.ThreadingHTTPServer(("127.0.0.1", port), handler)
    threading.Thread(target=httpd.serve_forever, daemon=True).start()
    return httpd


def _build(base: Path, site_url: str | None = None) -> Path:
    """The fixture data with the project's texts and a decision tree, built in four languages."""
    from generator.site.pipeline import Paths, build_site

    tree = DataTree(base)
    tree.use_real_ui(translations=True)
    tree.write("revisions/2019-04-03.yaml", tree.read("revisions/2019-04-03.yaml") + TREE_YAML)
    env = {"SOURCE_DATE_EPOCH": EPOCH, "WHICHGPU_SITE_URL": site_url}
    old = {k: os.environ.get(k) for k in env}
    try:
        for k, v in env.items():
            if v is None:
                os.environ.pop(k, None)
            else:
                os.environ[k] = v
        paths = Paths(root=ROOT, data=tree.data, build=base / "build", site=base / "site")
        build_site(paths)
    finally:
        for k, v in old.items():
            if v is None:
                os.environ.pop(k, None)
            else:
                os.environ[k] = v
    return paths.site


@pytest.fixture(scope="module")
def calc_site(tmp_path_factory):
    return _build(tmp_path_factory.mktemp("calcsite"))


@pytest.fixture(scope="module")
def site_server(calc_site):
    httpd = _serve(calc_site)
    yield f"http://127.0.0.1:{httpd.server_address[1]}"
    httpd.shutdown()


# ------------------------------------------------------------------ helpers

def set_field(page, scope, name, value):
    """Type a value as a reader would: choose an option, tick a box or replace the text."""
    field = scope.locator(f'[name="{name}"], [data-wg-lf="{name}"]').first
    tag = field.evaluate("e => e.tagName + ':' + (e.type || '')")
    if field.is_disabled():
        field.evaluate("(e, v) => { if (e.type === 'checkbox') e.checked = v === '1'; else e.value = v; }", value)
    elif tag.startswith("SELECT"):
        options = field.evaluate("e => [...e.options].map(o => o.value)")
        if value not in options:
            pytest.skip(f"{value!r} is not an option of {name}: only a URL can send it (covered by the unit tests)")
        field.select_option(value)
    elif tag == "INPUT:checkbox":
        field.set_checked(value == "1")
    else:
        field.fill(value)


def type_case(page, case):
    name = case["calc"]
    scope = root_of(page, name)
    raw = dict(case["input"])
    layers = raw.pop("layers", None) if name == "cnn" else None
    selects = [k for k in raw if scope.locator(f'select[name="{k}"], input[type="checkbox"][name="{k}"]').count()]
    for key in selects + [k for k in raw if k not in selects]:
        set_field(page, scope, key, raw[key])
    if layers is not None:
        while scope.locator("[data-wg-remove]").count():
            scope.locator("[data-wg-remove]").first.click()
        for layer in layers:
            if layer.get("type") not in ("conv", "pool", "reduce"):
                pytest.skip("a layer type the page cannot add (covered by the unit tests)")
            scope.locator(f'[data-wg-add="{layer["type"]}"]').click()
            row = scope.locator("[data-wg-layers] > li").last
            for key, value in layer.items():
                if key != "type":
                    set_field(page, row, key, value)


def expected_message(scope, error) -> str:
    text = scope.get_attribute("data-m-" + error["key"].replace(".", "-"))
    for k, v in error["params"].items():
        if isinstance(v, bool) or not isinstance(v, (int, float)):
            shown = str(v)
        else:  # a whole number without its ".0", grouped as the page groups it ("0.01" stays)
            shown = f"{int(v):,}" if float(v).is_integer() else f"{v:,}"
        text = text.replace("{" + k + "}", shown)
    return text


def close(actual, expected, tol, where):
    if isinstance(expected, (int, float)) and not isinstance(expected, bool):
        assert isinstance(actual, (int, float)) and math.isfinite(actual), f"{where}: {actual!r}"
        assert abs(actual - expected) <= tol * max(1, abs(expected)), f"{where}: {actual!r} != {expected!r}"
    elif isinstance(expected, list):
        assert isinstance(actual, list) and len(actual) == len(expected), f"{where}: {actual!r}"
        for i, (a, e) in enumerate(zip(actual, expected, strict=False)):
            close(a, e, tol, f"{where}[{i}]")
    else:
        assert actual == expected, f"{where}: {actual!r} != {expected!r}"


PAGE_OF = {c.id: c.page for c in with_pages()}


# ------------------------------------------------------------------ golden cases, typed

@pytest.mark.parametrize("case", TYPED, ids=[c["id"] for c in TYPED])
def test_golden_case_typed_into_the_page(site_server, page, case):
    name = case["calc"]
    lang = case.get("lang", "en")
    page.goto(f"{site_server}/{'' if lang == 'en' else lang + '/'}calculators/{PAGE_OF[name]}/")
    wait_ready(page, name)
    type_case(page, case)
    scope = root_of(page, name)
    text = scope.inner_text()
    assert not NUMERIC.search(text), NUMERIC.search(text).group(0)
    if "errors" in case:
        assert last(page, name) is None
        shown = {}
        for slot in scope.locator("[data-wg-err], [data-wg-lerr]").all():
            if slot.inner_text().strip():
                shown[slot.get_attribute("data-wg-err") or slot.get_attribute("data-wg-lerr")] = slot
        for field, error in case["errors"].items():
            short = field.split(".")[-1]
            if field.startswith("layers."):
                index = int(field.split(".")[1])
                slot = scope.locator("[data-wg-layers] > li").nth(index).locator(f'[data-wg-lerr="{short}"]')
            else:
                slot = scope.locator(f'[data-wg-err="{short}"]')
            assert slot.inner_text() == expected_message(scope, error), field
            # next to the field: in the same field box as its input, which is marked invalid
            box = slot.locator("xpath=..")
            control = box.locator("input, select").first
            assert control.get_attribute("aria-invalid") == "true", field
            assert slot.get_attribute("id") in (control.get_attribute("aria-describedby") or ""), field
        assert len(shown) == len(case["errors"]), sorted(shown)
        assert page.locator(f'[data-wg-calc="{name}"] [data-wg-out="status"]').inner_text() == scope.get_attribute("data-m-calc-common-fix")  # noqa: E501
        return
    result = last(page, name)
    assert result is not None, scope.inner_text()
    for path, expected in case["expect"].items():
        close(at(result, path), expected, case.get("tol", FIXTURE["tolerance"]), path)


@pytest.mark.parametrize("value", ["", "abc", "-3", "0", "1e999", "12,5,6", "NaN", "Infinity", " "])
def test_bad_input_shows_a_message_and_never_nan(site_server, page, value):
    page.goto(f"{site_server}/calculators/cloud/")
    wait_ready(page, "cloud")
    scope = root_of(page, "cloud")
    for field in ("desktop", "util", "kwh", "spot"):
        scope.locator(f'[name="{field}"]').fill(value)
        if field == "kwh" and value in ("0",):
            continue  # free electricity is allowed
        slot = scope.locator(f'[data-wg-err="{field}"]')
        assert slot.inner_text().strip(), (field, value)
        assert scope.locator(f'[name="{field}"]').get_attribute("aria-invalid") == "true"
        assert not NUMERIC.search(scope.inner_text())
        scope.locator(f'[name="{field}"]').fill({"desktop": "2200", "util": "15", "kwh": "0.12", "spot": "0.9"}[field])
        assert slot.inner_text() == ""
        assert scope.locator(f'[name="{field}"]').get_attribute("aria-invalid") is None


# ------------------------------------------------------------------ state in the URL

STATES = {
    "dense": {"layers": "784, 300, 10", "batch": "1,000"},
    "llm": {"mode": "lora", "params": "7.5", "kv_heads": "4", "context": "1,024", "batch": "2", "ckpt": "1"},
    "cloud": {"util": "40", "kwh": "0.3", "spot": "1.1"},
    "picker": {"workload": "rnn", "memory": "6", "budget": "600", "prices": "used"},
}


@pytest.mark.parametrize("name", sorted(STATES))
def test_url_state_round_trips(site_server, page, browser, name):
    page.goto(f"{site_server}/calculators/{PAGE_OF[name]}/")
    wait_ready(page, name)
    scope = root_of(page, name)
    for key, value in STATES[name].items():
        set_field(page, scope, key, value)
    before = last(page, name)
    url = page.url
    assert "?" in url
    fresh = browser.new_context().new_page()
    try:
        fresh.goto(url)
        wait_ready(fresh, name)
        assert last(fresh, name) == before
        for key in STATES[name]:
            got = fresh.locator(f'[data-wg-calc="{name}"] [name="{key}"]')
            if got.evaluate("e => e.type") == "checkbox":
                assert got.is_checked()
            else:
                assert got.input_value().replace(",", "") == STATES[name][key].replace(",", "")
    finally:
        fresh.context.close()


def test_cnn_layers_round_trip_through_the_url(site_server, page, browser):
    page.goto(f"{site_server}/calculators/memory-cnn/")
    wait_ready(page, "cnn")
    scope = root_of(page, "cnn")
    scope.locator("[data-wg-remove]").first.click()
    scope.locator('[data-wg-add="reduce"]').click()
    scope.locator("[data-wg-layers] > li").last.locator('[data-wg-lf="kernels"]').fill("8")
    set_field(page, scope, "bits", "16")
    before = last(page, "cnn")
    assert "layers=" in page.url
    fresh = browser.new_context().new_page()
    try:
        fresh.goto(page.url)
        wait_ready(fresh, "cnn")
        assert last(fresh, "cnn") == before
        assert fresh.locator("[data-wg-layers] > li").count() == 6
    finally:
        fresh.context.close()


# ------------------------------------------------------------------ keyboard only

def test_keyboard_only(site_server, page):
    page.goto(f"{site_server}/calculators/memory-dense/")
    wait_ready(page, "dense")
    for _ in range(80):
        page.keyboard.press("Tab")
        if page.evaluate("document.activeElement && document.activeElement.name") == "layers":
            break
    else:
        pytest.fail("the layer field cannot be reached with Tab")
    page.keyboard.press("Control+A")
    page.keyboard.type("784, 100, 10")
    page.keyboard.press("Tab")
    assert page.evaluate("document.activeElement.name") == "batch"
    page.keyboard.press("Control+A")
    page.keyboard.type("32")
    assert last(page, "dense")["bytes"] == 12 * (784 * 100 + 100 * 10 + 32 * 894)
    status = page.locator('[data-wg-calc="dense"] [data-wg-out="status"]')
    assert status.get_attribute("aria-live") == "polite"
    # on to the picker with the result, still by keyboard
    for _ in range(10):
        page.keyboard.press("Tab")
        if page.evaluate("document.activeElement.getAttribute('data-wg-out')") == "picker":
            break
    page.keyboard.press("Enter")
    page.wait_for_url(re.compile(r"/calculators/picker/\?memory="))
    wait_ready(page, "picker")
    assert page.locator('[data-wg-calc="picker"] [name="memory"]').input_value() == "0.01"


def test_tree_walker_by_keyboard_and_url(site_server, page):
    page.goto(f"{site_server}/calculators/picker/")
    wait_ready(page, "tree")
    tree = root_of(page, "tree")
    visible = lambda: tree.locator("[data-wg-node]:not([hidden])").get_attribute("data-wg-node")  # noqa: E731
    assert visible() == ""
    assert tree.locator("[data-wg-back]").is_disabled()
    tree.locator('[data-wg-answer="y"]').focus()
    page.keyboard.press("Enter")
    assert visible() == "y"
    # a question whose "yes" is a card says what the card costs, as the revision priced it
    hint = tree.locator('[data-wg-node="y"] .wgc-node__hint')
    assert hint.is_visible() and re.fullmatch(r"If yes: GeForce RTX 2070 \([\d,]+ USD, launch price\)", hint.inner_text())
    assert not tree.locator(".wgc-trail").is_hidden() and tree.locator(".wgc-trail li").count() == 1
    page.keyboard.press("Tab")  # to "No"
    page.keyboard.press("Space")
    assert visible() == "yn"
    assert "GeForce GTX 1060 6GB" in tree.inner_text()
    # the trail: each answer given, with its question; a step takes the reader back to it
    steps = tree.locator(".wgc-trail li")
    assert steps.all_inner_texts() == ["Do you train models? Yes", "Is the model large? No"]
    steps.nth(1).locator("button").click()
    assert visible() == "y" and "tree=y" in page.url and steps.count() == 1
    tree.locator('[data-wg-answer="n"]').click()
    assert visible() == "yn"
    assert tree.locator('[data-wg-answer="y"]').is_disabled() and tree.locator('[data-wg-answer="n"]').is_disabled()
    assert "tree=yn" in page.url
    page.reload()
    wait_ready(page, "tree")
    assert visible() == "yn"
    tree.locator("[data-wg-back]").click()
    assert visible() == "y"
    tree.locator("[data-wg-restart]").click()
    assert visible() == ""
    assert "tree=" not in page.url
    assert tree.locator(".wgc-trail").is_hidden()


def test_cnn_layers_added_and_removed_by_keyboard(site_server, page):
    page.goto(f"{site_server}/calculators/memory-cnn/")
    wait_ready(page, "cnn")
    scope = root_of(page, "cnn")
    rows = scope.locator("[data-wg-layers] > li")
    assert rows.count() == 6
    scope.locator('[data-wg-add="pool"]').focus()
    page.keyboard.press("Enter")
    assert rows.count() == 7
    assert page.evaluate("document.activeElement.getAttribute('data-wg-lf')") == "size"
    assert len(last(page, "cnn")["rows"]) == 8
    rows.last.locator("[data-wg-remove]").focus()
    page.keyboard.press("Enter")
    assert rows.count() == 6
    ids = scope.locator("[data-wg-layers] [id]").evaluate_all("els => els.map(e => e.id)")
    assert len(ids) == len(set(ids))


# ------------------------------------------------------------------ languages

def _ko(key: str) -> str:
    table = yaml.safe_load((ROOT / "data" / "translations" / "ko" / "ui.yaml").read_text(encoding="utf-8"))
    return table[key]["text"]


def test_korean_page_shows_korean_labels(site_server, page):
    page.goto(f"{site_server}/ko/calculators/memory-dense/")
    wait_ready(page, "dense")
    assert page.locator("html").get_attribute("lang") == "ko"
    scope = root_of(page, "dense")
    assert scope.locator('label[for="wg-dense-layers"]').inner_text().strip() == _ko("calc.dense.layers")
    status = scope.locator('[data-wg-out="status"]').inner_text()
    assert re.search(r"[\uac00-\ud7a3]", status), status
    scope.locator('[name="batch"]').fill("abc")
    assert scope.locator('[data-wg-err="batch"]').inner_text() == _ko("calc.err.number")


def test_language_menu_keeps_the_calculator_and_its_state(site_server, page):
    page.goto(f"{site_server}/calculators/cloud/?util=50&kwh=0.3")
    wait_ready(page, "cloud")
    before = last(page, "cloud")
    open_language_menu_and_pick(page, "한국어")
    page.wait_for_url(re.compile(r"/ko/calculators/cloud/\?util=50&kwh=0.3$"))
    wait_ready(page, "cloud")
    assert last(page, "cloud") == before
    open_language_menu_and_pick(page, "Français")
    page.wait_for_url(re.compile(r"/fr/calculators/cloud/\?util=50&kwh=0.3$"))
    wait_ready(page, "cloud")
    assert last(page, "cloud") == before
    root_of(page, "cloud").locator('[name="kwh"]').fill("0,3")  # a decimal comma in French
    assert last(page, "cloud") == before


# ------------------------------------------------------------------ instant navigation

@pytest.fixture(scope="module")
def instant_server(tmp_path_factory):
    base = tmp_path_factory.mktemp("instant")
    httpd = _serve(base / "site")
    url = f"http://127.0.0.1:{httpd.server_address[1]}/"
    _build(base, site_url=url)
    yield url.rstrip("/")
    httpd.shutdown()


def test_calculator_works_under_instant_navigation(instant_server, page):
    page.goto(instant_server + "/")
    page.wait_for_load_state("networkidle")
    page.evaluate("window.__wgSameDocument = true")
    nav = page.locator(".md-nav--primary")
    nav.locator("label", has_text=re.compile(r"^\s*Calculators\s*$")).first.click()
    nav.get_by_role("link", name="Memory of a fully connected network").click()
    page.wait_for_url(instant_server + "/calculators/memory-dense/")
    wait_ready(page, "dense")
    assert page.evaluate("window.__wgSameDocument === true"), "the page was reloaded: instant navigation is off"
    assert last(page, "dense")["bytes"] == 651697152
    root_of(page, "dense").locator('[name="batch"]').fill("64")
    assert last(page, "dense")["activations"] == 64 * 17032
    # and on to the picker through the result's link, still without a reload
    root_of(page, "dense").locator('[data-wg-out="picker"]').click()
    page.wait_for_url(re.compile(r"/calculators/picker/\?memory="))
    wait_ready(page, "picker")
    assert page.evaluate("window.__wgSameDocument === true")
    assert last(page, "picker") is not None
    assert root_of(page, "picker").locator('[name="memory"]').input_value() == "0.6"


# ------------------------------------------------------------------ the real site

@pytest.mark.parametrize("inputs", [
    {"workload": "cnn", "memory": "8", "budget": "1500", "prices": "new"},
    {"workload": "llm-inference", "memory": "10", "budget": "5000", "prices": "used"},
    {"workload": "transformer", "memory": "24", "budget": "1500", "prices": "new"},
])
def test_picker_page_shows_the_module_ranking_of_the_real_catalogue(server, page, built_site, inputs):
    from generator.publish.api import client_data

    _, ds = built_site
    data = client_data(ds)
    data = json.loads(json.dumps(data, default=str))
    revs = [r["date"] for r in data["revisions"]] + ["today"]
    ranked = run_calcs_js([{"name": "picker", "raw": {**inputs, "revision": rev}} for rev in revs], data)
    for rev, out in zip(revs, ranked, strict=True):
        expected = out["result"]
        page.goto(f"{server}/calculators/picker/?" + "&".join(f"{k}={v}" for k, v in {**inputs, "revision": rev}.items()))
        wait_ready(page, "picker")
        got = last(page, "picker")
        assert [r["id"] for r in got["rows"]] == [r["id"] for r in expected["rows"]], rev
        for a, b in zip(got["rows"], expected["rows"], strict=False):
            assert math.isclose(a["value"], b["value"], rel_tol=1e-9), (rev, a["id"])
            for key in ("advised", "advisedUsed", "flag", "priceSource", "priceDate", "perfSource"):
                assert a[key] == b[key], (rev, a["id"], key)
        shown = root_of(page, "picker").locator("tbody tr").count()
        assert shown == min(50, len(expected["rows"]))


def test_picker_shows_what_the_newest_revision_advised_then_today(server, browser):
    """The reader's case: transformers, 24 GB, 1,500 USD, the newest revision. The cards its
    flowchart names come first, marked as its fallback to buy used with the date of the used
    price; switching to today shows the site's estimate with its measured error, on a phone."""
    context = browser.new_context(viewport={"width": 412, "height": 823}, is_mobile=True, has_touch=True)
    pg = context.new_page()
    pg.goto(f"{server}/calculators/picker/?workload=transformer&memory=24&budget=1500&prices=new")
    wait_ready(pg, "picker")
    root = root_of(pg, "picker")
    first = root.locator("tbody tr").first
    name = first.locator("th a").inner_text()
    assert name in ("GeForce RTX 3090", "GeForce RTX 3090 Ti")
    assert "its fallback choice; buy used" in first.locator(".wgc-badge").inner_text()
    assert first.locator("th a").is_visible() and first.locator("th a").bounding_box()["width"] > 60
    assert re.search(r"used, price observed on \w+ \d+, 20\d\d", first.locator("td").nth(2).inner_text())
    assert "own first choice" in root.locator('[data-wg-out="status"]').inner_text()
    assert "flowchart" in root.locator('[data-wg-out="advised"]').inner_text()
    assert "Radeon" not in root.locator("tbody tr").nth(0).inner_text() + root.locator("tbody tr").nth(1).inner_text()
    root.locator('[name="revision"]').select_option("today")
    pg.wait_for_function("document.querySelector('[data-wg-calc=\"picker\"]').dataset.wgMode === 'today'")
    model = root.locator('[data-wg-out="model"]').inner_text()
    # the band on results the fit has not seen
    assert re.search(r"error on results it was not fitted on is \d+% at the median and \d+% for nine cards in ten", model), model
    assert "not the advice of any revision" in model
    assert root.locator(".wgc-badge").count() == 0
    assert "revision=today" in pg.url
    context.close()


# ------------------------------------------------------------------ accessibility

@pytest.mark.parametrize("scheme", ["light", "dark"])
@pytest.mark.parametrize("lang", ["", "ko/"])
def test_calculator_pages_pass_axe(site_server, browser, lang, scheme):
    """WCAG 2.1 A and AA rules on every calculator page, with results and with error messages shown."""
    from axe_playwright_python.sync_playwright import Axe

    context = browser.new_context(color_scheme=scheme)
    pg = context.new_page()
    axe = Axe()
    found = []
    try:
        for name, slug in [("", "")] + list(PAGE_OF.items()):
            pg.goto(f"{site_server}/{lang}calculators/{slug + '/' if slug else ''}")
            if name:
                wait_ready(pg, name)
                first = pg.locator(f'[data-wg-calc="{name}"] input[type="text"]').first
                first.fill("abc")  # one message on screen
            result = axe.run(pg, options={"runOnly": {"type": "tag", "values": ["wcag2a", "wcag2aa", "wcag21a", "wcag21aa"]}})
            for v in result.response["violations"]:
                found.append(f"/{lang}calculators/{slug}: {v['id']} ({v['impact']}) at {[n['target'] for n in v['nodes'][:3]]}")
    finally:
        context.close()
    assert found == [], "\n".join(found)


# ------------------------------------------------------------------ the large-model calculator (real catalogue)

def llm_out(page, name) -> str:
    return root_of(page, "llm").locator(f'[data-wg-out="{name}"]').inner_text().strip()


def shown_number(text: str) -> float:
    return float(text.replace(",", ""))


def test_llm_model_picked_by_typing_part_of_its_name(server, page):
    page.goto(server + LLM_URL)
    wait_ready(page, "llm")
    model = llm_field(page, "model")
    model.fill("")
    assert last(page, "llm") is None
    model.press_sequentially("3.1 8b")
    assert last(page, "llm")["basis"]["model"] == "llama-3-1-8b"
    model.press("Tab")  # confirmed: the name is written out in full
    assert model.input_value() == "Llama 3.1 8B"
    assert llm_field(page, "layers").input_value() == "32" and llm_field(page, "kv_heads").input_value() == "8"
    totals = {}
    for mode in ("full", "lora", "qlora"):
        llm_field(page, "mode").select_option(mode)
        r = last(page, "llm")
        assert r is not None, root_of(page, "llm").inner_text()
        assert r["basis"]["mode"] == mode and r["basis"]["model"] == "llama-3-1-8b"
        assert r["basis"]["runtime"] == "transformers"
        totals[mode] = shown_number(llm_out(page, "v_total"))
        assert abs(totals[mode] - r["memory"]["total_bytes"] / 2**30) < 0.006
    assert totals["qlora"] < totals["lora"] < totals["full"], totals
    assert llm_field(page, "weights").input_value() == "nf4"  # QLoRA moved the format to its only choice
    # a training mode offers only what it can train with
    disabled = llm_field(page, "runtime").evaluate("e => [...e.options].filter(o => o.disabled).map(o => o.value)")
    assert sorted(disabled) == ["llama.cpp", "mlx", "sglang", "vllm"]


LLM_STATE = {"model": "Qwen3 8B", "runtime": "llama.cpp", "weights": "q4_k_m", "context": "16,384", "kv": "q8_0",
             "batch": "2", "gpus": "2", "card": "GeForce RTX 3060"}


def test_llm_url_round_trip_restores_the_result(server, page, browser):
    page.goto(server + LLM_URL)
    wait_ready(page, "llm")
    scope = root_of(page, "llm")
    for key in ("runtime", "weights", "kv", "model", "context", "batch", "gpus", "card"):
        set_field(page, scope, key, LLM_STATE[key])
    before = last(page, "llm")
    assert before is not None, scope.inner_text()
    assert before["basis"]["model"] == "qwen3-8b" and before["basis"]["gpu"] == "rtx-3060"
    assert before["basis"]["weights"] == "q4_k_m" and before["basis"]["gpus"] == 2
    shown = scope.locator(".wgc-result").inner_text()
    assert "model=qwen3-8b" in page.url and "card=rtx-3060" in page.url and "context=16384" in page.url
    fresh = browser.new_context().new_page()
    try:
        fresh.goto(page.url)
        wait_ready(fresh, "llm")
        assert last(fresh, "llm") == before
        assert root_of(fresh, "llm").locator(".wgc-result").inner_text() == shown
        for key, value in LLM_STATE.items():
            assert llm_field(fresh, key).input_value().replace(",", "") == value.replace(",", ""), key
    finally:
        fresh.context.close()


@pytest.mark.parametrize("value", ["-4096", "abc", "0", "1e999", ""])
def test_llm_bad_context_shows_a_message_and_no_nan(server, page, value):
    page.goto(server + LLM_URL)
    wait_ready(page, "llm")
    scope = root_of(page, "llm")
    llm_field(page, "context").fill(value)
    assert last(page, "llm") is None
    message = scope.locator('[data-wg-err="context"]').inner_text().strip()
    assert message
    if value == "-4096":
        assert message == scope.get_attribute("data-m-calc-err-positive")
    assert llm_field(page, "context").get_attribute("aria-invalid") == "true"
    assert llm_out(page, "status") == scope.get_attribute("data-m-calc-common-fix")
    text = scope.inner_text()
    assert not NUMERIC.search(text), NUMERIC.search(text).group(0)
    llm_field(page, "context").fill("4096")
    assert last(page, "llm") is not None
    assert scope.locator('[data-wg-err="context"]').inner_text() == ""


def test_llm_custom_architecture_warns_but_estimates(server, page):
    page.goto(server + LLM_URL)
    wait_ready(page, "llm")
    llm_field(page, "custom").check()
    assert llm_field(page, "layers").is_disabled() is False and not llm_field(page, "head_dim").is_disabled()
    assert llm_out(page, "warn_arch") == ""
    llm_field(page, "head_dim").fill("160")
    assert last(page, "llm") is not None
    warning = llm_out(page, "warn_arch")
    assert "5,120" in warning and "4,096" in warning and "Qwen3" in warning
    # another model typed while custom is on: its shape becomes the starting point
    llm_field(page, "model").fill("Qwen3 32B")
    assert llm_field(page, "layers").input_value() == "64" and llm_field(page, "head_dim").input_value() == "128"
    assert "8,192" in llm_out(page, "warn_arch") and "5,120" in llm_out(page, "warn_arch")  # 64 x 128 heads, 5,120 hidden
    assert last(page, "llm")["basis"]["model"] is None  # a custom model
    llm_field(page, "kv_heads").fill("128")
    assert last(page, "llm") is None
    assert root_of(page, "llm").locator('[data-wg-err="kv_heads"]').inner_text() == root_of(page, "llm").get_attribute(
        "data-m-calc-err-kv_heads")


def test_llm_korean_labels(server, page):
    page.goto(server + "/ko" + LLM_URL)
    wait_ready(page, "llm")
    scope = root_of(page, "llm")
    for name, key in (("model", "calc.llm.model"), ("runtime", "calc.llm.runtime"), ("context", "calc.llm.context"),
                      ("card", "calc.llm.card")):
        assert scope.locator(f'label[for="wg-llm-{name}"]').inner_text().strip() == _ko(key)
    status = llm_out(page, "status")
    assert re.search(r"[\uac00-\ud7a3]", status) and "GiB" in status, status
    assert re.search(r"[\uac00-\ud7a3]", llm_out(page, "o_decode"))
    llm_field(page, "context").fill("-1")
    assert scope.locator('[data-wg-err="context"]').inner_text() == _ko("calc.err.positive")


def test_llm_optimizer_moves_the_state_and_the_address_keeps_it(server, page, browser):
    page.goto(server + "/ko" + LLM_URL)
    wait_ready(page, "llm")
    scope = root_of(page, "llm")
    assert llm_field(page, "opt").is_disabled()  # inference trains nothing
    assert scope.locator('label[for="wg-llm-opt"]').inner_text().strip() == _ko("calc.llm.optimizer")
    llm_field(page, "mode").select_option("full")
    adamw = last(page, "llm")
    assert adamw["basis"]["optimizer"] == "adamw" and not llm_field(page, "opt").is_disabled()
    llm_field(page, "opt").select_option("paged-adamw-8bit")
    paged = last(page, "llm")
    assert paged["basis"]["optimizer"] == "paged-adamw-8bit" and paged["memory"]["host_bytes"] > 0
    assert paged["memory"]["total_bytes"] < adamw["memory"]["total_bytes"]
    shown = shown_number(llm_out(page, "v_optimizer"))
    assert abs(shown - paged["memory"]["optimizer_bytes"] / 2**30) < 0.006
    host = f"{paged['memory']['host_bytes'] / 2**30:,.2f}"
    fit = llm_out(page, "o_fit")
    assert host in fit and re.search(r"[\uac00-\ud7a3]", fit), fit
    assert "opt=paged-adamw-8bit" in page.url
    fresh = browser.new_context().new_page()
    try:
        fresh.goto(page.url)
        wait_ready(fresh, "llm")
        assert last(fresh, "llm") == paged and llm_field(fresh, "opt").input_value() == "paged-adamw-8bit"
    finally:
        fresh.context.close()


def test_llm_pure_16_bit_and_the_step_in_the_backward_pass_in_the_form_and_the_address(server, page, browser):
    """The two full fine-tuning switches: off outside full fine-tuning, labelled in Korean, each
    moving its own part of the total, kept in the address and read back on a fresh page."""
    page.goto(server + "/ko" + LLM_URL)
    wait_ready(page, "llm")
    scope = root_of(page, "llm")
    master, inbwd = llm_field(page, "master"), llm_field(page, "inbwd")
    assert master.is_checked() and not inbwd.is_checked()
    assert master.is_disabled() and inbwd.is_disabled()
    assert scope.locator('label[for="wg-llm-master"]').inner_text().strip() == _ko("calc.llm.master")
    assert scope.locator('label[for="wg-llm-inbwd"]').inner_text().strip() == _ko("calc.llm.in_backward")
    llm_field(page, "mode").select_option("lora")
    assert master.is_disabled() and inbwd.is_disabled()
    llm_field(page, "mode").select_option("full")
    assert not master.is_disabled() and not inbwd.is_disabled()
    mixed = last(page, "llm")
    master.uncheck()
    pure = last(page, "llm")
    inbwd.check()
    stepped = last(page, "llm")
    params = mixed["basis"]["trainable_params"]
    assert (pure["basis"]["master_weights"], stepped["basis"]["optimizer_in_backward"]) == (False, True)
    assert abs(mixed["memory"]["optimizer_bytes"] - pure["memory"]["optimizer_bytes"] - 4 * params) < 1e3
    assert stepped["memory"]["gradients_bytes"] < pure["memory"]["gradients_bytes"] / 10
    shown = shown_number(llm_out(page, "v_gradients"))
    assert abs(shown - stepped["memory"]["gradients_bytes"] / 2**30) < 0.006
    assert "inbwd=1" in page.url and "master=0" in page.url, page.url
    fresh = browser.new_context().new_page()
    try:
        fresh.goto(page.url)
        wait_ready(fresh, "llm")
        assert last(fresh, "llm") == stepped
        assert not llm_field(fresh, "master").is_checked() and llm_field(fresh, "inbwd").is_checked()
    finally:
        fresh.context.close()


def test_llm_lora_rank_adapters_and_the_chunked_loss_in_the_form_and_the_address(server, page, browser):
    """LoRA's rank and adapters are usable in LoRA and QLoRA only, the loss in chunks in every
    training mode; labelled in Chinese, each moving its own part, a bad rank shown on its field,
    all kept in the address and read back on a fresh page."""
    zh = yaml.safe_load((ROOT / "data" / "translations" / "zh" / "ui.yaml").read_text(encoding="utf-8"))
    page.goto(server + "/zh" + LLM_URL)
    wait_ready(page, "llm")
    scope = root_of(page, "llm")
    rank, targets, chunk = llm_field(page, "rank"), llm_field(page, "targets"), llm_field(page, "chunk")
    for name, key in (("rank", "calc.llm.lora_rank"), ("targets", "calc.llm.lora_targets"), ("chunk", "calc.llm.chunked_loss")):
        assert scope.locator(f'label[for="wg-llm-{name}"]').inner_text().strip() == zh[key]["text"]
    offered = [zh[f"calc.llm.targets_{k}"]["text"] for k in ("all", "attention", "qv")]
    assert targets.locator("option").all_inner_texts() == offered
    assert rank.is_disabled() and targets.is_disabled() and chunk.is_disabled() and not chunk.is_checked()
    llm_field(page, "mode").select_option("full")
    assert rank.is_disabled() and targets.is_disabled() and not chunk.is_disabled()
    llm_field(page, "mode").select_option("lora")
    assert not rank.is_disabled() and not targets.is_disabled() and rank.input_value() == "16"
    every = last(page, "llm")
    rank.fill("0")
    assert scope.locator('[data-wg-err="rank"]').inner_text().strip() == zh["calc.err.positive"]["text"]
    rank.fill("8")
    targets.select_option("qv")
    qv = last(page, "llm")
    assert qv["basis"]["lora_targets"] == ["q", "v"] and qv["basis"]["lora_rank"] == 8
    assert qv["basis"]["trainable_params"] < every["basis"]["trainable_params"] / 10
    chunk.check()
    chunked = last(page, "llm")
    assert chunked["basis"]["chunked_loss"] is True
    assert chunked["memory"]["activations_bytes"] < qv["memory"]["activations_bytes"]
    shown = shown_number(llm_out(page, "v_activations"))
    assert abs(shown - chunked["memory"]["activations_bytes"] / 2**30) < 0.006
    for part in ("rank=8", "targets=qv", "chunk=1"):
        assert part in page.url, page.url
    fresh = browser.new_context().new_page()
    try:
        fresh.goto(page.url)
        wait_ready(fresh, "llm")
        assert last(fresh, "llm") == chunked
        assert llm_field(fresh, "rank").input_value() == "8" and llm_field(fresh, "targets").input_value() == "qv"
        assert llm_field(fresh, "chunk").is_checked()
    finally:
        fresh.context.close()


def test_llm_total_visible_on_a_phone_without_scrolling(server, browser):
    context = browser.new_context(viewport={"width": 390, "height": 844}, is_mobile=True, has_touch=True)
    pg = context.new_page()
    try:
        pg.goto(server + LLM_URL)
        wait_ready(pg, "llm")
        assert last(pg, "llm") is not None
        assert pg.evaluate("window.scrollY") == 0
        status = pg.locator('[data-wg-calc="llm"] [data-wg-out="status"]')
        total = f'{last(pg, "llm")["memory"]["total_bytes"] / 2**30:.2f}'
        assert total in status.inner_text()
        box = status.bounding_box()
        assert box and box["y"] >= 0 and box["y"] + box["height"] <= 844, box
        # on top of the page, not under something else
        hit = pg.evaluate("([x, y]) => !!document.elementFromPoint(x, y).closest('.wgc-summary')",
                          [box["x"] + box["width"] / 2, box["y"] + box["height"] / 2])
        assert hit
        # and it stays in view while the form scrolls by
        pg.mouse.wheel(0, 600)
        pg.wait_for_function("window.scrollY > 300")
        box = status.bounding_box()
        assert box["y"] >= 0 and box["y"] + box["height"] <= 844, box
    finally:
        context.close()


CLI_CASES = [
    {"model": "llama-3-1-8b", "gpu": "rtx-4090", "mode": "inference", "runtime": "transformers", "weights": "bf16",
     "context": 4096, "kv": "f16", "batch": 1, "gpus": 1},
    {"model": "qwen3-30b-a3b", "gpu": "rtx-3090", "mode": "inference", "runtime": "llama.cpp", "weights": "q4_k_m",
     "context": 32768, "kv": "q8_0", "batch": 1, "gpus": 1},
    {"model": "llama-3-1-70b", "gpu": "h100-sxm", "mode": "inference", "runtime": "vllm", "weights": "fp8",
     "context": 8192, "kv": "fp8", "batch": 8, "gpus": 2},
    {"model": "mistral-7b", "gpu": "rtx-4090", "mode": "qlora", "runtime": "transformers", "weights": "nf4",
     "context": 2048, "kv": "f16", "batch": 2, "gpus": 1, "ckpt": "0"},
    {"model": "llama-3-2-1b", "gpu": "a100-sxm4-80gb", "mode": "full", "runtime": "transformers", "weights": "bf16",
     "context": 1024, "kv": "f16", "batch": 4, "gpus": 1, "flash": "0"},
    # the experts of every MoE layer in 64 GiB of host memory (llama.cpp's --cpu-moe)
    {"model": "qwen3-30b-a3b", "gpu": "rtx-4090", "mode": "inference", "runtime": "llama.cpp", "weights": "q8_0",
     "context": 4096, "kv": "f16", "batch": 1, "gpus": 1, "offload": "experts", "host_gb": "64"},
    # too large, no offload: no speed, the shortfall and what would fit
    {"model": "llama-3-1-70b", "gpu": "rtx-4090", "mode": "inference", "runtime": "llama.cpp", "weights": "q8_0",
     "context": 4096, "kv": "f16", "batch": 1, "gpus": 1},
]


def _cli(case) -> dict:
    import subprocess
    import sys

    args = [sys.executable, "-m", "generator", "estimate", "--model", case["model"], "--gpu", case["gpu"],
            "--mode", case["mode"], "--runtime", case["runtime"], "--weights", case["weights"],
            "--context", str(case["context"]), "--kv-cache", case["kv"], "--batch", str(case["batch"]),
            "--gpus", str(case["gpus"]), "--format", "json"]
    if case.get("ckpt") == "0":
        args.append("--no-checkpointing")
    if case.get("flash") == "0":
        args.append("--no-flash-attention")
    if case.get("offload"):
        args += ["--offload", case["offload"]]
    if case.get("host_gb"):
        args += ["--host-memory-gb", case["host_gb"]]
    out = subprocess.run(args, cwd=ROOT, capture_output=True, text=True, timeout=300)
    assert out.returncode == 0, out.stderr
    return json.loads(out.stdout)


@pytest.mark.parametrize("case", CLI_CASES, ids=[f'{c["model"]}-{c["mode"]}-{c["runtime"]}' for c in CLI_CASES])
def test_llm_figures_equal_the_command_line(server, page, case):
    expected = _cli(case)
    query = {"model": case["model"], "card": case["gpu"], "mode": case["mode"], "runtime": case["runtime"],
             "weights": case["weights"], "context": case["context"], "kv": case["kv"], "batch": case["batch"],
             "gpus": case["gpus"], "ckpt": case.get("ckpt", "1"), "flash": case.get("flash", "1")}
    query.update({k: case[k] for k in ("offload", "host_gb") if k in case})
    page.goto(server + LLM_URL + "?" + "&".join(f"{k}={v}" for k, v in query.items()))
    wait_ready(page, "llm")
    got = last(page, "llm")
    assert got is not None, root_of(page, "llm").inner_text()
    for key, value in expected["memory"].items():
        assert math.isclose(got["memory"][key], value, rel_tol=1e-9, abs_tol=1e-3), key
    assert got["fits"] == expected["fits"] and got["max_context"] == expected["max_context"]
    for key in ("decode_tokens_per_s", "prefill_tokens_per_s", "training_relative"):
        if expected[key] is None:
            assert got[key] is None, key
        else:
            assert math.isclose(got[key], expected[key], rel_tol=1e-9), key
    # what the page shows, rounded as shown
    gib = 2**30
    m = expected["memory"]
    assert shown_number(llm_out(page, "v_total")) == pytest.approx(m["total_bytes"] / gib, abs=0.005 + 1e-9)
    for term, key in (("weights", "weights_bytes"), ("kv", "kv_cache_bytes"), ("activations", "activations_bytes"),
                      ("overhead", "overhead_bytes"), ("gradients", "gradients_bytes"), ("optimizer", "optimizer_bytes")):
        assert shown_number(llm_out(page, f"v_{term}")) == pytest.approx(m[key] / gib, abs=0.005 + 1e-9), term
    band = expected["error"]["memory"]
    assert f'±{band["median_pct"]:g} %' in llm_out(page, "e_total") and f'{band["count"]:,}' in llm_out(page, "e_total")
    # the band on results the fit has not seen comes first: median and 90th percentile
    unseen = band["unseen"]
    assert llm_out(page, "e_total").startswith(f'±{unseen["median_pct"]:g} %') and f'±{unseen["p90_pct"]:g} %' in llm_out(
        page, "e_total")
    if expected["decode_tokens_per_s"] is not None:
        x = expected["decode_tokens_per_s"]
        text = llm_out(page, "o_decode")
        assert (f"{x:,.0f}" if x >= 100 else f"{x:,.1f}") in text, text
        assert f'±{expected["error"]["decode_tokens_per_s"]["median_pct"]:g} %' in text
    if expected["max_context"] is not None:
        assert f'{expected["max_context"]:,}' in llm_out(page, "o_context")
    assert got.get("offload") == expected.get("offload") and got.get("shortfall") == expected.get("shortfall")
    if expected["reserved_bytes"] is not None:
        assert f'{expected["reserved_bytes"] / gib:,.1f}'.rstrip("0").rstrip(".") in llm_out(page, "o_usable")
    text = root_of(page, "llm").inner_text()
    assert not NUMERIC.search(text)


def test_llm_card_table_holds_first_then_counts(server, page):
    page.goto(server + LLM_URL + "?model=llama-3-1-70b&runtime=transformers&weights=bf16&context=4096")
    wait_ready(page, "llm")
    cards = last(page, "llm")["cards"]
    holds = [c for c in cards if c["fits"]]
    others = [c for c in cards if not c["fits"]]
    assert holds and others and cards[: len(holds)] == holds
    speeds = [c["speed"] for c in holds]
    assert speeds == sorted(speeds, reverse=True)
    counts = [c["count"] for c in others if c["count"] is not None]
    assert counts == sorted(counts) and counts[0] >= 2
    rows = root_of(page, "llm").locator('[data-wg-out="fit"] tr')
    assert rows.count() == len(cards)
    assert rows.first.locator("a").inner_text() == holds[0]["name"]


HF_CONFIGS = {c["id"]: c for c in json.loads((ROOT / "tests" / "fixtures" / "hf_configs.json").read_text(
    encoding="utf-8"))["cases"]}


def test_llm_pasted_config_fills_the_custom_architecture(server, page):
    from generator.estimate import hfconfig, memory

    page.goto(server + LLM_URL)
    wait_ready(page, "llm")
    scope = root_of(page, "llm")
    box = scope.locator("[data-wg-config]")
    assert scope.locator(f'label[for="{box.get_attribute("id")}"]').inner_text().strip() == "Paste a config.json"
    config = HF_CONFIGS["qwen3-next-80b-a3b"]["config"]
    llm_field(page, "context").fill("131072")
    box.fill(json.dumps(config, indent=2))
    scope.locator("[data-wg-config-read]").click()
    assert llm_out(page, "config_status") == ("Read: 48 layers, 12 of them with a KV cache. "
                                              "The fields above now describe this model.")
    assert llm_field(page, "custom").is_checked()
    assert llm_field(page, "layers").input_value() == "48" and llm_field(page, "experts").input_value() == "512"
    assert llm_field(page, "params").input_value() == "79.57"
    r = last(page, "llm")
    assert r is not None and r["basis"]["model"] is None
    # the cache of the 12 attention layers plus the 36 Gated DeltaNet states, as Python counts it
    assert r["memory"]["kv_cache_bytes"] == memory.kv_cache_bytes(hfconfig.model_from_config(config), 131072, 1, "f16")
    dense = dict(hfconfig.model_from_config(config), state_layers=None)
    assert r["memory"]["kv_cache_bytes"] < memory.kv_cache_bytes(dense, 131072, 1, "f16") / 3.5
    # a config without a field the estimate needs: a message naming it, nothing changed, no NaN
    box.fill('{"hidden_size": 4096, "num_attention_heads": 32}')
    scope.locator("[data-wg-config-read]").click()
    assert llm_out(page, "config_status") == "The config does not give num_hidden_layers, which the estimate needs."
    assert box.get_attribute("aria-invalid") == "true"
    assert last(page, "llm") == r and llm_field(page, "layers").input_value() == "48"
    box.fill("{not json")
    scope.locator("[data-wg-config-read]").click()
    assert llm_out(page, "config_status") == "This text is not valid JSON."
    assert not NUMERIC.search(scope.inner_text())


def test_llm_pasted_config_message_in_korean(server, page):
    page.goto(server + "/ko" + LLM_URL)
    wait_ready(page, "llm")
    scope = root_of(page, "llm")
    box = scope.locator("[data-wg-config]")
    box.fill(json.dumps(HF_CONFIGS["layer-types-short"]["config"]))
    scope.locator("[data-wg-config-read]").click()
    assert llm_out(page, "config_status") == _ko("calc.llm.config_err_layers").replace("{field}", "layer_types")
    box.fill(json.dumps(HF_CONFIGS["nemotron-nano-9b-v2"]["config"]))
    scope.locator("[data-wg-config-read]").click()
    assert llm_out(page, "config_status") == _ko("calc.llm.config_done").replace("{layers}", "56").replace("{attention}", "4")
    assert last(page, "llm") is not None
def test_llm_too_large_shows_the_shortfall_then_offload_makes_it_fit(server, page, browser):
    """A model larger than the card: no speed, how far it is short and what would fit; offloading the
    experts (with the host memory given) makes it fit, with a speed read from host memory, and the
    address keeps the choice. llama.cpp lists only the cards it runs: no TPU, Gaudi or Kepler card."""
    page.goto(server + LLM_URL + "?model=qwen3-30b-a3b&card=rtx-4090&runtime=llama.cpp&weights=q8_0&context=4096")
    wait_ready(page, "llm")
    scope = root_of(page, "llm")
    r = last(page, "llm")
    assert r["fits"] is False and r["decode_tokens_per_s"] is None and r["prefill_tokens_per_s"] is None
    kinds = [s["kind"] for s in r["shortfall"]["suggestions"]]
    assert "offload" in kinds and "gpus" in kinds and "weights" in kinds
    fit = llm_out(page, "o_fit")
    short = f"{r['shortfall']['bytes'] / 2**30:,.2f}".rstrip("0").rstrip(".")
    assert f"{short} GiB short" in fit and "Q5_K_M" in fit and "the experts of 12 layers" in fit, fit
    assert "paged optimizer" not in scope.inner_text()
    assert llm_out(page, "o_decode") == scope.get_attribute("data-m-calc-llm-no_speed_fit")
    assert not any(c["id"].startswith(("tpu-", "gaudi-")) or c["id"] in ("gtx-680", "tesla-k80") for c in r["cards"])
    assert {"rtx-4090", "apple-m3-max"} <= {c["id"] for c in r["cards"]}
    llm_field(page, "offload").select_option("auto")
    llm_field(page, "host_gb").fill("64")
    done = last(page, "llm")
    assert done["fits"] is True and done["decode_tokens_per_s"] > 0 and done["offload"]["expert_layers"] > 0
    host = llm_out(page, "o_fit")
    gib = f"{done['memory']['host_bytes'] / 2**30:,.2f}".rstrip("0").rstrip(".")
    assert gib in host and "paged optimizer" not in host, host
    assert "offload=auto" in page.url and "host_gb=64" in page.url
    fresh = browser.new_context().new_page()
    try:
        fresh.goto(page.url)
        wait_ready(fresh, "llm")
        assert last(fresh, "llm")["offload"] == done["offload"]
    finally:
        fresh.context.close()
    llm_field(page, "host_gb").fill("4")  # too little host memory: it no longer fits
    short = last(page, "llm")
    assert short["fits"] is False and short["shortfall"]["host_bytes"] > 0 and short["decode_tokens_per_s"] is None
