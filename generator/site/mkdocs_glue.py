"""MkDocs' builds: one language, in full or (the preview's) in place. Serving with live reload is
in generator/site/mkdocs_serve.py; every private part of MkDocs or its theme that a build replaces
is in generator/site/mkdocs_adapter.py, what the preview changes through MkDocs' public plugin
events in generator/site/mkdocs_events.py. These modules (and search_parser.py, which the adapter
puts in place) are the only ones that import MkDocs; this one imports it only when it builds."""
from __future__ import annotations

import contextlib
import copy
import json
import logging
import os
import posixpath
import re
from pathlib import Path

from generator import reuse
from generator.reuse import Kept as KeptAnswers

os.environ.setdefault("NO_MKDOCS_2_WARNING", "1")
os.environ.setdefault("DISABLE_MKDOCS_2_WARNING", "true")


class BuildFailed(Exception):
    pass


def use_template_cache(folder: Path) -> None:
    """Compile the theme's Jinja templates once: their bytecode is kept in ``folder`` and shared by
    every build (the four language processes, and each preview rebuild). The answers kept between
    builds (MkDocs' renders of the pages' Markdown, the search index's sections and Chinese
    segmentation: one file of each per language) are kept beside it."""
    folder.mkdir(parents=True, exist_ok=True)
    reuse.KEPT_FILES.put("folder", folder)


def forget_theme_files() -> None:
    """The theme's files changed: list them again on the next build."""
    reuse.THEME_FILES.clear()


def forget_kept_answers() -> None:
    """Read the answers kept between builds from their files again on the next build, as a new
    process does."""
    folder = reuse.KEPT_FILES.find("folder")
    reuse.KEPT_FILES.clear()
    if folder is not None:
        reuse.KEPT_FILES.put("folder", folder)


def quiet_logging() -> None:
    """MkDocs' messages at WARNING and above on the terminal, once, not passed to the root logger."""
    log = logging.getLogger("mkdocs")
    if not any(getattr(h, "_whichgpu", False) for h in log.handlers):
        handler = logging.StreamHandler()
        handler.setFormatter(logging.Formatter("%(levelname)-7s - %(message)s"))
        handler.setLevel(logging.WARNING)
        handler._whichgpu = True  # type: ignore[attr-defined]
        log.addHandler(handler)
        log.propagate = False


@contextlib.contextmanager
def preloaded(config_file: Path, docs_dir: Path):
    """Ready in this process what every language's build would otherwise do again: import MkDocs,
    the theme's plugins, the search parser and the Markdown extensions of ``config_file`` (by
    loading it once, with ``docs_dir`` as its folder of pages), and list the theme's files. A
    full build forks its language processes inside this, and they inherit it instead of each
    paying for it; on leaving, the list of theme files is forgotten (the theme may change before
    the next build)."""
    from mkdocs.commands import build as _mk  # noqa: F401
    from mkdocs.config import load_config
    from mkdocs.structure.files import Files

    from generator.site import mkdocs_adapter as adapter

    quiet_logging()
    adapter.check_versions()  # an unknown version fails here, not in each language's build
    settings = adapter.Settings(templates=reuse.KEPT_FILES.find("folder"), keep_theme_files=True)
    try:
        try:
            config = load_config(str(config_file), docs_dir=str(docs_dir))
            with adapter.applied(config, settings):
                Files([]).add_files_from_theme(config.theme.get_env(), config)
        except Exception:  # a broken configuration is reported by the build itself, with its message
            pass
        yield
    finally:
        forget_theme_files()


