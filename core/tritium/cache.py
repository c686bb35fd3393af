"""The on-disk kernel cache, and the dump and override folders.

An entry is a folder ``<cache dir>/<key>/`` holding one file per stage and ``manifest.json`` with the
SHA-256 of each. It is written in a private temporary folder and renamed into place in one step, so
concurrent processes never see half an entry, and a failed compilation leaves nothing behind. A reader
checks every checksum; an entry that fails is removed and the kernel recompiled, never trusted.
"""
from __future__ import annotations

import hashlib
import json
import os
import shutil
import tempfile
import uuid
from typing import Optional, Union

from . import knobs

Artifact = Union[str, bytes]
MANIFEST = "manifest.json"


def _sha(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def _as_bytes(a: Artifact) -> bytes:
    return a if isinstance(a, bytes) else a.encode("utf-8")


def atomic_write(path: str, data: Artifact) -> None:
    """Write ``data`` to ``path`` so that readers see the old file or the new one, never a mix."""
    d = os.path.dirname(path) or "."
    os.makedirs(d, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=d, prefix=".tmp-")
    try:
        with os.fdopen(fd, "wb") as f:
            f.write(_as_bytes(data))
        os.replace(tmp, path)
    except BaseException:
        try:
            os.unlink(tmp)
        except OSError:
            pass
        raise


_fingerprints: dict[str, str] = {}


def package_fingerprint(package: str) -> str:
    """SHA-256 of every Python source file of an installed package (like Triton's ``triton_key``), so that
    an edited compiler never reuses kernels the old code compiled. Computed once per process."""
    fp = _fingerprints.get(package)
    if fp is None:
        import importlib.util
        spec = importlib.util.find_spec(package)
        h = hashlib.sha256(package.encode())
        roots = list(spec.submodule_search_locations or []) if spec else []
        for root in roots:
            for dirpath, dirnames, filenames in os.walk(root):
                dirnames.sort()
                for name in sorted(filenames):
                    if name.endswith(".py"):
                        path = os.path.join(dirpath, name)
                        h.update(os.path.relpath(path, root).encode())
                        with open(path, "rb") as f:
                            h.update(f.read())
        fp = _fingerprints[package] = h.hexdigest()
    return fp


class CacheEntry:
    """A complete, verified cache entry: file name -> bytes, plus the metadata dict."""

    def __init__(self, files: dict[str, bytes], metadata: dict) -> None:
        self.files = files
        self.metadata = metadata


class KernelCache:
    def __init__(self, root: Optional[str] = None) -> None:
        self.root = root or knobs.cache.cache_dir()

    def _dir(self, key: str) -> str:
        return os.path.join(self.root, key[:2], key)

    def get(self, key: str) -> Optional[CacheEntry]:
        d = self._dir(key)
        try:
            with open(os.path.join(d, MANIFEST), "rb") as f:
                manifest = json.loads(f.read())
            files = {}
            for name, digest in manifest["files"].items():
                with open(os.path.join(d, name), "rb") as f:
                    data = f.read()
                if _sha(data) != digest:
                    raise ValueError(f"checksum mismatch in {name}")
                files[name] = data
            return CacheEntry(files, manifest["metadata"])
        except FileNotFoundError:
            return None
        except (OSError, ValueError, KeyError, TypeError, json.JSONDecodeError):
            self.invalidate(key)
            return None

    def put(self, key: str, files: dict[str, Artifact], metadata: dict) -> None:
        """Store a whole entry at once. If another process stored it first, keep theirs."""
        final = self._dir(key)
        parent = os.path.dirname(final)
        os.makedirs(parent, exist_ok=True)
        tmp = os.path.join(parent, f".tmp-{key}-{os.getpid()}-{uuid.uuid4().hex[:8]}")
        os.makedirs(tmp)
        try:
            digests = {}
            for name, data in files.items():
                raw = _as_bytes(data)
                with open(os.path.join(tmp, name), "wb") as f:
                    f.write(raw)
                digests[name] = _sha(raw)
            with open(os.path.join(tmp, MANIFEST), "w") as f:
                json.dump({"files": digests, "metadata": metadata}, f, default=str)
            try:
                os.rename(tmp, final)
            except OSError:
                if os.path.isdir(final) and self.get(key) is not None:
                    shutil.rmtree(tmp, ignore_errors=True)   # another process won the race: use theirs
                    return
                self.invalidate(key)
                os.rename(tmp, final)
        except BaseException:
            shutil.rmtree(tmp, ignore_errors=True)
            raise

    def invalidate(self, key: str) -> None:
        d = self._dir(key)
        if not os.path.exists(d):
            return
        trash = f"{d}.trash-{os.getpid()}-{uuid.uuid4().hex[:8]}"
        try:
            os.rename(d, trash)  # atomic: readers stop seeing it at once
        except OSError:
            return
        shutil.rmtree(trash, ignore_errors=True)


class DumpFolder:
    """TRITON_KERNEL_DUMP: every stage of every compiled kernel, under <dump dir>/<source hash>/."""

    def __init__(self, src_hash: str) -> None:
        self.dir = os.path.join(knobs.cache.dump_path(), src_hash)

    def put(self, name: str, data: Artifact) -> str:
        path = os.path.join(self.dir, name)
        atomic_write(path, data)
        return path


class OverrideFolder:
    """TRITON_KERNEL_OVERRIDE: stage files a user placed under <override dir>/<source hash>/."""

    def __init__(self, src_hash: str) -> None:
        self.dir = os.path.join(knobs.cache.override_path(), src_hash)

    def get(self, name: str) -> Optional[str]:
        path = os.path.join(self.dir, name)
        return path if os.path.isfile(path) else None
