"""The whole pipeline: validate -> generate Markdown and JSON -> one MkDocs build per language.

Nothing is written when the data has errors, and ``site/`` is replaced only once every
language has built: a failed build leaves the previous site exactly as it was.
"""
from __future__ import annotations

import concurrent.futures
import copy
import multiprocessing
import os
import re
import shutil
import time
from dataclasses import dataclass, field
from pathlib import Path

import yaml

from generator.data.calculators import calculators
from generator.data.dataset import Dataset, Localizer
from generator.data.loader import load_dataset
from generator.data.locales import LANGS, build_order, locale
from generator.data.problems import DataError, Problem
from generator.facts.derive import derive
from generator.facts.folds import can_fork
from generator.publish.api import write_api, write_client_data
from generator.publish.assets import search_terms_json, shipped_modules, static_bytes, static_files
from generator.publish.feed import atom
from generator.publish.render import MissingText, alternates, nav, preload_templates, render_language
from generator.site import mkdocs_glue, scratch
from generator.site.scratch import swap_in

ROOT = Path(__file__).resolve().parents[2]

@dataclass
class Paths:
    root: Path = ROOT
    data: Path | None = None
    build: Path | None = None
    site: Path | None = None

    def __post_init__(self):
        self.root = Path(self.root)
        self.data = Path(self.data) if self.data else self.root / "data"
        self.build = Path(self.build) if self.build else self.root / "build"
        self.site = Path(self.site) if self.site else self.root / "site"

    @property
    def templates(self) -> Path:
        return self.root / "templates" / "pages"

    @property
    def static(self) -> Path:
        return self.root / "docs"

    @property
    def api(self) -> Path:
        """The JSON API as generated: ``api/v1/`` below it is copied into the English site after
        MkDocs has built it (MkDocs would otherwise list, look at and copy every one of its files
        on each build, the preview's included)."""
        return self.build / "json"

    @property
    def page_cache(self) -> Path:
        """Compiled bytecode of the page templates, kept between builds."""
        return self.build / ".cache" / "jinja-pages"

    @property
    def theme_cache(self) -> Path:
        """Compiled bytecode of the theme's templates, kept between builds."""
        return self.build / ".cache" / "jinja-theme"


@dataclass
class Timings:
    steps: dict = field(default_factory=dict)

    def add(self, name: str, seconds: float) -> None:
        self.steps[name] = self.steps.get(name, 0.0) + seconds


def load_or_fail(paths: Paths, changed=None) -> Dataset:
    """The validated dataset, or DataError with the problems. ``changed``: see ``load_dataset``."""
    ds, problems = load_dataset(paths.data, paths.root, changed=changed)
    if ds is None:
        raise DataError(problems)
    return ds


def _write_if_changed(path: Path, text: str) -> bool:
    """Write ``text`` unless the file already holds it (its time stays, so MkDocs' dirty build and
    the preview skip it). True when the file was written."""
    if path.exists() and path.read_text(encoding="utf-8") == text:
        return False
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")
    return True


def generate(ds: Dataset, paths: Paths, langs=LANGS, timings: Timings | None = None) -> dict[str, set[str]]:
    """Write every language's Markdown and assets under ``build/docs/<lang>``, and the JSON API
    under ``build/json``.

    Languages are independent, so they render in parallel processes (forked: they share the
    loaded data) when the machine has more than one core and nothing else runs threads (the
    live-reload server does; it renders in this process). Output is the same either way."""

    t0 = time.perf_counter()
    langs = list(langs)
    if can_fork(len(langs)):
        derive(ds).warm()
        minified_modules(paths)
        out = dict(zip(langs, _fork_map(_generate_forked, langs, (ds, paths)), strict=True))
    else:
        out = {lang: generate_language(ds, paths, lang) for lang in langs}
    if timings:
        timings.add("generate", time.perf_counter() - t0)
    return out


# What forked workers share: set just before the pool forks, read by the worker functions.
_FORKED: tuple | None = None


def _fork_map(fn, items: list, shared: tuple) -> list:
    """``fn`` over ``items`` in forked processes (as many as there are cores and the memory holds),
    ``shared`` in reach. Where the memory holds fewer workers than the cores, they run in waves of
    fresh forks, so that what one item's work kept does not stay for the next."""
    global _FORKED
    _FORKED = shared
    try:
        wanted = min(len(items), os.cpu_count() or 1)
        workers = scratch.workers_that_fit(wanted)
        if workers >= wanted:
            return _fork_wave(fn, items, workers)
        return [r for i in range(0, len(items), workers) for r in _fork_wave(fn, items[i:i + workers], workers)]
    finally:
        _FORKED = None


