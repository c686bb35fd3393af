"""``tl.dot_scaled``: matrix products of microscaled (MX) blocks, emulated with ordinary operations.

Operands in e2m1 (fp4, two per byte), e4m3, e5m2, bf16 or fp16 are decoded to float32 exactly, multiplied
by their per-group scales (e8m0 bytes, 2**(s - 127), over groups of 32 along K; or e4m3 scales over groups
of 16), and multiplied with ``tl.dot`` accumulating in float32: where an operand is fp16, in fp16, as Triton computes it
(the scaled operand is upcast to fp16: exact within fp16's range); else in bf16 where every scaled element fits
in bf16 (the fp8 and fp4 formats, bf16 with e8m0 scales), so that GPUs use their tensor cores, else in IEEE
float32. Every product of the tiles is exact in float32, so this differs from hardware MX units only in the
order of the final sums (and, with an fp16 operand, where a scaled value leaves fp16's range, as in Triton).
"""
from __future__ import annotations

from typing import Any, Optional

from . import core
from .core import CompileTimeError, _unwrap, builtin

_FORMATS = {"e2m1": None, "e4m3": core.float8e4nv, "e5m2": core.float8e5, "bf16": core.bfloat16,
            "fp16": core.float16}
_STORAGE = {"e4m3": core.uint8, "e5m2": core.uint8, "bf16": core.uint16, "fp16": core.uint16}


def _shape(x: Any) -> list[int]:
    return [d.value for d in x.shape]


def _fp4_to_f32(s: Any, codes: Any) -> Any:
    """e2m1 codes (0..15, int32) to float32: sign, 2 exponent bits (bias 1), 1 mantissa bit."""
    sign = s.shl(s.and_(s.shr(codes, 3), 1), 31)
    e = s.and_(s.shr(codes, 1), 3)
    m = s.and_(codes, 1)
    normal = s.or_(s.shl(s.add(e, 126), 23), s.shl(m, 22))       # (1 + m/2) * 2**(e - 1)
    sub = s.mul(m, 0x3F000000)                                    # m * 0.5
    bits = s.or_(s.where(s.equal(e, 0), sub, normal), sign)
    return s.bitcast(bits, core.float32)


def _decode(s: Any, x: Any, fmt: str, k_pack: bool, is_lhs: bool) -> Any:
    """The operand as float32 with its logical shape ([..., M, K] or [..., K, N])."""
    if fmt == "e2m1":
        if x.dtype != core.uint8:
            raise CompileTimeError(f"e2m1 operands are packed two per byte in uint8, got {x.dtype}")
        b = s.cast(x, core.int32)
        lo, hi = _fp4_to_f32(s, s.and_(b, 15)), _fp4_to_f32(s, s.shr(b, 4))
        pair = s.join(lo, hi)                      # [..., R, C, 2]: the low nibble comes first
        shape = _shape(x)
        rank = len(shape)
        # the packed dimension is K for k_pack, else M (lhs) or N (rhs)
        packed_dim = (rank - 1 if is_lhs else rank - 2) if k_pack else (rank - 2 if is_lhs else rank - 1)
        if packed_dim == rank - 1:
            return s.reshape(pair, shape[:-1] + [shape[-1] * 2])
        perm = list(range(rank - 1)) + [rank, rank - 1]
        moved = s.permute(pair, perm)              # [..., R, 2, C]
        return s.reshape(moved, shape[:-2] + [shape[-2] * 2, shape[-1]])
    want = _FORMATS[fmt]
    if x.dtype != want:
        if x.dtype != _STORAGE[fmt]:
            raise CompileTimeError(f"a {fmt} operand must be {want} or stored as {_STORAGE[fmt]}, got {x.dtype}")
        x = s.bitcast(x, want)
    return s.cast(x, core.float32)


def _scale_values(s: Any, scale: Any) -> tuple[Any, int]:
    """Scale factors as float32 and the group size they apply to."""
    if scale.dtype == core.float8e4nv:
        return s.cast(scale, core.float32), 16
    if scale.dtype != core.uint8:
        raise CompileTimeError(f"scales must be e8m0 bytes (uint8) or float8e4nv, got {scale.dtype}")
    e = s.cast(scale, core.int32)
    bits = s.where(s.equal(e, 0), 0x00400000, s.shl(e, 23))       # 2**-127 is a float32 denormal
    bits = s.where(s.equal(e, 255), 0x7FC00000, bits)              # 0xff encodes NaN
    return s.bitcast(bits, core.float32), 32


