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


def _quiet_logging() -> None:
    log = logging.getLogger("mkdocs")
    if not any(getattr(h, "_whichgpu", False) for h in log.handlers):
        handler = logging.StreamHandler()
        handler.setFormatter(logging.Formatter("%(levelname)-7s - %(message)s"))
        handler.setLevel(logging.WARNING)
        handler._whichgpu = True  # type: ignore[attr-defined]
        log.addHandler(handler)
        log.propagate = False


def build(config_file: Path, overrides: dict) -> None:
    """``mkdocs build --strict`` with ``overrides`` applied to the top-level keys."""
    from mkdocs.commands.build import build as mk_build
    from mkdocs.config import load_config
    from mkdocs.exceptions import MkDocsException

    _quiet_logging()
    try:
        config = load_config(str(config_file), strict=True, **overrides)
        mk_build(config)
    except MkDocsException as exc:  # Abort in strict mode, config errors
        raise BuildFailed(str(exc)) from exc


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
