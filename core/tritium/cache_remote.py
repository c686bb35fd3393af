"""The remote tier of the kernel cache: one store (Redis, or any ``RemoteCacheBackend``) shared by a fleet.

Opt in with ``TRITON_REMOTE_CACHE_BACKEND=module:Class`` (``knobs.cache.remote_manager_class``). On a local
miss the entry is fetched from the store; after a compile it is published there. The interface is Triton's:
``Backend(key)`` then ``get(filenames) -> {filename: bytes}`` and ``put(filename, data)``, so a backend
written for Triton works here too.

Layout in the store: every file of an entry is a blob under the namespace ``blob`` named by its SHA-256, and
the entry itself is one record under the kernel's cache key (``RECORD``): the local manifest (file digests,
metadata, its own checksum) wrapped with who produced it (tritium, backend and plugin versions). Blobs are
written first and the record last, so a reader never sees a record whose blobs were not yet written; two
publishers of one key each write a complete record (the last one stays), and equal blobs are equal bytes.

What comes from the store is untrusted input until it is checked: size limits, the record's and the
manifest's checksums, the key, and every blob against the digest the manifest names. Anything that fails is
ignored and the kernel compiled again (and published again). Checksums catch corruption, not malice: an
object file that passes them is loaded and run, so whoever can write to the store can run code in every
process that reads it. The remote cache is trusted code; that is why it is off unless a knob turns it on.

A store that cannot be reached costs one warning per process; for ``RETRY_SECONDS`` after a failure the
store is not asked again (each attempt could wait for a timeout), and compiles use the local cache only.
"""
from __future__ import annotations

import hashlib
import importlib
import json
import platform
import sys
import time
from typing import Any, Optional

from . import knobs
from ._version import __version__
from .cache_manifest import decode_manifest
from .cache_safety import warn_once
from .plugins import registry

RECORD = "entry.json"
BLOBS = "blob"
FORMAT = 1
MAX_RECORD_BYTES = 4 << 20
MAX_ENTRY_BYTES = 1 << 30
RETRY_SECONDS = 60.0
_RECORD_KEYS = {"format", "key", "producer", "payload", "digest"}


class RemoteCacheBackend:
    """A key-value store holding items ``(key, filename) -> bytes`` (Triton's interface). ``get`` leaves
    out what it does not have; either may raise when the store cannot be reached."""

    def __init__(self, key: str) -> None:
        self.key = key

    def get(self, filenames: list[str]) -> dict[str, bytes]:
        raise NotImplementedError

    def put(self, filename: str, data: bytes) -> None:
        raise NotImplementedError


