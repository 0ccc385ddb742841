"""Every private part of MkDocs, mkdocs-material and Jinja that the build replaces, in one place.

For speed a build replaces a few internals of MkDocs and its theme, each by a small function
below that names what it replaces and why. :func:`applied` puts them in place for one build, on
that build's own objects (its theme, privacy plugin, search index, pages, Jinja environment), so
nothing outlives the build but the answers kept in generator.reuse; only the module attribute
``mkdocs.commands.build.get_files`` is replaced, and put back after the build. The live-reload
server's replacements are here too (:func:`live_reload_server`, :func:`watch_writes`).

Internals change between releases without notice. :func:`check_versions` runs before anything is
replaced: an installed MkDocs, mkdocs-material or Jinja that is not a version in ``KNOWN`` stops
the build with a message saying what to do. tests/test_mkdocs_adapter.py checks that every
attribute named in ``REPLACED`` is still there with the parameters expected here.

Done through MkDocs' public plugin events instead (generator/site/mkdocs_events.py): the
preview's choice of the pages and files to write again, and leaving out the 404 page and the
sitemap.
"""
from __future__ import annotations

import contextlib
import functools
import hashlib
import logging
import os
from dataclasses import dataclass
from pathlib import Path

import jinja2
from mkdocs.plugins import BasePlugin, event_priority

from generator import reuse
from generator.reuse import Kept
from generator.site import search_parser
from generator.site.mkdocs_hooks import stash_token

# The versions whose internals the functions below were read against.
KNOWN: dict[str, tuple[str, ...]] = {
    "mkdocs": ("1.6.1",),
    "mkdocs-material": ("9.8.1",),
    "jinja2": ("3.1.6",),
}

# What is replaced (module, attribute, the parameters this module expects it to take).
REPLACED: tuple[tuple[str, str, tuple[str, ...]], ...] = (
    ("mkdocs.theme", "Theme.get_env", ("self",)),
    ("mkdocs.structure.pages", "Page.render", ("self", "config", "files")),
    ("mkdocs.commands.build", "get_files", ("config",)),
    ("material.plugins.privacy.plugin", "PrivacyPlugin._parse_media", ("self", "initiator")),
    ("material.plugins.search.plugin", "SearchIndex.add_entry_from_context", ("self", "page")),
    ("material.plugins.search.plugin", "SearchIndex._segment_chinese", ("self", "data")),
    ("mkdocs.livereload", "LiveReloadServer._serve_request", ("self", "environ", "start_response")),
    ("mkdocs.livereload", "LiveReloadServer._inject_js_into_html", ("self", "content", "epoch")),
)


class UnknownVersion(RuntimeError):
    """An installed package is not a version whose internals this module was checked against."""


def installed_version(package: str) -> str:
    """The installed version of ``package``."""
    from importlib import metadata

    return reuse.PACKAGE_VERSIONS.get(package, lambda: metadata.version(package))


def check_versions() -> None:
    """Raise :class:`UnknownVersion` unless every package of ``KNOWN`` is a version listed there."""
    for package, known in KNOWN.items():
        found = installed_version(package)
        if found not in known:
            raise UnknownVersion(
                f"{package} {found} is installed, but generator/site/mkdocs_adapter.py replaces internals of {package} "
                f"checked in version {' or '.join(known)} only. Install a known version (pip install -r "
                f"requirements.txt), or read the code each replacement there names in {package} {found}, adapt them, "
                f"run tests/test_mkdocs_adapter.py, test_search_parser.py and test_render_cache.py, and add {found} to KNOWN.")


@dataclass
class Settings:
    """What the replacements of one build use: the folder of the theme's compiled templates, whether
    the theme's listed files are kept for the next builds, and the answers kept in files (None:
    none): MkDocs' renders of the pages' Markdown, the search sections of the pages' HTML and the
    Chinese segmentation of their text."""

    templates: Path | None = None
    keep_theme_files: bool = False
    renders: Kept | None = None
    sections: Kept | None = None
    segments: Kept | None = None


