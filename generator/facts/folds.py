"""The leave-one-source-out errors of many folds at once, in forked processes.

Each fold refits the engine without one source and predicts that source's results
(:func:`generator.estimate.fit_error.held_out_errors`); the folds are independent and each is
deterministic, so computing them side by side gives the same answers as one after the other. After
a data change every fold is new (the fit digest keys them), and on a machine with more than one
core this halves the wait of the first build. Where forking is not safe (another thread runs: the
preview's server) or gains nothing (one core, one fold), the caller computes them in turn.
"""
from __future__ import annotations

import multiprocessing
import os
import threading
from concurrent.futures import ProcessPoolExecutor

from generator.estimate.fit_error import held_out_errors, prepare

# What a forked worker computes from, set in the worker by _inherit (passed through the fork, never
# pickled) and read by _fold: the engine's inputs, the full fit's constants, the prepared points.
_INPUTS: tuple | None = None


def can_fork(jobs: int) -> bool:
    """Parallel processes: more than one job and core, fork available, and no other thread running
    (the live-reload server runs threads; it builds in its own process). The build's languages and
    the folds ask alike."""
    return (min(jobs, os.cpu_count() or 1) > 1 and threading.active_count() == 1
            and "fork" in multiprocessing.get_all_start_methods())


def fold_errors(bundle, constants: dict, sources: list[str]) -> dict[str, list]:
    """{source: held_out_errors of that fold}, the folds shared among the cores."""
    prepared = prepare(bundle.models, bundle.gpus, bundle.measurements)
    workers = min(len(sources), os.cpu_count() or 1)
    with ProcessPoolExecutor(max_workers=workers, mp_context=multiprocessing.get_context("fork"),
                             initializer=_inherit, initargs=(bundle, constants, prepared)) as pool:
        return dict(zip(sources, pool.map(_fold, sources), strict=True))


def _inherit(bundle, constants: dict, prepared: tuple) -> None:
    global _INPUTS
    _INPUTS = (bundle, constants, prepared)


def _fold(source: str) -> list:
    bundle, constants, prepared = _INPUTS
    return held_out_errors(bundle.models, bundle.gpus, bundle.measurements, bundle.revisions, source, constants,
                           prepared)
