"""A build forks no more language processes than the memory holds: at 100 times the shipped data
each process grew to 13.7 GB and the kernel killed one of two on a 23 GB machine."""
from __future__ import annotations

import os

from generator.site import pipeline, scratch


def test_workers_are_bounded_by_the_memory_available():
    # this process resident at 8.7 GB, 14 GB available: one worker, not two
    assert scratch.workers_that_fit(2, available_kib=14_000_000, resident_kib=8_700_000) == 1
    # a small dataset: as many as wanted
    assert scratch.workers_that_fit(2, available_kib=20_000_000, resident_kib=300_000) == 2
    # never none, and all of them where the system says nothing
    assert scratch.workers_that_fit(4, available_kib=100, resident_kib=8_700_000) == 1
    assert scratch.workers_that_fit(3, available_kib=0, resident_kib=0) == 3


def test_the_fork_map_asks_how_many_workers_fit(monkeypatch):
    asked = []

    def fits(wanted, available_kib=None, resident_kib=None):
        asked.append(wanted)
        return 1

    monkeypatch.setattr(scratch, "workers_that_fit", fits)
    assert pipeline._fork_map(_pid_and_square, [1, 2, 3], ()) and asked and asked[0] >= 1
    # one worker at a time: each item in a fresh fork, in order
    out = pipeline._fork_map(_pid_and_square, [1, 2, 3], ())
    assert [sq for _pid, sq in out] == [1, 4, 9]
    assert len({pid for pid, _sq in out}) == 3


def _pid_and_square(x):
    return os.getpid(), x * x