def _fork_wave(fn, items: list, workers: int) -> list:
    # the workers end with this process, even when it is killed (see generator.site.scratch)
    pool = concurrent.futures.ProcessPoolExecutor(workers, mp_context=multiprocessing.get_context("fork"),
                                                  initializer=scratch.die_with_parent, initargs=(os.getpid(),))
    try:
        out = list(pool.map(fn, items))
    except BaseException:
        scratch.stop_workers(pool)  # an error, Ctrl-C or SIGTERM: the other languages' builds stop too
        raise
    pool.shutdown()
    return out


def _generate_forked(lang: str) -> set[str]:
    ds, paths = _FORKED
    return generate_language(ds, paths, lang)


def _render_or_fail(ds: Dataset, paths: Paths, lang: str, only: set[str] | None):
    """The language's pages, or one problem at data/ui.yaml naming the interface text they lack."""
    try:
        return render_language(ds, lang, paths.templates, only, paths.page_cache)
    except MissingText as exc:
        ui_file = (paths.data / "ui.yaml")
        shown = ui_file.relative_to(paths.root).as_posix() if ui_file.is_relative_to(paths.root) else str(ui_file)
        raise DataError([Problem(shown, 1, exc.args[0], "missing: the page templates need this interface text")]) from None


def generate_language(ds: Dataset, paths: Paths, lang: str, only: set[str] | None = None, api: bool = True) -> set[str]:
    """One language's pages, assets and feed under ``build/docs/<lang>`` (and, for English, the
    JSON API under ``build/json``, unless ``api`` is false: see ``generate_api``). Returns the
    paths (relative to those folders) whose content changed; the API's begin with ``api/v1/``.

    With ``only``, the pages at those paths, the shared assets, and the client data when one of
    those pages reads it, nothing else: the preview's first step, for the page a reader has open."""
    lang_dir = paths.build / "docs" / lang
    wanted, changed = set(), set()
    pages = _render_or_fail(ds, paths, lang, only)
    written = []
    for page in pages:
        target = lang_dir / page.path
        if _write_if_changed(target, page.text):
            changed.add(page.path)
        wanted.add(target)
        if only is not None:
            written.append(page.text)
    written += _copy_static(paths, lang, only, changed, wanted)
    client_rel = "assets/data/whichgpu-data.js"
    # The preview's first step writes the shared data file (every card, every revision) only when
    # the open page reads it; otherwise the step after it does.
    if only is None or any(uses_client_data(text) for text in written):
        before = (lang_dir / client_rel).stat().st_mtime_ns if (lang_dir / client_rel).exists() else None
        wanted.add(write_client_data(ds, lang_dir))
        if (lang_dir / client_rel).stat().st_mtime_ns != before:
            changed.add(client_rel)
    terms = lang_dir / "assets" / "data" / "search-terms.json"
    if _write_if_changed(terms, search_terms_json(ds, lang)):
        changed.add("assets/data/search-terms.json")
    wanted.add(terms)
    if only is not None:
        return changed
    if lang == "en" and api:
        changed |= generate_api(ds, paths)
    feed = lang_dir / "feed.atom"
    if _write_if_changed(feed, atom(ds, lang)):
        changed.add("feed.atom")
    wanted.add(feed)
    # drop pages of records that no longer exist
    if lang_dir.exists():
        for stale in [p for p in lang_dir.rglob("*") if p.is_file() and p not in wanted]:
            stale.unlink()
            changed.add(stale.relative_to(lang_dir).as_posix())
    return changed


API_PREFIX = "api/v1/"


def generate_api(ds: Dataset, paths: Paths) -> set[str]:
    """The JSON API under ``paths.api``; the paths written or removed, relative to it."""
    root = paths.api
    fresh: set[Path] = set()
    wanted = set(write_api(ds, root, fresh))
    changed = {p.relative_to(root).as_posix() for p in fresh}
    if root.exists():
        for stale in [p for p in root.rglob("*") if p.is_file() and p not in wanted]:
            stale.unlink()
            changed.add(stale.relative_to(root).as_posix())
    return changed


