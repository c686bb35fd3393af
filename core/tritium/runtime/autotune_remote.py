"""Autotuning results (``TRITON_CACHE_AUTOTUNING``) shared through the remote kernel cache, so that one machine
of a fleet times the configs and the others reuse its choice.

A stored result only ranks configs: it is accepted when every config it names is one of the configs the
kernel is being tuned over now and every timing is a number (or a list of numbers), so a bad or hostile
entry can at worst pick a slower config of the user's own, never run anything the user did not write.
"""
from __future__ import annotations

import json
import math
import os
from typing import Any

from ..cache import atomic_write
from ..cache_remote import remote

NAMESPACE = "autotune"


def _timing_ok(t: Any) -> bool:
    items = t if isinstance(t, list) else [t]
    return bool(items) and all(isinstance(x, (int, float)) and not isinstance(x, bool) and not math.isnan(x)
                               for x in items)


def valid_timings(raw: bytes, allowed: list[dict]) -> bool:
    try:
        doc = json.loads(raw)
        allowed = json.loads(json.dumps(allowed))   # compare as stored: tuples are lists there
    except (ValueError, TypeError):
        return False
    if not isinstance(doc, dict) or set(doc) != {"key", "configs_timings"} or not isinstance(doc["key"], str):
        return False
    pairs = doc["configs_timings"]
    if not isinstance(pairs, list) or not pairs:
        return False
    return all(isinstance(p, list) and len(p) == 2 and p[0] in allowed and _timing_ok(p[1]) for p in pairs)


def fetch_timings(path: str, allowed: list[dict]) -> bool:
    """Put the fleet's result for this tuning (file ``path`` of the local cache) there; False if none."""
    tier = remote()
    if tier is None:
        return False
    raw = tier.fetch_document(NAMESPACE, os.path.basename(path))
    if raw is None or not valid_timings(raw, allowed):
        return False
    try:
        atomic_write(path, raw)
    except OSError:
        return False   # tune here; the local cache already warned or will
    return True


def publish_timings(path: str, data: str) -> None:
    tier = remote()
    if tier is not None:
        tier.publish_document(NAMESPACE, os.path.basename(path), data.encode("ascii"))
