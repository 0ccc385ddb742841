"""What a reader meets in the browser on the real site: a malformed address, the language menu
keeping the page's state, the catalogue's count and sort, the diffs picker's dates and messages,
the calculators' limits and numbers, and the words of each language, in the state a reader
reaches (after the click, on a phone where the layout matters)."""
from __future__ import annotations

import re
import time

import pytest
import yaml
from helpers import ROOT, open_language_menu_and_pick, root_of, wait_ready

from generator.data.locales import LANGS, typeset

PHONE = {"viewport": {"width": 390, "height": 844}, "is_mobile": True, "has_touch": True}
PREFIX = {lang: "" if i == 0 else f"{lang}/" for i, lang in enumerate(LANGS)}


def ui(lang: str, key: str) -> str:
    """An interface text as the pages give it, in ``lang`` (typeset as the language sets it)."""
    if lang == LANGS[0]:
        return str(yaml.safe_load((ROOT / "data" / "ui.yaml").read_text(encoding="utf-8"))[key])
    table = yaml.safe_load((ROOT / "data" / "translations" / lang / "ui.yaml").read_text(encoding="utf-8"))
    return typeset(table[key]["text"], lang)


def fill(text: str, **params) -> str:
    for k, v in params.items():
        text = text.replace("{" + k + "}", str(v))
    return text


@pytest.fixture
def phone(browser):
    context = browser.new_context(**PHONE)
    pg = context.new_page()
    pg.set_default_timeout(30000)
    yield pg
    context.close()


def errors_of(page) -> list[str]:
    found: list[str] = []
    page.on("pageerror", lambda e: found.append(str(e)))
    return found


# ------------------------------------------------------------------ a malformed address

def test_a_malformed_fragment_leaves_the_catalogue_filter_applied(server, phone):
    errors = errors_of(phone)
    phone.goto(server + "/gpus/?vendor=amd#%")
    out = phone.locator("#wg-filters output")
    phone.wait_for_function("document.querySelector('#wg-filters output').textContent !== ''")
    rows = phone.locator("#gpu-table tbody tr:not([hidden])")
    vendors = set(rows.evaluate_all("rs => rs.map(r => r.dataset.vendor)"))
    assert vendors == {"amd"}, vendors
    assert out.inner_text().startswith(f"{rows.count()} of ")
    assert not [e for e in errors if "URI" in e], errors


@pytest.mark.parametrize("path", ["/accuracy/#%", "/gpus/h100-sxm/#%E0%A4%A", "/today/#%", "/charts/?x=%#%zz"])
def test_a_malformed_fragment_throws_nowhere(server, page, path):
    errors = errors_of(page)
    page.goto(server + path)
    page.wait_for_load_state("networkidle")
    assert not errors, errors


# ------------------------------------------------------------------ the language menu

@pytest.mark.parametrize("start, label, expected", [
    ("/diffs/?a=2016-07-23&b=2023-01-16", "Français", "/fr/diffs/?a=2016-07-23&b=2023-01-16"),
    ("/ko/today/?budget=2000#top", "English", "/today/?budget=2000#top"),
    ("/zh/gpus/?vendor=nvidia&sort=memory&dir=desc", "한국어", "/ko/gpus/?vendor=nvidia&sort=memory&dir=desc"),
    ("/calculators/memory-cnn/?batch=32#wg-cnn-result", "简体中文", "/zh/calculators/memory-cnn/?batch=32#wg-cnn-result"),
])
def test_language_menu_keeps_the_query_and_the_fragment(server, page, start, label, expected):
    page.goto(server + start)
    page.wait_for_load_state("networkidle")
    open_language_menu_and_pick(page, label)
    page.wait_for_url(server + expected)
    if "/diffs/" in expected:
        page.wait_for_function("document.querySelector('#wg-diff select[name=a]').options.length > 1")
        assert page.locator("#wg-diff select[name=a]").input_value() == "2016-07-23"
        assert page.locator("#wg-diff select[name=b]").input_value() == "2023-01-16"


