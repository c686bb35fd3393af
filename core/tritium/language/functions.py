"""The builtin functions of the Triton language (``tl.load``, ``tl.dot``, ``tl.reduce``...)."""
from __future__ import annotations

from enum import IntEnum
from typing import Any

from . import core
from .core import CompileTimeError, _unwrap, _unwrap_shape, builtin, constexpr, tensor


class PropagateNan(IntEnum):
    NONE = 0x0000
    ALL = 0xFFFF


def _t(x: Any, s: Any) -> Any:
    return s.to_tensor(_unwrap(x)) if not isinstance(x, tensor) else x


def _axis(axis: Any) -> Any:
    axis = _unwrap(axis)
    if axis is not None and not isinstance(axis, int):
        raise CompileTimeError(f"axis must be a compile-time integer, got {axis!r}")
    return axis


@builtin
def program_id(axis, _semantic=None):
    """The index of this program along ``axis`` (0, 1 or 2) of the launch grid."""
    axis = _unwrap(axis)
    if not isinstance(axis, int):
        raise CompileTimeError("program_id's axis must be a compile-time integer")
    return _semantic.program_id(axis)


@builtin
def num_programs(axis, _semantic=None):
    """The number of programs along ``axis`` of the launch grid."""
    axis = _unwrap(axis)
    if not isinstance(axis, int):
        raise CompileTimeError("num_programs' axis must be a compile-time integer")
    return _semantic.num_programs(axis)


@builtin
def arange(start, end, _semantic=None):
    """``[start, start + 1, ..., end - 1]``; ``end - start`` must be a power of 2."""
    return _semantic.arange(_unwrap(start), _unwrap(end))


@builtin
def full(shape, value, dtype, _semantic=None):
    return _semantic.full(_unwrap_shape(shape), _unwrap(value), _unwrap(dtype))


@builtin
def zeros(shape, dtype, _semantic=None):
    return _semantic.full(_unwrap_shape(shape), 0, _unwrap(dtype))


@builtin
def zeros_like(input, _semantic=None):
    return _semantic.full([s.value for s in input.shape], 0, input.dtype)


@builtin
def broadcast(input, other, _semantic=None):
    return tuple(_semantic.broadcast_impl_value(_t(input, _semantic), _t(other, _semantic)))


@builtin
def broadcast_to(input, *shape, _semantic=None):
    if len(shape) == 1 and isinstance(_unwrap(shape[0]), (list, tuple, core.tuple_value)):
        shape = _unwrap(shape[0])
    return _semantic.broadcast_impl_shape(_t(input, _semantic), _unwrap_shape(shape))


@builtin
def expand_dims(input, axis, _semantic=None):
    input = _t(input, _semantic)
    axis = _unwrap(axis)
    axes = list(axis) if isinstance(axis, (list, tuple, core.tuple_value)) else [axis]
    axes = [_unwrap(a) for a in axes]
    rank = len(input.shape) + len(axes)
    for a in axes:
        if not -rank <= a < rank:
            raise CompileTimeError(f"expand_dims: invalid axis {a}; the result has rank {rank}, so the axis must be "
                                   f"in [{-rank}, {rank})")
    normalized = [a + rank if a < 0 else a for a in axes]
    if len(set(normalized)) != len(normalized):
        raise CompileTimeError(f"expand_dims received duplicate axes, normalized axes = {normalized}; name each new "
                               "axis once")
    for a in sorted(normalized):
        input = _semantic.expand_dims(input, a)
    return input


@builtin
def reshape(input, *shape, can_reorder=False, _semantic=None):
    if len(shape) == 1 and isinstance(_unwrap(shape[0]), (list, tuple, core.tuple_value)):
        shape = _unwrap(shape[0])
    return _semantic.reshape(_t(input, _semantic), _unwrap_shape(shape), bool(_unwrap(can_reorder)))


