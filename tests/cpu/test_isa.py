"""Kernels compiled for every x86-64 feature level this host can execute (``tritium_cpu.isa``), in one process:
each level is selected through the CPU knobs, as ``make test`` selects it through the environment."""
from __future__ import annotations

import contextlib
import io
import re

import numpy as np
import pytest

import tritium as triton
import tritium.language as tl
from tritium_cpu import isa
from tritium_cpu.knobs import cpu as cpu_knobs

#: the environment already selects one level (a lower level of make test's matrix, which runs this file once
#: per level): run the kernels at that level only
SELECTED = isa.environment_selects_level()
LEVELS = isa.levels_to_check()   # named levels, lowest first, "native"
NAMED = [n for n in isa.runnable_levels() if n != "native"]
level = isa.compiling_for


@triton.jit
def reduce2d(x_ptr, out_ptr, M: tl.constexpr, N: tl.constexpr, AXIS: tl.constexpr, MAX: tl.constexpr):
    x = tl.load(x_ptr + tl.arange(0, M)[:, None] * N + tl.arange(0, N)[None, :])
    r = tl.max(x, axis=AXIS) if MAX else tl.min(x, axis=AXIS)
    if AXIS == 0:
        tl.store(out_ptr + tl.arange(0, N), r)
    else:
        tl.store(out_ptr + tl.arange(0, M), r)


# LLVM 22 dropped the last (trip count mod vector width) iterations of short maxnum/minnum reduction loops
# when it folded their tail into masked vector iterations (AVX-512): the reduced axis has M - 1 steps
@pytest.mark.parametrize("lvl", LEVELS)
@pytest.mark.parametrize("shape,axis", [((16, 32), 0), ((8, 16), 0), ((4, 64), 0), ((16, 16), 1), ((32, 8), 1)])
@pytest.mark.parametrize("op", ["max", "min"])
@pytest.mark.parametrize("dtype", [np.float32, np.float64, np.float16])
def test_short_max_min_reductions(lvl, shape, axis, op, dtype):
    x = np.random.default_rng(sum(shape) + axis).standard_normal(shape).astype(dtype)
    ref = getattr(np, op)(x, axis=axis)
    out = np.zeros(ref.shape, dtype)
    with level(lvl):
        reduce2d[(1, )](x, out, shape[0], shape[1], axis, op == "max")
    np.testing.assert_array_equal(out, ref)


