"""libdevice functions the C library lacks or gets wrong for floats, computed in float64 for
:mod:`.mathlib_extra`: ``cbrt``/``rcbrt`` and ``exp10`` (libm's polished to CUDA's 1 ulp), reciprocal norms
(double-double sums of squares, one Newton step), norms (scaled), ``sinpi``/``cospi`` (exact reduction),
``normcdf`` (the argument's rounding corrected), ``erfinv``/``erfcinv``/``normcdfinv`` (Newton steps on libm's
``erf``/``erfc``, in the tail on log(erfc)), ``erfcx`` (an asymptotic series where the direct product
underflows), ``cyl_bessel_i0``/``i1`` (power series, asymptotic expansion beyond 30).
tests/cpu/test_libdevice_accuracy_*.py hold them to CUDA's documented float64 bounds over their domains."""
from __future__ import annotations

from .mathlib_defs import _FUNCS, _c, _def, _fconst, _fix_int_param, _via_double

_SQRT1_2 = 0.7071067811865476
_SQRT1_2_LO = -4.833646656726457e-17  # 1/sqrt(2) - _SQRT1_2
_SQRT2 = 1.4142135623730951
_TWO_OVER_SQRTPI = 1.1283791670955126
_PI = 3.141592653589793
_LN10 = 2.302585092994046
_LN10_LO = -2.1707562233822494e-16  # ln(10) - _LN10


def _erfcx_series() -> list[str]:
    """1 - h (1 - 3h (1 - 5h (... (1 - 15h)))) with h = 1 / (2 x^2): the asymptotic series of x sqrt(pi) erfcx(x)."""
    body = ["%w8 = fadd double 1.0, 0.0"]
    for k in range(7, 0, -1):
        body += [f"%hw{k} = fmul double %h, %w{k + 1}", f"%cw{k} = fmul double %hw{k}, {float(2 * k + 1)!r}",
                 f"%w{k} = fsub double 1.0, %cw{k}"]
    return body + ["%hw0 = fmul double %h, %w1", "%u = fsub double 1.0, %hw0"]


def _recip_root(n: int, hi: str) -> list[str]:
    """1 / sqrt of the sum of the squares %q<i> (whose rounded sum is ``hi``), to ~0.5 ulp: the squares' and the
    additions' rounding errors are gathered (fma, TwoSum) into a low part, and one Newton step for the
    reciprocal square root of hi + lo polishes 1 / sqrt(hi) (1 / hypot and 1 / sqrt(sum) were 1.1-1.4 ulp off;
    CUDA documents 1). The result is rescaled by %sc; an infinite argument gives 0, a zero sum inf."""
    body = [f"%nq{i} = fneg double %q{i}" for i in range(n)]
    body += [f"%ql{i} = call double @llvm.fma.f64(double %c{i}, double %c{i}, double %nq{i})" for i in range(n)]
    body += ["%lo0 = fadd double %ql0, %ql1"] + [f"%lo{i - 1} = fadd double %lo{i - 2}, %ql{i}" for i in range(2, n)]
    prev, lo = "%q0", f"%lo{n - 2}"
    for i in range(1, n):      # TwoSum of each addition
        body += [f"%tb{i} = fsub double %s{i}, {prev}", f"%ta{i} = fsub double %s{i}, %tb{i}",
                 f"%da{i} = fsub double {prev}, %ta{i}", f"%db{i} = fsub double %q{i}, %tb{i}",
                 f"%te{i} = fadd double %da{i}, %db{i}", f"%lt{i} = fadd double {lo}, %te{i}"]
        prev, lo = f"%s{i}", f"%lt{i}"
    return body + [
        f"%sr = call double @llvm.sqrt.f64(double {hi})", "%r0 = fdiv double 1.0, %sr",
        "%r2 = fmul double %r0, %r0", "%nr2 = fneg double %r2",
        "%r2lo = call double @llvm.fma.f64(double %r0, double %r0, double %nr2)",
        f"%nhi = fneg double {hi}", "%e0 = call double @llvm.fma.f64(double %nhi, double %r2, double 1.0)",
        "%e1 = call double @llvm.fma.f64(double %nhi, double %r2lo, double %e0)",
        f"%nlo = fneg double {lo}", "%e2 = call double @llvm.fma.f64(double %nlo, double %r2, double %e1)",
        "%hr = fmul double %r0, 0.5", "%r1 = call double @llvm.fma.f64(double %hr, double %e2, double %r0)",
        "%rsc = fmul double %r1, %sc", f"%zero = fcmp oeq double {hi}, 0.0",
        f"%rz = select i1 %zero, double {_fconst('double', float('inf'))}, double %rsc",
        f"%r = select i1 %anyinf{n - 1}, double 0.0, double %rz"]