@contextlib.contextmanager
def applied(config, settings: Settings, list_files=None):
    """Every replacement, on the build of ``config`` (loaded, not built yet), for the time of the
    ``with`` block. ``list_files(config, walk)``: MkDocs' list of the files of the build instead
    of ``walk(config)``, its walk of the docs folder."""
    check_versions()
    keep_theme_env(config.theme, settings)
    privacy = config.plugins.get("material/privacy")
    if privacy is not None:
        skip_rows_in_privacy(privacy)
    config.plugins["whichgpu/adapter"] = _Later(settings)
    with contextlib.nullcontext() if list_files is None else files_listed_by(list_files):
        yield


class _Later(BasePlugin):
    """The replacements on objects that MkDocs makes during the build, made as they appear."""

    def __init__(self, settings: Settings):
        self.settings = settings

    @event_priority(-100)  # after the theme's search plugin made this build's index (its on_config)
    def on_config(self, config):
        index = getattr(config.plugins.get("material/search"), "search_index", None)
        if index is not None:
            index_from_kept_sections(index, self.settings.sections)
            if self.settings.segments is not None:
                segment_through_kept(index, self.settings.segments)

    def on_page_markdown(self, markdown, *, page, config, files):
        if self.settings.renders is not None:
            keep_render(page, self.settings.renders)

    def on_env(self, env, *, config, files):
        share_side_nav(env)


# ------------------------------------------------------------------------------ the theme

def keep_theme_env(theme, settings: Settings) -> None:
    """Replaces ``Theme.get_env`` (mkdocs/theme.py) on this build's theme, so that every Jinja
    environment made for it (the build's, the search plugin's) compiles each template once (the
    bytecode is kept in ``settings.templates``, shared by every build) and lists the theme's files
    (thousands of icons; MkDocs' filter of them depends only on the theme) once per preview, and
    once before a full build's languages fork. MkDocs lists them right after it made the
    environment, before any plugin event."""
    plain = type(theme).get_env

    def get_env():
        env = plain(theme)
        if settings.templates is not None:
            env.bytecode_cache = jinja2.FileSystemBytecodeCache(str(settings.templates))
        _keep_theme_files(env, settings.keep_theme_files)
        return env

    theme.get_env = get_env


def _keep_theme_files(env, keep: bool) -> None:
    key = tuple(getattr(env.loader, "searchpath", ()))
    plain = env.list_templates

    def list_templates(extensions=None, filter_func=None):
        names = reuse.THEME_FILES.find(key)
        if names is None:
            names = plain(extensions, filter_func)
            if keep:
                reuse.THEME_FILES.put(key, names)
        return list(names)

    env.list_templates = list_templates


NAV_TEMPLATE = "partials/nav.html"


def share_side_nav(env) -> None:
    """The theme's side navigation, rendered once for the pages that share what it reads; it
    replaces the ``root_render_func`` of Jinja's compiled template (jinja2/environment.py), on the
    build's environment, given by MkDocs' on_env event.

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


# ------------------------------------------------------------------------------ the pages' Markdown

_NEUTRAL = "wgrawkept"  # stands for the page's placeholder token (mkdocs_hooks) in what is kept


def renders_key() -> str:
    """What every kept render depends on besides its question: the versions of MkDocs and
    Python-Markdown, and this module's code."""
    import markdown
    import mkdocs

    return f"mkdocs {mkdocs.__version__}, markdown {markdown.__version__}, adapter {_own_code()}"


def _own_code() -> str:
    return reuse.CODE_DIGESTS.get(__file__, lambda: hashlib.blake2b(Path(__file__).read_bytes(), digest_size=12).hexdigest())


def keep_render(page, renders: Kept) -> None:
    """Replaces ``Page.render`` (mkdocs/structure/pages.py) on this page, given by MkDocs'
    on_page_markdown event: MkDocs' render of the page's Markdown (its HTML, table of contents,
    title and anchors) is kept between builds in ``renders``, so a page whose Markdown, place and
    site did not change is not converted again. No event can skip the conversion: MkDocs calls
    render between on_page_markdown and on_page_content. Each answer's question holds the page's
    Markdown, its place, the site's files and the Markdown settings. A render that logged
    anything is not kept, so its message comes on every build."""
    page.render = functools.partial(_render_kept, page, renders)


