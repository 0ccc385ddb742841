"""The one place of MkDocs' and its theme's private parts (generator/site/mkdocs_adapter.py): it
knows the installed versions, refuses others before it replaces anything, and every internal it
replaces or relies on is still there, as it expects it."""
from __future__ import annotations

import importlib
import inspect
import re

import pytest
from helpers import ROOT

from generator.site import mkdocs_adapter, mkdocs_glue
from generator.site.mkdocs_adapter import KNOWN, REPLACED, Settings, UnknownVersion


def _attribute(module: str, name: str):
    found = importlib.import_module(module)
    for part in name.split("."):
        found = getattr(found, part)
    return found


def _config(tmp_path):
    from mkdocs.config import load_config

    (tmp_path / "docs").mkdir(exist_ok=True)
    return load_config(str(ROOT / "mkdocs.yml"), docs_dir=str(tmp_path / "docs"), site_dir=str(tmp_path / "site"))


def test_the_installed_versions_are_the_pinned_ones_and_known():
    mkdocs_adapter.check_versions()
    pins = dict(re.findall(r"^([A-Za-z0-9_.-]+)==(\S+)", (ROOT / "requirements.txt").read_text(encoding="utf-8"), re.M))
    pins = {name.lower(): version for name, version in pins.items()}
    for package, known in KNOWN.items():
        assert mkdocs_adapter.installed_version(package) in known
        assert pins[package] in known, package


def test_an_unknown_version_stops_the_build_before_anything_is_replaced(tmp_path, monkeypatch):
    from mkdocs.commands import build as mk

    config = _config(tmp_path)
    walk, privacy = mk.get_files, config.plugins["material/privacy"]
    real = mkdocs_adapter.installed_version
    monkeypatch.setattr(mkdocs_adapter, "installed_version", lambda p: "99.0" if p == "mkdocs-material" else real(p))
    with pytest.raises(UnknownVersion) as info:
        mkdocs_adapter.check_versions()
    message = str(info.value)
    assert "mkdocs-material 99.0 is installed" in message and "9.8.1" in message
    assert "requirements.txt" in message and "KNOWN" in message
    with pytest.raises(UnknownVersion), mkdocs_adapter.applied(config, Settings(), lambda config, walk: walk(config)):
        pass
    assert "get_env" not in vars(config.theme) and "_parse_media" not in vars(privacy)
    assert "whichgpu/adapter" not in config.plugins and mk.get_files is walk
    with pytest.raises(UnknownVersion):  # loud: not a failed build of the site
        mkdocs_glue.build(ROOT / "mkdocs.yml", {"docs_dir": str(tmp_path / "docs"), "site_dir": str(tmp_path / "site")})


@pytest.mark.parametrize(("module", "name", "parameters"), REPLACED, ids=[r[1] for r in REPLACED])
def test_every_replaced_attribute_is_still_there_with_the_expected_parameters(module, name, parameters):
    found = _attribute(module, name)
    assert callable(found)
    assert tuple(inspect.signature(found).parameters) == parameters


@pytest.mark.parametrize(("module", "name", "needed"), [
    # MkDocs' build: the order the replacements and events rely on
    ("mkdocs.commands.build", "build", ("files = get_files(config)", "env = config.theme.get_env()",
                                        "files.add_files_from_theme(env, config)", "config.plugins.on_files(",
                                        "config.plugins.on_env(", "for template in config.theme.static_templates:")),
    ("mkdocs.commands.build", "_populate_page", ("page.file.is_modified()", "config.plugins.on_page_markdown(",
                                                 "page.render(config, files)")),
    ("mkdocs.structure.files", "Files.add_files_from_theme", ("env.list_templates(filter_func=filter)",)),
    # what a kept render sets in place of Page.render
    ("mkdocs.structure.pages", "Page.render", ("self.content =", "self.toc =", "self._title_from_render =",
                                               "self.present_anchor_ids =", "self.links_to_anchors =")),
    # the theme's plugins: where their replaced methods are called, and made
    ("material.plugins.search.plugin", "SearchPlugin.on_config", ("self.search_index = SearchIndex(",)),
    ("material.plugins.search.plugin", "SearchPlugin.on_page_context", ("self.search_index.add_entry_from_context(page)",)),
    ("material.plugins.search.plugin", "SearchIndex.create_entry_for_section", ("self._segment_chinese(",)),
    ("material.plugins.privacy.plugin", "PrivacyPlugin.on_files", ("self._parse_media(initiator)",)),
    # the live-reload server's attributes that are replaced
    ("mkdocs.livereload", "LiveReloadServer.__init__", ("self.observer =", "self.build_delay =")),
    ("mkdocs.livereload", "LiveReloadServer.watch", ("self.observer.schedule(",)),
])
def test_the_internals_the_replacements_rely_on_are_as_expected(module, name, needed):
    source = inspect.getsource(_attribute(module, name))
    for text in needed:
        assert text in source, f"{module}.{name} no longer has {text!r}"


def test_jinja_templates_render_through_root_render_func():
    import jinja2

    template = jinja2.Environment().from_string("{{ 1 + 1 }}")
    template.root_render_func = lambda context: iter(["kept"])
    assert template.render() == "kept"


def test_the_replacements_are_made_on_the_builds_own_objects_and_undone_after_it(tmp_path):
    from material.plugins.search.plugin import SearchIndex
    from mkdocs.commands import build as mk
    from mkdocs.structure.pages import Page
    from mkdocs.theme import Theme

    config = _config(tmp_path)
    classes = Theme.get_env, Page.render, SearchIndex.add_entry_from_context, SearchIndex._segment_chinese
    walk = mk.get_files
    with mkdocs_adapter.applied(config, Settings(), lambda config, walk: walk(config)):
        assert "get_env" in vars(config.theme) and "_parse_media" in vars(config.plugins["material/privacy"])
        assert mk.get_files is not walk
        assert config.theme.get_env().bytecode_cache is None
    assert mk.get_files is walk
    assert (Theme.get_env, Page.render, SearchIndex.add_entry_from_context, SearchIndex._segment_chinese) == classes
