"""``tl.sort``, ``tl.topk`` and ``tl.bitonic_merge``: bitonic networks along the last dimension.

The networks are Triton's, compare-and-swap for compare-and-swap, so results agree bit for bit (ties,
signed zeros and NaNs included). Triton finds each element's partner by reshaping to a hypercube and
xor-reducing one axis; here the partner is read with ``gather`` at ``index ^ 2**j``, which gives the same
values without rank-10 intermediate tensors.
"""
from __future__ import annotations

from typing import Any

from . import core
from .core import CompileTimeError, _unwrap, builtin


def _log2(n: int) -> int:
    k = 0
    while n > 1:
        n >>= 1
        k += 1
    return k


def _last_dim(x: Any, dim: Any) -> int:
    rank = len(x.shape)
    if rank == 0:
        raise CompileTimeError("sorting needs a block, got a scalar")
    d = _unwrap(dim)
    d = rank - 1 if d is None else d
    if d != rank - 1:
        raise CompileTimeError(f"sorting works along the last dimension only (dim={rank - 1} or None), got dim={d}")
    return d


class _Net:
    """Index helpers for one tensor shape: the column index broadcast to the full shape."""

    def __init__(self, s: Any, shape: list[int]) -> None:
        self.s = s
        self.shape = shape
        col = s.arange(0, shape[-1])
        for _ in range(len(shape) - 1):
            col = s.expand_dims(col, 0)
        self.col = s.broadcast_impl_shape(col, shape)

    def bit(self, j: int) -> Any:
        s = self.s
        return s.not_equal(s.and_(s.shr(self.col, j), 1), 0)

    def partner(self, x: Any, j: int) -> Any:
        s = self.s
        return s.gather(x, s.xor_(self.col, 1 << j), len(self.shape) - 1)


def _compare_and_swap(net: _Net, x: Any, flip: Any, j: int) -> Any:
    s = net.s
    y = net.partner(x, j)
    right = net.bit(j)
    swap_if = s.xor_(flip, right) if not isinstance(flip, bool) else (s.not_(right) if flip else right)
    return s.where(s.not_equal(s.greater_than(x, y), swap_if), y, x)


def _merge(s: Any, x: Any, stage: int, order: Any) -> Any:
    """Triton's ``_bitonic_merge_hypercube``: order 0 ascending, 1 descending, 2 alternating by ``stage``."""
    net = _Net(s, [d.value for d in x.shape])
    flip = net.bit(stage) if order == 2 else bool(order)
    for i in range(stage):
        x = _compare_and_swap(net, x, flip, stage - 1 - i)
    return x


def _halve(s: Any, x: Any, log_k: int, descending: bool) -> Any:
    """Max (or min) of the two halves of every run of ``2 ** (log_k + 1)`` columns, as ``tl.max`` would."""
    shape = [d.value for d in x.shape]
    half = shape[-1] // 2
    out_shape = shape[:-1] + [half]
    c = s.arange(0, half)
    low = s.and_(c, (1 << log_k) - 1)
    first = s.or_(s.shl(s.shr(c, log_k), log_k + 1), low)
    second = s.or_(first, 1 << log_k)
    idx = []
    for i in (first, second):
        for _ in range(len(shape) - 1):
            i = s.expand_dims(i, 0)
        idx.append(s.broadcast_impl_shape(i, out_shape))
    a, b = (s.gather(x, i, len(shape) - 1) for i in idx)
    if a.dtype.primitive_bitwidth < 32:
        # tl.max / tl.min reduce narrow types in 32 bits, and so does Triton's top-k
        wide = core.float32 if a.dtype.is_floating() else core.int32
        a, b = s.cast(a, wide), s.cast(b, wide)
    return s.maximum(a, b) if descending else s.minimum(a, b)


def _sort_impl(s: Any, x: Any, k: Any, dim: Any, descending: Any) -> Any:
    x = s.to_tensor(_unwrap(x))
    _last_dim(x, dim)
    descending = bool(_unwrap(descending))
    n = x.shape[-1].value
    log_n = _log2(n)
    k = _unwrap(k)
    if k is not None and (not isinstance(k, int) or k < 1 or k > n):
        raise CompileTimeError(f"k must be a compile-time integer in [1, {n}], got {k!r}")
    log_k = log_n if k is None else _log2(k)
    for i in range(1, log_k + 1):
        x = _merge(s, x, i, 2 if i < log_n else descending)
    for i in range(log_k + 1, log_n + 1):
        x = _halve(s, x, log_k, descending)
        x = _merge(s, x, log_k, 2 if i < log_n else descending)
    return x


@builtin
def sort(x, dim=None, descending=core.CONSTEXPR_0, _semantic=None):
    """Sort along the last dimension (ascending unless ``descending``)."""
    return _sort_impl(_semantic, x, None, dim, descending)


@builtin
def topk(x, k, dim=None, _semantic=None):
    """The ``k`` largest elements along the last dimension, largest first (``k`` is rounded down to a power
    of 2, as in Triton)."""
    return _sort_impl(_semantic, x, k, dim, True)


@builtin
def bitonic_merge(x, dim=None, descending=core.CONSTEXPR_0, _semantic=None):
    """Merge a bitonic sequence along the last dimension into sorted order."""
    s = _semantic
    x = s.to_tensor(_unwrap(x))
    _last_dim(x, dim)
    log_n = _log2(x.shape[-1].value)
    return _merge(s, x, log_n, bool(_unwrap(descending)))