def build(config_file: Path, overrides: dict, *, rebuild: set[str] | None = None, theme_pages: bool = True,
          static: set[str] | None = None, search_index: bool = True, narrow: bool = False) -> None:
    """``mkdocs build --strict`` with ``overrides`` applied to the top-level keys.

    ``rebuild``: the preview's build, in place (MkDocs' dirty build): only the pages at these
    paths (relative to docs_dir) are built again, and the static files newer than their copy;
    warnings are shown without failing; the search index keeps the entries of every other page;
    with ``theme_pages`` off the 404 page and the sitemap are left as they were; with ``static``,
    of the other files only those at these paths are copied and of the pages only those of
    ``rebuild`` are built (the caller knows which changed), without comparing every file's time
    with its copy's or looking for every page's HTML; with ``search_index`` off the pages built
    are not indexed and the search index is left as it was (a later build indexes them).

    ``narrow`` (with ``rebuild`` and ``static``: the preview's open page): MkDocs is told of the
    files that page's build reads, not of every page of the site: the pages of ``rebuild``, the
    navigation's pages, the pages and files their Markdown links to, and the files that are not
    pages; its time no longer grows with the catalogue. The page comes out as a build that knew
    every file makes it. Should MkDocs warn of anything (a link the narrowed list cannot resolve,
    say) or fail, that build's HTML and messages are thrown away and the page is built again
    knowing every file, so that what the reader sees and the terminal says are a full list's."""
    quiet_logging()
    if narrow and rebuild is not None and static is not None:
        with _warnings_held() as held:  # MkDocs consumes the dicts it validates: it gets a copy
            try:
                _build(config_file, copy.deepcopy(overrides), rebuild, theme_pages, static, search_index, narrow=True)
            except Exception as exc:  # noqa: BLE001 - the build that knows every file says what is wrong
                held.append(exc)
        if not held:
            return
    _build(config_file, overrides, rebuild, theme_pages, static, search_index, narrow=False)


def _build(config_file: Path, overrides: dict, rebuild: set[str] | None, theme_pages: bool, static: set[str] | None,
           search_index: bool, narrow: bool) -> None:
    from mkdocs.config import load_config
    from mkdocs.exceptions import MkDocsException

    from generator.site import mkdocs_adapter as adapter

    adapter.check_versions()  # before anything of MkDocs is replaced
    dirty = rebuild is not None
    listing = None
    try:
        config = load_config(str(config_file), strict=not dirty, **overrides)
        if dirty:
            _tell_preview_build(config, rebuild, static, theme_pages, search_index)
            named = None if static is None else rebuild | static

            def listing(config, walk):
                return _listed_files(config, walk, named, rebuild if narrow else None)

        settings, kept = _settings(config, dirty, narrow)
        with adapter.applied(config, settings, listing):
            _run(config, dirty, search_index)
        for answers in kept:
            answers.save(keep_unused=dirty)
    except MkDocsException as exc:  # Abort in strict mode, config errors
        raise BuildFailed(str(exc)) from exc


def _tell_preview_build(config, rebuild: set[str], static: set[str] | None, theme_pages: bool, search_index: bool):
    from generator.site.mkdocs_events import PreviewBuild

    search = config.plugins.get("material/search")
    if search is not None and not search_index:
        search.config.enabled = False  # read by the plugin as it indexes a page and writes the index
    config.plugins["whichgpu/preview"] = PreviewBuild(rebuild, static, theme_pages)


def _settings(config, dirty: bool, narrow: bool):
    """What the adapter's replacements use in this build, and the answers kept in files to save
    after it. A narrowed build neither finds nor keeps renders: they are keyed by every file's
    place, which that build does not list (and the open page's Markdown has just changed: there
    is none to find); the kept ones stay loaded for the next build."""
    from generator.site import mkdocs_adapter as adapter
    from generator.site import search_parser

    templates = reuse.KEPT_FILES.find("folder")
    folder, name = templates and templates.parent, Path(config.docs_dir).name
    search = config.plugins.get("material/search")
    dictionaries = ", ".join(f"{k} {getattr(search.config, k, None)}" for k in ("jieba_dict", "jieba_dict_user")
                             ) if search else ""
    renders = _open_kept(folder, "renders", name, adapter.renders_key())
    segments = _open_kept(folder, "search-segments", name, search_parser.segments_key(dictionaries))
    sections = _open_kept(folder, "search-sections", name, search_parser.sections_key())
    settings = adapter.Settings(templates=templates, keep_theme_files=dirty, renders=None if narrow else renders,
                                sections=sections, segments=segments)
    return settings, [kept for kept in (segments, sections, renders) if kept is not None]


