"""``tl.extra.libdevice`` on NVIDIA GPUs: the portable ``tt.extern_elementwise`` symbols
(``<function>_<argument types>``, e.g. ``mulhi_u32_u32``, ``add_rd_f64_f64``) resolved to libdevice's
``__nv_*`` functions, whose exact signatures are read from the libdevice bitcode itself (arguments and
results are converted to and from them).
"""
from __future__ import annotations

import functools
import re
from typing import Any, Optional

_TYPE_CODES = {"i1", "i16", "i32", "i64", "u32", "u64", "f16", "bf16", "f32", "f64"}
_ROUNDED = re.compile(r"^(add|sub|mul|div|fma|rcp|sqrt|rsqrt)_(rn|rz|rd|ru)$")
# names whose libdevice spelling follows no rule
_SPECIAL = {
    ("mulhi", "i32"): "__nv_mulhi", ("mulhi", "u32"): "__nv_umulhi", ("mulhi", "i64"): "__nv_mul64hi",
    ("mulhi", "u64"): "__nv_umul64hi", ("mul24", "u32"): "__nv_umul24", ("hadd", "u32"): "__nv_uhadd",
    ("rhadd", "u32"): "__nv_urhadd", ("sad", "u32"): "__nv_usad", ("clz", "i64"): "__nv_clzll",
    ("popc", "i64"): "__nv_popcll", ("brev", "i64"): "__nv_brevll", ("ffs", "i64"): "__nv_ffsll",
    ("abs", "i64"): "__nv_llabs", ("abs", "f32"): "__nv_fabsf", ("abs", "f64"): "__nv_fabs",
    ("isnan", "f64"): "__nv_isnand", ("isinf", "f64"): "__nv_isinfd", ("signbit", "f64"): "__nv_signbitd",
    ("fast_dividef", "f32"): "__nv_fast_fdividef", ("pow", "f32", "i32"): "__nv_powif",
    ("pow", "f64", "i32"): "__nv_powi", ("llrint", "f32"): "__nv_llrintf", ("llround", "f32"): "__nv_llroundf",
    ("ilogb", "f32"): "__nv_ilogbf", ("finitef", "f32"): "__nv_finitef", ("isfinited", "f64"): "__nv_isfinited",
    ("saturatef", "f32"): "__nv_saturatef", ("rcp64h", "f64"): "__nv_rcp64h",
}


def split_variant(symbol: str) -> tuple[str, list[str]]:
    parts = symbol.split("_")
    types: list[str] = []
    while parts and parts[-1] in _TYPE_CODES:
        types.insert(0, parts.pop())
    return "_".join(parts), types


@functools.lru_cache(maxsize=4)
def signatures(path: str) -> dict[str, tuple[str, list[str]]]:
    """``__nv_*`` name -> (LLVM return type, parameter types), from the bitcode."""
    import llvmlite.binding as llvm
    with open(path, "rb") as f:
        mod = llvm.parse_bitcode(f.read())
    out = {}
    for fn in mod.functions:
        if fn.name.startswith("__nv_"):
            ty = fn.global_value_type
            text = str(ty)
            m = re.match(r"(.+?) \((.*)\)$", text)
            if not m:
                continue
            params = [p.strip() for p in m.group(2).split(",") if p.strip()]
            out[fn.name] = (m.group(1).strip(), params)
    return out


def candidates(name: str, types: list[str]) -> list[str]:
    t = types[0] if types else "f32"
    key = (name, *types[:2])
    out = []
    if key in _SPECIAL:
        out.append(_SPECIAL[key])
    if (name, t) in _SPECIAL:
        out.append(_SPECIAL[(name, t)])
    m = _ROUNDED.match(name)
    if m:
        op, rnd = m.groups()
        if op == "fma":
            out.append(f"__nv_fmaf_{rnd}" if t == "f32" else f"__nv_fma_{rnd}")
        else:
            out.append(f"__nv_{'f' if t == 'f32' else 'd'}{op}_{rnd}")
    if t in ("f32", "f16", "bf16"):
        out += [f"__nv_{name}f", f"__nv_{name}"]
    elif t == "f64":
        out += [f"__nv_{name}", f"__nv_{name}d"]
    else:
        out += [f"__nv_{name}"]
        if t.startswith("u"):
            out += [f"__nv_u{name}"]
        if t.endswith("64"):
            out += [f"__nv_{name}ll", f"__nv_ll{name}", f"__nv_{name}64"]
    return out


def resolve(symbol: str, path: str) -> Optional[tuple[str, str, list[str]]]:
    """(libdevice function, its return type, its parameter types) for a portable symbol, or None."""
    if symbol.startswith("__nv_"):
        sig = signatures(path).get(symbol)
        return (symbol, *sig) if sig else None
    name, types = split_variant(symbol)
    table = signatures(path)
    # a name may itself end in something that reads as a type code (cyl_bessel_i1_f32)
    splits = [(name, types)] + [(name + "_" + "_".join(types[:k]), types[k:]) for k in range(1, len(types))]
    for n, ts in splits:
        for cand in candidates(n, ts):
            if cand in table:
                return (cand, *table[cand])
    return None


def convert(fn: Any, v: str, src: str, dst: str, signed: bool = True) -> str:
    """An LLVM value of type ``src`` as type ``dst`` (integer widths, float widths, i1 <-> int)."""
    if src == dst:
        return v
    floats = {"half": 16, "bfloat": 16, "float": 32, "double": 64}
    if src in floats and dst in floats:
        op = "fpext" if floats[dst] > floats[src] else "fptrunc"
        if floats[dst] == floats[src]:
            v, src = fn.inst(f"fpext {src} {v} to float"), "float"
            return convert(fn, v, src, dst)
        return fn.inst(f"{op} {src} {v} to {dst}")
    if src.startswith("i") and dst.startswith("i"):
        sb, db = int(src[1:]), int(dst[1:])
        if dst == "i1":
            return fn.inst(f"icmp ne {src} {v}, 0")
        if db > sb:
            return fn.inst(f"{'sext' if signed and src != 'i1' else 'zext'} {src} {v} to {dst}")
        return fn.inst(f"trunc {src} {v} to {dst}")
    raise TypeError(f"cannot pass a {src} where libdevice takes a {dst}")
