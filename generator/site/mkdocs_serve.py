"""Serve the built site with live reload (MkDocs' development server); the preview builds.

The server's private parts that the preview replaces are in generator/site/mkdocs_adapter.py.
"""
from __future__ import annotations

import logging
from pathlib import Path

from generator.site import mkdocs_adapter as adapter
from generator.site.mkdocs_glue import quiet_logging


def serve(site_dir: Path, preview, watch: list[Path], host: str, port: int) -> None:
    """Serve ``site_dir`` with live reload. ``preview`` (:class:`generator.site.preview.Preview`)
    rebuilds when a watched path changes, learns which page is open from the requests, holds a
    request for a page it has not rebuilt yet, and gives the problems to show on every page."""
    quiet_logging()
    logging.getLogger("mkdocs").setLevel(logging.INFO)
    server = adapter.live_reload_server(preview, host=host, port=port, root=str(site_dir))
    adapter.watch_writes(server, preview)
    for path in watch:
        if path.exists():
            server.watch(str(path))
    try:
        server.serve()
    except KeyboardInterrupt:
        pass
    finally:
        server.shutdown()
        preview.close()  # no background step writes into the site folder after this
