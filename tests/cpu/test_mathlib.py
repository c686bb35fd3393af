"""The CPU backend's IR math library: accuracy against float64 references, float8 conversions against
torch's casts, and that the functions really vectorize inside a loop."""
from __future__ import annotations

import ctypes
import math
import re
import zlib

import llvmlite.binding as llvm
import numpy as np
import pytest

from tritium_cpu.codegen import mathlib
from tritium_cpu.compiler import host_cpu, vector_bits

F32 = np.float32
FP8 = ("fp8e4nv", "fp8e5", "fp8e4b8", "fp8e5b16", "fp8e4b15")
TORCH_FP8 = {"fp8e4nv": "float8_e4m3fn", "fp8e5": "float8_e5m2", "fp8e4b8": "float8_e4m3fnuz",
             "fp8e5b16": "float8_e5m2fnuz"}
_NP = {"float": np.float32, "double": np.float64, "i8": np.uint8, "half": np.float16, "bfloat": np.uint16}


# ----------------------------------------------------------------------------------------------------
# Compiling the library with one loop per function, the way kernels use it
# ----------------------------------------------------------------------------------------------------

def _apply_ir(name: str) -> str:
    ret, (arg,) = mathlib.signature(name)
    return f"""
define void @apply_{name}(ptr noalias %in, ptr noalias %out, i64 %n) {{
entry:
  %nonempty = icmp sgt i64 %n, 0
  br i1 %nonempty, label %loop, label %exit
loop:
  %i = phi i64 [0, %entry], [%next, %loop]
  %pi = getelementptr inbounds {arg}, ptr %in, i64 %i
  %x = load {arg}, ptr %pi
  %y = call {ret} @{name}({arg} %x)
  %po = getelementptr inbounds {ret}, ptr %out, i64 %i
  store {ret} %y, ptr %po
  %next = add nuw nsw i64 %i, 1
  %done = icmp eq i64 %next, %n
  br i1 %done, label %exit, label %loop
exit:
  ret void
}}"""


class Lib:
    def __init__(self, names: list[str]) -> None:
        llvm.initialize_native_target()
        llvm.initialize_native_asmprinter()
        text = mathlib.library_ir(names) + "\n".join(_apply_ir(n) for n in names)
        mod = llvm.parse_assembly(text)
        mod.verify()
        target = llvm.Target.from_default_triple()
        # the level the CPU backend compiles for (the host's, or the ISA level the knobs select)
        cpu, features = host_cpu()
        self.tm = target.create_target_machine(cpu=cpu, features=features, opt=3)
        mod.triple = llvm.get_default_triple()
        mod.data_layout = str(self.tm.target_data)
        pto = llvm.create_pipeline_tuning_options(speed_level=3)
        pto.loop_vectorization = True
        pto.slp_vectorization = True
        pb = llvm.create_pass_builder(self.tm, pto)
        pb.getModulePassManager().run(mod, pb)
        self.mod = mod
        self.engine = llvm.create_mcjit_compiler(mod, self.tm)
        self.engine.finalize_object()
        self._fns = {}
        for n in names:
            addr = self.engine.get_function_address(f"apply_{n}")
            self._fns[n] = ctypes.CFUNCTYPE(None, ctypes.c_void_p, ctypes.c_void_p, ctypes.c_int64)(addr)

    def __call__(self, name: str, x: np.ndarray) -> np.ndarray:
        ret, (arg,) = mathlib.signature(name)
        x = np.ascontiguousarray(x, dtype=_NP[arg])
        out = np.empty(x.shape, dtype=_NP[ret])
        self._fns[name](x.ctypes.data, out.ctypes.data, x.size)
        return out

    def assembly(self) -> str:
        if not hasattr(self, "_asm"):
            self._asm = self.tm.emit_assembly(self.mod)
        return self._asm


@pytest.fixture(scope="module")
def lib() -> Lib:
    # the large-argument helpers of sinf/cosf (two arguments) are reached through those two
    return Lib([n for n in mathlib.function_names() if not n.endswith("_big")])


