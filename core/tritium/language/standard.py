"""Library functions with Triton's semantics (``tl.sum``, ``tl.argmax``, ``tl.softmax``, ``tl.cdiv``...).

Triton writes these as @jit functions; here they build the same IR directly, which compiles faster.
"""
from __future__ import annotations

from typing import Any

from . import core
from .core import CompileTimeError, _unwrap, builtin, constexpr, tensor
from .functions import _axis, _keep_dims
from .functions import zeros_like  # noqa: F401  (Triton defines it here; FlagGems imports it from here)


@core.constexpr_function
def _log2(i: Any) -> int:
    """floor(log2(i)) of a compile-time integer (Triton's ``triton.language.standard._log2``; libraries' bitonic
    sorts import it, e.g. ``n_dims: tl.constexpr = _log2(x.shape[0])``)."""
    n = int(_unwrap(i))
    return n.bit_length() - 1 if n > 1 else 0   # (this module's max is tl.max)


def _sum_dtype(in_dtype: core.dtype, dtype: Any) -> Any:
    dtype = _unwrap(dtype)
    if dtype is not None:
        return dtype
    if in_dtype.is_int_signed() and in_dtype.int_bitwidth < 32:
        return core.int32
    if in_dtype.is_int_unsigned() and in_dtype.int_bitwidth < 32:
        return core.uint32
    return None


def _reduce(x: tensor, axis: Any, combine, keep_dims: Any, s: Any) -> tensor:
    axis = _axis(axis)
    res = s.reduction([x], axis, lambda a, b: [combine(a[0], b[0])])
    return _keep_dims(list(res), axis, x.shape, keep_dims, s)[0]


@builtin
def sum(input, axis=None, keep_dims=False, dtype=None, _semantic=None):
    """Sum along ``axis`` (all axes when None). Small integer types accumulate in 32 bits; floats narrower than 32
    bits accumulate in fp32 and round once to their own type (the result's type is Triton's)."""
    s = _semantic
    x = s.to_tensor(_unwrap(input))
    out = _sum_dtype(x.dtype, dtype)
    if out is not None:
        x = s.cast(x, out)
    elif x.dtype.is_floating() and x.dtype.primitive_bitwidth < 32:
        # Triton leaves the order and the rounding of partial sums to the backend: its GPU code rounds each partial
        # sum (tree order, set by num_warps), its interpreter sums fp16 in fp32 (numpy). A CPU row summed in order
        # with a bf16 accumulator drifted 2% over 4096 elements; fp32 partial sums round like torch does.
        total = _reduce(s.cast(x, core.float32), axis, s.add, keep_dims, s)
        return s.cast(total, x.dtype)
    return _reduce(x, axis, s.add, keep_dims, s)


@builtin
def xor_sum(input, axis=None, keep_dims=False, _semantic=None):
    s = _semantic
    x = s.to_tensor(_unwrap(input))
    if not x.dtype.is_int():
        raise CompileTimeError("xor_sum is only defined on integers")
    return _reduce(x, axis, s.xor_, keep_dims, s)


@builtin
def reduce_or(input, axis=None, keep_dims=False, _semantic=None):
    s = _semantic
    x = s.to_tensor(_unwrap(input))
    if not x.dtype.is_int():
        raise CompileTimeError("reduce_or is only defined on integers and booleans")
    return _reduce(x, axis, s.or_, keep_dims, s)


def _promote_for_minmax(x: tensor, s: Any) -> tensor:
    if x.dtype.is_bf16():
        return s.cast(x, core.float32)
    if x.dtype.primitive_bitwidth < 32:
        return s.cast(x, core.float32 if x.dtype.is_floating() else core.int32)
    return x


def _with_indices(x: tensor, axis: Any, keep_dims: Any, greater: bool, tie_break_left: bool, s: Any):
    axis = _axis(axis)
    if axis is None:
        raise CompileTimeError("reducing with indices needs an axis")
    shape = [d.value for d in x.shape]
    rank = len(shape)
    ax = axis + rank if axis < 0 else axis
    idx = s.arange(0, shape[ax])
    for d in range(rank):
        if d != ax:
            idx = s.expand_dims(idx, d)
    idx = s.broadcast_impl_shape(idx, shape)

    def combine(a, b):
        v1, i1 = a
        v2, i2 = b
        better = s.greater_than(v1, v2) if greater else s.less_than(v1, v2)
        if tie_break_left:
            tie = s.logical_and(s.equal(v1, v2), s.less_than(i1, i2))
            better = s.logical_or(better, tie)
        return [s.where(better, v1, v2), s.where(better, i1, i2)]

    res = s.reduction([x, idx], axis, combine)
    return _keep_dims(list(res), axis, x.shape, keep_dims, s)


@builtin
def max(input, axis=None, return_indices=False, return_indices_tie_break_left=True, keep_dims=False,
        _semantic=None):
    s = _semantic
    x = s.to_tensor(_unwrap(input))
    if x.dtype.is_bf16():
        x = s.cast(x, core.float32)
    if _unwrap(return_indices):
        v, i = _with_indices(x, axis, keep_dims, True, bool(_unwrap(return_indices_tie_break_left)), s)
        return core.tuple_value([v, i])
    x = _promote_for_minmax(x, s)
    return _reduce(x, axis, s.maximum, keep_dims, s)