def _open_kept(folder: Path | None, kind: str, name: str, key: str | None) -> KeptAnswers | None:
    """The answers of ``kind`` kept for the docs folder ``name`` in a file of ``folder``, under
    ``key`` (None: none kept). The one in use of each kind stays loaded between builds while its
    file and key stay the same."""
    if folder is None or key is None:
        return None
    path = folder / f"{kind}-{name}.json"
    kept = reuse.KEPT_FILES.find(kind)
    if kept is None or kept.path != path or kept.key != key:
        kept = KeptAnswers(path, key)
        reuse.KEPT_FILES.put(kind, kept)
    return kept


def _run(config, dirty: bool, search_index: bool) -> None:
    from mkdocs.commands import build as mk

    if not dirty:
        mk.build(config)
        return
    index = Path(config.site_dir) / "search" / "search_index.json"
    before = index.read_text(encoding="utf-8") if index.is_file() and search_index else None
    with _no_dirty_warning():
        mk.build(config, dirty=True)
    if before is not None:
        merge_search_index(index, before)


def _listed_files(config, get_files, named: set[str] | None, pages: set[str] | None = None):
    """MkDocs' files of a preview build. With ``named`` (the open page's step: the paths the caller
    knows changed), the list the last build walked, when it holds every one of them: fresh copies
    of its File objects, without walking the pages folder (which holds every card's page) or
    matching every path against the exclusions again. Otherwise, or when a named path is new, the
    folder is walked and the list kept for the next step.

    With ``pages`` as well (a narrowed build, see ``build``), of the kept list's pages only those
    the build of ``pages`` reads (:func:`_reach`), in the list's order; every file that is not a
    page stays."""
    from mkdocs.structure.files import Files

    key = (config.docs_dir, config.site_dir, config.use_directory_urls, str(config.exclude_docs))
    hit = reuse.LISTED_FILES.find(key)
    if named is None or hit is None or not named <= hit[0].keys():
        files = get_files(config)
        kept = [copy.copy(f) for f in files]  # before any page is attached to them
        # what ``known`` holds depends only on the paths and their order: a walk that finds the
        # same (the background's full builds) keeps it, so the next narrowed step does not redo it
        same = hit is not None and [f.src_uri for f in kept] == [f.src_uri for f in hit[1]]
        reuse.LISTED_FILES.put(key, ({f.src_uri: f for f in kept}, kept, hit[2] if same else {}))
        return files
    by_uri, kept, known = hit
    if pages is None:
        return Files([copy.copy(f) for f in kept])
    if not known:  # once per kept list: each path's place in it, and the files that are not pages
        known["place"] = {f.src_uri: i for i, f in enumerate(kept)}
        known["others"] = {f.src_uri for f in kept if not f.is_documentation_page()}
    wanted = (_reach(config, pages, by_uri) | known["others"] | named) & by_uri.keys()
    return Files([copy.copy(by_uri[uri]) for uri in sorted(wanted, key=known["place"].__getitem__)])


# a Markdown link's or image's target, inline (``](x)``, ``](<x> "title")``) or as a reference
# definition (``[x]: target``)
_MD_LINK = re.compile(r"\]\(\s*<?([^)\s>]+)|^ {0,3}\[[^\]\n]+\]:\s*<?([^\s>]+)", re.M)


