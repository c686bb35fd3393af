"""The on-disk cache: whole entries appear atomically, corrupt or misplaced entries are dropped, races are
safe, entries are private, an unwritable cache warns once, and killed processes' temporaries are swept."""
from __future__ import annotations

import hashlib
import multiprocessing as mp
import os
import subprocess
import sys
import time
import uuid
import warnings

import pytest

from tritium import cache_safety
from tritium.cache import MANIFEST, CacheWarning, KernelCache, atomic_write, encode_manifest


def test_put_get_roundtrip(tmp_path):
    c = KernelCache(str(tmp_path))
    c.put("ab" * 32, {"k.ttir": "module {}", "k.obj": b"\x7fELF\x00"}, {"name": "k"})
    e = c.get("ab" * 32)
    assert e is not None and e.files["k.obj"] == b"\x7fELF\x00" and e.metadata == {"name": "k"}


def test_corrupt_entry_is_dropped(tmp_path):
    c = KernelCache(str(tmp_path))
    key = "cd" * 32
    c.put(key, {"k.llir": "define void @f() { ret void }"}, {"name": "k"})
    path = os.path.join(str(tmp_path), key, "k.llir")
    with open(path, "w") as f:
        f.write("garbage")
    assert c.get(key) is None
    assert not os.path.exists(os.path.dirname(path)), "a corrupt entry must be removed"


def test_truncated_manifest_is_dropped(tmp_path):
    c = KernelCache(str(tmp_path))
    key = "ef" * 32
    c.put(key, {"k.llir": "x"}, {"name": "k"})
    manifest = os.path.join(str(tmp_path), key, "manifest.json")
    with open(manifest, "w") as f:
        f.write("{\"files\": ")
    assert c.get(key) is None


def _writer(root: str, key: str, i: int) -> None:
    c = KernelCache(root)
    for _ in range(20):
        c.put(key, {"k.obj": bytes([i]) * 1000, "k.llir": f"v{i}"}, {"writer": i})
        e = c.get(key)
        assert e is not None
        # an entry is always one writer's complete set, never a mix
        assert e.files["k.obj"] == bytes([e.metadata["writer"]]) * 1000
        assert e.files["k.llir"] == f"v{e.metadata['writer']}".encode()


def test_concurrent_processes(tmp_path):
    ctx = mp.get_context("spawn")
    procs = [ctx.Process(target=_writer, args=(str(tmp_path), "99" * 32, i)) for i in range(4)]
    for p in procs:
        p.start()
    for p in procs:
        p.join(60)
        assert p.exitcode == 0
    assert not [n for n in os.listdir(str(tmp_path)) if n.startswith(".tmp")]


# -- the manifest covers everything and names only files of the entry -------------------------------------

def test_manifest_naming_a_file_outside_the_entry_is_refused(tmp_path):
    secret = tmp_path / "secret"
    secret.write_bytes(b"not part of any entry")
    c = KernelCache(str(tmp_path / "c"))
    key = "a1" * 32
    c.put(key, {"k.llir": "x"}, {"name": "k"})
    d = os.path.join(str(tmp_path / "c"), key)
    digests = {"k.llir": hashlib.sha256(b"x").hexdigest(),
               "../../../secret": hashlib.sha256(secret.read_bytes()).hexdigest()}
    with open(os.path.join(d, MANIFEST), "wb") as f:
        f.write(encode_manifest(key, digests, {"name": "k"}))   # a well-formed manifest, digest and all
    assert c.get(key) is None
    assert secret.exists()


def test_entry_moved_to_another_key_is_refused(tmp_path):
    c = KernelCache(str(tmp_path))
    a, b = "b1" * 32, "b2" * 32
    c.put(a, {"k.llir": "x"}, {"name": "k"})
    os.rename(os.path.join(str(tmp_path), a), os.path.join(str(tmp_path), b))
    assert c.get(b) is None


