"""Render the Markdown pages of one language from the dataset through Jinja2 templates.

Everything a template prints with ``{{ ... }}`` passes through ``escape_md`` (see
:mod:`generator.publish.text`) unless it is already :class:`Markup` made by this module, so no
string from ``data/`` can become HTML, Markdown or script.
"""
from __future__ import annotations

import functools
import json
import re
from collections.abc import Collection
from dataclasses import dataclass
from pathlib import Path

import jinja2
from markupsafe import Markup

from generator.data.calculators import calculators, with_pages
from generator.data.dataset import Dataset, Localizer, Record
from generator.data.locales import DEFAULT_LANG, LOCALES, locale
from generator.data.schema import ID_RE
from generator.estimate.formats import TABLES as ENGINE_TABLES
from generator.facts.calc import worked_examples
from generator.facts.derive import derive
from generator.facts.history import sources_for
from generator.publish import pages as registry
from generator.publish.charts import PERF_PRICE_ON_PAGE, charts_for, perf_price_chart, priced_tables
from generator.publish.pages import LIST_ROWS, single_paths
from generator.publish.render_estimates import EstimatesText
from generator.publish.text import escape_md, escape_title, format_date, format_number, yaml_str
from generator.publish.today_text import TodayText

# sourced GPU fields -> the interface text that labels them on pages
FIELD_LABELS = {
    "memory_gb": "gpus.col_memory", "memory_bandwidth_gbs": "gpus.col_bandwidth", "fp32_tflops": "gpus.col_fp32",
    "fp16_tensor_tflops": "gpus.col_tensor", "fp16_tensor_tflops_sparse": "gpu.tensor_sparse", "tdp_w": "gpus.col_tdp",
    "launch_price_usd": "gpus.col_price", "release_date": "gpus.col_release", "architecture": "gpus.col_architecture",
    "memory_type": "gpu.memory_type", "l2_cache_mb": "gpu.l2_cache", "compute_capability": "gpu.compute_capability",
    "fp8_tensor_tflops": "gpu.fp8_tensor", "fp8_tensor_tflops_sparse": "gpu.fp8_tensor_sparse",
    "fp4_tensor_tflops": "gpu.fp4_tensor", "fp4_tensor_tflops_sparse": "gpu.fp4_tensor_sparse",
    "gpu_memory_share": "gpu.memory_share", "interconnect": "gpu.interconnect", "cooling": "gpu.cooling",
    "slot_width": "gpu.slot_width", "power_connectors": "gpu.power_connectors", "discontinued": "gpu.discontinued",
}
DATE_ID_RE = re.compile(r"^\d{4}-\d{2}-\d{2}$")
NAV_REVISIONS = 6
# The calculators' overview, first in their part of the sidebar; the calculators follow in their
# order (generator/data/calculators.py).
CALCULATORS_OVERVIEW = ("calc.nav_overview", "index")
PLACEHOLDER = re.compile(r"(\{[a-z][a-z0-9_]*\})")


@dataclass(frozen=True)
class Page:
    """One generated page: its path below the language root and its Markdown."""

    path: str  # e.g. "revisions/2019-04-03.md"
    text: str


# Long lists (the catalogue, the history, the revisions, today's cards): a page carries its first
# LIST_ROWS rows; the rest go to a script beside it, which the page loads on first use (sorting,
# filtering, "show all", or a link to a row it does not carry). A page's size then stays the
# same however large the data grows, and sorting and filtering still cover every row.
_REST = re.compile(r"<!--wg-rest:([a-z0-9-]+)-->(.*?)(?=</tbody>)", re.S)


@dataclass(frozen=True)
class Rows:
    """A list split for the page: ``items`` (the page's rows first), ``shown`` of ``total``."""

    table: str
    items: list
    shown: int
    total: int
    rest_file: str

    @property
    def split(self) -> bool:
        return self.shown < self.total

    @property
    def attrs(self) -> Markup:
        """For the table's <tbody>: where the rest is, and how many rows there are in all."""
        if not self.split:
            return Markup("")
        return Markup(f' data-wg-rest="{self.rest_file}" data-wg-total="{self.total}"')

    @property
    def cut(self) -> Markup:
        """Written before the first row the page does not carry (see :func:`split_rest`)."""
        return Markup(f"<!--wg-rest:{self.table}-->") if self.split else Markup("")


def rest_script(table: str, rows_html: str) -> str:
    """The rows a page does not carry, as a script (it works from file:// too)."""
    # An external script, never inlined: only the two line separators JSON allows and older
    # JavaScript does not need escaping.
    body = json.dumps(rows_html.strip(), ensure_ascii=False).replace("\u2028", "\\u2028").replace("\u2029", "\\u2029")
    return f"(window.wgRows = window.wgRows || {{}})[{json.dumps(table)}] = {body};\n"


