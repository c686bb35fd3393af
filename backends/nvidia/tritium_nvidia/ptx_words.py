"""Values as the 32- or 16-bit words PTX inline assembly moves them in (target.py's predicated loads and stores
pack a vector into words and unpack what a load returns), and the eviction hint a load or store may carry."""
from __future__ import annotations

from tritium.gpu.target import unpack
from tritium.llvmir.text import Function
from tritium.llvmir.types import BYTES


def _evict(evict: str, cache: str = "") -> str:
    # PTX refuses L1 eviction priorities next to a cache operator: the operator wins (the priority is a hint)
    if cache:
        return ""
    return {"evict_first": ".L1::evict_first", "evict_last": ".L1::evict_last"}.get(evict, "")


def _words(elem: str, vec: int) -> tuple[list[int], str, str, int]:
    """How ``vec`` elements travel through PTX registers: (one entry per word, word LLVM type, constraint, bits)."""
    total = BYTES.get(elem, 8) * vec
    if total >= 4:
        return [0] * (total // 4), "i32", "r", 32
    if total == 2:
        return [0], "i16", "h", 16
    return [0], "i16", "h", 8


def _to_words(fn: Function, values: list[str], elem: str, wty: str, n: int) -> list[str]:
    eb = BYTES.get(elem, 8)
    total = eb * len(values)
    if elem.startswith("ptr"):
        values = [fn.inst(f"ptrtoint {elem} {v} to i64") for v in values]
        elem = "i64"
    if total == 1:
        return [fn.inst(f"zext i8 {values[0]} to i16")]
    if n == 1 and len(values) == 1 and elem == wty:
        return values
    vt = f"<{len(values)} x {elem}>"
    v = "poison"
    for i, x in enumerate(values):
        v = fn.inst(f"insertelement {vt} {v}, {elem} {x}, i32 {i}")
    if n == 1:
        return [fn.inst(f"bitcast {vt} {v} to {wty}")]
    w = fn.inst(f"bitcast {vt} {v} to <{n} x {wty}>")
    return [fn.inst(f"extractelement <{n} x {wty}> {w}, i32 {i}") for i in range(n)]


def _from_words(fn: Function, words: list[str], wty: str, elem: str, vec: int) -> list[str]:
    eb = BYTES.get(elem, 8)
    is_ptr = elem.startswith("ptr")
    et = "i64" if is_ptr else elem
    if eb * vec == 1:
        out = [fn.inst(f"trunc i16 {words[0]} to i8")]
    elif len(words) == 1 and vec == 1 and et == wty:
        out = words
    else:
        n = len(words)
        if n == 1:
            src = words[0]
            st = wty
        else:
            st = f"<{n} x {wty}>"
            src = "poison"
            for i, x in enumerate(words):
                src = fn.inst(f"insertelement {st} {src}, {wty} {x}, i32 {i}")
        vt = f"<{vec} x {et}>" if vec > 1 else et
        v = fn.inst(f"bitcast {st} {src} to {vt}")
        out = unpack(fn, v, et, vec)
    if is_ptr:
        out = [fn.inst(f"inttoptr i64 {x} to {elem}") for x in out]
    return out
