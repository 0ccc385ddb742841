"""The one shape every data problem takes: ``path:line: field: message``."""
from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True, order=True)
class Problem:
    path: str
    line: int
    field: str
    message: str
    level: str = "error"  # "error" stops a build; "warning" is reported only

    def __str__(self) -> str:
        where = f"{self.path}:{self.line}:"
        head = f"{where} {self.field}:" if self.field else where
        tag = "" if self.level == "error" else f" [{self.level}]"
        return f"{head} {self.message}{tag}"


class DataError(Exception):
    """Raised by the pipeline when data has errors; carries every problem found."""

    def __init__(self, problems: list[Problem]):
        super().__init__(f"{len(problems)} problem(s) in data")
        self.problems = problems

    def __reduce__(self):  # crosses process boundaries intact (languages render in parallel)
        return (DataError, (self.problems,))

    def __str__(self) -> str:
        return "\n".join([f"{len(self.problems)} problem(s) in data:"] + [str(p) for p in self.problems])