def test_language_menu_focus_is_visible(server, page):
    page.goto(server + "/gpus/")
    page.wait_for_load_state("networkidle")
    page.locator(".md-header__option .md-select button").first.focus()
    page.keyboard.press("Tab")
    focused = page.evaluate("""() => { const a = document.activeElement, s = getComputedStyle(a);
      return { cls: a.className, style: s.outlineStyle, width: parseFloat(s.outlineWidth) }; }""")
    assert "md-select__link" in focused["cls"], focused
    assert focused["style"] != "none" and focused["width"] > 0, focused


# ------------------------------------------------------------------ the catalogue

@pytest.mark.parametrize("lang", LANGS)
def test_catalogue_without_filter_says_what_limits_the_list(server, phone, lang):
    phone.goto(f"{server}/{PREFIX[lang]}gpus/")
    phone.wait_for_function("document.querySelector('#wg-filters output').textContent !== ''")
    body = phone.locator("#gpu-table tbody")
    shown = phone.locator("#gpu-table tbody tr:not([hidden])").count()
    total = int(body.get_attribute("data-wg-total"))
    assert shown < total  # the page carries part of the list
    assert phone.locator("#wg-filters output").inner_text() == fill(ui(lang, "gpus.shown_part"), shown=shown, total=total)


def test_catalogue_sorts_by_a_hidden_column_on_a_phone(server, phone):
    phone.goto(server + "/gpus/")
    phone.wait_for_function("document.querySelector('#wg-filters output').textContent !== ''")
    assert not phone.locator('#gpu-table th[data-key="release"]').is_visible()  # not a default column
    phone.locator("[data-wg-sort-key]").select_option("release")
    phone.locator("[data-wg-sort-dir]").select_option("desc")
    phone.wait_for_url(re.compile(r"[?&]sort=release&dir=desc"))
    dates = phone.locator("#gpu-table tbody tr:not([hidden]) td:nth-child(4)").evaluate_all("cs => cs.map(c => c.dataset.sort)")
    assert len(dates) == int(phone.locator("#gpu-table tbody").get_attribute("data-wg-total"))  # every card
    assert dates == sorted(dates, reverse=True)
    out = phone.locator("#wg-filters output").inner_text()
    assert out == fill(ui("en", "gpus.shown"), shown=len(dates), total=len(dates))


def test_catalogue_first_sort_click_is_written_to_the_address(server, page):
    page.goto(server + "/gpus/")
    page.wait_for_function("document.querySelector('#wg-filters output').textContent !== ''")
    page.locator('#gpu-table th[data-key="memory"]').click()
    page.wait_for_url(re.compile(r"\?sort=memory&dir=desc$"))
    assert page.locator("[data-wg-sort-key]").input_value() == "memory"
    assert page.locator("[data-wg-sort-dir]").input_value() == "desc"
    assert page.locator('#gpu-table th[data-key="name"]').get_attribute("aria-sort") is None


# ------------------------------------------------------------------ the diffs picker

def _picker_ready(page):
    page.wait_for_function("document.querySelector('#wg-diff select[name=a]').options.length > 1")


@pytest.mark.parametrize("lang", LANGS)
def test_diffs_picker_writes_dates_as_the_site_does(server, phone, lang):
    phone.goto(f"{server}/{PREFIX[lang]}diffs/?a=2014-08-14&b=2016-07-23")
    _picker_ready(phone)
    # the pairs below are written by the build: the picker's labels must read the same
    for iso in ("2014-08-14", "2016-07-23"):
        built = phone.locator(f'#diff-pairs time[datetime="{iso}"]').first.inner_text()
        option = phone.locator(f'#wg-diff select[name=a] option[value="{iso}"]').inner_text()
        assert option == built, (lang, option, built)
    assert phone.locator("#wg-diff select[name=a]").input_value() == "2014-08-14"


@pytest.mark.parametrize("lang", LANGS)
def test_diffs_picker_says_a_date_is_unknown(server, page, lang):
    page.goto(f"{server}/{PREFIX[lang]}diffs/?a=1999-01-01")
    _picker_ready(page)
    a = page.locator("#wg-diff select[name=a]")
    assert a.input_value() != ""  # the default date, not a blank select
    assert fill(ui(lang, "diffs.unknown"), date="1999-01-01") in page.locator("#wg-diff output").inner_text()
    assert "a=1999-01-01" not in page.url


