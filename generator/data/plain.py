"""The one serializer of records to plain values: what the API, the engine and the diff read.

Records are frozen (mappings are ``MappingProxyType``, lists are tuples); ``plain`` turns a record's
data, or any part of it, into dicts, lists and JSON-ready scalars, dates as ISO strings.
"""
from __future__ import annotations

import datetime as _dt


def plain(value):
    """Frozen record data -> JSON-ready values (dicts, lists; dates as ISO strings)."""
    if hasattr(value, "items"):
        return {k: plain(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [plain(v) for v in value]
    if isinstance(value, (_dt.date, _dt.datetime)):
        return value.isoformat()
    return value

