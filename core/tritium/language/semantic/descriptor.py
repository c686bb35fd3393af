"""Tensor descriptors: creation, block loads and stores, atomic reductions, row gathers and scatters."""
from __future__ import annotations

from typing import Any, Sequence

from .. import core as tl
from ..core import CompileTimeError
from ..descriptor import tensor_descriptor, tensor_descriptor_base
from .ops import Part

T = tl.tensor

#: the capability of a target whose tensor-memory unit reduces fp16/bf16 blocks by min and max (as Triton allows
#: them with native TMA only: elsewhere they are refused, as Triton's fallback refuses them)
NATIVE_HALF_MINMAX = "descriptor-reduce-half-minmax"
_REDUCE_DTYPES = {
    "add": (tl.uint32, tl.int32, tl.uint64, tl.float32, tl.float16, tl.bfloat16),
    "min": (tl.uint32, tl.int32, tl.uint64, tl.int64),
    "max": (tl.uint32, tl.int32, tl.uint64, tl.int64),
    "and": (tl.uint32, tl.int32, tl.uint64, tl.int64),
    "or": (tl.uint32, tl.int32, tl.uint64, tl.int64),
    "xor": (tl.uint32, tl.int32, tl.uint64, tl.int64),
}


def _items(x: Any) -> list[Any]:
    x = tl._unwrap(x)
    if isinstance(x, tl.tuple_value):
        return list(x.values)
    if isinstance(x, (list, tuple)):
        return list(x)
    return [x]


