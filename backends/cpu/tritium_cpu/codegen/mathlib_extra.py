"""More library functions for CPU kernels: the ``tl.extra.libdevice`` set and conversion helpers.

Same contract as :mod:`.mathlib`: ``function_names()`` and ``library_ir(names)`` (internal, always-inline
definitions of exactly those functions, what they call, and ``declare`` lines for the C library functions
they use); ``C_SYMBOLS`` lists every C function any of them may call, which the driver resolves in the
process when it loads an object. Names start with ``tritium_``; libdevice functions are
``tritium_ld_<name>_<argument types>`` (``f32``, ``f64``, ``i32``, ``u32``, ``i64``, ``u64``).

Accuracy: float32 functions that have no branch-free implementation in :mod:`.mathlib` call the float64
libm function and round once (correctly rounded but for rare double-rounding cases); float64 functions call
libm, but for ``tanh`` and ``cosh`` (:mod:`.mathlib_f64`'s, within CUDA's 1 ulp where glibc's are not). Directed-rounding arithmetic (``add_rd``...) is exact: it computes the round-to-nearest result and the
exact sign of its error (error-free transformations) and steps one ulp where the direction demands.
The libdevice functions libm lacks are computed in float64: ``erfinv``/``erfcinv``/``normcdfinv`` by Newton
iteration on libm's ``erf``/``erfc``, ``erfcx`` from ``erfc`` with an asymptotic series for large arguments,
``cyl_bessel_i0``/``i1`` by power series (|x| <= 20) and asymptotic expansion, ``sinpi``/``cospi`` by exact
reduction to [-1/2, 1/2].
"""
from __future__ import annotations

from typing import Iterable

from . import libdevice_special, mathlib_f64
from .mathlib_defs import C_SYMBOLS, _DECLS, _FUNCS, _c, _def, _fconst, _via_double

__all__ = ["C_SYMBOLS", "function_names", "libdevice_function", "library_ir"]

_LT = {"f32": "float", "f64": "double", "i32": "i32", "u32": "i32", "i64": "i64", "u64": "i64", "i1": "i1"}
_IT = {"float": "i32", "double": "i64"}


# -- helpers -----------------------------------------------------------------------------------------------

def _define_helpers() -> None:
    for t in ("float", "double"):
        it = _IT[t]
        s = "f32" if t == "float" else "f64"
        sign = "-2147483648" if t == "float" else "-9223372036854775808"
        inf = _fconst(t, float("inf"))
        # the next value toward +inf (nan and +inf stay)
        _def(f"tritium_nextup_{s}", t, [(t, "%x")], [
            f"%b = bitcast {t} %x to {it}",
            f"%neg = icmp slt {it} %b, 0",
            f"%isnegzero = icmp eq {it} %b, {sign}",
            f"%up = add {it} %b, 1",
            f"%down = sub {it} %b, 1",
            f"%n0 = select i1 %neg, {it} %down, {it} %up",
            f"%n = select i1 %isnegzero, {it} 1, {it} %n0",
            f"%r = bitcast {it} %n to {t}",
            f"%nan = fcmp uno {t} %x, %x",
            f"%pinf = fcmp oeq {t} %x, {inf}",
            "%keep = or i1 %nan, %pinf",
            f"%v = select i1 %keep, {t} %x, {t} %r",
            f"ret {t} %v"])
        _def(f"tritium_nextdown_{s}", t, [(t, "%x")], [
            f"%nx = fneg {t} %x",
            f"%u = call {t} @tritium_nextup_{s}({t} %nx)",
            f"%r = fneg {t} %u",
            f"ret {t} %r"], calls=(f"tritium_nextup_{s}", ))
        # round-to-nearest result r with an exact error of sign(err); mode 0 toward zero, 1 down, 2 up
        _def(f"tritium_adjust_{s}", t, [(t, "%r"), (t, "%err"), ("i32", "%mode")], [
            f"%eneg = fcmp olt {t} %err, 0.0",
            f"%epos = fcmp ogt {t} %err, 0.0",
            f"%rneg = fcmp olt {t} %r, 0.0",
            f"%rpos = fcmp ogt {t} %r, 0.0",
            f"%dn = call {t} @tritium_nextdown_{s}({t} %r)",
            f"%up = call {t} @tritium_nextup_{s}({t} %r)",
            "%z1 = and i1 %rpos, %eneg",
            "%z2 = and i1 %rneg, %epos",
            f"%rz0 = select i1 %z1, {t} %dn, {t} %r",
            f"%rz = select i1 %z2, {t} %up, {t} %rz0",
            f"%rd = select i1 %eneg, {t} %dn, {t} %r",
            f"%ru = select i1 %epos, {t} %up, {t} %r",
            "%is_rd = icmp eq i32 %mode, 1",
            "%is_ru = icmp eq i32 %mode, 2",
            f"%a = select i1 %is_rd, {t} %rd, {t} %rz",
            f"%v = select i1 %is_ru, {t} %ru, {t} %a",
            f"ret {t} %v"], calls=(f"tritium_nextup_{s}", f"tritium_nextdown_{s}"))


