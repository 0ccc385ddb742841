"""The only module that imports MkDocs: build one language, or serve with live reload."""
from __future__ import annotations

import contextlib
import copy
import functools
import hashlib
import logging
import os
import posixpath
import re
from pathlib import Path
from generator.site import search_parser
from generator.reuse import Kept as KeptAnswers
from generator.site.mkdocs_hooks import stash_token

os.environ.setdefault("NO_MKDOCS_2_WARNING", "1")
os.environ.setdefault("DISABLE_MKDOCS_2_WARNING", "true")


class BuildFailed(Exception):
    pass


_CACHE_DIR: Path | None = None
_TEMPLATE_LISTS: dict[tuple, list] = {}
_PREVIEW = {"skip_theme_pages": False, "keep_lists": False, "narrow": False}


def use_template_cache(folder: Path) -> None:
    """Compile the theme's Jinja templates once: their bytecode is kept in ``folder`` and shared by
    every build (the four language processes, and each preview rebuild). The search index's
    Chinese word segmentation is kept beside it, one file per language
    (``generator/search_parser.py``)."""
    global _CACHE_DIR
    folder.mkdir(parents=True, exist_ok=True)
    _CACHE_DIR = folder
    _patch_theme()


def forget_theme_files() -> None:
    """The theme's files changed: list them again on the next build."""
    _TEMPLATE_LISTS.clear()


def _patch_theme() -> None:
    import jinja2
    from mkdocs.theme import Theme

    if getattr(Theme.get_env, "_whichgpu", False):
        return
    original = Theme.get_env

    def get_env(self):
        env = original(self)
        if _CACHE_DIR is not None:
            env.bytecode_cache = jinja2.FileSystemBytecodeCache(str(_CACHE_DIR))
        if _PREVIEW["skip_theme_pages"] or _PREVIEW["keep_lists"]:
            # A preview lists the theme's files (thousands of icons) once, not on every rebuild,
            # and a full build once before its languages fork, not once in each; MkDocs' filter
            # of that list depends only on the theme.
            key = tuple(getattr(env.loader, "searchpath", ()))
            plain = env.list_templates

            def list_templates(extensions=None, filter_func=None):
                if key not in _TEMPLATE_LISTS:
                    _TEMPLATE_LISTS[key] = plain(extensions, filter_func)
                return list(_TEMPLATE_LISTS[key])

            env.list_templates = list_templates
        _keep_side_nav(env)
        return env

    get_env._whichgpu = True  # type: ignore[attr-defined]
    Theme.get_env = get_env


NAV_TEMPLATE = "partials/nav.html"


def _keep_side_nav(env) -> None:
    """The theme's side navigation, rendered once for the pages that share what it reads.

    A page outside the navigation (a GPU, model, revision, diff or topic page: thousands at ten
    times the data) marks no item active, and each link of the navigation is relative to the
    page's folder. So every such page of one folder gets the same navigation, unless an item
    lies below the page itself; it is rendered for the first and given to the others."""
    plain = env.get_template
    kept: dict[tuple, str] = {}

    def get_template(name, parent=None, globals=None):
        template = plain(name, parent, globals)
        if name == NAV_TEMPLATE and not getattr(template, "_whichgpu", False):
            render = template.root_render_func

            def root_render_func(context):
                key = _nav_key(context)
                if key is None:
                    yield from render(context)
                    return
                if key not in kept:
                    kept[key] = "".join(render(context))
                yield kept[key]

            template.root_render_func = root_render_func
            template._whichgpu = True
        return template

    env.get_template = get_template


def _nav_key(context) -> tuple | None:
    """What the navigation of ``context``'s page depends on, when that page is outside it; None
    for a page in the navigation (its item is active) or one with an item below it."""
    page, nav = context.get("page"), context.get("nav")
    if page is None or nav is None or not isinstance(getattr(page, "url", None), str):
        return None
    url = page.url
    for item in nav.pages:
        if item is page or item == page or (url and item.url.startswith(url)):
            return None
    folder = url.rstrip("/").rpartition("/")[0]
    return id(nav), folder, context.get("base_url"), id(context.get("config"))


def _quiet_logging() -> None:
    log = logging.getLogger("mkdocs")
    if not any(getattr(h, "_whichgpu", False) for h in log.handlers):
        handler = logging.StreamHandler()
        handler.setFormatter(logging.Formatter("%(levelname)-7s - %(message)s"))
        handler.setLevel(logging.WARNING)
        handler._whichgpu = True  # type: ignore[attr-defined]
        log.addHandler(handler)
        log.propagate = False


