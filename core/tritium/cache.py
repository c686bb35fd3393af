"""The on-disk kernel cache, and the dump and override folders.

An entry is a folder ``<cache dir>/<key>/`` holding one file per stage and ``manifest.json``: Triton's
layout, which tools built for Triton rely on (torch inductor's TritonBundler copies ``<cache dir>/<hash>/``
into its FX graph cache and writes it back on a warm start; the restored entry is verified like any other).
An entry of the older sharded layout ``<cache dir>/<key[:2]>/<key>/`` is moved into place when first read.
The manifest names the SHA-256 of every file and carries the kernel's metadata, and its own ``digest``
covers all of that (format, key, file digests, metadata), so that no edit or bit flip of any file of an
entry goes unnoticed: an entry that fails to parse, validate or verify is removed and the kernel compiled
again, never trusted. Entries are written in a private temporary folder and renamed into place in one
step, so concurrent processes never see half an entry. Who may have written an entry is checked too
(``cache_safety``). A cache that cannot be written (read-only, full) costs one warning, not the launch.
With ``TRITON_REMOTE_CACHE_BACKEND`` set, a local miss is looked up in a store shared by a fleet and every
compiled entry is published there (``cache_remote``).
"""
from __future__ import annotations

import hashlib
import importlib.util
import os
import re
import shutil
import tempfile
import uuid
from typing import Any, Optional, Union

from . import knobs
from .cache_manifest import MANIFEST, decode_manifest, encode_manifest, valid_file_name
from .cache_manifest import sha as _sha
# RemoteCacheBackend: Triton's triton.runtime.cache (this module) holds it too
from .cache_remote import RemoteCacheBackend as RemoteCacheBackend
from .cache_remote import remote
from .cache_safety import CacheWarning as CacheWarning  # users filter warnings by tritium.cache.CacheWarning
from .cache_safety import (UntrustedEntry, check_folder, describe_error, make_dirs, read_trusted,
                           resolve_root, sweep_root, trust_advice, warn_once, write_new_file)

Artifact = Union[str, bytes]
# at least 16 characters, so that an entry's name is never a legacy two-letter shard, ``autotune`` or the
# ``user-<uid>`` folder of a shared root (all beside entries in the cache folder)
_KEY = re.compile(r"[0-9A-Za-z_-]{16,128}")


def _as_bytes(a: Artifact) -> bytes:
    return a if isinstance(a, bytes) else a.encode("utf-8")