_MODES = {"rz": 0, "rd": 1, "ru": 2}


def _define_directed() -> None:
    for s, t in (("f32", "float"), ("f64", "double")):
        fma = f"@llvm.fma.{s}"
        for mode, m in _MODES.items():
            adj = f"tritium_adjust_{s}"
            # two-sum: the exact error of a + b
            for op, sub in (("add", False), ("sub", True)):
                body = [f"%b = fneg {t} %b0"] if sub else [f"%b = bitcast {t} %b0 to {t}"]
                body += [f"%s = fadd {t} %a, %b", f"%bb = fsub {t} %s, %a", f"%ab = fsub {t} %s, %bb",
                         f"%ea = fsub {t} %a, %ab", f"%eb = fsub {t} %b, %bb", f"%e = fadd {t} %ea, %eb",
                         f"%v = call {t} @{adj}({t} %s, {t} %e, i32 {m})", f"ret {t} %v"]
                _def(f"tritium_ld_{op}_{mode}_{s}_{s}", t, [(t, "%a"), (t, "%b0")], body, calls=(adj, ))
            _def(f"tritium_ld_mul_{mode}_{s}_{s}", t, [(t, "%a"), (t, "%b")], [
                f"%p = fmul {t} %a, %b", f"%np = fneg {t} %p", f"%e = call {t} {fma}({t} %a, {t} %b, {t} %np)",
                f"%v = call {t} @{adj}({t} %p, {t} %e, i32 {m})", f"ret {t} %v"], calls=(adj, ))
            # the remainder a - q*b is exact; the error of q has its sign times the sign of b
            _def(f"tritium_ld_div_{mode}_{s}_{s}", t, [(t, "%a"), (t, "%b")], [
                f"%q = fdiv {t} %a, %b", f"%nq = fneg {t} %q", f"%r = call {t} {fma}({t} %nq, {t} %b, {t} %a)",
                f"%bneg = fcmp olt {t} %b, 0.0", f"%nr = fneg {t} %r", f"%e = select i1 %bneg, {t} %nr, {t} %r",
                f"%v = call {t} @{adj}({t} %q, {t} %e, i32 {m})", f"ret {t} %v"], calls=(adj, ))
            _def(f"tritium_ld_rcp_{mode}_{s}", t, [(t, "%b")], [
                f"%v = call {t} @tritium_ld_div_{mode}_{s}_{s}({t} 1.0, {t} %b)", f"ret {t} %v"],
                 calls=(f"tritium_ld_div_{mode}_{s}_{s}", ))
            _def(f"tritium_ld_sqrt_{mode}_{s}", t, [(t, "%x")], [
                f"%r = call {t} @llvm.sqrt.{s}({t} %x)", f"%nr = fneg {t} %r",
                f"%e = call {t} {fma}({t} %nr, {t} %r, {t} %x)",
                f"%v = call {t} @{adj}({t} %r, {t} %e, i32 {m})", f"ret {t} %v"], calls=(adj, ))
        _def(f"tritium_ld_rcp_rn_{s}", t, [(t, "%b")], [f"%v = fdiv {t} 1.0, %b", f"ret {t} %v"])
        _def(f"tritium_ld_rsqrt_rn_{s}", t, [(t, "%x")], [
            f"%r = call {t} @llvm.sqrt.{s}({t} %x)", f"%v = fdiv {t} 1.0, %r", f"ret {t} %v"])
    # fma with directed rounding. float32: exact product in double, two-sum with c, round once
    for mode, m in _MODES.items():
        _def(f"tritium_ld_fma_{mode}_f32_f32_f32", "float", [("float", "%a"), ("float", "%b"), ("float", "%c")], [
            "%ad = fpext float %a to double", "%bd = fpext float %b to double", "%cd = fpext float %c to double",
            "%p = fmul double %ad, %bd", "%s = fadd double %p, %cd", "%bb = fsub double %s, %p",
            "%ab = fsub double %s, %bb", "%ea = fsub double %p, %ab", "%eb = fsub double %cd, %bb",
            "%e1 = fadd double %ea, %eb", "%r = fptrunc double %s to float", "%rd = fpext float %r to double",
            "%d = fsub double %s, %rd", "%e = fadd double %d, %e1", "%ef = fptrunc double %e to float",
            # the error may underflow float: keep its sign
            "%epos = fcmp ogt double %e, 0.0", "%eneg = fcmp olt double %e, 0.0",
            "%sg0 = select i1 %epos, float 1.0, float 0.0", "%sg = select i1 %eneg, float -1.0, float %sg0",
            f"%v = call float @tritium_adjust_f32(float %r, float %sg, i32 {m})", "ret float %v"],
             calls=("tritium_adjust_f32", ))
        # float64: the error of an fma is the sum of three terms (Boldo and Muller); its sign is enough here
        _def(f"tritium_ld_fma_{mode}_f64_f64_f64", "double", [("double", "%a"), ("double", "%b"),
                                                               ("double", "%c")], [
            "%r1 = call double @llvm.fma.f64(double %a, double %b, double %c)",
            "%u1 = fmul double %a, %b", "%nu1 = fneg double %u1",
            "%u2 = call double @llvm.fma.f64(double %a, double %b, double %nu1)",
            "%a1 = fadd double %c, %u2", "%t1 = fsub double %a1, %c", "%t2 = fsub double %a1, %t1",
            "%t3 = fsub double %c, %t2", "%t4 = fsub double %u2, %t1", "%z = fadd double %t3, %t4",
            "%b1 = fadd double %u1, %a1", "%s1 = fsub double %b1, %u1", "%s2 = fsub double %b1, %s1",
            "%s3 = fsub double %u1, %s2", "%s4 = fsub double %a1, %s1", "%b2 = fadd double %s3, %s4",
            "%g = fsub double %b1, %r1", "%g2 = fadd double %g, %b2", "%e = fadd double %g2, %z",
            f"%v = call double @tritium_adjust_f64(double %r1, double %e, i32 {m})", "ret double %v"],
             calls=("tritium_adjust_f64", ))


