"""``tl.extra.libdevice`` on the GPU emulator: functions that become ``tt.extern_elementwise`` are calls the emulator
answers on the host (gpu/emulator_libdevice.py); before, every one refused to compile ("this target cannot call
external function"), and ``libdevice.pow(x, int)`` (llvm.powi, a runtime call on x86) crashed the process."""
from __future__ import annotations

import math
import os
import subprocess
import sys
import textwrap

import numpy as np
import pytest

import tritium as triton
import tritium.language as tl
from tritium.language.extra import libdevice


@triton.jit
def float_functions(x_ptr, n_ptr, o_ptr, N: tl.constexpr):
    offs = tl.arange(0, N)
    x = tl.load(x_ptr + offs)
    n = tl.load(n_ptr + offs)
    tl.store(o_ptr + offs, libdevice.sinpi(x))
    tl.store(o_ptr + N + offs, libdevice.pow(x, n))
    tl.store(o_ptr + 2 * N + offs, libdevice.isnan(x).to(x.dtype))
    tl.store(o_ptr + 3 * N + offs, libdevice.ldexp(x, n))
    tl.store(o_ptr + 4 * N + offs, libdevice.hypot(x, x))


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_float_functions(emulator, dtype):
    n = 64
    rng = np.random.default_rng(1)
    x = rng.uniform(-2, 2, n).astype(dtype)
    x[3] = np.nan
    k = rng.integers(-3, 4, n).astype(np.int32)
    out = np.zeros(5 * n, dtype)
    float_functions[(1, )](x, k, out, n, num_warps=2)
    xd = x.astype(np.float64)
    tol = 1e-6 if dtype == np.float32 else 1e-13
    np.testing.assert_allclose(out[:n], np.sin(np.pi * xd), rtol=tol, atol=tol)
    np.testing.assert_allclose(out[n:2 * n], xd ** k, rtol=tol)
    np.testing.assert_array_equal(out[2 * n:3 * n], np.isnan(x))
    np.testing.assert_array_equal(out[3 * n:4 * n], np.ldexp(x, k))
    np.testing.assert_allclose(out[4 * n:], np.hypot(xd, xd), rtol=tol)


@triton.jit
def integer_functions(a_ptr, b_ptr, o_ptr, N: tl.constexpr):
    offs = tl.arange(0, N)
    a = tl.load(a_ptr + offs)
    b = tl.load(b_ptr + offs)
    tl.store(o_ptr + offs, libdevice.mulhi(a, b).to(tl.int64))
    tl.store(o_ptr + N + offs, libdevice.hadd(a, b).to(tl.int64))


def test_unsigned_arguments_keep_their_bits(emulator):
    """u32 values above 2**31 cross the C call as negative ints: they must come back as the same bits."""
    n = 32
    rng = np.random.default_rng(2)
    a = rng.integers(2**31, 2**32, n, dtype=np.uint64).astype(np.uint32)
    b = rng.integers(2**31, 2**32, n, dtype=np.uint64).astype(np.uint32)
    out = np.zeros(2 * n, np.int64)
    integer_functions[(1, )](a, b, out, n)
    want_hi = [(int(x) * int(y)) >> 32 for x, y in zip(a, b)]
    np.testing.assert_array_equal(out[:n], want_hi)
    np.testing.assert_array_equal(out[n:], [(int(x) + int(y)) >> 1 for x, y in zip(a, b)])


@triton.jit
def scalar_call(x_ptr, o_ptr):
    tl.store(o_ptr, libdevice.cospi(tl.load(x_ptr)))


def test_scalar_argument(emulator):
    x, out = np.array([0.25], np.float32), np.zeros(1, np.float32)
    scalar_call[(1, )](x, out)
    assert out[0] == pytest.approx(math.cos(math.pi * 0.25), rel=1e-6)


@tl.core.extern
def _from_a_file(x, _semantic=None):
    return tl.core.extern_elementwise("mylib", "/nowhere/mylib.bc", [x], {(tl.float32, ): ("my_fn", tl.float32)},
                                      is_pure=True, _semantic=_semantic)