@builtin
def view(input, *shape, _semantic=None):
    if len(shape) == 1 and isinstance(_unwrap(shape[0]), (list, tuple, core.tuple_value)):
        shape = _unwrap(shape[0])
    return _semantic.reshape(_t(input, _semantic), _unwrap_shape(shape), True)


@builtin
def permute(input, *dims, _semantic=None):
    if len(dims) == 1 and isinstance(_unwrap(dims[0]), (list, tuple, core.tuple_value)):
        dims = _unwrap(dims[0])
    return _semantic.permute(input, [_unwrap(d) for d in dims])


@builtin
def trans(input, *dims, _semantic=None):
    """Transpose; with no dims, swap the last two dimensions."""
    if len(dims) == 1 and isinstance(_unwrap(dims[0]), (list, tuple, core.tuple_value)):
        dims = _unwrap(dims[0])
    dims = [_unwrap(d) for d in dims]
    if not dims:
        n = len(input.shape)
        if n < 2:
            raise CompileTimeError("trans needs a tensor of rank 2 or more")
        dims = list(range(n - 2)) + [n - 1, n - 2]
    return _semantic.permute(input, dims)


@builtin
def cat(input, other, can_reorder=False, _semantic=None):
    return _semantic.cat(input, other, _unwrap(can_reorder))


@builtin
def join(a, b, _semantic=None):
    return _semantic.join(_t(a, _semantic), _t(b, _semantic))


@builtin
def split(a, _semantic=None):
    return core.tuple_value(list(_semantic.split(a)))


@builtin
def where(condition, x, y, _semantic=None):
    return _semantic.where(_unwrap(condition), _unwrap(x), _unwrap(y))


@builtin
def minimum(x, y, propagate_nan: constexpr = PropagateNan.NONE, _semantic=None):
    return _semantic.minimum(_unwrap(x), _unwrap(y), _unwrap(propagate_nan))


@builtin
def maximum(x, y, propagate_nan: constexpr = PropagateNan.NONE, _semantic=None):
    return _semantic.maximum(_unwrap(x), _unwrap(y), _unwrap(propagate_nan))


@builtin
def clamp(x, min, max, propagate_nan: constexpr = PropagateNan.NONE, _semantic=None):
    return _semantic.clamp(_unwrap(x), _unwrap(min), _unwrap(max), _unwrap(propagate_nan))


@builtin
def cast(input, dtype, fp_downcast_rounding=None, bitcast=False, _semantic=None):
    input = _t(input, _semantic)
    dtype = _unwrap(dtype)
    if _unwrap(bitcast):
        return _semantic.bitcast(input, dtype)
    return _semantic.cast(input, dtype, _unwrap(fp_downcast_rounding))


# -- memory --------------------------------------------------------------------------------------

@builtin
def load(pointer, mask=None, other=None, boundary_check=(), padding_option="", cache_modifier="",
         eviction_policy="", volatile=False, _semantic=None):
    """Load a scalar, a block through a block of pointers, or a block through a block pointer."""
    mask = _unwrap(mask)
    other = _unwrap(other)
    if mask is not None and not isinstance(mask, tensor):
        mask = _semantic.to_tensor(mask)
    return _semantic.load(pointer, mask, other, boundary_check, _unwrap(padding_option),
                          _unwrap(cache_modifier), _unwrap(eviction_policy), _unwrap(volatile))


@builtin
def store(pointer, value, mask=None, boundary_check=(), cache_modifier="", eviction_policy="", _semantic=None):
    mask = _unwrap(mask)
    if mask is not None and not isinstance(mask, tensor):
        mask = _semantic.to_tensor(mask)
    return _semantic.store(pointer, _unwrap(value), mask, boundary_check, _unwrap(cache_modifier),
                           _unwrap(eviction_policy))


@builtin
def make_block_ptr(base, shape, strides, offsets, block_shape, order, _semantic=None):
    return _semantic.make_block_ptr(base, shape, strides, offsets, block_shape, order)