@pytest.mark.parametrize("lang", LANGS)
def test_diffs_picker_refuses_a_reversed_pair(server, page, lang):
    page.goto(f"{server}/{PREFIX[lang]}diffs/?a=2023-01-16&b=2014-08-14")
    _picker_ready(page)
    assert page.locator("#wg-diff output").inner_text() == ui(lang, "diffs.reversed")
    assert not page.locator("#wg-diff table").is_visible()
    page.locator("#wg-diff select[name=a]").select_option("2014-08-14")
    assert page.locator("#wg-diff table").is_visible()
    assert page.locator("#wg-diff output").inner_text() != ui(lang, "diffs.reversed")


# ------------------------------------------------------------------ the calculators

CNN = "/calculators/memory-cnn/"


def test_cnn_checks_its_layer_limit_before_building_rows(server, page):
    layers = "_".join(["c.8.3.1.same"] * 30000)
    errors = errors_of(page)
    # an address this long is more than the test server reads in a request line: the page is
    # answered from its plain address, and the script reads the long one
    page.route(re.compile(r".*/memory-cnn/\?.*"), lambda route: route.fulfill(response=route.fetch(url=server + CNN)))
    page.set_default_timeout(8000)
    start = time.monotonic()
    page.goto(f"{server}{CNN}?batch=1&height=32&width=32&channels=3&bits=32&layers={layers}")
    wait_ready(page, "cnn")
    assert time.monotonic() - start < 8
    scope = root_of(page, "cnn")
    assert scope.locator("[data-wg-layers] > li").count() == 101
    assert scope.locator('[data-wg-err="layers"]').inner_text() == fill(ui("en", "calc.err.list_long"), max=100)
    assert not errors, errors


@pytest.mark.parametrize("layers", ["constructor", "c.8.3.1.same_constructor_toString.1", "__proto__"])
def test_cnn_takes_no_layer_type_an_object_inherits(server, page, layers):
    errors = errors_of(page)
    page.set_default_timeout(8000)
    page.goto(f"{server}{CNN}?layers={layers}")
    wait_ready(page, "cnn")
    assert not errors, errors
    assert root_of(page, "cnn").locator("[data-wg-layers] > li").count() == layers.count("c.")


def test_results_print_sensible_significant_digits(server, phone):
    phone.goto(f"{server}{CNN}?batch=99999&height=99999&width=3&channels=7&bits=32&layers=")
    wait_ready(phone, "cnn")
    status = root_of(phone, "cnn").locator('[data-wg-out="status"]').inner_text()
    numbers = re.findall(r"\d[\d,.]*", status)
    assert numbers, status
    for n in numbers:
        digits = n.replace(",", "").replace(".", "").strip("0")
        assert len(digits) <= 6, (n, status)


@pytest.mark.parametrize("field, value, key, params", [
    ("desktop", "1e-320", "calc.err.min", {"min": "100"}),
    ("cloud", "1e-320", "calc.err.min", {"min": "0.01"}),
    ("spot", "5", "calc.err.spot_above", {"max": "2.14"}),
])
def test_cloud_refuses_prices_a_reader_cannot_mean(server, phone, field, value, key, params):
    phone.goto(server + "/calculators/cloud/")
    wait_ready(phone, "cloud")
    scope = root_of(phone, "cloud")
    scope.locator(f'[name="{field}"]').fill(value)
    assert scope.locator(f'[data-wg-err="{field}"]').inner_text() == fill(ui("en", key), **params)
    assert scope.locator(f'[name="{field}"]').get_attribute("aria-invalid") == "true"
    assert scope.locator('[data-wg-out="status"]').inner_text() == ui("en", "calc.common.fix")
    assert "0 days" not in scope.inner_text()


# ------------------------------------------------------------------ the words of each language

UNITS = {"en": ("USD", "GB"), "ko": ("USD", "GB"), "zh": ("美元", "GB"), "fr": ("USD", "GB")}


