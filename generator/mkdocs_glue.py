"""The only module that imports MkDocs: build one language, or serve with live reload."""
from __future__ import annotations

import logging
import os
from collections.abc import Callable
from pathlib import Path

os.environ.setdefault("NO_MKDOCS_2_WARNING", "1")
os.environ.setdefault("DISABLE_MKDOCS_2_WARNING", "true")


class BuildFailed(Exception):
    pass


_CACHE_DIR: Path | None = None
_TEMPLATE_LISTS: dict[tuple, list] = {}
_PREVIEW = {"skip_theme_pages": False}


def use_template_cache(folder: Path) -> None:
    """Compile the theme's Jinja templates once: their bytecode is kept in ``folder`` and shared by
    every build (the four language processes, and each preview rebuild)."""
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
        if _PREVIEW["skip_theme_pages"]:
            # A preview lists the theme's files (thousands of icons) once, not on every rebuild.
            loader, plain = env.loader, env.loader.list_templates
            key = tuple(getattr(loader, "searchpath", ()))

            def list_templates():
                if key not in _TEMPLATE_LISTS:
                    _TEMPLATE_LISTS[key] = plain()
                return list(_TEMPLATE_LISTS[key])

            loader.list_templates = list_templates
        return env

    get_env._whichgpu = True  # type: ignore[attr-defined]
    Theme.get_env = get_env


def _quiet_logging() -> None:
    log = logging.getLogger("mkdocs")
    if not any(getattr(h, "_whichgpu", False) for h in log.handlers):
        handler = logging.StreamHandler()
        handler.setFormatter(logging.Formatter("%(levelname)-7s - %(message)s"))
        handler.setLevel(logging.WARNING)
        handler._whichgpu = True  # type: ignore[attr-defined]
        log.addHandler(handler)
        log.propagate = False


def build(config_file: Path, overrides: dict, *, dirty: bool = False, theme_pages: bool = True) -> None:
    """``mkdocs build --strict`` with ``overrides`` applied to the top-level keys.

    ``dirty``: the preview's rebuild, in place: only the pages whose Markdown is newer than their
    HTML are built again (MkDocs' own dirty build), warnings are shown without failing, and with
    ``theme_pages`` off the 404 page and the sitemap are left as they were."""
    from mkdocs.commands import build as mk
    from mkdocs.config import load_config
    from mkdocs.exceptions import MkDocsException

    _quiet_logging()
    _patch_theme()
    skip = dirty and not theme_pages
    original = mk._build_theme_template
    _PREVIEW["skip_theme_pages"] = dirty
    if skip:
        mk._build_theme_template = lambda *a, **k: None
    try:
        config = load_config(str(config_file), strict=not dirty, **overrides)
        if dirty:
            with _no_dirty_warning():
                mk.build(config, dirty=True)
        else:
            mk.build(config)
    except MkDocsException as exc:  # Abort in strict mode, config errors
        raise BuildFailed(str(exc)) from exc
    finally:
        mk._build_theme_template = original
        _PREVIEW["skip_theme_pages"] = False


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


def serve(site_dir: Path, rebuild: Callable[[], None], watch: list[Path], host: str, port: int) -> None:
    """Serve ``site_dir`` with live reload; ``rebuild`` runs when a watched path changes."""
    from mkdocs.livereload import LiveReloadServer

    _quiet_logging()
    logging.getLogger("mkdocs").setLevel(logging.INFO)

    def builder(*_args, **_kwargs):
        rebuild()

    server = LiveReloadServer(builder=builder, host=host, port=port, root=str(site_dir))
    for path in watch:
        if path.exists():
            server.watch(str(path))
    try:
        server.serve()
    except KeyboardInterrupt:
        pass
    finally:
        server.shutdown()
