"""``tl.extra.libdevice``: every function, for float32 and float64 (and its integer variants), against numpy and
the C library's ``math`` module."""
from __future__ import annotations

import math

import numpy as np
import pytest

import tritium as triton
import tritium.language as tl
from tritium.language.extra import libdevice

N = 32


@tl.constexpr_function
def _fn(name):
    return getattr(libdevice, name)


@triton.jit
def _apply(x_ptr, y_ptr, z_ptr, o_ptr, N: tl.constexpr, NAMES: tl.constexpr, ARITY: tl.constexpr):
    offs = tl.arange(0, N)
    x = tl.load(x_ptr + offs)
    y = tl.load(y_ptr + offs)
    z = tl.load(z_ptr + offs)
    for k in tl.static_range(len(NAMES)):
        f: tl.constexpr = _fn(NAMES[k])
        if ARITY == 1:
            r = f(x)
        elif ARITY == 2:
            r = f(x, y)
        else:
            r = f(x, y, z)
        tl.store(o_ptr + k * N + offs, r.to(tl.float64))


def _vec(f):
    return np.vectorize(f, otypes=[np.float64])


def _erfinv(y):
    if y <= -1 or y >= 1:
        return math.copysign(math.inf, y) if abs(y) == 1 else math.nan
    lo, hi = -40.0, 40.0
    for _ in range(200):
        mid = (lo + hi) / 2
        lo, hi = (mid, hi) if math.erf(mid) < y else (lo, mid)
    return (lo + hi) / 2


def _erfcinv(y):
    lo, hi = -40.0, 40.0
    for _ in range(200):
        mid = (lo + hi) / 2
        lo, hi = (mid, hi) if math.erfc(mid) > y else (lo, mid)
    return (lo + hi) / 2


def _bessel_i(k, x):
    total, term, j = 0.0, (x / 2) ** k / math.factorial(k), 0
    while True:
        total += term
        j += 1
        term *= (x / 2) ** 2 / (j * (j + k))
        if abs(term) < 1e-18 * abs(total) or j > 500:
            return total