@triton.jit
def running_max(x_ptr, out_ptr, STEPS: tl.constexpr, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    acc = tl.load(x_ptr + offs)
    best = tl.max(acc, axis=0)
    for i in range(1, STEPS):
        v = tl.load(x_ptr + i * BLOCK + offs)
        acc = tl.maximum(acc, v)
        best = tl.maximum(best, tl.load(x_ptr + i * BLOCK))
    tl.store(out_ptr + offs, acc)
    tl.store(out_ptr + BLOCK, best)


@pytest.mark.parametrize("lvl", LEVELS)
@pytest.mark.parametrize("steps", [3, 6, 11, 15])
def test_short_maximum_loops(lvl, steps):
    block = 16
    x = np.random.default_rng(steps).standard_normal((steps, block)).astype(np.float32)
    out = np.zeros(block + 1, np.float32)
    with level(lvl):
        running_max[(1, )](x, out, steps, block)
    np.testing.assert_array_equal(out[:block], x.max(axis=0))
    assert out[block] == max(x[0].max(), x[1:, 0].max())


@triton.jit
def exp_kernel(x_ptr, y_ptr, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    tl.store(y_ptr + offs, tl.exp(tl.load(x_ptr + offs)))


def _registers(asm: str) -> set[str]:
    return set(re.findall(r"%([xyz]mm)\d", asm))


@pytest.mark.parametrize("lvl", NAMED)
def test_levels_compile_to_their_vector_width(lvl):
    """Each level's code uses its own vector registers and no wider ones, and it runs here."""
    import llvmlite.binding as llvm
    from tritium_cpu.compiler import host_cpu, host_target
    x = np.linspace(-3, 3, 256, dtype=np.float32)
    y = np.empty_like(x)
    with level(lvl):
        k = exp_kernel[(1, )](x, y, 256)
        cpu, features = host_cpu()
        asm = host_target(cpu, features, 3).emit_assembly(llvm.parse_assembly(k.asm["llir"]))
    np.testing.assert_allclose(y, np.exp(x), rtol=2e-7)
    order = ["xmm", "ymm", "zmm"]
    widest = {"sse2": "xmm", "avx2": "ymm", "avx512": "zmm"}[lvl]
    regs = _registers(asm)
    assert widest in regs
    assert regs <= set(order[:order.index(widest) + 1])


def test_levels_have_their_own_cache_entries(fresh_cache):
    """The compile cache key covers the target CPU and features: levels never share an entry."""
    from tritium.compiler.compiler import make_backend
    from tritium.runtime.driver import driver
    levels = list(isa.runnable_levels())
    if len(levels) < 2:
        pytest.skip("this host runs fewer than two x86-64 levels")
    target = driver.active.get_current_target()
    hashes, keys = {}, {}
    x = np.ones(64, np.float32)
    y = np.empty_like(x)
    for name in levels:
        with level(name):
            hashes[name] = make_backend(target).hash()
            keys[name] = exp_kernel[(1, )](x, y, 64).hash
    assert len(set(hashes.values())) == len(levels)
    assert len(set(keys.values())) == len(levels)


def test_variants_are_registered():
    from tritium.plugins import registry
    spec = registry().backends["cpu"][0]
    module, _, fn = spec.variants.partition(":")
    import importlib
    variants = getattr(importlib.import_module(module), fn)()
    assert variants == isa.runnable_levels()
    for name, env in variants.items():
        assert set(env) == {"TRITIUM_CPU_TARGET", "TRITIUM_CPU_FEATURES"}, name
        assert all(isinstance(v, str) and v for v in env.values())


def test_level_settings_nest():
    sse2, avx2, avx512 = (set(isa.level_settings(n)[isa.FEATURES_ENV].split(",")) for n in ("sse2", "avx2", "avx512"))
    assert sse2 < avx2 < avx512
    assert "+avx512f" in avx512 and "+avx512f" not in avx2 and "+avx2" not in sse2


def test_features_without_sign_are_refused():
    """LLVM aborts the whole process on a feature without '+' or '-': the knob is checked first."""
    from tritium_cpu.compiler import EXACT_BFLOAT16, host_cpu
    with cpu_knobs.scope():
        cpu_knobs.target_features = "+sse2,avx2"
        with pytest.raises(ValueError, match=r"TRITIUM_CPU_FEATURES='\+sse2,avx2'.*needs a sign.*'avx2'"):
            host_cpu()
        cpu_knobs.target_features = " +sse2, -avx512f "
        assert host_cpu()[1] == "+sse2,-avx512f" + EXACT_BFLOAT16


@triton.jit
def to_ints(x_ptr, o_ptr, N: tl.constexpr):
    offs = tl.arange(0, N)
    x = tl.load(x_ptr + offs)
    tl.store(o_ptr + offs, x.to(tl.int16).to(tl.int64))
    tl.store(o_ptr + N + offs, x.to(tl.int8).to(tl.int64))
    tl.store(o_ptr + 2 * N + offs, x.to(tl.uint16).to(tl.int64))
    tl.store(o_ptr + 3 * N + offs, x.to(tl.int32).to(tl.int64))


@pytest.mark.parametrize("lvl", LEVELS)
@pytest.mark.parametrize("dtype", [np.float16, np.float32])
def test_float_to_int_saturates(lvl, dtype):
    """NaN converts to 0 and out-of-range values saturate, as the GPU's cvt.rzi does (AVX512-FP16 hosts gave
    INT16_MIN for a NaN half)."""
    with np.errstate(over="ignore"):
        x = np.array([np.nan, -np.nan, np.inf, -np.inf, 70000, -70000, 300.7, -300.7, 1.5, -1.5, 0, 65504] * 4,
                     dtype=dtype)[:32]
    out = np.zeros(4 * 32, np.int64)
    with level(lvl):
        to_ints[(1, )](x, out, 32)
    wide = np.nan_to_num(x.astype(np.float64), nan=0.0, posinf=1e300, neginf=-1e300)
    for k, info in enumerate([np.iinfo(np.int16), np.iinfo(np.int8), np.iinfo(np.uint16), np.iinfo(np.int32)]):
        expect = np.clip(np.trunc(wide), info.min, info.max).astype(np.int64)
        np.testing.assert_array_equal(out[k * 32:(k + 1) * 32], expect, err_msg=str(info.dtype))


def test_matrix_listing():
    """What the Makefile reads: the native class, then the levels below it with their settings."""
    from tritium_cpu.isa import _main
    named = NAMED
    buf = io.StringIO()
    with contextlib.redirect_stdout(buf):
        _main(["--native"])
    assert buf.getvalue().split() == [named[-1] if named else "native"]
    buf = io.StringIO()
    with contextlib.redirect_stdout(buf):
        _main(["--lower"])
    lines = [ln.split() for ln in buf.getvalue().splitlines()]
    assert [ln[0] for ln in lines] == list(reversed(named[:-1]))
    for name, *env in lines:
        assert dict(e.split("=", 1) for e in env) == isa.runnable_levels()[name]


@triton.jit
def zero_ties(x_ptr, o_ptr, M: tl.constexpr, N: tl.constexpr):
    x = tl.load(x_ptr + tl.arange(0, M)[:, None] * N + tl.arange(0, N)[None, :])
    tl.store(o_ptr + tl.arange(0, M), tl.max(x, axis=1))
    tl.store(o_ptr + M + tl.arange(0, M), tl.min(x, axis=1))
    tl.store(o_ptr + 2 * M + tl.arange(0, N), tl.max(x, axis=0))
    tl.store(o_ptr + 2 * M + N + tl.arange(0, N), tl.min(x, axis=0))
    y = tl.load(x_ptr + N + tl.arange(0, N))
    z = tl.load(x_ptr + tl.arange(0, N))
    tl.store(o_ptr + 2 * M + 2 * N + tl.arange(0, N), tl.maximum(z, y))
    tl.store(o_ptr + 2 * M + 3 * N + tl.arange(0, N), tl.minimum(z, y))


@pytest.mark.parametrize("lvl", LEVELS)
@pytest.mark.parametrize("shape", [(4, 16), (8, 256), (2, 1024)])
def test_max_min_order_zeros(lvl, shape):
    """tl.max/tl.min/tl.maximum/tl.minimum order -0 below +0 (IEEE 754-2019 maximumNumber), on every path: short
    loops, vector reductions of long rows, reductions across rows, elementwise."""
    M, N = shape
    rng = np.random.default_rng(N)
    x = np.where(rng.random((M, N)) < 0.5, -0.0, 0.0).astype(np.float32)
    x[0] = -0.0                       # a row of only -0
    x[1, rng.integers(N)] = 0.0       # one +0 among -0
    x[:, 3] = -1.0                    # negatives never win a max
    x[M - 1] = np.where(np.arange(N) % 2, np.nan, 0.0)     # NaN lanes are ignored
    out = np.zeros(2 * M + 4 * N, np.float32)
    with level(lvl):
        zero_ties[(1, )](x, out, M, N)
    xs = np.where(np.isnan(x), -np.inf, x)
    has_pos = ((x == 0) & ~np.signbit(x))
    has_neg = ((x == 0) & np.signbit(x))
    def ordered_max(axis):
        m = np.max(xs, axis=axis)
        return np.where(m == 0, np.where(has_pos.any(axis=axis), 0.0, -0.0), m)
    def ordered_min(axis):
        m = np.min(np.where(np.isnan(x), np.inf, x), axis=axis)
        return np.where(m == 0, np.where(has_neg.any(axis=axis), -0.0, 0.0), m)
    z, y = x[0], x.reshape(-1)[N:2 * N]
    both = (z == 0) & (y == 0)
    emax = np.where(both, np.where(np.signbit(z) & np.signbit(y), -0.0, 0.0), np.fmax(z, y))
    emin = np.where(both, np.where(np.signbit(z) | np.signbit(y), -0.0, 0.0), np.fmin(z, y))
    want = np.concatenate([ordered_max(1), ordered_min(1), ordered_max(0), ordered_min(0), emax, emin])
    got = out.astype(np.float64)
    np.testing.assert_array_equal(got, want)
    np.testing.assert_array_equal(np.signbit(got), np.signbit(want))