def _ready() -> None:
    """What every build in this process needs once: quiet logging, the theme's template cache and
    the search indexer (generator/search_parser.py)."""

    _quiet_logging()
    _patch_theme()
    _patch_render()
    search_parser.install()


@contextlib.contextmanager
def preloaded(config_file: Path, docs_dir: Path):
    """Ready in this process what every language's build would otherwise do again: import MkDocs,
    the theme's plugins and the Markdown extensions of ``config_file`` (by loading it once, with
    ``docs_dir`` as its folder of pages), install the search parser, and list the theme's files.
    A full build forks its language processes inside this, and they inherit it instead of each
    paying for it; on leaving, the list of theme files is forgotten (the theme may change before
    the next build)."""
    from mkdocs.commands import build as _mk  # noqa: F401
    from mkdocs.config import load_config
    from mkdocs.structure.files import Files

    _ready()
    _PREVIEW["keep_lists"] = True
    try:
        try:
            config = load_config(str(config_file), docs_dir=str(docs_dir))
            Files([]).add_files_from_theme(config.theme.get_env(), config)
        except Exception:  # a broken configuration is reported by the build itself, with its message
            pass
        yield
    finally:
        _PREVIEW["keep_lists"] = False
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
    _ready()
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
    from mkdocs.commands import build as mk
    from mkdocs.config import load_config
    from mkdocs.exceptions import MkDocsException
    from mkdocs.structure.files import File


    _ready()
    dirty = rebuild is not None
    original_theme_page, original_modified, original_get_files = mk._build_theme_template, File.is_modified, mk.get_files
    _PREVIEW["skip_theme_pages"] = dirty
    if dirty and not theme_pages:
        mk._build_theme_template = lambda *a, **k: None
    if dirty:
        def is_modified(file) -> bool:
            if file.is_documentation_page():
                # a caller that names what changed names every page to build; otherwise a page
                # never built before is built too
                return file.src_uri in rebuild or (static is None and not os.path.isfile(file.abs_dest_path))
            if static is not None:
                return file.src_uri in static
            return original_modified(file)

        File.is_modified = is_modified
        mk.get_files = lambda config: _listed_files(config, original_get_files,
                                                    None if static is None else rebuild | static,
                                                    rebuild if narrow else None)
    try:
        config = load_config(str(config_file), strict=not dirty, **overrides)
        privacy = config.plugins.get("material/privacy")
        if privacy is not None:
            skip_rows_in_privacy(privacy)
        search = config.plugins.get("material/search")
        if search is not None and dirty and not search_index:
            search.config.enabled = False  # read by the plugin as it indexes a page and writes the index
        settings = ", ".join(f"{k} {getattr(search.config, k, None)}" for k in ("jieba_dict", "jieba_dict_user")
                             ) if search else ""
        kept = None if _CACHE_DIR is None else _CACHE_DIR.parent
        name = Path(config.docs_dir).name
        search_parser.use_segment_cache(kept and kept / f"search-segments-{name}.json", settings)
        search_parser.use_section_cache(kept and kept / f"search-sections-{name}.json")
        use_render_cache(kept and kept / f"renders-{name}.json")
        # a narrowed build neither finds nor keeps renders: they are keyed by every file's place,
        # which that build does not list (and the open page's Markdown has just changed: there is
        # none to find); the kept ones stay loaded for the next build
        _PREVIEW["narrow"] = narrow
        if dirty:
            index = Path(config.site_dir) / "search" / "search_index.json"
            before = index.read_text(encoding="utf-8") if index.is_file() and search_index else None
            with _no_dirty_warning():
                mk.build(config, dirty=True)
            if before is not None:
                merge_search_index(index, before)
        else:
            mk.build(config)
        search_parser.save_search_caches(keep_unused=dirty)
        if _RENDERS is not None:
            _RENDERS.save(keep_unused=dirty)
    except MkDocsException as exc:  # Abort in strict mode, config errors
        raise BuildFailed(str(exc)) from exc
    finally:
        mk._build_theme_template, File.is_modified, mk.get_files = original_theme_page, original_modified, original_get_files
        _PREVIEW["skip_theme_pages"] = _PREVIEW["narrow"] = False


# MkDocs' render of each page's Markdown (its HTML, table of contents, title and anchors), kept
# between builds: a page whose Markdown, place and site did not change is not converted again.
_RENDERS = None
_NEUTRAL = "wgrawkept"  # stands for the page's placeholder token (mkdocs_hooks) in what is kept