_SPECIAL = {"j0": (0, 5), "j1": (0, 20), "y0": (0.5, 20), "y1": (0.5, 20), "lgamma": (0.5, 20), "tgamma": (0.5, 10)}
_UNARY = {  # name: (reference, domain)
    "acos": (np.arccos, (-1, 1)), "asin": (np.arcsin, (-1, 1)), "atan": (np.arctan, (-10, 10)),
    "acosh": (np.arccosh, (1, 20)), "asinh": (np.arcsinh, (-10, 10)), "atanh": (np.arctanh, (-0.99, 0.99)),
    "cos": (np.cos, (-10, 10)), "sin": (np.sin, (-10, 10)), "tan": (np.tan, (-1.5, 1.5)), "cosh": (np.cosh, (-5, 5)),
    "sinh": (np.sinh, (-5, 5)), "tanh": (np.tanh, (-5, 5)), "exp": (np.exp, (-10, 10)), "exp2": (np.exp2, (-10, 10)),
    "exp10": (lambda x: 10.0 ** x, (-5, 5)), "expm1": (np.expm1, (-3, 3)), "log": (np.log, (0.01, 100)),
    "log2": (np.log2, (0.01, 100)), "log10": (np.log10, (0.01, 100)), "log1p": (np.log1p, (-0.9, 100)),
    "sqrt": (np.sqrt, (0, 100)), "rsqrt": (lambda x: 1 / np.sqrt(x), (0.01, 100)), "cbrt": (np.cbrt, (-50, 50)),
    "rcbrt": (lambda x: 1 / np.cbrt(x), (0.5, 50)), "erf": (_vec(math.erf), (-3, 3)),
    "erfc": (_vec(math.erfc), (-3, 3)), "erfinv": (_vec(_erfinv), (-0.99, 0.99)),
    "erfcinv": (_vec(_erfcinv), (0.01, 1.99)), "erfcx": (_vec(lambda x: math.exp(x * x) * math.erfc(x)), (-2, 8)),
    "normcdf": (_vec(lambda x: 0.5 * math.erfc(-x / math.sqrt(2))), (-5, 5)),
    "normcdfinv": (_vec(lambda p: -math.sqrt(2) * _erfcinv(2 * p)), (0.01, 0.99)),
    "floor": (np.floor, (-10, 10)), "ceil": (np.ceil, (-10, 10)), "trunc": (np.trunc, (-10, 10)),
    "round": (_vec(lambda x: math.copysign(math.floor(abs(x) + 0.5), x)), (-10, 10)),
    "rint": (np.rint, (-10, 10)), "nearbyint": (np.rint, (-10, 10)), "abs": (np.abs, (-10, 10)),
    "sinpi": (_vec(lambda x: math.sin(math.pi * x)), (-4, 4)), "cospi": (_vec(lambda x: math.cos(math.pi * x)), (-4, 4)),
    "j0": (_vec(lambda x: _bessel_j(0, x)), _SPECIAL["j0"]), "cyl_bessel_i0": (_vec(lambda x: _bessel_i(0, x)), (-25, 40)),
    "cyl_bessel_i1": (_vec(lambda x: _bessel_i(1, x)), (-25, 40)), "lgamma": (_vec(math.lgamma), _SPECIAL["lgamma"]),
    "tgamma": (_vec(math.gamma), _SPECIAL["tgamma"]), "logb": (_vec(lambda x: math.floor(math.log2(abs(x)))), (0.1, 1e6)),
    "saturatef": (lambda x: np.clip(x, 0, 1), (-2, 2)), "rcp_rn": (lambda x: 1 / x, (0.5, 10)),
    "sqrt_rn": (np.sqrt, (0, 100)),
}


def _bessel_j(k, x):
    total, term, j = 0.0, (x / 2) ** k / math.factorial(k), 0
    while j < 200:
        total += term
        j += 1
        term *= -(x / 2) ** 2 / (j * (j + k))
    return total


_F32_ONLY = {"saturatef", "rcp_rn"}


@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_unary_functions(backend, rng, dtype):
    backend.require_dtype(dtype)
    names = [n for n in _UNARY if not (dtype == "float32" and n in ()) and n in libdevice.__all__]
    names = [n for n in names if not (n in _F32_ONLY and dtype == "float64" and n == "saturatef")]
    groups = {}
    for n in names:
        groups.setdefault(_UNARY[n][1], []).append(n)
    for (lo, hi), group in groups.items():
        x = rng.uniform(lo, hi, N).astype(dtype)
        out = np.zeros((len(group), N))
        _apply[(1, )](x, x, x, out, N, tuple(group), 1)
        tol = 3e-6 if dtype == "float32" else 1e-12
        for k, n in enumerate(group):
            want = _UNARY[n][0](x.astype(np.float64))
            if dtype == "float32":
                want = want.astype(np.float32).astype(np.float64)
            np.testing.assert_allclose(out[k], want, rtol=tol, atol=tol * max(1.0, np.abs(want).max() * 1e-3) if n in (
                "sinpi", "cospi", "j0") else tol, err_msg=f"{n} {dtype}")


_BINARY = {"atan2": np.arctan2, "hypot": np.hypot, "rhypot": lambda a, b: 1 / np.hypot(a, b), "fmod": np.fmod,
           "remainder": np.remainder, "copysign": np.copysign, "fdim": lambda a, b: np.maximum(a - b, 0),
           "pow": np.power, "nextafter": np.nextafter, "div_rn": np.divide, "add_rn": np.add, "sub_rn": np.subtract,
           "mul_rn": np.multiply}