def _sha(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def _canonical(obj: Any) -> bytes:
    return json.dumps(obj, sort_keys=True, separators=(",", ":"), ensure_ascii=True).encode("ascii")


def producer(metadata: dict) -> dict:
    """Who made an entry: tritium, the backend that compiled it and every active plugin, with versions."""
    reg = registry()
    target = metadata.get("target") or [None]
    backend: dict[str, Any] = {"name": target[0], "target": target}
    spec_info = reg.backends.get(target[0]) if isinstance(target[0], str) else None
    if spec_info is not None:
        info = spec_info[1]
        backend.update(plugin=info.name, distribution=info.distribution, version=info.version)
    plugins = {name: f"{reg.infos[name].distribution} {reg.infos[name].version}" for name in reg.order}
    return {"tritium": __version__, "backend": backend, "plugins": plugins,
            "python": platform.python_version(), "machine": platform.machine(), "platform": sys.platform}


def encode_record(key: str, payload: bytes, who: dict) -> bytes:
    body = {"format": FORMAT, "key": key, "producer": who, "payload": payload.decode("ascii")}
    body["digest"] = _sha(_canonical(body))
    return _canonical(body)


def decode_record(raw: bytes, key: str) -> tuple[bytes, dict]:
    """(payload, producer) of a record stored for ``key`` (the payload of a kernel entry is its local
    manifest); ValueError saying why not."""
    if not isinstance(raw, bytes) or len(raw) > MAX_RECORD_BYTES:
        raise ValueError("record missing or too large")
    body = json.loads(raw)
    if not isinstance(body, dict) or set(body) != _RECORD_KEYS:
        raise ValueError("not a record of this format")
    digest = body.pop("digest")
    if not isinstance(digest, str) or _sha(_canonical(body)) != digest:
        raise ValueError("record checksum mismatch")
    if body["format"] != FORMAT or body["key"] != key:
        raise ValueError("record of another format or key")
    if not isinstance(body["payload"], str) or not isinstance(body["producer"], dict):
        raise ValueError("record without payload or producer")
    return body["payload"].encode("ascii"), body["producer"]


def _resolve(spec: Any) -> type:
    if isinstance(spec, type):
        return spec
    module, _, name = spec.partition(":")
    cls = getattr(importlib.import_module(module), name)
    if not isinstance(cls, type):
        raise TypeError(f"{spec} is not a class")
    return cls


class RemoteTier:
    """The configured store, or None from :func:`remote` when the knob is unset."""

    def __init__(self, spec: Any) -> None:
        self.spec = spec
        self.name = spec if isinstance(spec, str) else f"{spec.__module__}:{spec.__qualname__}"
        self._cls: Optional[type] = None
        self._down_until = 0.0

    def _backend(self, key: str) -> Any:
        return self._cls(key)   # type: ignore[misc]

    def _configured(self) -> bool:
        if self._cls is not None:
            return True
        try:
            self._cls = _resolve(self.spec)
            return True
        except Exception as exc:   # the module, its imports (the redis client) or the name are missing
            self._down_until = float("inf")
            warn_once(("remote-config", self.name),
                      f"tritium: TRITON_REMOTE_CACHE_BACKEND={self.name} cannot be loaded "
                      f"({type(exc).__name__}: {exc}); kernels use the local cache only. Install what "
                      "it needs (pip install redis for tritium.cache_redis:RedisRemoteCacheBackend) or "
                      "fix the name")
            return False

    def _failed(self, doing: str, exc: BaseException) -> None:
        self._down_until = time.monotonic() + RETRY_SECONDS
        where = getattr(self._cls, "describe_location", None)
        at = f" at {where()}" if callable(where) else ""
        warn_once(("remote", self.name),
                  f"tritium: the remote kernel cache {self.name}{at} failed while {doing} "
                  f"({type(exc).__name__}: {exc}); kernels use the local cache only (the store is tried "
                  f"again after {RETRY_SECONDS:.0f} s). Check that the server is up and reachable (Redis: "
                  "TRITON_REDIS_HOST, TRITON_REDIS_PORT), or unset TRITON_REMOTE_CACHE_BACKEND")

    def available(self) -> bool:
        return time.monotonic() >= self._down_until and self._configured()

    def fetch(self, key: str) -> Optional[tuple[dict[str, bytes], dict]]:
        """The verified files and metadata of ``key`` from the store; None: absent, invalid, unreachable."""
        if not self.available():
            return None
        try:
            raw = self._backend(key).get([RECORD]).get(RECORD)
            if raw is None:
                return None
            digests, metadata = decode_manifest(decode_record(raw, key)[0], key)
            wanted = sorted(set(digests.values()))
            blobs = self._backend(BLOBS).get(wanted)
        except (ValueError, KeyError, TypeError, AttributeError, RecursionError):
            return None   # a corrupt record (JSONDecodeError is a ValueError): compile, publish a good one
        except Exception as exc:   # a third-party client: connection refused, timeouts, auth, ...
            self._failed("reading", exc)
            return None
        files: dict[str, bytes] = {}
        total = 0
        for name, digest in digests.items():
            data = blobs.get(digest)
            if not isinstance(data, bytes) or _sha(data) != digest:
                return None   # evicted, truncated or altered: never hand such bytes on
            total += len(data)
            if total > MAX_ENTRY_BYTES:
                return None
            files[name] = data
        return files, metadata

    def publish(self, key: str, files: dict[str, bytes], manifest: bytes, metadata: dict) -> bool:
        """Blobs first, the record last. False (after one warning) when the store cannot be written."""
        if not self.available():
            return False
        try:
            record = encode_record(key, manifest, producer(metadata))
            blobs = self._backend(BLOBS)
            for data in files.values():
                blobs.put(_sha(data), data)
            self._backend(key).put(RECORD, record)
            return True
        except Exception as exc:
            self._failed("writing", exc)
            return False

    # -- small documents (autotuning results): data that selects among the user's own choices, not code --
    def fetch_document(self, namespace: str, name: str) -> Optional[bytes]:
        """The checksummed payload stored by :meth:`publish_document`; None: absent, invalid, unreachable.
        The caller still validates what the payload says."""
        if not self.available():
            return None
        try:
            raw = self._backend(namespace).get([name]).get(name)
            return None if raw is None else decode_record(raw, f"{namespace}/{name}")[0]
        except (ValueError, KeyError, TypeError, AttributeError, RecursionError):
            return None
        except Exception as exc:
            self._failed("reading", exc)
            return None

    def publish_document(self, namespace: str, name: str, payload: bytes) -> bool:
        if not self.available():
            return False
        try:
            record = encode_record(f"{namespace}/{name}", payload, producer({}))
            self._backend(namespace).put(name, record)
            return True
        except Exception as exc:
            self._failed("writing", exc)
            return False


_tiers: dict[Any, RemoteTier] = {}


def remote() -> Optional[RemoteTier]:
    """The remote tier for the current knob value (one per configuration, so its back-off persists)."""
    spec = knobs.cache.remote_manager_class
    if spec is None:
        return None
    tier = _tiers.get(spec)
    if tier is None:
        tier = _tiers[spec] = RemoteTier(spec)
    return tier