# -- conversions -------------------------------------------------------------------------------------------

_ROUND_FN = {"rn": "roundeven", "rz": "trunc", "rd": "floor", "ru": "ceil"}


def _define_conversions() -> None:
    for src, t in (("float", "f32"), ("double", "f64")):
        for dst, (it, sat) in {"int": ("i32", "fptosi"), "uint": ("i32", "fptoui"), "ll": ("i64", "fptosi"),
                               "ull": ("i64", "fptoui")}.items():
            for mode, rfn in _ROUND_FN.items():
                name = f"tritium_ld_{src}2{dst}_{mode}_{t}"
                sfx = "f32" if src == "float" else "f64"
                _def(name, it, [(src, "%x")], [
                    f"%r = call {src} @llvm.{rfn}.{sfx}({src} %x)",
                    f"%v = call {it} @llvm.{sat}.sat.{it}.{sfx}({src} %r)", f"ret {it} %v"])
    # integers to floats with directed rounding: convert, then compare the exact value with the rounded one
    for name, it, signed, ft in (("int2float", "i32", True, "float"), ("uint2float", "i32", False, "float"),
                                 ("ll2float", "i64", True, "float"), ("ull2float", "i64", False, "float"),
                                 ("ll2double", "i64", True, "double"), ("ull2double", "i64", False, "double")):
        s = "f32" if ft == "float" else "f64"
        wide = "i64"
        conv = "sitofp" if signed else "uitofp"
        back = "fptosi" if signed else "fptoui"
        ext = "sext" if signed else "zext"
        lt, gt = ("slt", "sgt") if signed else ("ult", "ugt")
        argt = {"int2float": "i32", "uint2float": "u32", "ll2float": "i64", "ull2float": "u64", "ll2double": "i64",
                "ull2double": "u64"}[name]
        for mode in ("rn", "rz", "rd", "ru"):
            body = [f"%f = {conv} {it} %i to {ft}"]
            if mode == "rn":
                body.append(f"ret {ft} %f")
            else:
                body += [f"%w = {ext} {it} %i to {wide}" if it != wide else f"%w = add {wide} %i, 0",
                         f"%b = call {wide} @llvm.{back}.sat.{wide}.{s}({ft} %f)",
                         f"%below = icmp {lt} {wide} %w, %b", f"%above = icmp {gt} {wide} %w, %b",
                         f"%e0 = select i1 %above, {ft} 1.0, {ft} 0.0",
                         f"%e = select i1 %below, {ft} -1.0, {ft} %e0",
                         f"%v = call {ft} @tritium_adjust_{s}({ft} %f, {ft} %e, i32 {_MODES[mode]})",
                         f"ret {ft} %v"]
            _def(f"tritium_ld_{name}_{mode}_{argt}", ft, [(it, "%i")], body,
                 calls=() if mode == "rn" else (f"tritium_adjust_{s}", ))
    _def("tritium_ld_int2double_rn_i32", "double", [("i32", "%i")], ["%v = sitofp i32 %i to double", "ret double %v"])
    _def("tritium_ld_uint2double_rn_u32", "double", [("i32", "%i")], ["%v = uitofp i32 %i to double",
                                                                       "ret double %v"])
    for mode in ("rn", "rz", "rd", "ru"):
        body = ["%f = fptrunc double %x to float"]
        if mode == "rn":
            body.append("ret float %f")
        else:
            body += ["%b = fpext float %f to double", "%e64 = fsub double %x, %b",
                     "%epos = fcmp ogt double %e64, 0.0", "%eneg = fcmp olt double %e64, 0.0",
                     "%e0 = select i1 %epos, float 1.0, float 0.0", "%e = select i1 %eneg, float -1.0, float %e0",
                     f"%v = call float @tritium_adjust_f32(float %f, float %e, i32 {_MODES[mode]})", "ret float %v"]
        _def(f"tritium_ld_double2float_{mode}_f64", "float", [("double", "%x")], body,
             calls=() if mode == "rn" else ("tritium_adjust_f32", ))
    for name, src, dst in (("float_as_int", "float", "i32"), ("float_as_uint", "float", "i32"),
                           ("int_as_float", "i32", "float"), ("uint_as_float", "i32", "float"),
                           ("double_as_longlong", "double", "i64"), ("longlong_as_double", "i64", "double")):
        argt = {"float": "f32", "double": "f64", "i32": "u32" if "uint" in name else "i32", "i64": "i64"}[src]
        _def(f"tritium_ld_{name}_{argt}", dst, [(src, "%x")], [f"%v = bitcast {src} %x to {dst}", f"ret {dst} %v"])
    _def("tritium_ld_double2hiint_f64", "i32", [("double", "%x")], [
        "%b = bitcast double %x to i64", "%h = lshr i64 %b, 32", "%v = trunc i64 %h to i32", "ret i32 %v"])
    _def("tritium_ld_double2loint_f64", "i32", [("double", "%x")], [
        "%b = bitcast double %x to i64", "%v = trunc i64 %b to i32", "ret i32 %v"])
    _def("tritium_ld_hiloint2double_i32_i32", "double", [("i32", "%hi"), ("i32", "%lo")], [
        "%h = zext i32 %hi to i64", "%l = zext i32 %lo to i64", "%hs = shl i64 %h, 32", "%b = or i64 %hs, %l",
        "%v = bitcast i64 %b to double", "ret double %v"])
    for s, t in (("f32", "float"), ("f64", "double")):
        _def(f"tritium_ld_llrint_{s}", "i64", [(t, "%x")], [
            f"%r = call {t} @llvm.roundeven.{s}({t} %x)", f"%v = call i64 @llvm.fptosi.sat.i64.{s}({t} %r)",
            "ret i64 %v"])
        _def(f"tritium_ld_llround_{s}", "i64", [(t, "%x")], [
            f"%r = call {t} @llvm.round.{s}({t} %x)", f"%v = call i64 @llvm.fptosi.sat.i64.{s}({t} %r)",
            "ret i64 %v"])


