"""The on-disk cache: whole entries appear atomically, corrupt entries are dropped, races are safe."""
from __future__ import annotations

import multiprocessing as mp
import os

from tritium.cache import KernelCache


def test_put_get_roundtrip(tmp_path):
    c = KernelCache(str(tmp_path))
    c.put("ab" * 32, {"k.ttir": "module {}", "k.obj": b"\x7fELF\x00"}, {"name": "k"})
    e = c.get("ab" * 32)
    assert e is not None and e.files["k.obj"] == b"\x7fELF\x00" and e.metadata == {"name": "k"}


def test_corrupt_entry_is_dropped(tmp_path):
    c = KernelCache(str(tmp_path))
    key = "cd" * 32
    c.put(key, {"k.llir": "define void @f() { ret void }"}, {"name": "k"})
    path = os.path.join(str(tmp_path), key[:2], key, "k.llir")
    with open(path, "w") as f:
        f.write("garbage")
    assert c.get(key) is None
    assert not os.path.exists(os.path.dirname(path)), "a corrupt entry must be removed"


def test_truncated_manifest_is_dropped(tmp_path):
    c = KernelCache(str(tmp_path))
    key = "ef" * 32
    c.put(key, {"k.llir": "x"}, {"name": "k"})
    manifest = os.path.join(str(tmp_path), key[:2], key, "manifest.json")
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
    assert not [n for n in os.listdir(os.path.join(str(tmp_path), "99")) if n.startswith(".tmp")]
