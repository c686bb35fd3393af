"""tl.minimum/tl.maximum/tl.clamp/tl.min/tl.max and NaN on the CPU backend, at every x86-64 level this host runs,
against the interpreter. With ``propagate_nan=NONE`` (the default) a NaN operand loses to the other one; with
``ALL`` the NaN wins; -0 orders below +0. LLVM 22's x86 lowering of llvm.minimumnum/maximumnum returned the NaN
when the other operand was known not to be one (an integer converted to float): the fuzzer's finding."""
from __future__ import annotations


import numpy as np
import pytest

import tritium as triton
import tritium.language as tl
from tritium_cpu import isa

SELECTED = isa.environment_selects_level()
LEVELS = isa.levels_to_check()

SPECIAL = [np.nan, -0.0, 0.0, -1.5, 2.5, np.inf, -np.inf, 7.0]
level = isa.compiling_for


def compiled_and_interpreted(kernel, lvl: str, out: np.ndarray, *args, grid=(1, )) -> tuple[np.ndarray, np.ndarray]:
    want = np.zeros_like(out)
    kernel.interpret = True
    try:
        kernel[grid](*_place(args, want))
    finally:
        kernel.interpret = False
    with level(lvl):
        kernel[grid](*_place(args, out))
    return out, want


def _place(args: tuple, out: np.ndarray) -> tuple:
    """The output buffer goes where the argument list has None."""
    return tuple(out if a is None else a for a in args)


def same(got: np.ndarray, want: np.ndarray, what: str) -> None:
    np.testing.assert_array_equal(got, want, err_msg=what)      # NaNs compare equal here
    num = ~np.isnan(want)                                        # a NaN's sign bit is no result
    np.testing.assert_array_equal(np.signbit(got[num]), np.signbit(want[num]), err_msg=what + " (zero signs)")


@triton.jit
def mixed(i_ptr, f_ptr, o_ptr, N: tl.constexpr):
    offs = tl.arange(0, N)
    a = tl.load(i_ptr + offs)          # integers: never NaN once converted
    b = tl.load(f_ptr + offs)
    af = a.to(b.dtype)
    tl.store(o_ptr + offs, tl.minimum(a, b))
    tl.store(o_ptr + N + offs, tl.minimum(b, a))
    tl.store(o_ptr + 2 * N + offs, tl.maximum(a, b))
    tl.store(o_ptr + 3 * N + offs, tl.maximum(b, af))
    tl.store(o_ptr + 4 * N + offs, tl.minimum(af, b, propagate_nan=tl.PropagateNan.ALL))
    tl.store(o_ptr + 5 * N + offs, tl.maximum(b, af, propagate_nan=tl.PropagateNan.ALL))
    tl.store(o_ptr + 6 * N + offs, tl.clamp(b, af - 4, af + 4))
    tl.store(o_ptr + 7 * N + offs, tl.clamp(b, af - 4, af + 4, propagate_nan=tl.PropagateNan.ALL))
    tl.store(o_ptr + 8 * N + offs, tl.clamp(af, b, b))


@pytest.mark.parametrize("lvl", LEVELS)
@pytest.mark.parametrize("itype,ftype", [(np.int32, np.float32), (np.uint32, np.float32), (np.int64, np.float64),
                                         (np.uint64, np.float64), (np.int16, np.float32)])
