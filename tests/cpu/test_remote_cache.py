"""The remote kernel cache shared by a fleet, against a real redis-server: two "machines" (two local cache
folders, one Redis) share compiled kernels; corrupt, truncated or misplaced remote entries are ignored and the
kernel compiled again; a server that is down costs one warning and no error; concurrent publishers are safe;
entries record who produced them."""
from __future__ import annotations

import json
import multiprocessing as mp
import os
import shutil
import socket
import subprocess
import sys
import time
import warnings

import numpy as np
import pytest

import tritium
import tritium.language as tl
from tritium import cache_redis, cache_remote, cache_safety, knobs
from tritium.cache import CacheWarning, decode_manifest, encode_manifest
from tritium.cache_remote import BLOBS, RECORD, RemoteTier, decode_record
from tritium.compiler import ASTSource

redis = pytest.importorskip("redis", reason="the redis client is not installed (pip install redis)")
SPEC = "tritium.cache_redis:RedisRemoteCacheBackend"
SIG = {"x": "*fp32", "y": "*fp32", "o": "*fp32", "n": "i32", "B": "constexpr"}
X = np.arange(16, dtype=np.float32)
Y = np.full(16, 2.5, dtype=np.float32)
N = 10


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


COMPILES = []


def count_compiles(self, stages, options, language, capability):
    # the stage pipeline is built only when a kernel is really compiled, never for a cache hit
    COMPILES.append(1)


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@pytest.fixture(scope="module")
def redis_port():
    binary = shutil.which("redis-server")
    if binary is None:
        pytest.skip("no redis-server on PATH (Debian/Ubuntu: apt-get install redis-server)")
    for _ in range(3):
        port = _free_port()
        proc = subprocess.Popen([binary, "--port", str(port), "--bind", "127.0.0.1", "--save", "",
                                 "--appendonly", "no", "--daemonize", "no"],
                                stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        client = redis.Redis(host="127.0.0.1", port=port, socket_connect_timeout=1)
        deadline = time.monotonic() + 20
        while proc.poll() is None and time.monotonic() < deadline:
            try:
                client.ping()
                break
            except redis.exceptions.ConnectionError:
                time.sleep(0.05)
        else:
            proc.kill()
            proc.wait()
            continue   # the port was taken in the meantime, or the server is slow to start: another port
        try:
            yield port
        finally:
            client.close()
            proc.terminate()
            proc.wait(10)
        return
    pytest.skip("redis-server could not be started on a free loopback port")


@pytest.fixture
def fleet(tmp_path, redis_port):
    """Remote cache on, an empty Redis, fresh warning and back-off state, and a way to switch machines."""
    r = redis.Redis(host="127.0.0.1", port=redis_port)
    r.flushall()
    cache_safety._warned.clear()
    cache_remote._tiers.clear()
    COMPILES.clear()
    with knobs.scope():
        knobs.cache.remote_manager_class = SPEC
        knobs.redis.host = "127.0.0.1"
        knobs.redis.port = redis_port
        knobs.runtime.add_stages_inspection_hook = count_compiles

        def machine(name: str) -> None:
            knobs.cache.dir = str(tmp_path / name)

        yield r, machine
    cache_safety._warned.clear()
    cache_remote._tiers.clear()
    r.close()


def compile_(fn=add_kernel):
    return tritium.compile(ASTSource(fn, SIG, {"B": 16}))


def run(kernel) -> np.ndarray:
    out = np.zeros(16, dtype=np.float32)
    kernel[(1, )](X, Y, out, N, 16)
    return out


def expect(values: np.ndarray) -> np.ndarray:
    return np.where(np.arange(16) < N, values, 0).astype(np.float32)


def blob_keys(r) -> list[bytes]:
    return sorted(r.keys(f"tritium:{BLOBS}:*"))


def current_blobs(r, key: str) -> list[str]:
    """Redis keys of the blobs the entry's record names, in file-name order."""
    digests, _ = decode_manifest(decode_record(r.get(record_key(key)), key)[0], key)
    return [f"tritium:{BLOBS}:{digests[n]}" for n in sorted(digests)]


def record_key(key: str) -> str:
    return f"tritium:{key}:{RECORD}"


def remote_warnings(record) -> list[str]:
    return [str(w.message) for w in record
            if issubclass(w.category, CacheWarning) and "remote" in str(w.message)]


def test_machine_b_gets_the_kernel_from_redis_without_compiling(fleet):
    r, machine = fleet
    machine("a")
    k = compile_()
    assert len(COMPILES) == 1 and np.array_equal(run(k), expect(X + Y))
    assert r.exists(record_key(k.hash)) and blob_keys(r)
    machine("b")
    kb = compile_()
    assert len(COMPILES) == 1, "machine B compiled although the entry was in the remote cache"
    assert kb.hash == k.hash and np.array_equal(run(kb), expect(X + Y))
    # what came from Redis was verified and is now in B's local cache: Redis is not needed any more
    r.flushall()
    kb2 = compile_()
    assert len(COMPILES) == 1 and np.array_equal(run(kb2), expect(X + Y))


def test_corrupted_blob_is_ignored_and_recompiled(fleet):
    r, machine = fleet
    machine("a")
    k = compile_()
    files = current_blobs(r, k.hash)
    for index in range(len(files)):   # flip one bit in each file of the entry in turn
        name = current_blobs(r, k.hash)[index]   # the entry as last published (recompiles publish again)
        data = bytearray(r.get(name))
        data[len(data) // 2] ^= 0x01
        r.set(name, bytes(data))
        machine(f"b{index}")
        before = len(COMPILES)
        kb = compile_()
        assert len(COMPILES) == before + 1, f"a corrupted blob {name!r} was used"
        assert np.array_equal(run(kb), expect(X + Y))
    # each recompile published the entry again: a fresh machine now gets it without compiling
    machine("c")
    before = len(COMPILES)
    assert np.array_equal(run(compile_()), expect(X + Y)) and len(COMPILES) == before
    assert k.hash


@pytest.mark.parametrize("damage", ["truncated", "missing blob", "empty", "not json", "edited metadata"])
def test_bad_remote_record_is_ignored_and_recompiled(fleet, damage):
    r, machine = fleet
    machine("a")
    k = compile_()
    key = record_key(k.hash)
    raw = r.get(key)
    if damage == "truncated":
        r.set(key, raw[:len(raw) // 2])
    elif damage == "missing blob":
        r.delete(current_blobs(r, k.hash)[0])
    elif damage == "empty":
        r.set(key, b"")
    elif damage == "not json":
        r.set(key, b"\xff\xfe" * 100)
    else:   # a well-formed record whose inner manifest's metadata was edited: only its checksum tells
        body = json.loads(raw)
        inner = json.loads(body.pop("digest") and body["payload"])
        inner["metadata"]["name"] = "other"
        body["payload"] = cache_remote._canonical(inner).decode()
        body["digest"] = cache_remote._sha(cache_remote._canonical(body))
        r.set(key, cache_remote._canonical(body))
        assert r.get(key) != raw
    machine("b")
    with warnings.catch_warnings(record=True) as rec:
        warnings.simplefilter("always")
        kb = compile_()
    assert len(COMPILES) == 2 and np.array_equal(run(kb), expect(X + Y))
    assert not remote_warnings(rec), "a bad entry is a miss, not a server failure"
    assert r.get(key) != b"" and decode_record(r.get(key), k.hash)   # republished, valid again


def test_an_entry_copied_under_another_key_is_refused(fleet):
    r, machine = fleet
    machine("a")
    ka = compile_(add_kernel)
    ks = compile_(sub_kernel)
    r.set(record_key(ks.hash), r.get(record_key(ka.hash)))   # someone moves add's entry to sub's key
    machine("b")
    kb = compile_(sub_kernel)
    assert len(COMPILES) == 3 and np.array_equal(run(kb), expect(X - Y))


def test_a_down_server_warns_once_and_compiles_locally(fleet):
    _, machine = fleet
    knobs.redis.port = _free_port()   # nothing listens there
    machine("a")
    with warnings.catch_warnings(record=True) as rec:
        warnings.simplefilter("always")
        ka = compile_(add_kernel)
        ks = compile_(sub_kernel)
        again = compile_(add_kernel)   # from the local cache
    assert np.array_equal(run(ka), expect(X + Y)) and np.array_equal(run(ks), expect(X - Y))
    assert np.array_equal(run(again), expect(X + Y))
    assert len(COMPILES) == 2
    msgs = remote_warnings(rec)
    assert len(msgs) == 1, msgs
    assert "local cache only" in msgs[0] and "TRITON_REDIS_PORT" in msgs[0]
    assert f"redis://127.0.0.1:{knobs.redis.port}" in msgs[0]
    assert rec[[str(w.message) for w in rec].index(msgs[0])].filename == __file__, "points at the caller"


def test_a_backend_that_cannot_be_loaded_warns_once(fleet):
    _, machine = fleet
    knobs.cache.remote_manager_class = "tritium_no_such_module:Backend"
    machine("a")
    with warnings.catch_warnings(record=True) as rec:
        warnings.simplefilter("always")
        assert np.array_equal(run(compile_(add_kernel)), expect(X + Y))
        assert np.array_equal(run(compile_(sub_kernel)), expect(X - Y))
    msgs = remote_warnings(rec) + [str(w.message) for w in rec if "cannot be loaded" in str(w.message)]
    assert len(set(msgs)) == 1 and "tritium_no_such_module" in msgs[0]


def test_malformed_backend_knob_is_an_error(monkeypatch):
    monkeypatch.setenv("TRITON_REMOTE_CACHE_BACKEND", "not a class spec")
    with knobs.cache.scope():
        knobs.cache.reset()
        with pytest.raises(knobs.KnobError, match="module:Class"):
            _ = knobs.cache.remote_manager_class
    monkeypatch.setenv("TRITON_REMOTE_CACHE_BACKEND", SPEC)
    assert knobs.cache.remote_manager_class == SPEC


def test_entries_record_the_producer(fleet):
    r, machine = fleet
    machine("a")
    k = compile_()
    _, who = decode_record(r.get(record_key(k.hash)), k.hash)
    from tritium.plugins import registry
    reg = registry()
    backend = k.metadata.target.backend
    info = reg.backends[backend][1]
    assert who["tritium"] == tritium.__version__
    assert who["backend"]["name"] == backend and who["backend"]["version"] == info.version
    assert who["backend"]["distribution"] == info.distribution
    assert set(who["plugins"]) == set(reg.order)
    for name in reg.order:
        assert who["plugins"][name] == f"{reg.infos[name].distribution} {reg.infos[name].version}"


def _publisher(port: int, key: str, i: int, rounds: int) -> None:
    with knobs.scope():
        knobs.redis.host, knobs.redis.port = "127.0.0.1", port
        tier = RemoteTier(SPEC)
        for _ in range(rounds):
            files = {"k.obj": bytes([i]) * 5000, "k.llir": f"v{i}".encode()}
            meta = {"writer": i, "target": ["host", "x", 1]}
            digests = {n: cache_remote._sha(d) for n, d in files.items()}
            assert tier.publish(key, files, encode_manifest(key, digests, meta), meta)
            got = tier.fetch(key)
            assert got is not None
            files_got, meta_got = got
            # always one publisher's complete set, never a mix and never a record without its blobs
            w = meta_got["writer"]
            assert files_got == {"k.obj": bytes([w]) * 5000, "k.llir": f"v{w}".encode()}


def test_concurrent_publishers_of_one_key(fleet, redis_port):
    key = "7e" * 32
    ctx = mp.get_context("spawn")
    procs = [ctx.Process(target=_publisher, args=(redis_port, key, i, 25)) for i in range(3)]
    for p in procs:
        p.start()
    _publisher(redis_port, key, 9, 25)   # this process reads and writes alongside them
    for p in procs:
        p.join(120)
        assert p.exitcode == 0


class OrderCheckingRedis(cache_redis.RedisRemoteCacheBackend):
    """The real Redis backend, checking at every record write that the blobs it names are already there."""
    records = 0

    def put(self, filename: str, data: bytes) -> None:
        if filename == RECORD:
            digests, _ = decode_manifest(decode_record(data, self.key)[0], self.key)
            missing = [d for d in digests.values() if not self._redis.exists(f"tritium:{BLOBS}:{d}")]
            assert not missing, f"the record of {self.key} was written before its blobs {missing}"
            OrderCheckingRedis.records += 1
        super().put(filename, data)


def test_blobs_are_written_before_the_record(fleet):
    r, machine = fleet
    knobs.cache.remote_manager_class = OrderCheckingRedis   # a class, set from Python
    OrderCheckingRedis.records = 0
    machine("a")
    k = compile_()
    assert OrderCheckingRedis.records == 1 and r.exists(record_key(k.hash))
    machine("b")
    assert np.array_equal(run(compile_()), expect(X + Y)) and len(COMPILES) == 1


# -- autotuning results shared through the remote cache (TRITON_CACHE_AUTOTUNING) -----------------------------

TUNE_CONFIGS = [tritium.Config({"B": 16}), tritium.Config({"B": 32})]


def tuner():
    """A new autotuner over add_kernel (a fresh process's view: nothing tuned in memory)."""
    return tritium.autotune(TUNE_CONFIGS, key=["n"], cache_results=True, warmup=1, rep=3)(add_kernel)


def run_tuned(t) -> np.ndarray:
    out = np.zeros(16, dtype=np.float32)
    t[lambda meta: (tritium.cdiv(N, meta["B"]), )](X, Y, out, N)
    return out


def autotune_doc_keys(r) -> list[bytes]:
    return r.keys("tritium:autotune:*")


def test_machine_b_reuses_the_fleets_autotuning(fleet):
    r, machine = fleet
    machine("a")
    ta = tuner()
    assert np.array_equal(run_tuned(ta), expect(X + Y)) and ta.bench_time > 0
    assert len(autotune_doc_keys(r)) == 1
    machine("b")
    tb = tuner()
    assert np.array_equal(run_tuned(tb), expect(X + Y))
    assert tb.bench_time == 0.0, "machine B timed the configs again"
    assert tb.configs_timings == ta.configs_timings and tb.best_config == ta.best_config


def test_remote_autotuning_naming_a_foreign_config_is_refused(fleet):
    r, machine = fleet
    machine("a")
    ta = tuner()
    run_tuned(ta)
    (name, ) = autotune_doc_keys(r)
    body = json.loads(r.get(name))
    doc = json.loads(body.pop("digest") and body["payload"])
    for pair in doc["configs_timings"]:
        if pair[0]["kwargs"]["B"] == 32:
            pair[0]["kwargs"]["B"] = 4096   # not a config of this kernel: would read far past the arrays
    body["payload"] = json.dumps(doc)
    body["digest"] = cache_remote._sha(cache_remote._canonical(body))
    r.set(name, cache_remote._canonical(body))
    machine("b")
    tb = tuner()
    assert np.array_equal(run_tuned(tb), expect(X + Y))
    assert tb.bench_time > 0, "a result naming a config the kernel does not have was used"
    assert {c.kwargs["B"] for c in tb.configs_timings} == {16, 32}


def test_without_the_redis_client_the_backend_warns_once(fleet, monkeypatch):
    _, machine = fleet
    monkeypatch.setitem(sys.modules, "redis", None)   # what an environment without the client looks like
    monkeypatch.delitem(sys.modules, "tritium.cache_redis")
    machine("a")
    with warnings.catch_warnings(record=True) as rec:
        warnings.simplefilter("always")
        assert np.array_equal(run(compile_(add_kernel)), expect(X + Y))
        assert np.array_equal(run(compile_(sub_kernel)), expect(X - Y))
    msgs = [str(w.message) for w in rec if issubclass(w.category, CacheWarning)]
    assert len(msgs) == 1 and "pip install redis" in msgs[0] and "cannot be loaded" in msgs[0], msgs


def test_a_machine_whose_local_cache_cannot_be_written_still_uses_the_remote_one(fleet, tmp_path):
    _, machine = fleet
    machine("a")
    compile_()
    (tmp_path / "a-file").write_text("not a folder")
    knobs.cache.dir = str(tmp_path / "a-file" / "cache")
    with warnings.catch_warnings(record=True) as rec:
        warnings.simplefilter("always")
        kb = compile_()
    assert len(COMPILES) == 1 and np.array_equal(run(kb), expect(X + Y))
    msgs = [str(w.message) for w in rec if issubclass(w.category, CacheWarning)]
    assert len(msgs) == 1 and "cannot write to the kernel cache" in msgs[0], msgs


MACHINE = '''
import json, sys
import numpy as np
import tritium
import tritium.language as tl
from tritium.compiler import ASTSource

compiles = []


def count(self, stages, options, language, capability):
    compiles.append(1)


@tritium.jit
def mul_kernel(x, o, n, B: tl.constexpr):
    i = tl.arange(0, B)
    tl.store(o + i, tl.load(x + i, mask=i < n) * 3.0, mask=i < n)


tritium.knobs.runtime.add_stages_inspection_hook = count
k = tritium.compile(ASTSource(mul_kernel, {"x": "*fp32", "o": "*fp32", "n": "i32", "B": "constexpr"}, {"B": 16}))
x = np.arange(16, dtype=np.float32)
o = np.zeros(16, dtype=np.float32)
k[(1, )](x, o, 16, 16)
print(json.dumps({"compiles": len(compiles), "right": bool(np.array_equal(o, x * 3))}))
'''


def test_two_processes_configured_by_environment_variables(fleet, tmp_path, redis_port):
    """Real separate processes, configured as a fleet would be: through the environment only."""
    script = tmp_path / "machine.py"
    script.write_text(MACHINE)
    results = []
    for name in ("a", "b"):
        env = {k: v for k, v in os.environ.items() if not k.startswith(("TRITON_", "TRITIUM_"))}
        env.update(TRITON_REMOTE_CACHE_BACKEND=SPEC, TRITON_REDIS_HOST="127.0.0.1",
                   TRITON_REDIS_PORT=str(redis_port), TRITON_CACHE_DIR=str(tmp_path / name),
                   TRITIUM_HOME=str(tmp_path / "home"))
        res = subprocess.run([sys.executable, str(script)], env=env, capture_output=True, text=True, timeout=300)
        assert res.returncode == 0, res.stderr
        results.append(json.loads(res.stdout.strip().splitlines()[-1]))
    assert results == [{"compiles": 1, "right": True}, {"compiles": 0, "right": True}]


def test_the_backend_is_found_under_tritons_module_too(fleet):
    """Triton's settings name triton.runtime.cache:RedisRemoteCacheBackend, which is tritium.cache here."""
    r, machine = fleet
    knobs.cache.remote_manager_class = "tritium.cache:RedisRemoteCacheBackend"
    machine("a")
    compile_()
    machine("b")
    assert np.array_equal(run(compile_()), expect(X + Y)) and len(COMPILES) == 1
    from tritium import cache
    assert cache.RemoteCacheBackend is cache_remote.RemoteCacheBackend