def atomic_write(path: str, data: Artifact, mode: int = 0o600) -> None:
    """Write ``data`` to ``path`` so that readers see the old file or the new one. Private by default (0600,
    new folders 0700); a file meant to be shared (``mode`` other than 0600) gets ordinary folders."""
    d = os.path.dirname(path) or "."
    make_dirs(d, private=mode == 0o600)
    fd, tmp = tempfile.mkstemp(dir=d, prefix=f".tmp-{os.getpid()}-")
    try:
        with os.fdopen(fd, "wb") as f:
            f.write(_as_bytes(data))
        if mode != 0o600:
            os.chmod(tmp, mode)
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
    """Entries under ``root`` (default: ``knobs.cache.cache_dir()``). Where the root is not safe to load
    code from, entries live in a private per-user folder or only in memory (``cache_safety``)."""

    def __init__(self, root: Optional[str] = None) -> None:
        self.root = root or knobs.cache.cache_dir()
        self.trust_shared = knobs.cache.trust_shared

    def location(self, create: bool = False) -> Optional[str]:
        """The folder entries are read from and written to; None: in memory only."""
        if self.trust_shared:
            if create:
                make_dirs(self.root, private=False)
            return self.root
        return resolve_root(self.root, create)

    def _dir(self, key: str, where: Optional[str] = None) -> str:
        if not _KEY.fullmatch(key):
            raise ValueError(f"invalid cache key {key!r}")
        return os.path.join(where or self.root, key)

    @staticmethod
    def _legacy_dir(key: str, where: str) -> str:
        return os.path.join(where, key[:2], key)

    def _migrate(self, key: str, where: str, d: str, check: bool) -> None:
        """Move the entry of the sharded layout (older tritium) to ``d``; verified afterwards like any entry.
        Raises UntrustedEntry if the shard or the entry folder is not ours alone."""
        old = self._legacy_dir(key, where)
        if not os.path.lexists(old):
            return
        if check:
            check_folder(os.path.dirname(old))
            check_folder(old)
        try:
            os.rename(old, d)   # atomic; another process may have moved or written it first: theirs stays
        except OSError:
            return
        self._drop_shard(old)

    @staticmethod
    def _drop_shard(old: str) -> None:
        try:
            os.rmdir(os.path.dirname(old))   # only once the shard is empty
        except OSError:
            pass

    def get(self, key: str) -> Optional[CacheEntry]:
        """The entry from this cache, else from the remote cache (``cache_remote``): verified, then stored
        here."""
        entry = self._get_local(key)
        if entry is None:
            tier = remote()
            fetched = tier.fetch(key) if tier is not None else None
            if fetched is not None:
                self._put_local(key, *fetched)   # a cache that cannot be written still serves this process
                entry = CacheEntry(*fetched)
        return entry

    def _get_local(self, key: str) -> Optional[CacheEntry]:
        try:
            where = self.location()
        except OSError:
            return None
        if where is None:
            return None
        sweep_root(where)
        d = self._dir(key, where)
        check = not self.trust_shared
        bad = d
        try:
            if not os.path.lexists(d):
                bad = self._legacy_dir(key, where)
                self._migrate(key, where, d, check)
                bad = d
                if not os.path.lexists(d):
                    return None
            if check:
                check_folder(d)
            files, metadata = decode_manifest(read_trusted(os.path.join(d, MANIFEST), check), key)
            data = {}
            for name, digest in files.items():
                data[name] = read_trusted(os.path.join(d, name), check)
                if _sha(data[name]) != digest:
                    raise ValueError(f"checksum mismatch in {name}")
            return CacheEntry(data, metadata)
        except UntrustedEntry as exc:
            warn_once(("entry", where), f"tritium: the kernel cache entry {exc.path} is not loaded because "
                      f"{exc.why}; the kernel is compiled again (and the entry replaced where possible); "
                      f"{trust_advice()}")
        except (OSError, ValueError, KeyError, TypeError, AttributeError, RecursionError):
            pass   # corrupt (UnicodeDecodeError and JSONDecodeError are ValueErrors): recompile, replace
        self._drop(bad)
        if bad != d:
            self._drop_shard(bad)
        return None

    def put(self, key: str, files: dict[str, Artifact], metadata: dict) -> bool:
        """Store an entry here and publish it to the remote cache, if there is one."""
        stored = self._put_local(key, files, metadata)
        tier = remote()
        if tier is not None:
            raw = {name: _as_bytes(data) for name, data in files.items()}
            manifest = encode_manifest(key, {n: _sha(d) for n, d in raw.items()}, metadata)
            tier.publish(key, raw, manifest, metadata)
        return stored

    def _put_local(self, key: str, files: dict[str, Artifact], metadata: dict) -> bool:
        """Store a whole entry at once (if another process stored it first, keep theirs). False when it
        could not be stored: the caller keeps its kernel in memory, after one warning per cache folder."""
        path = self.root
        try:
            where = self.location(create=True)
            if where is None:
                return False
            path = where
            self._put(where, key, files, metadata)
            return True
        except OSError as exc:
            at = f" (at {exc.filename})" if exc.filename and exc.filename != path else ""
            warn_once(("write", path), f"tritium: cannot write to the kernel cache {path}{at}: "
                      f"{describe_error(exc)}; kernels compile in memory only in this process. Free space or "
                      "make it writable, or point TRITON_CACHE_DIR at a writable folder")
            return False

    def _put(self, where: str, key: str, files: dict[str, Artifact], metadata: dict) -> None:
        private = not self.trust_shared
        final = self._dir(key, where)
        sweep_root(where)   # the folder of entries (``location`` checked it is ours) and legacy shards
        tmp = os.path.join(where, f".tmp-{key}-{os.getpid()}-{uuid.uuid4().hex[:8]}")
        os.mkdir(tmp, 0o700 if private else 0o777)
        try:
            if private:
                os.chmod(tmp, 0o700)
            digests = {}
            for name, data in files.items():
                if not valid_file_name(name):
                    raise ValueError(f"cannot store a cache file named {name!r}")
                raw = _as_bytes(data)
                write_new_file(os.path.join(tmp, name), raw, private)
                digests[name] = _sha(raw)
            write_new_file(os.path.join(tmp, MANIFEST), encode_manifest(key, digests, metadata), private)
            for attempt in range(3):
                try:
                    os.rename(tmp, final)
                    return
                except OSError:
                    # taken: keep a valid entry another process stored first; replace a bad one (get drops it)
                    if not os.path.isdir(final) or attempt == 2:
                        raise
                    if self._get_local(key) is not None:
                        shutil.rmtree(tmp, ignore_errors=True)
                        return
                    self._drop(final)
        except BaseException:
            shutil.rmtree(tmp, ignore_errors=True)
            raise

    def invalidate(self, key: str) -> None:
        try:
            where = self.location()
        except OSError:
            return
        if where is not None:
            self._drop(self._dir(key, where))
            self._drop(self._legacy_dir(key, where))
            self._drop_shard(self._legacy_dir(key, where))

    @staticmethod
    def _drop(d: str) -> None:
        if not os.path.lexists(d):
            return
        trash = f"{d}.trash-{os.getpid()}-{uuid.uuid4().hex[:8]}"
        try:
            os.rename(d, trash)  # atomic: readers stop seeing it at once
        except OSError:
            return
        if os.path.islink(trash):
            os.unlink(trash)
        else:
            shutil.rmtree(trash, ignore_errors=True)


# No ``_base32``/``_base64`` here (Triton's folder-name encodings of a hash): torch inductor's
# triton_hash_to_path_key looks for them in this module and, finding neither, names a kernel's folder by
# ``kernel.hash`` itself, which is the key of its entry here. Adding one would send TritonBundler elsewhere.
def __getattr__(name: str) -> Any:
    # Triton's module of RedisRemoteCacheBackend is triton.runtime.cache (this module): "module:Class" settings
    # and subclasses written for Triton find it here; the redis client is imported only when asked for
    if name == "RedisRemoteCacheBackend":
        from .cache_redis import RedisRemoteCacheBackend
        return RedisRemoteCacheBackend
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


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

    def fingerprint(self) -> Optional[str]:
        """SHA-256 of the names and contents of the files here, None if there are none: a kernel compiled
        with overrides is cached under a key of its own, so it is never served once they are gone."""
        try:
            names = sorted(os.listdir(self.dir))
        except OSError:
            return None
        h = hashlib.sha256()
        found = False
        for name in names:
            path = os.path.join(self.dir, name)
            if os.path.isfile(path):
                with open(path, "rb") as f:
                    data = f.read()
                h.update(f"{name}\0{len(data)}\0".encode() + data)
                found = True
        return h.hexdigest() if found else None