@pytest.mark.parametrize("n", [16, 64])
def test_integer_against_nan(lvl, itype, ftype, n):
    rng = np.random.default_rng(n)
    a = rng.integers(0, 12, n).astype(itype)
    a[:8] = 0                                        # +0.0 once converted, against -0.0 below
    b = np.array(SPECIAL * (n // len(SPECIAL)), ftype)
    got, want = compiled_and_interpreted(mixed, lvl, np.zeros(9 * n, ftype), a, b, None, n)
    same(got, want, f"{itype.__name__} vs {ftype.__name__}")
    # the oracle itself: a NaN never wins with NONE and always wins with ALL
    af = a.astype(ftype)
    np.testing.assert_array_equal(want[:n], np.fmin(af, b))
    np.testing.assert_array_equal(want[3 * n:4 * n], np.fmax(af, b))
    assert np.isnan(want[4 * n:5 * n][np.isnan(b)]).all() and np.isnan(want[5 * n:6 * n][np.isnan(b)]).all()
    np.testing.assert_array_equal(want[6 * n:7 * n][np.isnan(b)], (af - 4)[np.isnan(b)])
    zero = (af == 0) & (b == 0) & np.signbit(b)     # +0.0 against -0.0
    assert np.signbit(want[:n][zero]).all() and not np.signbit(want[2 * n:3 * n][zero]).any()


@triton.jit
def tile_only(i_ptr, f_ptr, o_ptr, N: tl.constexpr):
    offs = tl.arange(0, N)
    a = tl.load(i_ptr + offs)
    b = tl.load(f_ptr + offs)
    tl.store(o_ptr + offs, tl.minimum(a, b))
    tl.store(o_ptr + N + offs, tl.maximum(b, a))


@triton.jit
def scalars(i_ptr, f_ptr, o_ptr):
    pid = tl.program_id(0)
    n = tl.num_programs(0)
    a = tl.load(i_ptr + pid)
    b = tl.load(f_ptr + pid)
    af = a.to(b.dtype)
    tl.store(o_ptr + pid, tl.minimum(a, b))
    tl.store(o_ptr + n + pid, tl.minimum(b, a))
    tl.store(o_ptr + 2 * n + pid, tl.maximum(af, b))
    tl.store(o_ptr + 3 * n + pid, tl.maximum(b, af))
    tl.store(o_ptr + 4 * n + pid, tl.clamp(b, af - 4, af + 4))
    tl.store(o_ptr + 5 * n + pid, tl.minimum(b, af, propagate_nan=tl.PropagateNan.ALL))


@pytest.mark.parametrize("lvl", LEVELS)
@pytest.mark.parametrize("itype,ftype", [(np.int32, np.float32), (np.uint64, np.float64), (np.int64, np.float64)])
def test_integer_against_nan_unvectorized(lvl, itype, ftype):
    """The fuzzer's shape (a short tile of two min/max, left scalar by the vectorizers) and one element per
    program."""
    n = 16
    a = np.arange(n).astype(itype)
    a[:2] = 0
    b = np.array(SPECIAL * 2, ftype)
    b[1::2] = np.nan
    got, want = compiled_and_interpreted(tile_only, lvl, np.zeros(2 * n, ftype), a, b, None, n)
    same(got, want, "tile")
    np.testing.assert_array_equal(want, np.concatenate([np.fmin(a.astype(ftype), b), np.fmax(a.astype(ftype), b)]))
    got, want = compiled_and_interpreted(scalars, lvl, np.zeros(6 * n, ftype), a, b, None, grid=(n, ))
    same(got, want, "scalars")
    assert not np.isnan(want[:5 * n]).any() and np.isnan(want[5 * n:][1::2]).all()


@triton.jit
def floats(x_ptr, y_ptr, o_ptr, N: tl.constexpr):
    offs = tl.arange(0, N)
    x = tl.load(x_ptr + offs)
    y = tl.load(y_ptr + offs)
    tl.store(o_ptr + offs, tl.minimum(x, y))
    tl.store(o_ptr + N + offs, tl.minimum(y, x))
    tl.store(o_ptr + 2 * N + offs, tl.maximum(x, y))
    tl.store(o_ptr + 3 * N + offs, tl.maximum(y, x))
    tl.store(o_ptr + 4 * N + offs, tl.minimum(x, y, propagate_nan=tl.PropagateNan.ALL))
    tl.store(o_ptr + 5 * N + offs, tl.maximum(y, x, propagate_nan=tl.PropagateNan.ALL))
    tl.store(o_ptr + 6 * N + offs, tl.clamp(x, y, y))
    tl.store(o_ptr + 7 * N + offs, tl.clamp(x, y, tl.abs(y) + 1, propagate_nan=tl.PropagateNan.ALL))
    tl.store(o_ptr + 8 * N + offs, tl.maximum(x, 0.0))
    tl.store(o_ptr + 9 * N + offs, tl.minimum(-0.0, y))


@pytest.mark.parametrize("lvl", LEVELS)
@pytest.mark.parametrize("ftype", [np.float32, np.float64, np.float16])
def test_every_pair_of_special_values(lvl, ftype):
    """Signed zeros, infinities and NaN in both operand orders."""
    x, y = (v.ravel().astype(ftype) for v in np.meshgrid(SPECIAL, SPECIAL))
    n = x.size
    got, want = compiled_and_interpreted(floats, lvl, np.zeros(10 * n, ftype), x, y, None, n)
    same(got, want, ftype.__name__)
    zero = (x == 0) & (y == 0)
    assert (np.signbit(want[:n][zero]) == (np.signbit(x) | np.signbit(y))[zero]).all()
    assert (np.signbit(want[2 * n:3 * n][zero]) == (np.signbit(x) & np.signbit(y))[zero]).all()


@triton.jit
def reductions(i_ptr, f_ptr, o_ptr, M: tl.constexpr, N: tl.constexpr, K: tl.constexpr):
    rows = tl.arange(0, M)[:, None]
    cols = tl.arange(0, N)[None, :]
    a = tl.load(i_ptr + rows * N + cols)
    b = tl.load(f_ptr + rows * N + cols)
    # the first K columns are known not to be NaN (converted integers), the others may be
    x = tl.where(cols < K, a.to(b.dtype), b)
    tl.store(o_ptr + tl.arange(0, M), tl.max(x, axis=1))
    tl.store(o_ptr + M + tl.arange(0, M), tl.min(x, axis=1))
    tl.store(o_ptr + 2 * M + tl.arange(0, N), tl.max(x, axis=0))
    tl.store(o_ptr + 2 * M + N + tl.arange(0, N), tl.min(x, axis=0))
    tl.store(o_ptr + 2 * M + 2 * N + tl.arange(0, M), tl.max(b, axis=1))
    tl.store(o_ptr + 3 * M + 2 * N + tl.arange(0, N), tl.min(b, axis=0))
    # a running min/max between the converted integers and the floats
    acc = tl.load(i_ptr + cols).to(b.dtype) + tl.zeros([M, N], b.dtype)
    acc = tl.minimum(acc, b)
    tl.store(o_ptr + 4 * M + 2 * N + rows * N + cols, tl.maximum(acc, b))


@pytest.mark.parametrize("lvl", LEVELS)
@pytest.mark.parametrize("shape", [(4, 16), (16, 16), (2, 256), (8, 8)])
@pytest.mark.parametrize("itype,ftype", [(np.int32, np.float32), (np.int64, np.float64)])
def test_reductions_with_nan(lvl, shape, itype, ftype):
    M, N = shape
    rng = np.random.default_rng(M * N)
    a = rng.integers(-5, 5, (M, N)).astype(itype)
    b = rng.choice(np.array(SPECIAL, ftype), (M, N))
    b[0] = np.nan                                    # a row of NaN only
    b[:, 1] = np.nan                                 # a column of NaN
    b[M - 1, 2:] = -0.0
    out = np.zeros(4 * M + 2 * N + M * N, ftype)
    got, want = compiled_and_interpreted(reductions, lvl, out, a, b, None, M, N, 3)
    same(got, want, f"{shape} {ftype.__name__}")
    assert not np.isnan(want[:2 * M]).any()          # every row has converted integers
    assert np.isnan(want[2 * M + 2 * N])             # the all-NaN row of b


@pytest.mark.parametrize("lvl", LEVELS)
@pytest.mark.parametrize("shape", [(2, 256), (4, 16)])
def test_no_minimumnum_intrinsics(lvl, shape):
    """No path emits llvm.minimumnum/maximumnum, the long rows' vector reduction included: LLVM 22 lowers the
    scalar (and ``<1 x T>``, the last halving step) forms for x86 like llvm.minimum when one operand is known not
    NaN, so the NaN wins."""
    M, N = shape
    a = np.zeros((M, N), np.int32)
    b = np.full((M, N), np.nan, np.float32)
    out = np.zeros(4 * M + 2 * N + M * N, np.float32)
    with level(lvl):
        k = reductions[(1, )](a, b, out, M, N, 1)
    assert "imumnum" not in k.asm["llir"]
    assert (out[:M] == 0).all() and (out[M:2 * M] == 0).all()


@triton.jit
def _combine_max(a, b):
    return tl.maximum(a, b)


@triton.jit
def _combine_min(a, b):
    return tl.minimum(a, b)


@triton.jit
def sixteen_bit_scans(x_ptr, o_ptr, m, n, M: tl.constexpr, N: tl.constexpr):
    rm = tl.arange(0, M)
    rn = tl.arange(0, N)
    inside = (rm[:, None] < m) & (rn[None, :] < n)
    x = tl.load(x_ptr + rm[:, None] * N + rn[None, :], mask=inside, other=-0.0)
    tl.store(o_ptr + rm[:, None] * N + rn[None, :], tl.associative_scan(x, 0, _combine_max) + 0.0, mask=inside)
    tl.store(o_ptr + M * N + rm[:, None] * N + rn[None, :], tl.associative_scan(x, 1, _combine_min))
    tl.store(o_ptr + 2 * M * N + rm[:, None] * N + rn[None, :], tl.maximum(x, x * 2))


@pytest.mark.parametrize("lvl", LEVELS)
@pytest.mark.parametrize("dtype", ["bfloat16", "float16"])
@pytest.mark.parametrize("shape", [(4, 2), (8, 16)])
def test_sixteen_bit_min_max(lvl, dtype, shape):
    """min/max of fp16/bf16 tiles in scans and elementwise: LLVM 22 asserted (aborting the process) in
    instruction selection on the bf16 <2 x ...> compares and bit operations of a 4x2 scan (fuzzer finding)."""
    torch = pytest.importorskip("torch")
    M, N = shape
    g = torch.Generator().manual_seed(M * N)
    x = torch.randn((M, N), generator=g).to(getattr(torch, dtype))
    x[0, 0], x[1, -1] = float("nan"), -0.0
    got, want = torch.zeros(3 * M * N, dtype=x.dtype), torch.zeros(3 * M * N, dtype=x.dtype)
    sixteen_bit_scans.interpret = True
    try:
        sixteen_bit_scans[(1, )](x, want, M, N, M, N)
    finally:
        sixteen_bit_scans.interpret = False
    with level(lvl):
        sixteen_bit_scans[(1, )](x, got, M, N, M, N)
    same(got.view(torch.int16).numpy(), want.view(torch.int16).numpy(), f"{dtype} {shape}")
