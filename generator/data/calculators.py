"""The calculators, found on disk: one folder each under ``templates/pages/site/calculators/``.

A folder ``<id>/`` (``id`` is the calculator's ``data-wg-calc``) holds:

- ``calculator.yaml``: the metadata below;
- ``<id>.mjs``: its module for the browser, with any other ``*.mjs`` that only it imports (the
  build copies them to ``assets/js/calc/``, beside the shared ``formulas.mjs``, ``dom.mjs``,
  ``estimate.mjs`` and the modules those import, where ``main.mjs`` loads ``./<id>.mjs``; a name
  taken by a shared module is refused);
- ``form.html.j2``: its form, ``{% include "site/calculators/<id>/form.html.j2" %}``;
- ``page.md.j2``: its page, built as ``calculators/<page>.md`` (none for a calculator shown on
  another's page);
- ``cases.json``: its golden cases, a list (``tests/fixtures/calculators.json`` describes them).

``calculator.yaml``::

    order: 10                  # place in the sidebar and the overview
    page: memory-dense         # calculators/<page>.md; left out when it has no page of its own
    nav: calc.dense.heading    # its name (data/ui.yaml) in the sidebar and the overview
    summary: calc.index.dense  # its line in the overview
    client_data: false         # whether its script reads assets/data/whichgpu-data.js
    examples:                  # the worked examples its page prints (generator/facts/calc.py)
      dense: {formula: dense_memory, args: {layers: [9000, 4000, 4000, 32], batch: 128}}

A calculator whose files are still elsewhere names them: ``module`` (a path from the repository
root, copied with the shared assets), ``form`` and ``template`` (template names below
``templates/pages``). The sidebar, the overview, the build's copy of the modules, the list of
calculators that read the client data, the worked examples and the tests all read
:func:`calculators`.
"""
from __future__ import annotations

import functools
import json
import re
from dataclasses import dataclass, field
from pathlib import Path

import yaml

TEMPLATES = Path(__file__).resolve().parents[2] / "templates" / "pages"
FOLDER = Path("site") / "calculators"  # below the page templates
_ID = re.compile(r"^[a-z][a-z0-9-]*$")
_KEYS = {"order", "page", "nav", "summary", "client_data", "examples", "module", "form", "template"}


@dataclass(frozen=True)
class Calculator:
    id: str
    folder: Path
    order: int
    page: str | None = None
    nav: str | None = None
    summary: str | None = None
    client_data: bool = False
    examples: dict = field(default_factory=dict)
    form: str = ""  # template name of its form
    template: str | None = None  # template name of its page
    module: str | None = None  # where its module is when it is not in the folder

    @property
    def page_path(self) -> str | None:
        """Its page below the language root, e.g. ``calculators/memory-dense.md``."""
        return f"calculators/{self.page}.md" if self.page else None

    @property
    def modules(self) -> list[Path]:
        """The scripts of its folder, copied to ``assets/js/calc/`` by the build."""
        return sorted(self.folder.glob("*.mjs"))

    @property
    def cases(self) -> list[dict]:
        path = self.folder / "cases.json"
        return json.loads(path.read_text(encoding="utf-8")) if path.is_file() else []


def _read(folder: Path, templates: Path) -> Calculator:
    meta_file = folder / "calculator.yaml"
    meta = yaml.safe_load(meta_file.read_text(encoding="utf-8")) or {}
    where = meta_file.relative_to(templates.parent.parent) if meta_file.is_relative_to(templates.parent.parent) else meta_file
    unknown = set(meta) - _KEYS
    if unknown or not isinstance(meta.get("order"), int) or not _ID.match(folder.name):
        raise ValueError(f"{where}: needs an integer order, a folder named like an id, and no keys but {sorted(_KEYS)}"
                         f" (unknown: {sorted(unknown)})")
    page = meta.get("page")
    if page is not None and not _ID.match(str(page)):
        raise ValueError(f"{where}: page must be a name like memory-dense, not {page!r}")
    name = folder.relative_to(templates).as_posix()
    own_page = folder / "page.md.j2"
    return Calculator(id=folder.name, folder=folder, order=meta["order"], page=page, nav=meta.get("nav"),
                      summary=meta.get("summary"), client_data=bool(meta.get("client_data", False)),
                      examples=meta.get("examples") or {}, form=meta.get("form") or f"{name}/form.html.j2",
                      template=meta.get("template") or (f"{name}/page.md.j2" if own_page.is_file() else None),
                      module=meta.get("module"))


def calculators(templates: Path = TEMPLATES) -> tuple[Calculator, ...]:
    """Every calculator below ``templates`` (the page templates' folder), in their order; read
    again when a calculator.yaml is added, removed or changed (the live preview runs on)."""
    metas = sorted((Path(templates) / FOLDER).glob("*/calculator.yaml"))
    return _calculators(Path(templates), tuple((meta, meta.stat().st_mtime_ns) for meta in metas))


@functools.lru_cache(maxsize=8)
def _calculators(templates: Path, metas: tuple) -> tuple[Calculator, ...]:
    found = [_read(meta.parent, templates) for meta, _ in metas]
    orders = [c.order for c in found]
    if len(set(orders)) != len(orders):
        raise ValueError(f"{FOLDER.as_posix()}: two calculators have the same order: {orders}")
    return tuple(sorted(found, key=lambda c: c.order))


def with_pages(templates: Path = TEMPLATES) -> tuple[Calculator, ...]:
    """The calculators that have a page of their own, in their order."""
    return tuple(c for c in calculators(templates) if c.page and c.template)