@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_binary_functions(backend, rng, dtype):
    backend.require_dtype(dtype)
    names = list(_BINARY)
    x = rng.uniform(0.5, 4, N).astype(dtype)
    y = rng.uniform(-3, 3, N).astype(dtype)
    out = np.zeros((len(names), N))
    _apply[(1, )](x, y, y, out, N, tuple(names), 2)
    for k, n in enumerate(names):
        ty = np.float32 if dtype == "float32" else np.float64
        if n == "remainder":
            want = x - y * np.round(x.astype(np.float64) / y)
        else:
            want = _BINARY[n](x.astype(ty), y.astype(ty))
        np.testing.assert_allclose(out[k], np.asarray(want, np.float64), rtol=3e-6 if dtype == "float32" else 1e-13,
                                   atol=1e-6 if n == "remainder" else 0, err_msg=n)


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("op", ["add", "sub", "mul", "div"])
def test_directed_rounding(backend, rng, dtype, op):
    """x_rd <= exact <= x_ru, both one ulp apart at most, x_rz between zero and the exact value."""
    backend.require_dtype(dtype)
    names = tuple(f"{op}_{m}" for m in ("rn", "rz", "rd", "ru"))
    x = rng.uniform(-10, 10, N).astype(dtype)
    y = rng.uniform(0.5, 3, N).astype(dtype) * np.where(rng.random(N) < 0.5, -1, 1).astype(dtype)
    out = np.zeros((4, N))
    _apply[(1, )](x, y, y, out, N, names, 2)
    from fractions import Fraction as F
    fn = {"add": lambda a, b: a + b, "sub": lambda a, b: a - b, "mul": lambda a, b: a * b, "div": lambda a, b: a / b}[op]
    ty = np.float32 if dtype == "float32" else np.float64
    for i in range(N):
        exact = fn(F(float(x[i])), F(float(y[i])))
        rn, rz, rd, ru = (ty(out[k, i]) for k in range(4))
        assert F(float(rd)) <= exact <= F(float(ru)), (op, x[i], y[i])
        assert rd == ru or np.nextafter(rd, ty(np.inf)) == ru
        assert rz == (rd if exact >= 0 else ru)
        assert rn in (rd, ru) and abs(F(float(rn)) - exact) <= abs(F(float(rd if rn == ru else ru)) - exact)


@triton.jit
def _two_product(x_ptr, y_ptr, o_ptr, N: tl.constexpr):
    offs = tl.arange(0, N)
    x = tl.load(x_ptr + offs)
    y = tl.load(y_ptr + offs)
    p = libdevice.mul_rn(x, y)
    # each op rounds alone: were mul_rn fused with the add into an fma, the sum would be the product's rounding
    # error instead of zero (the error-free transformations of compensated algorithms depend on this)
    tl.store(o_ptr + offs, libdevice.add_rn(p, -p * 1.0))
    tl.store(o_ptr + N + offs, libdevice.sub_rn(libdevice.mul_rn(x, y), p))
    tl.store(o_ptr + 2 * N + offs, libdevice.add_rn(libdevice.mul_rn(x, y), -libdevice.mul_rn(y, x)))
    tl.store(o_ptr + 3 * N + offs, libdevice.sqrt_rn(tl.abs(x)))


@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_rn_ops_round_alone(backend, rng, dtype):
    """libdevice's add/sub/mul_rn are never contracted into an fma with their neighbours, and sqrt_rn is the
    correctly rounded square root, on every backend (whatever its fp-fusion default)."""
    backend.require_dtype(dtype)
    x = rng.uniform(-10, 10, N).astype(dtype) * (1 + rng.random(N).astype(dtype) / 3)
    y = rng.uniform(0.5, 3, N).astype(dtype) * (1 + rng.random(N).astype(dtype) / 7)
    out = np.full((4, N), np.nan, dtype)
    _two_product[(1, )](x, y, out, N)
    np.testing.assert_array_equal(out[0], np.zeros(N, dtype))
    np.testing.assert_array_equal(out[1], np.zeros(N, dtype))
    np.testing.assert_array_equal(out[2], np.zeros(N, dtype))
    np.testing.assert_array_equal(out[3], np.sqrt(np.abs(x)))


