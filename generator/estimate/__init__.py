"""The estimation engine: will a model fit a GPU, how fast does it run, how fast does a GPU train.

Modules: ``formats`` (bits per weight, KV precisions, runtimes), ``memory`` (weights, KV cache,
workspace, training state), ``speed`` (decode, prefill, relative training), ``fitting`` (the few
fitted constants), ``fit_error`` (their measured error), ``engine`` (one estimate with its error
band and basis), ``bundle`` (the plain dicts it takes). It imports nothing else of ``generator``:
the dataset's adapter is ``generator.facts.engine_input``, the command ``generator.cli.estimate``.
See README.md.

For the site: ``published(bundle)`` gives the JSON-ready table the browser's
``docs/assets/js/calc/estimate.mjs`` takes (fitted constants, error table, reference GPU), and
``estimate(model, gpu, options, table)`` one estimate.
"""
from __future__ import annotations

from generator.estimate.bundle import Bundle
from generator.estimate.engine import EstimateError, error_band, estimate, training_relative_only
from generator.estimate.fit_error import accuracy
from generator.estimate.fitting import fit_constants

DEFAULT_REFERENCE = "rtx-4090"


def reference_id(bundle: Bundle) -> str | None:
    """The reference GPU of the latest revision's relative-performance table, else rtx-4090."""
    for rev in reversed(bundle.revisions):
        for table in rev.get("relative_performance") or []:
            if table.get("reference") in bundle.gpus:
                return table["reference"]
    return DEFAULT_REFERENCE if DEFAULT_REFERENCE in bundle.gpus else None


def published(bundle: Bundle, reference: str | None = None, held_out=None, constants: dict | None = None) -> dict:
    """constants + errors + reference: what pages print and what the client data file ships.
    ``held_out(source, make)``: a caller's cache of the leave-one-source-out errors of one source
    (``fit_error.accuracy``); ``constants``: ``fit_constants`` of the bundle where the caller has them."""
    constants = constants or fit_constants(bundle.models, bundle.gpus, bundle.measurements, bundle.revisions)
    errors = accuracy(bundle.models, bundle.gpus, bundle.measurements, bundle.revisions, constants, held_out)
    ref = reference or reference_id(bundle)
    return {"constants": constants, "errors": errors, "reference": bundle.gpus.get(ref) if ref else None}


__all__ = ["Bundle", "EstimateError", "accuracy", "error_band", "estimate", "fit_constants", "published",
           "reference_id", "training_relative_only"]