def test_entries_and_dumps_are_private_under_umask_000(tmp_path):
    old = os.umask(0)
    try:
        KernelCache(str(tmp_path / "a" / "b" / "cache")).put("c1" * 32, {"k.obj": b"\0"}, {"name": "k"})
        atomic_write(str(tmp_path / "dump" / "h" / "k.ttir"), "module {}")
    finally:
        os.umask(old)
    modes = {p: os.stat(p).st_mode & 0o7777 for p in [str(tmp_path / n) for n in ("a", "dump")] +
             [os.path.join(d, n) for d, ds, fs in os.walk(tmp_path) for n in ds + fs]}
    assert not {p: oct(m) for p, m in modes.items() if m not in (0o700, 0o600)}


def test_unwritable_cache_warns_once_and_stores_nothing(tmp_path):
    cache_safety._warned.clear()
    blocker = tmp_path / "file"
    blocker.write_text("")
    c = KernelCache(str(blocker / "cache"))
    with warnings.catch_warnings(record=True) as rec:
        warnings.simplefilter("always")
        assert c.put("d1" * 32, {"k.obj": b"\0"}, {}) is False
        assert c.put("d2" * 32, {"k.obj": b"\0"}, {}) is False
        assert c.get("d1" * 32) is None
    msgs = [str(w.message) for w in rec if issubclass(w.category, CacheWarning)]
    assert len(msgs) == 1 and str(blocker / "cache") in msgs[0] and "ENOTDIR" in msgs[0], msgs


# -- temporaries of killed processes are swept, a live process's never -----------------------------------

def _dead_pid() -> int:
    p = subprocess.Popen([sys.executable, "-c", "pass"])
    p.wait()
    return p.pid


def _make(path: str, age: float, folder: bool = True) -> str:
    if folder:
        os.makedirs(path)
        with open(os.path.join(path, "k.obj"), "wb") as f:
            f.write(b"partial")
    else:
        os.makedirs(os.path.dirname(path), exist_ok=True)
        with open(path, "wb") as f:
            f.write(b"partial")
    t = time.time() - age
    os.utime(path, (t, t))
    return path


def test_stale_temporaries_are_swept(tmp_path):
    cache_safety._swept.clear()
    root = str(tmp_path / "cache")
    c = KernelCache(root)
    c.put("ab" * 32, {"k.obj": b"1"}, {})   # the first use in this process sweeps (nothing to sweep yet)
    dead, other = _dead_pid(), "cd" * 32
    live = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(60)"])
    old = 3 * cache_safety.STALE_SECONDS
    try:
        gone = [_make(os.path.join(root, f".tmp-{other}-{dead}-0a1b2c3d"), old),
                _make(os.path.join(root, f"{other}.trash-{dead}-0a1b2c3d"), old),
                _make(os.path.join(root, ".tmp-x8_k2qzw"), old, folder=False),   # no pid recorded
                # where torch inductor's TritonBundler restores an entry before renaming it into place
                _make(os.path.join(root, f"tmp.{uuid.uuid4()}"), old),
                # a shard of the older layout, and the autotuner's folders
                _make(os.path.join(root, "ef", f".tmp-{other}-{dead}-44444444"), old),
                _make(os.path.join(root, "autotune", "ab", f".tmp-{dead}-x9y8z7w6"), old, folder=False)]
        kept = [_make(os.path.join(root, f".tmp-{other}-{os.getpid()}-11111111"), old),
                _make(os.path.join(root, f".tmp-{other}-{live.pid}-22222222"), old),
                _make(os.path.join(root, f".tmp-{other}-{dead}-33333333"), 5),   # too fresh to judge
                _make(os.path.join(root, f"tmp.{uuid.uuid4()}"), 5),
                _make(os.path.join(root, "tmp.not-the-bundlers"), old)]
        # swept when the cache is first opened in a process, at most once per STALE_SECONDS across processes
        assert c.get("ab" * 32) is not None
        assert all(os.path.lexists(p) for p in gone), "already swept in this process"
        cache_safety._swept.clear()   # as in a new process, but the last sweep is recent
        c.get("ab" * 32)
        assert all(os.path.lexists(p) for p in gone)
        t = time.time() - old
        os.utime(os.path.join(root, ".swept"), (t, t))
        cache_safety._swept.clear()
        assert c.get("ab" * 32) is not None
        assert [p for p in gone if os.path.lexists(p)] == []
        assert [p for p in kept if not os.path.lexists(p)] == []
    finally:
        live.kill()
        live.wait()


