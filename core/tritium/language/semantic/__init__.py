"""Type checking and IR construction for the Triton language.

Builtins call into :class:`Semantic`, which checks types and shapes the way Triton does, then asks
the builder to create operations. Errors raised here are user errors (``CompileTimeError``,
``TypeError``, ``ValueError``); the code generator attaches the kernel, the line and a caret.
"""
from __future__ import annotations

from typing import Any, Callable, Optional, Sequence

from .. import core as tl
from ..descriptor import tensor_descriptor, tensor_descriptor_base_type
from .arith import Arithmetic
from .casts import Casts
from .descriptor import Descriptors
from .memory import Memory
from .misc import Misc
from .ops import SemanticOps
from .regions import Regions
from .shape import Shapes

T = tl.tensor


class Semantic:
    """The operations of the language, each delegated to the collaborator that implements it (see :mod:`.ops`);
    the collaborators reach each other back through this object, as a :class:`SemanticOps`."""

    tensor = tl.tensor
    lang = tl

    def __init__(self, builder: Any, options: Any = None, capabilities: frozenset[str] = frozenset()) -> None:
        self.builder = builder
        self.options = options
        self.capabilities = capabilities
        self._ir_types: dict[Any, Any] = {}
        sem: SemanticOps = self
        self.arith = Arithmetic(sem)
        self.casts = Casts(sem)
        self.shapes = Shapes(sem)
        self.memory = Memory(sem)
        self.misc = Misc(sem)
        self.descriptors = Descriptors(sem)
        self.regions = Regions(sem)

    # dtype -> builder type, cached (hot: every constant and cast asks)
    def ir_type(self, ty: tl.dtype) -> Any:
        t = self._ir_types.get(ty)
        if t is None:
            t = self._ir_types[ty] = self._make_ir_type(ty)
        return t

    def _make_ir_type(self, ty: tl.dtype) -> Any:
        b = self.builder
        if isinstance(ty, tl.block_type):
            return b.get_block_ty(self.ir_type(ty.element_ty), ty.shape)
        if isinstance(ty, tl.pointer_type):
            return b.get_ptr_ty(self.ir_type(ty.element_ty), ty.address_space)
        if isinstance(ty, tensor_descriptor_base_type):
            return b.get_tensordesc_ty(self.ir_type(ty.block_type))
        name = ty.name
        if ty.is_int():
            return b.get_int_ty(ty.int_bitwidth)
        if name == "fp16":
            return b.get_half_ty()
        if name == "bf16":
            return b.get_bf16_ty()
        if name == "fp32":
            return b.get_float_ty()
        if name == "fp64":
            return b.get_double_ty()
        if ty.is_fp8():
            return b.get_fp8_ty(name)
        raise TypeError(f"type {ty} has no IR representation")

    # -- arith
    integer_promote = staticmethod(Arithmetic.integer_promote)

    def computation_type(self, a: tl.dtype, a_scalar: bool, b: tl.dtype, b_scalar: bool, div_or_mod: bool) -> tl.dtype:
        return self.arith.computation_type(a, a_scalar, b, b_scalar, div_or_mod)

    def to_tensor(self, x: Any, check_type: bool = True) -> Any:
        return self.arith.to_tensor(x, check_type)

    def scalar_constant(self, value: Any, ty: tl.dtype) -> T:
        return self.arith.scalar_constant(value, ty)

    def binary_op_type_checking(self, lhs: Any, rhs: Any, allow_lhs_ptr: bool = False, allow_rhs_ptr: bool = False,
                                arithmetic_check: bool = True, div_or_mod: bool = False) -> tuple[T, T]:
        return self.arith.binary_op_type_checking(lhs, rhs, allow_lhs_ptr, allow_rhs_ptr, arithmetic_check, div_or_mod)

    def add(self, a: Any, b: Any, sanitize_overflow: bool = True) -> T:
        return self.arith.add(a, b, sanitize_overflow)

    def sub(self, a: Any, b: Any, sanitize_overflow: bool = True) -> T:
        return self.arith.sub(a, b, sanitize_overflow)

    def mul(self, a: Any, b: Any, sanitize_overflow: bool = True) -> T:
        return self.arith.mul(a, b, sanitize_overflow)

    def truediv(self, a: Any, b: Any) -> T:
        return self.arith.truediv(a, b)

    def floordiv(self, a: Any, b: Any) -> T:
        return self.arith.floordiv(a, b)

    def fdiv(self, a: Any, b: Any, ieee_rounding: bool = False) -> T:
        return self.arith.fdiv(a, b, ieee_rounding)

    def mod(self, a: Any, b: Any) -> T:
        return self.arith.mod(a, b)

    def pow(self, a: Any, b: Any) -> T:
        return self.arith.pow(a, b)

    def minimum(self, x: Any, y: Any, propagate_nan: Any = 0) -> T:
        return self.arith.minimum(x, y, propagate_nan)

    def maximum(self, x: Any, y: Any, propagate_nan: Any = 0) -> T:
        return self.arith.maximum(x, y, propagate_nan)

    def clamp(self, x: Any, lo: Any, hi: Any, propagate_nan: Any = 0) -> T:
        return self.arith.clamp(x, lo, hi, propagate_nan)

    def and_(self, a: Any, b: Any) -> T:
        return self.arith.and_(a, b)

    def or_(self, a: Any, b: Any) -> T:
        return self.arith.or_(a, b)

    def xor_(self, a: Any, b: Any) -> T:
        return self.arith.xor_(a, b)

    def logical_and(self, a: Any, b: Any) -> T:
        return self.arith.logical_and(a, b)

    def logical_or(self, a: Any, b: Any) -> T:
        return self.arith.logical_or(a, b)

    def not_(self, a: Any) -> T:
        return self.arith.not_(a)

    def shl(self, a: Any, b: Any) -> T:
        return self.arith.shl(a, b)

    def shr(self, a: Any, b: Any) -> T:
        return self.arith.shr(a, b)

    def lshr(self, a: Any, b: Any) -> T:
        return self.arith.lshr(a, b)

    def ashr(self, a: Any, b: Any) -> T:
        return self.arith.ashr(a, b)

    def minus(self, a: Any) -> T:
        return self.arith.minus(a)

    def invert(self, a: Any) -> T:
        return self.arith.invert(a)

    def greater_than(self, a: Any, b: Any) -> T:
        return self.arith.greater_than(a, b)

    def greater_equal(self, a: Any, b: Any) -> T:
        return self.arith.greater_equal(a, b)

    def less_than(self, a: Any, b: Any) -> T:
        return self.arith.less_than(a, b)

    def less_equal(self, a: Any, b: Any) -> T:
        return self.arith.less_equal(a, b)

    def equal(self, a: Any, b: Any) -> T:
        return self.arith.equal(a, b)

    def not_equal(self, a: Any, b: Any) -> T:
        return self.arith.not_equal(a, b)

    # -- casts
    def bitcast(self, x: T, dst: tl.dtype) -> T:
        return self.casts.bitcast(x, dst)

    def cast(self, x: Any, dst: tl.dtype, fp_downcast_rounding: Optional[str] = None) -> T:
        return self.casts.cast(x, dst, fp_downcast_rounding)

    # -- shapes
    def program_id(self, axis: int) -> T:
        return self.shapes.program_id(axis)

    def num_programs(self, axis: int) -> T:
        return self.shapes.num_programs(axis)

    def arange(self, start: Any, end: Any) -> T:
        return self.shapes.arange(start, end)

    def _check_shape(self, shape: Sequence[int]) -> list[int]:
        return self.shapes._check_shape(shape)

    def full(self, shape: Sequence[int], value: Any, dtype: tl.dtype) -> T:
        return self.shapes.full(shape, value, dtype)

    def splat(self, value: T, shape: Sequence[int]) -> T:
        return self.shapes.splat(value, shape)

    def broadcast_impl_shape(self, x: T, shape: Sequence[int]) -> T:
        return self.shapes.broadcast_impl_shape(x, shape)

    def broadcast_impl_value(self, lhs: T, rhs: T) -> tuple[T, T]:
        return self.shapes.broadcast_impl_value(lhs, rhs)

    def broadcast_tensors(self, *inputs: T) -> list[T]:
        return self.shapes.broadcast_tensors(*inputs)

    def expand_dims(self, x: T, axis: int) -> T:
        return self.shapes.expand_dims(x, axis)

    def reshape(self, x: T, shape: Sequence[int], can_reorder: bool = False) -> T:
        return self.shapes.reshape(x, shape, can_reorder)

    def permute(self, x: T, dims: Sequence[int]) -> T:
        return self.shapes.permute(x, dims)

    def cat(self, a: T, b: T, can_reorder: bool = False) -> T:
        return self.shapes.cat(a, b, can_reorder)

    def join(self, a: T, b: T) -> T:
        return self.shapes.join(a, b)

    def split(self, a: T) -> tuple[T, T]:
        return self.shapes.split(a)

    def where(self, cond: Any, x: Any, y: Any) -> T:
        return self.shapes.where(cond, x, y)

    def subscript(self, x: T, slices: Any) -> T:
        return self.shapes.subscript(x, slices)

    # -- memory
    def load(self, ptr: Any, mask: Any = None, other: Any = None, boundary_check: Any = (), padding_option: Any = "",
             cache_modifier: Any = "", eviction_policy: Any = "", volatile: Any = False) -> T:
        return self.memory.load(ptr, mask, other, boundary_check, padding_option, cache_modifier, eviction_policy,
                                volatile)

    def store(self, ptr: Any, value: Any, mask: Any = None, boundary_check: Any = (), cache_modifier: Any = "",
              eviction_policy: Any = "") -> T:
        return self.memory.store(ptr, value, mask, boundary_check, cache_modifier, eviction_policy)

    def atomic_rmw(self, op: str, ptr: Any, val: Any, mask: Any, sem: Any, scope: Any) -> T:
        return self.memory.atomic_rmw(op, ptr, val, mask, sem, scope)

    def atomic_cas(self, ptr: Any, cmp: Any, val: Any, sem: Any, scope: Any) -> T:
        return self.memory.atomic_cas(ptr, cmp, val, sem, scope)

    def make_block_ptr(self, base: Any, shape: Any, strides: Any, offsets: Any, block_shape: Any, order: Any) -> T:
        return self.memory.make_block_ptr(base, shape, strides, offsets, block_shape, order)

    def advance(self, ptr: Any, offsets: Any) -> T:
        return self.memory.advance(ptr, offsets)

    # -- misc
    def unary_math(self, name: str, x: Any, float_only: bool = True) -> T:
        return self.misc.unary_math(name, x, float_only)

    def fma(self, x: Any, y: Any, z: Any) -> T:
        return self.misc.fma(x, y, z)

    def umulhi(self, x: Any, y: Any) -> T:
        return self.misc.umulhi(x, y)

    def precise(self, name: str, *args: Any) -> T:
        return self.misc.precise(name, *args)

    def libdevice_op(self, name: str, args: Sequence[T], ret: tl.dtype, rounded_alone: bool = False) -> T:
        return self.misc.libdevice_op(name, args, ret, rounded_alone)

    def inline_asm_elementwise(self, asm: str, constraints: str, args: Sequence[Any], dtypes: Sequence[tl.dtype],
                               is_pure: bool, pack: int) -> tuple[T, ...]:
        return self.misc.inline_asm_elementwise(asm, constraints, args, dtypes, is_pure, pack)

    def extern_elementwise(self, lib_name: str, lib_path: str, args: Sequence[Any], symbol: str, ret_dtype: tl.dtype,
                           is_pure: bool = True) -> T:
        return self.misc.extern_elementwise(lib_name, lib_path, args, symbol, ret_dtype, is_pure)

    def dot(self, a: T, b: T, acc: Optional[T], input_precision: Optional[str], max_num_imprecise_acc: Optional[int],
            out_dtype: tl.dtype) -> T:
        return self.misc.dot(a, b, acc, input_precision, max_num_imprecise_acc, out_dtype)

    def _region_op(self, kind: str, inputs: Sequence[T], axis: Optional[int],
                   combine: Callable[[list[T], list[T]], Sequence[T]], reverse: bool = False) -> tuple[T, ...]:
        return self.misc._region_op(kind, inputs, axis, combine, reverse)

    def reduction(self, inputs: Sequence[T], axis: Optional[int], combine: Callable[..., Any]) -> tuple[T, ...]:
        return self.misc.reduction(inputs, axis, combine)

    def associative_scan(self, inputs: Sequence[T], axis: int, combine: Callable[..., Any],
                         reverse: bool = False) -> tuple[T, ...]:
        return self.misc.associative_scan(inputs, axis, combine, reverse)

    def histogram(self, x: T, num_bins: int, mask: Optional[T]) -> T:
        return self.misc.histogram(x, num_bins, mask)

    def gather(self, src: T, index: T, axis: int) -> T:
        return self.misc.gather(src, index, axis)

    def device_print(self, prefix: str, args: Sequence[T], hex: bool) -> T:
        return self.misc.device_print(prefix, args, hex)

    def device_assert(self, cond: T, msg: str, mask: Optional[T] = None) -> T:
        return self.misc.device_assert(cond, msg, mask)

    def assume(self, cond: T) -> T:
        return self.misc.assume(cond)

    def debug_barrier(self) -> T:
        return self.misc.debug_barrier()

    def multiple_of(self, x: T, values: Sequence[int]) -> T:
        return self.misc.multiple_of(x, values)

    def max_contiguous(self, x: T, values: Sequence[int]) -> T:
        return self.misc.max_contiguous(x, values)

    def max_constancy(self, x: T, values: Sequence[int]) -> T:
        return self.misc.max_constancy(x, values)

    # -- descriptors
    def make_tensor_descriptor(self, base: Any, shape: Any, strides: Any, block_shape: Sequence[int],
                               padding_option: str = "zero") -> tensor_descriptor:
        return self.descriptors.make_tensor_descriptor(base, shape, strides, block_shape, padding_option)

    def descriptor_load(self, desc: Any, offsets: Any, cache_modifier: str = "", eviction_policy: str = "") -> T:
        return self.descriptors.descriptor_load(desc, offsets, cache_modifier, eviction_policy)

    def descriptor_store(self, desc: Any, value: Any, offsets: Any) -> T:
        return self.descriptors.descriptor_store(desc, value, offsets)

    def descriptor_reduce(self, kind: str, desc: Any, value: Any, offsets: Any) -> T:
        return self.descriptors.descriptor_reduce(kind, desc, value, offsets)

    def descriptor_gather(self, desc: Any, x_offsets: Any, y_offset: Any) -> T:
        return self.descriptors.descriptor_gather(desc, x_offsets, y_offset)

    def descriptor_scatter(self, desc: Any, value: Any, x_offsets: Any, y_offset: Any) -> T:
        return self.descriptors.descriptor_scatter(desc, value, x_offsets, y_offset)

    # -- regions
    def unsplat(self, x: T) -> T:
        return self.regions.unsplat(x)

    def map_elementwise(self, inputs: Sequence[T], body: Callable[[list[T]], list[T]], pack: int) -> tuple[T, ...]:
        return self.regions.map_elementwise(inputs, body, pack)


__all__ = ["Semantic"]