@pytest.mark.parametrize("lang", LANGS)
def test_home_form_names_its_units(server, phone, lang):
    phone.goto(f"{server}/{PREFIX[lang]}")
    form = phone.locator("form.wg-start")
    budget = form.locator("label", has=phone.locator('[name="budget"]')).inner_text()
    memory = form.locator("label", has=phone.locator('[name="memory"]')).inner_text()
    usd, gb = UNITS[lang]
    assert f"({usd})" in budget and f"({gb})" in memory, (budget, memory)


FRENCH_PAGES = ["/fr/calculators/memory-llm/", "/fr/calculators/memory-cnn/", "/fr/calculators/memory-dense/", "/fr/gpus/",
                "/fr/calculators/cloud/", "/fr/"]


@pytest.mark.parametrize("path", FRENCH_PAGES)
def test_french_pages_spell_units_one_way_and_keep_punctuation_with_its_word(server, page, path):
    page.goto(server + path)
    page.wait_for_load_state("networkidle")
    text = page.locator("article").inner_text()
    assert not re.findall(r"\b(?:Gio|Go|Mio|Mo)\b", text), path
    # a space before ? ! : ; must not break: French sets a no-break space there
    loose = [text[max(0, m.start() - 30):m.end() + 5] for m in re.finditer(r"(?<=\w) [?!:;](?=\s|$)", text)]
    assert not loose, loose[:5]


def test_french_search_finds_the_calculators_by_calculatrice(server, page):
    page.goto(f"{server}/fr/")
    page.locator("input.md-search__input").click()
    page.keyboard.type("calculatrice", delay=20)
    page.keyboard.press("End")
    page.locator(".md-search-result__item").first.wait_for()
    assert "Calculateur" in page.locator(".md-search-result").inner_text()


@pytest.mark.parametrize("path", ["/ko/calculators/memory-llm/", "/ko/gpus/rtx-4090/", "/ko/today/"])
def test_korean_pages_use_one_word_for_fine_tuning_and_translate_tokens_per_second(server, page, path):
    page.goto(server + path)
    page.wait_for_load_state("networkidle")
    text = page.locator("article").inner_text()
    assert "미세 조정" not in text and "미세조정" not in text
    assert "tokens/s" not in text


# ------------------------------------------------------------------ pure helpers of whichgpu.js

def test_site_date_and_decode_never_fail(server, page):
    page.goto(server + "/diffs/")
    page.wait_for_function("window.WG && window.WG.siteDate")
    got = page.evaluate("""() => {
      const months = ["janvier", "février", "mars", "avril", "mai", "juin", "juillet", "août", "septembre", "octobre",
                      "novembre", "décembre"];
      const fr = WG.siteDate({ pattern: "{day} {month} {year}", first_day: "1er", months });
      const ko = WG.siteDate({ pattern: "{year}년 {month_number}월 {day}일", first_day: "{day}", months });
      return [fr("2014-09-01"), fr("2016-07-23"), ko("2016-07-23"), fr("not a date"), WG.siteDate(null)("2016-07-23"),
              WG.decode("%"), WG.decode("%E0%A4%A"), WG.decode("r%C3%A9vision")];
    }""")
    assert got == ["1er septembre 2014", "23 juillet 2016", "2016년 7월 23일", "not a date", "2016-07-23",
                   "%", "%E0%A4%A", "révision"]


@pytest.mark.parametrize("lang", LANGS)
def test_revision_selector_writes_dates_as_the_site_does(server, page, lang):
    from generator.publish.text import format_date

    months = [ui(lang, f"date.month.{i}") for i in range(1, 13)]
    page.goto(f"{server}/{PREFIX[lang]}revisions/2016-07-23/")
    page.wait_for_function("document.querySelectorAll('select.wg-revision-select option').length > 10")
    for iso in ("2014-08-14", "2016-07-23", "2023-01-16"):
        option = page.locator(f'select.wg-revision-select option[value$="{iso}/"]').inner_text()
        assert option == format_date(iso, lang, months), (lang, iso)