@builtin
def min(input, axis=None, return_indices=False, return_indices_tie_break_left=True, keep_dims=False,
        _semantic=None):
    s = _semantic
    x = s.to_tensor(_unwrap(input))
    if x.dtype.is_bf16():
        x = s.cast(x, core.float32)
    if _unwrap(return_indices):
        v, i = _with_indices(x, axis, keep_dims, False, bool(_unwrap(return_indices_tie_break_left)), s)
        return core.tuple_value([v, i])
    x = _promote_for_minmax(x, s)
    return _reduce(x, axis, s.minimum, keep_dims, s)


@builtin
def argmax(input, axis, tie_break_left=True, keep_dims=False, _semantic=None):
    s = _semantic
    x = s.to_tensor(_unwrap(input))
    if x.dtype.is_bf16():
        x = s.cast(x, core.float32)
    return _with_indices(x, axis, keep_dims, True, bool(_unwrap(tie_break_left)), s)[1]


@builtin
def argmin(input, axis, tie_break_left=True, keep_dims=False, _semantic=None):
    s = _semantic
    x = s.to_tensor(_unwrap(input))
    if x.dtype.is_bf16():
        x = s.cast(x, core.float32)
    return _with_indices(x, axis, keep_dims, False, bool(_unwrap(tie_break_left)), s)[1]


@builtin
def cumsum(input, axis=0, reverse=False, dtype=None, _semantic=None):
    s = _semantic
    x = s.to_tensor(_unwrap(input))
    if x.dtype.is_bf16():
        x = s.cast(x, core.float32)
    out = _sum_dtype(x.dtype, dtype)
    if out is not None:
        x = s.cast(x, out)
    return s.associative_scan([x], _axis(axis), lambda a, b: [s.add(a[0], b[0])], bool(_unwrap(reverse)))[0]


@builtin
def cumprod(input, axis=0, reverse=False, _semantic=None):
    s = _semantic
    x = s.to_tensor(_unwrap(input))
    if x.dtype.is_bf16():
        x = s.cast(x, core.float32)
    return s.associative_scan([x], _axis(axis), lambda a, b: [s.mul(a[0], b[0])], bool(_unwrap(reverse)))[0]


@builtin
def cdiv(x, div, _semantic=None):
    """Ceiling division: (x + div - 1) // div."""
    x, div = _unwrap(x), _unwrap(div)
    if isinstance(x, int) and isinstance(div, int):
        return constexpr((x + div - 1) // div)
    s = _semantic
    return s.floordiv(s.sub(s.add(x, div), 1), div)


@builtin
def sigmoid(x, _semantic=None):
    s = _semantic
    x = s.to_tensor(_unwrap(x))
    from .math import exp
    return s.truediv(1.0, s.add(1.0, exp(s.minus(x), _semantic=s)))


@builtin
def softmax(x, dim=None, keep_dims=False, ieee_rounding=False, _semantic=None):
    s = _semantic
    x = s.to_tensor(_unwrap(x))
    from .math import exp
    axis = 0 if _unwrap(dim) is None else _unwrap(dim)
    z = s.sub(x, max(x, axis, keep_dims=True, _semantic=s))
    num = exp(z, _semantic=s)
    den = sum(num, axis, keep_dims=True, _semantic=s)
    return s.fdiv(num, den, bool(_unwrap(ieee_rounding)))


@builtin
def ravel(x, can_reorder=False, _semantic=None):
    return _semantic.reshape(x, [x.type.numel], bool(_unwrap(can_reorder)))


@builtin
def swizzle2d(i, j, size_i, size_j, size_g, _semantic=None):
    """Map (i, j) of a row-major grid to a grid whose rows are grouped by ``size_g`` (better L2 reuse)."""
    s = _semantic
    ij = s.add(s.mul(i, size_j), j)
    size_gj = s.mul(size_g, size_j)
    group_id = s.floordiv(ij, size_gj)
    off_i = s.mul(group_id, size_g)
    size_g2 = s.minimum(s.sub(size_i, off_i), size_g)
    ij = s.mod(ij, size_gj)
    new_i = s.add(off_i, s.mod(ij, size_g2))
    new_j = s.floordiv(ij, size_g2)
    return core.tuple_value([new_i, new_j])


@builtin
def interleave(a, b, _semantic=None):
    """Interleave the last dimension of two tensors: [a0, b0, a1, b1, ...]."""
    s = _semantic
    c = s.join(s.to_tensor(_unwrap(a)), s.to_tensor(_unwrap(b)))
    if len(c.shape) == 1:
        return c
    shape = [d.value for d in c.shape]
    return s.reshape(c, shape[:-2] + [shape[-2] * 2])


@builtin
def flip(x, dim=None, _semantic=None):
    """Reverse the order of elements along ``dim`` (default: the last)."""
    s = _semantic
    x = s.to_tensor(_unwrap(x))
    shape = [d.value for d in x.shape]
    dim = len(shape) - 1 if _unwrap(dim) is None else _unwrap(dim)
    if not -len(shape) <= dim < len(shape):
        raise CompileTimeError(f"flip dim {dim} is out of range for a tensor of rank {len(shape)}")
    dim %= len(shape)   # a negative dim counts from the last, as in torch.flip
    n = shape[dim]
    idx = s.sub(n - 1, s.arange(0, n))
    for d in range(len(shape)):
        if d != dim:
            idx = s.expand_dims(idx, d)
    idx = s.broadcast_impl_shape(idx, shape)
    return s.gather(x, idx, dim)