def split_rest(page: Page) -> list[Page]:
    """Cut the rows after each ``Rows.cut`` marker out of ``page`` into a script beside it: in
    ``<dir>/<table>.rows.js``, where ``<dir>`` is the page's own address (``gpus/`` for
    ``gpus/index.md``), so the page finds it by its bare name."""
    if "<!--wg-rest:" not in page.text:
        return [page]
    stem = page.path[: -len(".md")]
    folder = stem[: -len("index")] if stem == "index" or stem.endswith("/index") else stem + "/"
    out = []

    def cut(match: re.Match) -> str:
        out.append(Page(f"{folder}{match[1]}.rows.js", rest_script(match[1], match[2])))
        return ""

    return [Page(page.path, _REST.sub(cut, page.text)), *out]


class MissingText(KeyError):
    """A template asked for an interface text that data/ui.yaml does not have."""


def _finalize(value):
    if value is None:
        return ""
    return escape_md(value)


def safe_id(value) -> Markup:
    """An id (validated as lowercase words joined by dashes) for URLs and anchors."""
    text = str(value)
    if not ID_RE.match(text) and not DATE_ID_RE.match(text):
        raise ValueError(f"not an id: {text!r}")
    return Markup(text)


@functools.lru_cache(maxsize=8)
def make_env(templates_dir: Path, cache_dir: Path | None = None) -> jinja2.Environment:
    """The page templates' environment; with ``cache_dir`` their compiled bytecode is kept there,
    so a build compiles each template once, not once per language process."""
    bytecode = None
    if cache_dir is not None:
        Path(cache_dir).mkdir(parents=True, exist_ok=True)
        bytecode = jinja2.FileSystemBytecodeCache(str(cache_dir))
    env = jinja2.Environment(
        loader=jinja2.FileSystemLoader(str(templates_dir)),
        bytecode_cache=bytecode,
        autoescape=True,
        finalize=_finalize,
        undefined=jinja2.StrictUndefined,
        keep_trailing_newline=True,
        trim_blocks=True,
        lstrip_blocks=True,
        extensions=["jinja2.ext.do"],
    )
    env.filters["id"] = safe_id
    env.globals["examples"] = worked_examples()
    env.globals["engine_tables"] = ENGINE_TABLES  # the LLM calculator's choices (tables.json)
    env.globals["calculators"] = functools.partial(with_pages, Path(templates_dir))
    env.globals["sources_for"] = sources_for
    env.globals["charts_for"] = _charts_for
    env.globals["perf_price_chart"] = _perf_price_chart
    env.globals["older_perf_price"] = _older_perf_price
    return env


def preload_templates(templates_dir: Path, cache_dir: Path | None = None) -> int:
    """Load every page template into the cached environment (from its bytecode where kept), so
    that processes forked afterwards find them compiled. Returns how many were loaded."""
    env = make_env(templates_dir, cache_dir)
    names = env.list_templates(filter_func=lambda name: name.endswith(".j2"))
    for name in names:
        env.get_template(name)
    return len(names)


def _charts_for(ds: Dataset, ctx):

    return charts_for(ds, ctx)


def _perf_price_chart(ds: Dataset, ctx, revision: str, table: int):

    return perf_price_chart(ds, ctx, revision, table)


def _older_perf_price(ds: Dataset) -> list[tuple[str, int]]:
    """The priced tables whose charts the charts page leaves to their revision pages."""

    return priced_tables(ds)[:-PERF_PRICE_ON_PAGE]