# ----------------------------------------------------------------------------------------------------
# Inputs and error measures
# ----------------------------------------------------------------------------------------------------

RNG = np.random.default_rng(0)
N = 1 << 20


@pytest.fixture(autouse=True)
def _reseed(request):
    """Each test draws the same inputs however the suite is run (-k, -x, in any order)."""
    global RNG
    RNG = np.random.default_rng(zlib.crc32(request.node.name.encode()))
SPECIAL = np.array([0.0, -0.0, np.inf, -np.inf, np.nan, 1.0, -1.0, 2.0 ** -149, -(2.0 ** -149), 2.0 ** -126,
                    1.1754942e-38, 3.4028235e38, -3.4028235e38, 1e-30, -1e-30, 0.5, -0.5], dtype=F32)


def random_bits(n: int) -> np.ndarray:
    """float32 values spread over every exponent (and nan/inf), from random bit patterns."""
    return RNG.integers(0, 1 << 32, n, dtype=np.uint64).astype(np.uint32).view(F32)


def uniform(lo: float, hi: float, n: int = N) -> np.ndarray:
    return RNG.uniform(lo, hi, n).astype(F32)


def ulp_error(y: np.ndarray, ref: np.ndarray) -> np.ndarray:
    """|y - ref| in units of the float32 ulp at ref; mismatched non-finite results count as inf."""
    with np.errstate(all="ignore"):    # signalling nans and overflowing casts are expected here
        ref = np.asarray(ref, dtype=np.float64)
        y64 = y.astype(np.float64)
        ref32 = ref.astype(F32)
        finite = np.isfinite(ref32)
        e = np.maximum(np.frexp(np.abs(ref))[1] - 24, -149)
        err = np.abs(y64 - ref) / np.ldexp(1.0, e)
    same_special = (np.isnan(ref32) & np.isnan(y)) | (ref32 == y)
    return np.where(finite, err, np.where(same_special, 0.0, np.inf))


def check_ulp(lib: Lib, name: str, ref_fn, xs: np.ndarray, max_ulp: float) -> float:
    y = lib(name, xs)
    with np.errstate(all="ignore"):
        ref = ref_fn(xs.astype(np.float64))
    err = ulp_error(y, ref)
    worst = int(np.argmax(err))
    assert err[worst] <= max_ulp, (f"{name}({xs[worst]!r} = {xs[worst].view(np.uint32):#x}) = {y[worst]!r}, "
                                   f"expected {ref[worst]!r}: {err[worst]:.3g} ulp")
    return float(err.max())


_erf = np.vectorize(math.erf, otypes=[np.float64])


# ----------------------------------------------------------------------------------------------------
# float32 math
# ----------------------------------------------------------------------------------------------------

