"""What the preview's builds change in MkDocs' build, through its public plugin events.

The preview builds in place (MkDocs' dirty build): :class:`PreviewBuild`, added to the build's
plugins, tells MkDocs which pages and files to write again and whether to write the 404 page and
the sitemap. The private replacements are in generator/site/mkdocs_adapter.py.
"""
from __future__ import annotations

import functools
import os

from mkdocs.plugins import BasePlugin


class PreviewBuild(BasePlugin):
    """``rebuild``: the pages to build again (paths relative to the docs folder); a page never
    built before is built too, unless the caller names what changed (``static``: of the other
    files, those to copy; None: those newer than their copy, as MkDocs compares them).
    ``theme_pages`` off: the 404 page and the sitemap are left as they were."""

    def __init__(self, rebuild: set[str], static: set[str] | None, theme_pages: bool):
        self.rebuild, self.static, self.theme_pages = rebuild, static, theme_pages

    def on_files(self, files, *, config):
        """Each file's ``is_modified`` (MkDocs asks it of every page and file of a dirty build),
        on the build's own files: the theme's are among them by now."""
        for file in files:
            file.is_modified = functools.partial(self._is_modified, file)
        return files

    def _is_modified(self, file) -> bool:
        if file.is_documentation_page():
            return file.src_uri in self.rebuild or (self.static is None and not os.path.isfile(file.abs_dest_path))
        if self.static is not None:
            return file.src_uri in self.static
        return type(file).is_modified(file)

    def on_env(self, env, *, config, files):
        """The theme's static templates (the 404 page, the sitemap) are built right after this
        event, each one of ``config.theme.static_templates``."""
        if not self.theme_pages:
            config.theme.static_templates = set()
        return env