def use_render_cache(path: Path | None) -> None:
    """Keep MkDocs' renders of the pages' Markdown in ``path`` (None: no cache) between builds.
    Its key holds the versions of MkDocs and Python-Markdown and this module's code; each
    answer's question holds the page's Markdown, its place, the site's files and the Markdown
    settings. A render that logged anything is not kept, so its message comes on every build."""
    global _RENDERS
    if path is None:
        _RENDERS = None
        return
    import markdown
    import mkdocs


    key = f"mkdocs {mkdocs.__version__}, markdown {markdown.__version__}, glue {_own_code()}"
    if _RENDERS is None or _RENDERS.path != path or _RENDERS.key != key:
        _RENDERS = KeptAnswers(path, key)


@functools.cache
def _own_code() -> str:
    return hashlib.blake2b(Path(__file__).read_bytes(), digest_size=12).hexdigest()


_SIGNATURES: dict[str, tuple] = {}


def _site_signature(config, files) -> str:
    """What a page's render reads besides its own Markdown: the Markdown settings and every
    file's place (links are resolved against them). Computed once per build (per ``files``)."""
    last = _SIGNATURES.get("files")
    if last is not None and last[0] is files and last[1] is config:
        return last[2]
    h = hashlib.blake2b(digest_size=16)
    settings = {k: config.get(k) for k in ("markdown_extensions", "mdx_configs", "use_directory_urls", "validation",
                                          "site_url", "docs_dir")}
    h.update(repr(sorted(settings.items(), key=lambda kv: kv[0])).encode())
    for f in files:
        h.update(f"\0{f.src_uri}\0{f.dest_uri}\0{f.url}\0{f.inclusion}".encode())
    _SIGNATURES["files"] = (files, config, h.hexdigest())
    return _SIGNATURES["files"][2]


def _toc_tokens(items) -> list:
    return [{"name": a.title, "id": a.id, "level": a.level, "children": _toc_tokens(a.children)} for a in items]


def _patch_render() -> None:
    from mkdocs.structure.pages import Page
    from mkdocs.structure.toc import get_toc

    if getattr(Page.render, "_whichgpu", False):
        return
    original = Page.render

    def render(self, config, files):
        if _RENDERS is None or _PREVIEW["narrow"] or self.markdown is None or _NEUTRAL in self.markdown:
            return original(self, config, files)

        token = stash_token(self)
        neutral = self.markdown.replace(token, _NEUTRAL) if token else self.markdown
        h = hashlib.blake2b(neutral.encode("utf-8"), digest_size=16)
        h.update(f"\0{self.file.src_uri}\0{self.file.dest_uri}\0{self.file.url}\0{_site_signature(config, files)}".encode())
        question = h.hexdigest()
        debug = logging.getLogger("mkdocs").getEffectiveLevel() <= logging.DEBUG
        kept = _RENDERS.find(question)
        if kept is not None:
            links = {files.get_file_from_path(uri): anchors for uri, anchors in kept["links"].items()}
            if None not in links:
                self.content = kept["content"].replace(_NEUTRAL, token) if token else kept["content"]
                self.toc = get_toc(kept["toc"])
                self._title_from_render = kept["title"]
                self.present_anchor_ids = set(kept["anchors"])
                if not debug:
                    self.links_to_anchors = links
                return None
        logged = _Logged()
        log = logging.getLogger("mkdocs")
        log.addHandler(logged)
        try:
            original(self, config, files)
        finally:
            log.removeHandler(logged)
        if not logged.any and not debug and (not token or _NEUTRAL not in self.content):
            content = self.content.replace(token, _NEUTRAL) if token else self.content
            _RENDERS.keep(question, {"content": content, "toc": _toc_tokens(self.toc), "title": self._title_from_render,
                                     "anchors": sorted(self.present_anchor_ids or ()),
                                     "links": {f.src_uri: dict(a) for f, a in (self.links_to_anchors or {}).items()}})
        return None

    render._whichgpu = True  # type: ignore[attr-defined]
    Page.render = render


class _Logged(logging.Handler):
    """Notes whether anything was logged (at INFO or above) while it is attached."""

    def __init__(self):
        super().__init__(logging.INFO)
        self.any = False

    def emit(self, record) -> None:
        self.any = True


_LISTED: dict[tuple, tuple[dict, list, dict]] = {}


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
    hit = _LISTED.get(key)
    if named is None or hit is None or not named <= hit[0].keys():
        files = get_files(config)
        kept = [copy.copy(f) for f in files]  # before any page is attached to them
        # what ``known`` holds depends only on the paths and their order: a walk that finds the
        # same (the background's full builds) keeps it, so the next narrowed step does not redo it
        same = hit is not None and [f.src_uri for f in kept] == [f.src_uri for f in hit[1]]
        _LISTED[key] = ({f.src_uri: f for f in kept}, kept, hit[2] if same else {})
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