@triton.jit
def user_library(x_ptr, N: tl.constexpr):
    offs = tl.arange(0, N)
    tl.store(x_ptr + offs, _from_a_file(tl.load(x_ptr + offs)))


def test_other_libraries_are_refused_with_the_reason(emulator):
    with pytest.raises(Exception, match=r"(?s)cannot call external function my_fn from /nowhere/mylib\.bc.*libdevice"):
        user_library[(1, )](np.zeros(16, np.float32), 16)


CHILD = textwrap.dedent('''
    import numpy as np, sys
    from tritium import knobs, plugins
    sys.path.insert(0, sys.argv[1])
    from kern import k
    reg = plugins.PluginRegistry.from_objects({"core": "tritium.builtin_plugin", "gpu-emu": "tritium.gpu.emulator"})
    with plugins.use(reg), knobs.runtime.scope():
        knobs.runtime.default_backend = "gpu-emu"
        x = np.linspace(-1, 1, 32, dtype=np.float32)
        out = np.zeros_like(x)
        k[(1,)](x, out, 32)
        assert np.allclose(out, np.sin(np.pi * x.astype(np.float64)), atol=1e-6), out
        print("ok")
''')
KERNEL = textwrap.dedent('''
    import tritium, tritium.language as tl
    from tritium.language.extra import libdevice

    @tritium.jit
    def k(x, o, N: tl.constexpr):
        offs = tl.arange(0, N)
        tl.store(o + offs, libdevice.sinpi(tl.load(x + offs)))
''')


def test_kernel_from_the_cache_finds_its_functions(tmp_path):
    """A second process loads the kernel from the cache: its metadata names the host functions to link."""
    (tmp_path / "kern.py").write_text(KERNEL)
    env = dict(os.environ, TRITIUM_HOME=str(tmp_path / "home"))
    for _ in range(2):
        r = subprocess.run([sys.executable, "-c", CHILD, str(tmp_path)], capture_output=True, text=True, env=env,
                           timeout=600)
        assert r.returncode == 0 and r.stdout.strip() == "ok", r.stdout + r.stderr[-3000:]
    assert any("sinpi_f32" in f.read_text() for f in (tmp_path / "home").rglob("*.json"))


def test_an_object_calling_what_the_process_lacks_is_refused():
    """MCJIT would let such a call jump to a bad address (the process died on __powisf2): refuse it by name."""
    import llvmlite.binding as llvm

    from tritium.gpu import emulator_link
    from tritium.gpu.emulator import host_machine
    mod = llvm.parse_assembly("""
        declare float @llvm.powi.f32.i32(float, i32)
        declare i32 @no_such_function(i32)
        define float @f(float %x, i32 %n) {
          %r = call float @llvm.powi.f32.i32(float %x, i32 %n)
          %q = call i32 @no_such_function(i32 %n)
          ret float %r
        }""")
    obj = host_machine().emit_object(mod)
    assert sorted(emulator_link.undefined_symbols(obj)) == ["__powisf2", "no_such_function"]
    emulator_link.load_symbols()
    with pytest.raises(RuntimeError, match=r"kernel `f`: its code calls no_such_function, which"):
        emulator_link.check_symbols("f", obj)


@triton.jit
def sinpi_kernel(x_ptr, o_ptr, N: tl.constexpr):
    offs = tl.arange(0, N)
    tl.store(o_ptr + offs, libdevice.sinpi(tl.load(x_ptr + offs)))


def test_a_failing_function_raises_after_the_launch(emulator, monkeypatch):
    """An exception cannot cross the C call: ctypes would print it and the kernel would store garbage."""
    from tritium.interpreter import libdevice as reference

    def broken(*args, **kwargs):
        raise ValueError("no answer here")
    monkeypatch.setattr(reference, "extern", broken)
    with pytest.raises(RuntimeError, match=r"kernel `sinpi_kernel`: a libdevice function failed.*no answer here"):
        sinpi_kernel[(1, )](np.zeros(16, np.float32), np.zeros(16, np.float32), 16)
    monkeypatch.undo()
    out = np.zeros(16, np.float32)
    sinpi_kernel[(1, )](np.full(16, 0.5, np.float32), out, 16)       # the next launch is clean
    np.testing.assert_allclose(out, 1.0)
