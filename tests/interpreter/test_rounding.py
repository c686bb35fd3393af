"""The interpreter rounds like the compiled CPU backend, and like torch where torch has the type: fp16, bf16
and the float8 formats, round to nearest even and toward zero, specials included."""
from __future__ import annotations

import numpy as np
import pytest

import tritium as triton
import tritium.language as tl

torch = pytest.importorskip("torch")

FP8_TORCH = {"float8e4nv": torch.float8_e4m3fn, "float8e5": torch.float8_e5m2,
             "float8e4b8": torch.float8_e4m3fnuz, "float8e5b16": torch.float8_e5m2fnuz}
DST_STORAGE = {"float16": np.float16, "bfloat16": np.uint16, "float32": np.float32, "float64": np.float64}


@triton.jit
def _cast(x_ptr, y_ptr, N: tl.constexpr, DST: tl.constexpr, RND: tl.constexpr):
    offs = tl.arange(0, N)
    x = tl.load(x_ptr + offs)
    if RND == "rtz":
        y = x.to(DST, fp_downcast_rounding="rtz")
    else:
        y = x.to(DST)
    tl.store(y_ptr + offs, y)


def _hard_f32(n: int, mant_bits: int, seed: int = 0) -> np.ndarray:
    """float32 values that are exact ties, one ulp around ties, and specials, for a target with
    ``mant_bits`` fraction bits."""
    rng = np.random.default_rng(seed)
    base = rng.integers(0, 2**32, n, dtype=np.uint64).astype(np.uint32)
    drop = 23 - mant_bits
    half = np.uint32(1 << (drop - 1))
    tie = (base & ~np.uint32((1 << drop) - 1)) | half
    vals = np.concatenate([base, tie, tie + np.uint32(1), tie - np.uint32(1)]).view(np.float32)
    specials = np.array([0.0, -0.0, np.inf, -np.inf, np.nan, -np.nan, 1e-45, -1e-45, 1.1754944e-38, 3.4028235e38,
                         65504.0, 65519.0, 65520.0, 448.0, 464.0, 480.0, 240.0, 248.0, 57344.0, 61440.0, 1.875],
                        np.float32)
    out = np.concatenate([specials, vals])
    return out[: 1 << int(np.log2(out.size))]


def _torch_bits(t: "torch.Tensor") -> np.ndarray:
    return t.view({1: torch.uint8, 2: torch.int16}[t.element_size()]).numpy()


@pytest.mark.parametrize("dst", ["float16", "bfloat16"])
def test_narrowing_to_16_bits_matches_torch(kit, dst):
    x = _hard_f32(4096, 10 if dst == "float16" else 7)
    y = np.zeros(x.size, DST_STORAGE[dst])
    out = y if dst == "float16" else triton.reinterpret(y, tl.bfloat16)
    _, got = kit.run(_cast, (1, ), x, out, x.size, getattr(tl, dst), "")
    ref = torch.from_numpy(x).to(torch.float16 if dst == "float16" else torch.bfloat16)
    got_bits = got.view(np.uint16)
    ref_bits = _torch_bits(ref).view(np.uint16)
    nan = np.isnan(x)
    np.testing.assert_array_equal(got_bits[~nan], ref_bits[~nan])
    assert np.isnan(ref[torch.from_numpy(nan)].float().numpy()).all()
    decoded = got.astype(np.float32) if dst == "float16" else (got.astype(np.uint32) << 16).view(np.float32)
    assert np.isnan(decoded[nan]).all()


@pytest.mark.parametrize("fmt", list(FP8_TORCH))
def test_float8_encode_and_decode_match_torch(kit, fmt):
    mbits = 2 if "e5" in fmt else 3
    x = _hard_f32(4096, mbits, seed=1)
    # keep to values torch's and Triton's conventions agree on: finite and inside the format's range
    limit = {"float8e4nv": 448.0, "float8e5": 57344.0, "float8e4b8": 240.0, "float8e5b16": 57344.0}[fmt]
    x = np.where(np.isfinite(x) & (np.abs(x) <= limit), x, np.float32(1.0)).astype(np.float32)
    codes = np.zeros(x.size, np.uint8)
    _, got = kit.run(_cast, (1, ), x, triton.reinterpret(codes, getattr(tl, fmt)), x.size, getattr(tl, fmt), "")
    ref = _torch_bits(torch.from_numpy(x).to(FP8_TORCH[fmt]))
    np.testing.assert_array_equal(got, ref)
    # every encoding decodes to torch's float32 value (nans compared as nans)
    all_codes = np.arange(256, dtype=np.uint8)
    wide = np.zeros(256, np.float32)
    _, dec = kit.run(_cast, (1, ), triton.reinterpret(all_codes, getattr(tl, fmt)), wide, 256, tl.float32, "")
    ref_dec = torch.from_numpy(all_codes).view(FP8_TORCH[fmt]).float().numpy()
    np.testing.assert_array_equal(np.isnan(dec), np.isnan(ref_dec))
    fin = ~np.isnan(ref_dec)
    np.testing.assert_array_equal(dec[fin].view(np.uint32), ref_dec[fin].view(np.uint32))


