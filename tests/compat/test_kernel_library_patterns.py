"""Kernel patterns that real Triton libraries use and Triton compiles (found running FlagGems and Liger-Kernel on
the CPU backend): each runs compiled and interpreted and gives Triton's answer."""
from __future__ import annotations

import numpy as np
import pytest

import tritium
import tritium.language as tl
from tritium.language.standard import _log2


def _unwrap(o):
    return o.value if isinstance(o, tl.constexpr) else o


# FlagGems' copysign decorates compile-time helpers with @tl.constexpr (a constexpr holding a function) and calls
# them from the kernel; Triton calls the function with the arguments as they are.
@tl.constexpr
def _uint_dtype(num_bits):
    return tl.core.get_int_dtype(_unwrap(num_bits), False)


@tl.constexpr
def _sign_bit(num_bits):
    return 1 << (_unwrap(num_bits) - 1)


@tritium.jit
def _sign_of(X, Y, N: tl.constexpr):
    o = tl.arange(0, N)
    v = tl.load(X + o)
    nbits: tl.constexpr = v.dtype.primitive_bitwidth
    bits = v.to(_uint_dtype(nbits), bitcast=True)
    mask: tl.constexpr = _sign_bit(nbits)
    tl.store(Y + o, tl.where((bits & mask) != 0, 1, 0))


@pytest.mark.parametrize("interpret", [False, True])
@pytest.mark.parametrize("dtype", [np.float32, np.float64, np.float16])
def test_constexpr_decorated_helper_is_called(interpret, dtype):
    x = np.array([1, -1, 0, -0.0, 2, -3, np.inf, -np.inf], dtype=dtype)
    y = np.full(8, 7, np.int32)
    k = tritium.JITFunction(_sign_of.fn)
    k.interpret = interpret
    k[(1,)](x, y, N=8)
    np.testing.assert_array_equal(y, np.signbit(x).astype(np.int32))


def test_log2_of_compile_time_integers():
    assert [_log2(i) for i in (0, 1, 2, 3, 4, 1000, 1024)] == [0, 0, 1, 1, 2, 9, 10]


# FlagGems' topk: `n_dims: core.constexpr = _log2(x.shape[0])`, then a static_range over it
@tritium.jit
def _log2_kernel(X, Y, N: tl.constexpr):
    o = tl.arange(0, N)
    v = tl.load(X + o)
    n_dims: tl.constexpr = tl.standard._log2(v.shape[0])
    acc = v
    for i in tl.static_range(n_dims):
        acc = acc + 1
    tl.store(Y + o, acc + n_dims * 100)


@pytest.mark.parametrize("interpret", [False, True])
def test_log2_in_an_annotated_constexpr(interpret):
    x = np.arange(16, dtype=np.float32)
    y = np.zeros(16, np.float32)
    k = tritium.JITFunction(_log2_kernel.fn)
    k.interpret = interpret
    k[(1,)](x, y, N=16)
    np.testing.assert_array_equal(y, x + 4 + 400)


# Triton binds a run-time value annotated tl.constexpr as the value itself (no error)
@tritium.jit
def _annotated_runtime(X, Y, n):
    o = tl.arange(0, 8)
    scale: tl.constexpr = n * 2
    tl.store(Y + o, tl.load(X + o) * scale)


@pytest.mark.parametrize("interpret", [False, True])
def test_run_time_value_annotated_constexpr(interpret):
    x = np.arange(8, dtype=np.float32)
    y = np.zeros(8, np.float32)
    k = tritium.JITFunction(_annotated_runtime.fn)
    k.interpret = interpret
    k[(1,)](x, y, 3)
    np.testing.assert_array_equal(y, x * 6)
    k[(1,)](x, y, 5)   # one compiled kernel for both: n stays a run-time value
    np.testing.assert_array_equal(y, x * 10)


def test_do_not_specialize_ignores_names_that_are_not_parameters():
    def store_n(X, n):
        tl.store(X, n)

    k = tritium.jit(do_not_specialize=["n", "part_num"])(store_n)
    assert [p.do_not_specialize for p in k.params] == [False, True]
    x = np.zeros(1, np.int32)
    k[(1,)](x, 1)
    assert x[0] == 1


