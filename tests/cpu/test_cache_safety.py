"""The kernel cache cannot be poisoned and degrades gracefully, with real kernels: every bit flip of an entry
is caught (the kernel is compiled again and gives the right answer), overridden kernels never outlive their
override files, entries that another user wrote or could have written are not loaded, a read-only or full
cache costs one warning and not the launch, and concurrent processes share one cache."""
from __future__ import annotations

import contextlib
import errno
import json
import multiprocessing as mp
import os
import shutil
import subprocess
import warnings

import numpy as np
import pytest

import tritium
import tritium.language as tl
from tritium import cache_safety, knobs
from tritium.cache import MANIFEST, CacheWarning, KernelCache
from tritium.compiler import ASTSource

SIG = {"x": "*fp32", "y": "*fp32", "o": "*fp32", "n": "i32", "B": "constexpr"}
X = np.arange(16, dtype=np.float32)
Y = np.full(16, 2.5, dtype=np.float32)
N = 10   # lanes N.. of the block must stay untouched: a wrong `n` shows in the result


@tritium.jit
def add_kernel(x, y, o, n, B: tl.constexpr):
    i = tl.program_id(0) * B + tl.arange(0, B)
    m = i < n
    tl.store(o + i, tl.load(x + i, mask=m) + tl.load(y + i, mask=m), mask=m)


@tritium.jit
def sub_kernel(x, y, o, n, B: tl.constexpr):
    i = tl.program_id(0) * B + tl.arange(0, B)
    m = i < n
    tl.store(o + i, tl.load(x + i, mask=m) - tl.load(y + i, mask=m), mask=m)


def compile_(fn=add_kernel):
    return tritium.compile(ASTSource(fn, SIG, {"B": 16}))


def run(kernel) -> np.ndarray:
    out = np.zeros(16, dtype=np.float32)
    kernel[(1, )](X, Y, out, N, 16)
    return out


def expect(values: np.ndarray) -> np.ndarray:
    return np.where(np.arange(16) < N, values, 0).astype(np.float32)


def entry_dir(root, key, legacy: bool = False) -> str:
    """Where the entry of ``key`` is (Triton's layout), or was in the sharded layout of older tritium."""
    return os.path.join(str(root), key[:2], key) if legacy else os.path.join(str(root), key)


@pytest.fixture
def cache(tmp_path):
    """A private cache folder, fresh warning and sweep memories, knobs restored afterwards."""
    cache_safety._warned.clear()
    cache_safety._swept.clear()
    root = tmp_path / "cache"
    with knobs.scope():
        knobs.cache.dir = str(root)
        knobs.cache.trust_shared = False
        yield root
    cache_safety._warned.clear()


def cache_warnings(record) -> list[str]:
    return [str(w.message) for w in record if issubclass(w.category, CacheWarning)]


# -- 1. integrity: the whole manifest is checksummed -------------------------------------------------------

STAGE_STEP = 67


def test_every_bit_flip_of_a_real_entry_is_detected(cache, monkeypatch):
    key = compile_().hash
    d = entry_dir(cache, key)
    pristine = {n: open(os.path.join(d, n), "rb").read() for n in os.listdir(d)}
    dropped = []
    # every corrupt read must be dropped; keep the folder in place so that 10^4 flips stay fast (a real
    # drop is checked by the tests that run the kernel)
    monkeypatch.setattr(KernelCache, "_drop", staticmethod(lambda path: dropped.append(path)))
    c = KernelCache()
    undetected = []
    for name, data in pristine.items():
        # every bit of the manifest; of each stage file, one bit in every ~8 bytes (all bit positions in turn)
        flips = range(len(data) * 8) if name == MANIFEST else range(0, len(data) * 8, STAGE_STEP)
        path = os.path.join(d, name)
        # the flipped byte is written in place and put back after the read: the file the cache reads is the
        # same as a rewritten one (these bytes, this inode and mode), but ext4 flushes a file truncated and
        # rewritten to disk when it is closed, and 10^4 such rewrites were half of this test's time, waiting
        with open(path, "r+b") as f:
            for bit in flips:
                at = bit // 8
                f.seek(at)
                f.write(bytes([data[at] ^ (1 << (bit % 8))]))
                f.flush()
                if c.get(key) is not None:
                    undetected.append((name, bit))
                f.seek(at)
                f.write(data[at:at + 1])
                f.flush()
        with open(path, "rb") as f:
            assert f.read() == data
    assert not undetected, f"{len(undetected)} bit flips were loaded as valid, e.g. {undetected[:5]}"
    n_flips = len(pristine[MANIFEST]) * 8 + sum(len(range(0, len(v) * 8, STAGE_STEP))
                                                for n, v in pristine.items() if n != MANIFEST)
    assert len(dropped) == n_flips
    e = c.get(key)
    assert e is not None and e.files == pristine_files(pristine)