@triton.jit
def _conversions(f_ptr, d_ptr, i_ptr, o_ptr, N: tl.constexpr):
    offs = tl.arange(0, N)
    f = tl.load(f_ptr + offs)
    d = tl.load(d_ptr + offs)
    i = tl.load(i_ptr + offs)
    outs = (libdevice.float2int_rd(f), libdevice.float2int_ru(f), libdevice.float2int_rn(f), libdevice.float2int_rz(f),
            libdevice.double2ll_rd(d), libdevice.float2uint_rn(tl.abs(f)), libdevice.int2float_rd(i),
            libdevice.int2float_ru(i), libdevice.double2float_rd(d), libdevice.double2float_ru(d),
            libdevice.float_as_int(f), libdevice.double2hiint(d), libdevice.double2loint(d),
            libdevice.llrint(f), libdevice.llround(f), libdevice.signbit(f), libdevice.ilogb(d),
            libdevice.isnan(f), libdevice.isinf(d), libdevice.finitef(f), libdevice.isfinited(d),
            libdevice.ldexp(f, i % 8), libdevice.jn(2, f.to(tl.float64) / 100), libdevice.fma_rd(f, f, f))
    for k in tl.static_range(len(outs)):
        tl.store(o_ptr + k * N + offs, outs[k].to(tl.float64))


def test_conversions_and_predicates(backend, rng):
    backend.require("fp64")
    f = (rng.uniform(-1000, 1000, N)).astype(np.float32)
    f[:4] = [2.5, -2.5, 3.5, np.float32(1e-3)]
    d = rng.uniform(-1e6, 1e6, N)
    d[:3] = [np.inf, np.nan, -0.75]
    i = rng.integers(-2**30, 2**30, N).astype(np.int32)
    out = np.zeros((24, N))
    _conversions[(1, )](f, d, i, out, N)
    fd = f.astype(np.float64)
    np.testing.assert_array_equal(out[0], np.floor(fd))
    np.testing.assert_array_equal(out[1], np.ceil(fd))
    np.testing.assert_array_equal(out[2], np.rint(fd))
    np.testing.assert_array_equal(out[3], np.trunc(fd))
    ok = np.isfinite(d)
    np.testing.assert_array_equal(out[4][ok], np.floor(d[ok]))
    np.testing.assert_array_equal(out[5], np.rint(np.abs(fd)))
    lo, hi = out[6], out[7]
    assert (lo <= i).all() and (hi >= i).all() and (hi - lo <= np.abs(i) * 2**-23 + 1e-9).all()
    assert (out[8][ok] <= d[ok]).all() and (out[9][ok] >= d[ok]).all()
    np.testing.assert_array_equal(out[10], f.view(np.int32))
    np.testing.assert_array_equal(out[11], (d.view(np.int64) >> 32).astype(np.int32))
    np.testing.assert_array_equal(out[12], d.view(np.int64).astype(np.int32))
    np.testing.assert_array_equal(out[13], np.rint(fd))
    np.testing.assert_array_equal(out[14], np.sign(fd) * np.floor(np.abs(fd) + 0.5))
    np.testing.assert_array_equal(out[15] != 0, np.signbit(f))
    np.testing.assert_array_equal(out[16][ok & (d != 0)], np.floor(np.log2(np.abs(d[ok & (d != 0)]))))
    np.testing.assert_array_equal(out[17], np.isnan(f))
    np.testing.assert_array_equal(out[18], np.isinf(d))
    np.testing.assert_array_equal(out[19], np.isfinite(f))
    np.testing.assert_array_equal(out[20], np.isfinite(d))
    np.testing.assert_array_equal(out[21], np.ldexp(f, np.fmod(i, 8)).astype(np.float64))
    np.testing.assert_allclose(out[22], _vec(lambda v: _bessel_j(2, v))(f.astype(np.float64) / 100),
                               rtol=1e-9, atol=1e-12)
    from fractions import Fraction as Fr
    for k in range(N):
        exact = Fr(float(f[k])) * Fr(float(f[k])) + Fr(float(f[k]))
        lo = np.float32(out[23, k])
        assert Fr(float(lo)) <= exact < Fr(float(np.nextafter(lo, np.float32(np.inf)))), (f[k], lo)