@core.must_use_result("Note that tl.advance does not have any side effects. To move the block pointer, you need "
                      "to assign the result of tl.advance to a variable.")
@builtin
def advance(base, offsets, _semantic=None):
    return _semantic.advance(base, offsets)


def _atomic(op: str):
    def fn(pointer, val, mask=None, sem=None, scope=None, _semantic=None):
        return _semantic.atomic_rmw(op, pointer, _unwrap(val), _unwrap(mask), _unwrap(sem), _unwrap(scope))
    fn.__name__ = f"atomic_{op}"
    fn.__doc__ = f"Atomically apply {op} at each address; return the old values."
    return builtin(fn)


atomic_add = _atomic("add")
atomic_max = _atomic("max")
atomic_min = _atomic("min")
atomic_and = _atomic("and")
atomic_or = _atomic("or")
atomic_xor = _atomic("xor")
atomic_xchg = _atomic("xchg")


@builtin
def atomic_cas(pointer, cmp, val, sem=None, scope=None, _semantic=None):
    return _semantic.atomic_cas(pointer, _unwrap(cmp), _unwrap(val), _unwrap(sem), _unwrap(scope))


# -- linear algebra ------------------------------------------------------------------------------

@builtin
def dot(input, other, acc=None, input_precision=None, allow_tf32=None, max_num_imprecise_acc=None,
        out_dtype=core.float32, _semantic=None):
    """Matrix product of two blocks (2-D, or 3-D batched), accumulated into ``acc``."""
    input_precision = _unwrap(input_precision)
    allow_tf32 = _unwrap(allow_tf32)
    if allow_tf32 is not None and input_precision is not None:
        raise CompileTimeError("pass only one of input_precision and allow_tf32")
    if allow_tf32 is not None:
        input_precision = "tf32" if allow_tf32 else "ieee"
    return _semantic.dot(input, other, _unwrap(acc), input_precision, _unwrap(max_num_imprecise_acc),
                         _unwrap(out_dtype))


# -- reductions and scans ------------------------------------------------------------------------

def _combine_with(fn: Any, _generator: Any):
    def combine(lhs, rhs):
        if _generator is None:
            raise CompileTimeError("a user combine function needs the code generator")
        return _generator.call_jit_function(fn, [*lhs, *rhs], {}, inline=True)
    return combine


def _keep_dims(results, axis, input_shape, keep, _semantic):
    if not _unwrap(keep):
        return results
    out = []
    for r in results:
        if axis is None:
            for _ in range(len(input_shape)):
                r = _semantic.expand_dims(r, 0)
        else:
            r = _semantic.expand_dims(r, axis if axis >= 0 else axis + len(input_shape))
        out.append(r)
    return out


@builtin
def reduce(input, axis, combine_fn, keep_dims=False, _semantic=None, _generator=None):
    """Reduce ``input`` (a tensor or tuple of tensors) along ``axis`` with a @jit ``combine_fn``."""
    single = isinstance(input, tensor)
    inputs = [input] if single else list(_unwrap(input))
    axis = _axis(axis)
    shape = inputs[0].shape
    res = _semantic.reduction(inputs, axis, _combine_with(combine_fn, _generator))
    res = _keep_dims(list(res), axis, shape, keep_dims, _semantic)
    return res[0] if single else core.tuple_value(res)


@builtin
def associative_scan(input, axis, combine_fn, reverse=False, _semantic=None, _generator=None):
    single = isinstance(input, tensor)
    inputs = [input] if single else list(_unwrap(input))
    res = _semantic.associative_scan(inputs, _axis(axis), _combine_with(combine_fn, _generator),
                                     bool(_unwrap(reverse)))
    return res[0] if single else core.tuple_value(list(res))


@builtin
def histogram(input, num_bins, mask=None, _semantic=None):
    return _semantic.histogram(input, _unwrap(num_bins), _unwrap(mask))