@pytest.mark.parametrize("dst", ["float16", "float8e4nv", "float8e5", "float8e4b8", "float8e5b16", "float8e4b15"])
@pytest.mark.parametrize("rnd", ["", "rtz"])
def test_narrowing_is_bit_exact_with_the_compiled_backend(kit, dst, rnd):
    # (casts to bfloat16 are checked against torch above: the compiled CPU backend cannot build them yet)
    mbits = {"float16": 10}.get(dst, 2 if "e5" in dst else 3)
    x = _hard_f32(2048, mbits, seed=2)
    y = np.zeros(x.size, np.float16 if dst == "float16" else np.uint8)
    out = y if dst == "float16" else triton.reinterpret(y, getattr(tl, dst))
    kit.assert_same_as_compiled(_cast, (1, ), x, out, x.size, getattr(tl, dst), rnd)


def test_round_toward_zero_truncates(kit):
    x = np.array([1.0 + 2**-11 + 2**-12, -(1.0 + 2**-8 + 2**-9), 65536.0, -1e9, 1e-8, np.inf], np.float32)
    x = np.concatenate([x, np.zeros(2, np.float32)])
    h = np.zeros(8, np.float16)
    _, h = kit.run(_cast, (1, ), x, h, 8, tl.float16, "rtz")
    assert h[0] == np.float16(1.0)                       # to nearest would round up to 1 + 2**-10
    assert h[2] == np.float16(65504.0) and h[3] == np.float16(-65504.0)   # finite overflow: largest finite
    assert h[4] == 0.0 and h[5] == np.inf
    b = np.zeros(8, np.uint16)
    _, b = kit.run(_cast, (1, ), x, triton.reinterpret(b, tl.bfloat16), 8, tl.bfloat16, "rtz")
    assert b[1] == np.uint16(0xBF80)                      # -(1 + 2**-8 + 2**-9) truncates to -1.0


def test_float64_narrowing_rounds_once(kit):
    # 1 + 2**-8 + 2**-30 is above the bf16 tie 1 + 2**-8: one rounding goes up; rounding through float32 first
    # (what torch does) lands on the tie and goes to even, 1.0. LLVM's fptrunc and PTX's cvt round once.
    x = np.array([1 + 2**-8 + 2**-30, 1 + 2**-11 + 2**-40], np.float64)
    b = np.zeros(2, np.uint16)
    _, b = kit.run(_cast, (1, ), x, triton.reinterpret(b, tl.bfloat16), 2, tl.bfloat16, "")
    assert b[0] == np.uint16(0x3F81)
    h = np.zeros(2, np.float16)
    _, h = kit.run(_cast, (1, ), x, h, 2, tl.float16, "")
    assert h[1] == np.float16(1 + 2**-10)


@triton.jit
def _arith16(a_ptr, b_ptr, o_ptr, N: tl.constexpr):
    offs = tl.arange(0, N)
    a = tl.load(a_ptr + offs)
    b = tl.load(b_ptr + offs)
    # (a / b would be computed in float32: Triton promotes half-precision division)
    tl.store(o_ptr + offs, a * b + a - b * b)


@pytest.mark.parametrize("dtype", ["float16", "bfloat16"])
def test_half_precision_arithmetic_rounds_every_operation(interpret, dtype):
    rng = np.random.default_rng(3)
    a32 = (rng.standard_normal(1024) * 8).astype(np.float32)
    b32 = (rng.standard_normal(1024) * 8).astype(np.float32)
    tt = torch.float16 if dtype == "float16" else torch.bfloat16
    ta, tb = torch.from_numpy(a32).to(tt), torch.from_numpy(b32).to(tt)
    got = torch.zeros(1024, dtype=tt)
    _arith16[(1, )](ta, tb, got, 1024)
    ref = ta * tb + ta - tb * tb  # torch also rounds each operation to the half type
    assert torch.equal(got.view(torch.int16), ref.view(torch.int16))


@triton.jit
def _dot(a_ptr, b_ptr, c_ptr, M: tl.constexpr, N: tl.constexpr, K: tl.constexpr, PREC: tl.constexpr):
    rm, rn, rk = tl.arange(0, M), tl.arange(0, N), tl.arange(0, K)
    a = tl.load(a_ptr + rm[:, None] * K + rk[None, :])
    b = tl.load(b_ptr + rk[:, None] * N + rn[None, :])
    tl.store(c_ptr + rm[:, None] * N + rn[None, :], tl.dot(a, b, input_precision=PREC))


@pytest.mark.parametrize("prec", ["ieee", "tf32", "tf32x3", "bf16x3", "bf16x6"])
def test_dot_with_each_precision(kit, prec):
    rng = np.random.default_rng(4)
    a = rng.standard_normal((32, 64)).astype(np.float32)
    b = rng.standard_normal((64, 16)).astype(np.float32)
    c = np.zeros((32, 16), np.float32)
    compiled = kit.run(_dot, (1, ), a, b, c, 32, 16, 64, prec, interpret=False)[2]
    interpreted = kit.run(_dot, (1, ), a, b, c, 32, 16, 64, prec)[2]
    ref = a.astype(np.float64) @ b.astype(np.float64)
    # like the compiled CPU backend, every precision computes in full fp32 (the splits exist for tensor cores);
    # the order of the additions differs (BLAS here, a k loop of fmas there), so compare to fp32 accuracy
    np.testing.assert_allclose(interpreted, ref, rtol=1e-5, atol=1e-5)
    np.testing.assert_allclose(interpreted, compiled, rtol=1e-5, atol=1e-5)
