"""Host-side tensor descriptors (``triton.tools.tensor_descriptor.TensorDescriptor``).

A kernel parameter given a ``TensorDescriptor`` receives the descriptor ``tl.make_tensor_descriptor`` would
build from the same base, shape, strides, block shape and padding: ``desc.load([i, j])``,
``desc.store(...)``, ``desc.shape``, ``desc.strides``, atomics, gather and scatter all work on it. The
rules are Triton's (they come from NVIDIA's TMA unit, and are kept on every backend so that code moves
between backends unchanged): rank 1 to 5, a 16-byte aligned base, strides other than the last a multiple
of 16 bytes, a last stride of 1, a positive shape, power-of-two block dimensions, padding ``"zero"`` or
``"nan"`` (floating-point data only).
"""
from __future__ import annotations

import math
import operator
from dataclasses import dataclass
from typing import Any, List

from ..runtime.specialize import _HANDLERS, dtype_name, specialize_arg

#: the largest block Triton allows (elements)
_MAX_NUMEL = 1 << 20
_POW2 = frozenset(1 << i for i in range(64))
_FAKE = ("FakeTensor", "FunctionalTensor")
_index = operator.index
_BYTES = {"fp8e4nv": 1, "fp8e4b8": 1, "fp8e4b15": 1, "fp8e5": 1, "fp8e5b16": 1, "fp16": 2, "bf16": 2,
          "fp32": 4, "fp64": 8, "i1": 1, "i8": 1, "i16": 2, "i32": 4, "i64": 8, "u8": 1, "u16": 2, "u32": 4,
          "u64": 8}