# -- integer functions -------------------------------------------------------------------------------------

def _define_integer() -> None:
    for it, s in (("i32", "i32"), ("i64", "i64")):
        _def(f"tritium_ld_brev_{s}", it, [(it, "%x")], [f"%v = call {it} @llvm.bitreverse.{it}({it} %x)",
                                                        f"ret {it} %v"])
        _def(f"tritium_ld_ffs_{s}", "i32", [(it, "%x")], [
            f"%z = call {it} @llvm.cttz.{it}({it} %x, i1 false)", f"%p = add {it} %z, 1",
            f"%zero = icmp eq {it} %x, 0", f"%r = select i1 %zero, {it} 0, {it} %p",
            f"%v = trunc {it} %r to i32" if it == "i64" else "%v = add i32 %r, 0", "ret i32 %v"])
        _def(f"tritium_ld_clz_{s}", "i32", [(it, "%x")], [
            f"%z = call {it} @llvm.ctlz.{it}({it} %x, i1 false)",
            f"%v = trunc {it} %z to i32" if it == "i64" else "%v = add i32 %z, 0", "ret i32 %v"])
        _def(f"tritium_ld_popc_{s}", "i32", [(it, "%x")], [
            f"%z = call {it} @llvm.ctpop.{it}({it} %x)",
            f"%v = trunc {it} %z to i32" if it == "i64" else "%v = add i32 %z, 0", "ret i32 %v"])
    for signed, s in ((True, "i32"), (False, "u32")):
        ext = "sext" if signed else "zext"
        shr = "ashr" if signed else "lshr"
        _def(f"tritium_ld_mulhi_{s}_{s}", "i32", [("i32", "%a"), ("i32", "%b")], [
            f"%x = {ext} i32 %a to i64", f"%y = {ext} i32 %b to i64", "%p = mul i64 %x, %y",
            f"%h = {shr} i64 %p, 32", "%v = trunc i64 %h to i32", "ret i32 %v"])
        _def(f"tritium_ld_mul24_{s}_{s}", "i32", [("i32", "%a"), ("i32", "%b")], [
            "%ta = trunc i32 %a to i24", "%tb = trunc i32 %b to i24", f"%x = {ext} i24 %ta to i32",
            f"%y = {ext} i24 %tb to i32", "%v = mul i32 %x, %y", "ret i32 %v"])
        for name, plus in (("hadd", 0), ("rhadd", 1)):
            _def(f"tritium_ld_{name}_{s}_{s}", "i32", [("i32", "%a"), ("i32", "%b")], [
                f"%x = {ext} i32 %a to i64", f"%y = {ext} i32 %b to i64", "%t = add i64 %x, %y",
                f"%u = add i64 %t, {plus}", f"%h = {shr} i64 %u, 1", "%v = trunc i64 %h to i32", "ret i32 %v"])
        lt = "slt" if signed else "ult"
        _def(f"tritium_ld_sad_{s}_{s}_u32", "i32", [("i32", "%a"), ("i32", "%b"), ("i32", "%c")], [
            f"%less = icmp {lt} i32 %a, %b", "%d1 = sub i32 %b, %a", "%d2 = sub i32 %a, %b",
            "%d = select i1 %less, i32 %d1, i32 %d2", "%v = add i32 %d, %c", "ret i32 %v"])
    for signed, s in ((True, "i64"), (False, "u64")):
        ext = "sext" if signed else "zext"
        shr = "ashr" if signed else "lshr"
        _def(f"tritium_ld_mulhi_{s}_{s}", "i64", [("i64", "%a"), ("i64", "%b")], [
            f"%x = {ext} i64 %a to i128", f"%y = {ext} i64 %b to i128", "%p = mul i128 %x, %y",
            f"%h = {shr} i128 %p, 64", "%v = trunc i128 %h to i64", "ret i64 %v"])
    # __byte_perm: byte i of the result is byte (s >> 4i) & 7 of the 8 bytes y:x
    body = ["%xl = zext i32 %x to i64", "%yl = zext i32 %y to i64", "%yh = shl i64 %yl, 32", "%all = or i64 %yh, %xl",
            "%acc0 = add i32 0, 0"]
    for i in range(4):
        body += [f"%s{i} = lshr i32 %s, {4 * i}", f"%n{i} = and i32 %s{i}, 7", f"%n{i}w = zext i32 %n{i} to i64",
                 f"%sh{i} = shl i64 %n{i}w, 3", f"%by{i} = lshr i64 %all, %sh{i}", f"%bt{i} = and i64 %by{i}, 255",
                 f"%b{i} = trunc i64 %bt{i} to i32", f"%p{i} = shl i32 %b{i}, {8 * i}",
                 f"%acc{i + 1} = or i32 %acc{i}, %p{i}"]
    _def("tritium_ld_byte_perm_i32_i32_i32", "i32", [("i32", "%x"), ("i32", "%y"), ("i32", "%s")],
         body + ["ret i32 %acc4"])