# -- Triton's layout <dir>/<key>/ (tools such as torch inductor's TritonBundler copy that folder) ------------

def test_entries_are_in_tritons_layout(tmp_path):
    c = KernelCache(str(tmp_path))
    key = "a7" * 32
    c.put(key, {"k.ttir": "module {}", "k.obj": b"\0"}, {"name": "k"})
    assert sorted(os.listdir(os.path.join(str(tmp_path), key))) == ["k.obj", "k.ttir", MANIFEST]
    assert [n for n in os.listdir(str(tmp_path)) if not n.startswith(".")] == [key]


def _to_legacy(root: str, key: str) -> str:
    """Move an entry where tritium before Triton's layout kept it: ``<dir>/<key[:2]>/<key>/``."""
    old = os.path.join(root, key[:2], key)
    os.makedirs(os.path.dirname(old), exist_ok=True)
    os.rename(os.path.join(root, key), old)
    return old


def test_legacy_sharded_entries_are_moved_into_place(tmp_path):
    root = str(tmp_path)
    c = KernelCache(root)
    a, b = "ab" * 32, "ab" + "c" * 62   # one shard
    for i, key in enumerate((a, b)):
        c.put(key, {"k.obj": bytes([i]) * 10}, {"name": f"k{i}"})
        _to_legacy(root, key)
    e = c.get(a)
    assert e is not None and e.files["k.obj"] == b"\0" * 10 and e.metadata == {"name": "k0"}
    assert os.path.isdir(os.path.join(root, a)) and not os.path.lexists(os.path.join(root, "ab", a))
    assert os.path.isdir(os.path.join(root, "ab")), "the shard still holds another entry"
    assert c.get(b).files["k.obj"] == b"\1" * 10
    assert not os.path.lexists(os.path.join(root, "ab")), "an emptied shard is removed"


def test_legacy_corrupt_entry_is_dropped_not_moved(tmp_path):
    root = str(tmp_path)
    c = KernelCache(root)
    key = "5e" * 32
    c.put(key, {"k.llir": "x"}, {"name": "k"})
    old = _to_legacy(root, key)
    with open(os.path.join(old, "k.llir"), "w") as f:
        f.write("y")
    assert c.get(key) is None
    assert not [n for n in os.listdir(root) if not n.startswith(".")], "removed, shard and all"


def test_invalidate_drops_both_layouts(tmp_path):
    root = str(tmp_path)
    c = KernelCache(root)
    key = "6f" * 32
    c.put(key, {"k.llir": "x"}, {})
    _to_legacy(root, key)
    c.put(key, {"k.llir": "y"}, {})
    c.invalidate(key)
    assert c.get(key) is None and not [n for n in os.listdir(root) if not n.startswith(".")]


def test_names_that_are_not_keys_are_refused(tmp_path):
    # an entry's folder sits beside legacy shards, the autotuner's folder and a shared root's user folders
    c = KernelCache(str(tmp_path))
    for name in ("ab", "autotune", f"user-{2**32 - 1}", "a" * 15, "../" + "a" * 20, "a" * 129):
        with pytest.raises(ValueError):
            c.put(name, {"k.obj": b"\0"}, {})
        with pytest.raises(ValueError):
            c.get(name)