def define() -> None:
    d = lambda v: _fconst("double", v)  # noqa: E731
    erf = _c("erf", "double", "double")
    erfc = _c("erfc", "double", "double")
    exp = _c("exp", "double", "double")
    log = _c("log", "double", "double")
    sin = _c("sin", "double", "double")
    cos = _c("cos", "double", "double")
    cbrt = _c("cbrt", "double", "double")
    # exp10(x) = exp(t) (1 + t_lo) with t + t_lo = x ln(10) to twice double's precision (an fma and ln(10)'s
    # tail): libm's exp10 was 1.8 ulp off (CUDA documents 1); where exp(t) is 0 or inf (or x is NaN) it stands
    _def("tritium_exp10_64", "double", [("double", "%x")], [
        f"%t = fmul double %x, {d(_LN10)}", "%nt = fneg double %t",
        f"%te = call double @llvm.fma.f64(double %x, double {d(_LN10)}, double %nt)",
        f"%tl = call double @llvm.fma.f64(double %x, double {d(_LN10_LO)}, double %te)",
        f"%e = call double {exp}(double %t)", "%p = call double @llvm.fma.f64(double %e, double %tl, double %e)",
        f"%fin = fcmp one double %e, {d(float('inf'))}", "%nz = fcmp une double %e, 0.0", "%ok = and i1 %fin, %nz",
        "%r = select i1 %ok, double %p, double %e", "ret double %r"], c_syms=("exp", ))
    for s in ("f32", "f64"):
        _via_double(f"tritium_ld_exp10_{s}", s, 1, ["%r = call double @tritium_exp10_64(double %a0)"],
                    calls=("tritium_exp10_64", ))
        _via_double(f"tritium_ld_cbrt_{s}", s, 1, ["%r = call double @tritium_cbrt64(double %a0, i1 false)"],
                    calls=("tritium_cbrt64", ))
        _via_double(f"tritium_ld_rcbrt_{s}", s, 1, ["%r = call double @tritium_cbrt64(double %a0, i1 true)"],
                    calls=("tritium_cbrt64", ))
        for n, name in ((2, "hypot"), (3, "norm3d"), (4, "norm4d")):
            # scaled by a power of two (exact) chosen from the largest magnitude, so that the squares neither
            # overflow (norm3d(1e200, ...) was inf) nor underflow (norm3d(1e-200, ...) was 0); an infinite
            # argument gives +inf even beside a NaN, as hypot
            sq = [f"%b{i} = call double @llvm.fabs.f64(double %a{i})" for i in range(n)]
            sq += ["%m1 = call double @llvm.maxnum.f64(double %b0, double %b1)"]
            sq += [f"%m{i} = call double @llvm.maxnum.f64(double %m{i - 1}, double %b{i})" for i in range(2, n)]
            sq += [f"%isinf{i} = fcmp oeq double %b{i}, {d(float('inf'))}" for i in range(n)]
            sq += ["%anyinf1 = or i1 %isinf0, %isinf1"] + [f"%anyinf{i} = or i1 %anyinf{i - 1}, %isinf{i}"
                                                           for i in range(2, n)]
            sq += [f"%huge = fcmp ogt double %m{n - 1}, {d(2.0 ** 500)}",
                   f"%tiny = fcmp olt double %m{n - 1}, {d(2.0 ** -500)}",
                   f"%sc0 = select i1 %huge, double {d(2.0 ** -600)}, double 1.0",
                   f"%sc = select i1 %tiny, double {d(2.0 ** 600)}, double %sc0",
                   f"%un0 = select i1 %huge, double {d(2.0 ** 600)}, double 1.0",
                   f"%un = select i1 %tiny, double {d(2.0 ** -600)}, double %un0"]
            sq += [f"%c{i} = fmul double %b{i}, %sc" for i in range(n)]
            sq += [f"%q{i} = fmul double %c{i}, %c{i}" for i in range(n)]
            acc = ["%s1 = fadd double %q0, %q1"] + [f"%s{i} = fadd double %s{i - 1}, %q{i}" for i in range(2, n)]
            last = f"%s{n - 1}"
            root = [f"%rs = call double @llvm.sqrt.f64(double {last})", "%ru = fmul double %rs, %un",
                    f"%rt = select i1 %anyinf{n - 1}, double {d(float('inf'))}, double %ru"]
            if name != "hypot":      # hypot itself is libm's (0.5 ulp measured)
                _via_double(f"tritium_ld_{name}_{'_'.join([s] * n)}", s, n, sq + acc + root + [
                    "%r = bitcast double %rt to double"])
            _via_double(f"tritium_ld_r{name}_{'_'.join([s] * n)}", s, n, sq + acc + _recip_root(n, last))
        # sinpi/cospi: x = n + r with n an integer and |r| <= 1/2 exactly
        # cospi is sin(pi (1/2 - |r|)) (exact too): cos(pi r) near r = 1/2 would magnify pi r's rounding
        # thousands of times (3e3 ulp at x = 1.5001); sin's relative error stays that of its argument
        for name, fn_ in (("sinpi", sin), ("cospi", sin)):
            body = ["%n = call double @llvm.roundeven.f64(double %a0)", "%rr = fsub double %a0, %n"]
            if name == "cospi":
                body += ["%ar0 = call double @llvm.fabs.f64(double %rr)", "%rc = fsub double 0.5, %ar0"]
            body += [f"%pr = fmul double {'%rc' if name == 'cospi' else '%rr'}, {d(_PI)}",
                     f"%t = call double {fn_}(double %pr)",
                    "%h = fmul double %n, 0.5", "%hf = call double @llvm.floor.f64(double %h)",
                    "%odd = fcmp one double %h, %hf", "%nt = fneg double %t",
                    "%r0 = select i1 %odd, double %nt, double %t"]
            if name == "cospi":
                body += ["%ar = call double @llvm.fabs.f64(double %rr)", "%half = fcmp oeq double %ar, 0.5",
                         "%r = select i1 %half, double 0.0, double %r0"]
            else:
                # x - round(x) loses the sign of -0: sinpi(-0) is -0 (odd, as CUDA and C23 say)
                body += ["%z = fcmp oeq double %a0, 0.0", "%r = select i1 %z, double %a0, double %r0"]
            _via_double(f"tritium_ld_{name}_{s}", s, 1, body, c_syms=("sin", ))
        # normcdf(x) = erfc(m + dm) / 2 with m + dm = -x / sqrt(2) to twice double's precision: in the lower
        # tail erfc magnifies m's rounding about 2 m^2 times (1e3 ulp at x = -28), so the first-order
        # correction erfc(m + dm) = erfc(m) (1 - dm 2 / (sqrt(pi) erfcx(m))) is applied where m > 0
        _via_double(f"tritium_ld_normcdf_{s}", s, 1, [
            "%z = fneg double %a0", f"%m = fmul double %z, {d(_SQRT1_2)}", "%nm = fneg double %m",
            f"%mlo = call double @llvm.fma.f64(double %z, double {d(_SQRT1_2)}, double %nm)",
            f"%clo = fmul double %z, {d(_SQRT1_2_LO)}", "%dm = fadd double %mlo, %clo",
            f"%e = call double {erfc}(double %m)", "%cx = call double @tritium_erfcx64(double %m)",
            f"%sl = fmul double %dm, {d(_TWO_OVER_SQRTPI)}", "%rel = fdiv double %sl, %cx",
            "%fac = fsub double 1.0, %rel", "%pos0 = fcmp ogt double %m, 0.0",
            # past 40 erfc(m) is 0 and the correction may be NaN (normcdf(-inf))
            "%fin = fcmp olt double %m, 40.0", "%pos = and i1 %pos0, %fin", "%ef = fmul double %e, %fac",
            "%ec = select i1 %pos, double %ef, double %e", "%r = fmul double %ec, 0.5"],
            calls=("tritium_erfcx64", ), c_syms=("erfc", ))
        _via_double(f"tritium_ld_erfinv_{s}", s, 1, ["%r = call double @tritium_erfinv64(double %a0)"],
                    calls=("tritium_erfinv64", ))
        _via_double(f"tritium_ld_erfcinv_{s}", s, 1, ["%r = call double @tritium_erfcinv64(double %a0)"],
                    calls=("tritium_erfcinv64", ))
        _via_double(f"tritium_ld_normcdfinv_{s}", s, 1, [
            "%y = fmul double %a0, 2.0", "%e = call double @tritium_erfcinv64(double %y)",
            f"%r = fmul double %e, {d(-_SQRT2)}"], calls=("tritium_erfcinv64", ))
        _via_double(f"tritium_ld_erfcx_{s}", s, 1, ["%r = call double @tritium_erfcx64(double %a0)"],
                    calls=("tritium_erfcx64", ))
        for k in (0, 1):
            _via_double(f"tritium_ld_cyl_bessel_i{k}_{s}", s, 1, [f"%r = call double @tritium_bessel_i{k}(double %a0)"],
                        calls=(f"tritium_bessel_i{k}", ))
    for name in list(_FUNCS):
        if name.startswith(("tritium_ld_ldexp", "tritium_ld_scalbn", "tritium_ld_jn", "tritium_ld_yn")) and \
                name.endswith(("f32_i32", "i32_f32")):
            _fix_int_param(name)
    for name in ("tritium_ld_jn_i32_f64", "tritium_ld_yn_i32_f64"):
        _fix_int_param(name)

    # cbrt (or its reciprocal) to ~0.5 ulp: libm's cbrt (up to 2.6 ulp measured; 1/cbrt 4.4 ulp) polished by one
    # Newton step whose residual y^3 - x is computed exactly with fmas. |x| outside [2^-900, 2^900] is scaled
    # by 2^+-900 first (exact), so that y^3 neither underflows (the residual would lose its digits) nor overflows
    _def("tritium_cbrt64", "double", [("double", "%x"), ("i1", "%recip")], [
        "%ax = call double @llvm.fabs.f64(double %x)",
        f"%tiny = fcmp olt double %ax, {d(2.0 ** -900)}", f"%huge = fcmp ogt double %ax, {d(2.0 ** 900)}",
        f"%s0 = select i1 %huge, double {d(2.0 ** -900)}, double 1.0",
        f"%s = select i1 %tiny, double {d(2.0 ** 900)}, double %s0",
        f"%u0 = select i1 %huge, double {d(2.0 ** 300)}, double 1.0",
        f"%u = select i1 %tiny, double {d(2.0 ** -300)}, double %u0",
        "%xs = fmul double %x, %s", f"%y = call double {cbrt}(double %xs)",
        "%y2 = fmul double %y, %y", "%ny2 = fneg double %y2",
        "%y2lo = call double @llvm.fma.f64(double %y, double %y, double %ny2)",
        "%y3 = fmul double %y2, %y", "%ny3 = fneg double %y3",
        "%y3e = call double @llvm.fma.f64(double %y2, double %y, double %ny3)",
        "%y3lo = call double @llvm.fma.f64(double %y2lo, double %y, double %y3e)",
        "%d0 = fsub double %y3, %xs", "%res = fadd double %d0, %y3lo",
        "%den = fmul double %y2, 3.0", "%corr = fdiv double %res, %den",
        # the root is y - corr; for the reciprocal, 1/(y - corr) = q (1 + e + corr q) with q = 1/y, e = 1 - y q
        "%root = fsub double %y, %corr",
        "%q = fdiv double 1.0, %y", "%nq = fneg double %q",
        "%e = call double @llvm.fma.f64(double %y, double %nq, double 1.0)",
        "%t = call double @llvm.fma.f64(double %corr, double %q, double %e)",
        "%rq = call double @llvm.fma.f64(double %q, double %t, double %q)",
        "%pol = select i1 %recip, double %rq, double %root", "%pu = fmul double %pol, %u",
        "%un = fdiv double 1.0, %u", "%pr = fmul double %pol, %un", "%scaled = select i1 %recip, double %pr, double %pu",
        # zeros, infinities and NaN: libm's answer (the Newton step would be 0/0 or inf/inf)
        f"%fin = fcmp one double %ax, {d(float('inf'))}", "%nz = fcmp une double %ax, 0.0", "%ok = and i1 %fin, %nz",
        "%plain = select i1 %recip, double %q, double %y", "%r = select i1 %ok, double %scaled, double %plain",
        "ret double %r"], c_syms=("cbrt", ))

    # erfinv: a rational first guess, then Newton steps on erf (quadratic convergence; three are plenty)
    newton = []
    prev = "%x0"
    for i in range(3):
        newton += [f"%e{i} = call double {erf}(double {prev})", f"%f{i} = fsub double %e{i}, %y",
                   f"%sq{i} = fmul double {prev}, {prev}", f"%nsq{i} = fneg double %sq{i}",
                   f"%ex{i} = call double {exp}(double %nsq{i})", f"%dv{i} = fmul double %ex{i}, {d(_TWO_OVER_SQRTPI)}",
                   f"%st{i} = fdiv double %f{i}, %dv{i}", f"%x{i + 1} = fsub double {prev}, %st{i}"]
        prev = f"%x{i + 1}"
    _def("tritium_erfinv64_core", "double", [("double", "%y")], [
        # Giles' approximation: w = -log((1 - y)(1 + y)); a polynomial in w (or sqrt(w)) times y
        "%omy = fsub double 1.0, %y", "%opy = fadd double 1.0, %y", "%pr = fmul double %omy, %opy",
        f"%lw = call double {log}(double %pr)", "%w = fneg double %lw", "%small = fcmp olt double %w, 5.0",
        "%ws = fsub double %w, 2.5", "%wb0 = call double @llvm.sqrt.f64(double %w)", "%wb = fsub double %wb0, 3.0",
        "%ww = select i1 %small, double %ws, double %wb",
        f"%p0 = select i1 %small, double {d(2.81022636e-08)}, double {d(-0.000200214257)}",
        f"%c1 = select i1 %small, double {d(3.43273939e-07)}, double {d(0.000100950558)}",
        "%m1 = fmul double %p0, %ww", "%p1 = fadd double %m1, %c1",
        f"%c2 = select i1 %small, double {d(-3.5233877e-06)}, double {d(0.00134934322)}",
        "%m2 = fmul double %p1, %ww", "%p2 = fadd double %m2, %c2",
        f"%c3 = select i1 %small, double {d(-4.39150654e-06)}, double {d(-0.00367342844)}",
        "%m3 = fmul double %p2, %ww", "%p3 = fadd double %m3, %c3",
        f"%c4 = select i1 %small, double {d(0.00021858087)}, double {d(0.00573950773)}",
        "%m4 = fmul double %p3, %ww", "%p4 = fadd double %m4, %c4",
        f"%c5 = select i1 %small, double {d(-0.00125372503)}, double {d(-0.0076224613)}",
        "%m5 = fmul double %p4, %ww", "%p5 = fadd double %m5, %c5",
        f"%c6 = select i1 %small, double {d(-0.00417768164)}, double {d(0.00943887047)}",
        "%m6 = fmul double %p5, %ww", "%p6 = fadd double %m6, %c6",
        f"%c7 = select i1 %small, double {d(0.246640727)}, double {d(1.00167406)}",
        "%m7 = fmul double %p6, %ww", "%p7 = fadd double %m7, %c7",
        f"%c8 = select i1 %small, double {d(1.50140941)}, double {d(2.83297682)}",
        "%m8 = fmul double %p7, %ww", "%p8 = fadd double %m8, %c8",
        "%x0 = fmul double %p8, %y"] + newton + [
        "%ay = call double @llvm.fabs.f64(double %y)", "%one = fcmp oeq double %ay, 1.0",
        f"%inf = call double @llvm.copysign.f64(double {d(float('inf'))}, double %y)",
        "%out = fcmp ogt double %ay, 1.0", "%zero = fcmp oeq double %y, 0.0",
        f"%r1 = select i1 %one, double %inf, double {prev}", f"%r2 = select i1 %out, double {d(float('nan'))}, double %r1",
        "%r = select i1 %zero, double %y, double %r2", "ret double %r"], c_syms=("erf", "exp", "log"))
    # above |y| = 1/2 the root is erfcinv(1 - |y|) (1 - |y| is exact): Newton on erf there is limited by erf's
    # absolute rounding near 1, which the root's slope exp(x^2) magnifies (erfinv(1 - 2^-53) was 5.46, not 5.86)
    _def("tritium_erfinv64", "double", [("double", "%y")], [
        "%ay = call double @llvm.fabs.f64(double %y)", "%big = fcmp ogt double %ay, 0.5",
        "%c = fsub double 1.0, %ay", "%t = call double @tritium_erfcinv64(double %c)",
        "%tail = call double @llvm.copysign.f64(double %t, double %y)",
        "%core = call double @tritium_erfinv64_core(double %y)",
        "%r = select i1 %big, double %tail, double %core", "ret double %r"],
        calls=("tritium_erfinv64_core", "tritium_erfcinv64"))

    # erfcinv. Centre (0.0625 <= y <= 1): Newton on erfc from erfinv(1 - y). Tail (y < 0.0625): Newton on
    # log(erfc(x)) = log(erfcx(x)) - x^2, which is concave and nearly quadratic there, so from sqrt(-log y)
    # (always right of the root) it converges monotonically; Newton on erfc itself, whose slope vanishes
    # like exp(-x^2), crawls in the tail (erfcinv(1e-300) came out 25.5 instead of 26.2)
    steps = []
    prev = "%g1"
    for i in range(6):
        steps += [f"%e{i} = call double {erfc}(double {prev})", f"%f{i} = fsub double %e{i}, %yy",
                  f"%sq{i} = fmul double {prev}, {prev}", f"%nsq{i} = fneg double %sq{i}",
                  f"%ex{i} = call double {exp}(double %nsq{i})", f"%dv{i} = fmul double %ex{i}, {d(-_TWO_OVER_SQRTPI)}",
                  f"%st{i} = fdiv double %f{i}, %dv{i}", f"%x{i + 1} = fsub double {prev}, %st{i}"]
        prev = f"%x{i + 1}"
    centre = prev
    tail = "%t0"
    for i in range(8):
        steps += [f"%cx{i} = call double @tritium_erfcx64(double {tail})",
                  f"%lc{i} = call double {log}(double %cx{i})", f"%tq{i} = fmul double {tail}, {tail}",
                  f"%h{i} = fsub double %lc{i}, %tq{i}", f"%hr{i} = fsub double %h{i}, %ly",
                  f"%sc{i} = fmul double %cx{i}, {d(_PI ** 0.5 / 2)}", f"%ts{i} = fmul double %hr{i}, %sc{i}",
                  f"%t{i + 1} = fadd double {tail}, %ts{i}"]
        tail = f"%t{i + 1}"
    _def("tritium_erfcinv64", "double", [("double", "%y")], [
        # by symmetry erfcinv(y) = -erfcinv(2 - y) (2 - y is exact for y in [1, 2]): work with yy <= 1
        "%upper = fcmp ogt double %y, 1.0", "%refl = fsub double 2.0, %y",
        "%yy = select i1 %upper, double %refl, double %y",
        "%mid = fsub double 1.0, %yy", "%g1 = call double @tritium_erfinv64_core(double %mid)",
        f"%ly = call double {log}(double %yy)", "%nly = fneg double %ly", "%t0 = call double @llvm.sqrt.f64(double %nly)"]
        + steps + [
        "%tiny = fcmp olt double %yy, 0.0625", f"%root = select i1 %tiny, double {tail}, double {centre}",
        "%neg = fneg double %root", "%res = select i1 %upper, double %neg, double %root",
        "%z = fcmp oeq double %y, 0.0", "%two = fcmp oeq double %y, 2.0",
        "%bad = fcmp ult double %y, 0.0", "%bad2 = fcmp ogt double %y, 2.0", "%nan = or i1 %bad, %bad2",
        f"%r1 = select i1 %z, double {d(float('inf'))}, double %res",
        f"%r2 = select i1 %two, double {d(float('-inf'))}, double %r1",
        f"%r = select i1 %nan, double {d(float('nan'))}, double %r2", "ret double %r"],
        calls=("tritium_erfinv64_core", "tritium_erfcx64"), c_syms=("erfc", "exp", "log"))

    # erfcx(x) = exp(x^2) erfc(x). x^2 is split into hi + lo exactly (an fma) so that its rounding, which
    # exp magnifies x^2 times (about 300 ulp near x = 26), stays out; for x > 26 the product underflows and the
    # asymptotic series sum_k (-1)^k (2k-1)!! / (2x^2)^k is used, through k = 8 (the next term is below 1e-19
    # there; four terms left 2e-13)
    _def("tritium_erfcx64", "double", [("double", "%x")], [
        "%sq = fmul double %x, %x", "%nsq = fneg double %sq",
        "%sqlo = call double @llvm.fma.f64(double %x, double %x, double %nsq)",
        f"%ex0 = call double {exp}(double %sq)", "%corr0 = fadd double %sqlo, 1.0",
        # where exp(x^2) overflows the low part may be huge, -inf or NaN (erfcx(-1e200) and erfcx(-5.8e29) came
        # out -inf): the product is +inf anyway
        f"%exinf = fcmp oeq double %ex0, {d(float('inf'))}", "%corr = select i1 %exinf, double 1.0, double %corr0",
        "%ex = fmul double %ex0, %corr",
        f"%ec = call double {erfc}(double %x)", "%direct = fmul double %ex, %ec",
        "%i2 = fdiv double 1.0, %sq", "%h = fmul double %i2, 0.5",
        *_erfcx_series(),
        f"%den = fmul double %x, {d(_PI ** 0.5)}", "%asym = fdiv double %u, %den",
        "%big = fcmp ogt double %x, 26.0", "%r = select i1 %big, double %asym, double %direct", "ret double %r"],
        c_syms=("exp", "erfc"))

    # modified Bessel functions of the first kind, orders 0 and 1
    for k in (0, 1):
        series = ["%ax = call double @llvm.fabs.f64(double %x)", "%hx = fmul double %ax, 0.5",
                  "%q = fmul double %hx, %hx"]
        term0 = "1.0" if k == 0 else "%hx"
        series += [f"%term0 = fadd double {term0}, 0.0", "%sum0 = fadd double %term0, 0.0"]
        for j in range(1, 72):
            series += [f"%tm{j} = fmul double %term{j - 1}, %q",
                       f"%term{j} = fdiv double %tm{j}, {d(float(j * (j + k)))}",
                       f"%sum{j} = fadd double %sum{j - 1}, %term{j}"]
        mu = 4.0 * k * k
        asym = ["%ix = fdiv double 1.0, %ax", "%a0 = fadd double 1.0, 0.0", "%as0 = fadd double 1.0, 0.0"]
        for j in range(1, 16):
            coef = -(mu - (2 * j - 1) ** 2) / (j * 8.0)
            asym += [f"%am{j} = fmul double %a{j - 1}, %ix", f"%a{j} = fmul double %am{j}, {d(coef)}",
                     f"%as{j} = fadd double %as{j - 1}, %a{j}"]
        # exp(x) overflows from 709.8 while i0/i1 stay finite up to 713.9: there exp(x / 2) twice (x / 2 exact)
        asym += [f"%ee = call double {exp}(double %ax)", f"%pf = fmul double %ax, {d(2 * _PI)}",
                 "%sp = call double @llvm.sqrt.f64(double %pf)", "%pre = fdiv double %ee, %sp",
                 "%big0 = fmul double %pre, %as15", "%hax = fmul double %ax, 0.5",
                 f"%eh = call double {exp}(double %hax)", "%preh = fdiv double %eh, %sp",
                 "%bh0 = fmul double %preh, %as15", "%bh = fmul double %bh0, %eh",
                 "%vbig = fcmp ogt double %ax, 700.0", "%big = select i1 %vbig, double %bh, double %big0"]
        # at infinity exp / sqrt is inf / inf: i0(+-inf) = +inf, i1(+-inf) = +-inf
        tail = ["%large = fcmp ogt double %ax, 30.0", "%mag0 = select i1 %large, double %big, double %sum71",
                f"%xinf = fcmp oeq double %ax, {d(float('inf'))}",
                f"%mag = select i1 %xinf, double {d(float('inf'))}, double %mag0"]
        tail += (["ret double %mag"] if k == 0 else
                 ["%r = call double @llvm.copysign.f64(double %mag, double %x)", "ret double %r"])
        _def(f"tritium_bessel_i{k}", "double", [("double", "%x")], series + asym + tail, c_syms=("exp", ))


