"""Arithmetic, comparison, bitwise ops, casts and Triton's type promotion."""
from __future__ import annotations

import builtins
import numbers
from typing import Any

from .. import core as tl
from ..core import CompileTimeError
from .ops import Part

T = tl.tensor


class IncompatibleTypeError(CompileTimeError):
    def __init__(self, a: Any, b: Any) -> None:
        super().__init__(f"invalid operands of type {a} and {b}")


class Arithmetic(Part):
    # -- promotion --------------------------------------------------------------------------------
    @staticmethod
    def integer_promote(a: tl.dtype, b: tl.dtype) -> tl.dtype:
        a_rank, b_rank = a.int_bitwidth, b.int_bitwidth
        a_sn, b_sn = a.int_signedness, b.int_signedness
        if a_sn == b_sn:
            return a if a_rank > b_rank else b
        if a_sn == tl.SIGNEDNESS.UNSIGNED:
            return a if a_rank >= b_rank else b
        return b if b_rank >= a_rank else a

    def computation_type(self, a: tl.dtype, a_scalar: bool, b: tl.dtype, b_scalar: bool, div_or_mod: bool) -> tl.dtype:
        # a Python scalar of a lower or equal kind (bool < int < float) takes the tensor's type
        if a_scalar != b_scalar:
            s, t = (a, b) if a_scalar else (b, a)
            if s.kind().value <= t.kind().value:
                if div_or_mod and t in (tl.float16, tl.bfloat16):
                    return tl.float32
                return t
        if a.is_fp64() or b.is_fp64():
            return tl.float64
        if a.is_fp32() or b.is_fp32():
            return tl.float32
        if a.is_fp16() or b.is_fp16():
            return tl.float32 if div_or_mod else tl.float16
        if a.is_bf16() and b.is_bf16():
            return tl.float32 if div_or_mod else tl.bfloat16
        if a.is_bf16() or b.is_bf16():
            return tl.float32
        if a.is_fp8() and b.is_fp8():
            return a if a == b else tl.float16
        if not a.is_int() or not b.is_int():
            raise TypeError(f"unexpected types {a} and {b}")
        if div_or_mod and a.int_signedness != b.int_signedness:
            raise TypeError(f"Cannot use /, // or % with {a} and {b} because they have different signedness; "
                            "cast one of them (x.to(...)) so that both are signed or both unsigned")
        return self.integer_promote(a, b)

    def to_tensor(self, x: Any, check_type: bool = True) -> Any:
        if isinstance(x, bool):
            return T(self.builder.get_constant(int(x), self.sem.ir_type(tl.int1)), tl.int1)
        if isinstance(x, int):
            if -2**31 <= x < 2**31:
                ty = tl.int32
            elif 2**31 <= x < 2**32:
                ty = tl.uint32
            elif -2**63 <= x < 2**63:
                ty = tl.int64
            elif 2**63 <= x < 2**64:
                ty = tl.uint64
            else:
                raise ValueError(f"integer {x} does not fit in 64 bits")
            return self.scalar_constant(x, ty)
        if isinstance(x, float):
            ax = builtins.abs(x)
            fits = ax == float("inf") or ax == 0.0 or x != x or 2**-126 <= ax <= (2 - 2**-23) * 2**127
            return self.scalar_constant(x, tl.float32 if fits else tl.float64)
        if isinstance(x, tl.constexpr):
            return self.to_tensor(x.value, check_type)
        if isinstance(x, T):
            return x
        if check_type:
            raise TypeError(f"cannot use {x!r} (of type {type(x).__name__}) as a tensor value")
        return x

    def scalar_constant(self, value: Any, ty: tl.dtype) -> T:
        return T(self.builder.get_constant(value, self.sem.ir_type(ty)), ty)

    def _check_ptr(self, a: tl.dtype, b: tl.dtype, allow_ptr_a: bool) -> None:
        if a.is_ptr():
            if not allow_ptr_a:
                raise IncompatibleTypeError(a, b)
            if b.is_ptr() and a != b:
                raise IncompatibleTypeError(a, b)
            if b.is_floating():
                raise CompileTimeError(f"cannot add a floating-point value ({b}) to a pointer ({a}); "
                                       "pointer offsets must be integers")

    def binary_op_type_checking(self, lhs: Any, rhs: Any, allow_lhs_ptr: bool = False, allow_rhs_ptr: bool = False,
                                arithmetic_check: bool = True, div_or_mod: bool = False) -> tuple[T, T]:
        lhs = tl._unwrap(lhs)
        rhs = tl._unwrap(rhs)
        lhs_is_scalar = isinstance(lhs, numbers.Number)
        rhs_is_scalar = isinstance(rhs, numbers.Number)
        lhs_val, rhs_val = lhs, rhs
        if lhs_is_scalar:
            lhs = self.to_tensor(lhs)
        if rhs_is_scalar:
            rhs = self.to_tensor(rhs)
        if not isinstance(lhs, T) or not isinstance(rhs, T):
            bad = lhs if not isinstance(lhs, T) else rhs
            raise TypeError(f"unsupported operand {bad!r} of type {type(bad).__name__}")
        lt, rt = lhs.type.scalar, rhs.type.scalar
        self._check_ptr(lt, rt, allow_lhs_ptr)
        self._check_ptr(rt, lt, allow_rhs_ptr)
        if arithmetic_check and not lt.is_ptr() and not rt.is_ptr():
            ret = self.computation_type(lt, lhs_is_scalar, rt, rhs_is_scalar, div_or_mod)
            for is_scalar, val in ((lhs_is_scalar, lhs_val), (rhs_is_scalar, rhs_val)):
                if is_scalar and ret.is_int():
                    if val < 0 and ret.is_int_unsigned():
                        raise ValueError("cannot combine an unsigned tensor with a negative scalar; "
                                         "cast one of them explicitly")
                    if not ret.get_int_min_value() <= val <= ret.get_int_max_value():
                        raise ValueError(f"scalar {val} is out of range for type {ret}")
            lhs = self.scalar_constant(lhs_val, ret) if lhs_is_scalar else self.sem.cast(lhs, ret)
            rhs = self.scalar_constant(rhs_val, ret) if rhs_is_scalar else self.sem.cast(rhs, ret)
        return self.sem.broadcast_impl_value(lhs, rhs)

    # -- arithmetic -------------------------------------------------------------------------------
    def _fi(self, a: T, b: T, fop: str, iop: str) -> T:
        sty = a.type.scalar
        if sty.is_floating():
            return T(self.builder.binary(fop, a.handle, b.handle), a.type)
        if sty.is_int():
            return T(self.builder.binary(iop, a.handle, b.handle), a.type)
        raise TypeError(f"unexpected type {sty}")

    def add(self, a: Any, b: Any, sanitize_overflow: bool = True) -> T:
        a, b = self.binary_op_type_checking(a, b, True, True)
        if a.type.scalar.is_ptr() and b.type.scalar.is_ptr():
            raise CompileTimeError("cannot add two pointers")
        if b.type.scalar.is_ptr():
            a, b = b, a
        if a.type.scalar.is_ptr():
            off = b
            if off.dtype.is_int_unsigned() and off.dtype.int_bitwidth < 64:
                off = self.sem.cast(off, tl.int64)  # addptr offsets are signed: zero-extend unsigned ones
            return T(self.builder.addptr(a.handle, off.handle), a.type)
        if sanitize_overflow:
            self._check_overflow(a, b, "add")
        return self._fi(a, b, "arith.addf", "arith.addi")

    def _check_overflow(self, a: T, b: T, op: str) -> None:
        """With the ``sanitize_overflow`` option (and debug), assert that an integer op of fewer than 64 bits
        does not wrap: compute it in 64 bits and compare with the type's range."""
        options = getattr(self, "options", None)
        ty = a.type.scalar
        if not ty.is_int() or ty.is_bool() or ty.int_bitwidth >= 64 or not getattr(options, "sanitize_overflow", False):
            return
        wide = getattr(self, op)(self.sem.cast(a, tl.int64), self.sem.cast(b, tl.int64), False)
        ok = self.and_(self.less_equal(wide, ty.get_int_max_value()), self.greater_equal(wide, ty.get_int_min_value()))
        self.sem.device_assert(ok, f"int{ty.int_bitwidth} overflow detected for operation {op}")

    def sub(self, a: Any, b: Any, sanitize_overflow: bool = True) -> T:
        a, b = self.binary_op_type_checking(a, b, True, False)
        if a.type.scalar.is_ptr():
            return self.add(a, self.minus(b))
        if sanitize_overflow:
            self._check_overflow(a, b, "sub")
        return self._fi(a, b, "arith.subf", "arith.subi")

    def mul(self, a: Any, b: Any, sanitize_overflow: bool = True) -> T:
        a, b = self.binary_op_type_checking(a, b)
        if sanitize_overflow:
            self._check_overflow(a, b, "mul")
        return self._fi(a, b, "arith.mulf", "arith.muli")

    def truediv(self, a: Any, b: Any) -> T:
        a, b = self.binary_op_type_checking(a, b, False, False, True, True)
        at, bt = a.type.scalar, b.type.scalar
        if at.is_floating() and bt.is_int():
            b = self.sem.cast(b, at)
        elif at.is_int() and bt.is_floating():
            a = self.sem.cast(a, bt)
        elif at.is_int() and bt.is_int():
            a, b = self.sem.cast(a, tl.float32), self.sem.cast(b, tl.float32)
        elif at.fp_mantissa_width > bt.fp_mantissa_width:
            b = self.sem.cast(b, at)
        else:
            a = self.sem.cast(a, bt)
        return T(self.builder.binary("arith.divf", a.handle, b.handle), a.type)

    def floordiv(self, a: Any, b: Any) -> T:
        a, b = self.binary_op_type_checking(a, b, False, False, True, True)
        if a.type.scalar.is_int() and b.type.scalar.is_int():
            op = "arith.divsi" if a.type.scalar.is_int_signed() else "arith.divui"
            return T(self.builder.binary(op, a.handle, b.handle), a.type)
        raise TypeError(f"// is only defined on integers here, got {a.type.scalar}; use / or tl.floor")

    def fdiv(self, a: Any, b: Any, ieee_rounding: bool = False) -> T:
        a = self.to_tensor(a)
        b = self.to_tensor(b)
        if not a.type.scalar.is_floating() or not b.type.scalar.is_floating():
            raise TypeError("both operands of fdiv must have a floating-point type")
        a, b = self.binary_op_type_checking(a, b, False, False, False, True)
        # Triton ignores ieee_rounding (its `/` is already approximate on GPUs); honouring it costs
        # nothing and keeps backends that approximate `/` from approximating here
        if ieee_rounding and a.type.scalar.is_fp32():
            return self.sem.precise("precise_divf", a, b)
        return T(self.builder.binary("arith.divf", a.handle, b.handle), a.type)

    def mod(self, a: Any, b: Any) -> T:
        a, b = self.binary_op_type_checking(a, b, False, False, True, True)
        sty = a.type.scalar
        if sty.is_floating():
            return T(self.builder.binary("arith.remf", a.handle, b.handle), a.type)
        if sty.is_int():
            op = "arith.remsi" if sty.is_int_signed() else "arith.remui"
            return T(self.builder.binary(op, a.handle, b.handle), a.type)
        raise TypeError(f"unexpected type {sty}")

    def pow(self, a: Any, b: Any) -> T:
        a, b = self.binary_op_type_checking(a, b)
        if not a.type.scalar.is_floating():
            raise TypeError("** is only supported on floating-point values; cast to float first")
        return T(self.builder.binary("math.powf", a.handle, b.handle), a.type)

    def _minmax(self, x: Any, y: Any, propagate_nan: Any, kind: str) -> T:
        x, y = self.binary_op_type_checking(x, y)
        dt = x.dtype
        pn = tl._unwrap(propagate_nan)
        if dt.is_floating():
            all_nan = getattr(pn, "value", pn) not in (0, None, False)
            op = {"min": ("arith.minimumf", "arith.minnumf"), "max": ("arith.maximumf", "arith.maxnumf")}[kind]
            return T(self.builder.binary(op[0] if all_nan else op[1], x.handle, y.handle), x.type)
        signed = "s" if dt.is_int_signed() else "u"
        return T(self.builder.binary(f"arith.{kind}{signed}i", x.handle, y.handle), x.type)

    def minimum(self, x: Any, y: Any, propagate_nan: Any = 0) -> T:
        return self._minmax(x, y, propagate_nan, "min")

    def maximum(self, x: Any, y: Any, propagate_nan: Any = 0) -> T:
        return self._minmax(x, y, propagate_nan, "max")

    def clamp(self, x: Any, lo: Any, hi: Any, propagate_nan: Any = 0) -> T:
        lo, hi = self.binary_op_type_checking(lo, hi)
        x, lo = self.binary_op_type_checking(x, lo)
        x, hi = self.binary_op_type_checking(x, hi)
        if not x.dtype.is_floating():
            raise TypeError(f"clamp supports floating-point values only, got {x.dtype}")
        pn = tl._unwrap(propagate_nan)
        attrs = {"propagate_nan": self.builder.i32_attr(getattr(pn, "value", pn) or 0)}
        return T(self.builder.tt("clampf", {"x": x.handle, "min": lo.handle, "max": hi.handle},
                                 [x.handle.type], attrs).result, x.type)

    # -- bitwise ----------------------------------------------------------------------------------
    def _bitwise(self, a: Any, b: Any) -> tuple[T, T]:
        a, b = self.binary_op_type_checking(a, b)
        at, bt = a.type.scalar, b.type.scalar
        if not at.is_int() or not bt.is_int():
            raise IncompatibleTypeError(at, bt)
        ret = self.integer_promote(at, bt)
        return self.sem.cast(a, ret), self.sem.cast(b, ret)

    def and_(self, a: Any, b: Any) -> T:
        a, b = self._bitwise(a, b)
        return T(self.builder.binary("arith.andi", a.handle, b.handle), a.type)

    def or_(self, a: Any, b: Any) -> T:
        a, b = self._bitwise(a, b)
        return T(self.builder.binary("arith.ori", a.handle, b.handle), a.type)

    def xor_(self, a: Any, b: Any) -> T:
        a, b = self._bitwise(a, b)
        return T(self.builder.binary("arith.xori", a.handle, b.handle), a.type)

    def logical_and(self, a: Any, b: Any) -> T:
        a, b = self.to_tensor(a), self.to_tensor(b)
        return self.and_(self.sem.cast(a, tl.int1), self.sem.cast(b, tl.int1))

    def logical_or(self, a: Any, b: Any) -> T:
        a, b = self.to_tensor(a), self.to_tensor(b)
        return self.or_(self.sem.cast(a, tl.int1), self.sem.cast(b, tl.int1))

    def not_(self, a: Any) -> T:
        a = self.to_tensor(a)
        return self.invert(self.sem.cast(a, tl.int1))

    def shl(self, a: Any, b: Any) -> T:
        a, b = self._bitwise(a, b)
        return T(self.builder.binary("arith.shli", a.handle, b.handle), a.type)

    def shr(self, a: Any, b: Any) -> T:
        # Triton picks arithmetic or logical from the shifted tensor's own type, before promotion: int8 >> uint8
        # computes in uint8 but still shifts in the sign (-17 >> 6 == 0xFF). A Python scalar on the left has no
        # type of its own: the tensor on the right decides (Triton's __rrshift__).
        decider = a if isinstance(a, T) else b
        a, b = self._bitwise(a, b)
        signed = decider.dtype.is_int_signed() if isinstance(decider, T) else a.dtype.is_int_signed()
        op = "arith.shrsi" if signed else "arith.shrui"
        return T(self.builder.binary(op, a.handle, b.handle), a.type)

    def lshr(self, a: Any, b: Any) -> T:
        a, b = self._bitwise(a, b)
        return T(self.builder.binary("arith.shrui", a.handle, b.handle), a.type)

    def ashr(self, a: Any, b: Any) -> T:
        a, b = self._bitwise(a, b)
        return T(self.builder.binary("arith.shrsi", a.handle, b.handle), a.type)

    # -- unary ------------------------------------------------------------------------------------
    def minus(self, a: Any) -> T:
        a = self.to_tensor(a)
        if a.type.scalar.is_ptr():
            raise TypeError(f"cannot negate a pointer ({a.type})")
        if a.type.scalar.is_floating():
            return T(self.builder.unary("arith.negf", a.handle), a.type)
        zero = self.scalar_constant(0, a.type.scalar)
        return self.sub(zero, a)

    def invert(self, a: Any) -> T:
        a = self.to_tensor(a)
        if a.type.scalar.is_ptr() or a.type.scalar.is_floating():
            raise TypeError(f"~ needs an integer or boolean operand, got {a.type.scalar}")
        ones = self.scalar_constant(-1, a.type.scalar)
        return self.xor_(a, ones)

    # -- comparisons ------------------------------------------------------------------------------
    def _cmp(self, a: Any, b: Any, fpred: str, spred: str, upred: str) -> T:
        a, b = self.binary_op_type_checking(a, b)
        sty = a.type.scalar
        rty = a.type.with_element_ty(tl.int1)
        if sty.is_floating():
            return T(self.builder.cmpf(fpred, a.handle, b.handle), rty)
        if sty.is_int():
            return T(self.builder.cmpi(spred if sty.is_int_signed() else upred, a.handle, b.handle), rty)
        if sty.is_ptr():
            ia, ib = self.sem.cast(a, tl.int64), self.sem.cast(b, tl.int64)
            return T(self.builder.cmpi(upred, ia.handle, ib.handle), rty)
        raise TypeError(f"unexpected type {sty}")

    def greater_than(self, a: Any, b: Any) -> T:
        return self._cmp(a, b, "ogt", "sgt", "ugt")

    def greater_equal(self, a: Any, b: Any) -> T:
        return self._cmp(a, b, "oge", "sge", "uge")

    def less_than(self, a: Any, b: Any) -> T:
        return self._cmp(a, b, "olt", "slt", "ult")

    def less_equal(self, a: Any, b: Any) -> T:
        return self._cmp(a, b, "ole", "sle", "ule")

    def equal(self, a: Any, b: Any) -> T:
        return self._cmp(a, b, "oeq", "eq", "eq")

    def not_equal(self, a: Any, b: Any) -> T:
        return self._cmp(a, b, "une", "ne", "ne")
