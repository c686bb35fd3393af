"""CPU code generation details that must never change results: fast paths taken when masks are all true or
``x % n == x`` (decided from the bounds of index expressions), explicit vector reductions, pointer blocks
advanced by a scalar in loops, and the soft-float routines LLVM calls for half and bfloat."""
from __future__ import annotations

import numpy as np
import pytest

import tritium as triton
import tritium.language as tl


@triton.jit
def _wrapped_rows(x_ptr, o_ptr, n, start, BLOCK: tl.constexpr):
    offs = (start + tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)) % n
    tl.store(o_ptr + tl.program_id(0) * BLOCK + tl.arange(0, BLOCK), tl.load(x_ptr + offs))


@pytest.mark.parametrize("n,start", [(64, 0), (50, 0), (64, 30), (7, 0), (64, -3)])
def test_remainder_fast_path_matches_division(n, start):
    """Offsets that stay in [0, n) take the fast path, others wrap: both must equal C's remainder."""
    block, grid = 16, 4
    x = np.arange(n, dtype=np.float32) * 3
    out = np.zeros(block * grid, np.float32)
    _wrapped_rows[(grid, )](x, out, n, start, BLOCK=block)
    idx = np.arange(block * grid) + start
    c_rem = np.fmod(idx, n)                      # C semantics: the sign of the dividend
    ok = c_rem >= 0
    np.testing.assert_array_equal(out[ok], x[c_rem[ok]])


@triton.jit
def _masked_sum(x_ptr, o_ptr, n, base, BLOCK: tl.constexpr):
    offs = base + tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = (offs < n) & (offs >= 0)
    x = tl.load(x_ptr + (offs - base), mask=mask, other=0.0)
    tl.store(o_ptr + tl.program_id(0), tl.sum(x, axis=0))
    tl.store(o_ptr + 64 + tl.program_id(0), tl.max(tl.where(mask, x, -1.0), axis=0))


@pytest.mark.parametrize("n,base", [(1024, 0), (1000, 0), (1024, -100), (3, 0), (2**31 - 8, 2**31 - 1200),
                                    (2**31 - 1, 2**31 - 700), (2**31 - 900, 2**31 - 1100)])
def test_mask_bounds_fast_path(n, base):
    """Masks proven all true skip their checks; partial masks, negative offsets and offsets that wrap around
    int32 (where the bounds reasoning must not wrap with them) take the checked path."""
    block, grid = 256, 4
    x = np.arange(block * grid, dtype=np.float32) % 17
    out = np.zeros(128, np.float32)
    _masked_sum[(grid, )](x, out, n, base, BLOCK=block)
    for p in range(grid):
        offs = (base + p * block + np.arange(block) + 2**31) % 2**32 - 2**31     # int32 arithmetic
        m = (offs < n) & (offs >= 0)
        vals = np.where(m, x[p * block + np.arange(block)], 0)
        assert out[p] == pytest.approx(vals.sum(), rel=1e-6)
        assert out[64 + p] == (np.where(m, vals, -1).max())


@triton.jit
def _reductions(x_ptr, o_ptr, N: tl.constexpr):
    x = tl.load(x_ptr + tl.arange(0, N))
    tl.store(o_ptr + 0, tl.sum(x, 0))
    tl.store(o_ptr + 1, tl.max(x, 0))
    tl.store(o_ptr + 2, tl.min(x, 0))
    tl.store(o_ptr + 3, tl.max(x, 0, return_indices=True)[1].to(x.dtype))
    tl.store(o_ptr + 4, tl.reduce(x, 0, _mul_combine))


@triton.jit
def _mul_combine(a, b):
    return a * b