def publish_api(paths: Paths, site_dir: Path, only: set[str] | None = None) -> None:
    """Put the generated API into the English site at ``site_dir``: every file, or only the paths
    of ``only`` (relative, as ``generate_language`` returns them), a path whose file is gone
    removed from the site too."""
    if only is None:
        if (paths.api / "api").is_dir():
            shutil.copytree(paths.api / "api", site_dir / "api", dirs_exist_ok=True)
        return
    for rel in sorted(only):
        if not rel.startswith(API_PREFIX):
            continue
        src, target = paths.api / rel, site_dir / rel
        if src.is_file():
            target.parent.mkdir(parents=True, exist_ok=True)
            shutil.copyfile(src, target)
        elif target.is_file():
            target.unlink()


def _copy_static(paths: Paths, lang: str, only: set[str] | None, changed: set[str], wanted: set[Path]) -> list[str]:
    """Hand-written pages of this language, then shared static assets, into ``build/docs/<lang>``;
    with ``only``, hand-written pages outside it are left alone. Returns the texts of the pages
    of ``only`` it copied."""
    lang_dir, texts = paths.build / "docs" / lang, []
    modules = minified_modules(paths)
    for src, rel in static_files(paths.static, lang, paths.templates):
        target = lang_dir / rel
        if only is not None and rel.suffix == ".md":
            if rel.as_posix() not in only:
                continue
            texts.append(src.read_text(encoding="utf-8"))
        target.parent.mkdir(parents=True, exist_ok=True)
        data = modules[rel] if rel in modules else static_bytes(src, rel, paths.templates)
        if not target.exists() or target.read_bytes() != data:
            target.write_bytes(data)
            changed.add(rel.as_posix())
        wanted.add(target)
    return texts


def minified_modules(paths: Paths) -> dict[Path, bytes]:
    """The JavaScript modules as the site ships them (minified), each worked out once: a build
    asks before its languages fork, and they find the answers in memory."""
    return shipped_modules(paths.static, paths.templates, paths.build / "cache")


# What makes a page's scripts load the shared data file (docs/assets/js/whichgpu.js: compare, the
# diff picker, the revision selector; calc/main.mjs: the calculators with client_data: true).
_CLIENT_DATA_HOOKS = re.compile(r'id="wg-compare"|id="wg-diff"|\bwg-revision-select\b|data-wg-calc="(?:'
                                + "|".join(c.id for c in calculators() if c.client_data) + ')"')


def uses_client_data(page_text: str) -> bool:
    """Whether a page, as generated, reads ``assets/data/whichgpu-data.js`` in the browser."""
    return _CLIENT_DATA_HOOKS.search(page_text) is not None


def mkdocs_overrides(ds: Dataset, lang: str, docs_dir: Path, site_dir: Path, base_config: dict) -> dict:
    base_config = copy.deepcopy(base_config)  # mkdocs consumes the dicts it validates
    theme = dict(base_config.get("theme") or {})
    theme["language"] = lang
    # the colour scheme toggle says, in the page's language, which scheme it switches to
    ui = Localizer(ds, lang).ui
    theme["palette"] = [dict(option, toggle=dict(option["toggle"], name=ui(
        "theme.to_light" if option.get("scheme") == "slate" else "theme.to_dark")))
        if option.get("toggle") else option for option in theme.get("palette") or []]
    extra = dict(base_config.get("extra") or {})
    extra["alternate"] = alternates(lang)
    extra["html_lang"] = locale(lang).html_lang
    extra["feed_title"] = ui("feed.title")
    plugins = [p for p in (base_config.get("plugins") or []) if not (p == "search" or (isinstance(p, dict) and "search" in p))]
    plugins = [{"search": copy.deepcopy(locale(lang).search)}] + plugins
    out = {}
    site_url = os.environ.get("WHICHGPU_SITE_URL")
    if site_url:  # the published address; instant navigation needs it to match the page origin
        base = site_url.rstrip("/") + "/"
        out["site_url"] = base if lang == "en" else f"{base}{lang}/"
    return out | {
        "docs_dir": str(docs_dir),
        "site_dir": str(site_dir),
        "theme": theme,
        "extra": extra,
        "plugins": plugins,
        "nav": nav(ds, lang),
    }


def read_base_config(paths: Paths) -> dict:
    with open(paths.root / "mkdocs.yml", encoding="utf-8") as fh:
        return yaml.safe_load(fh)


def build_languages(ds: Dataset, paths: Paths, out_dir: Path, langs=LANGS, timings: Timings | None = None,
                    nested: bool = True) -> None:
    """One MkDocs build per language into ``out_dir`` (``nested``: the others below it, in
    ``out_dir/<lang>``; otherwise each language's site is ``out_dir`` itself)."""

    base = read_base_config(paths)
    mkdocs_glue.use_template_cache(paths.theme_cache)
    for lang in langs:
        t0 = time.perf_counter()
        site_dir = out_dir if (lang == "en" or not nested) else out_dir / lang
        overrides = mkdocs_overrides(ds, lang, paths.build / "docs" / lang, site_dir, base)
        mkdocs_glue.build(paths.root / "mkdocs.yml", overrides)
        mkdocs_glue.compact_search_index(site_dir / "search" / "search_index.json")
        if lang == "en":
            publish_api(paths, site_dir)
        if timings:
            timings.add(f"mkdocs:{lang}", time.perf_counter() - t0)