class Context(EstimatesText, TodayText):
    """What templates can call: translated text, links, formatting."""

    def __init__(self, ds: Dataset, lang: str):
        self.ds = ds
        self.lang = lang
        self.loc = Localizer(ds, lang)
        self.months = [self.ui_plain(f"date.month.{i}") for i in range(1, 13)]

    # -- text
    def t(self, record: Record, *keypath) -> Markup:
        """A record field in this language, marked up when it is English or stale."""
        text, status = self.loc.field(record, tuple(keypath))
        body = escape_md(text)
        if status == "missing" and self.lang != "en":
            label = escape_md(self.loc.ui("i18n.untranslated"))
            return Markup(f'<span lang="en">{body}</span> <span class="wg-i18n" title="{label}">EN</span>')
        if status == "stale":
            label = escape_md(self.loc.ui("i18n.stale"))
            return Markup(f'{body} <span class="wg-i18n wg-i18n--stale" title="{label}">*</span>')
        return body

    def ui(self, key: str) -> Markup:
        self._need(key)
        return self.t(self.ds.ui, key)

    def ui_plain(self, key: str) -> str:
        self._need(key)
        return self.loc.ui(key)

    def rows(self, table: str, shown_first: list, rest: list | None = None) -> Rows:
        """Split a list for a page (see ``LIST_ROWS``): ``shown_first`` are the rows the page
        carries when there are too many (in their order), ``rest`` the others; with ``rest``
        None, the first ``LIST_ROWS`` of ``shown_first`` are carried."""
        if rest is None:
            shown_first, rest = shown_first[:LIST_ROWS], shown_first[LIST_ROWS:]
        total = len(shown_first) + len(rest)
        items = list(shown_first) + list(rest)
        shown = len(shown_first) if total > LIST_ROWS else total
        return Rows(table, items, shown, total, f"{table}.rows.js")

    def fill(self, key: str, **parts) -> Markup:
        """An interface text with ``{name}`` placeholders replaced by ``parts``.

        Parts that are :class:`Markup` (links made by the templates) are kept; anything
        else is escaped like every other string.
        """
        self._need(key)
        text, status = self.loc.field(self.ds.ui, (key,))
        out = []
        for piece in PLACEHOLDER.split(text):
            name = piece[1:-1] if PLACEHOLDER.fullmatch(piece) else None
            out.append(escape_md(parts[name]) if name in parts else escape_md(piece))
        body = Markup("".join(out))
        if status == "missing" and self.lang != "en":
            return Markup(f'<span lang="en">{body}</span>')
        return body

    def fill_plain(self, key: str, **parts) -> str:
        self._need(key)
        text = self.loc.ui(key)
        return PLACEHOLDER.sub(lambda m: str(parts.get(m.group(0)[1:-1], m.group(0))), text)

    def link(self, text: str, target: str) -> Markup:
        """A Markdown link; ``target`` is built by templates from validated ids only."""
        return Markup(f"[{escape_md(text)}]({target})")

    def gpu_link(self, gid: str, base: str = "../gpus/") -> Markup:
        """A link to a GPU's own page; ``base`` is the path from the current page to gpus/."""
        return self.link(self.gpu_name(gid), f"{base}{safe_id(gid)}.md")

    def field_label(self, field: str) -> str:
        """The label a page shows for a sourced GPU field (never the field's name)."""
        return self.ui_plain(FIELD_LABELS.get(field, "gpu.col_field"))

    def gpu_links(self, ids, base: str = "../gpus/") -> Markup:
        sep = self.ui("punct.list_sep")
        return Markup(sep.join(self.gpu_link(g, base) for g in ids))

    # -- computed facts live in the derive stage (once per dataset, for every language); templates
    # read them as ``facts``, and the text helpers below through this property
    @property
    def facts(self):

        return derive(self.ds)

    def advice_age(self, up: str) -> Markup:
        """How old the newest advice is at build time, with links to it and to today's cards;
        ``up`` is the path from the current page to the language root."""
        a = self.facts.advice_age
        y = self.fill_plain("age.years_one" if a.years == 1 else "age.years", n=a.years) if a.years else ""
        m = self.fill_plain("age.months_one" if a.months == 1 else "age.months", n=a.months) if a.months or not a.years else ""
        span = self.fill_plain("age.join", years=y, months=m) if y and m else (y or m)
        newest = self.link(self.date(a.newest), f"{up}revisions/{safe_id(a.newest)}.md")
        if not self.ds.prices:  # no dated prices, no page of today's cards to point to
            return self.fill("age.body_no_today", date=newest, age=span, built=self.date(a.built))
        return self.fill("age.body", date=newest, age=span, built=self.date(a.built),
                         today=self.link(self.ui_plain("age.today_link"), f"{up}today/index.md"))

    def _need(self, key: str) -> None:
        if key not in self.ds.ui.texts:
            raise MissingText(key)

    def title(self, text: str) -> str:
        return yaml_str(escape_title(text))

    def persona(self, pid: str) -> Markup:
        return self.t(self.ds.personas, pid, "name")

    # -- formatting
    def date(self, value) -> str:
        return format_date(value, self.lang, self.months)

    def date_format(self) -> dict:
        """How ``date`` writes a date, for the pages' scripts: the pattern, the first day of a
        month and the month names (whichgpu.js formats the dates it adds the same way)."""
        loc = locale(self.lang)
        return {"pattern": loc.date, "first_day": loc.first_day, "months": self.months}

    def num(self, value, digits=None) -> str:
        return format_number(value, self.lang, digits)

    # -- links (relative to the language root; pages give their depth)
    def gpu_name(self, gid: str) -> str:
        gpu = self.ds.gpus.get(gid)
        return gpu["name"] if gpu else gid


