"""The half and bfloat conversion routines LLVM's x86 backend calls instead of emitting instructions.

Without native support (bfloat always; half without F16C; double to half always) the backend lowers
``fptrunc``/``fpext`` and even plain moves of spilled values to calls of ``__truncsfbf2``,
``__truncdfbf2``, ``__truncsfhf2``, ``__extendhfsf2`` and ``__truncdfhf2``, which live in compiler-rt or
libgcc. Neither is linked into the JIT, so each module defines the ones it may need, with internal
linkage (the backend's references bind to them) and kept alive through ``llvm.compiler.used`` (they are
only referenced after optimization).

They are written with integer operations so that compiling them never needs themselves. Conversions
from double round to odd into float first, which makes the second rounding exact (no double rounding).
"""
from __future__ import annotations

_F32_TO_BF16 = """
define internal bfloat @__truncsfbf2(float %x) nounwind readnone {
  %b = bitcast float %x to i32
  %hi = lshr i32 %b, 16
  %odd = and i32 %hi, 1
  %bias = add i32 %odd, 32767
  %r = add i32 %b, %bias
  %rh = lshr i32 %r, 16
  %nan = fcmp uno float %x, 0.0
  %q = or i32 %hi, 64
  %s = select i1 %nan, i32 %q, i32 %rh
  %h = trunc i32 %s to i16
  %v = bitcast i16 %h to bfloat
  ret bfloat %v
}"""

_F16_TO_F32 = """
define internal float @__extendhfsf2(half %x) nounwind readnone {
  %h16 = bitcast half %x to i16
  %h = zext i16 %h16 to i32
  %sign = shl i32 %h, 16
  %s = and i32 %sign, 2147483648
  %e = lshr i32 %h, 10
  %e5 = and i32 %e, 31
  %m = and i32 %h, 1023
  %mh = shl i32 %m, 13
  %eb = add i32 %e5, 112
  %es = shl i32 %eb, 23
  %normal = or i32 %es, %mh
  %special = or i32 %mh, 2139095040
  %mf = uitofp i32 %m to float
  %subf = fmul float %mf, 0x3E70000000000000
  %sub = bitcast float %subf to i32
  %is_max = icmp eq i32 %e5, 31
  %is_zero = icmp eq i32 %e5, 0
  %a = select i1 %is_max, i32 %special, i32 %normal
  %b = select i1 %is_zero, i32 %sub, i32 %a
  %r = or i32 %b, %s
  %v = bitcast i32 %r to float
  ret float %v
}"""

_F32_TO_F16 = """
define internal half @__truncsfhf2(float %x) nounwind readnone {
  %b = bitcast float %x to i32
  %sign32 = lshr i32 %b, 16
  %sign = and i32 %sign32, 32768
  %a = and i32 %b, 2147483647
  ; normal range: rebias the exponent, round to nearest even at bit 13
  %rb = sub i32 %a, 939524096
  %lsb = lshr i32 %rb, 13
  %lsb1 = and i32 %lsb, 1
  %bias = add i32 %lsb1, 4095
  %rr = add i32 %rb, %bias
  %normal = lshr i32 %rr, 13
  ; subnormal range: shift the full mantissa right by 126 - e and round to nearest even
  %e = lshr i32 %a, 23
  %mant = and i32 %a, 8388607
  %m = or i32 %mant, 8388608
  %sh0 = sub i32 126, %e
  %sh = call i32 @llvm.umin.i32(i32 %sh0, i32 31)
  %q = lshr i32 %m, %sh
  %one = shl i32 1, %sh
  %mask = sub i32 %one, 1
  %rem = and i32 %m, %mask
  %half = lshr i32 %one, 1
  %qodd = and i32 %q, 1
  %gt = icmp ugt i32 %rem, %half
  %eq = icmp eq i32 %rem, %half
  %odd = icmp ne i32 %qodd, 0
  %tie = and i1 %eq, %odd
  %up = or i1 %gt, %tie
  %upi = zext i1 %up to i32
  %sub = add i32 %q, %upi
  %mq = lshr i32 %a, 13
  %nanm = and i32 %mq, 1023
  %nan = or i32 %nanm, 32256
  %is_nan = icmp ugt i32 %a, 2139095040
  %is_inf = icmp uge i32 %a, 1199566848
  %is_normal = icmp uge i32 %a, 947912704
  %is_tiny = icmp ule i32 %a, 855638016
  %r1 = select i1 %is_normal, i32 %normal, i32 %sub
  %r2 = select i1 %is_tiny, i32 0, i32 %r1
  %r3 = select i1 %is_inf, i32 31744, i32 %r2
  %r4 = select i1 %is_nan, i32 %nan, i32 %r3
  %r = or i32 %r4, %sign
  %h = trunc i32 %r to i16
  %v = bitcast i16 %h to half
  ret half %v
}"""

# double to float rounded to odd: truncate toward zero, then set the last bit if anything was lost
_F64_TO_F32_ODD = """
define internal float @__tritium_sf_f64_to_f32_odd(double %x) nounwind readnone {
  %f = fptrunc double %x to float
  %back = fpext float %f to double
  %exact = fcmp oeq double %back, %x
  %ax = call double @llvm.fabs.f64(double %x)
  %ab = call double @llvm.fabs.f64(double %back)
  %over = fcmp ogt double %ab, %ax
  %fb = bitcast float %f to i32
  %dec = sub i32 %fb, 1
  %tz = select i1 %over, i32 %dec, i32 %fb
  %odd = or i32 %tz, 1
  %nan = fcmp uno double %x, 0.0
  %keep = or i1 %exact, %nan
  %r = select i1 %keep, i32 %fb, i32 %odd
  %v = bitcast i32 %r to float
  ret float %v
}"""

_F64_TO_BF16 = """
define internal bfloat @__truncdfbf2(double %x) nounwind readnone {
  %f = call float @__tritium_sf_f64_to_f32_odd(double %x)
  %v = call bfloat @__truncsfbf2(float %f)
  ret bfloat %v
}"""

_F64_TO_F16 = """
define internal half @__truncdfhf2(double %x) nounwind readnone {
  %f = call float @__tritium_sf_f64_to_f32_odd(double %x)
  %v = call half @__truncsfhf2(float %f)
  ret half %v
}"""

_KEEP = ("__truncsfbf2", "__truncdfbf2", "__extendhfsf2", "__truncsfhf2", "__truncdfhf2")


def needed(module_text: str) -> bool:
    return "bfloat" in module_text or "half" in module_text


def library_ir() -> str:
    """IR defining every routine (the optimizer keeps them; codegen may reference them)."""
    used = ", ".join(f"ptr @{n}" for n in _KEEP)
    # intrinsics are not declared: LLVM declares called intrinsics implicitly, and a second declaration
    # of one the kernel declares would be an error
    head = f'@llvm.compiler.used = appending global [{len(_KEEP)} x ptr] [{used}], section "llvm.metadata"'
    return "\n".join([head, _F32_TO_BF16, _F16_TO_F32, _F32_TO_F16, _F64_TO_F32_ODD, _F64_TO_BF16, _F64_TO_F16])