def build_site(paths: Paths, langs=LANGS, timings: Timings | None = None) -> Dataset:
    """Validate, generate and build into a fresh folder, then swap it in as ``site/``.

    Each language builds into a folder of its own, in parallel processes (as many as there are
    cores), and the folders are then put together: English at the root, the others beside it."""
    with scratch.exit_on_sigterm():  # SIGTERM undoes the build's folders as Ctrl-C does
        # what builds killed before they could clean up left beside the site
        scratch.remove_leftovers(paths.site.parent, scratch.site_leftovers(paths.site))
        return _build_site(paths, langs, timings)


def _build_site(paths: Paths, langs, timings: Timings | None) -> Dataset:
    t0 = time.perf_counter()
    ds = load_or_fail(paths)
    if timings:
        timings.add("validate", time.perf_counter() - t0)
    parallel = can_fork(len(langs))
    if not parallel:
        generate(ds, paths, langs, timings)
    tmp = paths.site.with_name(f"{paths.site.name}.tmp-{os.getpid()}")
    parts = {lang: paths.site.with_name(f"{paths.site.name}.tmp-{os.getpid()}-{lang}") for lang in langs}
    for folder in (tmp, *parts.values()):
        if folder.exists():
            shutil.rmtree(folder)
    try:
        if parallel:
            _build_pipelined(ds, paths, parts, timings)
        else:
            for lang in langs:
                build_languages(ds, paths, parts[lang], [lang], timings, nested=False)
        if "en" in parts:
            parts["en"].rename(tmp)
        else:
            tmp.mkdir(parents=True)
        for lang, folder in parts.items():
            if lang != "en":
                folder.rename(tmp / lang)
    except BaseException:
        for folder in (tmp, *parts.values()):
            shutil.rmtree(folder, ignore_errors=True)
        raise
    swap_in(tmp, paths.site)
    return ds


# Longest first, so that the last language to start is a short one: the order follows each
# language's ``build_weight`` in the locale table. With two processes, the first of the two
# heaviest to finish takes the third, the other the fourth.
BUILD_ORDER = tuple(build_order(LANGS))


def _build_pipelined(ds: Dataset, paths: Paths, parts: dict[str, Path], timings: Timings | None) -> None:
    """Each language generated then built by MkDocs in one forked process, as many at once as
    there are cores: no language waits for the others' generation to finish before its MkDocs
    build starts. Timings: ``generate`` is the sum of the languages' generation, each
    ``mkdocs:<lang>`` its own build."""

    langs = build_order(parts)
    # What each language process would otherwise redo is done once here and inherited by the fork:
    # the derived tables, the minified JavaScript, the page templates' compiled code, and MkDocs with its plugins and
    # Markdown extensions imported and configured.
    t0 = time.perf_counter()
    derive(ds).warm()
    minified_modules(paths)
    if timings:  # the generator's work that every language shares (the fit, the grid of estimates)
        timings.add("derive", time.perf_counter() - t0)
    preload_templates(paths.templates, paths.page_cache)
    with mkdocs_glue.preloaded(paths.root / "mkdocs.yml", paths.static):
        done = _fork_map(_build_forked, langs, (ds, paths, parts))
    for lang, (gen_s, build_s) in zip(langs, done, strict=True):
        if timings:
            timings.add("generate", gen_s)
            timings.add(f"mkdocs:{lang}", build_s)


def _build_forked(lang: str) -> tuple[float, float]:
    ds, paths, parts = _FORKED
    t0 = time.perf_counter()
    generate_language(ds, paths, lang)
    t1 = time.perf_counter()
    build_languages(ds, paths, parts[lang], [lang], None, nested=False)
    return t1 - t0, time.perf_counter() - t1


def manifest(site: Path) -> dict:
    """Relative path -> size of every file in a built site (for tests and benchmarks)."""
    return {p.relative_to(site).as_posix(): p.stat().st_size for p in sorted(site.rglob("*")) if p.is_file()}


__all__ = ["Paths", "build_site", "generate", "load_or_fail", "manifest", "swap_in"]
