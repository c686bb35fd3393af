"""Casts between dtypes (``x.to``, ``tl.cast``) and bitcasts, with Triton's rules for float8, rounding
modes and pointers."""
from __future__ import annotations

from typing import Any, Optional

from .. import core as tl
from .ops import Part

T = tl.tensor


class Casts(Part):
    def bitcast(self, x: T, dst: tl.dtype) -> T:
        x = self.sem.to_tensor(x)
        src = x.type
        if src.is_block():
            dst = src.with_element_ty(dst.scalar)
        if src == dst:
            return x
        if src.scalar.is_ptr() or dst.scalar.is_ptr():
            return self.cast(x, dst)
        if src.scalar.primitive_bitwidth != dst.scalar.primitive_bitwidth:
            raise ValueError(f"cannot bitcast {src.scalar} ({src.scalar.primitive_bitwidth} bits) to "
                             f"{dst.scalar} ({dst.scalar.primitive_bitwidth} bits)")
        return T(self.builder.tt("bitcast", {"src": x.handle}, [self.sem.ir_type(dst)]).result, dst)

    def cast(self, x: Any, dst: tl.dtype, fp_downcast_rounding: Optional[str] = None) -> T:
        x = self.sem.to_tensor(x)
        dst = tl._unwrap(dst)
        if not isinstance(dst, tl.dtype):
            raise TypeError(f"cast target must be a dtype, got {dst!r}")
        src = x.type
        s, d = src.scalar, dst.scalar
        if s == d:
            return x
        if src.is_block():
            dst = src.with_element_ty(d)
        ty = self.sem.ir_type(dst)
        b = self.builder
        downcast = s.is_floating() and d.is_floating() and d.primitive_bitwidth < s.primitive_bitwidth
        if fp_downcast_rounding is not None and not downcast:
            raise ValueError(f"fp_downcast_rounding applies only to narrowing float casts, not {s} to {d}")
        if fp_downcast_rounding not in (None, "rtne", "rtz"):
            raise ValueError(f"rounding mode {fp_downcast_rounding!r} is not one of 'rtne', 'rtz'")
        custom = fp_downcast_rounding == "rtz"
        if (s.is_fp8() and d.is_floating()) or (s.is_floating() and d.is_fp8()) or custom:
            attrs = {"rounding": b.str_attr(fp_downcast_rounding or "rtne")} if downcast else {}
            return T(b.tt("fp_to_fp", {"src": x.handle}, [ty], attrs).result, dst)
        if (s.is_fp16() or s.is_bf16()) and not d.is_fp32() and d.is_floating():
            return self.cast(self.cast(x, tl.float32), d)
        if downcast:
            return T(b.cast("arith.truncf", x.handle, ty), dst)
        if s.is_floating() and d.is_floating():
            return T(b.cast("arith.extf", x.handle, ty), dst)
        if s.is_int() and d.is_int():
            if d.is_bool():
                return self.sem.not_equal(x, self.sem.scalar_constant(0, s))
            if s.int_bitwidth == d.int_bitwidth:
                return T(x.handle, dst)
            if s.int_bitwidth > d.int_bitwidth:
                return T(b.cast("arith.trunci", x.handle, ty), dst)
            sign_extend = s.is_int_signed() and not s.is_bool()
            return T(b.cast("arith.extsi" if sign_extend else "arith.extui", x.handle, ty), dst)
        if s.is_standard_floating() and d.is_int():
            if d.is_bool():
                return self.sem.not_equal(x, self.sem.scalar_constant(0, s))
            return T(b.cast("arith.fptosi" if d.is_int_signed() else "arith.fptoui", x.handle, ty), dst)
        if s.is_int() and d.is_standard_floating():
            signed = s.is_int_signed() and not s.is_bool()
            return T(b.cast("arith.sitofp" if signed else "arith.uitofp", x.handle, ty), dst)
        if s.is_ptr() and d.is_int():
            if d.int_bitwidth == 64:
                return T(b.tt("ptr_to_int", {"src": x.handle}, [ty]).result, dst)
            if d.int_bitwidth == 1:
                return self.sem.not_equal(self.cast(x, tl.int64), self.sem.scalar_constant(0, tl.int64))
            raise TypeError(f"a pointer can only be cast to int64 or int1, not {d}")
        if (s.is_int() and d.is_fp8()) or (s.is_fp8() and d.is_int()):
            raise TypeError(f"cannot convert {s} to {d} directly: integers and float8 convert through a wider float, "
                            f"e.g. x.to(tl.float16).to(tl.{d.codegen_name()})")
        if s.is_int() and d.is_ptr():
            return T(b.tt("int_to_ptr", {"src": x.handle}, [ty]).result, dst)
        if s.is_ptr() and d.is_ptr():
            return T(b.tt("bitcast", {"src": x.handle}, [ty]).result, dst)
        raise TypeError(f"cannot cast {src} to {dst}")