def _reach(config, pages: set[str], listed: dict) -> set[str]:
    """The documentation files a build of ``pages`` reads besides them: the home page, every page
    of the navigation (each page's sidebar, its previous and next links), and what the pages'
    Markdown links to (MkDocs resolves each link against the list of files). Paths relative to
    the docs folder."""
    out = set(pages) | {"index.md"} | set(_nav_paths(config.nav))
    for uri in pages:
        try:
            text = Path(config.docs_dir, uri).read_text(encoding="utf-8")
        except OSError:
            continue
        base = posixpath.dirname(uri)
        for inline, reference in _MD_LINK.findall(text):
            target = (inline or reference).split("#", 1)[0].split("?", 1)[0]
            if not target or re.match(r"[A-Za-z][A-Za-z0-9+.-]*:", target):
                continue
            path = target.lstrip("/") if target.startswith("/") else posixpath.normpath(posixpath.join(base, target))
            out.add(path)
            if not path.endswith(".md"):  # a link to a folder reaches its index page
                out.add(posixpath.join(path, "index.md"))
    return {p for p in out if p in listed}


def _nav_paths(entries) -> list[str]:
    """Every path named in MkDocs' ``nav`` configuration (titles and nesting dropped)."""
    out = []
    for entry in entries or ():
        if isinstance(entry, str):
            out.append(entry)
        elif isinstance(entry, dict):
            for value in entry.values():
                out.extend(_nav_paths([value] if isinstance(value, str) else value))
        elif isinstance(entry, list):
            out.extend(_nav_paths(entry))
    return out


class _warnings_held:
    """Every message of MkDocs and its plugins at WARNING or above, held back instead of shown;
    true (a non-empty list) when there was one."""

    def __enter__(self) -> list:
        self.held: list = []
        self.log = logging.getLogger("mkdocs")
        self.filter = _Hold(self.held)
        self.handlers = list(self.log.handlers)
        for handler in self.handlers:  # _ready() gave the logger its own handler, not propagating
            handler.addFilter(self.filter)
        return self.held

    def __exit__(self, *exc):
        for handler in self.handlers:
            handler.removeFilter(self.filter)


class _Hold(logging.Filter):
    def __init__(self, held: list):
        super().__init__()
        self.held = held

    def filter(self, record: logging.LogRecord) -> bool:
        if record.levelno >= logging.WARNING:
            self.held.append(record)
            return False
        return True


def merge_search_index(path: Path, before: str) -> None:
    """A dirty build writes an index of the pages it built; put back every other page's entries."""
    import json

    fresh, old = json.loads(path.read_text(encoding="utf-8")), json.loads(before)
    rebuilt = {doc["location"].split("#")[0] for doc in fresh.get("docs", ())}
    docs = [d for d in old.get("docs", ()) if d["location"].split("#")[0] not in rebuilt] + list(fresh.get("docs", ()))
    merged = dict(old, docs=docs)
    path.write_text(json.dumps(merged, ensure_ascii=False, separators=(",", ":")), encoding="utf-8")


class _DropDirtyWarning(logging.Filter):
    def filter(self, record: logging.LogRecord) -> bool:
        return "'dirty' build" not in record.getMessage()


class _no_dirty_warning:
    """MkDocs warns on every dirty build; the preview knows, and keeps its terminal for real problems."""

    def __enter__(self):
        self.filter = _DropDirtyWarning()
        self.log = logging.getLogger("mkdocs.commands.build")
        self.log.addFilter(self.filter)

    def __exit__(self, *exc):
        self.log.removeFilter(self.filter)


def compact_search_index(path: Path) -> None:
    """Rewrite the theme's search index with UTF-8 text instead of ``\\uXXXX`` escapes.

    Every page fetches and parses this file on load, so its size is main-thread time: the
    Korean and Chinese indexes shrink by about a third. The content is unchanged."""
    if not path.is_file():
        return
    data = json.loads(path.read_text(encoding="utf-8"))
    path.write_text(json.dumps(data, ensure_ascii=False, separators=(",", ":")), encoding="utf-8")