# -- float functions -------------------------------------------------------------------------------------

# libdevice name -> C function (float64) for one-argument functions computed through libm
_LIBM1 = {"tan": "tan", "sinh": "sinh", "asin": "asin", "acos": "acos", "atan": "atan",
          "asinh": "asinh", "acosh": "acosh", "atanh": "atanh", "erfc": "erfc", "log10": "log10",
          "log1p": "log1p", "expm1": "expm1", "j0": "j0", "j1": "j1", "y0": "y0", "y1": "y1", "lgamma": "lgamma",
          "tgamma": "tgamma", "logb": "logb", "fast_exp10f": "exp10", "exp": "exp",
          "log": "log", "sin": "sin", "cos": "cos", "exp2": "exp2", "log2": "log2", "erf": "erf"}
_LIBM2 = {"atan2": "atan2", "hypot": "hypot", "fmod": "fmod", "pow": "pow"}


def _define_float() -> None:
    for ld, cname in _LIBM1.items():
        fn = _c(cname, "double", "double")
        for s in ("f32", "f64"):
            _via_double(f"tritium_ld_{ld}_{s}", s, 1, [f"%r = call double {fn}(double %a0)"], c_syms=(cname, ))
    for ld, cname in _LIBM2.items():
        fn = _c(cname, "double", "double", "double")
        for s in ("f32", "f64"):
            _via_double(f"tritium_ld_{ld}_{s}_{s}", s, 2, [f"%r = call double {fn}(double %a0, double %a1)"],
                        c_syms=(cname, ))
    # remainder: a zero result takes x's sign (IEEE 754); glibc's is +0 in rare cases with a tiny y
    # (remainder(-4.5e-276, 4e-323))
    rem = _c("remainder", "double", "double", "double")
    for s in ("f32", "f64"):
        _via_double(f"tritium_ld_remainder_{s}_{s}", s, 2, [
            f"%r0 = call double {rem}(double %a0, double %a1)", "%z = fcmp oeq double %r0, 0.0",
            "%rs = call double @llvm.copysign.f64(double %r0, double %a0)",
            "%r = select i1 %z, double %rs, double %r0"], c_syms=("remainder", ))
    nf = _c("nextafterf", "float", "float", "float")
    nd = _c("nextafter", "double", "double", "double")
    _def("tritium_ld_nextafter_f32_f32", "float", [("float", "%a"), ("float", "%b")], [
        f"%v = call float {nf}(float %a, float %b)", "ret float %v"], c_syms=("nextafterf", ))
    _def("tritium_ld_nextafter_f64_f64", "double", [("double", "%a"), ("double", "%b")], [
        f"%v = call double {nd}(double %a, double %b)", "ret double %v"], c_syms=("nextafter", ))
    for s, t in (("f32", "float"), ("f64", "double")):
        it = _IT[t]
        # fdim: x - y when x > y, else +0 (NaN in, NaN out)
        _def(f"tritium_ld_fdim_{s}_{s}", t, [(t, "%a"), (t, "%b")], [
            f"%d = fsub {t} %a, %b", f"%gt = fcmp ugt {t} %a, %b", f"%v = select i1 %gt, {t} %d, {t} 0.0",
            f"ret {t} %v"])
        _def(f"tritium_ld_saturatef_{s}", t, [(t, "%x")], [
            f"%m = call {t} @llvm.minnum.{s}({t} %x, {t} 1.0)", f"%pos = fcmp ogt {t} %x, 0.0",
            f"%v = select i1 %pos, {t} %m, {t} 0.0", f"ret {t} %v"])
        _def(f"tritium_ld_signbit_{s}", "i32", [(t, "%x")], [
            f"%b = bitcast {t} %x to {it}", f"%neg = icmp slt {it} %b, 0", "%v = zext i1 %neg to i32", "ret i32 %v"])
        _def(f"tritium_ld_rcp64h_{s}", t, [(t, "%x")], [f"%r = fdiv {t} 1.0, %x", f"ret {t} %r"])
    for ld, cname, cf in (("ilogb", "ilogb", "ilogbf"), ):
        fd = _c(cname, "i32", "double")
        ff = _c(cf, "i32", "float")
        _def(f"tritium_ld_{ld}_f64", "i32", [("double", "%x")], [f"%v = call i32 {fd}(double %x)", "ret i32 %v"],
             c_syms=(cname, ))
        _def(f"tritium_ld_{ld}_f32", "i32", [("float", "%x")], [f"%v = call i32 {ff}(float %x)", "ret i32 %v"],
             c_syms=(cf, ))
    ld_d = _c("ldexp", "double", "double", "i32")
    for ld in ("ldexp", "scalbn"):
        _via_double(f"tritium_ld_{ld}_f32_i32", "f32", 1, [f"%r = call double {ld_d}(double %a0, i32 %n)"],
                    c_syms=("ldexp", ))
        _def(f"tritium_ld_{ld}_f64_i32", "double", [("double", "%x"), ("i32", "%n")], [
            f"%v = call double {ld_d}(double %x, i32 %n)", "ret double %v"], c_syms=("ldexp", ))
    for ld in ("jn", "yn"):
        fn = _c(ld, "double", "i32", "double")
        for s in ("f32", "f64"):
            _via_double(f"tritium_ld_{ld}_i32_{s}", s, 1, [f"%r = call double {fn}(i32 %n, double %a0)"],
                        c_syms=(ld, ))
    # tanh and cosh: mathlib_f64's (glibc's are over CUDA's 1 ulp), the same code as tl.math's
    for ld, body in (("tanh", mathlib_f64.TANH), ("cosh", mathlib_f64.COSH)):
        core = f"tritium_{ld}64"
        text = mathlib_f64.text_definition(core, body)
        _FUNCS[core] = (lambda text=text: text, (), ())
        for s in ("f32", "f64"):
            _via_double(f"tritium_ld_{ld}_{s}", s, 1, [f"%r = call double @{core}(double %a0)"], calls=(core, ))
    libdevice_special.define()