def _render_kept(page, renders: Kept, config, files) -> None:
    render = functools.partial(type(page).render, page)
    if page.markdown is None or _NEUTRAL in page.markdown:
        return render(config, files)
    token = stash_token(page)
    neutral = page.markdown.replace(token, _NEUTRAL) if token else page.markdown
    h = hashlib.blake2b(neutral.encode("utf-8"), digest_size=16)
    h.update(f"\0{page.file.src_uri}\0{page.file.dest_uri}\0{page.file.url}\0{_site_signature(config, files)}".encode())
    question = h.hexdigest()
    debug = logging.getLogger("mkdocs").getEffectiveLevel() <= logging.DEBUG
    kept = renders.find(question)
    if kept is not None and _restore(page, kept, token, files, debug):
        return None
    logged = _Logged()
    log = logging.getLogger("mkdocs")
    log.addHandler(logged)
    try:
        render(config, files)
    finally:
        log.removeHandler(logged)
    if not logged.any and not debug and (not token or _NEUTRAL not in page.content):
        content = page.content.replace(token, _NEUTRAL) if token else page.content
        renders.keep(question, {"content": content, "toc": _toc_tokens(page.toc), "title": page._title_from_render,
                                "anchors": sorted(page.present_anchor_ids or ()),
                                "links": {f.src_uri: dict(a) for f, a in (page.links_to_anchors or {}).items()}})
    return None


def _restore(page, kept: dict, token: str, files, debug: bool) -> bool:
    """Set what MkDocs' render sets on ``page`` from a kept render; False when a file it links to
    is gone."""
    from mkdocs.structure.toc import get_toc

    links = {files.get_file_from_path(uri): anchors for uri, anchors in kept["links"].items()}
    if None in links:
        return False
    page.content = kept["content"].replace(_NEUTRAL, token) if token else kept["content"]
    page.toc = get_toc(kept["toc"])
    page._title_from_render = kept["title"]
    page.present_anchor_ids = set(kept["anchors"])
    if not debug:
        page.links_to_anchors = links
    return True


def _site_signature(config, files) -> str:
    """What a page's render reads besides its own Markdown: the Markdown settings and every
    file's place (links are resolved against them). Worked out once per build (per ``files``)."""
    def make() -> str:
        h = hashlib.blake2b(digest_size=16)
        settings = {k: config.get(k) for k in ("markdown_extensions", "mdx_configs", "use_directory_urls", "validation",
                                              "site_url", "docs_dir")}
        h.update(repr(sorted(settings.items(), key=lambda kv: kv[0])).encode())
        for f in files:
            h.update(f"\0{f.src_uri}\0{f.dest_uri}\0{f.url}\0{f.inclusion}".encode())
        return h.hexdigest()

    return reuse.SITE_SIGNATURES.of_items("site", (files, config), make)


def _toc_tokens(items) -> list:
    return [{"name": a.title, "id": a.id, "level": a.level, "children": _toc_tokens(a.children)} for a in items]


class _Logged(logging.Handler):
    """Notes whether anything was logged (at INFO or above) while it is attached."""

    def __init__(self):
        super().__init__(logging.INFO)
        self.any = False

    def emit(self, record) -> None:
        self.any = True


# ------------------------------------------------------------------------------ the theme's plugins

ROWS_SUFFIX = ".rows.js"
DATA_PREFIX = "assets/data/"  # generated from escaped data: the calculators' data, the search terms


def skip_rows_in_privacy(plugin) -> None:
    """Replaces ``PrivacyPlugin._parse_media`` (material/plugins/privacy/plugin.py, the one method
    that reads a file) on this build's privacy plugin. The plugin reads every script and style
    sheet of the pages on each build, looking for external assets. The rows of long tables
    (``*.rows.js``, beside their pages, see ``render.split_rest``) and the files of
    ``assets/data/`` are made from escaped data: they hold links, never assets, and they grow
    with the data (12 MB at ten times it): a preview step would read them all each time. Any
    other file is read once per content: what it found is kept by the file's path, size and
    modification time. No option of the plugin leaves a local file unread."""
    parse = plugin._parse_media

    def parse_media(initiator):
        uri = initiator.src_uri
        if uri.endswith(ROWS_SUFFIX) or uri.startswith(DATA_PREFIX):
            return []
        try:
            st = os.stat(initiator.abs_src_path)
        except (OSError, TypeError):
            return parse(initiator)
        key = (initiator.abs_src_path, st.st_size, st.st_mtime_ns)
        found = reuse.MEDIA_PARSED.find(key)
        if found is None:
            found = parse(initiator)
            reuse.MEDIA_PARSED.put(key, found)
        return list(found)

    plugin._parse_media = parse_media