@triton.jit
def _integers(a_ptr, b_ptr, o_ptr, N: tl.constexpr):
    offs = tl.arange(0, N)
    a = tl.load(a_ptr + offs)
    b = tl.load(b_ptr + offs)
    outs = (libdevice.clz(a), libdevice.popc(a), libdevice.ffs(a), libdevice.brev(a), libdevice.mulhi(a, b),
            libdevice.mul24(a, b), libdevice.hadd(a, b), libdevice.rhadd(a, b), libdevice.abs(a),
            libdevice.byte_perm(a, b, 0x3210 + 0 * a), libdevice.byte_perm(a, b, 0x7654 + 0 * a),
            libdevice.sad(a, b, (b & 7).to(tl.uint32)), libdevice.mulhi(a.to(tl.uint32), b.to(tl.uint32)))
    for k in tl.static_range(len(outs)):
        tl.store(o_ptr + k * N + offs, outs[k].to(tl.int64))


def test_integer_functions(backend, rng):
    a = rng.integers(-2**31, 2**31, N).astype(np.int32)
    b = rng.integers(-2**31, 2**31, N).astype(np.int32)
    a[0] = 0
    out = np.zeros((13, N), np.int64)
    _integers[(1, )](a, b, out, N)
    au = a.astype(np.int64) & 0xFFFFFFFF
    bu = b.astype(np.int64) & 0xFFFFFFFF
    np.testing.assert_array_equal(out[0], [32 - int(v).bit_length() for v in au])
    np.testing.assert_array_equal(out[1], [bin(int(v)).count("1") for v in au])
    np.testing.assert_array_equal(out[2], [(int(v) & -int(v)).bit_length() for v in au])
    np.testing.assert_array_equal(out[3] & 0xFFFFFFFF, [int(f"{int(v):032b}"[::-1], 2) for v in au])
    np.testing.assert_array_equal(out[4], (a.astype(np.int64) * b) >> 32)

    def s24(v):
        v = v & 0xFFFFFF
        return np.where(v >= 2**23, v - 2**24, v)

    np.testing.assert_array_equal(out[5], ((s24(au) * s24(bu)) & 0xFFFFFFFF).astype(np.uint32).view(np.int32))
    np.testing.assert_array_equal(out[6], (a.astype(np.int64) + b) >> 1)
    np.testing.assert_array_equal(out[7], (a.astype(np.int64) + b + 1) >> 1)
    np.testing.assert_array_equal(out[8], np.abs(a.astype(np.int64)).astype(np.uint32).view(np.int32))
    np.testing.assert_array_equal(out[9], a)
    np.testing.assert_array_equal(out[10], b)
    want_sad = ((np.abs(a.astype(np.int64) - b) + (bu & 7)) & 0xFFFFFFFF).astype(np.uint32).view(np.int32)
    np.testing.assert_array_equal(out[11], want_sad)
    np.testing.assert_array_equal(out[12], [(int(x) * int(y)) >> 32 for x, y in zip(au, bu)])


@triton.jit
def _bad_libdevice(x_ptr):
    x = tl.load(x_ptr + tl.arange(0, 16))
    tl.store(x_ptr + tl.arange(0, 16), libdevice.acos(x))