@dataclass
class TensorDescriptor:
    base: Any
    shape: List[int]
    strides: List[int]
    block_shape: List[int]
    padding: str = "zero"

    def __post_init__(self) -> None:
        base = self.base
        h = _HANDLERS.get(type(base))   # specialize_arg's first step, without its frame (a descriptor per call)
        k, addr = h(base, True) if h is not None else (("",), None)
        if k[0] != "*":
            k, addr = _base_key(self, True, True)   # raises where it is not an array
        checked(self, k, addr)          # remembered: the first launch does not check again

    @staticmethod
    def from_tensor(tensor: Any, block_shape: List[int], padding: str = "zero") -> "TensorDescriptor":
        """A descriptor of all of ``tensor`` (a torch tensor or a numpy array), read in blocks of
        ``block_shape``."""
        if callable(getattr(tensor, "stride", None)):
            strides = list(tensor.stride())
        else:  # numpy counts strides in bytes
            size = tensor.dtype.itemsize
            if any(s % size for s in tensor.strides):
                raise ValueError(f"TensorDescriptor.from_tensor: strides {tensor.strides} (bytes) are not whole "
                                 "elements")
            strides = [s // size for s in tensor.strides]
        return TensorDescriptor(tensor, list(tensor.shape), strides, list(block_shape), padding)


def _ints(values: Any, what: str) -> tuple[int, ...]:
    # map() in C, where a generator expression cost ~4k instructions a call (examples/08 makes three
    # descriptors per matmul call, each checking three lists)
    try:
        return tuple(map(int, map(_index, values)))
    except TypeError:
        raise TypeError(f"TensorDescriptor {what} must be integers, got {values!r}") from None


def validate(d: Any, dtype: str = "", addr: Any = None) -> tuple[tuple, tuple, tuple, str]:
    """(shape, strides, block shape, padding) of ``d`` after checking Triton's rules; ``dtype`` and ``addr``
    are the base's element type name and address when the caller has them already. Written for few bytecodes
    (C calls over loops): examples/08 makes three descriptors in every call."""
    if not dtype:
        k, addr = specialize_arg(d.base)
        if k[0] != "*":
            raise TypeError(f"a TensorDescriptor's base must be a tensor or an array, got {type(d.base).__name__}")
        dtype = dtype_name(k[1])
    try:
        shape, strides = tuple(map(int, map(_index, d.shape))), tuple(map(int, map(_index, d.strides)))
        block = tuple(map(int, map(_index, d.block_shape)))
    except TypeError:   # say which
        _ints(d.shape, "shape entries"), _ints(d.strides, "strides"), _ints(d.block_shape, "block_shape entries")
        raise
    rank = len(shape)
    if not 1 <= rank <= 5:
        raise ValueError(f"a TensorDescriptor has 1 to 5 dimensions, got shape {list(shape)}")
    if len(strides) != rank or len(block) != rank:
        raise ValueError(f"TensorDescriptor rank mismatch: shape {list(shape)}, strides {list(strides)}, "
                         f"block_shape {list(block)}")
    if (type(addr) is not int or addr & 15) and type(d.base).__name__ not in _FAKE:
        raise ValueError(f"a TensorDescriptor's base must be 16-byte aligned (address {addr:#x})")
    size = _BYTES.get(dtype, 1)
    # every outer stride a multiple of 16 bytes <=> their gcd is (gcd() of none is 0)
    if math.gcd(*strides[:-1]) * size % 16:
        raise ValueError(f"TensorDescriptor strides other than the last must be multiples of 16 bytes, got "
                         f"{list(strides)} ({dtype}, {size} bytes per element)")
    if strides[-1] != 1:
        raise ValueError(f"the last stride of a TensorDescriptor must be 1 (contiguous), got {list(strides)}")
    if min(shape) <= 0 or max(shape) >= 2**31:
        raise ValueError(f"TensorDescriptor shape entries must be positive int32 values, got {list(shape)}")
    if not _POW2.issuperset(block):
        i = next(i for i, b in enumerate(block) if b not in _POW2)
        raise ValueError(f"TensorDescriptor block_shape entries must be powers of 2, got {list(block)} "
                         f"(entry {i})")
    numel = math.prod(block)
    if numel > _MAX_NUMEL:
        raise ValueError(f"a TensorDescriptor block has at most {_MAX_NUMEL} elements, got {numel}")
    padding = d.padding
    if padding != "zero" and (padding != "nan" or not dtype.startswith(("fp", "bf"))):
        if padding not in ("zero", "nan"):
            raise ValueError(f"TensorDescriptor padding must be 'zero' or 'nan', got {padding!r}")
        raise ValueError(f"TensorDescriptor padding 'nan' needs floating-point data, got {dtype}")
    return shape, strides, block, padding


def _base_key(d: Any, *flags: bool) -> tuple[tuple, Any]:
    """The specialization key and address of ``d``'s base (``flags`` as specialize_arg's), which must be an array."""
    k, addr = specialize_arg(d.base, *flags)
    if k[0] != "*":
        raise TypeError(f"a TensorDescriptor's base must be a tensor or an array, got {type(d.base).__name__}")
    return k, addr


def _seen(d: Any, k: tuple, addr: Any) -> Any:
    """What a descriptor's check and launch key depend on: its base's key and address, and its fields."""
    try:
        return (k, addr, type(d.base), tuple(d.shape), tuple(d.strides), tuple(d.block_shape), d.padding)
    except TypeError:       # fields that are not sequences (validate says what is wrong)
        return None


def _key(k: tuple, addr: Any, out: tuple, align: bool) -> tuple[tuple, tuple]:
    shape, strides, block, padding = out
    # rows of a multiple of 16 elements end on a 16-byte boundary: specialized as an integer argument is, so
    # stores through the copy engine need no run-time check of the rows' end where it holds
    rows16 = bool(align) and shape[-1] % 16 == 0
    return ("TD", k[1], k[2], block, padding, rows16), (addr, *shape, *strides[:-1])


def checked(d: Any, k: tuple, addr: Any) -> tuple[tuple, tuple, tuple, str]:
    """``validate(d)`` for a base of key ``k`` (specialize_arg's) at ``addr``, skipped when ``d``'s fields are
    those it last passed with. The checks cost ~10 us a descriptor on the host, inside a kernel's launch (a
    3-descriptor batched matmul of ~90 us paid them three times), and a descriptor made for each call paid them
    twice. The memo also holds the launch key and values of those fields (``descriptor_key``)."""
    seen = _seen(d, k, addr)
    memo = getattr(d, "_tritium_checked", None)
    if seen is not None and memo is not None and memo[0] == seen:
        return memo[1]
    out = validate(d, dtype_name(k[1]), addr)
    if seen is not None:
        try:
            d._tritium_checked = (seen, out, _key(k, addr, out, True))
        except AttributeError:      # a descriptor type without instance attributes: checked every launch
            pass
    return out


def descriptor_key(d: Any, align: bool = True) -> tuple[tuple, tuple]:
    """(key entry, run-time value) of a host ``TensorDescriptor``; re-checks what its constructor checked
    where its fields were reassigned or changed in place since."""
    base = d.base
    h = _HANDLERS.get(type(base))   # specialize_arg's first step, without its frame: this runs every launch
    if h is not None:
        k, addr = h(base, True)
        if k[0] != "*":
            k, addr = _base_key(d, True, True)      # raises, naming the type
    else:
        k, addr = _base_key(d, True, True)
    memo = getattr(d, "_tritium_checked", None)
    if memo is not None and align:
        try:
            if memo[0] == (k, addr, type(base), tuple(d.shape), tuple(d.strides), tuple(d.block_shape), d.padding):
                return memo[2]
        except TypeError:   # fields that are not sequences: checked() says what is wrong
            pass
    return _key(k, addr, checked(d, k, addr), align)


# launches find the handler by the argument's exact type, as for arrays
_HANDLERS[TensorDescriptor] = descriptor_key