def test_kernel_interface_is_public_and_launchers_derive_from_it():
    # FlagGems' LibEntry(triton.KernelInterface) wraps a kernel and forwards run(); kernel[grid](...) must reach it
    assert issubclass(tritium.JITFunction, tritium.KernelInterface)

    class Forwarding(tritium.KernelInterface):
        def __init__(self, fn):
            self.fn, self.calls = fn, 0

        def run(self, *args, grid, warmup=False, **kwargs):
            self.calls += 1
            return self.fn.run(*args, grid=grid, warmup=warmup, **kwargs)

    x = np.arange(8, dtype=np.float32)
    y = np.zeros(8, np.float32)
    f = Forwarding(tritium.JITFunction(_annotated_runtime.fn))
    f[(1,)](x, y, 2)
    assert f.calls == 1
    np.testing.assert_array_equal(y, x * 4)


@tritium.jit
def _row_sum_of_squares(X, Y, N: tl.constexpr):
    o = tl.arange(0, N)
    v = tl.load(X + o)
    total = tl.sum(v * v, axis=0)
    tl.static_assert(total.dtype == v.dtype)   # the result keeps Triton's type
    tl.store(Y, total)


@pytest.mark.parametrize("interpret", [False, True])
@pytest.mark.parametrize("dtype", ["bfloat16", "float16"])
def test_sub_32_bit_float_sums_accumulate_in_fp32(interpret, dtype):
    # Liger-Kernel's RMSNorm sums bf16 squares of 4096-wide rows; a bf16 running sum drifted ~2% from torch
    torch = pytest.importorskip("torch")
    dt = getattr(torch, dtype)
    gen = torch.Generator().manual_seed(0)
    k = tritium.JITFunction(_row_sum_of_squares.fn)
    k.interpret = interpret
    for _ in range(4):
        x = torch.randn(4096, generator=gen).to(dt)
        y = torch.empty(1, dtype=dt)
        k[(1,)](x, y, N=4096)
        expect = (x * x).float().sum().to(dt)   # products rounded to dtype as Triton does, summed in fp32
        assert y.item() == expect.item(), (y.item(), expect.item())


@tritium.jit
def _finfo_max(dtype):
    return 65504.0   # an fp32 scalar in the kernel


@tritium.jit
def _load_other_of_another_type(X, Y, n, N: tl.constexpr):
    o = tl.arange(0, N)
    bound = _finfo_max(X.dtype.element_ty)
    tl.store(Y + o, tl.load(X + o, mask=o < n, other=bound).to(tl.float32))


@pytest.mark.parametrize("interpret", [False, True])
def test_load_other_is_converted_to_the_loaded_type(interpret):
    # FlagGems' topk: `other` is an fp32 scalar, the load reads fp16; Triton converts it
    x = np.arange(8, dtype=np.float16)
    y = np.zeros(8, np.float32)
    k = tritium.JITFunction(_load_other_of_another_type.fn)
    k.interpret = interpret
    k[(1,)](x, y, 5, N=8)
    np.testing.assert_array_equal(y, [0, 1, 2, 3, 4, 65504, 65504, 65504])


# FlagGems' utils/limits.py: a dtype reaches the helper as Triton's constexpr and is unwrapped with `.value`
@tritium.jit
def _lowest(dtype):
    d = dtype.value
    if d.is_floating():
        v: tl.constexpr = float("-inf")
        return v
    w: tl.constexpr = d.int_bitwidth
    v2: tl.constexpr = -1 * 2 ** (w - 1)
    return v2


@tritium.jit
def _masked_max(X, Y, n, N: tl.constexpr):
    o = tl.arange(0, N)
    x = tl.load(X + o, mask=o < n, other=_lowest(X.dtype.element_ty))
    tl.store(Y, tl.max(x, axis=0))


@pytest.mark.parametrize("interpret", [False, True])
@pytest.mark.parametrize("dtype", [np.float32, np.int16])
def test_dtype_value_in_a_device_function(interpret, dtype):
    x = -np.arange(1, 9).astype(dtype) * 3
    y = np.zeros(1, dtype)
    k = tritium.JITFunction(_masked_max.fn)
    k.interpret = interpret
    k[(1,)](x, y, 3, N=8)
    assert y[0] == -3


def test_standard_exports_what_triton_defines_there():
    # FlagGems' topk: `from triton.language.standard import _log2, zeros_like` (an ImportError hides both)
    from tritium.language.standard import _log2, zeros_like  # noqa: F401
    assert tl.float16.value is tl.float16
