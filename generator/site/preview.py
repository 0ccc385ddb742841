"""The live preview of ``serve``: an edit reaches the open page in about a second.

After the first full build, each change (under ``data/``, ``templates/``, ``docs/`` or
``mkdocs.yml``) is handled in two steps:

1. **The open page.** The data is loaded again (only the files the watcher saw written are read;
   a record edited in place replaces its own record, and what is derived from the others is
   reused: see ``generator.data.loader.changes``), the page the reader has open is rendered, and
   MkDocs builds that page alone in place (a dirty build): the browser reloads once, when it is
   done.
2. **The rest, in the background.** Every page of the open page's language is rendered, and only
   the pages whose Markdown changed are built again; then the other languages the same way. When
   the sidebar or the theme changed, every page of the language is built again. A request for a
   page that is still waiting for its turn is held until it is built, so no reader sees it stale.

What a reader is served after a change comes from one load: every page, the JSON API and the
files built from every page (the search index, the sitemap, the feed, the shared data file) are held
while the site still holds them as an older load made them. The API is written first thing in the
background, so it is held a moment only.

A newer change stops the background work at the next step and starts again from step 1 (what was
not built yet is remembered). When the data has errors, they are printed in the terminal and shown
at the top of every page, and the site stays as the last good build left it.
"""
from __future__ import annotations

import contextlib
import gc
import html
import os
import sys
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path

from generator.data.locales import DEFAULT_LANG, LANGS
from generator.data.problems import DataError
from generator.publish.render import nav
from generator.site import mkdocs_glue
from generator.site.pipeline import (
    API_PREFIX,
    Paths,
    build_site,
    generate_api,
    generate_language,
    load_or_fail,
    mkdocs_overrides,
    publish_api,
    read_base_config,
    uses_client_data,
)

CLIENT_DATA = "assets/data/whichgpu-data.js"
# A language's files besides its pages that only the background step writes (from every page, or
# every card): the open page's step leaves them as the last load made them.
BACKGROUND_FILES = frozenset({"search/search_index.json", "sitemap.xml", "sitemap.xml.gz", "feed.atom", CLIENT_DATA})
# Of those, the ones written from the pages themselves (built again when a page is)
FROM_PAGES = frozenset({"search/search_index.json", "sitemap.xml", "sitemap.xml.gz"})


@dataclass
class Step:
    """What one step of the preview did (printed, and read by tests and ``make bench``)."""

    lang: str
    built: list[str]  # Markdown pages built again, relative to the language root
    seconds: float
    full: bool = False  # every page of the language (the sidebar or the theme changed)


@dataclass
class Change:
    started: float
    page: tuple[str, str | None]  # (language, Markdown path) open when the change came
    steps: list[Step] = field(default_factory=list)
    problems: list[str] = field(default_factory=list)
    done: bool = False  # every language caught up


def page_of(url_path: str, langs=LANGS) -> tuple[str, str] | None:
    """(language, Markdown path) of a page address: ``/ko/gpus/rtx-4090/`` ->
    ("ko", "gpus/rtx-4090.md"), ``/`` -> ("en", "index.md"). None for anything but a page."""
    parts = url_path.lstrip("/")
    if parts.endswith(".html"):
        parts = parts[: -len("index.html")] if parts.endswith("index.html") else None
    if parts is None or (parts and not parts.endswith("/")):
        return None
    lang = DEFAULT_LANG
    first = parts.split("/", 1)[0]
    if first in langs and first != DEFAULT_LANG:
        lang, parts = first, parts[len(first) + 1:]
    if not parts:
        return lang, "index.md"
    return lang, parts.rstrip("/") + ".md"


def html_of(md: str) -> str:
    """Where MkDocs writes a Markdown page (directory URLs)."""
    stem = md[: -len(".md")]
    if stem == "index" or stem.endswith("/index"):
        return stem + ".html"
    return stem + "/index.html"


def url_of(lang: str, md: str | None) -> str:
    """The address of a Markdown page (the inverse of :func:`page_of`)."""
    prefix = "/" if lang == DEFAULT_LANG else f"/{lang}/"
    if not md:
        return prefix
    stem = md[: -len(".md")]
    stem = "" if stem == "index" else stem[: -len("index")] if stem.endswith("/index") else stem + "/"
    return prefix + stem


@contextlib.contextmanager
def _collector_paused():
    """Python's cyclic garbage collector held off while the open page is rebuilt. A full
    collection walks every object alive, the loaded data included, so its pauses grow with the
    catalogue (half a second at 10x the data, landing in the middle of the step). Reference
    counting still frees what it can; the collector runs again afterwards, during the
    background step."""
    enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if enabled:
            gc.enable()