def pristine_files(pristine: dict) -> dict:
    return {n: v for n, v in pristine.items() if n != MANIFEST}


def test_bit_flips_then_runs_give_the_right_answer(cache):
    """A dense sample of flips over the manifest (mostly metadata) and each stage file, each followed by a
    real compile-and-launch: always the right answer, and the entry is replaced by a valid one."""
    k = compile_()
    np.testing.assert_array_equal(run(k), expect(X + Y))
    d = entry_dir(cache, k.hash)
    names = sorted(os.listdir(d))
    for name in names:
        size = os.path.getsize(os.path.join(d, name))
        # the manifest is where the undetected flips were: sample it densely
        step = max(1, size * 8 // (96 if name == MANIFEST else 12))
        for bit in range(3, size * 8, step):
            path = os.path.join(d, name)
            data = bytearray(open(path, "rb").read())
            bit %= len(data) * 8   # a recompiled manifest may be a few bytes shorter (timings)
            data[bit // 8] ^= 1 << (bit % 8)
            with open(path, "wb") as f:
                f.write(data)
            k2 = compile_()
            np.testing.assert_array_equal(run(k2), expect(X + Y), err_msg=f"bit {bit} of {name}")
            assert KernelCache().get(k.hash) is not None, f"no valid entry after bit {bit} of {name}"


def test_edited_metadata_is_not_trusted(cache):
    k = compile_()
    manifest = os.path.join(entry_dir(cache, k.hash), MANIFEST)
    body = json.loads(open(manifest, "rb").read())
    assert body["metadata"]["arg_types"] == ["ptr", "ptr", "ptr", "i32"]
    body["metadata"]["arg_types"][3] = "float"   # the digest is left as it was
    with open(manifest, "w") as f:
        json.dump(body, f)
    np.testing.assert_array_equal(run(compile_()), expect(X + Y))
    fixed = json.loads(open(manifest, "rb").read())
    assert fixed["metadata"]["arg_types"] == ["ptr", "ptr", "ptr", "i32"], "the entry was not replaced"


def test_edited_symbol_is_not_trusted(cache):
    """Metadata naming another loaded kernel's code must not run that code."""
    k, other = compile_(), compile_(sub_kernel)
    np.testing.assert_array_equal(run(other), expect(X - Y))
    manifest = os.path.join(entry_dir(cache, k.hash), MANIFEST)
    body = json.loads(open(manifest, "rb").read())
    body["metadata"]["symbol"] = other.metadata_dict["symbol"]
    with open(manifest, "w") as f:
        json.dump(body, f)
    np.testing.assert_array_equal(run(compile_()), expect(X + Y))


# -- 2. overrides never enter the cache under the normal key --------------------------------------------

def test_override_workflow_then_unset_gives_the_original(cache, tmp_path):
    dump, override = tmp_path / "dump", tmp_path / "override"
    # step 1: compile with dumps on
    with knobs.compilation.scope(), knobs.cache.scope():
        knobs.compilation.always_compile = True
        knobs.compilation.dump_ir = True
        knobs.cache.dump_dir = str(dump)
        np.testing.assert_array_equal(run(compile_()), expect(X + Y))
    (kernel_dir, ) = list(dump.iterdir())
    # steps 2 and 3: copy the stage to override and edit it (subtract instead of add)
    target = override / kernel_dir.name
    target.mkdir(parents=True)
    ttir = (kernel_dir / "add_kernel.ttir").read_text()
    assert "arith.addf" in ttir
    (target / "add_kernel.ttir").write_text(ttir.replace("arith.addf", "arith.subf"))
    # step 4: run with the override on (with and without always_compile, as Triton's docs and users do)
    for always in (True, False, False):
        with knobs.compilation.scope(), knobs.cache.scope():
            knobs.compilation.override = True
            knobs.compilation.always_compile = always
            knobs.cache.override_dir = str(override)
            np.testing.assert_array_equal(run(compile_()), expect(X - Y))
    # an edited override file takes effect without TRITON_ALWAYS_COMPILE
    (target / "add_kernel.ttir").write_text(ttir.replace("arith.addf", "arith.mulf"))
    with knobs.compilation.scope(), knobs.cache.scope():
        knobs.compilation.override = True
        knobs.cache.override_dir = str(override)
        np.testing.assert_array_equal(run(compile_()), expect(X * Y))
    # the override variables unset: the original kernel, from the cache
    np.testing.assert_array_equal(run(compile_()), expect(X + Y))
    # override on but no override files for this kernel: the original too
    shutil.rmtree(target)
    with knobs.compilation.scope(), knobs.cache.scope():
        knobs.compilation.override = True
        knobs.cache.override_dir = str(override)
        np.testing.assert_array_equal(run(compile_()), expect(X + Y))


# -- 3. entries others wrote or could have written are not loaded -----------------------------------------

def plant(tmp_path, where: str, key: str, uid: int, legacy: bool = False) -> str:
    """A complete, well-formed entry under ``where`` for ``key`` whose code subtracts, owned by ``uid`` (its
    shard folder too, in the ``legacy`` layout)."""
    with knobs.cache.scope():
        knobs.cache.dir = str(tmp_path / "scratch")
        sub = compile_(sub_kernel)
        entry = KernelCache().get(sub.hash)
        assert entry is not None
        KernelCache(str(tmp_path / "staging")).put(key, entry.files, entry.metadata)
    src = entry_dir(tmp_path / "staging", key)
    dst = entry_dir(where, key, legacy)
    os.makedirs(os.path.dirname(dst), exist_ok=True)
    shutil.move(src, dst)
    for d, _, files in os.walk(os.path.dirname(dst) if legacy else dst):
        os.chown(d, uid, uid)
        for f in files:
            os.chown(os.path.join(d, f), uid, uid)
    return dst


def add_key(tmp_path) -> str:
    with knobs.cache.scope():
        knobs.cache.dir = str(tmp_path / "keys")
        return compile_().hash


needs_root = pytest.mark.skipif(not hasattr(os, "geteuid") or os.geteuid() != 0,
                                reason="making files of another user needs root")


@needs_root
def test_shared_sticky_cache_with_a_planted_entry(tmp_path):
    key = add_key(tmp_path)
    shared = tmp_path / "shared"
    shared.mkdir()
    os.chmod(shared, 0o1777)
    planted = plant(tmp_path, str(shared), key, 65534)
    cache_safety._warned.clear()
    with knobs.scope(), warnings.catch_warnings(record=True) as rec:
        warnings.simplefilter("always")
        knobs.cache.dir = str(shared)
        knobs.cache.trust_shared = False
        for _ in range(3):
            np.testing.assert_array_equal(run(compile_()), expect(X + Y))   # the planted code did not run
    msgs = cache_warnings(rec)
    assert len(msgs) == 1 and str(shared) in msgs[0] and "others can write to it (mode 1777)" in msgs[0], msgs
    assert "TRITIUM_CACHE_TRUST_SHARED" in msgs[0]
    mine = shared / f"user-{os.geteuid()}"
    assert (os.stat(mine).st_mode & 0o7777) == 0o700
    assert os.path.isdir(entry_dir(mine, key)), "the kernel is cached in the private per-user folder"
    assert os.stat(planted).st_uid == 65534, "another user's files are left alone"
    # the same planted entry is loaded when the shared cache is declared trusted: it is a real entry
    cache_safety._warned.clear()
    with knobs.scope():
        knobs.cache.dir = str(shared)
        knobs.cache.trust_shared = True
        np.testing.assert_array_equal(run(compile_()), expect(X - Y))


@needs_root
def test_entry_of_another_user_in_a_private_cache(cache, tmp_path):
    key = add_key(tmp_path)
    os.makedirs(cache, mode=0o700)
    planted = plant(tmp_path, str(cache), key, 65534)   # our cache folder, their entry
    with warnings.catch_warnings(record=True) as rec:
        warnings.simplefilter("always")
        np.testing.assert_array_equal(run(compile_()), expect(X + Y))
        np.testing.assert_array_equal(run(compile_()), expect(X + Y))
    msgs = cache_warnings(rec)
    assert len(msgs) == 1 and planted in msgs[0] and "owned by uid 65534" in msgs[0], msgs
    assert os.stat(planted).st_uid == os.geteuid(), "the entry was replaced by ours"


@pytest.mark.parametrize("what", ["file", "entry", "shard"])
def test_entry_others_can_write_is_not_loaded(cache, tmp_path, what):
    key = add_key(tmp_path)
    os.makedirs(cache, mode=0o700)
    # shards exist in the layout of older tritium only: such an entry is not moved into Triton's layout
    planted = plant(tmp_path, str(cache), key, os.geteuid(), legacy=what == "shard")
    victim = {"file": os.path.join(planted, "sub_kernel.obj"), "entry": planted,
              "shard": os.path.dirname(planted)}[what]
    os.chmod(victim, 0o666 if what == "file" else 0o777)
    with warnings.catch_warnings(record=True) as rec:
        warnings.simplefilter("always")
        np.testing.assert_array_equal(run(compile_()), expect(X + Y))
    msgs = cache_warnings(rec)
    assert len(msgs) == 1 and victim in msgs[0] and "can write to it" in msgs[0], msgs
    # replaced by a private entry in Triton's layout, loaded from then on
    if what == "shard":
        assert not os.path.lexists(victim), "the legacy entry and its emptied shard are removed"
    assert KernelCache().get(key) is not None
    assert os.stat(entry_dir(cache, key)).st_mode & 0o7777 == 0o700


def test_our_cache_made_under_umask_002_is_tightened_and_used(cache, tmp_path):
    """An older tritium made the cache folder 0775 under umask 002: it stays usable, made private."""
    os.makedirs(cache)
    os.chmod(cache, 0o775)
    with warnings.catch_warnings(record=True) as rec:
        warnings.simplefilter("always")
        k = compile_()
        np.testing.assert_array_equal(run(k), expect(X + Y))
    msgs = cache_warnings(rec)
    assert len(msgs) == 1 and str(cache) in msgs[0] and "mode 775" in msgs[0], msgs
    assert os.stat(cache).st_mode & 0o7777 == 0o755
    assert KernelCache().get(k.hash) is not None


@needs_root
def test_sticky_cache_owned_by_another_user_is_not_used(cache, tmp_path):
    os.makedirs(cache)
    os.chmod(cache, 0o1777)
    os.chown(cache, 65534, 65534)   # its owner may remove or rename anything inside, our folder included
    with warnings.catch_warnings(record=True) as rec:
        warnings.simplefilter("always")
        np.testing.assert_array_equal(run(compile_()), expect(X + Y))
    msgs = cache_warnings(rec)
    assert len(msgs) == 1 and str(cache) in msgs[0] and "in memory" in msgs[0], msgs
    assert os.listdir(cache) == []


@needs_root
def test_cache_owned_by_another_user_is_not_used(cache, tmp_path):
    key = add_key(tmp_path)
    os.makedirs(cache, mode=0o755)
    plant(tmp_path, str(cache), key, 65534)
    os.chown(cache, 65534, 65534)
    with warnings.catch_warnings(record=True) as rec:
        warnings.simplefilter("always")
        np.testing.assert_array_equal(run(compile_()), expect(X + Y))
        np.testing.assert_array_equal(run(compile_()), expect(X + Y))
    msgs = cache_warnings(rec)
    assert len(msgs) == 1 and str(cache) in msgs[0], msgs
    assert "uid 65534" in msgs[0] and "in memory" in msgs[0], msgs


def test_cache_under_a_folder_others_can_replace(cache, tmp_path):
    open_dir = tmp_path / "open"
    open_dir.mkdir()
    os.chmod(open_dir, 0o777)   # world-writable without the sticky bit: anyone can rename what is inside
    with knobs.cache.scope(), warnings.catch_warnings(record=True) as rec:
        warnings.simplefilter("always")
        knobs.cache.dir = str(open_dir / "not" / "yet" / "cache")
        np.testing.assert_array_equal(run(compile_()), expect(X + Y))
    msgs = cache_warnings(rec)
    assert len(msgs) == 1 and str(open_dir) in msgs[0] and "in memory" in msgs[0], msgs
    assert os.listdir(open_dir) == []


def test_new_entries_are_private_under_umask_000(cache):
    old = os.umask(0)
    try:
        compile_()
    finally:
        os.umask(old)
    modes = {}
    for d, _, files in os.walk(cache):
        modes[d] = os.stat(d).st_mode & 0o7777
        for f in files:
            modes[os.path.join(d, f)] = os.stat(os.path.join(d, f)).st_mode & 0o7777
    assert len(modes) >= 7
    bad = {p: oct(m) for p, m in modes.items() if m not in (0o700, 0o600)}
    assert not bad, bad


# -- 4. a cache that cannot be written costs one warning, not the launch ----------------------------------

def test_cache_path_under_a_regular_file(cache, tmp_path):
    blocker = tmp_path / "file"
    blocker.write_text("not a folder")
    with knobs.cache.scope(), warnings.catch_warnings(record=True) as rec:
        warnings.simplefilter("always")
        knobs.cache.dir = str(blocker / "cache")
        for _ in range(2):
            np.testing.assert_array_equal(run(compile_()), expect(X + Y))
    msgs = cache_warnings(rec)
    assert len(msgs) == 1 and str(blocker / "cache") in msgs[0] and "ENOTDIR" in msgs[0], msgs


@pytest.mark.parametrize("code", [errno.ENOSPC, errno.EROFS, errno.EACCES])
def test_write_errors_degrade_to_memory(cache, monkeypatch, code):
    """The one simulated OS error: os.write/os.mkdir fail with ``code`` for paths inside the cache only."""
    root = str(cache)
    real_write, real_mkdir = os.write, os.mkdir

    def inside(path: str) -> bool:
        return os.path.abspath(path).startswith(root + os.sep)

    def write(fd, data):
        try:
            target = os.readlink(f"/proc/self/fd/{fd}")
        except OSError:
            target = ""
        if inside(target):
            raise OSError(code, os.strerror(code))
        return real_write(fd, data)

    def mkdir(path, *args, **kwargs):
        if code != errno.ENOSPC and inside(os.fspath(path)):
            raise OSError(code, os.strerror(code), os.fspath(path))
        return real_mkdir(path, *args, **kwargs)

    if not os.path.isdir("/proc/self/fd"):
        pytest.skip("needs /proc/self/fd to tell the cache's files from others")
    os.makedirs(cache, mode=0o700)
    monkeypatch.setattr(os, "write", write)
    monkeypatch.setattr(os, "mkdir", mkdir)
    with warnings.catch_warnings(record=True) as rec:
        warnings.simplefilter("always")
        for _ in range(2):
            np.testing.assert_array_equal(run(compile_()), expect(X + Y))
    monkeypatch.undo()
    msgs = cache_warnings(rec)
    assert len(msgs) == 1 and root in msgs[0] and errno.errorcode[code] in msgs[0], msgs
    leftovers = [os.path.join(d, n) for d, ds, fs in os.walk(cache) for n in ds + fs if n.startswith(".tmp")]
    assert not leftovers


@contextlib.contextmanager
def tmpfs(path, options: str):
    os.makedirs(path, exist_ok=True)
    r = subprocess.run(["mount", "-t", "tmpfs", "-o", options, "tmpfs", str(path)], capture_output=True)
    if r.returncode != 0:
        pytest.skip(f"cannot mount a tmpfs here: {r.stderr.decode().strip()}")
    try:
        yield path
    finally:
        subprocess.run(["umount", "-l", str(path)], check=False)


@needs_root
@pytest.mark.parametrize("options,code", [("size=4k,mode=0700", "ENOSPC"), ("ro,mode=0700", "EROFS")])
def test_full_or_read_only_filesystem(cache, tmp_path, options, code):
    with tmpfs(tmp_path / "mnt", options) as mnt, knobs.cache.scope(), \
            warnings.catch_warnings(record=True) as rec:
        warnings.simplefilter("always")
        knobs.cache.dir = str(mnt / "cache") if code == "EROFS" else str(mnt)
        for _ in range(2):
            np.testing.assert_array_equal(run(compile_()), expect(X + Y))
        msgs = cache_warnings(rec)
        assert len(msgs) == 1 and str(mnt) in msgs[0] and code in msgs[0], msgs
        assert not [n for d, ds, fs in os.walk(mnt) for n in ds + fs if n.startswith(".tmp")]


def test_read_only_cache_folder(cache):
    if hasattr(os, "geteuid") and os.geteuid() == 0:
        pytest.skip("root writes through mode bits (the tmpfs test covers read-only as root)")
    compile_()
    for d, _, _ in os.walk(cache):
        os.chmod(d, 0o500)
    try:
        with knobs.compilation.scope(), warnings.catch_warnings(record=True) as rec:
            warnings.simplefilter("always")
            knobs.compilation.always_compile = True
            np.testing.assert_array_equal(run(compile_()), expect(X + Y))
        msgs = cache_warnings(rec)
        assert len(msgs) == 1 and str(cache) in msgs[0] and "EACCES" in msgs[0], msgs
    finally:
        for d, _, _ in os.walk(cache):
            os.chmod(d, 0o700)


# -- 6. concurrent processes share one cache ---------------------------------------------------------------

def _compile_rounds(root: str, rounds: int, barrier, results) -> None:
    from tritium import knobs
    for r in range(rounds):
        knobs.cache.dir = os.path.join(root, str(r))
        barrier.wait(120)
        try:
            ok = bool(np.array_equal(run(compile_()), expect(X + Y)))
        except Exception as exc:   # reported, not raised: the parent counts right answers
            ok = f"{type(exc).__name__}: {exc}"
        results.put((r, ok))


def test_concurrent_processes_compile_one_kernel(tmp_path):
    n_proc, rounds = 8, 5
    ctx = mp.get_context("spawn")
    barrier = ctx.Barrier(n_proc)
    results = ctx.Queue()
    procs = [ctx.Process(target=_compile_rounds, args=(str(tmp_path), rounds, barrier, results))
             for _ in range(n_proc)]
    for p in procs:
        p.start()
    got = [results.get(timeout=600) for _ in range(n_proc * rounds)]
    for p in procs:
        p.join(60)
        assert p.exitcode == 0
    wrong = [g for g in got if g[1] is not True]
    assert not wrong and len(got) == 40, wrong
    for r in range(rounds):
        root = tmp_path / str(r)
        entries = [os.path.join(d, n) for d, ds, _ in os.walk(root) for n in ds
                   if len(n) == 64 and not n.startswith(".")]
        assert len(entries) == 1, entries
        leftovers = [n for d, ds, fs in os.walk(root) for n in ds + fs if ".tmp-" in n or ".trash-" in n]
        assert not leftovers
        key = os.path.basename(entries[0])
        with knobs.cache.scope():
            assert KernelCache(str(root)).get(key) is not None


def test_intact_entry_with_unusable_metadata_is_recompiled(cache):
    """A checksum-valid entry whose metadata this version cannot use (another writer's format) is replaced."""
    k = compile_()
    entry = KernelCache().get(k.hash)
    metadata = dict(entry.metadata)
    del metadata["target"]
    KernelCache().invalidate(k.hash)
    KernelCache().put(k.hash, entry.files, metadata)
    np.testing.assert_array_equal(run(compile_()), expect(X + Y))
    assert "target" in KernelCache().get(k.hash).metadata