def _define_all() -> None:
    _define_helpers()
    _define_directed()
    _define_conversions()
    _define_integer()
    _define_float()
    _define_f64_to_f32_odd()


def _define_f64_to_f32_odd() -> None:
    # round to odd: truncate toward zero, then set the last bit when anything was lost; rounding again to a type
    # at least two bits narrower is then exactly the correctly rounded result
    _def("tritium_f64_to_f32_odd", "float", [("double", "%x")], [
        "%f = fptrunc double %x to float", "%back = fpext float %f to double", "%exact = fcmp oeq double %back, %x",
        "%ax = call double @llvm.fabs.f64(double %x)", "%ab = call double @llvm.fabs.f64(double %back)",
        "%over = fcmp ogt double %ab, %ax", "%fb = bitcast float %f to i32", "%dec = sub i32 %fb, 1",
        "%tz = select i1 %over, i32 %dec, i32 %fb", "%odd = or i32 %tz, 1", "%nan = fcmp uno double %x, 0.0",
        "%keep = or i1 %exact, %nan", "%r = select i1 %keep, i32 %fb, i32 %odd", "%v = bitcast i32 %r to float",
        "ret float %v"])


_define_all()


def function_names() -> list[str]:
    return sorted(_FUNCS)


def libdevice_function(name: str, arg_types: list[str]) -> str:
    """The library function implementing libdevice ``name`` for arguments of these types (``f32``...)."""
    fn = f"tritium_ld_{name}_{'_'.join(arg_types)}"
    if fn not in _FUNCS:
        raise KeyError(fn)
    return fn


def library_ir(names: Iterable[str]) -> str:
    pending = list(dict.fromkeys(names))
    unknown = [n for n in pending if n not in _FUNCS]
    if unknown:
        raise KeyError(f"no extra math function(s) {', '.join(unknown)}")
    done: dict[str, str] = {}
    c_syms: dict[str, None] = {}
    while pending:
        n = pending.pop(0)
        if n in done:
            continue
        make, calls, cs = _FUNCS[n]
        done[n] = make()
        c_syms.update(dict.fromkeys(cs))
        pending += [c for c in calls if c not in done]
    return "\n\n".join([_DECLS[c] for c in c_syms] + list(done.values())) + "\n"