class Preview:
    def __init__(self, paths: Paths, out=sys.stderr, langs=LANGS):
        self.paths = paths
        self.out = out
        self.langs = list(langs)
        self.viewed: tuple[str, str | None] = (DEFAULT_LANG, "index.md")
        self.pending: dict[str, set[str]] = {lang: set() for lang in self.langs}  # changed, not built yet
        self.full: set[str] = set()  # languages whose every page must be built again
        self.behind: set[str] = set()  # languages not rendered again since the last change
        self._fresh: tuple[str, str | None] | None = None  # the open page, built by the first step
        # the first step's language, and whether that step wrote the shared data file (the open
        # page reads it); None before the first step of a change is done
        self._stepped: tuple[str, bool] | None = None
        self._api_behind = False  # the API in the site is an older load's than the pages served
        self.changes: list[Change] = []
        self._problems: list[str] = []
        self._nav: dict[str, list] = {}
        self._theme = None
        self._lock = threading.Lock()  # one build step at a time
        self._cond = threading.Condition()  # guards pending and the generation counter
        self._generation = 0
        self._base = read_base_config(paths)
        # Files written since the last load, as the watcher reported them (``saw``); None when a
        # file was created, deleted or moved, or when no watcher reports here: then the next load
        # lists and looks at every file.
        self._written: set[str] | None = None
        self._events = threading.Lock()
        self._watched = False

        mkdocs_glue.use_template_cache(paths.theme_cache)

    # -- what the server asks -------------------------------------------------------------------
    def seen(self, url_path: str) -> None:
        page = self._page(url_path)
        if page is not None:
            self.viewed = page

    def _page(self, url_path: str) -> tuple[str, str] | None:
        """(language, Markdown path) of an address; ``gpus/`` is ``gpus/index.md`` when that exists."""
        page = page_of(url_path, self.langs)
        if page is None or page[1] == "index.md":
            return page
        lang, md = page
        nested = md[: -len(".md")] + "/index.md"
        return (lang, nested) if (self.paths.build / "docs" / lang / nested).is_file() else page

    def wait_for(self, url_path: str, timeout: float = 30.0) -> None:
        """Hold a request for a page the background step has not built again yet, or for a file
        that the site holds as an older load made it (see the module's docstring)."""
        page = self._page(url_path)
        if page is None:
            lang, rel = self._file(url_path)
            with self._cond:
                self._cond.wait_for(lambda: self._file_ready(lang, rel), timeout)
            return
        lang, md = page

        def ready() -> bool:
            if page == self._fresh:
                return True
            return lang not in self.behind and md not in self.pending.get(lang, ()) and lang not in self.full

        with self._cond:
            self._cond.wait_for(ready, timeout)

    def _file(self, url_path: str) -> tuple[str, str]:
        """(language, path in that language's site) of an address that is not a page."""
        rel = url_path.lstrip("/")
        first = rel.split("/", 1)[0]
        if first in self.langs and first != DEFAULT_LANG:
            return first, rel[len(first) + 1:]
        return DEFAULT_LANG, rel

    def _file_ready(self, lang: str, rel: str) -> bool:
        """Whether the site holds the file as the newest load makes it (called holding ``_cond``)."""
        if lang == DEFAULT_LANG and rel.startswith(API_PREFIX):
            return not self._api_behind
        pending = self.pending.get(lang, ())
        if rel in pending:
            return False  # written for this load, not in the site yet
        if rel in FROM_PAGES and (lang in self.full or any(p.endswith(".md") for p in pending)):
            return False
        if lang not in self.behind:
            return True
        # nothing of this load's background step is written yet: the first step's language holds
        # what that step wrote (every file but the background's), the others nothing
        stepped = self._stepped
        if stepped is None or stepped[0] != lang:
            return False
        return rel not in BACKGROUND_FILES or (rel == CLIENT_DATA and stepped[1])

    def banner(self) -> bytes | None:
        """The data's problems, as HTML shown at the top of every page (escaped)."""
        if not self._problems:
            return None
        items = "".join(f"<li>{html.escape(p)}</li>" for p in self._problems[:50])
        more = len(self._problems) - 50
        tail = f"<li>... and {more} more (see the terminal)</li>" if more > 0 else ""
        return (
            '<div id="wg-preview-problems" role="alert" style="position:sticky;top:0;z-index:10;'
            "background:#b00020;color:#fff;padding:.75em 1em;font:14px/1.4 system-ui,sans-serif;"
            'max-height:50vh;overflow:auto"><strong>The data has errors; this is the last good build.</strong>'
            f'<ul style="margin:.4em 0 0 1.2em;padding:0">{items}{tail}</ul></div>'
        ).encode()

    def watched(self) -> None:
        """A watcher reports every write under the data folder to ``saw`` from now on."""
        with self._events:
            self._watched = True

    def saw(self, event: str, path: str, is_directory: bool = False) -> None:
        """The watcher saw ``event`` (watchdog's event type) on ``path``. A file written in place is
        all the next load reads again; anything that changes what the folders hold (a file
        created, deleted or moved, a folder's event) makes it look at every file."""
        with self._events:
            if event in ("modified", "closed") and not is_directory:
                if self._written is not None:
                    self._written.add(os.path.abspath(path))
            else:
                self._written = None

    def _take_written(self) -> set[str] | None:
        with self._events:
            written, self._written = self._written, set()
            return written if self._watched else None

    def close(self, timeout: float = 30.0) -> None:
        """Stop the background work: the step in progress ends, no other starts, no request waits."""
        with self._cond:
            self._generation += 1
            self.behind.clear()
            self._api_behind = False
            self._cond.notify_all()
        if self._lock.acquire(timeout=timeout):
            self._lock.release()

    # -- building -------------------------------------------------------------------------------
    def start(self) -> None:
        """The first build: every language, in full (what ``build`` does)."""
        self._take_written()  # from here on, what the watcher reports is all that changes
        ds = build_site(self.paths, self.langs)
        self._nav = {lang: nav(ds, lang) for lang in self.langs}
        self._theme = self._theme_stamp()
        # MkDocs once in this process (its imports, the theme's file list): the first edit is as
        # quick as the next ones.
        self._mkdocs(ds, self.langs[0], set(), theme_pages=False)
        # What the first build left (the data, every kept answer) lives as long as the server, and
        # most of it is never garbage: the collector stops walking it, so the collection that
        # follows each step (before the page is reloaded) does not grow with the catalogue.
        # Reference counting still frees any of it that is let go.
        gc.collect()
        gc.freeze()

    def update(self) -> None:
        """A watched file changed: rebuild the open page now, the rest in the background."""
        with self._cond:
            self._generation += 1
            generation = self._generation
        change = Change(time.perf_counter(), self.viewed)
        self.changes.append(change)
        with self._lock, _collector_paused():
            written = self._take_written()
            try:
                ds = load_or_fail(self.paths, written)
            except DataError as exc:
                self._fail(change, [str(p) for p in exc.problems])
                return
            theme = self._theme_stamp()
            if theme != self._theme:

                mkdocs_glue.forget_theme_files()
                self._theme = theme
                self.full.update(self.langs)
            lang, md = change.page
            try:
                self._first_step(ds, change, lang, md)
            except DataError as exc:
                self._fail(change, [str(p) for p in exc.problems])
                return
            except Exception as exc:  # noqa: BLE001 - a failed MkDocs build must not stop the server
                self._fail(change, [f"the build failed: {exc}"])
                return
        self._problems = []
        first = change.steps[0]
        self._say(f"{url_of(lang, md)}: rebuilt in {first.seconds:.2f}s"
                  f" ({len(first.built)} page(s)); the other pages follow in the background")
        threading.Thread(target=self._catch_up, args=(generation, ds, change), daemon=True).start()

    def _first_step(self, ds, change: Change, lang: str, md: str | None) -> None:
        with self._cond:
            self.behind = set(self.langs)
            self._fresh = None
            self._stepped = None
            self._api_behind = DEFAULT_LANG in self.langs
        only = {md} if md else set()
        changed = generate_language(ds, self.paths, lang, only=only)
        with self._cond:
            self.pending[lang] |= changed
            build = {md} & (self.pending[lang] | (only if lang in self.full else set()))
            # the files other than pages that changed since this language was last built in full
            # (unless the theme changed: then its assets are compared as MkDocs does)
            files = {p for p in self.pending[lang] if not p.endswith(".md")}
            static = None if lang in self.full else files
        # The search index is left to the next step, which builds the page again with the others
        # (reading and writing the whole index would cost the open page time that grows with it).
        # MkDocs is told of the files this page's build reads, not of every card's page (see
        # mkdocs_glue.build), so the step does not grow with the catalogue.
        self._mkdocs(ds, lang, build, theme_pages=False, static=static, search_index=False, narrow=True)
        source = self.paths.build / "docs" / lang / md if md else None
        reads_data = source is not None and source.is_file() and uses_client_data(source.read_text(encoding="utf-8"))
        with self._cond:
            self._fresh = (lang, md)
            self._stepped = (lang, reads_data)
            self.pending[lang] -= files  # in the site now
            self._cond.notify_all()
        change.steps.append(Step(lang, sorted(build), time.perf_counter() - change.started))

    def _catch_up(self, generation: int, ds, change: Change) -> None:
        with self._lock:
            if generation != self._generation:
                return
            try:
                self._publish_api(ds)
            except Exception as exc:  # noqa: BLE001 - shown on the page; the server goes on
                self._fail(change, [f"the API: the build failed: {exc}"])
                return
        first = change.page[0]
        for lang in [first] + [x for x in self.langs if x != first]:
            with self._lock:
                if generation != self._generation:
                    return  # a newer change started again
                t0 = time.perf_counter()
                try:
                    changed = generate_language(ds, self.paths, lang, api=False)
                    with self._cond:
                        self.pending[lang] |= changed
                        self.behind.discard(lang)
                        self._cond.notify_all()
                    sidebar = nav(ds, lang)
                    full = lang in self.full or sidebar != self._nav.get(lang)
                    docs = self.paths.build / "docs" / lang
                    with self._cond:
                        build = ({p.relative_to(docs).as_posix() for p in docs.rglob("*.md")} if full
                                 else {p for p in self.pending[lang] if p.endswith(".md")})
                        gone = {p for p in self.pending[lang] if p.endswith(".md") and not (docs / p).exists()}
                    self._remove(lang, gone)
                    self._mkdocs(ds, lang, build - gone, theme_pages=full)
                except Exception as exc:  # noqa: BLE001 - shown on the page; the server goes on
                    with self._cond:
                        self.behind.clear()
                        self._cond.notify_all()
                    self._fail(change, [f"{lang}: the build failed: {exc}"])
                    return
                self._nav[lang] = sidebar
                with self._cond:
                    self.pending[lang].clear()
                    self.full.discard(lang)
                    self._cond.notify_all()
                change.steps.append(Step(lang, sorted(build - gone), time.perf_counter() - t0, full))
        change.done = True
        total = time.perf_counter() - change.started
        self._say(f"every language is up to date ({total:.1f}s after the change)")

    def _publish_api(self, ds) -> None:
        """The JSON API of this load into the English site, before any page of the background step:
        a request for it is held until then."""
        if DEFAULT_LANG in self.langs:
            publish_api(self.paths, self._site_dir(DEFAULT_LANG), generate_api(ds, self.paths))
        with self._cond:
            self._api_behind = False
            self._cond.notify_all()

    def _mkdocs(self, ds, lang: str, rebuild: set[str], theme_pages: bool, static: set[str] | None = None,
                search_index: bool = True, narrow: bool = False) -> None:

        site = self._site_dir(lang)
        overrides = mkdocs_overrides(ds, lang, self.paths.build / "docs" / lang, site, self._base)
        mkdocs_glue.build(self.paths.root / "mkdocs.yml", overrides, rebuild=rebuild, theme_pages=theme_pages,
                          static=static, search_index=search_index, narrow=narrow)

    def _remove(self, lang: str, gone: set[str]) -> None:
        """Pages of records that were deleted: their HTML goes too."""
        site = self._site_dir(lang)
        for md in gone:
            target = site / html_of(md)
            if target.is_file():
                target.unlink()

    def _site_dir(self, lang: str) -> Path:
        return self.paths.site if lang == DEFAULT_LANG else self.paths.site / lang

    def _theme_stamp(self) -> tuple:
        """The files every page's HTML depends on: MkDocs' configuration and the theme overrides."""
        files = [self.paths.root / "mkdocs.yml", *sorted((self.paths.root / "templates" / "theme").rglob("*"))]
        return tuple((str(f), f.stat().st_mtime_ns, f.stat().st_size) for f in files if f.is_file())

    def _fail(self, change: Change, problems: list[str]) -> None:
        change.problems = problems
        self._problems = problems
        with self._cond:  # nothing more will be built for this change: hold no request for it
            self.behind.clear()
            self._api_behind = False
            self._cond.notify_all()
        for line in problems:
            self._say(line)
        self._say("the site is left as the last good build made it; fix the data and save again")

    def _say(self, text: str) -> None:
        print(text, file=self.out, flush=True)