def render_language(ds: Dataset, lang: str, templates_dir: Path, only: Collection[str] | None = None,
                    cache_dir: Path | None = None) -> list[Page]:
    """Every page of the site in ``lang``, the same paths in every language: each page kind of the
    registry (:mod:`generator.publish.pages`), then the stand-alone pages of ``templates/pages/site``.
    With ``only``, just the pages at those paths (the preview renders the open page first)."""

    env = make_env(templates_dir, cache_dir)
    ctx = Context(ds, lang)
    pages = []
    for kind in registry.PAGE_KINDS:
        if only is not None and kind.path is not None and kind.path not in only:
            continue
        tpl = env.get_template(kind.template)
        for path, variables in kind.pages(ds, ctx, only):
            if only is None or path in only:
                if callable(variables):
                    variables = variables()
                pages += split_rest(Page(path, tpl.render(c=ctx, ds=ds, facts=ctx.facts, **variables)))
    pages += _site_pages(env, ctx, ds, templates_dir, only)
    return pages


def site_page_templates(templates_dir: Path) -> dict[str, str]:
    """Stand-alone pages, page path -> template name: templates/pages/site/<path>.md.j2 becomes
    <path>.md in every language, and a calculator's page (its folder's page.md.j2) becomes
    calculators/<page>.md."""
    base = Path(templates_dir) / "site"
    own = {c.template: c.page_path for c in calculators(Path(templates_dir)) if c.template and c.page}
    folders = [c.folder for c in calculators(Path(templates_dir))]
    out = {}
    for tpl in sorted(base.rglob("*.md.j2")) if base.is_dir() else []:
        name = f"site/{tpl.relative_to(base).as_posix()}"
        if name in own:
            out[own[name]] = name
        elif not any(tpl.is_relative_to(folder) for folder in folders):
            out[name[len("site/"): -len(".j2")]] = name
    return out


def _site_pages(env, ctx: Context, ds: Dataset, templates_dir: Path, only: Collection[str] | None = None) -> list[Page]:
    """The stand-alone pages of :func:`site_page_templates`."""
    out = []
    for path, name in site_page_templates(templates_dir).items():
        if only is None or path in only:
            out += split_rest(Page(path, env.get_template(name).render(c=ctx, ds=ds, facts=ctx.facts)))
    return out


def nav(ds: Dataset, lang: str, templates_dir: Path | None = None) -> list:
    """The sidebar of one language, from the registry's ``NAV`` (GPU, diff and topic pages are
    reached from their sections): an entry is shown when its page exists for this dataset."""

    loc = Localizer(ds, lang)
    esc = escape_title
    templates = Path(templates_dir or Path(__file__).resolve().parents[2] / "templates" / "pages")
    kinds = single_paths(ds)
    months = [loc.ui(f"date.month.{i}") for i in range(1, 13)]
    site_pages = site_page_templates(templates)

    def exists(path: str) -> bool:
        return path in kinds or path in site_pages

    out = []
    for entry in registry.NAV:
        if entry.group == "revisions":
            # The newest few revisions only: every page carries the sidebar, so its size must not
            # grow with the history; the rest are one click away on the list page and in each
            # page's selector.
            revisions = [{esc(format_date(r.id, lang, months)): f"revisions/{r.id}.md"}
                         for r in reversed(ds.revisions[-NAV_REVISIONS:])]
            out.append({esc(loc.ui(entry.key)): [{esc(loc.ui("nav.all_revisions")): entry.path}] + revisions})
        elif entry.group == "calculators":
            entries = [CALCULATORS_OVERVIEW] + [(c.nav, c.page) for c in with_pages(templates)]
            shown = [(key, page) for key, page in entries if exists(f"calculators/{page}.md")]
            if shown:
                out.append({esc(loc.ui(entry.key)): [{esc(loc.ui(key)): f"calculators/{page}.md"} for key, page in shown]})
        elif exists(entry.path):
            out.append({esc(loc.ui(entry.key)): entry.path})
    return out


def alternates(lang: str) -> list[dict]:
    """Language switcher entries, relative to this language's root."""
    up = "" if lang == DEFAULT_LANG else "../"
    out = []
    for other in LOCALES:
        link = (up or "./") if other.code == DEFAULT_LANG else f"{up}{other.code}/"
        out.append({"name": other.name, "lang": other.html_lang, "link": link})
    return out


