"""Creation and shape manipulation: arange, full, splat, broadcast, reshape, permute, cat, join, split."""
from __future__ import annotations

from typing import Any, Sequence

from .. import core as tl
from ..core import CompileTimeError
from .ops import Part

T = tl.tensor


def _shape(t: T) -> list[int]:
    return list(t.type.shape) if t.type.is_block() else []


class Shapes(Part):
    def program_id(self, axis: int) -> T:
        if axis not in (0, 1, 2):
            raise CompileTimeError(f"program_id axis must be 0, 1, or 2 but got {axis}")
        return T(self.builder.get_program_id(axis), tl.int32)

    def num_programs(self, axis: int) -> T:
        if axis not in (0, 1, 2):
            raise CompileTimeError(f"num_programs axis must be 0, 1, or 2 but got {axis}")
        return T(self.builder.get_num_programs(axis), tl.int32)

    def arange(self, start: Any, end: Any) -> T:
        start, end = tl._unwrap(start), tl._unwrap(end)
        if not isinstance(start, int) or not isinstance(end, int):
            raise CompileTimeError("arange's arguments must be compile-time integers: declare the parameter as "
                                   "`name: tl.constexpr` (or use a constant); block sizes cannot depend on run-time "
                                   "values")
        if (start >> 31) not in (0, -1) or (end >> 31) not in (0, -1):
            raise CompileTimeError("arange's bounds must fit in int32")
        if end <= start:
            raise CompileTimeError(f"arange's end ({end}) must be greater than its start ({start})")
        n = end - start
        if n & (n - 1):
            raise CompileTimeError("arange's range must be a power of 2",
                                   f"got {end} - {start} = {n}: round it up (triton.next_power_of_2) and mask the "
                                   "extra elements")
        if n > tl.TRITON_MAX_TENSOR_NUMEL:
            raise CompileTimeError(f"arange of {n} elements exceeds the limit of {tl.TRITON_MAX_TENSOR_NUMEL}")
        return T(self.builder.make_range(start, end), tl.block_type(tl.int32, [n]))

    def _check_shape(self, shape: Sequence[int]) -> list[int]:
        out = []
        numel = 1
        for i, s in enumerate(shape):
            s = tl._unwrap(s)
            if not isinstance(s, int):
                raise CompileTimeError(f"shape entries must be compile-time integers, got {s!r}")
            if s <= 0 or s & (s - 1):
                raise CompileTimeError(f"Shape element {i} must be a power of 2",
                                       f"the shape is {[tl._unwrap(d) for d in shape]}: round it up "
                                       "(triton.next_power_of_2) and mask the extra elements")
            numel *= s
            out.append(s)
        if numel > tl.TRITON_MAX_TENSOR_NUMEL:
            raise CompileTimeError(f"a tensor of shape {out} has {numel} elements, more than the limit "
                                   f"of {tl.TRITON_MAX_TENSOR_NUMEL}")
        return out

    def full(self, shape: Sequence[int], value: Any, dtype: tl.dtype) -> T:
        value = tl._unwrap(value)
        if isinstance(value, T):
            if value.type.is_block():
                raise CompileTimeError("full's value must be a scalar")
            scalar = self.sem.cast(value, dtype)
        else:
            scalar = self.sem.scalar_constant(value, dtype)
        shape = self._check_shape(shape)
        return self.splat(scalar, shape) if shape else scalar

    def splat(self, value: T, shape: Sequence[int]) -> T:
        if value.type.is_block():
            raise CompileTimeError("cannot splat a block")
        if not shape:
            return value
        ty = tl.block_type(value.dtype, list(shape))
        return T(self.builder.splat(value.handle, self.sem.ir_type(ty)), ty)

    def broadcast_impl_shape(self, x: T, shape: Sequence[int]) -> T:
        shape = list(shape)
        if not x.type.is_block():
            return self.splat(x, shape)
        src = _shape(x)
        if len(src) != len(shape):
            raise CompileTimeError(f"cannot broadcast a tensor of shape {src} to shape {shape}: rank mismatch")
        if src == shape:
            return x
        for i, (s, d) in enumerate(zip(src, shape)):
            if s != d and s != 1:
                raise CompileTimeError(f"cannot broadcast shape {src} to {shape}: dimension {i} is {s}, "
                                       f"and only size-1 dimensions can be expanded")
        ty = tl.block_type(x.type.scalar, shape)
        return T(self.builder.broadcast(x.handle, self.sem.ir_type(ty)), ty)

    def broadcast_impl_value(self, lhs: T, rhs: T) -> tuple[T, T]:
        lb, rb = lhs.type.is_block(), rhs.type.is_block()
        if lb and not rb:
            return lhs, self.splat(rhs, _shape(lhs))
        if rb and not lb:
            return self.splat(lhs, _shape(rhs)), rhs
        if not lb:
            return lhs, rhs
        ls, rs = _shape(lhs), _shape(rhs)
        while len(ls) < len(rs):
            lhs = self.expand_dims(lhs, 0)
            ls = _shape(lhs)
        while len(rs) < len(ls):
            rhs = self.expand_dims(rhs, 0)
            rs = _shape(rhs)
        out = []
        for i, (a, b) in enumerate(zip(ls, rs)):
            if a == 1:
                out.append(b)
            elif b == 1 or a == b:
                out.append(a)
            else:
                raise CompileTimeError(f"incompatible shapes {ls} and {rs}: dimension {i} is {a} on one side "
                                       f"and {b} on the other (sizes must match or be 1)")
        return self.broadcast_impl_shape(lhs, out), self.broadcast_impl_shape(rhs, out)

    def broadcast_tensors(self, *inputs: T) -> list[T]:
        if not inputs:
            return []
        head, *tail = inputs
        for i, item in enumerate(tail):
            head, tail[i] = self.broadcast_impl_value(head, item)
        for i in range(len(tail)):
            head, tail[i] = self.broadcast_impl_value(head, tail[i])
        return [head, *tail]

    def expand_dims(self, x: T, axis: int) -> T:
        shape = _shape(x)
        axis = tl._unwrap(axis)
        if axis < 0:
            axis += len(shape) + 1
        if not 0 <= axis <= len(shape):
            raise CompileTimeError(f"expand_dims axis {axis} is out of range for a tensor of rank {len(shape)}")
        shape.insert(axis, 1)
        if not x.type.is_block():
            return self.splat(x, shape)
        ty = tl.block_type(x.type.scalar, shape)
        return T(self.builder.expand_dims(x.handle, self.sem.ir_type(ty), axis), ty)

    def reshape(self, x: T, shape: Sequence[int], can_reorder: bool = False) -> T:
        shape = [tl._unwrap(s) for s in shape]
        numel = 1
        for s in shape:
            numel *= s
        if x.type.numel if x.type.is_block() else 1 != numel:
            pass
        src_numel = x.type.numel if x.type.is_block() else 1
        if src_numel != numel:
            raise CompileTimeError(f"reshape cannot change the number of elements: {_shape(x)} has {src_numel}, "
                                   f"{shape} has {numel}")
        if not x.type.is_block():
            return self.splat(x, shape)
        if not shape:
            raise CompileTimeError("reshape to a scalar is not supported; use tl.sum or indexing")
        ty = tl.block_type(x.type.scalar, shape)
        return T(self.builder.reshape(x.handle, self.sem.ir_type(ty), bool(can_reorder)), ty)

    def permute(self, x: T, dims: Sequence[int]) -> T:
        dims = [tl._unwrap(d) for d in dims]
        shape = _shape(x)
        if len(dims) != len(shape):
            raise CompileTimeError(f"permute needs {len(shape)} dims for a tensor of shape {shape}, got {dims}")
        if sorted(dims) != list(range(len(dims))):
            raise CompileTimeError(f"permute dims must be a permutation of 0..{len(dims) - 1}, got {dims}")
        if dims == sorted(dims):
            return x
        ty = tl.block_type(x.type.scalar, [shape[d] for d in dims])
        return T(self.builder.trans(x.handle, self.sem.ir_type(ty), dims), ty)

    def cat(self, a: T, b: T, can_reorder: bool = False) -> T:
        if not a.type.is_block() or not b.type.is_block():
            raise CompileTimeError("cat takes two tensors")
        sa, sb = _shape(a), _shape(b)
        if sa[1:] != sb[1:] or a.dtype != b.dtype:
            raise CompileTimeError(f"cat needs tensors of the same dtype and trailing shape, got "
                                   f"{a.type} and {b.type}")
        out = [sa[0] + sb[0]] + sa[1:]
        self._check_shape(out)
        ty = tl.block_type(a.type.scalar, out)
        op = self.builder.tt("cat", {"lhs": a.handle, "rhs": b.handle}, [self.sem.ir_type(ty)])
        return T(op.result, ty)

    def join(self, a: T, b: T) -> T:
        a, b = self.broadcast_impl_value(a, b)
        if a.dtype != b.dtype:
            raise CompileTimeError(f"join needs two tensors of the same dtype, got {a.dtype} and {b.dtype}")
        was_scalar = not a.type.is_block()
        if was_scalar:
            a, b = self.expand_dims(a, 0), self.expand_dims(b, 0)
        ty = tl.block_type(a.type.scalar, _shape(a) + [2])
        r = T(self.builder.tt("join", {"lhs": a.handle, "rhs": b.handle}, [self.sem.ir_type(ty)]).result, ty)
        return self.reshape(r, [2]) if was_scalar else r

    def split(self, a: T) -> tuple[T, T]:
        shape = _shape(a)
        if not shape or shape[-1] != 2:
            raise CompileTimeError(f"split needs a tensor whose last dimension is 2, got shape {shape}")
        out = shape[:-1]
        ty: Any = tl.block_type(a.type.scalar, out) if out else a.type.scalar
        irt = self.sem.ir_type(ty)
        op = self.builder.tt("split", {"src": a.handle}, [irt, irt])
        return T(op.results[0], ty), T(op.results[1], ty)

    def where(self, cond: Any, x: Any, y: Any) -> T:
        cond = self.sem.to_tensor(cond)
        if cond.dtype != tl.int1:
            import warnings
            warnings.warn(f"tl.where with a non-boolean condition ({cond.dtype}) is deprecated in Triton and will "
                          "become an error; compare it explicitly (cond != 0)", UserWarning, stacklevel=2)
            cond = self.sem.cast(cond, tl.int1)
        x, y = self.sem.binary_op_type_checking(x, y, True, True)
        if cond.type.is_block():
            cond, x = self.broadcast_impl_value(cond, x)
            x, y = self.broadcast_impl_value(x, y)
            cond, x = self.broadcast_impl_value(cond, x)
        elif x.type.is_block():
            cond, x = self.broadcast_impl_value(cond, x)
            cond, y = self.broadcast_impl_value(cond, y)
        return T(self.builder.select(cond.handle, x.handle, y.handle), x.type)

    def subscript(self, x: T, slices: Any) -> T:
        slices = tl._unwrap(slices)
        if isinstance(slices, tl.tuple_value):
            slices = slices.values
        if not isinstance(slices, (list, tuple)):
            slices = [slices]
        out = x
        dim = 0
        for s in slices:
            s = tl._unwrap(s)
            if s is None:
                out = self.expand_dims(out, dim)
                dim += 1
            elif isinstance(s, slice) and s.start is None and s.stop is None and s.step is None:
                dim += 1
            else:
                raise CompileTimeError(f"unsupported tensor index {s!r}: only None (new axis) and ':' are allowed")
        return out