@builtin
def gather(src, index, axis, _semantic=None):
    return _semantic.gather(src, index, _unwrap(axis))


# -- debugging -----------------------------------------------------------------------------------

@builtin
def static_assert(cond, msg="", _semantic=None):
    """Fail compilation when the compile-time condition is false."""
    if not _unwrap(cond):
        raise CompileTimeError(f"static_assert failed: {_unwrap(msg)}" if _unwrap(msg) else "static_assert failed")


@builtin
def static_print(*values, sep=" ", end="\n", file=None, flush=False, _semantic=None):
    """Print compile-time values while compiling."""
    print(*[_unwrap(v) for v in values], sep=_unwrap(sep), end=_unwrap(end), file=file, flush=flush)


@builtin
def device_print(prefix, *args, hex=False, _semantic=None):
    """Print values from the running kernel, one line per element, prefixed with the program id."""
    prefix = _unwrap(prefix)
    if not isinstance(prefix, str):
        raise CompileTimeError("device_print's first argument must be a string prefix")
    return _semantic.device_print(prefix, [_t(a, _semantic) for a in args], bool(_unwrap(hex)))


@builtin
def device_assert(cond, msg="", mask=None, _semantic=None):
    """Abort the kernel with ``msg`` where ``cond`` is false (kept when the kernel is compiled with debug)."""
    return _semantic.device_assert(_t(cond, _semantic), _unwrap(msg), _unwrap(mask))


@builtin
def assume(cond, _semantic=None):
    return _semantic.assume(_t(cond, _semantic))


@builtin
def debug_barrier(_semantic=None):
    return _semantic.debug_barrier()


@builtin
def multiple_of(input, values, _semantic=None):
    values = _unwrap(values)
    values = [values] if isinstance(values, int) else list(values)
    return _semantic.multiple_of(input, values)


@builtin
def max_contiguous(input, values, _semantic=None):
    values = _unwrap(values)
    values = [values] if isinstance(values, int) else list(values)
    return _semantic.max_contiguous(input, values)


@builtin
def max_constancy(input, values, _semantic=None):
    values = _unwrap(values)
    values = [values] if isinstance(values, int) else list(values)
    return _semantic.max_constancy(input, values)


@builtin
def inline_asm_elementwise(asm, constraints, args, dtype, is_pure, pack, _semantic=None):
    """Run target assembly ``asm`` (PTX on NVIDIA GPUs, AMDGCN on AMD ones) on every group of ``pack`` elements of
    the broadcast ``args``. ``constraints`` are LLVM inline-asm constraints, outputs first (``"=r,r,r"``); operand
    ``$i`` is a register: an element of 32 bits or more each, narrower elements of one group packed into 32-bit
    registers (``pack=4`` on int8: one register holds four). ``dtype``: the result's dtype, or a sequence of them
    for several results (a tuple is returned then). ``is_pure=False`` keeps it however its results are used. GPU
    backends only: the CPU backend and the interpreter refuse it."""
    several = _sequence(_unwrap(dtype))
    dtypes = [_unwrap(d) for d in several] if several is not None else [_unwrap(dtype)]
    for d in dtypes:
        if not isinstance(d, core.dtype):
            raise CompileTimeError(f"inline_asm_elementwise: dtype must be a tl dtype or a sequence of them, got {d!r}")
    listed = _sequence(_unwrap(args))
    args = listed if listed is not None else [args]
    out = _semantic.inline_asm_elementwise(str(_unwrap(asm)), str(_unwrap(constraints)),
                                           [_unwrap(a) for a in args], dtypes, bool(_unwrap(is_pure)),
                                           int(_unwrap(pack)))
    return tuple(out) if several is not None else out[0]


def _sequence(x: Any) -> Any:
    """A Python sequence or an in-kernel tuple as a list; None for anything else."""
    if isinstance(x, (list, tuple)):
        return list(x)
    if isinstance(x, core.tuple_value):
        return list(x.values)
    return None
