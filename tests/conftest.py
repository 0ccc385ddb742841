"""Shared fixtures (a small valid data tree to mutate, one full build of the real site, Chromium and
the real site served to it) and the marks each test gets from what it uses."""
from __future__ import annotations

import inspect
import os
import types

import pytest
from helpers import EPOCH, DataTree, serve_directory

from benchmarks.lighthouse_server import ARGS, CHROMIUM

# What a test uses decides its marks (`make test-fast` leaves out browser and build):
#   browser  it drives Chromium: the browser fixtures, Playwright, axe or Lighthouse;
#   build    it runs the site build: the built_site fixture, build_site or build_fixture;
#   bench    its module tests a module of benchmarks/;
#   unit     none of these.
# A test uses the fixtures it asks for (and theirs), and the names that its code, its fixtures'
# code and the functions of the tests and of helpers.py that these call name.
BROWSER_FIXTURES = {"browser", "page", "axe_browser"}
BROWSER_NAMES = {"sync_playwright", "Axe", "lighthouse"}
BUILD_FIXTURES = {"built_site"}
BUILD_NAMES = {"build_site", "build_fixture"}


@pytest.fixture
def tree(tmp_path) -> DataTree:
    return DataTree(tmp_path)


@pytest.fixture(scope="session")
def built_site(tmp_path_factory):
    """The real data built once, all four languages, into a temporary site folder."""
    from generator.site.pipeline import Paths, build_site

    base = tmp_path_factory.mktemp("built")
    old = os.environ.get("SOURCE_DATE_EPOCH")
    os.environ["SOURCE_DATE_EPOCH"] = EPOCH
    try:
        paths = Paths(build=base / "build", site=base / "site")
        ds = build_site(paths)
    finally:
        if old is None:
            os.environ.pop("SOURCE_DATE_EPOCH", None)
        else:
            os.environ["SOURCE_DATE_EPOCH"] = old
    return paths.site, ds


@pytest.fixture(scope="module")
def server(built_site):
    """The real site served on a local port: its address."""
    yield from serve_directory(built_site[0])


@pytest.fixture(scope="module")
def browser():
    """Debian's Chromium (or CHROMIUM) driven by Playwright. Without it the tests fail rather than
    pass silently; `make test` installs it."""
    if not os.path.exists(CHROMIUM):
        pytest.fail(f"Chromium not found at {CHROMIUM}: run `make test` (installs Debian's chromium) or set CHROMIUM")
    from playwright.sync_api import sync_playwright

    with sync_playwright() as p:
        b = p.chromium.launch(executable_path=CHROMIUM, args=ARGS)
        yield b
        b.close()


@pytest.fixture
def page(browser):
    context = browser.new_context(viewport={"width": 1280, "height": 900})
    pg = context.new_page()
    pg.set_default_timeout(30000)
    yield pg
    context.close()


def _code_names(code: types.CodeType) -> set[str]:
    names = set(code.co_names)
    for const in code.co_consts:
        if isinstance(const, types.CodeType):
            names |= _code_names(const)
    return names


def _ours(obj) -> bool:
    module = getattr(obj, "__module__", None) or ""
    return module in ("helpers", "conftest") or module.startswith("test_")


def _names_used(functions) -> set[str]:
    """The global names the functions name, and those of the test and helpers.py functions they call."""
    names, seen, todo = set(), set(), [inspect.unwrap(f) for f in functions]
    while todo:
        fn = todo.pop()
        if fn in seen or not hasattr(fn, "__code__"):
            continue
        seen.add(fn)
        used = _code_names(fn.__code__)
        names |= used
        todo += [inspect.unwrap(v) for n in used if _ours(v := fn.__globals__.get(n)) and callable(v)]
    return names


def _tests_benchmarks(module) -> bool:
    return any(isinstance(v, types.ModuleType) and v.__name__.startswith("benchmarks.") for v in vars(module).values())


def _marks(item) -> set[str]:
    info = getattr(item, "_fixtureinfo", None)
    # the fixtures of the tests and conftest.py the test asks for, with theirs (not its parameters)
    fixtures = {name: d.func for name, defs in (info.name2fixturedefs.items() if info else ()) for d in defs if _ours(d.func)}
    names = _names_used([getattr(item, "function", None), *fixtures.values()])
    fixturenames = set(fixtures)
    marks = {"browser"} if fixturenames & BROWSER_FIXTURES or names & BROWSER_NAMES else set()
    if fixturenames & BUILD_FIXTURES or names & BUILD_NAMES:
        marks.add("build")
    if getattr(item, "module", None) and _tests_benchmarks(item.module):
        marks.add("bench")
    return marks


@pytest.hookimpl(tryfirst=True)  # before `-m` picks the tests by their marks
def pytest_collection_modifyitems(config, items):
    for item in items:
        given = {m.name for m in item.iter_markers()}
        marks = _marks(item) - given
        if not (marks | given) & {"browser", "build", "bench"}:
            marks = {"unit"} - given
        for name in sorted(marks):
            item.add_marker(name)