@pytest.mark.parametrize("dtype", [np.float32, np.float64, np.int32, np.int64, np.int8])
@pytest.mark.parametrize("n", [32, 64, 1024])
def test_vector_reductions(dtype, n):
    rng = np.random.default_rng(n)
    x = (rng.uniform(0.9, 1.1, n) if np.dtype(dtype).kind == "f" else rng.integers(-3, 4, n)).astype(dtype)
    x[n // 3] = x.max() + 1
    out = np.zeros(5, dtype)
    _reductions[(1, )](x, out, n)
    wide = x.astype(np.float64)
    kind = np.dtype(dtype).kind
    total = wide.sum() if kind == "f" else int(x.astype(np.int64).sum())
    if dtype == np.int8:
        total = np.int8(np.int32(total))   # sum accumulates in int32; storing to int8 truncates
    assert out[0] == pytest.approx(total, rel=1e-5) if kind == "f" else out[0] == total
    assert out[1] == x.max() and out[2] == x.min() and out[3] == np.array(x.argmax()).astype(dtype)
    prod = np.prod(wide) if kind == "f" else None
    if kind == "f":
        assert out[4] == pytest.approx(prod, rel=1e-4)


@triton.jit
def _nan_reductions(x_ptr, o_ptr, N: tl.constexpr):
    x = tl.load(x_ptr + tl.arange(0, N))
    tl.store(o_ptr + 0, tl.max(x, 0))
    tl.store(o_ptr + 1, tl.reduce(x, 0, _max_propagate))


@triton.jit
def _max_propagate(a, b):
    return tl.maximum(a, b, propagate_nan=tl.PropagateNan.ALL)


def test_vector_reductions_nan():
    x = np.arange(256, dtype=np.float32)
    x[77] = np.nan
    out = np.zeros(2, np.float32)
    _nan_reductions[(1, )](x, out, 256)
    assert out[0] == 255 and np.isnan(out[1])


@triton.jit
def _advancing(a_ptr, o_ptr, K, stride, BK: tl.constexpr, R: tl.constexpr):
    rows = tl.arange(0, R)
    ptrs = a_ptr + rows[:, None] * stride + tl.arange(0, BK)[None, :]
    acc = tl.zeros((R, BK), tl.float32)
    for k in range(0, K, BK):
        acc += tl.load(ptrs)
        ptrs += BK
    tl.store(o_ptr + rows[:, None] * BK + tl.arange(0, BK)[None, :], acc)
    tl.store(o_ptr + R * BK + rows[:, None] * BK + tl.arange(0, BK)[None, :], tl.load(ptrs - BK))


def test_pointer_block_advanced_in_a_loop():
    R, BK, K = 8, 16, 64
    a = np.arange(R * K, dtype=np.float32).reshape(R, K)
    out = np.zeros((2, R, BK), np.float32)
    _advancing[(1, )](a, out, K, K, BK=BK, R=R)
    np.testing.assert_array_equal(out[0], a.reshape(R, K // BK, BK).sum(1))
    np.testing.assert_array_equal(out[1], a[:, K - BK:])


def test_soft_float_routines():
    """The half/bfloat conversions the x86 backend calls: exhaustive for half->float, sampled for the rest,
    against numpy (half) and round-to-nearest-even references."""
    llvm = pytest.importorskip("llvmlite.binding")
    import ctypes
    from tritium_cpu.codegen import softfloat
    llvm.initialize_all_targets()
    llvm.initialize_all_asmprinters()
    names = ["__extendhfsf2", "__truncsfhf2", "__truncsfbf2", "__truncdfhf2", "__truncdfbf2"]
    sig = {"__extendhfsf2": ("float", "half"), "__truncsfhf2": ("half", "float"), "__truncsfbf2": ("bfloat", "float"),
           "__truncdfhf2": ("half", "double"), "__truncdfbf2": ("bfloat", "double")}
    lt = {"float": "float", "double": "double", "half": "i16", "bfloat": "i16"}
    wrappers = []
    for n in names:
        ret, arg = sig[n]
        body = [f"%v = bitcast i16 %x to {arg}" if arg in ("half", "bfloat") else f"%v = bitcast {arg} %x to {arg}",
                f"%r = call {ret} @{n}({arg} %v)",
                f"%o = bitcast {ret} %r to i16" if ret in ("half", "bfloat") else f"%o = bitcast {ret} %r to {ret}"]
        wrappers.append(f"define {lt[ret]} @w{n}({lt[arg]} %x) {{\n  " + "\n  ".join(body) +
                        f"\n  ret {lt[ret]} %o\n}}")
    mod = llvm.parse_assembly(softfloat.library_ir() + "\n" + "\n".join(wrappers))
    tm = llvm.Target.from_default_triple().create_target_machine(opt=0)
    engine = llvm.create_mcjit_compiler(mod, tm)
    engine.finalize_object()
    ct = {"float": ctypes.c_float, "double": ctypes.c_double, "i16": ctypes.c_uint16}

    def fn(n):
        ret, arg = sig[n]
        return ctypes.CFUNCTYPE(ct[lt[ret]], ct[lt[arg]])(engine.get_function_address(f"w{n}"))

    ext = fn("__extendhfsf2")
    bits = np.arange(65536, dtype=np.uint16)
    want = bits.view(np.float16).astype(np.float32)
    got = np.array([ext(int(b)) for b in bits], np.float32)
    same = (got.view(np.uint32) == want.view(np.uint32)) | (np.isnan(got) & np.isnan(want))
    assert same.all()
    rng = np.random.default_rng(0)
    xs = np.concatenate([rng.standard_normal(3000) * 10.0 ** rng.integers(-8, 6, 3000),
                         [0.0, -0.0, np.inf, -np.inf, 65504.0, 65520.0, 65519.99, 6e-8, 2.0**-25, 2.0**-24 * 1.5]])
    f16 = fn("__truncsfhf2")
    with np.errstate(over="ignore"):
        x32 = xs.astype(np.float32)
        want16, want64 = x32.astype(np.float16), xs.astype(np.float16)
    got = np.array([f16(float(v)) for v in x32], np.uint16)
    np.testing.assert_array_equal(got, want16.view(np.uint16))
    d16 = fn("__truncdfhf2")
    got = np.array([d16(float(v)) for v in xs], np.uint16)
    np.testing.assert_array_equal(got, want64.view(np.uint16))   # numpy rounds once from double
    bf = fn("__truncsfbf2")
    u = x32.view(np.uint32).astype(np.uint64)
    want_bf = ((u + 0x7FFF + ((u >> 16) & 1)) >> 16).astype(np.uint16)
    np.testing.assert_array_equal(np.array([bf(float(v)) for v in x32], np.uint16), want_bf)