def test_expf(lib):
    xs = np.concatenate([uniform(-110, 95), uniform(-1, 1, N // 4), random_bits(N // 4), SPECIAL,
                         np.array([88.72283, 88.72284, 88.7229, -87.33655, -103.27893, -103.97208, -103.9721,
                                   -104.0, 89.0, 1e-8, -1e-8], dtype=F32)])
    check_ulp(lib, "tritium_expf", np.exp, xs, 1.0)


def test_exp2f(lib):
    xs = np.concatenate([uniform(-155, 130), uniform(-1, 1, N // 4), random_bits(N // 4), SPECIAL,
                         np.arange(-152, 130, 0.5, dtype=F32)])
    check_ulp(lib, "tritium_exp2f", np.exp2, xs, 1.0)


@pytest.mark.parametrize("name, ref", [("tritium_logf", np.log), ("tritium_log2f", np.log2)])
def test_log(lib, name, ref):
    near_one = 1 + RNG.uniform(-1e-3, 1e-3, N // 8).astype(F32)
    xs = np.concatenate([np.abs(random_bits(N)), uniform(0.5, 2.0, N // 4), near_one, SPECIAL, -SPECIAL,
                         np.nextafter(F32(1), F32(2), dtype=F32)[None], np.nextafter(F32(1), F32(0))[None]])
    check_ulp(lib, name, ref, xs, 1.0)
    y = lib(name, np.array([0.0, -0.0, -1.0, np.inf, -np.inf, np.nan, 2.0 ** -149], dtype=F32))
    assert y[0] == y[1] == -np.inf and np.isnan(y[2]) and y[3] == np.inf and np.isnan(y[4]) and np.isnan(y[5])


@pytest.mark.parametrize("name, ref", [("tritium_sinf", np.sin), ("tritium_cosf", np.cos)])
def test_sincos(lib, name, ref):
    # the floats nearest to multiples of pi/2 are where argument reduction loses the most bits
    near_pio2 = (np.arange(1, N // 4, dtype=np.float64) * (np.pi / 2)).astype(F32)
    xs = np.concatenate([uniform(-10, 10), uniform(-1e4, 1e4, N // 4), uniform(-1e6, 1e6, N // 4), near_pio2,
                         -near_pio2[:1000], SPECIAL[~(np.abs(SPECIAL) > 1e6)]])
    check_ulp(lib, name, ref, xs, 1.0)
    minus_zero = lib(name, np.array([-0.0], F32)).view(np.uint32)[0]
    assert minus_zero == (0x80000000 if name == "tritium_sinf" else 0x3F800000)
    # past 2^21 the Payne-Hanek reduction: every finite argument (inf and nan give nan)
    check_ulp(lib, name, ref, np.concatenate([uniform(-2.0 ** 23, 2.0 ** 23, N // 8), random_bits(N // 4)]), 1.0)


def test_erff(lib):
    xs = np.concatenate([uniform(-5, 5), uniform(-1, 1, N // 4), random_bits(N // 4), SPECIAL,
                         np.array([0.875, -0.875, 3.9375, np.nextafter(F32(0.875), F32(0))], F32)])
    y = lib("tritium_erff", xs)
    with np.errstate(invalid="ignore"):
        ref = _erf(xs.astype(np.float64))
    fin = np.isfinite(xs)
    assert np.abs(y[fin] - ref[fin]).max() <= 2e-7
    assert np.all(np.isnan(y[np.isnan(xs)]))
    assert lib("tritium_erff", np.array([-0.0], F32)).view(np.uint32)[0] == 0x80000000


def test_tanhf(lib):
    xs = np.concatenate([uniform(-10, 10), uniform(-1, 1, N // 4), random_bits(N // 4), SPECIAL,
                         np.array([0.625, -0.625, np.nextafter(F32(0.625), F32(0))], F32)])
    y = lib("tritium_tanhf", xs)
    with np.errstate(all="ignore"):
        ref = np.tanh(xs.astype(np.float64))
        rel = np.abs(y - ref) / np.maximum(np.abs(ref), 2.0 ** -149)
    fin = np.isfinite(xs)
    assert rel[fin].max() <= 3e-7
    assert np.all(np.isnan(y[np.isnan(xs)]))
    assert lib("tritium_tanhf", np.array([-0.0], F32)).view(np.uint32)[0] == 0x80000000


def test_rsqrtf(lib):
    xs = np.concatenate([np.abs(random_bits(N // 4)), SPECIAL])
    with np.errstate(all="ignore"):
        ref = (F32(1) / np.sqrt(xs)).astype(F32)
    np.testing.assert_array_equal(lib("tritium_rsqrtf", xs), ref)


@pytest.mark.parametrize("name, ref", [("exp", np.exp), ("exp2", np.exp2), ("log", np.log), ("log2", np.log2),
                                       ("sin", np.sin), ("cos", np.cos), ("tanh", np.tanh), ("erf", _erf)])
def test_float64_libm(lib, name, ref):
    xs = np.concatenate([RNG.uniform(-20, 20, 4096), np.array([0.0, 1.0, -1.0, 0.5, np.inf, np.nan])])
    if name.startswith("log"):
        xs = np.abs(xs)
    with np.errstate(all="ignore"):
        np.testing.assert_allclose(lib(f"tritium_{name}", xs), ref(xs), rtol=1e-15, atol=0)


# ----------------------------------------------------------------------------------------------------
# Conversions
# ----------------------------------------------------------------------------------------------------

def _fp8_reference_decode(fmt: str) -> np.ndarray:
    """The value of every encoding, from the format's definition."""
    ebits, mbits, bias = {"fp8e4nv": (4, 3, 7), "fp8e5": (5, 2, 15), "fp8e4b8": (4, 3, 8),
                          "fp8e5b16": (5, 2, 16), "fp8e4b15": (4, 3, 15)}[fmt]
    b = np.arange(256)
    sign = np.where(b & 0x80, -1.0, 1.0)
    e = (b >> mbits) & ((1 << ebits) - 1)
    m = b & ((1 << mbits) - 1)
    v = sign * np.where(e == 0, m * 2.0 ** (1 - bias - mbits), (1 + m / 2 ** mbits) * 2.0 ** (e - bias))
    if fmt == "fp8e4nv":
        v[[0x7F, 0xFF]] = np.nan
    elif fmt == "fp8e5":
        v[e == 31] = np.where(m[e == 31] == 0, sign[e == 31] * np.inf, np.nan)
    elif fmt in ("fp8e4b8", "fp8e5b16"):
        v[0x80] = np.nan
    return v


@pytest.mark.parametrize("fmt", FP8)
def test_fp8_decode_exhaustive(lib, fmt):
    codes = np.arange(256, dtype=np.uint8)
    y = lib(f"tritium_{fmt}_to_f32", codes)
    ref = _fp8_reference_decode(fmt)
    np.testing.assert_array_equal(y, ref.astype(F32))
    assert np.array_equal(np.signbit(y[~np.isnan(y)]), np.signbit(ref[~np.isnan(ref)]))
    if fmt in TORCH_FP8:
        torch = pytest.importorskip("torch")
        t = torch.from_numpy(codes).view(getattr(torch, TORCH_FP8[fmt])).float().numpy()
        np.testing.assert_array_equal(y, t)


@pytest.mark.parametrize("fmt", FP8)
@pytest.mark.parametrize("rtz", [False, True])
def test_fp8_roundtrip(lib, fmt, rtz):
    codes = np.arange(256, dtype=np.uint8)
    vals = lib(f"tritium_{fmt}_to_f32", codes)
    back = lib(f"tritium_f32_to_{fmt}{'_rtz' if rtz else ''}", vals)
    nan = np.isnan(vals)
    inf = np.isinf(vals) & (not rtz)    # round to nearest saturates (satfinite): inf -> the largest finite
    np.testing.assert_array_equal(back[~nan & ~inf], codes[~nan & ~inf])
    np.testing.assert_array_equal(back[inf], codes[~nan & ~inf][np.argmax(vals[~nan & ~inf])] | (codes[inf] & 0x80))
    assert np.all(np.isnan(lib(f"tritium_{fmt}_to_f32", back[nan])))


def _narrowing_inputs(fmt: str) -> np.ndarray:
    """Every fp8 value, the midpoints between neighbours (ties), their float32 neighbours, random values at
    the format's scale, and the specials."""
    vals = _fp8_reference_decode(fmt)
    vals = np.unique(vals[np.isfinite(vals)])
    mids = ((vals[1:] + vals[:-1]) / 2).astype(F32)
    scale = float(np.abs(vals).max())
    xs = np.concatenate([vals.astype(F32), mids, np.nextafter(mids, F32(np.inf)),
                         np.nextafter(mids, F32(-np.inf)),
                         uniform(-1.2 * scale, 1.2 * scale, 1 << 16), uniform(-2 * scale, 2 * scale, 1 << 14),
                         (RNG.standard_normal(1 << 16) * 2.0 ** RNG.integers(-30, 20, 1 << 16)).astype(F32),
                         random_bits(1 << 16), SPECIAL, -SPECIAL])
    return xs


@pytest.mark.parametrize("fmt", list(TORCH_FP8))
def test_fp8_encode_matches_torch(lib, fmt):
    torch = pytest.importorskip("torch")
    xs = _narrowing_inputs(fmt)
    y = lib(f"tritium_f32_to_{fmt}", xs)
    ref = torch.from_numpy(xs).to(getattr(torch, TORCH_FP8[fmt])).view(torch.uint8).numpy()
    if fmt == "fp8e5":   # torch gives inf past the largest finite value, Triton (satfinite) and tritium 57344
        ref = np.where((ref & 0x7F) == 0x7C, ref - 1, ref)
    bad = np.flatnonzero(y != ref)
    assert bad.size == 0, (f"{bad.size} mismatches, e.g. {xs[bad[0]]!r}: "
                           f"{y[bad[0]]:#x} vs torch {ref[bad[0]]:#x}")


def _nearest_codes(fmt: str, xs: np.ndarray, rtz: bool) -> np.ndarray:
    """The reference narrowing, by searching the table of encodings (only for finite inputs within range)."""
    vals = _fp8_reference_decode(fmt)
    codes = np.flatnonzero(np.isfinite(vals) & ~np.signbit(vals))
    mags = vals[codes]
    order = np.argsort(mags)
    mags, codes = mags[order], codes[order]
    a = np.abs(xs.astype(np.float64))
    hi = np.clip(np.searchsorted(mags, a), 0, len(mags) - 1)      # first magnitude >= a
    lo = np.clip(hi - 1, 0, None)
    exact = mags[hi] == a
    if rtz:
        pick = np.where(exact, hi, lo)
    else:
        dl, dh = a - mags[lo], mags[hi] - a
        tie_to_hi = (dh == dl) & (codes[hi] % 2 == 0)
        pick = np.where(exact | (dh < dl) | tie_to_hi, hi, lo)
    out = codes[pick]
    neg = np.signbit(xs) & ~((out == 0) & np.isin(fmt, ["fp8e4b8", "fp8e5b16"]))
    return (out | np.where(neg, 0x80, 0)).astype(np.uint8)


@pytest.mark.parametrize("fmt", FP8)
@pytest.mark.parametrize("rtz", [False, True])
def test_fp8_encode_rounding(lib, fmt, rtz):
    """Every format and both roundings against a table search, over finite values the format can hold."""
    xs = _narrowing_inputs(fmt)
    vals = _fp8_reference_decode(fmt)
    top = np.nanmax(np.abs(vals[np.isfinite(vals)]))
    xs = xs[np.isfinite(xs) & (np.abs(xs) <= top)]
    y = lib(f"tritium_f32_to_{fmt}{'_rtz' if rtz else ''}", xs)
    np.testing.assert_array_equal(y, _nearest_codes(fmt, xs, rtz))


@pytest.mark.parametrize("fmt", FP8)
def test_fp8_encode_specials(lib, fmt):
    xs = np.array([np.inf, -np.inf, np.nan, -np.nan, 1e30, -1e30], F32)
    rne = lib(f"tritium_f32_to_{fmt}", xs)
    rtz = lib(f"tritium_f32_to_{fmt}_rtz", xs)
    dec = lambda c: lib(f"tritium_{fmt}_to_f32", c)
    top = F32(np.nanmax(np.abs(_fp8_reference_decode(fmt)[np.isfinite(_fp8_reference_decode(fmt))])))
    # round toward zero never leaves the finite range for finite inputs
    np.testing.assert_array_equal(dec(rtz[4:]), [top, -top])
    if fmt == "fp8e5":      # saturating, as Triton's cvt.rn.satfinite; toward zero an infinity stays one
        np.testing.assert_array_equal(dec(rne[[0, 1, 4, 5]]), [top, -top, top, -top])
        np.testing.assert_array_equal(dec(rtz[:2]), [np.inf, -np.inf])
        assert np.all(np.isnan(dec(rne[2:4]))) and np.all(np.isnan(dec(rtz[2:4])))
    elif fmt == "fp8e4b15":
        np.testing.assert_array_equal(dec(rne), [top, -top, top, -top, top, -top])
        np.testing.assert_array_equal(dec(rtz), [top, -top, top, -top, top, -top])
    elif fmt == "fp8e4nv":      # torch saturates e4m3fn, infinities included
        np.testing.assert_array_equal(dec(rne[[0, 1, 4, 5]]), [top, -top, top, -top])
        np.testing.assert_array_equal(dec(rtz[:2]), [top, -top])
        assert np.all(np.isnan(dec(rne[2:4]))) and np.all(np.isnan(dec(rtz[2:4])))
    else:
        np.testing.assert_array_equal(rne, 0x80)
        np.testing.assert_array_equal(rtz[:4], 0x80)


def _rtz_reference(xs: np.ndarray, dtype) -> np.ndarray:
    """Round to nearest, then one step toward zero wherever that rounded up in magnitude."""
    with np.errstate(over="ignore", invalid="ignore"):
        y = xs.astype(dtype)
        up = np.abs(y.astype(np.float64)) > np.abs(xs.astype(np.float64))
    ibits = {np.float16: np.uint16, np.float32: np.uint32}[dtype]
    bits = y.view(ibits).copy()
    bits[up] -= 1
    return bits


def test_f32_to_f16_rtz(lib):
    xs = np.concatenate([random_bits(N // 4), uniform(-7e4, 7e4, N // 8),
                         (RNG.standard_normal(N // 8) * 2.0 ** RNG.integers(-30, 4, N // 8)).astype(F32),
                         np.array([65504, 65519, 65520, 65536, 2 ** -24, 2 ** -25, 2 ** -14, 6.1e-5], F32),
                         SPECIAL, -SPECIAL])
    y = lib("tritium_f32_to_f16_rtz", xs).view(np.uint16)
    ref = _rtz_reference(xs, np.float16)
    nan = np.isnan(xs)
    np.testing.assert_array_equal(y[~nan], ref[~nan])
    assert np.all(np.isnan(y[nan].view(np.float16)))


def test_f32_to_bf16_rtz(lib):
    xs = np.concatenate([random_bits(N // 4), SPECIAL, -SPECIAL,
                         np.array([0x7F800001, 0xFF800001, 0x7F80FFFF], np.uint32).view(F32)])
    y = lib("tritium_f32_to_bf16_rtz", xs)
    ref = (xs.view(np.uint32) >> 16).astype(np.uint16)
    nan = np.isnan(xs)
    np.testing.assert_array_equal(y[~nan], ref[~nan])
    assert np.all((y[nan].astype(np.uint32) << 16).view(F32) != (y[nan].astype(np.uint32) << 16).view(F32))


def test_f64_to_f32_rtz(lib):
    bits = RNG.integers(0, 1 << 63, N // 4, dtype=np.int64).view(np.float64)
    xs = np.concatenate([bits, RNG.standard_normal(N // 8) * 10.0 ** RNG.integers(-45, 40, N // 8),
                         np.array([0.0, -0.0, np.inf, -np.inf, np.nan, 3.5e38, -3.5e38, 1e-46, 2.0 ** -150,
                                   2.0 ** -149 * 1.5, 3.4028235677973366e+38])])
    y = lib("tritium_f64_to_f32_rtz", xs).view(np.uint32)
    ref = _rtz_reference(xs, np.float32)
    nan = np.isnan(xs)
    np.testing.assert_array_equal(y[~nan], ref[~nan])
    assert np.all(np.isnan(y[nan].view(F32)))


# ----------------------------------------------------------------------------------------------------
# The IR itself
# ----------------------------------------------------------------------------------------------------

def _function_asm(asm: str, fn: str) -> str:
    start = asm.index(f"\n{fn}:")
    return asm[start:asm.index(".Lfunc_end", start)]


def _vector_registers() -> str:
    """A regex of the registers that full-width vector code uses at the level compiled for: xmm for SSE2, ymm
    for AVX2, and ymm or zmm for AVX-512 (LLVM prefers 256-bit vectors on many AVX-512 CPUs)."""
    return {128: "xmm", 256: "ymm", 512: "[yz]mm"}[vector_bits(host_cpu()[1])]


def _has_fma() -> bool:
    return "+fma" in host_cpu()[1].split(",")


def test_expf_loop_vectorizes(lib):
    """Holds at every x86-64 level: packed FMAs where the level has FMA, packed multiplies otherwise."""
    body = _function_asm(lib.assembly(), "apply_tritium_expf")
    op = r"vfmadd\w+ps" if _has_fma() else r"v?mulps"
    assert re.search(rf"{op}\s+.*%{_vector_registers()}\d", body), \
        f"the expf loop did not vectorize to full-width {op} ({_vector_registers()})"


def test_float32_functions_call_nothing(lib):
    """Every float32 function and conversion is inlined and makes no library call (which would also stop
    vectorization)."""
    if not _has_fma():
        pytest.skip("checks levels with FMA (AVX2 and up): without it llvm.fma becomes a call to fmaf")
    asm = lib.assembly()
    for name in mathlib.function_names():
        ret, args = mathlib.signature(name)
        if "double" in (ret, *args) and "float" not in (ret, *args) or name.endswith("_big"):
            continue
        body = _function_asm(asm, f"apply_{name}")
        assert re.search(rf"%{_vector_registers()}\d", body), f"apply_{name} did not vectorize"
        if name in ("tritium_sinf", "tritium_cosf"):
            continue     # they call their large-argument path, test_sincos_large_path_only_when_needed
        assert not re.search(r"\bcall", body), f"apply_{name} calls out:\n{body}"


@pytest.mark.parametrize("name", ["tritium_sinf", "tritium_cosf"])
def test_sincos_large_path_only_when_needed(lib, name):
    """The vectorized loop calls a vector variant of the Payne-Hanek path (which returns at once when no lane has
    |x| >= 2^21); the scalar remainder loop calls the scalar function (which returns at once unless its argument
    needs it). Nothing else is called, and the integer reduction is not inlined into the loop."""
    ir = str(lib.mod)
    start = ir.index(f"define void @apply_{name}(")
    body = ir[start:ir.index("\n}\n", start)]
    calls = set(re.findall(r"call (?:fastcc )?[^@]*@(\w+)\(", body))
    lib_calls = {c for c in calls if not c.startswith("llvm.")}
    assert lib_calls and all(re.fullmatch(r"tritium_sincosf_big(_v\d+)?", c) for c in lib_calls), calls
    assert any(re.fullmatch(r"tritium_sincosf_big_v\d+", c) for c in lib_calls), f"no vector variant called: {calls}"
    assert "mul i128" not in body and "i128" not in body


def test_library_ir_contents():
    text = mathlib.library_ir(["tritium_tanhf"])
    defined = re.findall(r"^define [^@]*@(\w+)", text, re.M)
    assert sorted(defined) == ["tritium_expf", "tritium_tanhf"]
    assert "declare" not in text and "attributes #" not in text
    # the one libm declaration, spelled as mathlib_extra spells it so that duplicates can be dropped
    decls = re.findall(r"^declare.*", mathlib.library_ir(["tritium_erf"]), re.M)
    assert decls == ["declare double @erf(double) nounwind"]
    # concatenating with a module that declares the intrinsics we use must still parse
    both = "declare float @llvm.fma.f32(float, float, float)\n" + mathlib.library_ir(mathlib.function_names())
    llvm.parse_assembly(both).verify()
    assert all(n.startswith("tritium_") for n in re.findall(r"^define [^@]*@(\w+)", both, re.M))
    assert mathlib.signature("tritium_f32_to_fp8e5_rtz") == ("i8", ["float"])
    assert mathlib.signature("tritium_f32_to_bf16_rtz") == ("bfloat", ["float"])
    with pytest.raises(KeyError):
        mathlib.library_ir(["tritium_nope"])