def index_from_kept_sections(index, sections: Kept | None) -> None:
    """Replaces ``SearchIndex.add_entry_from_context`` (material/plugins/search/plugin.py) on
    this build's search index: the theme's code, with the page parsed by
    ``search_parser.TagCountingParser`` without the blocks it would skip, or taken from
    ``sections``, the last parse of the same HTML (see generator/site/search_parser.py: the same
    index in a fraction of the time; indexing took about half of a language's build)."""
    index.add_entry_from_context = functools.partial(search_parser.add_entry_from_context, index, sections)


def segment_through_kept(index, segments: Kept) -> None:
    """Replaces ``SearchIndex._segment_chinese`` (material/plugins/search/plugin.py) on this
    build's search index: each text's segmentation is kept in ``segments`` between builds, so a
    build whose Chinese text did not change does not load jieba's dictionary (about 0.6 s)."""
    index._segment_chinese = functools.partial(search_parser.segment_chinese, index._segment_chinese, segments)


@contextlib.contextmanager
def files_listed_by(list_files):
    """``mkdocs.commands.build.get_files`` replaced by ``list_files(config, walk)`` (``walk``: MkDocs'
    own) in the block: on_files gets the list only after the walk of the docs folder (every card's page)."""
    from mkdocs.commands import build as mk

    walk = mk.get_files
    mk.get_files = functools.partial(list_files, walk=walk)
    try:
        yield
    finally:
        mk.get_files = walk


# ------------------------------------------------------------------------------ the live-reload server

def live_reload_server(preview, **kwargs):
    """MkDocs' live-reload server (``mkdocs.livereload.LiveReloadServer``) with two of its private
    methods replaced: ``_serve_request`` first tells ``preview`` which page is asked for and holds
    the request until that page is rebuilt; ``_inject_js_into_html`` also puts the preview's
    banner of problems at the top of every page. ``kwargs``: the server's own (host, port, root)."""
    check_versions()
    from mkdocs.livereload import LiveReloadServer

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

    server = Server(builder=preview.update, **kwargs)
    server.build_delay = 0.05
    return server


def watch_writes(server, preview) -> None:
    """Replaces the server's ``observer`` (a polling watchdog observer) with the platform's native
    one (inotify: a saved file is seen at once, not at the next poll), whose handlers first tell
    ``preview`` what they saw (:func:`telling`). Only writes count: the builder's own reads
    (opened, closed without writing) would start another build after every build."""
    try:
        import watchdog.observers
        from watchdog import events

        observer = watchdog.observers.Observer()
        schedule = functools.partial(observer.schedule, event_filter=[
            events.FileCreatedEvent, events.FileModifiedEvent, events.FileDeletedEvent, events.FileMovedEvent,
            events.FileClosedEvent, events.DirCreatedEvent, events.DirDeletedEvent, events.DirMovedEvent])
        observer.schedule = functools.partial(telling, schedule, preview)
        server.observer = observer
        preview.watched()
    except Exception:  # pragma: no cover - platforms without a native watcher keep polling
        pass


def telling(schedule, preview, handler, path, **kwargs):
    """``schedule`` (the observer's) with ``handler`` first telling ``preview`` what it saw: the
    preview then reads again only the files written (the server's own handler only asks for a
    build)."""
    plain = handler.on_any_event

    def on_any_event(event):
        preview.saw(event.event_type, os.fsdecode(event.src_path), event.is_directory)
        plain(event)

    handler.on_any_event = on_any_event
    return schedule(handler, path, **kwargs)