ROWS_SUFFIX = ".rows.js"
# Files generated from escaped data (``assets/data/``: the calculators' data, the search terms):
# they hold no asset and grow with the data.
DATA_PREFIX = "assets/data/"
_MEDIA_PARSED: dict[tuple, list] = {}


def skip_rows_in_privacy(plugin) -> None:
    """The theme's privacy plugin reads every script and style sheet of the pages on each build,
    looking for external assets. The rows of long tables (``*.rows.js``, beside their pages, see
    ``render.split_rest``) and the files of ``assets/data/`` are made from escaped data: they
    hold links, never assets, and they grow with the data (12 MB at ten times it): a preview step
    would read them all each time. Any other file is read once per content: what it found is kept
    by the file's path, size and modification time."""
    parse = plugin._parse_media  # the one method that reads a file (mkdocs-material 9.x)

    def parse_media(initiator):
        uri = initiator.src_uri
        if uri.endswith(ROWS_SUFFIX) or uri.startswith(DATA_PREFIX):
            return []
        try:
            st = os.stat(initiator.abs_src_path)
        except (OSError, TypeError):
            return parse(initiator)
        key = (initiator.abs_src_path, st.st_size, st.st_mtime_ns)
        if key not in _MEDIA_PARSED:
            if len(_MEDIA_PARSED) >= 4096:  # the oldest goes, never what was just read
                del _MEDIA_PARSED[next(iter(_MEDIA_PARSED))]
            _MEDIA_PARSED[key] = parse(initiator)
        return list(_MEDIA_PARSED[key])

    plugin._parse_media = parse_media


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


def _telling(schedule, preview, handler, path, **kwargs):
    """``schedule`` (the observer's) with ``handler`` first telling ``preview`` what it saw: the
    preview then reads again only the files written (the server's own handler only asks for a
    build)."""
    plain = handler.on_any_event

    def on_any_event(event):
        preview.saw(event.event_type, os.fsdecode(event.src_path), event.is_directory)
        plain(event)

    handler.on_any_event = on_any_event
    return schedule(handler, path, **kwargs)


def serve(site_dir: Path, preview, watch: list[Path], host: str, port: int) -> None:
    """Serve ``site_dir`` with live reload. ``preview`` (:class:`generator.site.preview.Preview`)
    rebuilds when a watched path changes, learns which page is open from the requests, holds a
    request for a page it has not rebuilt yet, and gives the problems to show on every page."""
    from mkdocs.livereload import LiveReloadServer

    _quiet_logging()
    logging.getLogger("mkdocs").setLevel(logging.INFO)

    class Server(LiveReloadServer):
        def _serve_request(self, environ, start_response):
            path = environ["PATH_INFO"].encode("latin-1").decode("utf-8", "ignore")
            if not path.startswith("/livereload/"):
                preview.seen(path)
                preview.wait_for(path)
            return super()._serve_request(environ, start_response)

        def _inject_js_into_html(self, content, epoch):
            content = super()._inject_js_into_html(content, epoch)
            banner = preview.banner()
            if banner:
                at = content.find(b">", content.find(b"<body")) + 1 if b"<body" in content else 0
                content = content[:at] + banner + content[at:]
            return content

    server = Server(builder=preview.update, host=host, port=port, root=str(site_dir))
    server.build_delay = 0.05
    try:  # inotify: a saved file is seen at once, not at the next poll
        import functools

        import watchdog.observers
        from watchdog import events

        observer = watchdog.observers.Observer()
        # Only writes count: the builder's own reads (opened, closed without writing) would start
        # another build after every build.
        schedule = functools.partial(observer.schedule, event_filter=[
            events.FileCreatedEvent, events.FileModifiedEvent, events.FileDeletedEvent, events.FileMovedEvent,
            events.FileClosedEvent, events.DirCreatedEvent, events.DirDeletedEvent, events.DirMovedEvent])
        observer.schedule = functools.partial(_telling, schedule, preview)
        server.observer = observer
        preview.watched()
    except Exception:  # pragma: no cover - platforms without a native watcher keep polling
        pass
    for path in watch:
        if path.exists():
            server.watch(str(path))
    try:
        server.serve()
    except KeyboardInterrupt:
        pass
    finally:
        server.shutdown()