class Descriptors(Part):
    def _scalar_ints(self, items: Any, ty: tl.dtype, what: str) -> list[T]:
        out = []
        for it in _items(items):
            t = self.sem.to_tensor(tl._unwrap(it))
            if t.type.is_block() or not t.dtype.is_int():
                raise CompileTimeError(f"{what} must be integer scalars, got {t.type}")
            out.append(self.sem.cast(t, ty))
        return out

    def make_tensor_descriptor(self, base: Any, shape: Any, strides: Any, block_shape: Sequence[int],
                               padding_option: str = "zero") -> tensor_descriptor:
        if not isinstance(base, T) or not base.type.is_ptr() or base.type.element_ty.is_block():
            raise CompileTimeError("make_tensor_descriptor's base must be a pointer to scalars (a tensor argument)")
        shape_l, strides_l = _items(shape), _items(strides)
        ndim = len(shape_l)
        if not 1 <= ndim <= 5:
            raise CompileTimeError(f"a tensor descriptor has 1 to 5 dimensions, got {ndim}")
        if len(strides_l) != ndim:
            raise CompileTimeError(f"make_tensor_descriptor got {ndim} shape entries but {len(strides_l)} strides")
        if len(block_shape) != ndim:
            raise CompileTimeError(f"make_tensor_descriptor got {ndim} shape entries but a block_shape of "
                                   f"{len(block_shape)} dimensions")
        elt = base.type.element_ty
        if elt == tl.int1:
            raise CompileTimeError("tensor descriptors of int1 are not supported; use int8 data")
        contig = block_shape[-1] * elt.primitive_bitwidth // 8
        if contig < 16:
            raise CompileTimeError(f"Descriptor block shape must have at least 16 bytes in the last dimension, got "
                                   f"{block_shape[-1]} x {elt} = {contig} bytes; widen block_shape[-1]")
        last = tl._unwrap(strides_l[-1])
        if isinstance(last, int) and last != 1:
            raise CompileTimeError(f"the last stride of a tensor descriptor must be 1 (contiguous), got {last}")
        padding = tl._unwrap(padding_option) or "zero"
        if padding not in ("zero", "nan"):
            raise CompileTimeError(f"padding_option {padding!r} is not one of 'zero', 'nan'")
        if padding == "nan" and elt.is_int():
            raise CompileTimeError("padding_option='nan' is not available for integer data")
        self.sem._check_shape(block_shape)
        shape_t = self._scalar_ints(shape_l, tl.int32, "descriptor shape entries")
        strides_t = self._scalar_ints(strides_l, tl.int64, "descriptor strides")
        block = tl.block_type(elt, list(block_shape))
        from ..descriptor import tensor_descriptor_base_type
        b = self.builder
        ty = self.sem.ir_type(tensor_descriptor_base_type(block))
        op = b.tt("make_tensor_descriptor", {"base": base.handle, "shape": [s.handle for s in shape_t],
                                             "strides": [s.handle for s in strides_t]}, [ty],
                  {"padding": b.str_attr(padding)})
        return tensor_descriptor(op.result, shape_t, strides_t, block)

    def _desc_offsets(self, desc: Any, offsets: Any) -> list[Any]:
        if not isinstance(desc, tensor_descriptor_base):
            raise CompileTimeError(f"expected a tensor descriptor (tl.make_tensor_descriptor), got {desc!r}")
        offs = _items(offsets)
        ndim = len(desc.block_shape)
        if len(offs) != ndim:
            raise CompileTimeError(f"this descriptor has {ndim} dimensions but {len(offs)} offsets were given")
        return [t.handle for t in self._scalar_ints(offs, tl.int32, "descriptor offsets")]

    def descriptor_load(self, desc: Any, offsets: Any, cache_modifier: str = "", eviction_policy: str = "") -> T:
        idx = self._desc_offsets(desc, offsets)
        block = desc.block_type
        op = self.builder.tt("descriptor_load", {"desc": desc.handle, "indices": idx},
                             [self.sem.ir_type(block)])
        return T(op.result, block)

    def _desc_value(self, desc: Any, value: Any) -> T:
        value = self.sem.to_tensor(value)
        if not value.type.is_block() or list(value.type.shape) != desc.block_shape:
            shape = list(value.type.shape) if value.type.is_block() else []
            raise CompileTimeError(f"the value of shape {shape} does not match the descriptor's block shape "
                                   f"{desc.block_shape}")
        return self.sem.cast(value, desc.dtype)

    def descriptor_store(self, desc: Any, value: Any, offsets: Any) -> T:
        idx = self._desc_offsets(desc, offsets)
        value = self._desc_value(desc, value)
        self.builder.tt("descriptor_store", {"desc": desc.handle, "src": value.handle, "indices": idx}, [])
        return T(None, tl.void)

    def descriptor_reduce(self, kind: str, desc: Any, value: Any, offsets: Any) -> T:
        idx = self._desc_offsets(desc, offsets)
        native = kind in ("min", "max") and desc.dtype in (tl.float16, tl.bfloat16) and \
            NATIVE_HALF_MINMAX in self.sem.capabilities
        if desc.dtype not in _REDUCE_DTYPES[kind] and not native:
            raise CompileTimeError(f"descriptor atomic_{kind} does not support {desc.dtype}; supported: "
                                   f"{', '.join(str(d) for d in _REDUCE_DTYPES[kind])}")
        value = self._desc_value(desc, value)
        if kind in ("min", "max") and desc.dtype.is_int_unsigned():
            kind = "u" + kind
        if kind == "add" and desc.dtype.is_floating():
            kind = "fadd"
        b = self.builder
        b.tt("descriptor_reduce", {"desc": desc.handle, "src": value.handle, "indices": idx}, [],
             {"kind": b.str_attr(kind)})
        return T(None, tl.void)

    def _check_gather(self, desc: Any, x_offsets: Any, what: str) -> None:
        if not isinstance(desc, tensor_descriptor_base):
            raise CompileTimeError(f"descriptor {what} needs a tensor descriptor, got {desc!r}")
        if len(desc.block_shape) != 2 or desc.block_shape[0] != 1:
            raise CompileTimeError(f"descriptor {what} needs a 2-D descriptor whose block has one row, got block "
                                   f"shape {desc.block_shape}")
        if not isinstance(x_offsets, T) or not x_offsets.type.is_block() or len(x_offsets.type.shape) != 1 \
                or not x_offsets.dtype.is_int():
            raise CompileTimeError(f"descriptor {what} needs a 1-D integer block of row offsets")
        if x_offsets.type.shape[0] < 8:
            raise CompileTimeError(f"descriptor {what} needs at least 8 rows, got {x_offsets.type.shape[0]}")
        min_cols = 32 // desc.dtype.primitive_bitwidth * 8
        if desc.block_shape[1] < min_cols:
            raise CompileTimeError(f"descriptor {what} of {desc.dtype} needs at least {min_cols} columns, got "
                                   f"{desc.block_shape[1]}")

    def descriptor_gather(self, desc: Any, x_offsets: Any, y_offset: Any) -> T:
        self._check_gather(desc, x_offsets, "gather")
        y = self._scalar_ints([y_offset], tl.int32, "the column offset")[0]
        ty = tl.block_type(desc.dtype, [x_offsets.type.shape[0], desc.block_shape[1]])
        op = self.builder.tt("descriptor_gather", {"desc": desc.handle, "x_offsets": x_offsets.handle,
                                                   "y_offset": y.handle}, [self.sem.ir_type(ty)])
        return T(op.result, ty)

    def descriptor_scatter(self, desc: Any, value: Any, x_offsets: Any, y_offset: Any) -> T:
        self._check_gather(desc, x_offsets, "scatter")
        y = self._scalar_ints([y_offset], tl.int32, "the column offset")[0]
        value = self.sem.to_tensor(value)
        want = [x_offsets.type.shape[0], desc.block_shape[1]]
        if not value.type.is_block() or list(value.type.shape) != want:
            raise CompileTimeError(f"descriptor scatter needs a value of shape {want}")
        value = self.sem.cast(value, desc.dtype)
        self.builder.tt("descriptor_scatter", {"desc": desc.handle, "src": value.handle, "x_offsets": x_offsets.handle,
                                               "y_offset": y.handle}, [])
        return T(None, tl.void)