def _apply_scale(s: Any, x: Any, scale: Optional[Any], rows: int, k: int, is_lhs: bool, what: str) -> Any:
    if scale is None:
        return x
    values, group = _scale_values(s, scale)
    want = [rows, k // group]
    got = _shape(scale)[-2:]
    if got != want:
        raise CompileTimeError(f"{what} must be a tensor of shape {want}. Got {[str(d) for d in got]}",
                               f"a scale has one value per {group} elements along K: [{'M' if is_lhs else 'N'}, "
                               f"K // {group}]")
    sshape = _shape(values)
    expanded = s.broadcast_impl_shape(s.expand_dims(values, len(sshape)), sshape + [group])
    per_elem = s.reshape(expanded, sshape[:-1] + [sshape[-1] * group])     # [..., rows, K]
    if not is_lhs:
        rank = len(sshape)
        per_elem = s.permute(per_elem, list(range(rank - 2)) + [rank - 1, rank - 2])
    return s.mul(x, per_elem)


@builtin
def dot_scaled(lhs, lhs_scale, lhs_format, rhs, rhs_scale, rhs_format, acc=None, fast_math=False, lhs_k_pack=True,
               rhs_k_pack=True, out_dtype=core.float32, _semantic=None):
    """``lhs @ rhs`` of microscaled blocks (formats e2m1, e4m3, e5m2, bf16, fp16), accumulated into ``acc``."""
    s = _semantic
    out_dtype = _unwrap(out_dtype)
    if out_dtype != core.float32:
        raise CompileTimeError(f"dot_scaled supports out_dtype=float32 only, got {out_dtype}")
    lf, rf = _unwrap(lhs_format), _unwrap(rhs_format)
    for f in (lf, rf):
        if f not in _FORMATS:
            raise CompileTimeError(f"dot_scaled format {f!r} is not one of {', '.join(_FORMATS)}")
    lk, rk = bool(_unwrap(lhs_k_pack)), bool(_unwrap(rhs_k_pack))
    for fmt, packed in ((lf, lk), (rf, rk)):
        if not packed and fmt != "e2m1":
            raise CompileTimeError("only e2m1 operands can be packed along a dimension other than K")
    lhs, rhs = s.to_tensor(_unwrap(lhs)), s.to_tensor(_unwrap(rhs))
    if not lhs.type.is_block() or not rhs.type.is_block() or len(lhs.shape) != len(rhs.shape) \
            or len(lhs.shape) not in (2, 3):
        raise CompileTimeError("dot_scaled operands must both be 2-D or both 3-D blocks")
    a = _decode(s, lhs, lf, lk, True)
    b = _decode(s, rhs, rf, rk, False)
    M, K = _shape(a)[-2:]
    K2, N = _shape(b)[-2:]
    if K != K2:
        raise CompileTimeError(f"dot_scaled operands pack different K: {K} (lhs) and {K2} (rhs)")
    ls, rs = _unwrap(lhs_scale), _unwrap(rhs_scale)
    a = _apply_scale(s, a, ls, M, K, True, "lhs_scale")
    b = _apply_scale(s, b, rs, N, K, False, "rhs_scale")
    if "fp16" in (lf, rf):
        # Triton computes in fp16 when an operand is fp16: the scaled operand is upcast to fp16 (exact while it
        # stays in fp16's range; beyond it, infinities and flushed subnormals, as in Triton) and the dot runs on
        # the fp16 tensor cores, accumulating in f32
        a, b = s.cast(a, core.float16), s.cast(b, core.float16)
    elif _fits_bf16(lf, ls) and _fits_bf16(rf, rs):
        # every scaled element has at most 8 significant bits: bf16 holds it exactly (bar bf16's coarser
        # subnormals, below 2**-126), its products are exact in f32 as before, and a GPU runs the dot on its
        # bf16 tensor cores rather than as fp32 FMAs, as Triton's Hopper lowering does
        a, b = s.cast(a, core.bfloat16), s.cast(b, core.bfloat16)
    return s.dot(a, b, _unwrap(acc), "ieee", None, core.float32)


#: significant bits of an element of each format (the implicit bit included)
_BITS = {"e2m1": 2, "e4m3": 4, "e5m2": 3, "bf16": 8, "fp16": 11}


def _fits_bf16(fmt: str, scale: Optional[Any]) -> bool:
    """Whether the scaled elements of an operand have at most bf16's 8 significant bits: an e8m0 scale (a power of
    two) adds none, an e4m3 scale up to 4."""
    extra = 4 if scale is not None and scale.dtype == core.float8e4nv else 0
    return _BITS[fmt] + extra <= 8