def test_libdevice_rejects_other_types(backend):
    with pytest.raises(triton.CompilationError, match="no variant.*float32"):
        _bad_libdevice[(1, )](np.zeros(16, np.float16))


@triton.jit
def _apply_typed(a_ptr, b_ptr, c_ptr, d_ptr, o_ptr, N: tl.constexpr, NAMES: tl.constexpr, ARITY: tl.constexpr):
    offs = tl.arange(0, N)
    a = tl.load(a_ptr + offs)
    b = tl.load(b_ptr + offs)
    c = tl.load(c_ptr + offs)
    d = tl.load(d_ptr + offs)
    for k in tl.static_range(len(NAMES)):
        f: tl.constexpr = _fn(NAMES[k])
        if ARITY == 1:
            r = f(a)
        elif ARITY == 2:
            r = f(a, b)
        elif ARITY == 3:
            r = f(a, b, c)
        else:
            r = f(a, b, c, d)
        tl.store(o_ptr + k * N + offs, r.to(tl.float64))


_NP = {"int32": np.int32, "uint32": np.uint32, "int64": np.int64, "uint64": np.uint64, "fp32": np.float32,
       "fp64": np.float64}


def _groups():
    out: dict[tuple, list[str]] = {}
    for name in libdevice.__all__:
        for args, _ in libdevice.SIGNATURES[name]:
            out.setdefault(tuple(a.name for a in args), []).append(name)
    return sorted(out.items())


@pytest.mark.parametrize("types,names", _groups(), ids=lambda v: "-".join(v) if isinstance(v[0], str) and len(v) < 5
                         else None)
def test_every_variant_runs(backend, rng, types, names):
    """Every function of every signature compiles and runs; float32 variants agree with float64 ones."""
    if "fp64" in types:
        backend.require("fp64")
    args = []
    for t in types:
        if t.startswith("fp"):
            args.append(rng.uniform(0.6, 0.9, N).astype(_NP[t]))
        else:
            args.append(rng.integers(1, 30, N).astype(_NP[t]))
    while len(args) < 4:
        args.append(args[0])
    out = np.zeros((len(names), N))
    _apply_typed[(1, )](*args, out, N, tuple(names), len(types))
    if types == ("fp32", ) * len(types):
        wide = [a.astype(np.float64) for a in args]
        twin = [n for n in names if ("fp64", ) * len(types) in [tuple(x.name for x in v[0])
                                                                 for v in libdevice.SIGNATURES[n]]]
        out64 = np.zeros((len(twin), N))
        _apply_typed[(1, )](*wide, out64, N, tuple(twin), len(types))
        for k, n in enumerate(twin):
            got = out[names.index(n)]
            if n.endswith(("_rz", "_rd", "_ru")) or n in ("rcp64h", "nextafter", "ilogb"):
                continue
            np.testing.assert_allclose(got, out64[k], rtol=2e-5, atol=1e-6, err_msg=n)


@tl.core.extern
def _my_sinpi(x, _semantic=None):
    return tl.core.extern_elementwise("libdevice", "", [x], {(tl.float32, ): ("sinpi_f32", tl.float32),
                                                            (tl.float64, ): ("sinpi_f64", tl.float64)},
                                      is_pure=True, _semantic=_semantic)


@triton.jit
def _extern_kernel(x_ptr, o_ptr, N: tl.constexpr):
    offs = tl.arange(0, N)
    tl.store(o_ptr + offs, _my_sinpi(tl.load(x_ptr + offs)))


def test_user_extern_elementwise(backend, rng):
    """Library code in Triton's style (tl.core.extern + extern_elementwise) reaching a libdevice variant."""
    x = rng.uniform(-2, 2, N).astype(np.float32)
    out = np.zeros_like(x)
    _extern_kernel[(1, )](x, out, N)
    np.testing.assert_allclose(out, np.sin(np.pi * x.astype(np.float64)), rtol=2e-6, atol=2e-7)
