"""CPU kernels are called through the native builtin of tritium.llvmir.native_call (TRITIUM_CPU_NATIVE_LAUNCH),
with the same results and the same argument errors as through ctypes."""
from __future__ import annotations

import threading

import numpy as np
import pytest

import tritium as triton
import tritium.language as tl


@triton.jit
def _axpy(x_ptr, y_ptr, out_ptr, a, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    tl.store(out_ptr + offs, a * tl.load(x_ptr + offs, mask=mask) + tl.load(y_ptr + offs, mask=mask), mask=mask)


@triton.jit
def _grid_ids(out_ptr):
    pid = tl.program_id(0) + 10 * tl.program_id(1) + 100 * tl.program_id(2)
    tl.store(out_ptr + pid, pid + 1)


def _launchers(fn):
    return [k.launcher for state in fn.device_caches.values() for k in state.kernels.values()]


@pytest.fixture(params=["native", "ctypes"])
def path(request):
    yield request.param


def _use(fn, path: str) -> None:
    """Launch the kernel's cached launchers through ``path`` from now on."""
    from tritium_cpu.launcher import native_launch
    assert native_launch() is not None, "the native launch call cannot be built"
    for launcher in _launchers(fn):
        launcher.native = native_launch() if path == "native" else None
        launcher.until_native = 0


@pytest.fixture(autouse=True)
def _restore():
    yield
    from tritium_cpu.launcher import native_launch
    for fn in (_axpy, _grid_ids):
        for launcher in _launchers(fn):
            launcher.native = native_launch()


def test_results_through_either_call(path):
    n = 1000
    x = np.arange(n, dtype=np.float32)
    y = np.full(n, 0.5, dtype=np.float32)
    out = np.zeros(n, dtype=np.float32)
    _axpy[(triton.cdiv(n, 128), )](x, y, out, 2.0, n, BLOCK=128)   # compiles; the launchers exist from here
    _use(_axpy, path)
    for a in (3.0, -1.5, 0.25):
        out[:] = 0
        _axpy[(triton.cdiv(n, 128), )](x, y, out, a, n, BLOCK=128)
        np.testing.assert_array_equal(out, np.float32(a) * x + y)
    ids = np.zeros(1000, dtype=np.int32)
    _grid_ids[(1, 1, 1)](ids)
    _use(_grid_ids, path)
    _grid_ids[(3, 4, 5)](ids)
    expect = np.zeros(1000, dtype=np.int32)
    for i in range(3):
        for j in range(4):
            for k in range(5):
                expect[i + 10 * j + 100 * k] = i + 10 * j + 100 * k + 1
    np.testing.assert_array_equal(ids, expect)


def test_argument_errors_through_either_call(path):
    x = np.zeros(16, dtype=np.float32)
    _axpy[(1, )](x, x, x, 1.0, 16, BLOCK=16)
    _use(_axpy, path)
    launcher = _launchers(_axpy)[0]
    with pytest.raises(TypeError, match="argument `a` of kernel `_axpy` must be a number of type float"):
        launcher((1, 1, 1), (x.ctypes.data, x.ctypes.data, x.ctypes.data, "two", 16))
    with pytest.raises(TypeError, match=r"kernel `_axpy` takes 5 run-time arguments \(x_ptr, y_ptr, out_ptr, a, n\)"):
        launcher((1, 1, 1), (x.ctypes.data, 1.0, 16))
    x[:] = 1
    launcher((1, 1, 1), (x.ctypes.data, x.ctypes.data, x.ctypes.data, 2, 16))   # an int for a float: converted
    np.testing.assert_array_equal(x, np.full(16, 3, dtype=np.float32))


def test_threads_launch_at_once(path):
    n = 4096
    x = np.arange(n, dtype=np.float32)
    outs = [np.zeros(n, dtype=np.float32) for _ in range(4)]
    _axpy[(n // 256, )](x, x, outs[0], 1.0, n, BLOCK=256)
    _use(_axpy, path)
    errors = []

    def work(i: int) -> None:
        try:
            for _ in range(200):
                _axpy[(n // 256, )](x, x, outs[i], float(i), n, BLOCK=256)
        except BaseException as exc:  # reported below
            errors.append(exc)

    threads = [threading.Thread(target=work, args=(i, )) for i in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors
    for i, o in enumerate(outs):
        np.testing.assert_array_equal(o, np.float32(i) * x + x)


def test_launcher_switches_after_launching_often(monkeypatch):
    """A launcher calls its kernel through ctypes until it has launched NATIVE_AFTER times (so that a process
    launching little never builds the native call), then through the native builtin."""
    from tritium_cpu import launcher as cpu_launcher
    monkeypatch.setattr(cpu_launcher, "NATIVE_AFTER", 3)
    monkeypatch.setattr(cpu_launcher, "_native", None)   # as in a process that has not built it yet
    monkeypatch.setattr(cpu_launcher, "_native_tried", False)

    @triton.jit
    def _count(out_ptr):
        tl.atomic_add(out_ptr, 1)

    out = np.zeros(1, dtype=np.int32)
    _count[(1, )](out)
    (launcher, ) = _launchers(_count)
    assert launcher.native is None
    _count[(1, )](out)
    assert launcher.native is None
    _count[(1, )](out)
    assert launcher.native is not None and launcher.native is cpu_launcher.native_launch()
    for _ in range(5):
        _count[(2, )](out)
    assert out[0] == 13


def test_knob_off_builds_launchers_on_ctypes():
    from tritium_cpu.knobs import cpu as cpu_knobs
    from tritium_cpu.launcher import CPULauncher

    with cpu_knobs.scope():
        cpu_knobs.native_launch = False

        @triton.jit
        def _fresh(out_ptr):
            tl.store(out_ptr, 7)

        out = np.zeros(1, dtype=np.int32)
        _fresh[(1, )](out)
        assert out[0] == 7
        for _ in range(1100):
            _fresh[(1, )](out)
        launchers = _launchers(_fresh)
        assert launchers and all(isinstance(x, CPULauncher) and x.native is None for x in launchers)
