"""The engine's input: the data as plain dicts (see ``generator.facts.engine_input``)."""
from __future__ import annotations

from dataclasses import dataclass, field


@dataclass
class Bundle:
    models: dict[str, dict] = field(default_factory=dict)
    gpus: dict[str, dict] = field(default_factory=dict)
    measurements: list[dict] = field(default_factory=list)
    revisions: list[dict] = field(default_factory=list)  # oldest first
    problems: list = field(default_factory=list)
