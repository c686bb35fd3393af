"""The manifest of a cache entry: the SHA-256 of every file plus the kernel's metadata, under a digest of its own.

Below both the local cache (``cache``) and the remote tier (``cache_remote``), which read and write it.
"""
from __future__ import annotations

import hashlib
import json
import re
from typing import Any

MANIFEST = "manifest.json"
FORMAT = 2
_SHA = re.compile(r"[0-9a-f]{64}")
_MANIFEST_KEYS = {"format", "key", "files", "metadata", "digest"}


def sha(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def _canonical(obj: Any) -> bytes:
    return json.dumps(obj, sort_keys=True, separators=(",", ":"), ensure_ascii=True).encode("ascii")


def valid_file_name(name: object) -> bool:
    """A plain file name inside an entry: no folders, nothing upward, not the manifest."""
    return (isinstance(name, str) and 0 < len(name) <= 255 and name not in (".", "..", MANIFEST)
            and not any(c in name for c in "/\\\0"))


def encode_manifest(key: str, digests: dict[str, str], metadata: dict) -> bytes:
    # the digest covers the metadata as readers will see it (after a JSON round trip), so compute it on that
    meta = json.loads(json.dumps(metadata, default=str))
    body = {"format": FORMAT, "key": key, "files": dict(digests), "metadata": meta}
    body["digest"] = sha(_canonical(body))
    return _canonical(body)


def decode_manifest(raw: bytes, key: str) -> tuple[dict[str, str], dict]:
    """(file digests, metadata) of a manifest written for ``key``; ValueError saying why it is not valid."""
    body = json.loads(raw)
    if not isinstance(body, dict) or set(body) != _MANIFEST_KEYS:
        raise ValueError("not a manifest of this format")
    digest = body.pop("digest")
    if not isinstance(digest, str) or sha(_canonical(body)) != digest:
        raise ValueError("manifest checksum mismatch")
    if body["format"] != FORMAT or body["key"] != key:
        raise ValueError("manifest of another format or key")
    files, metadata = body["files"], body["metadata"]
    if not isinstance(metadata, dict) or not isinstance(files, dict) or not files:
        raise ValueError("manifest without files or metadata")
    for name, d in files.items():
        if not valid_file_name(name) or not isinstance(d, str) or not _SHA.fullmatch(d):
            raise ValueError(f"manifest names an invalid file {name!r}")
    return files, metadata
