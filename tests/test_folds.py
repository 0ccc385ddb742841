"""The leave-one-source-out folds computed in forked processes (generator/facts/folds.py) give what
one fold after the other gives, and the build computes them side by side only where forking is safe."""
from __future__ import annotations

import threading

from helpers import ROOT

from generator.estimate import fit_constants
from generator.estimate.fit_error import held_out_errors, held_out_sources
from generator.facts import folds
from generator.facts.engine_input import read_bundle


def test_forked_folds_equal_the_folds_in_turn():
    bundle = read_bundle(ROOT / "data")
    constants = fit_constants(bundle.models, bundle.gpus, bundle.measurements, bundle.revisions)
    sources = held_out_sources(bundle.models, bundle.gpus, bundle.measurements, bundle.revisions)[:3]
    side_by_side = folds.fold_errors(bundle, constants, sources)
    assert list(side_by_side) == sources
    for source in sources:
        alone = held_out_errors(bundle.models, bundle.gpus, bundle.measurements, bundle.revisions, source, constants)
        assert side_by_side[source] == alone and alone, source


def test_no_fork_with_another_thread_running_or_a_single_fold():
    assert not folds.can_fork(1)
    stop = threading.Event()
    other = threading.Thread(target=stop.wait)
    other.start()
    try:
        assert not folds.can_fork(8)  # the preview's server runs threads: forking there is not safe
    finally:
        stop.set()
        other.join()
